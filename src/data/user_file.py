"""Loader for a user's own data file (``dataset=file dataset.path=mine.npz``): ``.mat``, ``.npz`` or ``.csv``.

Layouts (one sample per row in every format):

* ``.mat`` (MATLAB v4 to v7; read with :func:`scipy.io.loadmat`; v7.3/HDF5 files are refused): the
  samples in the variable ``X_key``, the labels in ``y_key``. ``null`` (default) takes ``fea``/``gnd``
  (Deng Cai's layout) if present, else ``X``/``y``. A sparse matrix is made dense.
* ``.npz`` (:func:`numpy.savez`, no pickled objects): arrays ``X_key`` and ``y_key``, found the same way
  (``X``/``y`` or ``fea``/``gnd``).
* ``.csv``: one sample per line, numbers separated by ``delimiter`` (``,``; ``\\t`` = a tab); the labels in column
  ``label_column`` (0-based, negative from the end; default -1 = the last column), the features in the
  other columns in file order. ``header``: ``auto`` (default) skips the first line when it is not all
  numbers, ``true`` always skips it, ``false`` never does. Lines starting with ``#`` are ignored (the
  header is the file's first line, before any comment).

Labels must be integer-like (``3`` or ``3.0``, not ``3.5`` or ``"cat"``), one per row, and hold at least
two classes; they are renumbered 0..K-1 in sorted order of the original values, which become the class
names (as strings). The data must be finite (no NaN or inf); negative values are left to the method
(a nonnegative factorization refuses them). ``image_shape`` ``[height, width]`` and ``pixel_order``
(``C`` row-major, ``F`` column-major as MATLAB stores images) describe image rows; ``image_shape: null``
(default) means the rows are not images.

``path`` may be relative: it is taken from the directory the command was launched from (Hydra's
``hydra.runtime.cwd``; the runs do not change directory), also in the jobs of a multirun. A run records
the file with its absolute path and sha256 (:func:`pin`): in ``config.yaml``, in the setting columns of
``results.csv`` (so cells computed from another version of the file are not reused) and in
``provenance.json``. A ``sha256`` set in the config is checked against the file.

The config's ``name`` defaults to the file's stem (``mine`` for ``data/mine.npz``) through the resolver
``${user_file_stem:}`` (:func:`src.resolvers.user_file_stem`).
"""

from __future__ import annotations

import copy
import logging
import math
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pooch
import scipy.io
import scipy.sparse
from hydra.utils import get_original_cwd
from omegaconf import DictConfig, OmegaConf, open_dict

from .fetch import record_user_file
from ..checks import POSITIVE_INT, is_integer, one_of
from ..errors import ConfigError, DataError, one_line

logger = logging.getLogger(__name__)

#: Config keys of this loader, besides the common ``name``, ``loader`` and ``preprocess``.
KEYS = ("path", "sha256", "X_key", "y_key", "label_column", "header", "delimiter", "image_shape", "pixel_order")
#: File extensions read (lower case).
EXTENSIONS = (".mat", ".npz", ".csv")
#: Variable names tried, in order, when ``X_key`` / ``y_key`` is null.
DEFAULT_KEYS = {"X_key": ("fea", "X"), "y_key": ("gnd", "y")}
HEADERS = ("auto", True, False)
PIXEL_ORDERS = ("C", "F")
_MAT_META = ("__header__", "__version__", "__globals__")
_HASHES: dict[tuple, str] = {}
#: The label that marks a sample whose class is unknown (the family's estimators, ``python -m src.cluster``),
#: as a class name (:func:`load`'s ``class_names``).
UNKNOWN = "-1"


def classes_said(y: np.ndarray, class_names) -> str:
    """The classes of the labels ``y`` (n_samples,; indices into ``class_names``, or 0..K-1 where a loader
    names none: None) in words: ``15 classes``; the unknown mark (:data:`UNKNOWN`) is counted apart, as no
    class: ``15 classes, 120 samples unknown (-1)``."""
    count = int(np.max(y)) + 1 if class_names is None else len(class_names)
    if class_names is None or UNKNOWN not in class_names:
        return f"{count} classes"
    unknown = int(np.sum(np.asarray(y) == list(class_names).index(UNKNOWN)))
    return f"{count - 1} classes, {unknown} samples unknown ({UNKNOWN})"


def launch_dir() -> Path:
    """The directory the command was launched from: ``hydra.runtime.cwd`` inside Hydra, else the working directory."""
    try:
        return Path(get_original_cwd())
    except ValueError:  # no Hydra run (load_named, scripts, tests)
        return Path.cwd()


def resolve_path(cfg: Mapping) -> Path:
    """The absolute path of ``cfg["path"]`` (a relative one is taken from :func:`launch_dir`).

    Raises
    ------
    ConfigError
        ``path`` is unset, not a string, has an unknown extension, or names no file.
    """
    value = cfg.get("path")
    if value is None or value in ("", "???"):
        raise ConfigError("dataset.path is not set: give your data file, e.g. dataset=file dataset.path=mine.npz "
                          f"({', '.join(EXTENSIONS)})")
    if not isinstance(value, (str, os.PathLike)):
        raise ConfigError(f"dataset.path={value!r} must be a file name")
    path = Path(value).expanduser()
    path = path if path.is_absolute() else launch_dir() / path
    path = Path(os.path.normpath(path))
    if path.suffix.lower() not in EXTENSIONS:
        raise ConfigError(f"dataset.path={str(value)!r}: unknown extension {path.suffix!r}; "
                          f"the file must be one of {', '.join(EXTENSIONS)}")
    if not path.is_file():
        where = "" if Path(value).expanduser().is_absolute() else f" (relative to {launch_dir()})"
        raise ConfigError(f"dataset.path={str(value)!r}: no such file {path}{where}")
    return path


def file_sha256(path: Path) -> str:
    """The sha256 of a file, computed once per (path, size, modification time)."""
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _HASHES:
        _HASHES[key] = pooch.file_hash(str(path), alg="sha256")
    return _HASHES[key]


def pin(cfg: DictConfig) -> DictConfig:
    """A copy of a run's config whose user file has an absolute ``dataset.path`` and its ``dataset.sha256``.

    Any other config (another loader, or a path that :func:`load` will reject) is returned unchanged, so
    the recorded config, the setting columns of the results and the cell fingerprint name the exact file.
    """
    dataset = cfg.get("dataset")
    if not isinstance(dataset, DictConfig) or dataset.get("loader") != "file" or OmegaConf.is_missing(dataset, "path"):
        return cfg
    try:
        path = resolve_path(dataset)
    except ConfigError:
        return cfg  # load() reports it
    pinned = copy.deepcopy(cfg)
    with open_dict(pinned.dataset):
        pinned.dataset.path = str(path)
        if pinned.dataset.get("sha256") is None:
            pinned.dataset.sha256 = file_sha256(path)
    return pinned


def load(cfg: Mapping, data_dir: str | Path, mirror: str | Path | None,
         seed: int) -> tuple[np.ndarray, np.ndarray, dict]:
    """Load a user's ``.mat``, ``.npz`` or ``.csv`` file (see the module docstring for the layouts).

    Parameters
    ----------
    cfg : Mapping
        Dataset config; uses the keys of :data:`KEYS`.
    data_dir, mirror : str, Path or None
        Unused (the file is read where it is).
    seed : int
        Unused (the whole file is loaded).

    Returns
    -------
    X : ndarray, shape (n_samples, n_features), float64
        The values as stored, one sample per row.
    y : ndarray, shape (n_samples,), int64
        Labels 0..K-1, in sorted order of the file's labels.
    meta : dict
        ``class_names`` (the file's label values as strings), ``image_shape`` and ``pixel_order`` (from
        the config) and ``max_value`` None (``scale01`` divides by the largest value in ``X``).

    Raises
    ------
    ConfigError
        A bad key value, no ``path``, a missing file, an unknown extension or a variable not in the file.
    DataError
        The file cannot be read, has the wrong shape, non-finite values or labels that are not integers.
    """
    path = resolve_path(cfg)
    _check_keys(cfg)
    expected = cfg.get("sha256")
    digest = file_sha256(path)
    if expected is not None and str(expected).lower() != digest:
        raise DataError(f"dataset.sha256={expected!r} does not match {path} (its sha256 is {digest}): the file "
                        f"changed; set dataset.sha256=null to accept it")
    record_user_file(path, digest)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        X, y = _read_csv(path, cfg)
    else:
        arrays = _read_mat(path) if suffix == ".mat" else _read_npz(path)
        X, y = (_variable(arrays, cfg, key, path) for key in ("X_key", "y_key"))
    X, y, class_names = _check_arrays(X, y, path)
    shape = _image_shape(cfg.get("image_shape"), X.shape[1])
    logger.info("%s: %d samples x %d features, %s (sha256 %s)", path, X.shape[0], X.shape[1],
                classes_said(y, class_names), digest[:12])
    return X, y, {"image_shape": shape, "pixel_order": cfg.get("pixel_order", "C") if shape else None,
                  "class_names": class_names, "max_value": None}


def _check_keys(cfg: Mapping) -> None:
    """Reject a bad value of a layout key with one line naming it."""
    for key in ("X_key", "y_key"):
        value = cfg.get(key)
        if value is not None and (not isinstance(value, str) or not value):
            raise ConfigError(f"dataset.{key}={value!r} must be a variable name or null "
                              f"({' or '.join(DEFAULT_KEYS[key])})")
    column = cfg.get("label_column", -1)
    if not is_integer(column):
        raise ConfigError(f"dataset.label_column={column!r} must be an integer column index (-1 = the last column)")
    if cfg.get("header", "auto") not in HEADERS:
        raise ConfigError(f"dataset.header={cfg.get('header')!r} is not one of auto, true, false")
    delimiter = _delimiter(cfg)
    if not isinstance(delimiter, str) or len(delimiter) != 1:
        raise ConfigError(f"dataset.delimiter={delimiter!r} must be one character, e.g. ';' (on the command line: "
                          f"\"dataset.delimiter=';'\") or \\t for a tab")
    one_of(PIXEL_ORDERS).check("dataset.pixel_order", cfg.get("pixel_order", "C"))
    expected = cfg.get("sha256")
    if expected is not None and not (isinstance(expected, str) and re.fullmatch(r"[0-9a-fA-F]{64}", expected)):
        raise ConfigError(f"dataset.sha256={expected!r} must be 64 hexadecimal digits or null")


def _read_mat(path: Path) -> dict:
    try:
        mat = scipy.io.loadmat(path)
    except NotImplementedError as exc:  # scipy's message for v7.3 (HDF5) files
        raise DataError(f"dataset.path={str(path)!r} is a MATLAB v7.3 (HDF5) file, which is not read: save it "
                        f"with save(file, 'fea', 'gnd', '-v7') in MATLAB") from exc
    except Exception as exc:  # noqa: BLE001 - scipy raises many types on a damaged file
        raise DataError(f"dataset.path={str(path)!r}: cannot read it as a .mat file ({one_line(exc, 200)})") from exc
    return {key: value for key, value in mat.items() if key not in _MAT_META}


def _read_npz(path: Path) -> dict:
    try:
        with np.load(path, allow_pickle=False) as npz:
            return {key: npz[key] for key in npz.files}
    except Exception as exc:  # noqa: BLE001 - numpy and zipfile raise many types on a damaged file
        raise DataError(f"dataset.path={str(path)!r}: cannot read it as a .npz file of plain arrays "
                        f"({one_line(exc, 200)})") from exc


def _variable(arrays: dict, cfg: Mapping, key: str, path: Path):
    """The array named by ``cfg[key]`` (``X_key`` or ``y_key``), or the first default name present."""
    name = cfg.get(key)
    names = (name,) if name is not None else DEFAULT_KEYS[key]
    for candidate in names:
        if candidate in arrays:
            return arrays[candidate]
    present = ", ".join(sorted(arrays)) or "nothing"
    wanted = repr(name) if name is not None else f"null (looked for {' and '.join(names)})"
    raise ConfigError(f"dataset.{key}={wanted}: no such variable in {path} (it holds: {present}); "
                      f"set dataset.{key}=<name>")


def _read_csv(path: Path, cfg: Mapping) -> tuple[np.ndarray, np.ndarray]:
    """Features and labels of a CSV file: every column but ``label_column``, and that column."""
    delimiter, header = _delimiter(cfg), cfg.get("header", "auto")
    try:
        if header == "auto":
            with open(path, encoding="utf-8-sig") as handle:
                first = handle.readline()
            header = not (first.lstrip().startswith("#") or _all_numbers(first, delimiter))  # "#": a comment
        table = np.loadtxt(path, delimiter=delimiter, skiprows=1 if header else 0, ndmin=2, dtype=np.float64,
                           encoding="utf-8-sig")
    except ValueError as exc:
        raise DataError(f"dataset.path={str(path)!r}: not a table of numbers separated by {delimiter!r} "
                        f"({one_line(exc, 200)}); every value, the labels too, must be a number") from exc
    if table.shape[1] < 2:
        raise DataError(f"dataset.path={str(path)!r}: {table.shape[1]} column(s) per line; a .csv needs the "
                        f"features and a label column (dataset.delimiter={delimiter!r})")
    column = cfg.get("label_column", -1)
    if not -table.shape[1] <= column < table.shape[1]:
        raise ConfigError(f"dataset.label_column={column} is not a column of {path} ({table.shape[1]} columns)")
    return np.delete(table, column, axis=1), table[:, column]


def _delimiter(cfg: Mapping):
    """The CSV delimiter; the two characters ``\\t`` (a command line cannot easily pass a tab) mean a tab."""
    delimiter = cfg.get("delimiter", ",")
    return "\t" if delimiter == "\\t" else delimiter


def _all_numbers(line: str, delimiter: str) -> bool:
    try:
        [float(field) for field in line.split(delimiter)]
    except ValueError:
        return False
    return True


def _check_arrays(X, y, path: Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """``X`` as float64 (n x m), ``y`` renumbered 0..K-1 and the original labels as strings."""
    where = f"dataset.path={str(path)!r}"
    if scipy.sparse.issparse(X):
        X = X.toarray()
    X, y = np.asarray(X), np.asarray(y)
    if X.dtype.kind not in "biuf":
        raise DataError(f"{where}: the data hold {X.dtype} values; they must be real numbers")
    if X.ndim != 2 or 0 in X.shape:
        raise DataError(f"{where}: the data have shape {X.shape}; they must be a 2-D matrix, one sample per row")
    if y.ndim == 2 and 1 in y.shape:  # a MATLAB column or row vector
        y = y.ravel()
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise DataError(f"{where}: the labels have shape {y.shape} but the data have {X.shape[0]} rows; "
                        f"give one label per row")
    X = X.astype(np.float64)
    bad = ~np.isfinite(X)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise DataError(f"{where}: the data hold {int(bad.sum())} NaN or infinite value(s) (first at row {row}, "
                        f"column {col}); fill or drop them first")
    if y.dtype.kind not in "biuf" or (y.dtype.kind == "f" and not np.all(np.isfinite(y) & (y == np.round(y)))):
        odd = next((v for v in y.tolist() if not (isinstance(v, (bool, int)) or
                                                   (isinstance(v, float) and math.isfinite(v) and v == round(v)))),
                   y.dtype)
        odd = " ".join(repr(odd).split())[:60]
        raise DataError(f"{where}: the labels must be integers (e.g. 1, 2, 3), found {odd}")
    values, y = np.unique(y.astype(np.int64), return_inverse=True)
    if values.tolist() == [int(UNKNOWN)]:  # the mark of an unknown label (UNKNOWN) alone
        raise DataError(f"{where}: no label is known (every label is -1, the mark of an unknown one); clustering "
                        f"and choosing need known labels of at least 2 classes")
    if values.size < 2:
        raise DataError(f"{where}: the labels hold {values.size} class ({values.tolist()}); clustering needs at "
                        f"least 2")
    return X, y.astype(np.int64).ravel(), tuple(str(v) for v in values.tolist())


def _image_shape(value, n_features: int) -> tuple[int, int] | None:
    if value is None:
        return None
    if isinstance(value, Sequence) and not isinstance(value, str):  # also an OmegaConf ListConfig
        value = list(value)
    ok = (isinstance(value, list) and len(value) == 2
          and all(POSITIVE_INT.test(d) for d in value))
    if not ok or value[0] * value[1] != n_features:
        raise ConfigError(f"dataset.image_shape={value!r} "
                          f"must be [height, width] with height * width = {n_features} features, or null")
    return int(value[0]), int(value[1])

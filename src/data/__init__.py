"""Data layer: load a benchmark data set as a preprocessed sample matrix.

``load_dataset(cfg, data_dir, mirror, seed)`` takes one entry of the Hydra config group ``dataset``
(``conf/dataset/*.yaml``) and returns a :class:`Dataset` whose ``X`` has **one sample per row**
(n_samples x n_features, float64); the NMF papers' data matrix is ``X.T``.

Common config keys: ``name`` (str), ``loader`` (one of :data:`DATASETS`) and ``preprocess``:

* ``none``: values as stored (0..255 for ORL/Yale/MNIST, [0, 1] for COIL20, counts for Caltech);
* ``scale01``: divide by the largest possible value (255 for uint8 images, 1 for COIL20) so that
  ``X`` lies in [0, 1]; for bag-of-words counts and a user's own file, which have no such bound,
  divide by the largest value in the data set;
* ``unit_norm`` (default): scale each sample to L2 norm 1 (all-zero samples stay zero), as Deng
  Cai's demos do.

A user's own file (loader ``file``) defaults to ``none``: its values are used as given.

Loader keys: ``deng_cai``: ``file``; ``mnist``: ``split``, ``subsample``; ``caltech101``: ``features``
and its settings (see :mod:`src.data.caltech`); ``file`` (a user's own ``.mat``, ``.npz`` or ``.csv``,
``conf/dataset/file.yaml``): ``path`` and the file's layout (see :mod:`src.data.user_file`).

Pixel order: rows of ``X`` are kept as the files store them. Deng Cai's ``.mat`` rows are 32x32 images
in MATLAB column-major order (``pixel_order="F"``: ``X[i].reshape(32, 32, order="F")`` is upright);
MNIST rows are row-major (``pixel_order="C"``). :func:`as_images` applies the right order.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import caltech, deng_cai, mnist, user_file
from .fetch import recording_files
from ..checks import NONNEGATIVE_INT, one_of
from ..errors import ConfigError

logger = logging.getLogger(__name__)

__all__ = ["DATASETS", "PREPROCESS", "Dataset", "as_images", "load_dataset", "pin_user_file"]

_LOADERS = {"deng_cai": deng_cai, "mnist": mnist, "caltech101": caltech, "file": user_file}
#: Loader names accepted by the config key ``loader``.
DATASETS: tuple[str, ...] = tuple(_LOADERS)
#: Values accepted by the config key ``preprocess``.
PREPROCESS: tuple[str, ...] = ("none", "scale01", "unit_norm")
_COMMON_KEYS = ("name", "loader", "preprocess")
#: A run's config with a user file's absolute path and sha256 (see :func:`src.data.user_file.pin`).
pin_user_file = user_file.pin


@dataclass(frozen=True, eq=False)
class Dataset:
    """A loaded, preprocessed data set.

    Attributes
    ----------
    name : str
        The config's ``name``.
    X : ndarray, shape (n_samples, n_features), float64
        Preprocessed data, one sample per row.
    y : ndarray, shape (n_samples,), int64
        Class labels 0..K-1 (every value in between occurs).
    image_shape : tuple of int or None
        ``(height, width)`` of image data sets, None for bag-of-words features.
    class_names : tuple of str or None
        Name of class ``k`` at index ``k``, or None if the source has no names (Deng Cai's files).
    pixel_order : str or None
        How a row of ``X`` maps to ``image_shape``: ``"F"`` (column-major: Deng Cai's files) or ``"C"``
        (row-major: MNIST); None when there is no image. Use :func:`as_images`.
    files : tuple of dict
        The raw files it was loaded from, each ``{"file", "sha256", "path"}``, sorted by name (a run's
        provenance lists them).
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    image_shape: tuple[int, ...] | None
    class_names: tuple[str, ...] | None
    pixel_order: str | None = None
    files: tuple[dict, ...] = ()

    @property
    def n_classes(self) -> int:
        """Number of classes K."""
        return int(self.y.max()) + 1 if self.y.size else 0


def load_dataset(cfg: Mapping, data_dir: str | Path, mirror: str | Path | None, seed: int) -> Dataset:
    """Load and preprocess the data set described by one ``dataset`` config entry.

    Parameters
    ----------
    cfg : Mapping
        The dataset config (a dict or OmegaConf ``DictConfig``); see the module docstring for the keys.
    data_dir : str or Path
        Data directory: raw files are cached in ``data_dir/raw``, derived features in ``data_dir/derived``.
    mirror : str, Path or None
        Root of a local copy of the data files (layout of ``/work/shared/datasets``). None: the
        environment variable ``REPRO_DATA_MIRROR``, else download from upstream.
    seed : int
        Seed for random subsampling (MNIST ``subsample``); ignored by loaders that use the whole file.

    Returns
    -------
    Dataset

    Raises
    ------
    ConfigError
        Unknown ``loader`` or ``preprocess``, or a bad loader key (the message names the key).
    src.errors.DataError
        A data file is missing, corrupted or cannot be fetched.
    """
    name, loader = cfg.get("name"), cfg.get("loader")
    if not isinstance(name, str) or not name:
        raise ConfigError(f"dataset.name={name!r} must be a non-empty string")
    one_of(DATASETS).check("dataset.loader", loader)
    preprocess = one_of(PREPROCESS).check("dataset.preprocess", cfg.get("preprocess", "unit_norm"))
    NONNEGATIVE_INT.check("seed", seed)
    module = _LOADERS[loader]
    unknown = [k for k in cfg.keys() if k not in _COMMON_KEYS + module.KEYS]
    if unknown:
        logger.warning("dataset %s: keys %s are not used by loader %s (it reads %s)",
                       name, ", ".join(map(str, unknown)), loader, ", ".join(module.KEYS))
    with recording_files() as files:
        X, y, meta = module.load(cfg, data_dir, mirror, int(seed))
    y, class_names = _consecutive(y, meta["class_names"])
    X = _preprocess(X, preprocess, meta["max_value"])
    logger.info("dataset %s: X %s, %s, preprocess %s", name, X.shape, user_file.classes_said(y, class_names),
                preprocess)
    shape = tuple(meta["image_shape"]) if meta["image_shape"] is not None else None
    return Dataset(name=name, X=X, y=y, image_shape=shape, class_names=class_names,
                   pixel_order=meta["pixel_order"] if shape is not None else None,
                   files=tuple(files[key] for key in sorted(files)))


def as_images(ds: Dataset) -> np.ndarray:
    """Return the samples of an image data set as upright images.

    Parameters
    ----------
    ds : Dataset
        A data set with ``image_shape`` ``(h, w)``.

    Returns
    -------
    ndarray, shape (n_samples, h, w)
        ``images[i]`` equals ``ds.X[i].reshape((h, w), order=ds.pixel_order)``.

    Raises
    ------
    ValueError
        ``ds`` has no image shape (bag-of-words features).
    """
    if ds.image_shape is None or len(ds.image_shape) != 2:
        raise ValueError(f"dataset {ds.name} has no 2-D image shape")
    height, width = ds.image_shape
    n = ds.X.shape[0]
    if ds.pixel_order == "F":
        return ds.X.reshape(n, width, height).transpose(0, 2, 1)
    return ds.X.reshape(n, height, width)


def _consecutive(y: np.ndarray, class_names: tuple[str, ...] | None) -> tuple[np.ndarray, tuple[str, ...] | None]:
    """Relabel ``y`` to 0..K-1 if some classes are absent (e.g. a small subsample), keeping names aligned."""
    present = np.unique(y)
    if np.array_equal(present, np.arange(present.size)):
        return y, tuple(class_names) if class_names is not None else None
    logger.warning("labels %s are not consecutive; relabelling them 0..%d", present.tolist(), present.size - 1)
    names = tuple(class_names[k] for k in present) if class_names is not None else None
    return np.searchsorted(present, y).astype(np.int64), names


def _preprocess(X: np.ndarray, how: str, max_value: float | None) -> np.ndarray:
    """Apply ``none``, ``scale01`` or ``unit_norm`` to the rows of ``X`` (in place; loaders return fresh arrays)."""
    X = np.asarray(X, dtype=np.float64)
    if how == "scale01":
        top = max_value if max_value is not None else X.max()
        if top > 0:
            X /= top
    elif how == "unit_norm":
        norms = np.linalg.norm(X, axis=1, keepdims=True)
        X /= np.where(norms > 0, norms, 1.0)
    return X

"""What ``python -m src.benchmark --method ...`` and ``--dataset ...`` run: the benchmark opened to what lives
outside the repository.

A **contender** is an estimator outside the checkout, named by its import path
(``mypkg.mymodule:MyNMF``, ``path/to/my_nmf.py:MyNMF``: :mod:`src.methods.outside`) or by a method config
with ``_target_`` in the user's own config directory (``--config-dir mine/conf --method my_nmf`` reads
``mine/conf/method/my_nmf.yaml``). It runs in the tracks it belongs to (:func:`tracks_of`: every track for a
method that takes no labels, as the family's unsupervised methods; the two label tracks for one that says
it takes them, ``needs_labels = True``), on the benchmark's own trials, with the rank set by the protocol
(``n_components = k``). Only its own cells are computed (:func:`contender_homes`); the family's come from
the shipped file (:mod:`.shipped`), except on a data set whose local digest differs from the shipped one
(:func:`mismatched`), where they are recomputed or left out (:func:`family_homes`).

**Your data**: a labelled file (as ``dataset=file`` reads it) gets every family method in the three tracks
(:func:`family_homes`), k = 2 .. min(10, classes); :func:`check_user_data` refuses a file too small for the
protocol before any cell.

The homes here are what the pool reads of a paper's home (:class:`Sweeps`): a name and its sweeps.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from .. import methods
from ..data import user_file
from ..errors import ConfigError
from ..methods import outside
from ..running import gate
from ..running.settings import class_label, target_node

#: The tracks of the family benchmark (``papers/benchmark/<track>/``), unsupervised first.
TRACKS = ("unsupervised", "labels10", "labels30")
LABEL_TRACKS = ("labels10", "labels30")
#: The benchmark's data sets (``conf/experiment/benchmark/<track>.yaml``).
DATASETS = ("orl", "yale", "coil20", "mnist1000", "caltech101")
#: The largest k of the benchmark's protocol, and the labels a class of a label track needs: one labelled
#: sample (floor(0.1 x size), at least one) and one left to cluster.
MAX_K, SMALLEST_CLASS = 10, 2
#: A contender's cell time limit on a data set: this many times the family's slowest cell there, and at
#: least :data:`MIN_LIMIT` seconds.
LIMIT_FACTOR, MIN_LIMIT = 10.0, 60.0


@dataclass(frozen=True)
class Sweeps:
    """A home the pool runs (:class:`src.running.pool.Home`): a name and its sweeps as Hydra overrides, and
    the twins of its folders (pairs of a sweep folder and the folders whose jobs of the same name cost about
    what its jobs do, nearest first: :func:`src.running.pool.schedule.twin_folders`)."""

    name: str
    sweeps: tuple[tuple[str, ...], ...]
    depends_on: tuple[str, ...] = ()
    twins: tuple[tuple[Path, tuple[Path, ...]], ...] = ()

    def sweep_overrides(self) -> list[list[str]]:
        return [list(sweep) for sweep in self.sweeps]


@dataclass(frozen=True)
class Contender:
    """An outside method as the command line names it: ``name`` its import path (what the rows record as the
    estimator), ``label`` its name in the tables, ``params`` its constructor parameters, ``config`` the
    method config it was read from (in the user's config directory), if any."""

    name: str
    label: str
    params: Mapping = field(default_factory=dict)
    config: str | None = None

    @property
    def needs_labels(self) -> bool:
        return bool(getattr(methods.estimator_class(self.name), "needs_labels", False))


def quoted(value) -> str:
    """A Hydra override value that keeps ``:``, ``/`` and spaces: a double-quoted string (or a number as is)."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, float)):
        return json.dumps(value)
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def parse_params(items: list[str]) -> dict:
    """``["beta=0.5", "init=nndsvd"]`` as ``{"beta": 0.5, "init": "nndsvd"}`` (values read as YAML)."""
    params = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.isidentifier():
            raise ConfigError(f"--param {item!r} must be name=value, e.g. --param beta=0.5")
        params[key] = yaml.safe_load(value)
    return params


def resolve(spec: str, params: Mapping, config_dir: str | None = None, label: str | None = None) -> Contender:
    """The :class:`Contender` of ``--method spec``: an import path, or the name of a method config in the
    user's ``config_dir`` (its ``_target_`` and parameters; ``params`` from the command line win)."""
    if outside.is_import_path(spec) and not (config_dir and config_file(config_dir, spec).is_file()):
        gate.imported(spec)
        return Contender(spec, label or class_label(spec), dict(params))
    if spec in methods.REGISTRY:
        raise ConfigError(f"--method {spec}: {spec} is one of the family's methods, whose cells ship with the "
                          "repository; give an outside estimator's import path (package.module:Class)")
    if not config_dir:
        raise ConfigError(f"--method {spec!r} is neither an import path (package.module:Class or "
                          "path/to/file.py:Class) nor, without --config-dir, a method config")
    path = config_file(config_dir, spec)
    if not path.is_file():
        raise ConfigError(f"--method {spec}: no method config {path} (--config-dir {config_dir} must hold "
                          "method/<name>.yaml with _target_: package.module.Class)")
    node = yaml.safe_load(path.read_text()) or {}
    if not isinstance(node.get("_target_"), str):
        raise ConfigError(f"{path} has no _target_: give the estimator's import path, e.g. "
                          "_target_: mypkg.mymodule.MyNMF")
    method = target_node(node)
    gate.imported(method["name"])
    return Contender(method["name"], label or method["label"], {**method["params"], **params}, spec)


def config_file(config_dir: str, name: str) -> Path:
    return Path(config_dir).expanduser().resolve() / "method" / f"{name}.yaml"


def tracks_of(contender: Contender, chosen=TRACKS) -> list[str]:
    """The tracks a contender enters, of those ``chosen``: the label tracks for a method that takes labels,
    every track for one that does not (the family's unsupervised methods are references in the label tracks)."""
    return [t for t in chosen if t in LABEL_TRACKS or not contender.needs_labels]


def method_overrides(contender: Contender, config_dir: str | None) -> list[str]:
    """The overrides that make a track's sweep run ``contender`` alone."""
    if contender.config is not None:
        search = Path(config_dir).expanduser().resolve().as_uri()
        lines = [f"hydra.searchpath=[{quoted(search)}]", f"method={contender.config}",
                 f"++method.label={quoted(contender.label)}"]
        return lines + [f"++method.{key}={quoted(value)}" for key, value in contender.params.items()]
    lines = ["method=outside", f"method.name={quoted(contender.name)}", f"method.label={quoted(contender.label)}"]
    return lines + [f"++method.params.{key}={quoted(value)}" for key, value in contender.params.items()]


def contender_homes(contenders: list[Contender], tracks: list[str], datasets: list[str], out: Path,
                    config_dir: str | None = None) -> list[Sweeps]:
    """One home per track: a sweep per contender that enters it, over ``datasets``, written under
    ``out/<track>/runs``."""
    homes = []
    for track in tracks:
        sweeps = tuple((f"experiment=benchmark/{track}", f"dataset={','.join(datasets)}",
                        *method_overrides(c, config_dir), f"hydra.sweep.dir={quoted(Path(out) / track / 'runs')}")
                       for c in contenders if track in tracks_of(c, tracks))
        if sweeps:
            homes.append(Sweeps(track, sweeps))
    return homes


def family_homes(tracks: list[str], dataset_overrides: list[str], out: Path, name: str = "family") -> list[Sweeps]:
    """The family's own sweep of each track (every method of its experiment) on the data set the overrides
    choose, under ``out/<track>/runs`` (your data; or a data set whose shipped cells do not describe the local
    data)."""
    return [Sweeps(f"{name} {track}", ((f"experiment=benchmark/{track}", *dataset_overrides,
                                        f"hydra.sweep.dir={quoted(Path(out) / track / 'runs')}"),))
            for track in tracks]


def user_data_overrides(path: str, n_classes: int) -> list[str]:
    """The overrides that run a track on the user's file: ``dataset=file``, its path, k = 2..min(10, classes)."""
    ks = ",".join(str(k) for k in range(2, min(MAX_K, n_classes) + 1))
    return ["dataset=file", f"dataset.path={quoted(Path(path).expanduser().resolve())}", f"protocol.ks=[{ks}]"]


def check_user_data(y, path: str, class_names=None) -> int:
    """Refuse a labelled data set too small for the protocol (one line): fewer than 2 classes, or a class with
    fewer samples than a label track needs (:data:`SMALLEST_CLASS`); and a partially labelled one (a class
    named -1, the mark of an unknown label), which ``python -m src.cluster`` reads. Returns the number of
    classes."""
    if class_names is not None and user_file.UNKNOWN in class_names:
        raise ConfigError(f"--dataset {path}: the labels hold -1, the mark of an unknown label; the benchmark "
                          f"needs every label. Cluster a partially labelled file with python -m src.cluster {path}")
    classes, sizes = np.unique(np.asarray(y), return_counts=True)
    if len(classes) < 2:
        raise ConfigError(f"--dataset {path}: {len(classes)} class(es); the protocol clusters k >= 2 classes")
    small = [(c, n) for c, n in zip(classes.tolist(), sizes.tolist()) if n < SMALLEST_CLASS]
    if small:
        c, n = small[0]
        raise ConfigError(f"--dataset {path}: class {c} has {n} sample(s); each class needs at least "
                          f"{SMALLEST_CLASS} (one labelled and one to cluster): drop or merge the small classes "
                          f"({len(small)} of {len(classes)} are too small)")
    return len(classes)


def mismatched(shipped: pd.DataFrame, local: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """The data sets whose shipped digest differs from the local one: name -> (shipped, local)."""
    found = {}
    for dataset, digests in shipped.groupby("dataset")["data_sha256"]:
        ours = local.get(dataset)
        theirs = str(digests.iloc[0])
        if ours is not None and ours != theirs:
            found[str(dataset)] = (theirs, ours)
    return found


def time_limits(shipped: pd.DataFrame, factor: float = LIMIT_FACTOR, floor: float = MIN_LIMIT) -> dict[str, float]:
    """A contender's cell time limit per data set: ``factor`` times the family's slowest cell there (its fit
    and KMeans seconds), at least ``floor`` seconds."""
    seconds = (shipped["fit_seconds"] + shipped["kmeans_seconds"]).groupby(shipped["dataset"]).max()
    return {str(d): max(floor, factor * float(s)) for d, s in seconds.items() if not math.isnan(s)}

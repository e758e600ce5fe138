"""The benchmark's data sets: loaded once by their config names, with 10% of each class labelled.

A data set is loaded with :func:`src.data.named.load_named` (the same files and preprocessing as an
experiment), optionally cut to its first ``size`` samples of a seeded permutation (``--quick``). The
labelled samples are drawn by the protocol's own code (:func:`src.protocol.trials.make_trial`, the CNMF
protocol's "10% of each class"); a method gets them only if its class says it ``needs_labels``.
A data set handed to a child process goes through an ``.npz`` file (:func:`save`, :func:`load_saved`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from src.files import atomic_path
from src.protocol.trials import make_trial

#: The data sets the targets name, by config name, with their titles in the report.
TITLES = {"yale": "Yale", "orl": "ORL", "coil20": "COIL20", "mnist10k": "MNIST-10k", "mnist": "MNIST-70k"}
LABEL_FRACTION = 0.1


@dataclass(frozen=True, eq=False)
class BenchData:
    """One data set as the benchmark uses it.

    Attributes
    ----------
    name : str
        Config name (``conf/dataset/<name>.yaml``).
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Classes 0..c-1.
    y_partial : ndarray of shape (n_samples,)
        ``y`` on the labelled samples, -1 elsewhere.
    image_shape : tuple of int or None
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    y_partial: np.ndarray
    image_shape: tuple[int, ...] | None

    @property
    def title(self) -> str:
        return title(self.name, self.X.shape[0])

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    def labels(self, needs_labels: bool):
        """The partial labels for a method that needs them, else None (every sample unlabelled)."""
        return self.y_partial if needs_labels else None


def title(name: str, n: int | None = None) -> str:
    """The report's name of data set ``name``, with its size when given."""
    text = TITLES.get(name, name)
    return text if n is None else f"{text} (n = {n:,})"


def labelled(y: np.ndarray, name: str, seed: int = 0) -> np.ndarray:
    """Partial labels: :data:`LABEL_FRACTION` of each class labelled (the protocol's draw), -1 elsewhere."""
    n_classes = int(y.max()) + 1
    trial = make_trial(y, name, n_classes, 0, seed, {"mode": "fraction", "fraction": LABEL_FRACTION})
    return trial.y_partial  # all classes chosen: the trial's samples are all samples, in order


def subsample(X: np.ndarray, y: np.ndarray, size: int | None, seed: int = 0):
    """At most ``size`` samples (a seeded choice, kept in order), classes renumbered 0..c-1."""
    if size is None or X.shape[0] <= size:
        return X, y
    keep = np.sort(np.random.default_rng(seed).choice(X.shape[0], size, replace=False))
    return X[keep], np.searchsorted(np.unique(y[keep]), y[keep])


def load(name: str, size: int | None = None, seed: int = 0) -> BenchData:
    """Data set ``name`` (``conf/dataset/<name>.yaml``), at most ``size`` samples."""
    from src.data.named import load_named  # Hydra and the loaders: only when data are loaded

    dataset = load_named(name)
    X, y = subsample(dataset.X, dataset.y, size, seed)
    return BenchData(name, X, y, labelled(y, name, seed), dataset.image_shape)


def save(data: BenchData, path: Path) -> Path:
    """Write ``data`` to ``path`` (an uncompressed ``.npz``) for a child process."""
    with atomic_path(path, suffix=".npz") as tmp:
        np.savez(tmp, X=data.X, y=data.y, y_partial=data.y_partial, name=data.name,
                 image_shape=np.asarray(data.image_shape or (), dtype=np.int64))
    return Path(path)


def load_saved(path: Path) -> BenchData:
    """The data set :func:`save` wrote to ``path``."""
    with np.load(path, allow_pickle=False) as stored:
        shape = tuple(int(v) for v in stored["image_shape"]) or None
        return BenchData(str(stored["name"]), stored["X"], stored["y"], stored["y_partial"], shape)

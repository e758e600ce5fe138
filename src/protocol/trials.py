"""The trials of the papers' protocol: which classes, samples and labels a (dataset, k, trial) cell takes.

Paired design: a trial's class subset, labelled points, initial-factor seed and KMeans seed are drawn from
``SeedSequence(seed, spawn_key=(crc32(dataset), k, trial))``. They depend only on (seed, dataset, k,
trial), never on the method or on the order in which cells run, so every method in a table sees the same
trials and the same seed always gives the same numbers.

Folds (the tuned benchmark's cross-validation, :mod:`src.tuning.selection`): a label scheme with ``folds`` =
F >= 2 and ``fold`` = f deals the trial's labelled samples into F folds (:func:`fold_of`) and hides fold f,
whose samples the method is not told and which score the fit. The deal has its own stream, the fifth child of
the trial's seed sequence, so the classes, labels and seeds of every trial are the same with folds or without.
"""

import zlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..methods.core.validation import UNLABELLED

#: How a trial labels samples (``protocol.labels.mode``): none, a fraction of each class, a count per class.
LABEL_MODES = ("none", "fraction", "per_class")


@dataclass(frozen=True)
class Trial:
    """The samples, partial labels and seeds of one (dataset, k, trial) cell, shared by all methods."""

    k: int
    trial: int
    index: np.ndarray  # (n_k,) rows of the data set taken
    y_true: np.ndarray  # (n_k,) classes renumbered 0..k-1
    y_partial: np.ndarray  # (n_k,) y_true on labelled samples, -1 elsewhere
    init_seed: int
    kmeans_seed: int

    @property
    def n_samples(self) -> int:
        """Samples the trial takes (all samples of its k classes)."""
        return int(self.index.size)

    @property
    def n_labelled(self) -> int:
        """Samples of the trial with a label."""
        return int((self.y_partial != UNLABELLED).sum())


def label_counts(class_sizes: np.ndarray, labels: Mapping) -> np.ndarray:
    """Number of labelled samples per class under ``labels`` (keys mode, fraction, per_class).

    ``fraction`` labels floor(fraction * n_c) samples of a class of size n_c, and at least one.
    ``per_class`` labels the same count in every class.
    """
    mode = labels["mode"]
    if mode == "none":
        return np.zeros_like(class_sizes)
    if mode == "fraction":
        return np.maximum(1, np.floor(labels["fraction"] * class_sizes + 1e-9).astype(np.int64))
    return np.minimum(labels["per_class"], class_sizes)


def make_trial(y: np.ndarray, dataset: str, k: int, trial: int, seed: int, labels: Mapping) -> Trial:
    """Draw the classes, labelled points and seeds of one cell (see the module docstring)."""
    sequence = np.random.SeedSequence(seed, spawn_key=(zlib.crc32(dataset.encode()), k, trial))
    class_seq, label_seq, init_seq, kmeans_seq, fold_seq = sequence.spawn(5)  # the first four as spawn(4)
    classes = np.sort(np.random.default_rng(class_seq).choice(np.unique(y), size=k, replace=False))
    index = np.flatnonzero(np.isin(y, classes))
    y_true = np.searchsorted(classes, y[index])
    counts = label_counts(np.bincount(y_true, minlength=k), labels)
    rng = np.random.default_rng(label_seq)
    y_partial = np.full_like(y_true, UNLABELLED)
    for c in range(k):
        members = np.flatnonzero(y_true == c)
        chosen = rng.choice(members, size=counts[c], replace=False)
        y_partial[chosen] = c
    if labels.get("folds"):
        y_partial[fold_of(y_partial, labels["folds"], np.random.default_rng(fold_seq)) == labels["fold"]] = UNLABELLED
    return Trial(
        k=k,
        trial=trial,
        index=index,
        y_true=y_true,
        y_partial=y_partial,
        init_seed=int(init_seq.generate_state(1)[0]),
        kmeans_seed=int(kmeans_seq.generate_state(1)[0]),
    )


def fold_of(y_partial: np.ndarray, folds: int, rng: np.random.Generator) -> np.ndarray:
    """The fold (0 .. folds - 1) of each labelled sample of ``y_partial`` (n,), -1 for an unlabelled one.

    Stratified: class by class, the class's labelled samples in random order are dealt to the folds in turn,
    the deal going on from one class to the next, so each fold holds about 1/folds of every class's labels
    and a class with fewer labels than folds still spreads them over different folds.
    """
    fold = np.full(y_partial.shape, -1, dtype=np.int64)
    dealt = 0
    for c in np.unique(y_partial[y_partial != UNLABELLED]):
        members = rng.permutation(np.flatnonzero(y_partial == c))
        fold[members] = (dealt + np.arange(members.size)) % folds
        dealt += members.size
    return fold

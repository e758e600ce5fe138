"""A cell's partition, kept with its row, and the scores a track reads from it.

A cell's clustering (the cluster of every sample of its trial, in the trial's order) does not depend on which
samples are labelled unless the method reads labels. Keeping it with the cell lets every track score the same
clustering its own way (every sample, or the samples its trial leaves unlabelled) without a refit, and lets a
new measure be computed later from the cells on disk, as Gagolewski's clustering benchmark keeps each method's
predicted labels.

Storage: the clusters are renumbered in order of first appearance (every score here is invariant to the
clusters' names), then written one character per sample from :data:`ALPHABET` when there are at most 62 of
them, else as decimal numbers joined by ``-``. A trial of 3,000 samples keeps 3,000 bytes in its JSON cell.
The first sample is always in cluster 0, written ``a``, so that no partition reads as a number in a CSV file
(``0010`` would come back from ``pandas.read_csv`` as the integer 10).

References
----------
Gagolewski, M. (2022). A framework for benchmarking clustering algorithms. SoftwareX 20, 101270.
Hubert, L. and Arabie, P. (1985). Comparing partitions. Journal of Classification 2, 193-218 (the adjusted
Rand index).
"""

from __future__ import annotations

import string

import numpy as np
from scipy.optimize import linear_sum_assignment

from ..methods.core.validation import UNLABELLED
from .metrics import accuracy, ari, nmi
from .trials import Trial

#: The characters of a partition of at most 62 clusters: cluster i is ``ALPHABET[i]``.
ALPHABET = string.ascii_lowercase + string.ascii_uppercase + string.digits
#: The separator of a partition of more clusters than :data:`ALPHABET` has characters.
SEPARATOR = "-"
#: The scores of an assignment, each ``name(y_true, predicted)``; a row names them ``<score>`` and
#: ``<score>_unlabelled``.
SCORES = {"acc": accuracy, "nmi": nmi, "ari": ari}


def renumbered(labels) -> np.ndarray:
    """``labels`` (n_samples,) as clusters 0, 1, ... in order of first appearance: the same partition."""
    labels = np.asarray(labels).ravel()
    if labels.size == 0:
        return labels.astype(np.int64)
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first, kind="stable"), kind="stable")  # cluster rank by first appearance
    return order[inverse.ravel()].astype(np.int64)


def encode(labels) -> str:
    """The partition ``labels`` (n_samples,) as text: one character a sample (see the module docstring)."""
    clusters = renumbered(labels)
    if clusters.size and clusters.max() >= len(ALPHABET):
        return SEPARATOR.join(map(str, clusters.tolist()))
    return "".join(ALPHABET[i] for i in clusters.tolist())


def decode(text: str) -> np.ndarray:
    """The partition :func:`encode` wrote, as clusters 0, 1, ... (n_samples,)."""
    if SEPARATOR in text:
        return np.array([int(part) for part in text.split(SEPARATOR)], dtype=np.int64)
    position = {char: i for i, char in enumerate(ALPHABET)}
    return np.array([position[char] for char in text], dtype=np.int64)


def scores(y_true, predicted, samples=slice(None)) -> dict[str, float]:
    """Every score of :data:`SCORES` of the assignment ``predicted`` on ``samples`` (a mask or slice)."""
    y_true, predicted = np.asarray(y_true), np.asarray(predicted)
    return {name: score(y_true[samples], predicted[samples]) for name, score in SCORES.items()}


def labels_some(trial: Trial) -> bool:
    """Whether the trial has both labelled and unlabelled samples: where the scores of its unlabelled samples
    and the classes given back to them mean something."""
    free = trial.y_partial == UNLABELLED
    return bool(free.any() and not free.all())


def unlabelled_scores(trial: Trial, predicted, score_on: str) -> dict[str, float]:
    """The row's scores of the trial's unlabelled samples alone, ``<score>_unlabelled``: when all samples are
    scored (``score_on="all"``) and the trial has both labelled and unlabelled samples, since a point whose
    class the method was told flatters it; else none."""
    if score_on != "all" or not labels_some(trial):
        return {}
    free = trial.y_partial == UNLABELLED
    return {f"{name}_unlabelled": value for name, value in scores(trial.y_true, predicted, free).items()}


def class_of_clusters(clusters: np.ndarray, y_partial: np.ndarray) -> np.ndarray:
    """Each cluster's class (index: cluster 0..max), read from the known labels alone: the best one-to-one map
    of clusters to classes on the known samples (``y_partial`` >= 0); a cluster the map leaves out takes its
    most frequent known class, -1 if it has none. How ``python -m src.cluster`` names a person's clusters."""
    clusters, y_partial = np.asarray(clusters), np.asarray(y_partial)
    known = y_partial != UNLABELLED
    n_clusters = int(clusters.max()) + 1
    table = np.zeros((n_clusters, int(y_partial[known].max(initial=-1)) + 1))
    np.add.at(table, (clusters[known], y_partial[known]), 1)
    mapped = np.full(n_clusters, UNLABELLED)
    rows, cols = linear_sum_assignment(-table)
    mapped[rows] = cols
    for c in np.flatnonzero(mapped == UNLABELLED):
        if table[c].sum():
            mapped[c] = int(table[c].argmax())
    return mapped


def given_back(trial: Trial, predicted) -> float:
    """The classes given back: the share of the trial's unlabelled samples whose class is right when each
    cluster of ``predicted`` (n_samples,) takes the class its labelled samples give it
    (:func:`class_of_clusters`). No unknown label chooses the map, unlike AC's; a reference's partition is its
    own classes with the known samples kept, so the map gives each sample its own predicted class back. NaN for
    a trial without both labelled and unlabelled samples."""
    if not labels_some(trial):
        return float("nan")
    predicted = np.asarray(predicted)
    free = trial.y_partial == UNLABELLED
    classes = class_of_clusters(predicted, trial.y_partial)[predicted[free]]
    return float(np.mean(classes == trial.y_true[free]))


def place_columns(trial: Trial, predicted, score_on: str) -> dict:
    """What a row of ``trial`` reads from the cell's partition ``predicted`` beyond its own scores: the scores
    on its unlabelled samples (:func:`unlabelled_scores`), the classes it gives back to them (``given_unlabelled``,
    :func:`given_back`, in a trial with both kinds of samples) and its sizes, ``n_samples`` and ``n_labelled``.

    Two tracks that share one clustering (an unsupervised method, whose partition no label changes) differ in
    these columns only.
    """
    given = {"given_unlabelled": given_back(trial, predicted)} if labels_some(trial) else {}
    return {**unlabelled_scores(trial, predicted, score_on), **given, "n_samples": trial.n_samples,
            "n_labelled": trial.n_labelled}

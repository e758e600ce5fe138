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


def unlabelled_scores(trial: Trial, predicted, score_on: str) -> dict[str, float]:
    """The row's scores of the trial's unlabelled samples alone, ``<score>_unlabelled``: when all samples are
    scored (``score_on="all"``) and the trial has both labelled and unlabelled samples, since a point whose
    class the method was told flatters it; else none."""
    free = trial.y_partial == UNLABELLED
    if score_on != "all" or not free.any() or free.all():
        return {}
    return {f"{name}_unlabelled": value for name, value in scores(trial.y_true, predicted, free).items()}


def place_columns(trial: Trial, predicted, score_on: str) -> dict:
    """What a row of ``trial`` reads from the cell's partition ``predicted`` beyond its own scores: the scores
    on its unlabelled samples (:func:`unlabelled_scores`) and its sizes, ``n_samples`` and ``n_labelled``.

    Two tracks that share one clustering (an unsupervised method, whose partition no label changes) differ in
    these columns only.
    """
    return {**unlabelled_scores(trial, predicted, score_on), "n_samples": trial.n_samples,
            "n_labelled": trial.n_labelled}

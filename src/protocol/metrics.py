"""Clustering accuracy (AC) and normalized mutual information (NMI), as the papers define them, and the
adjusted Rand index (ARI), which most clustering papers since report.

AC maps clusters to classes one-to-one with the Hungarian algorithm (Deng Cai's ``bestMap.m``) and counts
the matching samples. NMI divides the mutual information by max(H(C), H(C')) (Deng Cai's
``MutualInfo.m``): it is scikit-learn's :func:`~sklearn.metrics.normalized_mutual_info_score` with
``average_method="max"``, not that function's default arithmetic mean. ARI is the Rand index corrected for
chance (Hubert and Arabie 1985), scikit-learn's :func:`~sklearn.metrics.adjusted_rand_score`: 0 in
expectation for a random assignment, 1 for the classes themselves. It enters the benchmark's cells and CSV
files, not the papers' tables, which report AC and NMI.
"""

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score


def contingency(labels_true, labels_pred) -> np.ndarray:
    """Counts n_ij of samples in class i and cluster j, (n_classes, n_clusters)."""
    labels_true = np.asarray(labels_true)
    labels_pred = np.asarray(labels_pred)
    if labels_true.shape != labels_pred.shape or labels_true.ndim != 1:
        raise ValueError(f"label arrays must be 1-D of equal length, got {labels_true.shape} and {labels_pred.shape}")
    _, i = np.unique(labels_true, return_inverse=True)
    _, j = np.unique(labels_pred, return_inverse=True)
    table = np.zeros((i.max() + 1, j.max() + 1), dtype=np.int64)
    np.add.at(table, (i, j), 1)
    return table


def accuracy(labels_true, labels_pred) -> float:
    """Fraction of samples whose cluster maps to their class under the best one-to-one mapping."""
    table = contingency(labels_true, labels_pred)
    rows, cols = linear_sum_assignment(table, maximize=True)
    return float(table[rows, cols].sum() / table.sum())


def nmi(labels_true, labels_pred) -> float:
    """Mutual information divided by max(H(C), H(C')); 1.0 when both labelings are a single group.

    The papers' normalization (Deng Cai's ``MutualInfo.m``), computed by scikit-learn.
    """
    return float(normalized_mutual_info_score(labels_true, labels_pred, average_method="max"))


def ari(labels_true, labels_pred) -> float:
    """Adjusted Rand index of the assignment against the classes (Hubert and Arabie 1985), by scikit-learn."""
    return float(adjusted_rand_score(labels_true, labels_pred))

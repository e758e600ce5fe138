"""Nearest-neighbour graphs for the graph-regularized factorizations (GNMF, SemiGNMF), after Deng Cai's
``constructW.m``.

All graphs are ``scipy.sparse.csr_matrix`` (n x n), symmetric, with a zero diagonal; nothing here ever
holds a dense n x n array (memory is O(n k) for the graph, plus fixed-size blocks for the heat kernel's
default bandwidth).

Conventions (Deng Cai's ``constructW.m``, ``NeighborMode='KNN'``, recalled from his public code; the
GNMF and SemiGNMF papers do not spell them out):

* each sample is joined to its ``n_neighbors`` nearest other samples (Euclidean distance; cosine
  similarity in ``weight="cosine"`` mode, where ``constructW`` ranks neighbours by the inner product of
  the unit-normalized samples), and the graph is symmetrized as W = max(W, W^T)
  (``bSelfConnected=0``: no self loops);
* ``"binary"``: W_ij = 1 on the edges (the 0-1 weighting of the GNMF paper's experiments);
* ``"heat"``: W_ij = exp(-||x_i - x_j||^2 / t), the heat kernel as written in the GNMF paper. Cai's code
  writes it exp(-d^2 / (2 s^2)) with the default s = the mean Euclidean distance over all n^2 ordered
  pairs of samples (self pairs included, MATLAB's ``mean(mean(EuDist2(fea)))``). The default here is
  therefore t = 2 s^2, which gives exactly Cai's default kernel. Cai's code estimates s on a random
  subset of 3000 samples when n > 3000; here s is computed exactly over all pairs, in row blocks
  (O(n^2 m) time, no randomness). If every sample is identical (s = 0) t falls back to 1 (all weights 1;
  Cai's code would divide 0 by 0);
* ``"cosine"``: W_ij = x_i^T x_j / (||x_i|| ||x_j||); an all-zero sample has cosine 0 with everything.

Edges whose weight is exactly 0 (cosine of orthogonal samples, a heat weight that underflows) are not
stored.

References
----------
D. Cai, X. He, J. Han and T. S. Huang, "Graph regularized nonnegative matrix factorization for data
representation", IEEE TPAMI 33(8), 2011 (Sec. 3: p-nearest-neighbour graph, 0-1 / heat kernel / dot
product weighting); Deng Cai's ``constructW.m``.
"""

import logging
from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.metrics import pairwise_distances_chunked
from sklearn.neighbors import NearestNeighbors
from sklearn.preprocessing import normalize

from ..errors import ConfigError
from .base import UNLABELLED, check_positive_int

logger = logging.getLogger(__name__)

WEIGHTS = ("binary", "heat", "cosine")

BLOCK_MB = 4
"""Working memory (MB) of one block of pairwise distances when computing the heat kernel's default t."""


def check_weight(weight) -> str:
    """Return ``weight`` if it is one of :data:`WEIGHTS`, else raise :class:`ConfigError`."""
    if not isinstance(weight, str) or weight not in WEIGHTS:
        raise ConfigError(f"weight={weight!r} must be one of {', '.join(WEIGHTS)}")
    return weight


def check_t(t) -> float | None:
    """Return the heat-kernel width ``t`` (None or a finite number > 0), else raise :class:`ConfigError`."""
    if t is None:
        return None
    if isinstance(t, bool) or not isinstance(t, Real) or not np.isfinite(t) or t <= 0:
        raise ConfigError(f"t={t!r} must be None or a finite number > 0")
    return float(t)


def mean_pairwise_distance(X_rows: np.ndarray) -> float:
    """Mean Euclidean distance over all n^2 ordered pairs of rows (zero self-distances included).

    Computed in row blocks of about :data:`BLOCK_MB` megabytes, never as an n x n array.

    Parameters
    ----------
    X_rows : ndarray of shape (n_samples, n_features)
    """
    n = X_rows.shape[0]
    total = 0.0
    for block in pairwise_distances_chunked(X_rows, working_memory=BLOCK_MB, metric="euclidean"):
        total += float(block.sum())
    return total / (n * n)


def default_t(X_rows: np.ndarray) -> float:
    """Cai's default heat-kernel width in this module's form exp(-d^2 / t): t = 2 s^2, s the mean distance."""
    s = mean_pairwise_distance(X_rows)
    return 2.0 * s * s if s > 0 else 1.0


def knn_graph(X_rows, n_neighbors=5, weight="binary", t=None) -> sp.csr_matrix:
    """Symmetric k-nearest-neighbour graph of the samples (rows), Deng Cai's ``constructW`` conventions.

    Parameters
    ----------
    X_rows : array-like of shape (n_samples, n_features)
        One sample per row.
    n_neighbors : int, default=5
        Neighbours per sample (Cai's default k = 5), not counting the sample itself. Clipped to
        n_samples - 1 (with a warning) when larger.
    weight : {"binary", "heat", "cosine"}, default="binary"
        Edge weights, see the module docstring.
    t : float or None, default=None
        Heat kernel width in exp(-d^2 / t); None uses Cai's default t = 2 s^2 (s = mean pairwise
        Euclidean distance). Ignored by the other weightings.

    Returns
    -------
    W : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        Symmetric (W = max(W, W^T)), zero diagonal, nonnegative weights.
    """
    k = check_positive_int("n_neighbors", n_neighbors)
    weight = check_weight(weight)
    t = check_t(t)
    X_rows = np.asarray(X_rows, dtype=np.float64)
    n = X_rows.shape[0]
    if k > n - 1:
        logger.warning("n_neighbors=%d is more than n_samples - 1 = %d; using %d", k, n - 1, n - 1)
        k = n - 1
    if k == 0:
        return sp.csr_matrix((n, n), dtype=np.float64)

    # cosine mode ranks neighbours by cosine similarity = Euclidean order of the unit-normalized samples
    Y = normalize(X_rows) if weight == "cosine" else X_rows
    neighbours = NearestNeighbors(n_neighbors=k).fit(Y).kneighbors(return_distance=False)  # (n, k), no self

    # weights recomputed exactly from the indices, one neighbour rank at a time (k steps of O(n m)); 0-1
    # weights need no partner rows (gathering them cost an n x m copy per rank)
    values = np.ones((n, k))
    for j in range(k if weight != "binary" else 0):
        partner = Y[neighbours[:, j]]
        if weight == "cosine":
            values[:, j] = np.einsum("ij,ij->i", Y, partner)
        else:
            diff = X_rows - partner
            values[:, j] = np.einsum("ij,ij->i", diff, diff)
        del partner
    if weight == "heat":
        if t is None:
            t = default_t(X_rows)
        np.exp(-values / t, out=values)
    np.maximum(values, 0.0, out=values)  # cosine of nonnegative data is >= 0; rounding must not make it < 0

    rows = np.repeat(np.arange(n), k)
    W = sp.csr_matrix((values.ravel(), (rows, neighbours.ravel())), shape=(n, n))
    W = W.maximum(W.T).tocsr()  # kneighbors(X=None) never returns a sample as its own neighbour
    W.eliminate_zeros()
    W.sort_indices()
    return W


def label_graph(W, y) -> sp.csr_matrix:
    """Overwrite the labelled block of a graph with the label information (SemiGNMF).

    For every pair of distinct labelled samples i != j (y_i, y_j >= 0): W_ij = 1 if y_i == y_j and
    W_ij = 0 otherwise. Pairs with an unlabelled sample keep their weight. The diagonal stays 0 (the
    papers say "same label -> large weight, different labels -> 0"; the value 1 is the largest weight of
    the 0-1 graph, and self pairs are left out so that the graph keeps no self loops).

    Parameters
    ----------
    W : scipy.sparse matrix of shape (n, n)
        Symmetric graph.
    y : array-like of shape (n,)
        Class labels, -1 for unlabelled samples.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n, n)
        A new matrix; W is not modified. Its size grows by sum_c n_c^2 entries (n_c labelled samples of
        class c), which is what the papers' graph holds.
    """
    W = sp.csr_matrix(W, dtype=np.float64, copy=True)
    y = np.asarray(y)
    n = W.shape[0]
    if y.shape != (n,):
        raise ConfigError(f"y must have shape ({n},), got {y.shape}")
    labelled = np.flatnonzero(y != UNLABELLED)
    if labelled.size == 0:
        return W
    is_labelled = np.zeros(n, dtype=bool)
    is_labelled[labelled] = True

    # drop every stored entry of the labelled block
    W = W.tocoo()
    keep = ~(is_labelled[W.row] & is_labelled[W.col])
    kept = sp.csr_matrix((W.data[keep], (W.row[keep], W.col[keep])), shape=(n, n))

    # same-class pairs: S = Y Y^T with Y the (n x c) sparse one-hot matrix of the labelled samples
    classes, codes = np.unique(y[labelled], return_inverse=True)
    Y = sp.csr_matrix((np.ones(labelled.size), (labelled, codes)), shape=(n, classes.size))
    S = (Y @ Y.T).tocoo()
    off = S.row != S.col
    S = sp.csr_matrix((S.data[off], (S.row[off], S.col[off])), shape=(n, n))
    out = (kept + S).tocsr()
    out.sort_indices()
    return out


def degree(W) -> np.ndarray:
    """Degree vector D_jj = sum_l W_jl, shape (n,)."""
    return np.asarray(W.sum(axis=1)).ravel()


def laplacian(W) -> sp.csr_matrix:
    """Graph Laplacian L = D - W (sparse, n x n), D = diag(:func:`degree`)."""
    return (sp.diags(degree(W)) - W).tocsr()

"""Nearest-neighbour graphs for the graph-regularized methods (GNMF, SemiGNMF, PCGNMF, FNMF, SDA; the
neighbour search also for NPNMF), after Deng Cai's ``constructW.m``.

All graphs are ``scipy.sparse.csr_matrix`` (n x n), symmetric, with a zero diagonal; nothing here ever
holds a dense n x n array (memory is O(n k) for the graph, plus fixed-size blocks for the heat kernel's
default bandwidth).

Conventions (Deng Cai's ``constructW.m``, ``NeighborMode='KNN'``, recalled from his public code; the
GNMF and SemiGNMF papers do not spell them out):

* each sample is joined to its ``n_neighbors`` nearest other samples by Euclidean distance, in every
  weight mode (``constructW``'s default ``bNormalized=0`` ranks by Euclidean distance of the samples as
  given even for cosine weights; checked by ``make crosscheck``), and the graph is symmetrized as
  W = max(W, W^T) (``bSelfConnected=0``: no self loops);
* ``"binary"``: W_ij = 1 on the edges (the 0-1 weighting of the GNMF paper's experiments);
* ``"heat"``: W_ij = exp(-||x_i - x_j||^2 / t), the heat kernel as written in the GNMF paper. Cai's code
  writes it exp(-d^2 / (2 s^2)) with the default s = the mean Euclidean distance over all n^2 ordered
  pairs of samples (self pairs included, MATLAB's ``mean(mean(EuDist2(fea)))``). The default here is
  therefore t = 2 s^2, which gives exactly Cai's default kernel. Cai's code estimates s on a random
  subset of 3000 samples when n > 3000; here s is computed exactly over all pairs, in row blocks
  (O(n^2 m) time, no randomness), up to :data:`EXACT_MAX_SAMPLES` samples, and above that, like Cai,
  on :data:`HEAT_SUBSET` = 3000 samples drawn without replacement from the seeded generator (see
  "Scale" below). If every sample is identical (s = 0) t falls back to 1 (all weights 1; Cai's code
  would divide 0 by 0);
* ``"cosine"``: W_ij = x_i^T x_j / (||x_i|| ||x_j||); an all-zero sample has cosine 0 with everything.

Edges whose weight is exactly 0 (cosine of orthogonal samples, a heat weight that underflows) are not
stored.

Scale: exact and approximate neighbour search (:func:`nearest_neighbours`, shared by the graph and by
NPNMF's reconstruction weights). The exact search (scikit-learn's ``NearestNeighbors``, brute force
for dense high-dimensional data) costs 2 n^2 m flops plus a selection over n^2 distances, which at
tens of thousands of samples outweighs the whole factorization. ``algorithm`` chooses:

* ``"exact"``: scikit-learn's ``NearestNeighbors(n_neighbors=k)``;
* ``"nndescent"``: the approximate NN-descent graph of :func:`.nndescent.approximate_neighbours`
  (Dong, Charikar and Li 2011; this package's own numba code, one thread) on the float32 samples,
  seeded from ``random_state`` (the estimators pass theirs): an int seed gives the same graph in every
  process, None a different one in each call. It is over-queried: max(:data:`NNDESCENT_OVERQUERY` k,
  :data:`NNDESCENT_MIN_QUERY`) neighbours are searched and the k nearest kept, because the first few
  neighbours of a wider search are far more often the true ones. Every row of the search lists
  distinct samples other than its own, so no row needs completing. numba compiles the search once per
  installation (in the first call after installing or editing ``nndescent.py``) and caches the machine
  code on disk, from which every later process loads it in a fraction of a second. O(n m) memory (a
  float32 copy of the data and the n x 21 lists). :mod:`.nndescent` (and numba) are imported only when
  this path runs;
* ``"auto"`` (default): ``"exact"`` up to :data:`EXACT_MAX_SAMPLES` = 30,000 samples, ``"nndescent"``
  above. Every experiment of the papers has n <= 10,000 samples, so their graphs stay the exact ones,
  bit for bit.

Repeated searches: the methods of a tuned run fit the same samples many times (every setting, and a
label method's folds); :func:`nearest_neighbours` keeps the exact searches of the process
(:data:`SEARCHES`), keyed by a digest of the samples, and serves a repeated one without searching again.

The neighbour edges found by ``"nndescent"`` are exact edges with exact weights (recomputed in
float64 from the samples); only an occasional edge is missing (replaced by a slightly farther
sample). With at most ``max(NNDESCENT_OVERQUERY k, NNDESCENT_MIN_QUERY)`` samples (the size of the
search) it is exact whatever ``algorithm`` says.

References
----------
D. Cai, X. He, J. Han and T. S. Huang, "Graph regularized nonnegative matrix factorization for data
representation", IEEE TPAMI 33(8), 2011 (Sec. 3: p-nearest-neighbour graph, 0-1 / heat kernel / dot
product weighting); Deng Cai's ``constructW.m``.

W. Dong, M. Charikar and K. Li, "Efficient k-nearest neighbor graph construction for generic similarity
measures", Proc. WWW 2011, pp. 577-586 (NN-descent, :mod:`.nndescent`).
"""

import logging

import numpy as np
import scipy.sparse as sp
from sklearn.metrics import pairwise_distances_chunked
from sklearn.neighbors import NearestNeighbors
from sklearn.preprocessing import normalize

from ...errors import ConfigError
from ...checks import POSITIVE, POSITIVE_INT, Rule, one_of
from ..core.kept import Kept, samples_key
from ..core.validation import UNLABELLED

logger = logging.getLogger(__name__)

WEIGHTS = ("binary", "heat", "cosine")
"""The edge weights of :func:`knn_graph`: 0-1, the heat kernel exp(-d^2 / t), the cosine of the samples."""

BLOCK_MB = 4
"""Working memory (MB) of one block of pairwise distances when computing the heat kernel's default t."""

ALGORITHMS = ("auto", "exact", "nndescent")
"""The neighbour searches: "auto" is exact up to :data:`EXACT_MAX_SAMPLES` samples and NN-descent above."""

EXACT_MAX_SAMPLES = 30_000
"""Largest n for which ``algorithm="auto"`` searches exactly and the heat kernel's default t is exact."""

HEAT_SUBSET = 3000
"""Samples on which the heat kernel's default t is estimated above :data:`EXACT_MAX_SAMPLES` (Cai's 3000)."""

NNDESCENT_OVERQUERY = 3
"""NN-descent searches max(NNDESCENT_OVERQUERY * k, NNDESCENT_MIN_QUERY) neighbours and keeps the k nearest."""

NNDESCENT_MIN_QUERY = 21
"""The fewest neighbours NN-descent searches, whatever k (see :data:`NNDESCENT_OVERQUERY`)."""

SEARCHES = Kept(64 * 2**20)
"""The exact neighbour searches a process keeps (:func:`nearest_neighbours`), up to 64 MB, the least recently
used dropped first. A tuned run fits every setting of every graph method, and a label method's two folds, on
the same samples: the same search, again and again. A search is an (n x k) index array, 8 n k bytes (120 kB for
Caltech-101's ten classes, 1.2 MB at 30,000 samples and k = 5)."""


WEIGHT = one_of(WEIGHTS)
"""The rule of a graph's ``weight`` parameter."""
ALGORITHM = one_of(ALGORITHMS)
"""The rule of a neighbour search's ``algorithm`` (an estimator's ``knn_algorithm``)."""
HEAT_WIDTH = Rule(lambda t: t is None or POSITIVE.test(t), "None or a finite number > 0")
"""The rule of the heat kernel's width ``t`` (None: Cai's default)."""
NEIGHBOURS = Rule(lambda v: POSITIVE_INT.test(v) or (POSITIVE.test(v) and not float(v).is_integer() and v < 1),
                  "a positive integer, or a share of the samples in (0, 1)")
"""The rule of a graph's ``n_neighbors``: a count, or a share of the samples (:func:`neighbour_count`)."""


def neighbour_count(n_neighbors, n_samples: int) -> int:
    """The neighbours per sample that ``n_neighbors`` asks for among ``n_samples`` samples.

    An integer is the count itself. A number in (0, 1) is a share of the samples, rounded to the nearest
    count and at least 1: the FNMF paper says a graph method's neighbours are "usually 1 - 2 % of the whole
    data points" (Babaee et al. 2014, l.175), which ``n_neighbors=0.015`` reads.
    """
    if isinstance(n_neighbors, (float, np.floating)) and 0 < n_neighbors < 1:
        return max(1, int(round(float(n_neighbors) * n_samples)))
    return POSITIVE_INT.check("n_neighbors", n_neighbors)


def check_weight(weight) -> str:
    """Return ``weight`` if it is one of :data:`WEIGHTS`, else raise :class:`~src.errors.ConfigError`."""
    WEIGHT.check("weight", weight)
    return weight


def check_t(t) -> float | None:
    """Return the heat-kernel width ``t`` (None or a finite number > 0), else raise :class:`~src.errors.ConfigError`."""
    HEAT_WIDTH.check("t", t)
    return None if t is None else float(t)


def check_algorithm(algorithm, name: str = "algorithm") -> str:
    """Return ``algorithm`` if it is one of :data:`ALGORITHMS`, else raise :class:`~src.errors.ConfigError` naming
    ``name``."""
    ALGORITHM.check(name, algorithm)
    return algorithm


def resolve_algorithm(algorithm: str, n_samples: int) -> str:
    """The search that ``algorithm`` means for ``n_samples`` samples: "exact" or "nndescent"."""
    algorithm = check_algorithm(algorithm)
    if algorithm == "auto":
        return "exact" if n_samples <= EXACT_MAX_SAMPLES else "nndescent"
    return algorithm


def _nndescent_query(k: int) -> int:
    """Neighbours searched by NN-descent for k: the over-query."""
    return max(NNDESCENT_OVERQUERY * k, NNDESCENT_MIN_QUERY)


def _nndescent_neighbours(Y: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k approximate nearest other samples of every row of Y by NN-descent (see the module docstring).

    Needs n > :func:`_nndescent_query` (k); every row of the search is complete, so the k nearest of the
    wider search are k distinct samples other than the row's own.
    """
    from . import nndescent  # imported here: importing numba takes about half a second

    return nndescent.approximate_neighbours(Y, _nndescent_query(k), rng)[:, :k]


def nearest_neighbours(X_rows, n_neighbors: int, algorithm: str = "auto", random_state=None) -> np.ndarray:
    """Indices of the ``n_neighbors`` nearest other samples of every sample (Euclidean), nearest first.

    An exact search is kept (:data:`SEARCHES`) and the same search on the same samples returns a copy of
    it: the result of a fresh search, bit for bit, since the key holds everything it depends on
    (:func:`~src.methods.core.kept.samples_key` and k). The approximate search is never kept (its result
    depends on its seed).

    Parameters
    ----------
    X_rows : ndarray of shape (n_samples, n_features)
        One sample per row; n_neighbors <= n_samples - 1.
    n_neighbors : int
        k, not counting the sample itself.
    algorithm : {"auto", "exact", "nndescent"}, default="auto"
        The search, see the module docstring.
    random_state : int, numpy.random.Generator or None, default=None
        Seed of the NN-descent search (a Generator is drawn from); not used by the exact search. None
        gives a different approximate graph in each call.

    Returns
    -------
    ndarray of int, shape (n_samples, n_neighbors)
        Row i never holds i.
    """
    X_rows = np.asarray(X_rows)
    n = X_rows.shape[0]
    k = n_neighbors
    if resolve_algorithm(algorithm, n) == "nndescent" and n > _nndescent_query(k):
        return _nndescent_neighbours(X_rows, k, np.random.default_rng(random_state))
    return SEARCHES.get((samples_key(X_rows), k),  # no self in the result
                        lambda: NearestNeighbors(n_neighbors=k).fit(X_rows).kneighbors(return_distance=False))


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


def default_t(X_rows: np.ndarray, random_state=None) -> float:
    """Cai's default heat-kernel width in this module's form exp(-d^2 / t): t = 2 s^2, s the mean distance.

    s is exact up to :data:`EXACT_MAX_SAMPLES` samples; above, it is the mean over the pairs of
    :data:`HEAT_SUBSET` samples drawn without replacement with ``random_state`` (int, Generator or None).
    """
    n = X_rows.shape[0]
    if n > EXACT_MAX_SAMPLES:
        subset = np.random.default_rng(random_state).choice(n, size=min(HEAT_SUBSET, n), replace=False)
        X_rows = X_rows[np.sort(subset)]
    s = mean_pairwise_distance(X_rows)
    return 2.0 * s * s if s > 0 else 1.0


def knn_graph(X_rows, n_neighbors=5, weight="binary", t=None, algorithm="auto", random_state=None) -> sp.csr_matrix:
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
        Euclidean distance; estimated on a random subset above :data:`EXACT_MAX_SAMPLES` samples). Ignored
        by the other weightings.
    algorithm : {"auto", "exact", "nndescent"}, default="auto"
        Neighbour search (:func:`nearest_neighbours`): exact up to :data:`EXACT_MAX_SAMPLES` samples with
        "auto", approximate above.
    random_state : int, numpy.random.Generator or None, default=None
        Seed of the approximate search and of the heat kernel's subset; the exact paths draw nothing.

    Returns
    -------
    W : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        Symmetric (W = max(W, W^T)), zero diagonal, nonnegative weights.
    """
    k = POSITIVE_INT.check("n_neighbors", n_neighbors)
    weight = check_weight(weight)
    t = check_t(t)
    check_algorithm(algorithm)
    X_rows = np.asarray(X_rows, dtype=np.float64)
    n = X_rows.shape[0]
    if k > n - 1:
        logger.warning("n_neighbors=%d is more than n_samples - 1 = %d; using %d", k, n - 1, n - 1)
        k = n - 1
    if k == 0:
        return sp.csr_matrix((n, n), dtype=np.float64)

    rng = np.random.default_rng(random_state)  # drawn from only by NN-descent and the heat subset
    neighbours = nearest_neighbours(X_rows, k, algorithm, rng)  # (n, k), no self; Euclidean in every mode
    Y = normalize(X_rows) if weight == "cosine" else X_rows  # cosine weights: inner products of unit rows

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
            t = default_t(X_rows, rng)
        np.exp(-values / t, out=values)
    np.maximum(values, 0.0, out=values)  # cosine of nonnegative data is >= 0; rounding must not make it < 0

    rows = np.repeat(np.arange(n), k)
    W = sp.csr_matrix((values.ravel(), (rows, neighbours.ravel())), shape=(n, n))
    W = W.maximum(W.T).tocsr()  # nearest_neighbours never returns a sample as its own neighbour
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

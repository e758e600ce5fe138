"""Neighbourhood preserving NMF (NPNMF), Gu and Zhou 2009: the FNMF paper's third baseline.

Each sample is reconstructed from its ``n_neighbors`` nearest neighbours with the locally linear
embedding (LLE) weights M (n x n, sparse, row i holds the weights of x_i's neighbours, each row sums to
1), and the coefficients are asked to keep those reconstructions. X (m x n) >= 0, U (m x k), V (n x k):

    O = ||X - U V^T||_F^2 + mu Tr(V^T (I - M)^T (I - M) V) = ||X - U V^T||_F^2 + mu ||(I - M) V||_F^2

With L = (I - M)^T (I - M) = L^+ - L^-, L^+ = max(L, 0) and L^- = max(-L, 0) taken elementwise (both
sparse, nonnegative, symmetric), the multiplicative updates are (V first, then U, as in :mod:`.nmf`)::

    V <- V * (X^T U + mu L^- V) / (V U^T U + mu L^+ V)
    U <- U * (X V) / (U V^T V)

With mu = 0 they are Lee and Seung's NMF rules exactly.

Sources and choices. The NPNMF paper is not among the project's texts; the objective and the update
above are the regularizer the FNMF paper describes ("each data point ... presented by its neighbors",
its ref. [8]) written with the positive/negative split of L, the standard construction of that family
(recalled from memory of Gu and Zhou's paper, not checked against it). Choices where we could not check
the paper:

* the weights M are Roweis and Saul's LLE weights: for each sample, minimize ||x_i - sum_j M_ij x_j||^2
  over its k nearest neighbours (Euclidean, the sample itself excluded) subject to sum_j M_ij = 1. The
  local Gram matrix C_i = Z_i Z_i^T (Z_i: the neighbours minus x_i) is regularized as
  C_i + reg * tr(C_i) I (reg * I when tr(C_i) = 0, e.g. a sample whose neighbours are all duplicates of
  it), the usual LLE regularization (reg = 1e-3, scikit-learn's default), needed whenever
  n_neighbors > m or neighbours coincide. The weights may be negative; L is split as above.
* defaults: ``n_neighbors=5`` (the neighbourhood size of GNMF's experiments, which the FNMF paper puts
  side by side with NPNMF) and ``mu=100`` (GNMF's alpha); the FNMF paper gives neither value.
* ``normalize_init``: as :class:`~.gnmf.GNMF` (Deng Cai's NormalizeUV after the initialization), so that
  NPNMF can be started exactly like GNMF in a comparison; default False (mu = 0 is then NMF from the same
  init).

Convergence. The update is the usual "positive part in the denominator" rule. Its per-entry auxiliary
function argument (as in Cai et al.'s GNMF proof) goes through, because (L^+ V)_ab / V_ab >= L^+_aa =
L_aa; like GNMF's, that argument covers one entry at a time, not the simultaneous update of all entries,
which is not guaranteed in general because L^- is not positive semidefinite. The tests check that O
never increases over 200 iterations on random data, including large mu.

Cost: building M takes O(n k (m + k^2)) after the neighbour search (that of :mod:`.graph.knn`: exact
up to 30,000 samples, NN-descent above, ``knn_algorithm``), in blocks of samples; L has at most
n (k + 1)^2 stored entries; one iteration is O(mnk + n k^2 k_c) per start with k_c the rank, the
products those of :mod:`.gnmf` (all starts of a fit together, one pass over X for the V update). No n x n
dense array.

References
----------
Q. Gu and J. Zhou, "Neighborhood preserving nonnegative matrix factorization", Proc. BMVC 2009, pp. 1-10.

S. T. Roweis and L. K. Saul, "Nonlinear dimensionality reduction by locally linear embedding", Science
290(5500):2323-2326, 2000 (the weights M).
"""

import logging

import numpy as np
import scipy.sparse as sp

from .core import frobenius
from .core.estimator import Factorization, NormalizedInitMixin, fit_stops_short
from .core.products import dot, inner
from ..checks import BOOLEAN, NONNEGATIVE, POSITIVE, POSITIVE_INT
from .gnmf import GRAPH_OF_THE_BATCH, regularized_v_update
from .graph.knn import ALGORITHM, NEIGHBOURS, check_algorithm, nearest_neighbours, neighbour_count

logger = logging.getLogger(__name__)

BLOCK_MB = 16
"""Working memory (MB) of one block of neighbour differences when computing the LLE weights."""


def check_reg(reg) -> float:
    """Return the LLE regularization ``reg`` (a finite number > 0), else raise :class:`~src.errors.ConfigError`."""
    POSITIVE.check("reg", reg)
    return float(reg)


def lle_weights(X_rows, n_neighbors=5, reg=1e-3, algorithm="auto", random_state=None) -> sp.csr_matrix:
    """Locally linear reconstruction weights of each sample from its nearest neighbours.

    Row i solves min ||x_i - sum_j M_ij x_j||^2 over the ``n_neighbors`` nearest other samples j,
    subject to sum_j M_ij = 1, with the local Gram matrix regularized by ``reg * trace`` (see the
    module docstring).

    Parameters
    ----------
    X_rows : array-like of shape (n_samples, n_features)
        One sample per row.
    n_neighbors : int, default=5
        Neighbours per sample, the sample itself excluded; clipped to n_samples - 1 (with a warning).
    reg : float, default=1e-3
        Relative regularization of the local Gram matrices.
    algorithm : {"auto", "exact", "nndescent"}, default="auto"
        Neighbour search, :func:`.graph.knn.nearest_neighbours` (exact up to 30,000 samples with "auto").
    random_state : int, numpy.random.Generator or None, default=None
        Seed of the approximate search.

    Returns
    -------
    M : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        Zero diagonal, ``n_neighbors`` stored entries per row (fewer only where a weight is exactly 0),
        each row summing to 1. Not symmetric. With a single sample, the empty matrix.
    """
    k = POSITIVE_INT.check("n_neighbors", n_neighbors)
    reg = check_reg(reg)
    check_algorithm(algorithm)
    X_rows = np.asarray(X_rows, dtype=np.float64)
    n, m = X_rows.shape
    if k > n - 1:
        logger.warning("n_neighbors=%d is more than n_samples - 1 = %d; using %d", k, n - 1, n - 1)
        k = n - 1
    if k == 0:
        return sp.csr_matrix((n, n), dtype=np.float64)
    neighbours = nearest_neighbours(X_rows, k, algorithm, random_state)  # (n, k), no self

    weights = np.empty((n, k))
    block = max(1, int(BLOCK_MB * 2**20 // (8 * k * max(m, k))))
    for start in range(0, n, block):  # blocks of samples, each solved as a batch
        rows = slice(start, min(start + block, n))
        Z = X_rows[neighbours[rows]] - X_rows[rows, None, :]  # (b, k, m) neighbours minus the sample
        C = Z @ Z.transpose(0, 2, 1)  # (b, k, k) local Gram matrices
        trace = np.trace(C, axis1=1, axis2=2)
        ridge = np.where(trace > 0, reg * trace, reg)
        C += ridge[:, None, None] * np.eye(k)
        w = np.linalg.solve(C, np.ones((C.shape[0], k, 1)))[:, :, 0]
        weights[rows] = w / w.sum(axis=1, keepdims=True)

    M = sp.csr_matrix((weights.ravel(), (np.repeat(np.arange(n), k), neighbours.ravel())), shape=(n, n))
    M.eliminate_zeros()
    M.sort_indices()
    return M


def split_regularizer(M) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """Positive and negative parts of L = (I - M)^T (I - M): L = L^+ - L^-, both elementwise >= 0.

    Parameters
    ----------
    M : scipy.sparse matrix of shape (n, n)

    Returns
    -------
    L_plus, L_minus : scipy.sparse.csr_matrix of shape (n, n)
        Symmetric, nonnegative, with disjoint supports.
    """
    n = M.shape[0]
    R = (sp.identity(n, format="csr") - sp.csr_matrix(M)).tocsr()
    L = (R.T @ R).tocsr()
    L = ((L + L.T) * 0.5).tocsr()  # exactly symmetric despite rounding in the product
    L_plus = L.maximum(0.0).tocsr()
    L_minus = (-L).maximum(0.0).tocsr()
    L_plus.eliminate_zeros()
    L_minus.eliminate_zeros()
    return L_plus, L_minus


def npnmf_rules(X: np.ndarray, M, mu: float):
    """Return ``(update, objective)`` of NPNMF on X (m x n) with LLE weights M (n x n), over stacks of starts.

    The V update reads X once (:func:`.gnmf.regularized_v_update`); the U update and the objective use
    the X V of that pass.

    Parameters
    ----------
    X : ndarray of shape (m, n)
        Nonnegative data, one sample per column.
    M : scipy.sparse matrix of shape (n, n)
        Reconstruction weights (see :func:`lle_weights`).
    mu : float
        Weight of the neighbourhood preserving term mu ||(I - M) V||_F^2.
    """
    M = sp.csr_matrix(M)
    L_plus, L_minus = (part.astype(X.dtype) for part in split_regularizer(M))
    M = M.astype(X.dtype)
    data = frobenius.DataTerm(X)  # X by blocks, ||X||^2, and the products the update and the objective share

    def v_pass(U, V, UtU):  # V update (NPNMF rule for V, L = L^+ - L^-), in one pass over X; returns X V
        numerator = dot(L_minus, V)  # the terms with the current V
        numerator *= mu
        denominator = dot(L_plus, V)
        denominator *= mu
        return regularized_v_update(data.blocks, U, V, numerator, denominator, UtU)

    def update(factors):
        data.update(factors["U"], factors["V"], v_pass)  # then U (NPNMF rule for U = Lee and Seung's)

    def objective(factors):
        U, V = factors["U"], factors["V"]
        residual = V - dot(M, V)  # (I - M) V: Tr(V^T L V) = ||(I - M) V||^2 without cancellation
        return data.objective(U, V) + mu * inner(residual, residual)

    return update, objective


class NPNMF(NormalizedInitMixin, Factorization):
    """Neighbourhood preserving NMF: ||X - U V^T||^2 + mu ||(I - M) V||^2, M the LLE weights.

    Parameters
    ----------
    n_components, max_iter, tol, init, random_state, n_starts, min_iter, stopping, dtype
        As in :class:`~src.methods.core.estimator.Factorization`.
    mu : float, default=100.0
        Weight of the neighbourhood preserving term (not given by the FNMF paper; GNMF's alpha).
    n_neighbors : int or float, default=5
        Neighbours from which each sample is reconstructed.
        A number in (0, 1) is a share of the samples (:func:`.graph.knn.neighbour_count`).
    reg : float, default=1e-3
        LLE regularization of the local Gram matrices (relative to their trace).
    normalize_init : bool, default=True
        Scale the initial U's columns to unit L2 norm and V's columns by the same norms (Cai's
        NormalizeUV), as :class:`~.gnmf.GNMF` does with the same option; a zero column is left alone.
    knn_algorithm : {"auto", "exact", "nndescent"}, default="auto"
        Neighbour search (see :mod:`.graph.knn`): exact up to 30,000 samples with "auto", approximate
        (NN-descent, seeded from ``random_state``) above.

    Attributes
    ----------
    factors_ : dict of str to ndarray
        ``U`` (m x k) and ``V`` (n x k).
    weights_ : scipy.sparse matrix of shape (n, n)
        The sparse LLE weights M.

    References
    ----------
    Q. Gu and J. Zhou, "Neighborhood preserving nonnegative matrix factorization", Proc. BMVC 2009.
    """

    batched = True
    _parameter_constraints = {
        **Factorization._parameter_constraints,
        "mu": NONNEGATIVE,
        "n_neighbors": NEIGHBOURS,
        "reg": POSITIVE,
        "normalize_init": BOOLEAN,
        "knn_algorithm": ALGORITHM,
    }
    _expected_failed_checks = {"check_methods_subset_invariance": GRAPH_OF_THE_BATCH,
                               **fit_stops_short("NPNMF's V rule with U fixed, on the LLE weights recomputed among "
                                                 "them: the training weights")}

    def __init__(
        self,
        n_components=2,
        *,
        max_iter=10_000,
        tol=1e-5,
        init="random",
        random_state=None,
        mu=100.0,
        n_neighbors=5,
        reg=1e-3,
        normalize_init=True,
        knn_algorithm="auto",
        n_starts=10,
        min_iter=30,
        stopping="reference",
        dtype="float64",
    ):
        super().__init__(
            n_components=n_components, max_iter=max_iter, tol=tol, init=init, random_state=random_state,
            n_starts=n_starts, min_iter=min_iter, stopping=stopping, dtype=dtype
        )
        self.mu = mu
        self.n_neighbors = n_neighbors
        self.reg = reg
        self.normalize_init = normalize_init
        self.knn_algorithm = knn_algorithm

    def _rules(self, X, y):
        self.weights_ = lle_weights(X.T, n_neighbors=neighbour_count(self.n_neighbors, X.shape[1]), reg=self.reg, algorithm=self.knn_algorithm,
                                    random_state=self.random_state)
        return npnmf_rules(X, self.weights_, float(self.mu))

"""Semi-supervised discriminant analysis (SDA), Cai, He and Han.

SDA finds projections a (m-vectors) maximizing

    a^T S_b a / (a^T (S_t + alpha X L X^T + beta I) a),

where S_b and S_t are the between-class and total scatter of the labelled samples, L = D - W is the
Laplacian of the k-nearest-neighbour graph W over all samples (labelled and unlabelled), alpha weighs the
graph (smoothness) term J(a) = a^T X L X^T a = 1/2 sum_ij W_ij (a^T x_i - a^T x_j)^2, and beta I is the
Tikhonov regularizer. The maximizers are the top generalized eigenvectors of

    S_b a = lambda (S_t + alpha X L X^T + beta I) a.

Written as in the paper, with the data centred (X here is the centred m x n matrix, l the labelled
samples, n_c the labelled samples of class c, mu_c their mean): S_b = sum_c n_c mu_c mu_c^T = X W_l X^T and
S_t = X_l X_l^T = X I~ X^T, with I~ = diag(1 on labelled samples, 0 elsewhere). So the denominator matrix is
X (I~ + alpha L) X^T + beta I.

Choices where the paper is silent, following Deng Cai's ``SDA.m`` (his reference implementation):

* centring: the data are centred by the mean of ALL n samples (labelled and unlabelled) before S_b, S_t and
  J are formed. S_b then has rank up to c (not c - 1) when unlabelled samples exist: the labelled class
  means need not average to the overall mean. With every sample labelled it is the usual LDA scatter;
* defaults alpha = 0.1 (Cai's ``ReguBeta``, the graph weight; the brief's default) and beta = 0.1 (Cai's
  ``ReguAlpha``, the Tikhonov ridge, added as beta I). beta is absolute, so its effect depends on the
  scale of the data;
* graph: ``n_neighbors`` = 5 nearest neighbours, 0/1 weights, symmetrized by max (Cai's ``constructW``
  'KNN' graph with binary weights, :func:`.graph.knn.knn_graph`); found exactly up to 30,000 samples
  and by the seeded NN-descent search above (``knn_algorithm``, ``random_state``);
* number of directions: at most rank(S_b) <= c directions have a nonzero eigenvalue (c - 1 when every
  sample is labelled); Cai keeps c. Here the directions with eigenvalue > 1e-10 times the largest are
  kept, at most the numerical rank of S_b (0 when all samples coincide) and at most ``n_components``; the
  embedding is padded with zero columns up to ``n_components`` (the protocol asks for rank k or k + 1).
  Zero columns change neither Euclidean nor cosine KMeans, so padding equals capping for clustering, and
  the shape stays what the protocol expects;
* each direction is scaled to unit L2 norm (Cai), with its sign fixed so that its largest-magnitude entry is
  positive (determinism only);
* embedding: the UNcentred samples projected on the directions, y_i = A^T x_i (Cai's ``Y = fea*eigvector``).
  Centring would only shift all points by one vector: no change for Euclidean KMeans, a change for cosine
  KMeans;
* solver: ``scipy.linalg.eigh`` on the m x m matrices when m <= n. When m > n the problem is solved in the
  span of the centred samples (every direction with a nonzero eigenvalue lies there when beta > 0): with
  P (m x r) an orthonormal basis of that span (thin SVD of the centred data), a = P z and
  P^T S_b P z = lambda (P^T X (I~ + alpha L) X^T P + beta I) z, an r x r problem (r <= n - 1). The two
  give the same directions (tested). With beta = 0 the denominator can be singular; that raises a
  ConfigError asking for beta > 0.

References
----------
D. Cai, X. He and J. Han, "Semi-supervised discriminant analysis", Proc. IEEE ICCV 2007 (cited as [25] in
CCF); Deng Cai's ``SDA.m``.
"""

import logging

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ..errors import ConfigError
from .core.estimator import LabelConstrainedMixin
from .core.kept import Kept, samples_key
from ..checks import NONNEGATIVE, POSITIVE_INT
from .core.validation import CHECKED_BY_FIT, UNLABELLED, ParameterRulesMixin, SampleInputMixin
from .graph.knn import ALGORITHM, knn_graph, laplacian, resolve_algorithm

logger = logging.getLogger(__name__)

RELATIVE_EIGENVALUE_FLOOR = 1e-10
"""Directions whose eigenvalue is at most this times the largest one carry no discriminant information."""

SAMPLE_TERMS = Kept(128 * 2**20)
"""The parts of a fit that depend on the samples alone, kept per process (up to 128 MB, the least recently used
dropped first) and served again to the next fit on the same samples: the basis of their span (a thin SVD, when
m > n) and the graph term Y^T L Y (with the exact kNN graph). A tuned run fits SDA's seven settings, each with two
folds, on one trial's samples; the same arrays, bit for bit (:mod:`src.methods.core.kept`)."""


def _between_class(X_rows: np.ndarray, Xc: np.ndarray, y: np.ndarray, labelled: np.ndarray) -> tuple[np.ndarray, int]:
    """H_b (c x m), whose row c is sqrt(n_c) mu_c (the centred mean of labelled class c), so that
    S_b = H_b^T H_b, and the numerical rank of S_b."""
    n, m = X_rows.shape
    classes, codes = np.unique(y[labelled], return_inverse=True)
    sizes = np.bincount(codes, minlength=classes.size).astype(np.float64)
    means = np.zeros((classes.size, m))
    np.add.at(means, codes, Xc[labelled])
    Hb = means / np.sqrt(sizes)[:, None]
    # numerical rank of S_b = H_b^T H_b: the centring leaves rounding noise of about eps * max|x| per entry
    noise = np.sqrt(float(Hb.size) * n) * np.finfo(float).eps * max(float(np.abs(X_rows).max()), 1e-300)
    return Hb, int(np.sum(np.linalg.svd(Hb, compute_uv=False) > 10.0 * noise))


def sda_directions(X_rows: np.ndarray, y: np.ndarray, alpha: float, beta: float, n_neighbors: int,
                   n_directions: int, solve_in_sample_space: bool | None = None, knn_algorithm: str = "auto",
                   random_state=None):
    """Top generalized eigenvectors of S_b a = lambda (S_t + alpha X L X^T + beta I) a.

    Parameters
    ----------
    X_rows : ndarray of shape (n, m)
        Samples, one per row (not centred; centred here by the mean of all n).
    y : ndarray of shape (n,)
        Class labels, -1 for unlabelled samples; at least one labelled sample.
    alpha, beta : float
        Graph weight and Tikhonov ridge.
    n_neighbors : int
        Neighbours of the 0/1 kNN graph (used only when alpha > 0).
    n_directions : int
        Largest number of directions returned.
    solve_in_sample_space : bool or None
        Solve in the span of the centred samples (r x r) instead of m x m; None chooses it when m > n.
    knn_algorithm : {"auto", "exact", "nndescent"}, default="auto"
        Neighbour search of the graph (:func:`.graph.knn.knn_graph`).
    random_state : int, numpy.random.Generator or None, default=None
        Seed of the approximate neighbour search.

    Returns
    -------
    directions : ndarray of shape (m, d)
        Unit-norm directions, d <= n_directions, sorted by decreasing eigenvalue.
    eigenvalues : ndarray of shape (d,)
    """
    n, m = X_rows.shape
    Xc = X_rows - X_rows.mean(axis=0)  # centred by the mean of all samples (Cai's SDA.m)
    labelled = np.flatnonzero(y != UNLABELLED)
    Hb, rank_b = _between_class(X_rows, Xc, y, labelled)

    if solve_in_sample_space is None:
        solve_in_sample_space = m > n
    samples = samples_key(X_rows)
    if solve_in_sample_space:
        P, Y = SAMPLE_TERMS.get(("basis", samples), lambda: _sample_basis(Xc))
        if P.shape[1] == 0:
            return np.zeros((m, 0)), np.zeros(0)
        Hb_proj = Hb @ P
    else:
        P, Y, Hb_proj = None, Xc, Hb

    # denominator: Y^T (I~ + alpha L) Y + beta I  (S_t + alpha J + Tikhonov)
    Yl = Y[labelled]
    denominator = Yl.T @ Yl
    if alpha > 0:
        def graph_term():  # J = Y^T L Y
            L = laplacian(knn_graph(X_rows, n_neighbors, "binary", algorithm=knn_algorithm, random_state=random_state))
            return Y.T @ (L @ Y)

        exact = resolve_algorithm(knn_algorithm, n) == "exact"  # an approximate graph depends on its seed: not kept
        J = SAMPLE_TERMS.get(("graph", samples, solve_in_sample_space, n_neighbors), graph_term) if exact \
            else graph_term()
        denominator += alpha * J
    denominator[np.diag_indices_from(denominator)] += beta
    denominator = 0.5 * (denominator + denominator.T)
    numerator = Hb_proj.T @ Hb_proj  # S_b

    try:
        eigenvalues, vectors = scipy.linalg.eigh(numerator, denominator)
    except np.linalg.LinAlgError:
        raise ConfigError(f"beta={beta!r}: S_t + alpha X L X^T + beta I is singular for these data; "
                          "use beta > 0") from None
    order = np.argsort(-eigenvalues, kind="stable")
    eigenvalues, vectors = eigenvalues[order], vectors[:, order]
    top = eigenvalues[0] if eigenvalues.size else 0.0
    keep = eigenvalues > RELATIVE_EIGENVALUE_FLOOR * top if top > 0 else np.zeros(eigenvalues.size, bool)
    d = min(int(keep.sum()), rank_b, n_directions)
    eigenvalues, vectors = eigenvalues[:d], vectors[:, :d]
    directions = P @ vectors if P is not None else vectors
    directions /= np.linalg.norm(directions, axis=0)
    flip = directions[np.abs(directions).argmax(axis=0), np.arange(d)] < 0
    directions[:, flip] *= -1.0
    return directions, eigenvalues


def _sample_basis(Xc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """P (m x r), an orthonormal basis of the span of the centred samples Xc (n x m), and Y = Xc P (n x r), from
    a thin SVD; r is the numerical rank (0: P and Y have no columns)."""
    n, m = Xc.shape
    U, s, Vt = np.linalg.svd(Xc, full_matrices=False)  # Xc = U diag(s) Vt, rows of Vt span the samples
    r = int(np.sum(s > s[0] * max(n, m) * np.finfo(float).eps)) if s.size and s[0] > 0 else 0
    return Vt[:r].T, U[:, :r] * s[:r]


class SDA(LabelConstrainedMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, SampleInputMixin,
          ParameterRulesMixin, BaseEstimator):
    """Semi-supervised discriminant analysis: a linear embedding from labelled and unlabelled samples.

    ``transform(X_new)`` projects new samples on the directions, ``X_new @ components_.T`` (as ``embedding_``).

    Parameters
    ----------
    n_components : int, default=2
        Width of the embedding; columns beyond the number of discriminant directions are zero.
    alpha : float, default=0.1
        Weight of the graph term a^T X L X^T a (the paper's alpha; Cai's ``ReguBeta``).
    beta : float, default=0.1
        Tikhonov ridge beta I in the denominator (Cai's ``ReguAlpha``).
    n_neighbors : int, default=5
        Neighbours per sample in the 0/1 kNN graph.
    knn_algorithm : {"auto", "exact", "nndescent"}, default="auto"
        Neighbour search of the graph (see :mod:`.graph.knn`): exact up to 30,000 samples with "auto",
        approximate (NN-descent) above.
    random_state : int, numpy.random.Generator or None, default=None
        Seed of the approximate neighbour search (SDA itself draws nothing); None gives a different
        approximate graph in each fit. The protocol passes the trial's seed.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Unit-norm projection directions, one per row (zero rows for padding).
    eigenvalues_ : ndarray of shape (n_components,)
        Generalized eigenvalues of the directions (0 for padding).
    n_directions_ : int
        Number of nonzero directions.
    embedding_ : ndarray of shape (n_samples, n_components)
        ``X @ components_.T`` (uncentred samples).
    factors_ : dict
        Empty (not a factorization).

    Notes
    -----
    A closed form (a generalized eigenproblem): nothing is iterated, no ``n_iter_`` or ``objective_history_``.

    References
    ----------
    D. Cai, X. He and J. Han, "Semi-supervised discriminant analysis", Proc. IEEE ICCV 2007.
    """

    requires_labelled_samples = True  # the labelled samples define the discriminant directions
    nonnegative_data = False
    _parameter_constraints = {
        "n_components": POSITIVE_INT,
        "alpha": NONNEGATIVE,
        "beta": NONNEGATIVE,
        "n_neighbors": POSITIVE_INT,
        "knn_algorithm": ALGORITHM,
        "random_state": CHECKED_BY_FIT,
    }

    def __init__(self, n_components=2, *, alpha=0.1, beta=0.1, n_neighbors=5, knn_algorithm="auto",
                 random_state=None):
        self.n_components = n_components
        self.alpha = alpha
        self.beta = beta
        self.n_neighbors = n_neighbors
        self.knn_algorithm = knn_algorithm
        self.random_state = random_state

    def fit(self, X, y=None):
        """Learn the directions from X (n_samples, n_features) and partial labels y (-1 = unlabelled)."""
        self.check_params()
        X = self._validate_X(X, reset=True)
        y = self._validate_y(y, X.shape[0])
        directions, eigenvalues = sda_directions(X, y, float(self.alpha), float(self.beta),
                                                 int(self.n_neighbors), int(self.n_components),
                                                 knn_algorithm=self.knn_algorithm, random_state=self.random_state)
        k = self.n_components
        d = directions.shape[1]
        if d < k:
            logger.debug("SDA: %d discriminant directions, embedding padded to %d columns", d, k)
        self.n_directions_ = d
        self.components_ = np.zeros((k, X.shape[1]))
        self.components_[:d] = directions.T
        self.eigenvalues_ = np.zeros(k)
        self.eigenvalues_[:d] = eigenvalues
        self.embedding_ = X @ self.components_.T
        self.factors_ = {}
        return self

    def fit_transform(self, X, y=None):
        """Fit and return the (n_samples, n_components) embedding."""
        return self.fit(X, y).embedding_

    def transform(self, X):
        """Project new samples X (n_samples, n_features) on the directions: (n_samples, n_components)."""
        check_is_fitted(self)
        return self._validate_X(X, reset=False) @ self.components_.T

    @property
    def _n_features_out(self) -> int:
        return self.components_.shape[0]

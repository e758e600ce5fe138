"""Graph regularized NMF (GNMF) and its semi-supervised variant (SemiGNMF), Cai et al.

Objective, X (m x n) >= 0, U (m x k), V (n x k), W the (n x n) sample graph, D its degree matrix,
L = D - W:

    O = ||X - U V^T||_F^2 + alpha Tr(V^T L V)

Multiplicative updates (V first, then U, as in Deng Cai's ``GNMF_Multi.m`` and in :mod:`.nmf`):

    V <- V * (X^T U + alpha W V) / (V U^T U + alpha D V)
    U <- U * (X V) / (U V^T V)

Cai et al. prove that O never increases under these rules. With alpha = 0 they are Lee and Seung's NMF
rules exactly.

The graph is built inside ``_rules`` from the samples (the columns of X): the ``n_neighbors``-nearest-
neighbour graph of :func:`.knn_graph.knn_graph`, symmetrized as max(W, W^T). The defaults are the GNMF
paper's: 5 neighbours, 0-1 ("binary") weights, alpha = 100. (Cai's ``constructW.m`` itself defaults to a
heat kernel; his GNMF demo and the paper's experiments use 0-1 weights. Both facts are recalled from
memory of Cai's code and paper, which are not available here.) SemiGNMF overwrites the labelled block of
the graph with :func:`.knn_graph.label_graph`: weight 1 between labelled samples of the same class, 0
between labelled samples of different classes.

Choices where the papers are silent: the update order (V then U, Cai's code); the graph weights 1/0 of
SemiGNMF (the papers only say "a large weight" and 0); alpha is used as given (Cai's optional
``alpha_nSmp`` rescaling by n is not applied). The representation is V with U's columns scaled to unit
L2 norm (Cai's final ``NormalizeUV``).

Initial scale. Cai's ``GNMF_Multi.m`` also normalizes right after the initialization: U's columns to
unit L2 norm, V's columns multiplied by the same norms (U V^T unchanged). NMF's multiplicative rules are
equivariant under this rescaling, GNMF's are not: the graph term alpha Tr(V^T L V) grows with the
scale of V, so the trajectory (and the clustering after a fixed number of iterations) depends on it.
``normalize_init=True`` applies Cai's normalization to the initial factors (random or given);
the default ``False`` keeps the initial factors as given, so that alpha = 0 is exactly
:class:`~src.methods.nmf.NMF` from the same ``init``. With ``True``, alpha = 0 is exactly NMF from the
normalized init (and, up to rounding, gives NMF's representation from the raw init).

References
----------
D. Cai, X. He, J. Han and T. S. Huang, "Graph regularized nonnegative matrix factorization for data
representation", IEEE TPAMI 33(8):1548-1560, 2011.
D. Cai, X. He, X. Wu and J. Han, "Non-negative matrix factorization on manifold", Proc. IEEE ICDM 2008,
pp. 63-72 (GNMF and the semi-supervised SemiGNMF).
"""

import numpy as np

from .loop import Handoff
from .multiplicative import EPS
from .base import (Factorization, NormalizedInitMixin, check_bool, check_nonnegative_float,
                   check_positive_int)
from .knn_graph import check_algorithm, check_t, check_weight, degree, knn_graph, label_graph
from .frobenius import objective as frobenius_objective
from .products import squared_norm, x_dot, xt_dot


def gnmf_rules(X: np.ndarray, W, alpha: float):
    """Return ``(update, objective)`` of GNMF on X (m x n) with the sparse (n x n) graph W.

    Parameters
    ----------
    X : ndarray of shape (m, n)
        Nonnegative data, one sample per column.
    W : scipy.sparse matrix of shape (n, n)
        Symmetric nonnegative graph of the samples.
    alpha : float
        Weight of the graph term alpha Tr(V^T L V).
    """
    W = W.tocsr()
    D = degree(W)[:, None]  # (n x 1): D V is a row scaling
    handoff = Handoff()
    X_norm2 = squared_norm(X)

    def update(factors):
        handoff.clear()
        U, V = factors["U"], factors["V"]
        numerator = xt_dot(X, U) + alpha * (W @ V)  # V update (Cai et al. 2011, GNMF rule for V), (n x k)
        denominator = V @ (U.T @ U) + alpha * (D * V)
        np.maximum(denominator, EPS, out=denominator)
        V *= numerator / denominator

        numerator = x_dot(X, V)  # U update (Cai et al. 2011, GNMF rule for U), (m x k)
        handoff.keep(numerator.copy(), U, V)
        denominator = U @ (V.T @ V)
        np.maximum(denominator, EPS, out=denominator)
        U *= numerator / denominator

    def objective(factors):
        U, V = factors["U"], factors["V"]
        smoothness = np.vdot(V, D * V) - np.vdot(V, W @ V)  # Tr(V^T L V) = Tr(V^T D V) - Tr(V^T W V)
        return frobenius_objective(X, U, V, handoff.take(U, V), X_norm2) + alpha * float(smoothness)

    return update, objective


class GNMF(NormalizedInitMixin, Factorization):
    """Graph regularized NMF: ||X - U V^T||^2 + alpha Tr(V^T L V), L from a kNN graph of the samples.

    Parameters
    ----------
    n_components, max_iter, tol, init, random_state
        As in :class:`~src.methods.base.Factorization`.
    alpha : float, default=100.0
        Graph regularization weight (Cai's default, used in the GNMF paper's experiments).
    n_neighbors : int, default=5
        Neighbours per sample in the graph (Cai's default p = 5).
    weight : {"binary", "heat", "cosine"}, default="binary"
        Edge weights of the graph; the GNMF paper's experiments use 0-1 ("binary") weights.
    t : float or None, default=None
        Heat kernel width in exp(-||x_i - x_j||^2 / t) for ``weight="heat"``; None is Cai's default
        (see :mod:`.knn_graph`).
    normalize_init : bool, default=True
        Scale the initial U's columns to unit L2 norm and V's columns by the same norms, as Cai's code
        does (see the module docstring); a zero column of U is left as it is.
    knn_algorithm : {"auto", "exact", "nndescent"}, default="auto"
        Neighbour search of the graph (see :mod:`.knn_graph`): exact up to 30,000 samples with "auto",
        approximate (NN-descent, seeded from ``random_state``) above.

    ``factors_`` holds ``U`` (m x k) and ``V`` (n x k); ``graph_`` the (n x n) sparse graph used.

    References
    ----------
    D. Cai, X. He, J. Han and T. S. Huang, "Graph regularized nonnegative matrix factorization for data
    representation", IEEE TPAMI 33(8), 2011.
    """

    def __init__(
        self,
        n_components=2,
        max_iter=10_000,
        tol=1e-5,
        init="random",
        random_state=None,
        alpha=100.0,
        n_neighbors=5,
        weight="binary",
        t=None,
        normalize_init=True,
        knn_algorithm="auto",
        n_starts=10,
        min_iter=30,
        stopping="reference",
    ):
        super().__init__(
            n_components=n_components, max_iter=max_iter, tol=tol, init=init, random_state=random_state,
            n_starts=n_starts, min_iter=min_iter, stopping=stopping
        )
        self.alpha = alpha
        self.n_neighbors = n_neighbors
        self.weight = weight
        self.t = t
        self.normalize_init = normalize_init
        self.knn_algorithm = knn_algorithm

    def check_params(self) -> None:
        super().check_params()
        check_nonnegative_float("alpha", self.alpha)
        check_positive_int("n_neighbors", self.n_neighbors)
        check_weight(self.weight)
        check_t(self.t)
        check_bool("normalize_init", self.normalize_init)
        check_algorithm(self.knn_algorithm, "knn_algorithm")


    def _graph(self, X: np.ndarray, y: np.ndarray):
        """(n x n) sparse graph of the samples, the columns of X (m x n)."""
        return knn_graph(X.T, n_neighbors=self.n_neighbors, weight=self.weight, t=self.t,
                         algorithm=self.knn_algorithm, random_state=self.random_state)

    def _rules(self, X, y):
        self.graph_ = self._graph(X, y)
        return gnmf_rules(X, self.graph_, float(self.alpha))


class SemiGNMF(GNMF):
    """Semi-supervised GNMF: GNMF whose graph has its labelled block overwritten by the labels.

    Same parameters as :class:`GNMF`; ``fit(X, y)`` uses y (-1 = unlabelled): for labelled samples
    i != j, W_ij = 1 if they share a class and 0 otherwise (see :func:`.knn_graph.label_graph`).
    Without labels it is GNMF.

    References
    ----------
    D. Cai, X. He, X. Wu and J. Han, "Non-negative matrix factorization on manifold", Proc. IEEE ICDM
    2008; D. Cai, X. He, J. Han and T. S. Huang, IEEE TPAMI 33(8), 2011.
    """

    needs_labels = True  # a run under a protocol without labels is refused (src.run)

    def _graph(self, X, y):
        return label_graph(super()._graph(X, y), y)

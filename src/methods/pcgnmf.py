"""NMF with pairwise constraints and graph Laplacian (PCGNMF), He et al., NPL 2015. INFERRED objective.

Only the abstract and the appendix (the convergence proof) of the paper survive in the project's text.
The objective is inferred from the appendix: its gradient (eq. 21), second derivative (eq. 22), auxiliary
function (eq. 23) and V update (eq. 29 = eq. 15). With X (m x n) >= 0, U (m x k), V (n x k):

    J = ||X - U V^T||_F^2 + alpha Tr(V^T L V) + beta/2 (Tr(V^T M V A) + Tr(V^T C V))      (inferred)

* L = D - W, W the symmetric kNN graph of all samples (:func:`.graph.knn.knn_graph`, Cai's
  conventions as in :class:`~.gnmf.GNMF`), D its degrees;
* M (n x n): M_ij = 1 for a must-link pair (i != j both labelled, same class), else 0;
* C (n x n): C_ij = 1 for a cannot-link pair (i, j both labelled, different classes), else 0;
* A = 1 1^T - I (k x k).

Tr(V^T M V A) = sum over must-link pairs of sum_{b != c} v_ib v_jc: it penalizes two samples of the same
class that load on different components. Tr(V^T C V) = sum over cannot-link pairs of v_i^T v_j: it
penalizes overlap between samples of different classes. dJ/dV = -2 X^T U + 2 V U^T U + 2 alpha (D - W) V
+ beta (M V A + C V) is the appendix's eq. 21, which fixes the factor beta/2.

Updates (V first, then U, as in :mod:`.gnmf`; the paper numbers V's rule (15) before U's (16))::

    V <- V * (X^T U + alpha W V) / (V U^T U + alpha D V + beta/2 (M V A + C V))     (eq. 15 / 29)
    U <- U * (X V) / (U V^T V)                                                      (eq. 16, NMF's)

The appendix (Theorem 1) proves that J is nonincreasing with the per-entry auxiliary function of Cai et
al.; the M V A and C V terms majorize exactly as V U^T U does (A, M, C >= 0 elementwise, a bound that
holds for the simultaneous update too), and the graph term is GNMF's, whose per-entry argument does not
by itself cover the simultaneous update of all entries (-W is not negative semidefinite). The tests
check that J never increases over 200 iterations, also with a large beta. With beta = 0, or without
any labelled pair, J and the rules are GNMF's exactly.

Choices where the text is silent or inconsistent:

* the definitions of M, C, A above are a consistent reading of the appendix (the definitions themselves
  are in the lost body of the paper). Self pairs are excluded from M (M_aa = 0: a sample is not a pair);
  the appendix cannot decide this, because the M_aa term of the second derivative carries A_bb = 0;
* eqs. 22 and 24 are consistent with J (F'' = 2 (U^T U)_bb + 2 alpha L_aa + beta C_aa, and the Taylor
  expansion uses F''/2); C_aa = 0 anyway;
* parameter values: the appendix gives none. Defaults: ``alpha=100``, ``n_neighbors=5``, 0-1 weights
  (GNMF's defaults, the paper cites GNMF for its graph term) and ``beta=100`` (our choice, same order as
  alpha); grid-search them as the protocol says;
* the graph is the plain kNN graph (the labels enter only through M and C, not through W);
* ``normalize_init`` as in :class:`~.gnmf.GNMF`.

Cost. M and C are never formed: with Y (n x c) the sparse one-hot matrix of the labelled samples and P
the diagonal indicator of labelled samples, M V = Y (Y^T V) - P V and C V = 1_l (1_l^T V) - Y (Y^T V)
(1_l: indicator vector of the labelled samples); M V A = (M V 1) 1^T - M V. All O(nk) per start; no l x l
array. The products with X and W are GNMF's (:mod:`.gnmf`): all starts together, one pass over X for the
V update.

References
----------
Y.-C. He, H.-T. Lu, L. Huang et al., "Non-negative matrix factorization with pairwise constraints and
graph Laplacian", Neural Processing Letters 42:167-185, 2015 (appendix, eqs. 21-29).
"""

import numpy as np
import scipy.sparse as sp

from .core import frobenius
from .core.estimator import LabelConstrainedMixin, labels_in_fit_only
from .core.loop import Handoff
from .core.products import column_sums, dot, inner
from ..checks import NONNEGATIVE
from .core.validation import UNLABELLED
from .gnmf import GNMF, graph_edges, graph_operator, graph_smoothness, regularized_v_update


class PairwiseConstraints:
    """Must-link M and cannot-link C matrices of partial labels, applied without forming them.

    The products take one (n x k) matrix or a stack of starts (s, n, k) alike.

    Parameters
    ----------
    y : array-like of shape (n,)
        Class labels, -1 for unlabelled samples.
    dtype : numpy dtype, default=float64
        Of the products (that of the factors they are applied to).

    Attributes
    ----------
    n_labelled : int
        Number of labelled samples l.
    n_must, n_cannot : int
        Number of must-link and cannot-link unordered pairs.
    """

    def __init__(self, y, dtype=np.float64):
        y = np.asarray(y)
        n = y.shape[0]
        labelled = np.flatnonzero(y != UNLABELLED)
        classes, codes = np.unique(y[labelled], return_inverse=True)
        self.Y = sp.csr_matrix((np.ones(labelled.size, dtype=dtype), (labelled, codes)), shape=(n, classes.size))
        self.Yt = self.Y.T.tocsr()
        self.is_labelled = np.zeros((n, 1), dtype=dtype)
        self.is_labelled[labelled] = 1.0
        self.n_labelled = int(labelled.size)
        sizes = np.bincount(codes, minlength=classes.size).astype(np.int64)
        self.n_must = int((sizes * (sizes - 1)).sum() // 2)
        self.n_cannot = int((self.n_labelled**2 - (sizes**2).sum()) // 2)

    def same_class(self, V: np.ndarray) -> np.ndarray:
        """Y Y^T V: sum of V over the labelled samples of each labelled sample's class, (n x k) per start."""
        return dot(self.Y, dot(self.Yt, V))

    def must(self, V: np.ndarray, same: np.ndarray | None = None) -> np.ndarray:
        """M V, (n x k) per start. ``same`` = :meth:`same_class` (V) may be passed when already computed."""
        if same is None:
            same = self.same_class(V)
        return same - self.is_labelled * V

    def cannot(self, V: np.ndarray, same: np.ndarray | None = None) -> np.ndarray:
        """C V, (n x k) per start. ``same`` = :meth:`same_class` (V) may be passed when already computed."""
        if same is None:
            same = self.same_class(V)
        return self.is_labelled * column_sums(self.is_labelled * V) - same

    def dense(self) -> tuple[np.ndarray, np.ndarray]:
        """M and C as dense (n x n) arrays, for inspection and tests on tiny n only."""
        S = (self.Y @ self.Yt).toarray()
        lab = self.is_labelled[:, 0]
        M = S - np.diag(lab)
        C = np.outer(lab, lab) - S
        return M, C


def times_offdiagonal_ones(B: np.ndarray) -> np.ndarray:
    """B A with A = 1 1^T - I (k x k): each entry replaced by the sum of the other entries of its row."""
    return B.sum(axis=-1, keepdims=True) - B


def pcgnmf_rules(X: np.ndarray, W, alpha: float, beta: float, y):
    """Return ``(update, objective)`` of PCGNMF on X (m x n), kNN graph W (n x n), labels y, over stacks of starts.

    As :func:`.gnmf.gnmf_rules` (the V update reads X once, the graph term of the objective is summed by
    edges); the pairwise terms M V and C V are O(nk) per start, and those the objective computes are
    handed to the next update, which starts from the same V.

    Parameters
    ----------
    X : ndarray of shape (m, n)
        Nonnegative data, one sample per column.
    W : scipy.sparse matrix of shape (n, n)
        Symmetric nonnegative graph of the samples.
    alpha : float
        Weight of the graph term alpha Tr(V^T L V).
    beta : float
        Weight of the pairwise term beta/2 (Tr(V^T M V A) + Tr(V^T C V)).
    y : array-like of shape (n,)
        Class labels, -1 for unlabelled samples (defines M and C).
    """
    W, D = graph_operator(W, X.dtype)
    edges = graph_edges(W)
    alpha_D = alpha * D
    pairs = PairwiseConstraints(y, X.dtype)
    data = frobenius.DataTerm(X)  # X by blocks, ||X||^2, and the products the update and the objective share
    to_update = Handoff()  # M V and C V of the objective, for the next update

    def pairwise_terms(V):
        same = pairs.same_class(V)
        return pairs.must(V, same), pairs.cannot(V, same)

    def v_pass(U, V, UtU):  # V update (eq. 15 = appendix eq. 29), in one pass over X; returns X V
        WV = dot(W, V)  # the graph and pairwise terms with the current V
        WV *= alpha
        kept = to_update.take(V)  # the objective's M V and C V when it was evaluated on this V
        MV, CV = pairwise_terms(V) if kept is None else kept
        denominator = times_offdiagonal_ones(MV)
        denominator += CV
        denominator *= 0.5 * beta
        denominator += alpha_D * V
        return regularized_v_update(data.blocks, U, V, WV, denominator, UtU)

    def update(factors):
        data.update(factors["U"], factors["V"], v_pass)  # then U (eq. 16, NMF's rule)

    def objective(factors):
        U, V = factors["U"], factors["V"]
        MV, CV = pairwise_terms(V)
        to_update.keep((MV, CV), V)  # the next update starts from this V
        pairwise = inner(MV, times_offdiagonal_ones(V)) + inner(V, CV)  # Tr(V^T M V A) + Tr(V^T C V)
        smoothness = graph_smoothness(edges, V)  # Tr(V^T L V), summed by edges
        return data.objective(U, V) + alpha * smoothness + 0.5 * beta * pairwise

    return update, objective


class PCGNMF(LabelConstrainedMixin, GNMF):
    """Pairwise constrained graph regularized NMF (objective inferred from the paper's appendix).

    J = ||X - U V^T||^2 + alpha Tr(V^T L V) + beta/2 (Tr(V^T M V A) + Tr(V^T C V)), M and C the
    must-link and cannot-link pairs of the labelled samples (see the module docstring). ``fit(X, y)``
    uses y (-1 = unlabelled); without labels, or with beta = 0, it is :class:`~.gnmf.GNMF`.

    Parameters
    ----------
    n_components, max_iter, tol, init, random_state, n_starts, min_iter, stopping, dtype
        As in :class:`~src.methods.core.estimator.Factorization`.
    alpha : float, default=100.0
        Graph regularization weight (GNMF's default; the paper's value is not known).
    beta : float, default=100.0
        Weight of the pairwise constraint term (our choice; the paper's value is not known).
    n_neighbors, weight, t, normalize_init, knn_algorithm
        The kNN graph and Cai's initial normalization, as in :class:`~.gnmf.GNMF`.

    Attributes
    ----------
    factors_ : dict of str to ndarray
        ``U`` (m x k) and ``V`` (n x k).
    graph_ : scipy.sparse matrix of shape (n, n)
        The sparse kNN graph.

    References
    ----------
    Y.-C. He, H.-T. Lu, L. Huang et al., "Non-negative matrix factorization with pairwise constraints
    and graph Laplacian", Neural Processing Letters 42:167-185, 2015.
    """

    _parameter_constraints = {**GNMF._parameter_constraints, "beta": NONNEGATIVE}
    _expected_failed_checks = {**GNMF._expected_failed_checks,
                               **labels_in_fit_only("must-link and cannot-link terms")}

    def __init__(
        self,
        n_components=2,
        *,
        max_iter=10_000,
        tol=1e-5,
        init="random",
        random_state=None,
        alpha=100.0,
        beta=100.0,
        n_neighbors=5,
        weight="binary",
        t=None,
        normalize_init=True,
        knn_algorithm="auto",
        n_starts=10,
        min_iter=30,
        stopping="reference",
        dtype="float64",
    ):
        super().__init__(
            n_components=n_components,
            max_iter=max_iter,
            tol=tol,
            init=init,
            random_state=random_state,
            alpha=alpha,
            n_neighbors=n_neighbors,
            weight=weight,
            t=t,
            normalize_init=normalize_init,
            knn_algorithm=knn_algorithm,
            n_starts=n_starts,
            min_iter=min_iter,
            stopping=stopping,
            dtype=dtype,
        )
        self.beta = beta

    def _rules(self, X, y):
        self.graph_ = self._graph(X, y)  # the plain kNN graph: labels act through M and C only
        return pcgnmf_rules(X, self.graph_, float(self.alpha), float(self.beta), y)

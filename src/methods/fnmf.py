"""Farness preserving NMF (FNMF), Babaee et al., ICIP 2014, with its farness weight made explicit.

The paper. W (n x n) is the 0-1 kNN graph of the samples, G = 1 1^T - I - W its complement (G_ij = 1:
i and j are far apart), D_G = diag(G 1) and L_G = D_G - G (the text writes "L = D - W" under eq. 5; it
means the Laplacian of G). X (m x n) >= 0, U (m x k), V (n x k). Eq. 6:

    C = ||X - U V^T||_F^2 + lambda exp(-beta Tr(V^T L_G V))

with updates (eqs. 13-14; L_G^+ = D_G and L_G^- = G are the positive and negative parts of L_G)::

    U <- U * (X V) / (U V^T V)                                                      (13)
    V <- V * (X^T U + beta e^{-beta T} D_G V) / (V U^T U + beta e^{-beta T} G V),   T = Tr(V^T L_G V)   (14)

lambda is dropped from (14) (the gradient in eq. 10 already lacks it), and the experiments use beta = 200.

Why the paper's form cannot be used as printed.

1. Underflow. T sums ||v_i - v_j||^2 over the ~n^2/2 far pairs. e^{-beta T} is exactly 0.0 in float64
   once beta T > 745.1, i.e. T > 3.73 for beta = 200, and beta e^{-beta T} is negligible long before.
   With Deng Cai's random init (entries of U, V in [0, 1)) T is about n^2 k / 12 (854 for an ORL subset
   of 5 faces, n = 50, k = 5; 7,583 for 10 faces). Measured on ORL subsets of 5, 10, 20 and 40 faces
   (unit-norm images, 5-NN 0-1 graph, 200 iterations of eqs. 13-14 as printed): with Cai's NormalizeUV
   applied to the init, T never falls below 51.7 (n = 50) to 1,401 (n = 400), the factor is 0.0 at every
   iteration and the result equals NMF bit for bit; without it, NMF shrinks V (U's random columns are
   long), T drops to 0.18-4.1, the factor reaches at most 2.2e-14 and adds at most 1.3e-15 (relative) to
   the numerator X^T U: the final V equals NMF's bit for bit for n >= 100 and to 3e-15 for n = 50. On
   0-255 images T exceeds 4.6e6. FNMF as printed is NMF. :func:`paper_factor` computes the factor;
   ``tests/methods/test_fnmf.py`` shows the underflow on ORL-like random data.
2. Degeneracy. The objective is not invariant under U -> U / s, V -> s V (which leaves U V^T alone):
   T grows as s^2, so exp(-beta T) -> 0 and inf C = inf ||X - U V^T||^2. The farness term can always be
   switched off by rescaling; any normalization of T by a scale chosen by us only moves the point where
   this happens. With a constant weight instead of the exponential (the linearization
   lambda e^{-beta T} ~ const - lambda beta e^{-beta T0} T) the objective ||X - U V^T||^2 - gamma T(V) is
   unbounded below along the same rescaling, and the iterates diverge for large gamma.

What is implemented. A constant farness weight on the scale-free representation. Let nu_k = ||u_k||^2
and V~ = V diag(||u_1||, ..., ||u_k||), the representation Deng Cai's NormalizeUV gives (and the one
KMeans clusters, ``embedding_``). The updates decrease

    F(U, V) = ||X - U V^T||_F^2 - gamma Tr(V~^T L_G V~),    gamma = farness / n,

    V <- V * (X^T U + gamma D_G V N) / (V U^T U + gamma G V N),    N = diag(nu)         [eq. 14]
    U <- U * (X V + gamma U diag(t)) / (U V^T V),   t_k = v_k^T L_G v_k >= 0            [eq. 13 + farness]

(V first, then U, as in :mod:`.nmf`.) Relation to the paper: when U's columns have unit norm (N = I)
the V update is eq. 14 with the factor beta e^{-beta T} replaced by the constant gamma; gamma is the
weight that the paper's exponential puts on the gradient of T (lambda beta e^{-beta T}, eq. 10), frozen
at a value that is not zero, since the paper's is always 0 in floating point. The U update gains the
term gamma U diag(t) because the farness term now depends on U's column norms (that is what makes F
invariant under the rescaling of point 2). The paper's beta = 200 has no counterpart: no scale of T is
given under which it would mean something; ``farness`` replaces the pair (lambda, beta).

Properties (all tested):

* F is invariant under U -> U S^-1, V -> V S (S diagonal > 0), and the updates are equivariant: the
  representation does not depend on how the initial factors split their scale (Cai's normalize_init is
  therefore not needed here). Scaling X by c scales the factors by sqrt(c) (from an init scaled
  likewise) and F by c^2: ``farness`` is dimensionless.
* Since Tr(V~^T L_G V~) <= lambda_max(L_G) ||V~||^2 <= n ||V~||^2 <= n ||U V^T||^2 (U, V >= 0), for
  0 <= farness < 1, F >= -farness / (1 - farness) ||X||^2: F is bounded below (the parameter is
  restricted to [0, 1)).
* Both updates are majorization-minimization steps of F for the simultaneous update of all entries (the
  quadratic terms with nonnegative coefficients, Tr(V U^T U V^T), gamma Tr(N V^T G V) and
  Tr(U V^T V U^T), bounded as in Lee and Seung, G >= 0 elementwise; the concave terms
  -gamma Tr(N V^T D_G V) and -gamma sum_k t_k ||u_k||^2 by their tangents), so F never increases.
* farness = 0 is Lee and Seung's NMF exactly, from the same init.

Default farness = 0.01, our choice (the paper's "lambda varies and the best one is taken" cannot be
transferred): on ORL subsets of 5, 10 and 20 faces (unit-norm images, Cai's random init) the farness
term is 4-10% of the reconstruction error after 200-500 iterations, so it acts without dominating. At
0.03 it is 15-80%; at 0.1 it is 2-3 times the reconstruction error, which itself grows by 70-150%:
the representation then mostly spreads the samples apart.

Cost. G is dense but never formed: G B = 1 (1^T B) - B - W B (O(nk) plus the sparse product), and its
degrees are D_G = (n - 1) - deg_W. One iteration is O(mnk) like NMF, with NMF's products: all starts of a
fit together, one pass over X for the V update and X V from the same pass (:mod:`.gnmf`); memory
O(nk + nnz(W)) per start.

References
----------
M. Babaee, R. Bahmanyar, G. Rigoll and M. Datcu, "Farness preserving non-negative matrix factorization",
Proc. IEEE ICIP 2014.
"""

import logging

import numpy as np

from .core import frobenius
from .core.estimator import Factorization, fit_stops_short
from .core.loop import Handoff
from .core.multiplicative import multiply
from .core.products import SampleBlocks, column_sums, dot, gram, squared_norm
from ..checks import NONNEGATIVE, below
from .gnmf import GRAPH_OF_THE_BATCH, regularized_v_update
from .graph.knn import ALGORITHM, NEIGHBOURS, degree, knn_graph, neighbour_count

logger = logging.getLogger(__name__)

PAPER_BETA = 200.0
"""The FNMF paper's beta (Sec. 4.3)."""


def complement_degree(W) -> np.ndarray:
    """Degrees of the complement graph G = 1 1^T - I - W: (n - 1) - deg_W, shape (n,).

    Parameters
    ----------
    W : scipy.sparse matrix of shape (n, n)
        Symmetric 0-1 graph with a zero diagonal.
    """
    return (W.shape[0] - 1) - degree(W)


def complement_product(W, B: np.ndarray) -> np.ndarray:
    """G B for the complement G = 1 1^T - I - W of a 0-1 graph, without forming G.

    Parameters
    ----------
    W : scipy.sparse matrix of shape (n, n)
        Symmetric 0-1 graph with a zero diagonal.
    B : ndarray of shape (n, k) or a stack of starts (s, n, k)

    Returns
    -------
    ndarray, shaped like B
        1 (1^T B) - B - W B, per start.
    """
    GB = column_sums(B) - B
    GB -= dot(W, B)
    return GB


def squared_column_norms(B: np.ndarray) -> np.ndarray:
    """||b_k||^2 for every column of B, shape (k,) for a matrix and (s, k) for a stack."""
    return np.einsum("...ik,...ik->...k", B, B)


def complement_traces(W, V: np.ndarray, D_G: np.ndarray | None = None) -> np.ndarray:
    """Per-column farness t_k = v_k^T L_G v_k = (1/2) sum_ij G_ij (V_ik - V_jk)^2.

    Shape (k,) for V (n x k), (s, k) for a stack (s, n, k). ``D_G`` (n,) may be passed when already
    computed. Clipped at 0 against rounding (L_G is PSD).
    """
    if D_G is None:
        D_G = complement_degree(W)
    LV = D_G[:, None] * V - complement_product(W, V)
    return np.maximum(np.einsum("...ik,...ik->...k", V, LV), 0.0)


def paper_factor(V: np.ndarray, W, beta: float = PAPER_BETA) -> tuple[float, float]:
    """The factor beta exp(-beta Tr(V^T L_G V)) of the paper's eq. 14, and T = Tr(V^T L_G V).

    Evaluated exactly as printed (no rescaling of V). At any realistic scale of V the factor is exactly
    0.0 in float64 (see the module docstring).

    Parameters
    ----------
    V : ndarray of shape (n, k)
    W : scipy.sparse matrix of shape (n, n)

    Returns
    -------
    factor, T : float
    """
    T = float(complement_traces(W, V).sum())
    return float(beta * np.exp(-beta * T)), T


def fnmf_rules(X: np.ndarray, W, gamma: float):
    """Return ``(update, objective)`` of FNMF on X (m x n) with the 0-1 kNN graph W (n x n), over stacks of starts.

    The V update reads X once (:func:`.gnmf.regularized_v_update`); the U update and the objective use
    the X V of that pass.

    Parameters
    ----------
    X : ndarray of shape (m, n)
        Nonnegative data, one sample per column.
    W : scipy.sparse matrix of shape (n, n)
        Symmetric 0-1 neighbour graph; the far pairs are its complement.
    gamma : float
        Weight of the farness term, F = ||X - U V^T||^2 - gamma Tr(V~^T L_G V~) (module docstring).
    """
    W = W.tocsr()
    D_G = complement_degree(W).astype(X.dtype)  # (n,); D_G[:, None] V is a row scaling
    W = W.astype(X.dtype)
    handoff = Handoff()
    X_norm2 = squared_norm(X)
    blocks = SampleBlocks(X)

    def update(factors):
        handoff.clear()
        U, V = factors["U"], factors["V"]
        weight = gamma * squared_column_norms(U)[..., None, :]  # gamma N = gamma diag(||u_k||^2), (1 x k) per start
        numerator = D_G[:, None] * V  # V update (eq. 14 with the constant weight)
        numerator *= weight
        denominator = complement_product(W, V)
        denominator *= weight
        XV = regularized_v_update(blocks, U, V, numerator, denominator)

        t = complement_traces(W, V, D_G)  # (k,) per start
        numerator = gamma * U * t[..., None, :]  # U update (eq. 13 plus the farness term's U gradient)
        numerator += XV
        multiply(U, numerator, U @ gram(V))
        handoff.keep((XV, t), U, V)

    def objective(factors):
        U, V = factors["U"], factors["V"]
        kept = handoff.take(U, V)
        XV, t = kept if kept is not None else (None, complement_traces(W, V, D_G))
        farness = np.einsum("...k,...k->...", squared_column_norms(U), t)  # Tr(V~^T L_G V~), per start
        return frobenius.objective(X, U, V, XV, X_norm2) - gamma * farness

    return update, objective


class FNMF(Factorization):
    """Farness preserving NMF with an explicit farness weight (see the module docstring).

    Minimizes F = ||X - U V^T||^2 - (farness / n) Tr(V~^T L_G V~), V~ = V diag(||u_k||), L_G the
    Laplacian of the complement of the 0-1 kNN graph.

    Parameters
    ----------
    n_components, max_iter, tol, init, random_state, n_starts, min_iter, stopping, dtype
        As in :class:`~src.methods.core.estimator.Factorization`.
    farness : float, default=0.01
        Dimensionless weight of the farness term, 0 <= farness < 1; the term's weight is farness / n.
        0 is NMF. Replaces the paper's (lambda, beta = 200), whose factor underflows to 0.
    n_neighbors : int or float, default=5
        Neighbours per sample in the 0-1 kNN graph (the paper does not give its k; Cai's default 5).
        A number in (0, 1) is a share of the samples (:func:`.graph.knn.neighbour_count`).
    knn_algorithm : {"auto", "exact", "nndescent"}, default="auto"
        Neighbour search of the graph (see :mod:`.graph.knn`): exact up to 30,000 samples with "auto",
        approximate (NN-descent, seeded from ``random_state``) above.

    Attributes
    ----------
    factors_ : dict of str to ndarray
        ``U`` (m x k) and ``V`` (n x k).
    graph_ : scipy.sparse matrix of shape (n, n)
        The sparse kNN graph W.

    References
    ----------
    M. Babaee, R. Bahmanyar, G. Rigoll and M. Datcu, "Farness preserving non-negative matrix
    factorization", Proc. IEEE ICIP 2014.
    """

    batched = True
    _parameter_constraints = {
        **Factorization._parameter_constraints,
        "farness": NONNEGATIVE & below(1, "below 1 the objective is bounded below"),
        "n_neighbors": NEIGHBOURS,
        "knn_algorithm": ALGORITHM,
    }
    _expected_failed_checks = {"check_methods_subset_invariance": GRAPH_OF_THE_BATCH,
                               **fit_stops_short("FNMF's V rule with U fixed, on the kNN graph rebuilt among them: "
                                                 "the training graph")}

    def __init__(
        self,
        n_components=2,
        *,
        max_iter=10_000,
        tol=1e-5,
        init="random",
        random_state=None,
        farness=0.01,
        n_neighbors=5,
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
        self.farness = farness
        self.n_neighbors = n_neighbors
        self.knn_algorithm = knn_algorithm

    def _rules(self, X, y):
        n = X.shape[1]
        self.graph_ = knn_graph(X.T, n_neighbors=neighbour_count(self.n_neighbors, n), weight="binary", algorithm=self.knn_algorithm,
                                random_state=self.random_state)
        return fnmf_rules(X, self.graph_, float(self.farness) / n)

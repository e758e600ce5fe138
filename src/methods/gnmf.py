"""Graph regularized NMF (GNMF) and its semi-supervised variant (SemiGNMF), Cai et al.

Objective, X (m x n) >= 0, U (m x k), V (n x k), W the (n x n) sample graph, D its degree matrix,
L = D - W:

    O = ||X - U V^T||_F^2 + alpha Tr(V^T L V)

Multiplicative updates (V first, then U, as in Deng Cai's ``GNMF_Multi.m`` and in :mod:`.nmf`)::

    V <- V * (X^T U + alpha W V) / (V U^T U + alpha D V)
    U <- U * (X V) / (U V^T V)

Cai et al. prove that O never increases under these rules. With alpha = 0 they are Lee and Seung's NMF
rules exactly.

Cost. All starts of a fit advance together (stacks of factors, :mod:`.core.loop`): X^T U and X V are each one
product over the k columns of every start, and the V update reads X only once, X^T U block by block of
samples with X V accumulated from the same blocks (:func:`regularized_v_update`); the U update and the
objective use that X V. W V is one sparse product over all starts. The objective's graph term is summed
edge by edge, Tr(V^T L V) = sum_{i<j} W_ij ||v_i - v_j||^2 (no cancellation: as accurate in float32 as
the factors are). One iteration costs O(mnk + nnz(W) k) per start.

SemiGNMF's label block, every pair of labelled samples of a class (about 4.9 million edges on MNIST-70k with
10% labelled), is never formed: the rules use the graph outside that block plus the block's products through
per-class sums of V's rows (:class:`.graph.label_matrix.SameClassBlock`: (S V)_i is the sum of V over the
labelled samples of i's class minus V_i, its degree n_c - 1, its smoothness n_c times the spread of the class
about its mean), O(n_l k) per start instead of O(sum_c n_c^2 k). The operator is the same as that of the
explicit graph of :func:`.graph.knn.label_graph`; the results agree with it to rounding.

The graph is built inside ``_rules`` from the samples (the columns of X): the ``n_neighbors``-nearest-
neighbour graph of :func:`.graph.knn.knn_graph`, symmetrized as max(W, W^T). The defaults are the GNMF
paper's: 5 neighbours, 0-1 ("binary") weights, alpha = 100. (Cai's ``constructW.m`` itself defaults to a
heat kernel; his GNMF demo and the paper's experiments use 0-1 weights. Both facts are recalled from
memory of Cai's code and paper, which are not available here.) SemiGNMF overwrites the labelled block of
the graph with :func:`.graph.knn.label_graph`: weight 1 between labelled samples of the same class, 0
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
import scipy.sparse as sp

from .core import frobenius
from .core.estimator import (Factorization, LabelConstrainedMixin, NormalizedInitMixin, fit_stops_short,
                             labels_in_fit_only)
from .core.multiplicative import multiply
from .core.products import SampleBlocks, block_slices, dot, gram
from ..checks import BOOLEAN, NONNEGATIVE
from .graph.knn import ALGORITHM, HEAT_WIDTH, NEIGHBOURS, WEIGHT, degree, knn_graph, label_graph, neighbour_count
from .graph.label_matrix import SameClassBlock

GRAPH_OF_THE_BATCH = ("transform builds the kNN graph among the samples it is given (a single sample has no graph "
                      "term): a sample's representation depends on the batch")
"""Why scikit-learn's ``check_methods_subset_invariance`` cannot hold for the methods with a sample graph."""


def regularized_v_update(blocks: SampleBlocks, U: np.ndarray, V: np.ndarray, numerator: np.ndarray | None,
                         denominator: np.ndarray | None, UtU: np.ndarray | None = None) -> np.ndarray:
    """V <- V * (X^T U + numerator) / (V U^T U + denominator) in place, in one pass over X; returns X V.

    The V rule of every Frobenius method with a regularizer on V (GNMF, SemiGNMF, PCGNMF, FNMF, NPNMF):
    the regularizer's parts are computed by the caller from the current factors, before the pass (they
    mix rows of V, which the pass updates block by block). X^T U is read block by block of samples and
    X V is accumulated from the same blocks with the new rows of V (:meth:`.core.products.SampleBlocks.fused`).

    Parameters
    ----------
    blocks : SampleBlocks
        The data X (m x n).
    U : ndarray of shape (s, m, k)
    V : ndarray of shape (s, n, k)
        Updated in place.
    numerator, denominator : ndarray of shape (s, n, k) or None
        The regularizer's terms of the rule (None: no term).
    UtU : ndarray of shape (s, k, k), optional
        U^T U when already computed.

    Returns
    -------
    ndarray of shape (s, m, k)
        X V with the new V.
    """
    if UtU is None:
        UtU = gram(U)

    def rule(block, XtU_block):  # rows ``block`` of V; XtU_block is a fresh product, free to overwrite
        if numerator is not None:
            XtU_block += numerator[..., block, :]
        scaled = V[..., block, :] @ UtU
        if denominator is not None:
            scaled += denominator[..., block, :]
        multiply(V[..., block, :], XtU_block, scaled)

    return blocks.fused(U, rule, V)


def graph_operator(W, dtype, same_class: SameClassBlock | None = None) -> tuple:
    """The graph as the rules use it: W (n x n, CSR, of ``dtype``) and its degrees D as an (n x 1) column.

    The degrees are summed in float64 before the cast, so that a float32 fit has the float64 fit's D
    rounded once. ``same_class``: a label block that the graph also holds (SemiGNMF), W being the graph
    outside it; D then counts its edges too.
    """
    W = W.tocsr()
    degrees = degree(W)
    if same_class is not None:
        degrees += same_class.degree()
    D = degrees[:, None].astype(dtype)  # (n x 1): D V is a row scaling, for every start
    return W.astype(dtype), D


def graph_edges(W) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The edges i < j of a symmetric graph W and their float64 weights: ``(rows, cols, weights)``."""
    upper = sp.triu(W, k=1).tocoo()
    return upper.row, upper.col, upper.data.astype(np.float64)


def graph_smoothness(edges: tuple[np.ndarray, np.ndarray, np.ndarray], V: np.ndarray) -> np.ndarray:
    """Tr(V^T L V) = sum over the edges i < j of W_ij ||v_i - v_j||^2, per start (float64, shape (s,)).

    For a symmetric W (``edges`` from :func:`graph_edges`). Written this way it has none of the cancellation
    of Tr(V^T D V) - Tr(V^T W V), two nearly equal large numbers once V is smooth on the graph (float32
    would keep no digit of their difference); the squares are summed in float64. By blocks of edges
    (:func:`.core.products.block_slices`): no (s, edges, k) array.
    """
    rows, cols, weights = edges
    total = np.zeros(V.shape[:-2], dtype=np.float64)  # one value per start
    for block in block_slices(rows.size, V[..., :1, :].size):  # width: k per start, all starts
        difference = V[..., rows[block], :]  # (s, edges, k)
        difference -= V[..., cols[block], :]
        np.multiply(difference, difference, out=difference)
        total += difference.sum(axis=-1, dtype=np.float64) @ weights[block]
    return total


def gnmf_rules(X: np.ndarray, W, alpha: float, same_class: SameClassBlock | None = None):
    """Return ``(update, objective)`` of GNMF on X (m x n) with the sparse (n x n) graph W, over stacks of starts.

    The V update reads X once (:func:`regularized_v_update`); the U update and the objective after the
    sweep use the X V of that pass. The objective's graph term is summed over the edges
    (:func:`graph_smoothness`).

    Parameters
    ----------
    X : ndarray of shape (m, n)
        Nonnegative data, one sample per column.
    W : scipy.sparse matrix of shape (n, n)
        Symmetric nonnegative graph of the samples (SemiGNMF: outside the labelled block,
        :meth:`.graph.label_matrix.SameClassBlock.outside`).
    alpha : float
        Weight of the graph term alpha Tr(V^T L V).
    same_class : SameClassBlock, optional
        SemiGNMF's label block S: the graph is W + S, S applied through per-class sums (W V + S V, the
        degrees of both, the smoothness over W's edges plus S's per-class form).

    References
    ----------
    D. Cai, X. He, J. Han and T. S. Huang, IEEE TPAMI 33(8), 2011 (GNMF's rules); D. Cai, X. He, X. Wu and
    J. Han, Proc. IEEE ICDM 2008 (SemiGNMF's graph).
    """
    W, D = graph_operator(W, X.dtype, same_class)
    edges = graph_edges(W)
    alpha_D = alpha * D
    data = frobenius.DataTerm(X)

    def v_pass(U, V, UtU):  # V update (Cai et al. 2011, GNMF rule for V), in one pass over X; returns X V
        WV = dot(W, V)  # the graph terms with the current V
        if same_class is not None:
            same_class.add_dot(V, WV)  # (W + S) V
        WV *= alpha
        return regularized_v_update(data.blocks, U, V, WV, alpha_D * V, UtU)

    def update(factors):
        data.update(factors["U"], factors["V"], v_pass)  # then U (Cai et al. 2011, GNMF rule for U, NMF's)

    def objective(factors):
        U, V = factors["U"], factors["V"]
        smoothness = graph_smoothness(edges, V)
        if same_class is not None:
            smoothness += same_class.smoothness(V)
        return data.objective(U, V) + alpha * smoothness

    return update, objective


class GNMF(NormalizedInitMixin, Factorization):
    """Graph regularized NMF: ||X - U V^T||^2 + alpha Tr(V^T L V), L from a kNN graph of the samples.

    Parameters
    ----------
    n_components, max_iter, tol, init, random_state, n_starts, min_iter, stopping, dtype
        As in :class:`~src.methods.core.estimator.Factorization`.
    alpha : float, default=100.0
        Graph regularization weight (Cai's default, used in the GNMF paper's experiments).
    n_neighbors : int or float, default=5
        Neighbours per sample in the graph (Cai's default p = 5).
        A number in (0, 1) is a share of the samples (:func:`.graph.knn.neighbour_count`).
    weight : {"binary", "heat", "cosine"}, default="binary"
        Edge weights of the graph; the GNMF paper's experiments use 0-1 ("binary") weights.
    t : float or None, default=None
        Heat kernel width in exp(-||x_i - x_j||^2 / t) for ``weight="heat"``; None is Cai's default
        (see :mod:`.graph.knn`).
    normalize_init : bool, default=True
        Scale the initial U's columns to unit L2 norm and V's columns by the same norms, as Cai's code
        does (see the module docstring); a zero column of U is left as it is.
    knn_algorithm : {"auto", "exact", "nndescent"}, default="auto"
        Neighbour search of the graph (see :mod:`.graph.knn`): exact up to 30,000 samples with "auto",
        approximate (NN-descent, seeded from ``random_state``) above.

    Attributes
    ----------
    factors_ : dict of str to ndarray
        ``U`` (m x k) and ``V`` (n x k).
    graph_ : scipy.sparse matrix of shape (n, n)
        The sparse graph used.

    References
    ----------
    D. Cai, X. He, J. Han and T. S. Huang, "Graph regularized nonnegative matrix factorization for data
    representation", IEEE TPAMI 33(8), 2011.
    """

    batched = True
    _parameter_constraints = {
        **Factorization._parameter_constraints,
        "alpha": NONNEGATIVE,
        "n_neighbors": NEIGHBOURS,
        "weight": WEIGHT,
        "t": HEAT_WIDTH,
        "normalize_init": BOOLEAN,
        "knn_algorithm": ALGORITHM,
    }
    _expected_failed_checks = {"check_methods_subset_invariance": GRAPH_OF_THE_BATCH,
                               **fit_stops_short("GNMF's V rule with U fixed, on the kNN graph rebuilt among them: "
                                                 "the training graph")}

    def __init__(
        self,
        n_components=2,
        *,
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
        dtype="float64",
    ):
        super().__init__(
            n_components=n_components, max_iter=max_iter, tol=tol, init=init, random_state=random_state,
            n_starts=n_starts, min_iter=min_iter, stopping=stopping, dtype=dtype
        )
        self.alpha = alpha
        self.n_neighbors = n_neighbors
        self.weight = weight
        self.t = t
        self.normalize_init = normalize_init
        self.knn_algorithm = knn_algorithm

    def _graph(self, X: np.ndarray, y: np.ndarray):
        """(n x n) sparse graph of the samples, the columns of X (m x n)."""
        return knn_graph(X.T, n_neighbors=neighbour_count(self.n_neighbors, X.shape[1]), weight=self.weight, t=self.t,
                         algorithm=self.knn_algorithm, random_state=self.random_state)

    def _rules(self, X, y):
        self.graph_ = self._graph(X, y)
        return gnmf_rules(X, self.graph_, float(self.alpha))


#: SemiGNMF writes its labelled block into the graph up to this many edges (about 12 MB of CSR) and applies
#: it through per-class sums above (:class:`.graph.label_matrix.SameClassBlock`).
EXPLICIT_LABEL_EDGES = 1_000_000


class SemiGNMF(LabelConstrainedMixin, GNMF):
    """Semi-supervised GNMF: GNMF whose graph has its labelled block overwritten by the labels.

    Same parameters as :class:`GNMF`; ``fit(X, y)`` uses y (-1 = unlabelled): for labelled samples
    i != j, W_ij = 1 if they share a class and 0 otherwise (see :func:`.graph.knn.label_graph`).
    Without labels it is GNMF. A labelled block of more than :data:`EXPLICIT_LABEL_EDGES` edges (MNIST-70k
    with 10% labelled: 4.9 million) is applied through per-class sums
    (:class:`.graph.label_matrix.SameClassBlock`), without forming it; a smaller one (the papers' data sets:
    at most about 10,000) is written into the graph, whose products round exactly as they always have, so
    that the reproduction's cells keep their numbers (the two agree to rounding, which can move a KMeans
    assignment: 2 AC and 3 NMI values of 2,248 reproduction cells did).

    Attributes
    ----------
    factors_ : dict of str to ndarray
        ``U`` (m x k) and ``V`` (n x k).
    knn_graph_ : scipy.sparse matrix of shape (n, n)
        The kNN graph of the samples, before the labels.
    graph_ : scipy.sparse matrix of shape (n, n)
        The graph used, with its labelled block written out (:func:`.graph.knn.label_graph`): built anew on
        every access, with up to sum_c n_c (n_c - 1) entries more than ``knn_graph_`` (n_c labelled samples of
        class c).

    References
    ----------
    D. Cai, X. He, X. Wu and J. Han, "Non-negative matrix factorization on manifold", Proc. IEEE ICDM
    2008; D. Cai, X. He, J. Han and T. S. Huang, IEEE TPAMI 33(8), 2011.
    """

    _expected_failed_checks = {**GNMF._expected_failed_checks,
                               **labels_in_fit_only("the labels rewrite the training graph")}

    @property
    def graph_(self):
        """The graph used, its labelled block written out (see the class docstring)."""
        return label_graph(self.knn_graph_, self._partial_labels)

    def _rules(self, X, y):
        self.knn_graph_ = self._graph(X, y)
        self._partial_labels = np.array(y)
        same_class = SameClassBlock(y)
        if same_class.n_edges <= EXPLICIT_LABEL_EDGES:  # the papers' data: the block written into the graph
            return gnmf_rules(X, label_graph(self.knn_graph_, y), float(self.alpha))
        return gnmf_rules(X, same_class.outside(self.knn_graph_), float(self.alpha), same_class)

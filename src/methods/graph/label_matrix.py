"""The label constraint matrix A of constrained NMF / constrained concept factorization, and SemiGNMF's label block.

With c labelled classes and n_u unlabelled samples, A (n x (c + n_u)) maps the auxiliary factor Z to the
representation V = A Z, so that all samples labelled with the same class share one row of V::

    A_ij = 1  if sample i is labelled with the j-th labelled class (j < c, classes in sorted order),
    A_ij = 1  if sample i is the (j - c)-th unlabelled sample (in sample order),
    A_ij = 0  otherwise.

The papers write A = [[C, 0], [0, I_{n-l}]] with the labelled samples listed first; here the rows stay in
sample order (a row permutation of the papers' A, which changes nothing in the factorization). Every row
holds exactly one 1, so A^T A is diagonal (class sizes, then ones) and A Z costs O(nk).

Its first c columns C also give the labelled block of SemiGNMF's graph, S = C C^T - P (P the diagonal
indicator of the labelled samples): :class:`SameClassBlock` applies it through per-class sums, in O(n_l k).

References
----------
H. Liu, Z. Wu, X. Li, D. Cai, T. S. Huang, "Constrained nonnegative matrix factorization for image
representation", IEEE TPAMI 34(7), 2012, section 3.

D. Cai, X. He, X. Wu and J. Han, "Non-negative matrix factorization on manifold", Proc. IEEE ICDM 2008
(SemiGNMF's label graph).
"""

import numpy as np
import scipy.sparse as sp

from ...errors import ConfigError
from ..core.validation import UNLABELLED, check_labels

SHARED_ROWS = "V = A Z: a labelled class shares one row"
"""How the labels act in the methods whose representation is V = A Z (CNMF, CNMF-KL, CCF)."""


def n_constraint_columns(y: np.ndarray) -> int:
    """Number of columns c + n_u of the constraint matrix for labels y (-1 = unlabelled)."""
    y = np.asarray(y)
    labelled = y != UNLABELLED
    return int(np.unique(y[labelled]).size + np.count_nonzero(~labelled))


def label_matrix(y) -> sp.csr_matrix:
    """Build the label constraint matrix A of the CNMF paper (section 3) in sample order.

    Parameters
    ----------
    y : array-like of int, shape (n,)
        Class labels, -1 for unlabelled samples.

    Returns
    -------
    A : scipy.sparse.csr_matrix of shape (n, c + n_u), float64
        First c columns: the labelled classes in sorted order (A_ij = 1 if sample i carries the j-th
        class); then one identity column per unlabelled sample, in sample order. Without any labelled
        sample A is the n x n identity, and CNMF / CCF reduce to NMF / CF.

    Examples
    --------
    >>> label_matrix([1, -1, 0, 1, -1]).toarray()
    array([[0., 1., 0., 0.],
           [0., 0., 1., 0.],
           [1., 0., 0., 0.],
           [0., 1., 0., 0.],
           [0., 0., 0., 1.]])
    """
    y = np.asarray(y)
    if y.ndim != 1:
        raise ConfigError(f"y must be a 1-D array of labels, got shape {y.shape}")
    y = check_labels(y, y.shape[0])
    n = y.shape[0]
    labelled = y != UNLABELLED
    classes, class_index = np.unique(y[labelled], return_inverse=True)
    c = classes.size
    columns = np.empty(n, dtype=np.int64)
    columns[labelled] = class_index
    columns[~labelled] = c + np.arange(np.count_nonzero(~labelled))
    return sp.csr_matrix((np.ones(n), (np.arange(n), columns)), shape=(n, c + n - np.count_nonzero(labelled)))


class SameClassBlock:
    """The labelled block of SemiGNMF's graph, S (n x n), applied through per-class sums, never formed.

    S_ij = 1 for labelled samples i != j of the same class, 0 otherwise (:func:`.knn.label_graph` writes it
    into the graph explicitly). With C the (n x c) one-hot matrix of the labelled samples (the first c columns
    of :func:`label_matrix`) and P the diagonal indicator of the labelled samples, S = C C^T - P, so that for a
    labelled sample i of class c(i)::

        (S V)_i = sum_{j labelled, c(j) = c(i)} V_j - V_i,      D^S_ii = n_c(i) - 1,
        Tr(V^T (D^S - S) V) = sum_{i < j} S_ij ||v_i - v_j||^2 = sum_c n_c sum_{i in c} ||v_i - m_c||^2

    (n_c labelled samples of class c, m_c their mean row of V), and S V = 0 on the unlabelled rows. Each costs
    O(n_l k) per start (n_l labelled samples) instead of the O(sum_c n_c^2 k) of the explicit block (4.9 million
    entries on MNIST-70k with 10% labelled). The class sums and the smoothness are accumulated in float64
    (the sum of nonnegative rows minus one of them stays >= 0); the smoothness uses deviations from the class
    means, with no cancellation of two large terms.

    Parameters
    ----------
    y : array-like of shape (n,)
        Class labels, -1 for unlabelled samples.

    Attributes
    ----------
    n_labelled : int
        n_l.
    n_edges : int
        Unordered pairs the block links, sum_c n_c (n_c - 1) / 2.

    References
    ----------
    D. Cai, X. He, X. Wu and J. Han, "Non-negative matrix factorization on manifold", Proc. IEEE ICDM 2008
    (the semi-supervised graph of SemiGNMF).
    """

    def __init__(self, y):
        y = np.asarray(y)
        labelled = np.flatnonzero(y != UNLABELLED)
        _, codes = np.unique(y[labelled], return_inverse=True)
        order = np.argsort(codes, kind="stable")
        self.n = y.shape[0]
        self.rows = labelled[order]  # labelled samples, class by class (sample order within a class)
        self.sizes = np.bincount(codes).astype(np.int64)  # n_c
        self.starts = np.concatenate(([0], np.cumsum(self.sizes)[:-1])).astype(np.intp)  # first row of each class
        self.row_sizes = np.repeat(self.sizes, self.sizes).astype(np.float64)  # n_c(i) for each of ``rows``
        self.n_labelled = int(labelled.size)
        self.n_edges = int((self.sizes * (self.sizes - 1)).sum() // 2)

    def labelled_rows(self, V: np.ndarray) -> np.ndarray:
        """The rows of V of the labelled samples, class by class, in float64: (..., n_l, k)."""
        return V[..., self.rows, :].astype(np.float64)

    def class_sums(self, V_labelled: np.ndarray) -> np.ndarray:
        """Per-class sums of the rows of :meth:`labelled_rows`, (..., c, k), float64."""
        return np.add.reduceat(V_labelled, self.starts, axis=-2)

    def add_dot(self, V: np.ndarray, out: np.ndarray) -> np.ndarray:
        """out += S V, in place (V and out (n x k) or stacks (s, n, k)); returns out."""
        if self.n_labelled:
            V_labelled = self.labelled_rows(V)
            SV = np.repeat(self.class_sums(V_labelled), self.sizes, axis=-2)
            SV -= V_labelled  # the class's sum minus the sample's own row: no self edge
            out[..., self.rows, :] += SV
        return out

    def dot(self, V: np.ndarray) -> np.ndarray:
        """S V, of V's shape and dtype."""
        return self.add_dot(V, np.zeros_like(V))

    def degree(self) -> np.ndarray:
        """D^S_ii = sum_j S_ij = n_c(i) - 1 (0 for an unlabelled sample), shape (n,), float64."""
        degrees = np.zeros(self.n)
        degrees[self.rows] = self.row_sizes - 1.0
        return degrees

    def smoothness(self, V: np.ndarray) -> np.ndarray | float:
        """Tr(V^T (D^S - S) V) = sum_c n_c sum_{i in c} ||v_i - m_c||^2 per start: shape (s,) for a stack (s, n, k),
        a float for a matrix; float64."""
        if not self.n_labelled:
            return np.zeros(V.shape[:-2]) if V.ndim > 2 else 0.0
        V_labelled = self.labelled_rows(V)
        means = self.class_sums(V_labelled) / self.sizes[:, None]
        deviations = V_labelled - np.repeat(means, self.sizes, axis=-2)
        total = np.einsum("...ik,...ik->...i", deviations, deviations) @ self.row_sizes
        return total if V.ndim > 2 else float(total)

    def outside(self, W) -> sp.csr_matrix:
        """W (n x n, sparse) without its labelled block: the entries W_ij with i or j unlabelled, float64 CSR.

        W with the block outside it plus S is the graph :func:`.knn.label_graph` builds explicitly.
        """
        W = sp.csr_matrix(W, dtype=np.float64, copy=True)
        if not self.n_labelled:
            return W
        is_labelled = np.zeros(self.n, dtype=bool)
        is_labelled[self.rows] = True
        W = W.tocoo()
        keep = ~(is_labelled[W.row] & is_labelled[W.col])
        out = sp.csr_matrix((W.data[keep], (W.row[keep], W.col[keep])), shape=W.shape)
        out.sort_indices()
        return out

"""The label constraint matrix A of constrained NMF / constrained concept factorization.

With c labelled classes and n_u unlabelled samples, A (n x (c + n_u)) maps the auxiliary factor Z to the
representation V = A Z, so that all samples labelled with the same class share one row of V::

    A_ij = 1  if sample i is labelled with the j-th labelled class (j < c, classes in sorted order),
    A_ij = 1  if sample i is the (j - c)-th unlabelled sample (in sample order),
    A_ij = 0  otherwise.

The papers write A = [[C, 0], [0, I_{n-l}]] with the labelled samples listed first; here the rows stay in
sample order (a row permutation of the papers' A, which changes nothing in the factorization). Every row
holds exactly one 1, so A^T A is diagonal (class sizes, then ones) and A Z costs O(nk).

References
----------
H. Liu, Z. Wu, X. Li, D. Cai, T. S. Huang, "Constrained nonnegative matrix factorization for image
representation", IEEE TPAMI 34(7), 2012, section 3.
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

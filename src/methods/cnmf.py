"""Constrained NMF (CNMF) with the Frobenius loss: labels as hard constraints, V = A Z.

Objective (Liu et al. 2012, eq. 1): O_F = ||X - U Z^T A^T||_F^2, X (m x n) >= 0, U (m x k) >= 0,
Z ((c + n_u) x k) >= 0, A (n x (c + n_u)) the label constraint matrix of :func:`.graph.label_matrix.label_matrix`.
The paper's orientation is ours (X ~ U V^T with V = A Z), so its updates are used as printed::

    Z <- Z * (A^T X^T U) / (A^T A Z U^T U)        (eq. 3)
    U <- U * (X A Z) / (U Z^T A^T A Z)            (eq. 2)

Order: the paper prints (2) before (3) but proves (3) first and does not say which runs first. We update
Z first, then U, the order of Deng Cai's GNMF code and of our :class:`~src.methods.nmf.NMF`; with no
labelled sample A = I and CNMF is then exactly NMF from the same initial factors (tested).

Cost: A is sparse with one 1 per row, so A Z and A^T B cost O(nk); A^T A (diagonal) is never formed, the
denominator of eq. 3 is taken as A^T ((A Z)(U^T U)). One iteration is O(mnk) like NMF; no n x n matrix.

References
----------
H. Liu, Z. Wu, X. Li, D. Cai, T. S. Huang, "Constrained nonnegative matrix factorization for image
representation", IEEE TPAMI 34(7), pp. 1299-1311, 2012.
"""

import numpy as np
import scipy.sparse as sp

from .core import frobenius
from .core.estimator import Factorization, LabelConstrainedMixin, labels_in_fit_only
from .core.loop import Handoff
from .core.multiplicative import multiply
from .core.products import dot, gram, squared_norm, x_dot, xt_dot
from .graph.label_matrix import SHARED_ROWS, label_matrix, n_constraint_columns


def cnmf_rules(X, A: sp.spmatrix):
    """Return ``(update, objective)`` of Frobenius CNMF on X (m x n) with constraint matrix A (n x r).

    Factors (stacks of starts): ``U`` (m x k) and ``Z`` (r x k), r = c + n_u. The objective after a sweep
    reuses the product X V computed by the U update.
    """
    A = sp.csr_matrix(A)
    At = A.T.tocsr()
    handoff = Handoff()
    X_norm2 = squared_norm(X)

    def update(factors):
        handoff.clear()
        U, Z = factors["U"], factors["Z"]
        numerator = dot(At, xt_dot(X, U))  # eq. 3, A^T X^T U, (r x k)
        denominator = dot(At, dot(A, Z) @ gram(U))  # A^T A Z U^T U
        multiply(Z, numerator, denominator)

        V = dot(A, Z)  # the representation V = A Z, (n x k)
        XV = x_dot(X, V)  # eq. 2, X A Z, (m x k)
        frobenius.u_update(U, V, XV)  # U Z^T A^T A Z in the denominator
        handoff.keep(XV, U, Z)

    def objective(factors):
        U, Z = factors["U"], factors["Z"]
        return frobenius.objective(X, U, dot(A, Z), handoff.take(U, Z), X_norm2)

    return update, objective


class CNMF(LabelConstrainedMixin, Factorization):
    """Constrained NMF, X ~ U (A Z)^T with the Frobenius loss (Liu et al., TPAMI 2012).

    Samples labelled with the same class share one row of Z, hence one row of the representation
    V = A Z. Parameters are those of :class:`~src.methods.core.estimator.Factorization`; the method itself has
    none (the paper calls it parameter free).

    ``factors_`` holds ``U`` (m x k) and ``Z`` ((c + n_u) x k), c the number of labelled classes and
    n_u the number of unlabelled samples (see :func:`~src.methods.graph.label_matrix.label_matrix`);
    ``embedding_`` is V = A Z with U's columns scaled to unit L2 norm (Deng Cai's NormalizeUV, applied
    once at the end; the paper is silent on normalization). ``constraint_matrix_`` is the sparse A
    (n x (c + n_u)) of the last fit.

    References
    ----------
    H. Liu, Z. Wu, X. Li, D. Cai, T. S. Huang, "Constrained nonnegative matrix factorization for image
    representation", IEEE TPAMI 34(7), 2012, eqs. 1-3.
    """

    factor_names = ("U", "Z")
    batched = True
    accept_sparse = True  # X enters only through products (core.products), sparse or dense alike
    _expected_failed_checks = labels_in_fit_only(SHARED_ROWS)

    def _factor_shapes(self, m, n, y):
        k = self.n_components
        return {"U": (m, k), "Z": (n_constraint_columns(y), k)}

    def _rules(self, X, y):
        self.constraint_matrix_ = label_matrix(y)
        return cnmf_rules(X, self.constraint_matrix_)

    def _representation(self, factors):
        norms = np.linalg.norm(factors["U"], axis=0)
        return (self.constraint_matrix_ @ factors["Z"]) * norms

"""Representation of new samples on a fixed basis: the coefficient rule of NMF, CF and LCF with U given.

``transform`` of the methods whose basis is not a free factor of their own rules uses this module: the
concept factorizations (CF, CCF, LCF), whose basis X W is tied to the training samples, and NTF, whose
basis images a_j b_j^T are a Khatri-Rao product. With the basis U (m x k) fixed, each new sample x_i
(a column of X, m x n) gets the coefficients v_i >= 0 minimizing

    ||x_i - U v_i||^2 + lam sum_k v_ik ||u_k - x_i||^2

(lam = 0 for CF, CCF and NTF; LCF's locality weight for LCF). The rows of V are independent, so the result
for a sample does not depend on the other samples of the batch. With a = (||x_i||^2)_i, c = (||u_k||^2)_k:

* X^T U >= 0 and U^T U >= 0 (always when X >= 0 and U >= 0): the multiplicative rule

      V <- V * (1 + lam) X^T U / (V U^T U + lam/2 (a 1^T + 1 c^T))

  which is CF's coefficient rule (CCF eq. 11 with A = I) with K W = X^T U, LCF's eq. 12 with K W = X^T U
  and diag(W^T K W) = c, and, for lam = 0, NMF's V rule and NTF's C rule (U = A ⊙ B,
  U^T U = (A^T A) * (B^T B)).
* otherwise (mixed-sign data, which the concept factorizations allow): Sha et al.'s rule for nonnegative
  quadratic programs, with the elementwise split U^T U = P+ - P- and g = (1 + lam) X^T U
  - lam/2 (a 1^T + 1 c^T):

      V <- V * (g + sqrt(g^2 + 4 (V P+)(V P-))) / (2 V P+)

  (CCF's eq. 27 and LCF's eq. 40 split the training kernel K instead, which a fixed basis does not
  give; any elementwise nonnegative symmetric split keeps Sha et al.'s monotonicity).

Both rules never increase the objective. X^T U is computed once: an iteration costs O(n k^2).

References
----------
D. D. Lee and H. S. Seung, "Algorithms for non-negative matrix factorization", NIPS 2001.

F. Sha, Y. Lin, L. K. Saul, D. D. Lee, "Multiplicative updates for nonnegative quadratic programming",
Neural Computation 19(8), 2007.

H. Liu, Z. Yang, J. Yang, Z. Wu, X. Li, "Local coordinate concept factorization for image representation",
IEEE TNNLS 25(6), 2014, eqs. 12, 40.
"""

import numpy as np
import scipy.sparse as sp

from .multiplicative import EPS, multiply
from .products import gram, squared_norm, xt_dot


def fixed_basis_rules(X, U: np.ndarray, lam: float = 0.0):
    """Return ``(update, objective)`` of the coefficients V on data X (m x n) with the basis U fixed.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (m, n)
        New samples, one per column.
    U : ndarray of shape (m, k)
        The fixed basis.
    lam : float, default=0.0
        Weight of the locality term lam sum_ik v_ik ||u_k - x_i||^2 (LCF's lambda; 0 otherwise).

    Returns
    -------
    update, objective : callables over ``{"V": (s, n, k)}`` stacks of starts (the objective per start,
        shape (s,)).
    """
    U = np.asarray(U, dtype=X.dtype)
    XtU = xt_dot(X, U)  # (n x k), once: U does not change
    UtU = gram(U)
    X_norm2 = squared_norm(X)
    a = np.asarray(X.multiply(X).sum(axis=0)).ravel() if sp.issparse(X) else np.einsum("ij,ij->j", X, X)
    c = np.einsum("ik,ik->k", U, U)
    offset = (0.5 * lam) * (a[:, None] + c[None, :]).astype(X.dtype)  # lam/2 (a 1^T + 1 c^T), (n x k)
    g = (1.0 + lam) * XtU - offset
    mixed = bool(np.any(XtU < 0) or np.any(UtU < 0))  # the multiplicative rule needs both >= 0
    P_plus, P_minus = np.maximum(UtU, 0.0), np.maximum(-UtU, 0.0)

    def update(factors):
        V = factors["V"]
        if not mixed:
            multiply(V, (1.0 + lam) * XtU, V @ UtU + offset)
            return
        Q_plus, Q_minus = V @ P_plus, V @ P_minus
        numerator = g + np.sqrt(g * g + 4.0 * Q_plus * Q_minus)
        multiply(V, numerator, 2.0 * Q_plus)

    def objective(factors):
        V = factors["V"]  # (s, n, k)
        cross = np.einsum("ik,sik->s", XtU, V)  # <X^T U, V> per start
        fit = X_norm2 - 2.0 * cross + np.einsum("kl,skl->s", UtU, gram(V))  # ||X - U V^T||^2
        if lam == 0:
            return fit
        # sum_ik v_ik (||x_i||^2 - 2 u_k^T x_i + ||u_k||^2)
        locality = np.einsum("i,sik->s", a, V) - 2.0 * cross + np.einsum("k,sik->s", c, V)
        return fit + lam * locality

    return update, objective


def sample_scales(X, U: np.ndarray) -> np.ndarray:
    """Least-squares scale s_i of each sample on the summed basis, x_i ~ s_i U 1, floored above 0, shape (n,).

    The starting coefficients of ``transform`` (every entry of row i equal to s_i): a function of the sample
    alone, so that the result for a sample does not depend on the rest of the batch.
    """
    b = np.asarray(U, dtype=np.float64).sum(axis=1)
    bb = float(b @ b)
    s = np.asarray(X.T @ b.astype(X.dtype)).ravel() / bb if bb > 0 else np.zeros(X.shape[1])
    floor = float(np.sqrt(np.finfo(X.dtype).eps))
    return np.maximum(np.nan_to_num(s, nan=floor), floor)

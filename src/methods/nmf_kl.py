"""NMF with the generalized Kullback-Leibler divergence, Lee and Seung's multiplicative updates.

Objective: D(X || Y) = sum_ij X_ij log(X_ij / Y_ij) - X_ij + Y_ij with Y = U V^T.
Updates (V first, then U):

    V_jk <- V_jk * sum_i U_ik X_ij / Y_ij / sum_i U_ik       (Lee & Seung 2001, eq. 5, transposed)
    U_ik <- U_ik * sum_j X_ij / Y_ij V_jk / sum_j V_jk

References
----------
D. D. Lee and H. S. Seung, "Algorithms for non-negative matrix factorization", NIPS 2001.
"""

import numpy as np
from scipy.special import rel_entr

from .base import EPS, Factorization


def kl_divergence(X: np.ndarray, Y: np.ndarray) -> float:
    """Generalized KL divergence D(X || Y), with 0 log 0 = 0 and Y floored at EPS."""
    return float(rel_entr(X, np.maximum(Y, EPS)).sum() - X.sum() + Y.sum())


def ratio(X: np.ndarray, U: np.ndarray, V: np.ndarray) -> np.ndarray:
    """X / (U V^T), (m x n), with the reconstruction floored at EPS."""
    Y = U @ V.T
    np.maximum(Y, EPS, out=Y)
    return np.divide(X, Y, out=Y)


def kl_rules(X: np.ndarray):
    """Return ``(update, objective)`` of KL-divergence NMF on X (m x n)."""

    def update(factors):
        U, V = factors["U"], factors["V"]
        numerator = ratio(X, U, V).T @ U  # V update, (n x k)
        denominator = np.broadcast_to(U.sum(axis=0), V.shape).copy()
        np.maximum(denominator, EPS, out=denominator)
        V *= numerator / denominator

        numerator = ratio(X, U, V) @ V  # U update, (m x k)
        denominator = np.broadcast_to(V.sum(axis=0), U.shape).copy()
        np.maximum(denominator, EPS, out=denominator)
        U *= numerator / denominator

    def objective(factors):
        return kl_divergence(X, factors["U"] @ factors["V"].T)

    return update, objective


class NMFKL(Factorization):
    """Nonnegative matrix factorization X ~ U V^T with the KL divergence.

    ``embedding_`` is V with U's columns scaled to unit L1 norm (the normalization Deng Cai's
    ``GNMF_KL`` applies, under which U's columns are distributions over features).

    References
    ----------
    D. D. Lee and H. S. Seung, "Algorithms for non-negative matrix factorization", NIPS 2001.
    """

    def _rules(self, X, y):
        return kl_rules(X)

    def _representation(self, factors):
        return factors["V"] * factors["U"].sum(axis=0)

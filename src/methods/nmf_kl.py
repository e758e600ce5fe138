"""NMF with the generalized Kullback-Leibler divergence, Lee and Seung's multiplicative updates.

Objective: D(X || Y) = sum_ij X_ij log(X_ij / Y_ij) - X_ij + Y_ij with Y = U V^T.
Updates (V first, then U):

    V_jk <- V_jk * sum_i U_ik X_ij / Y_ij / sum_i U_ik       (Lee & Seung 2001, eq. 5, transposed)
    U_ik <- U_ik * sum_j X_ij / Y_ij V_jk / sum_j V_jk

Cost. Both numerators are products with the ratio R = X / Y (m x n). :class:`KLProducts` forms R block by
block (a few rows of X at a time, in X's contiguous orientation: one small GEMM for the block of Y, the floor,
the division and the product, all in cache) and never as a whole: two passes over X per iteration and no
m x n temporary, where forming R directly costs five m x n arrays per iteration. The objective after a sweep
takes the pass that the next V update needs anyway (same U, V), keeps that numerator and adds the divergence
to it; sum_ij Y_ij is (1^T U)(V^T 1), and x log(x / y) is evaluated at the nonzero entries of X only (their
positions are kept per block when X has zeros). One iteration: two passes, four m x n x k products in small
GEMMs.

References
----------
D. D. Lee and H. S. Seung, "Algorithms for non-negative matrix factorization", NIPS 2001.
"""

import numpy as np
from scipy.special import rel_entr

from .multiplicative import EPS
from .base import Factorization
from .products import block_slices, one_blas_thread


def kl_divergence(X: np.ndarray, Y: np.ndarray) -> float:
    """Generalized KL divergence D(X || Y), with 0 log 0 = 0 and Y floored at EPS."""
    return float(rel_entr(X, np.maximum(Y, EPS)).sum() - X.sum() + Y.sum())


def ratio(X: np.ndarray, U: np.ndarray, V: np.ndarray) -> np.ndarray:
    """X / (U V^T), (m x n), with the reconstruction floored at EPS (the whole matrix; see :class:`KLProducts`)."""
    Y = U @ V.T
    np.maximum(Y, EPS, out=Y)
    return np.divide(X, Y, out=Y)


class KLProducts:
    """The products of the KL updates on X (m x n), with R = X / max(U V^T, EPS) formed block by block.

    ``v_numerator(U, V)`` = R^T U (n x k), optionally with D(X || U V^T); ``u_numerator(U, V)`` = R V (m x k).
    X is read in blocks of :data:`~src.methods.nmf.BLOCK_ELEMENTS` entries along its contiguous orientation
    (samples when the rows of the data, X^T, are C-ordered; features when X is); an X with neither layout is
    copied once.
    The block products are small (b x m x k): a pass runs BLAS single-threaded
    (:func:`~src.methods.nmf.one_blas_thread`).
    """

    def __init__(self, X: np.ndarray):
        if X.T.flags.c_contiguous:
            self.M, self.samples_major = X.T, True  # rows of M are samples: M ~ V U^T
        elif X.flags.c_contiguous:
            self.M, self.samples_major = X, False  # rows of M are features: M ~ U V^T
        else:
            self.M, self.samples_major = np.ascontiguousarray(X.T), True
        p, q = self.M.shape
        self.blocks = block_slices(p, q)  # blocks of rows of M, so that a block of R stays in cache
        self.X_sum = float(X.sum())
        # the divergence needs x log(x / y) at the nonzero x only: where a block has zeros, keep the flat
        # positions of its nonzeros and their values (sparse data such as MNIST: 19% nonzero)
        self.nonzeros = []
        for block in self.blocks:
            flat = self.M[block].ravel()
            where = np.flatnonzero(flat)
            self.nonzeros.append(None if where.size == flat.size else (where, flat[where]))

    def _ratio_block(self, P_b, Q, block):
        Y = P_b @ Q.T
        np.maximum(Y, EPS, out=Y)
        return np.divide(self.M[block], Y, out=Y)

    def _fit(self, i, block, R):
        """sum x log(x / y) over block i, R = M / max(Y, EPS) of that block (0 log 0 = 0)."""
        nonzeros = self.nonzeros[i]
        if nonzeros is None:  # no zero in the block
            return float(np.dot(self.M[block].ravel(), np.log(R.ravel())))
        where, values = nonzeros
        return float(np.dot(values, np.log(R.ravel()[where])))

    def _row_side(self, P, Q, divergence):
        """R_M Q (p x k) for M ~ P Q^T, R_M = M / max(P Q^T, EPS); and sum M log R_M if asked."""
        out = np.empty_like(P)
        fit = 0.0
        for i, block in enumerate(self.blocks):
            R = self._ratio_block(P[block], Q, block)
            np.matmul(R, Q, out=out[block])
            if divergence:
                fit += self._fit(i, block, R)
        return out, fit

    def _column_side(self, P, Q, divergence):
        """R_M^T P (q x k); and sum M log R_M if asked."""
        out = np.zeros_like(Q)
        fit = 0.0
        for i, block in enumerate(self.blocks):
            R = self._ratio_block(P[block], Q, block)
            out += R.T @ P[block]
            if divergence:
                fit += self._fit(i, block, R)
        return out, fit

    def v_numerator(self, U: np.ndarray, V: np.ndarray, divergence: bool = False):
        """(R^T U (n x k), D(X || U V^T) or None): the V update's numerator and, if asked, the objective."""
        with one_blas_thread():
            if self.samples_major:
                numerator, fit = self._row_side(V, U, divergence)
            else:
                numerator, fit = self._column_side(U, V, divergence)
        if not divergence:
            return numerator, None
        return numerator, fit - self.X_sum + float(U.sum(axis=0) @ V.sum(axis=0))  # sum Y = (1^T U)(V^T 1)

    def u_numerator(self, U: np.ndarray, V: np.ndarray) -> np.ndarray:
        """R V (m x k), the U update's numerator."""
        with one_blas_thread():
            if self.samples_major:
                return self._column_side(V, U, False)[0]
            return self._row_side(U, V, False)[0]


class KeptProduct:
    """A product computed for given factors, reused only while those factors are unchanged (copies kept)."""

    def __init__(self):
        self.factors: tuple[np.ndarray, ...] | None = None
        self.value = None

    def keep(self, value, *factors):
        self.factors, self.value = tuple(f.copy() for f in factors), value

    def take(self, *factors):
        """The kept value if it was computed for exactly these factors (then forgotten), else None."""
        kept, value = self.factors, self.value
        self.factors = self.value = None
        if kept is None or len(kept) != len(factors):
            return None
        if all(a.shape == b.shape and np.array_equal(a, b) for a, b in zip(kept, factors)):
            return value
        return None


def kl_rules(X: np.ndarray):
    """Return ``(update, objective)`` of KL-divergence NMF on X (m x n)."""
    products = KLProducts(X)
    kept = KeptProduct()

    def update(factors):
        U, V = factors["U"], factors["V"]
        numerator = kept.take(U, V)  # computed by the objective at these factors
        if numerator is None:
            numerator = products.v_numerator(U, V)[0]  # V update, (X / Y)^T U, (n x k)
        denominator = np.broadcast_to(U.sum(axis=0), V.shape).copy()
        np.maximum(denominator, EPS, out=denominator)
        V *= numerator / denominator

        numerator = products.u_numerator(U, V)  # U update, (X / Y) V, (m x k)
        denominator = np.broadcast_to(V.sum(axis=0), U.shape).copy()
        np.maximum(denominator, EPS, out=denominator)
        U *= numerator / denominator

    def objective(factors):
        U, V = factors["U"], factors["V"]
        numerator, divergence = products.v_numerator(U, V, divergence=True)
        kept.keep(numerator, U, V)
        return divergence

    return update, objective


class NMFKL(Factorization):
    """Nonnegative matrix factorization X ~ U V^T with the KL divergence.

    Parameters are those of :class:`~src.methods.base.Factorization`, with ``min_iter=10`` by default (the
    minIter of Deng Cai's ``GNMF_KL``). ``embedding_`` is V with U's columns scaled to unit L2 norm, the
    normalization ``GNMF_KL_Multi.m`` applies at the end (``Norm = 2``, ``NormV = 0``).

    References
    ----------
    D. D. Lee and H. S. Seung, "Algorithms for non-negative matrix factorization", NIPS 2001.
    """

    def __init__(self, n_components=2, max_iter=10_000, tol=1e-5, init="random", random_state=None,
                 n_starts=10, min_iter=10, stopping="reference"):
        Factorization.__init__(self, n_components, max_iter, tol, init, random_state, n_starts, min_iter, stopping)

    def _rules(self, X, y):
        return kl_rules(X)

"""NMF with the generalized Kullback-Leibler divergence, Lee and Seung's multiplicative updates.

Objective: D(X || Y) = sum_ij X_ij log(X_ij / Y_ij) - X_ij + Y_ij with Y = U V^T.
Updates (V first, then U)::

    V_jk <- V_jk * sum_i U_ik X_ij / Y_ij / sum_i U_ik       (Lee & Seung 2001, eq. 5, transposed)
    U_ik <- U_ik * sum_j X_ij / Y_ij V_jk / sum_j V_jk

Cost. Both numerators are products with the ratio R = X / Y (m x n), one R per start: unlike the Frobenius
updates, the products of the starts cannot be one GEMM over all of them. :class:`KLProducts` forms R block
by block (a few rows of X at a time, in X's contiguous orientation) and never as a whole: each block of X is
read once per pass for all the starts, which then take their turn on it while it is in cache (one small GEMM
for the block of Y, the floor, the division and the product). Two passes over X per iteration, no m x n
temporary.

The objective after a sweep takes the pass that the next V update needs anyway (same U, V), hands that
numerator to the update (:class:`~src.methods.core.loop.Handoff`) and adds the divergence to it, written as

    D = sum_ij X_ij log X_ij - sum_ij X_ij log Y_ij - sum_ij X_ij + (1^T U)(V^T 1)

where the first and third sums are constants of the data (computed once, with 0 log 0 = 0) and the second
takes one ``log`` of each block of Y, in place, and a dot product with the block of X: no masking of the
zeros of X (a zero x gives 0 log y = 0, Y being floored at EPS). That log is the objective's whole extra cost,
about two thirds of a pass: an iteration with the objective costs about 2.7 passes, one without it 2.
In float32 the log is taken as log2 (twice as fast there) and the products x log y are summed in float64:
the objective then differs from its float64 value by about 1e-7 relative, far below the stopping rule's
``tol``.

With several BLAS threads (and data of a few blocks per thread) the rows of a pass are cut into as many
ranges, each run by one thread with single-threaded block products (:func:`.core.products.in_parts`); the partial
sums of the ranges are added in a fixed order.

References
----------
D. D. Lee and H. S. Seung, "Algorithms for non-negative matrix factorization", NIPS 2001.
"""

import numpy as np
from scipy.special import xlogy

from .core import products
from .core.estimator import Factorization, fit_stops_short
from .core.loop import Handoff
from .core.multiplicative import EPS, multiply
from .core.products import column_sums, in_parts, part_slices, pass_workers


def _stack(A: np.ndarray) -> np.ndarray:
    """A factor as a stack of starts: a (p x k) matrix as a stack of one (a view)."""
    return A if A.ndim == 3 else A[None]


def _broadcast_sums(A: np.ndarray, like: np.ndarray) -> np.ndarray:
    """1^T A (column sums per start) repeated over the rows of ``like``: a fresh array of ``like``'s shape."""
    return np.broadcast_to(column_sums(A), like.shape).copy()


class KLProducts:
    """The products of the KL updates on X (m x n), with R = X / max(U V^T, EPS) formed block by block.

    ``v_numerator(U, V)`` = R^T U (n x k per start), optionally with D(X || U V^T) per start;
    ``u_numerator(U, V)`` = R V (m x k per start). Factors are stacks of starts (s, p, k) or single
    (p x k) matrices; the results take the same form.

    X is read in blocks of :data:`~src.methods.core.products.BLOCK_ELEMENTS` entries along its contiguous
    orientation (samples when the rows of the data, X^T, are C-ordered; features when X is); an X with
    neither layout is copied once. Within a block the starts take their turn (one R_i = X_b / Y_b,i in cache
    at a time). The block products are small (b x q x k) and run single-threaded; with w > 1 BLAS threads
    (:func:`~src.methods.core.products.pass_workers`) the rows are cut into w ranges, one per thread.

    Parameters
    ----------
    X : ndarray of shape (m, n)
        The data, one sample per column, nonnegative.
    """

    def __init__(self, X: np.ndarray):
        if X.T.flags.c_contiguous:
            self.M, self.samples_major = X.T, True  # rows of M are samples: M ~ V U^T
        elif X.flags.c_contiguous:
            self.M, self.samples_major = X, False  # rows of M are features: M ~ U V^T
        else:
            self.M, self.samples_major = np.ascontiguousarray(X.T), True
        self._parts: dict[int, list[list[slice]]] = {}
        self._buffers: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self.X_sum = 0.0  # sum x and sum x log x (0 log 0 = 0), in float64 block by block
        self.X_log_X = 0.0
        for block in self._blocks(1)[0]:
            values = self.M[block].astype(np.float64)
            self.X_sum += float(values.sum())
            self.X_log_X += float(xlogy(values, values).sum())

    # -- blocks, threads and buffers ------------------------------------------------------------------
    def _blocks(self, workers: int) -> list[list[slice]]:
        """The rows of M cut into ``workers`` contiguous ranges, each in blocks that stay in cache."""
        if workers not in self._parts:
            self._parts[workers] = part_slices(*self.M.shape, workers)
        return self._parts[workers]

    def _buffer(self, part: int, rows: int, width: int):
        """Scratch arrays of worker ``part``: Y and R blocks (rows x q) and one (q x width) product."""
        q = self.M.shape[1]
        kept = self._buffers.get(part)
        if kept is None or kept[0].shape[0] < rows or kept[2].shape[1] != width:
            kept = (np.empty((rows, q), self.M.dtype), np.empty((rows, q), self.M.dtype),
                    np.empty((q, width), self.M.dtype))
            self._buffers[part] = kept
        return kept

    # -- one pass ---------------------------------------------------------------------------------------
    def _part(self, index: int, blocks: list[slice], P, Q, row_side: bool, divergence: bool, out):
        """The blocks of one row range, every start in turn on each block (see :meth:`_pass`).

        Returns (sum over these blocks of R_i^T P_i[b] per start, or None on the row side; and
        sum x log y per start, or None).
        """
        s, k = P.shape[0], P.shape[2]
        Y, R, product = self._buffer(index, max(b.stop - b.start for b in blocks), k)
        acc = None if row_side else np.zeros((s, self.M.shape[1], k), dtype=self.M.dtype)
        fits = np.zeros(s) if divergence else None
        single = self.M.dtype != np.float64
        for block in blocks:
            M_b = self.M[block]
            rows = block.stop - block.start
            Y_b, R_b = Y[:rows], R[:rows]
            for i in range(s):
                P_b = P[i, block]
                np.matmul(P_b, Q[i].T, out=Y_b)
                if Y_b.min() < EPS:  # rare (a zero column of a factor): floor only then
                    np.maximum(Y_b, EPS, out=Y_b)
                np.divide(M_b, Y_b, out=R_b)
                if row_side:
                    np.matmul(R_b, Q[i], out=out[i, block])
                else:
                    np.matmul(R_b.T, P_b, out=product)
                    acc[i] += product
                if divergence:  # sum x log y over the block
                    if single:  # float32: log2 (twice as fast as log), the products summed in float64
                        np.log2(Y_b, out=Y_b)
                        fits[i] += np.multiply(M_b, Y_b, out=Y_b).sum(dtype=np.float64)
                    else:
                        np.log(Y_b, out=Y_b)
                        fits[i] += np.dot(M_b.ravel(), Y_b.ravel())
        if divergence and single:
            fits *= np.log(2.0)
        return acc, fits

    def _pass(self, P: np.ndarray, Q: np.ndarray, row_side: bool, divergence: bool):
        """One pass over M ~ P Q^T (stacks): R_i Q_i (p x k) if ``row_side`` else R_i^T P_i (q x k), R_i =
        M / max(P_i Q_i^T, EPS); and sum M log max(P_i Q_i^T, EPS) per start if ``divergence``."""
        out = np.empty(P.shape, dtype=self.M.dtype) if row_side else None
        parts = self._blocks(pass_workers(self.M.size))
        results = in_parts(lambda j: self._part(j, parts[j], P, Q, row_side, divergence, out), len(parts))
        if not row_side:  # partial sums of the row ranges, added in a fixed order
            out = results[0][0]
            for acc, _ in results[1:]:
                out += acc
        fits = None
        if divergence:
            fits = results[0][1]
            for _, part_fits in results[1:]:
                fits = fits + part_fits
        return out, fits

    # -- the numerators ---------------------------------------------------------------------------------
    def v_numerator(self, U: np.ndarray, V: np.ndarray, divergence: bool = False):
        """(R^T U (n x k per start), D(X || U V^T) per start or None): the V update's numerator and the objective.

        The divergence is an array of shape (s,) for stacks of s starts, a float for (p x k) matrices.
        """
        U3, V3 = _stack(U), _stack(V)
        if self.samples_major:
            numerator, fits = self._pass(V3, U3, True, divergence)
        else:
            numerator, fits = self._pass(U3, V3, False, divergence)
        if U.ndim == 2:
            numerator = numerator[0]
        if not divergence:
            return numerator, None
        Y_sums = np.einsum("sk,sk->s", U3.sum(axis=-2, dtype=np.float64), V3.sum(axis=-2, dtype=np.float64))
        values = self.X_log_X - fits - self.X_sum + Y_sums  # sum Y = (1^T U)(V^T 1)
        return numerator, (float(values[0]) if U.ndim == 2 else values)

    def u_numerator(self, U: np.ndarray, V: np.ndarray) -> np.ndarray:
        """R V (m x k per start), the U update's numerator."""
        U3, V3 = _stack(U), _stack(V)
        if self.samples_major:
            numerator = self._pass(V3, U3, False, False)[0]
        else:
            numerator = self._pass(U3, V3, True, False)[0]
        return numerator if U.ndim == 3 else numerator[0]


def kl_rules(X: np.ndarray):
    """Return ``(update, objective)`` of KL-divergence NMF on X (m x n), over stacks of starts.

    The objective's pass computes the next V update's numerator at the same factors and hands it over
    (:class:`~src.methods.core.loop.Handoff`): with the objective after every update, two passes per iteration.
    Single (p x k) factors are accepted too (the objective is then a float).
    """
    products = KLProducts(X)
    handoff = Handoff()

    def update(factors):
        U, V = factors["U"], factors["V"]
        numerator = handoff.take(U, V)  # computed by the objective at these factors
        if numerator is None:
            numerator = products.v_numerator(U, V)[0]  # V update, (X / Y)^T U, (n x k)
        multiply(V, numerator, _broadcast_sums(U, V))  # / 1_n 1_m^T U
        multiply(U, products.u_numerator(U, V), _broadcast_sums(V, U))  # U update, (X / Y) V / 1_m 1_n^T V

    def objective(factors):
        U, V = factors["U"], factors["V"]
        numerator, divergence = products.v_numerator(U, V, divergence=True)
        handoff.keep(numerator, U, V)
        return divergence

    return update, objective


class NMFKL(Factorization):
    """Nonnegative matrix factorization X ~ U V^T with the KL divergence.

    Parameters are those of :class:`~src.methods.core.estimator.Factorization`, with ``min_iter=10`` by default (the
    minIter of Deng Cai's ``GNMF_KL``). ``embedding_`` is V with U's columns scaled to unit L2 norm, the
    normalization ``GNMF_KL_Multi.m`` applies at the end (``Norm = 2``, ``NormV = 0``).

    References
    ----------
    D. D. Lee and H. S. Seung, "Algorithms for non-negative matrix factorization", NIPS 2001.
    """

    batched = True
    products_per_iteration = 3  # U V^T (the ratio R = X / U V^T), R^T U and R V
    loss = "kl"
    _expected_failed_checks = fit_stops_short("the KL rule for V with U fixed")

    def __init__(self, n_components=2, *, max_iter=10_000, tol=1e-5, init="random", random_state=None,
                 n_starts=10, min_iter=10, stopping="reference", dtype="float64"):
        Factorization.__init__(self, n_components, max_iter=max_iter, tol=tol, init=init, random_state=random_state,
                               n_starts=n_starts, min_iter=min_iter, stopping=stopping, dtype=dtype)

    def _rules(self, X, y):
        return kl_rules(X)

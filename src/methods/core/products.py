"""Products with the data matrix, blocks of samples and the BLAS thread policy, for every method.

The methods iterate several starts at once (see :mod:`src.methods.core.loop`): a factor is a **stack** of shape
(s, p, k), one (p x k) matrix per start, and a product with the shared data matrix X (m x n) is one GEMM
over the s k columns of all starts, X^T [U_1 ... U_s], not s small ones. The helpers here accept a stack
or a single (p x k) matrix and return the same form.

Threads. A fit runs in the threads numpy's BLAS is given (``threadpoolctl``): the sweeps of this project
give each job one (``runtime.blas_threads``), a researcher calling an estimator directly gets the library
default (every core). With OpenBLAS the products with X take their short-and-wide form
(:func:`short_and_wide`), at any number of threads, and the passes over X go by blocks of samples that stay
in cache (:class:`SampleBlocks`); with several threads the blocks are shared out among them
(:func:`pass_workers`, :func:`in_parts`), each thread running its block products single-threaded.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext

import numpy as np
import scipy.sparse as sp
from threadpoolctl import ThreadpoolController

BLAS = ThreadpoolController().select(user_api="blas")
"""numpy's BLAS (as loaded when this module is imported): its thread count is read by :func:`blas_threads`."""
_BLAS = BLAS.lib_controllers

FUSED_MAX_WIDTH = 16
"""Widest products (columns over all starts) that :class:`SampleBlocks` fuses block by block: thin products
re-read X from memory and gain from a pass over cache-sized blocks; wider ones (k = 20, or many starts
together) are compute-bound and run faster as two whole GEMMs."""

SUBNORMAL_LOOK_EVERY = 10
"""Passes of a :class:`SampleBlocks` between two looks for subnormal entries in its factors (a look costs a few
microseconds, a few percent of an update on ORL or Yale)."""

BLOCK_ELEMENTS = 2**16
"""Entries of X per block of every blocked pass (:class:`SampleBlocks`, the KL products, COP-KMeans): 512 kB
in float64, so that a block stays in cache."""


def blas_threads() -> int:
    """Threads numpy's BLAS runs with now (0 when it was not found): ``threadpool_limits`` or the default."""
    return max((lib.get_num_threads() or 0 for lib in _BLAS), default=0)


def one_blas_thread():
    """Context in which numpy's BLAS runs single-threaded (a no-op when it already does).

    For loops of many small products (blocks of X that fit in cache): split across threads, each of them
    would be synchronized, hundreds of times per pass.
    """
    return BLAS.limit(limits=1) if blas_threads() > 1 else nullcontext()


def short_and_wide() -> bool:
    """Whether products with X take the short-and-wide form: numpy's BLAS is OpenBLAS.

    OpenBLAS runs (k x m)(m x n) faster than (n x m)(m x k) at this project's shapes (k <= 11 per start),
    with the same result up to rounding. With another BLAS the products are written as the equations read.
    """
    return len(_BLAS) > 0 and all(lib.internal_api == "openblas" for lib in _BLAS)


PARALLEL_MIN_BLOCKS = 4
"""A blocked pass is shared among threads only when X has at least this many blocks per thread: below, the
hand-over to the threads costs more than it saves."""

_POOLS: dict[int, ThreadPoolExecutor] = {}


def pass_workers(size: int) -> int:
    """Threads a blocked pass over data of ``size`` entries runs in: the BLAS threads when the data have at
    least :data:`PARALLEL_MIN_BLOCKS` blocks per thread, else one."""
    threads = blas_threads()
    return threads if threads > 1 and size >= PARALLEL_MIN_BLOCKS * threads * BLOCK_ELEMENTS else 1


def part_slices(length: int, width: int, workers: int) -> list[list[slice]]:
    """``range(length)`` cut into ``workers`` contiguous ranges (fewer if ``length`` is smaller), each in
    blocks of :func:`block_rows` rows of ``width`` entries."""
    bounds = [length * j // workers for j in range(workers + 1)]
    return [[slice(lo + block.start, lo + block.stop) for block in block_slices(hi - lo, width)]
            for lo, hi in zip(bounds[:-1], bounds[1:]) if hi > lo]


def in_parts(part, n_parts: int) -> list:
    """``[part(0), ..., part(n_parts - 1)]``, run by as many threads of a process-wide pool when
    ``n_parts`` > 1, with numpy's BLAS single-threaded inside (numpy releases the GIL in its BLAS calls and
    ufuncs). The results come back in order, so that partial sums can be added in a fixed order."""
    with one_blas_thread():
        if n_parts == 1:
            return [part(0)]
        if n_parts not in _POOLS:
            _POOLS[n_parts] = ThreadPoolExecutor(n_parts, thread_name_prefix="blocked-pass")
        return list(_POOLS[n_parts].map(part, range(n_parts)))


def flat(B: np.ndarray) -> np.ndarray:
    """A stack (s, p, k) as one (p, s k) matrix [B_1 ... B_s] (a view when s = 1); a matrix as it is."""
    if B.ndim == 2:
        return B
    s, p, k = B.shape
    return B[0] if s == 1 else B.transpose(1, 0, 2).reshape(p, s * k)


def unflat(P: np.ndarray, like: np.ndarray) -> np.ndarray:
    """The (q, s k) matrix P as a stack (s, q, k) shaped like ``like`` (s, ., k) (a view); a matrix as it is."""
    if like.ndim == 2:
        return P
    s, _, k = like.shape
    return P.reshape(P.shape[0], s, k).transpose(1, 0, 2)


def dot(M, B: np.ndarray) -> np.ndarray:
    """M B_i for every start i in one product: M (p x q), dense or sparse, B a stack (s, q, k) or (q x k)."""
    return unflat(np.asarray(M @ flat(B)), B)


def xt_dot(X, B: np.ndarray) -> np.ndarray:
    """X^T B (n x k per start) for data X (m x n) and a factor B (m x k per start), one product for all starts.

    Dense X with OpenBLAS: computed as (B^T X)^T (see :func:`short_and_wide`).
    """
    F = flat(B)
    if not sp.issparse(X) and short_and_wide():
        return unflat((F.T @ X).T, B)
    return unflat(np.asarray(X.T @ F), B)


def x_dot(X, B: np.ndarray) -> np.ndarray:
    """X B (m x k per start) for data X (m x n) and a factor B (n x k per start); see :func:`xt_dot`."""
    F = flat(B)
    if not sp.issparse(X) and short_and_wide():
        return unflat((F.T @ X.T).T, B)
    return unflat(np.asarray(X @ F), B)


def _below_normal(B: np.ndarray) -> np.ndarray:
    """Where abs(B) is below the smallest normal number of its dtype: its zeros and its subnormal entries."""
    return np.abs(B) < np.finfo(B.dtype).tiny


def has_subnormals(B: np.ndarray) -> bool:
    """Whether B holds subnormal numbers: entries b with 0 < abs(b) < the smallest normal number of its dtype."""
    return bool(np.any(_below_normal(B) & (B != 0)))


def without_subnormals(F: np.ndarray) -> np.ndarray:
    """A copy of F with its subnormal entries as zeros, to be read by a product."""
    return np.where(_below_normal(F), 0, F)


def gram(B: np.ndarray) -> np.ndarray:
    """B^T B, (k x k) per start."""
    return B.mT @ B


def inner(A: np.ndarray, B: np.ndarray) -> np.ndarray | float:
    """<A_i, B_i> = sum of A_i * B_i per start: shape (s,) for stacks, a float for matrices."""
    if A.ndim == 2:
        return float(np.vdot(A, B)) if A.flags.c_contiguous and B.flags.c_contiguous else \
            float(np.einsum("ij,ij->", A, B))
    return np.einsum("sij,sij->s", A, B)


def squared_norm(X) -> float:
    """||X||_F^2 of a dense (any memory layout, no copy) or sparse matrix."""
    if sp.issparse(X):
        data = X.data
        return float(np.dot(data, data))
    return float(np.einsum("ij,ij->", X, X))


def column_sums(B: np.ndarray) -> np.ndarray:
    """1^T B: the column sums, (1 x k) per start, shaped to broadcast against B."""
    return B.sum(axis=-2, keepdims=True)


def column_norms(B: np.ndarray) -> np.ndarray:
    """L2 norms of B's columns, (1 x k) per start, shaped to broadcast against B."""
    return np.sqrt(np.einsum("...ij,...ij->...j", B, B))[..., None, :]


def block_rows(width: int) -> int:
    """Rows of ``width`` entries in one block of :data:`BLOCK_ELEMENTS` entries (at least 1)."""
    return max(1, BLOCK_ELEMENTS // max(width, 1))


def block_slices(length: int, width: int) -> list[slice]:
    """Consecutive blocks of :func:`block_rows` rows covering ``range(length)``."""
    step = block_rows(width)
    return [slice(start, min(start + step, length)) for start in range(0, length, step)]


class SampleBlocks:
    """Fused passes over X (m x n) by blocks of samples (columns), for updates whose rows are independent.

    ``fused(P, rule, B)`` reads each block X_b once: G_b = X_b^T P (rows b of X^T P, every start), then
    ``rule(b, G_b)`` updates the rows b of B in place, then X_b B_b is added to X B. One pass over X instead
    of two (X^T P, then X B with the new B), the blocks staying in cache. With several BLAS threads the
    samples are cut into as many contiguous ranges (:func:`pass_workers`), one thread each, and their
    partial sums of X B are added in a fixed order. Sparse X, another BLAS than OpenBLAS
    (:func:`short_and_wide`) or products wider than :data:`FUSED_MAX_WIDTH` use the two whole products
    instead; the result is the same up to rounding.

    ``rule`` must touch only the rows ``b`` of what it updates: blocks of different threads run at once.

    Subnormal numbers. A multiplicative rule can drive factor entries below the smallest normal float (about
    2.2e-308 in float64; PCGNMF's pairwise terms do, on COIL20), and every arithmetic instruction that reads a
    subnormal operand is many times slower on x86 CPUs: a product with X reads each entry m or n times. Every
    :data:`SUBNORMAL_LOOK_EVERY` passes the pass looks for them in P and B; while it finds some, the products
    read the factors with those entries as zeros (:func:`without_subnormals`). The factors keep them, so the
    rules, which can grow an entry back, see every bit. The products do not change: a subnormal entry adds to
    a sum a term below half a unit in the last place of any sum of magnitude above about 1e-292, which rounds
    back to the sum (tested on whole fits, and on every cell of the reproduction).

    Parameters
    ----------
    X : ndarray of shape (m, n) or scipy.sparse matrix
        The data, one sample per column.
    """

    def __init__(self, X):
        self.X = X
        m, n = X.shape
        self.blocks = block_slices(n, m)  # blocks of samples, the columns of X
        self._parts: dict[int, list[list[slice]]] = {1: [self.blocks]}
        self._passes = 0
        self._subnormal = (False, False)  # in P, in B, when last looked

    def _subnormals(self, P: np.ndarray, B: np.ndarray) -> tuple[bool, bool]:
        """Whether P and B held subnormal entries when last looked (every :data:`SUBNORMAL_LOOK_EVERY` passes)."""
        if self._passes % SUBNORMAL_LOOK_EVERY == 0:
            self._subnormal = (has_subnormals(P), has_subnormals(B))
        self._passes += 1
        return self._subnormal

    def parts(self, workers: int) -> list[list[slice]]:
        """The blocks of samples in ``workers`` contiguous ranges (:func:`part_slices`)."""
        if workers not in self._parts:
            self._parts[workers] = part_slices(self.X.shape[1], self.X.shape[0], workers)
        return self._parts[workers]

    def fused(self, P: np.ndarray, rule, B: np.ndarray) -> np.ndarray:
        """Apply ``rule(block, (X^T P)[..., block, :])`` to every block of samples; return X B with the new B.

        P is (m x k) per start and B (n x k) per start, stacks or matrices alike.
        """
        F = flat(P)
        if sp.issparse(self.X) or not short_and_wide() or F.shape[1] > FUSED_MAX_WIDTH:
            rule(slice(None), xt_dot(self.X, P))
            return x_dot(self.X, B)
        X = self.X
        parts = self.parts(pass_workers(X.shape[0] * X.shape[1]))
        dtype = np.result_type(X, B)
        in_P, in_B = self._subnormals(F, B)
        if in_P:
            F = without_subnormals(F)
        read_B = (lambda B_b: without_subnormals(flat(B_b))) if in_B else flat

        def part(index):  # X B summed over the blocks of one range of samples
            XB = np.zeros((X.shape[0], F.shape[1]), dtype=dtype)
            for block in parts[index]:
                X_b = X[:, block]
                rule(block, unflat(X_b.T @ F, P))  # the rule updates rows ``block`` of B
                XB += X_b @ read_B(B[..., block, :])
            return XB

        sums = in_parts(part, len(parts))
        XB = sums[0]
        for partial in sums[1:]:
            XB += partial
        return unflat(XB, B)

"""NMF with the Frobenius loss, Lee and Seung's multiplicative updates.

Objective: O = ||X - U V^T||_F^2, X (m x n) >= 0, U (m x k), V (n x k).
Updates (V first, then U, as Deng Cai's GNMF code and scikit-learn's ``solver="mu"`` order them):

    V <- V * (X^T U) / (V U^T U)        (Lee & Seung 2001, eq. 4, transposed)
    U <- U * (X V) / (U V^T V)

References
----------
D. D. Lee and H. S. Seung, "Algorithms for non-negative matrix factorization", NIPS 2001.
"""

from contextlib import nullcontext

import numpy as np
from threadpoolctl import ThreadpoolController

from .base import EPS, Factorization


BLAS = ThreadpoolController().select(user_api="blas")
"""numpy's BLAS (as loaded when this module is imported): its thread count is read by :func:`blas_threads`."""
_BLAS = BLAS.lib_controllers


def blas_threads() -> int:
    """Threads numpy's BLAS runs with now (0 when it was not found): ``threadpool_limits`` or the default."""
    return max((lib.get_num_threads() or 0 for lib in _BLAS), default=0)


def one_blas_thread():
    """Context in which numpy's BLAS runs single-threaded (a no-op when it already does).

    For loops of many small products (blocks of X that fit in cache): split across threads, each of them
    would be synchronized, hundreds of times per pass; the elementwise work around them is single-threaded in
    numpy anyway.
    """
    return BLAS.limit(limits=1) if blas_threads() > 1 else nullcontext()


def _short_and_wide() -> bool:
    """Whether :func:`xt_dot` and :func:`x_dot` take the short-and-wide form: single-threaded OpenBLAS only.

    With one thread (the project's ``runtime.blas_threads``) OpenBLAS runs (k x m)(m x n) 1.5-2x faster than
    (n x m)(m x k) at this project's shapes (k <= 11; measured on MNIST-10k, MNIST-70k and COIL20, bitwise the
    same result). With two threads on a loaded machine the wide form was measured up to 7x slower than the
    plain one (OpenBLAS splits it across threads in small synchronized panels), so with more than one thread,
    or another BLAS, the plain form is kept.
    """
    return len(_BLAS) > 0 and all(lib.internal_api == "openblas" and lib.get_num_threads() == 1 for lib in _BLAS)


def xt_dot(X: np.ndarray, B: np.ndarray) -> np.ndarray:
    """X^T B (n x k) for data X (m x n) and a factor B (m x k).

    Single-threaded OpenBLAS: computed as (B^T X)^T, a transposed (Fortran-ordered) view; see
    :func:`_short_and_wide`. Otherwise X^T B as written.
    """
    return (B.T @ X).T if _short_and_wide() else X.T @ B


def x_dot(X: np.ndarray, B: np.ndarray) -> np.ndarray:
    """X B (m x k) for data X (m x n) and a factor B (n x k); (B^T X^T)^T with single-threaded OpenBLAS."""
    return (B.T @ X.T).T if _short_and_wide() else X @ B


BLOCK_ELEMENTS = 2**16
"""Entries of X per block of every blocked pass (:class:`SampleBlocks`, the KL products, COP-KMeans): 512 kB
in float64, so that a block stays in cache."""


def block_rows(width: int) -> int:
    """Rows of ``width`` entries in one block of :data:`BLOCK_ELEMENTS` entries (at least 1)."""
    return max(1, BLOCK_ELEMENTS // max(width, 1))


def block_slices(length: int, width: int) -> list[slice]:
    """Consecutive blocks of :func:`block_rows` rows covering ``range(length)``."""
    step = block_rows(width)
    return [slice(start, min(start + step, length)) for start in range(0, length, step)]


class SampleBlocks:
    """Fused passes over X (m x n) by blocks of samples (columns), for updates whose rows are independent.

    ``fused(P, rule, B)`` reads each block X_b once: G_b = X_b^T P (rows b of X^T P), then ``rule(b, G_b)``
    updates the rows b of B in place, then X_b B_b is added to X B. One pass over X instead of two (X^T P,
    then X B with the new B): 1.2-1.7x faster than the two whole products with one BLAS thread (measured on
    COIL20, MNIST-10k and MNIST-70k; a block of about 64 samples is the fastest there, 16 or 1,000 are
    slower). The block products run single-threaded (:func:`one_blas_thread`).
    """

    def __init__(self, X: np.ndarray):
        self.X = X
        m, n = X.shape
        self.blocks = block_slices(n, m)  # blocks of samples, the columns of X

    def fused(self, P: np.ndarray, rule, B: np.ndarray) -> np.ndarray:
        """Apply ``rule(block, (X^T P)[block])`` to every block of samples; return X B with the updated B."""
        XB = np.zeros((self.X.shape[0], B.shape[1]))
        with one_blas_thread():
            for block in self.blocks:
                X_b = self.X[:, block]
                rule(block, X_b.T @ P)
                XB += X_b @ B[block]
        return XB


def squared_norm(X: np.ndarray) -> float:
    """||X||_F^2 of a dense array in any memory layout, without copying it."""
    return float(np.einsum("ij,ij->", X, X))


def frobenius_objective(X: np.ndarray, U: np.ndarray, V: np.ndarray, XV: np.ndarray | None = None,
                        X_norm2: float | None = None) -> float:
    """||X - U V^T||_F^2 without forming U V^T.

    Uses ||X||^2 - 2 tr(U^T X V) + tr(U^T U V^T V); ``XV`` (m x k) and ``X_norm2`` = ||X||^2 may be passed
    when already computed.
    """
    if XV is None:
        XV = x_dot(X, V)
    if X_norm2 is None:
        X_norm2 = squared_norm(X)
    return float(X_norm2 - 2.0 * np.vdot(U, XV) + np.vdot(U.T @ U, V.T @ V))


def frobenius_rules(X: np.ndarray):
    """Return ``(update, objective)`` of Frobenius NMF on X (m x n).

    The V update reads X once (:class:`SampleBlocks`): X^T U for a block of samples, their new rows of V,
    and X V accumulated from the same block; the U update and the objective after the sweep use that X V.
    One pass over X per iteration.
    """
    reuse: dict[str, np.ndarray] = {}
    X_norm2 = squared_norm(X)
    blocks = SampleBlocks(X)

    def update(factors):
        U, V = factors["U"], factors["V"]
        UtU = U.T @ U

        def v_rule(block, XtU_block):  # V update, rows ``block``: V * X^T U / (V U^T U)
            denominator = V[block] @ UtU
            np.maximum(denominator, EPS, out=denominator)
            V[block] *= XtU_block / denominator

        numerator = blocks.fused(U, v_rule, V)  # the V update and X V (m x k) in one pass over X
        reuse["XV"] = numerator  # U update, X V
        denominator = U @ (V.T @ V)
        np.maximum(denominator, EPS, out=denominator)
        U *= numerator / denominator

    def objective(factors):
        return frobenius_objective(X, factors["U"], factors["V"], reuse.pop("XV", None), X_norm2)

    return update, objective


class NMF(Factorization):
    """Nonnegative matrix factorization X ~ U V^T with the Frobenius loss.

    Parameters are those of :class:`~src.methods.base.Factorization`. ``factors_`` holds ``U`` (m x k)
    and ``V`` (n x k) as iterated; ``embedding_`` is V with U's columns scaled to unit L2 norm.

    References
    ----------
    D. D. Lee and H. S. Seung, "Algorithms for non-negative matrix factorization", NIPS 2001.
    """

    def _rules(self, X, y):
        return frobenius_rules(X)

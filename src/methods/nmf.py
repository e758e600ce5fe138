"""NMF with the Frobenius loss, Lee and Seung's multiplicative updates.

Objective: O = ||X - U V^T||_F^2, X (m x n) >= 0, U (m x k), V (n x k).
Updates (V first, then U, as Deng Cai's GNMF code and scikit-learn's ``solver="mu"`` order them):

    V <- V * (X^T U) / (V U^T U)        (Lee & Seung 2001, eq. 4, transposed)
    U <- U * (X V) / (U V^T V)

References
----------
D. D. Lee and H. S. Seung, "Algorithms for non-negative matrix factorization", NIPS 2001.
"""

import numpy as np
from threadpoolctl import ThreadpoolController

from .base import EPS, Factorization


BLAS = ThreadpoolController().select(user_api="blas")
"""numpy's BLAS (as loaded when this module is imported): its thread count is read by :func:`blas_threads`."""
_BLAS = BLAS.lib_controllers


def blas_threads() -> int:
    """Threads numpy's BLAS runs with now (0 when it was not found): ``threadpool_limits`` or the default."""
    return max((lib.get_num_threads() or 0 for lib in _BLAS), default=0)


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

    The U update computes X V with the new V; the objective after the sweep reuses it instead of
    recomputing the m x n x k product.
    """
    reuse: dict[str, np.ndarray] = {}
    X_norm2 = squared_norm(X)

    def update(factors):
        U, V = factors["U"], factors["V"]
        numerator = xt_dot(X, U)  # V update, X^T U (n x k)
        denominator = V @ (U.T @ U)
        np.maximum(denominator, EPS, out=denominator)
        V *= numerator / denominator

        numerator = x_dot(X, V)  # U update, X V (m x k)
        reuse["XV"] = numerator.copy()
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

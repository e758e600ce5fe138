"""The Frobenius-loss pieces several methods share: the U update and the objective ||X - U V^T||_F^2.

Every method of the NMF family with a squared-error fit (NMF, GNMF, SemiGNMF, CNMF, FNMF, NPNMF, PCGNMF,
sparse NMF, NLCF) updates the basis with Lee and Seung's rule and evaluates the fit without forming U V^T:

    U <- U * (X V) / (U V^T V)                                  (Lee & Seung 2001, eq. 4)
    ||X - U V^T||_F^2 = ||X||^2 - 2 <U, X V> + <U^T U, V^T V>

Factors are stacks of starts, (s, m, k) and (s, n, k), or single matrices (see :mod:`.products`).

References
----------
D. D. Lee and H. S. Seung, "Algorithms for non-negative matrix factorization", NIPS 2001.
"""

import numpy as np

from .multiplicative import multiply
from .products import gram, inner, squared_norm, x_dot


def u_update(U: np.ndarray, V: np.ndarray, XV: np.ndarray) -> None:
    """U <- U * (X V) / (U V^T V), in place; ``XV`` = X V (m x k per start) with the current V."""
    multiply(U, XV, U @ gram(V))


def objective(X, U: np.ndarray, V: np.ndarray, XV: np.ndarray | None = None, X_norm2: float | None = None):
    """||X - U V^T||_F^2 per start without forming U V^T (shape (s,) for stacks, a float for matrices).

    ``XV`` = X V and ``X_norm2`` = ||X||_F^2 may be passed when already computed.
    """
    if XV is None:
        XV = x_dot(X, V)
    if X_norm2 is None:
        X_norm2 = squared_norm(X)
    return X_norm2 - 2.0 * inner(U, XV) + inner(gram(U), gram(V))

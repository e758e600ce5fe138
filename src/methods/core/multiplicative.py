"""The multiplicative update itself, shared by every method: guard the denominator, multiply in place.

Every rule of the methods here reads F <- F * numerator / denominator (Lee and Seung's form), with the
denominator floored at :data:`EPS` so that a zero never divides; :func:`multiply` is that one line.

References
----------
D. D. Lee and H. S. Seung, "Algorithms for non-negative matrix factorization", NIPS 2001.
"""

import numpy as np

EPS = 1e-10
"""Floor applied to every multiplicative-update denominator (Deng Cai's GNMF code uses the same value)."""


def multiply(factor: np.ndarray, numerator: np.ndarray, denominator: np.ndarray) -> None:
    """factor <- factor * numerator / max(denominator, EPS), in place.

    ``denominator`` must be a fresh array (it is overwritten); ``numerator`` may broadcast against it.
    Any shape: a stack of starts (s, p, k) or one matrix.
    """
    np.maximum(denominator, EPS, out=denominator)
    np.divide(numerator, denominator, out=denominator)
    factor *= denominator

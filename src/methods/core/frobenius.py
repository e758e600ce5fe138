"""The Frobenius-loss pieces several methods share: the U update, the objective ||X - U V^T||_F^2, NMF's rules.

Every method of the NMF family with a squared-error fit (NMF, GNMF, SemiGNMF, CNMF, FNMF, NPNMF, PCGNMF,
sparse NMF, NLCF) updates the basis with Lee and Seung's rule and evaluates the fit without forming U V^T::

    U <- U * (X V) / (U V^T V)                                  (Lee & Seung 2001, eq. 4)
    ||X - U V^T||_F^2 = ||X||^2 - 2 <U, X V> + <U^T U, V^T V>

:func:`frobenius_rules` is plain NMF with the Frobenius loss (V first, then U, as Deng Cai's GNMF code and
scikit-learn's ``solver="mu"`` order them): the rules of :class:`~src.methods.nmf.NMF` and of NMF-NCW, and
those of every graph method on a single new sample, which has no neighbour (``transform``).

Factors are stacks of starts, (s, m, k) and (s, n, k), or single matrices (see :mod:`.products`).

References
----------
D. D. Lee and H. S. Seung, "Algorithms for non-negative matrix factorization", NIPS 2001.
"""

import numpy as np

from .loop import Handoff
from .multiplicative import multiply
from .products import SampleBlocks, gram, inner, squared_norm, x_dot


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


def frobenius_rules(X):
    """Return ``(update, objective)`` of Frobenius NMF on X (m x n), over stacks of starts.

    V <- V * (X^T U) / (V U^T U), then U <- U * (X V) / (U V^T V) (Lee & Seung 2001, eq. 4). The V update
    reads X once (:class:`~.products.SampleBlocks`): X^T U for a block of samples, their new rows of V, and
    X V accumulated from the same block; the U update and the objective after the sweep use that X V. One
    pass over X per iteration.
    """
    handoff = Handoff()
    X_norm2 = squared_norm(X)
    blocks = SampleBlocks(X)

    def update(factors):
        U, V = factors["U"], factors["V"]
        handoff.clear()
        UtU = gram(U)

        def v_rule(block, XtU_block):  # V update, rows ``block``: V * X^T U / (V U^T U)
            multiply(V[..., block, :], XtU_block, V[..., block, :] @ UtU)

        XV = blocks.fused(U, v_rule, V)  # the V update and X V (m x k) in one pass over X
        u_update(U, V, XV)
        handoff.keep(XV, U, V)

    def objective_of(factors):
        U, V = factors["U"], factors["V"]
        return objective(X, U, V, handoff.take(U, V), X_norm2)

    return update, objective_of

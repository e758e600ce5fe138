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

from collections.abc import Callable

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


class DataTerm:
    """The data term ||X - U V^T||_F^2 of rules that update V in one pass over X, then U (NMF, GNMF, SemiGNMF,
    NPNMF, PCGNMF).

    Holds what such rules set up once: X by blocks of samples (:class:`~.products.SampleBlocks`), ||X||_F^2,
    and the products one step computes and the next needs (:class:`~.loop.Handoff`): the update hands X V
    and V^T V to the objective, which then needs no product with X, and the objective hands U^T U to the
    next update's V rule (the loop evaluates the objective after every update once one start is left). Each
    is the same product of the same arrays the receiver would compute: the numbers do not change.

    Parameters
    ----------
    X : ndarray of shape (m, n) or scipy.sparse matrix
        The data, one sample per column.

    Attributes
    ----------
    blocks : SampleBlocks
        X by blocks of samples, for the V pass.

    References
    ----------
    D. D. Lee and H. S. Seung, "Algorithms for non-negative matrix factorization", NIPS 2001.
    """

    def __init__(self, X):
        self.X = X
        self.X_norm2 = squared_norm(X)
        self.blocks = SampleBlocks(X)
        self._to_objective = Handoff()  # (X V, V^T V) of the last update
        self._to_update = Handoff()  # U^T U of the last objective

    def update(self, U: np.ndarray, V: np.ndarray,
               v_pass: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]) -> None:
        """One iteration in place: ``v_pass(U, V, UtU)`` updates V in one pass over X, given U^T U, and returns X V
        (m x k per start) with the new V; then U <- U * (X V) / (U V^T V), and X V, V^T V are kept for
        :meth:`objective`.

        U and V are (m x k) and (n x k) per start, stacks (s, ., k) or matrices.
        """
        UtU = self._to_update.take(U)
        if UtU is None:
            UtU = gram(U)
        self._to_objective.clear()
        XV = v_pass(U, V, UtU)
        VtV = gram(V)
        multiply(U, XV, U @ VtV)  # U update (Lee & Seung 2001, eq. 4), as :func:`u_update`
        self._to_objective.keep((XV, VtV), U, V)

    def objective(self, U: np.ndarray, V: np.ndarray):
        """||X - U V^T||_F^2 per start (shape (s,) for stacks), as :func:`objective`, with the X V and V^T V of the
        last update if it was for these very U and V; keeps U^T U for the next update."""
        kept = self._to_objective.take(U, V)
        XV, VtV = (x_dot(self.X, V), gram(V)) if kept is None else kept
        UtU = gram(U)
        self._to_update.keep(UtU, U)
        return self.X_norm2 - 2.0 * inner(U, XV) + inner(UtU, VtV)


def frobenius_rules(X):
    """Return ``(update, objective)`` of Frobenius NMF on X (m x n), over stacks of starts.

    V <- V * (X^T U) / (V U^T U), then U <- U * (X V) / (U V^T V) (Lee & Seung 2001, eq. 4). The V update
    reads X once (:class:`~.products.SampleBlocks`): X^T U for a block of samples, their new rows of V, and
    X V accumulated from the same block; the U update and the objective after the sweep use that X V
    (:class:`DataTerm`). One pass over X per iteration.
    """
    data = DataTerm(X)

    def v_pass(U, V, UtU):
        def v_rule(block, XtU_block):  # V update, rows ``block``: V * X^T U / (V U^T U)
            multiply(V[..., block, :], XtU_block, V[..., block, :] @ UtU)

        return data.blocks.fused(U, v_rule, V)  # the V update and X V (m x k) in one pass over X

    def update(factors):
        data.update(factors["U"], factors["V"], v_pass)

    def objective_of(factors):
        return data.objective(factors["U"], factors["V"])

    return update, objective_of

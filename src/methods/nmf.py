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

from .core import frobenius
from .core.estimator import Factorization
from .core.loop import Handoff
from .core.multiplicative import multiply
from .core.products import SampleBlocks, gram, squared_norm


def frobenius_rules(X):
    """Return ``(update, objective)`` of Frobenius NMF on X (m x n), over stacks of starts.

    The V update reads X once (:class:`~.products.SampleBlocks`): X^T U for a block of samples, their new
    rows of V, and X V accumulated from the same block; the U update and the objective after the sweep use
    that X V. One pass over X per iteration.
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
        frobenius.u_update(U, V, XV)
        handoff.keep(XV, U, V)

    def objective(factors):
        U, V = factors["U"], factors["V"]
        return frobenius.objective(X, U, V, handoff.take(U, V), X_norm2)

    return update, objective


class NMF(Factorization):
    """Nonnegative matrix factorization X ~ U V^T with the Frobenius loss.

    Parameters are those of :class:`~src.methods.core.estimator.Factorization`. ``factors_`` holds ``U`` (m x k)
    and ``V`` (n x k) as iterated; ``embedding_`` is V with U's columns scaled to unit L2 norm.

    References
    ----------
    D. D. Lee and H. S. Seung, "Algorithms for non-negative matrix factorization", NIPS 2001.
    """

    batched = True
    products_per_iteration = 2  # X^T U and X V
    accept_sparse = True  # X enters only through products (methods.products), sparse or dense alike

    def _rules(self, X, y):
        return frobenius_rules(X)

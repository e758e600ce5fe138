"""Nonnegative local coordinate factorization (NLCF, Chen et al., IEEE TIP 2013).

NLCF is NMF X ~ U V^T (U m x k, V n x k, nonnegative) with the local coordinate coding penalty on the
basis vectors themselves (the LCF paper's baseline [29]; LCF is the same penalty on concepts X w_k)::

    O = ||X - U V^T||_F^2 + mu sum_i sum_k |v_ik| ||u_k - x_i||^2.

With a = (||x_i||^2)_i (n), c = (||u_k||^2)_k (k), s = V^T 1 (k) and V >= 0, the penalty is
a^T V 1 - 2 Tr(U^T X V) + c^T s; its gradients are mu (a 1^T - 2 X^T U + 1 c^T) in V and
2 mu (U diag(s) - X V) in U. Splitting every gradient into its positive and negative parts gives the
multiplicative rules (V first, then U, as our NMF; Lee-Seung auxiliary functions, the positive linear term
of the V gradient sitting in the denominator as in the LCF paper's eq. 12)::

    V <- V * 2 (1 + mu) X^T U / (2 V U^T U + mu (a 1^T + 1 c^T))
    U <- U * (1 + mu) X V / (U (V^T V + mu diag(s)))

The NLCF paper is not among the project's texts, so these rules are derived here from the objective above
(the same derivation as the LCF paper's eqs. 11-12 with X W replaced by U); the objective is tested to never
increase, and mu = 0 is exactly our Frobenius NMF (:mod:`src.methods.nmf`, same update order, tested).

Scale: each iteration costs two m x n x k products (X^T U and X V; X V is reused by the objective), as NMF,
taken in one pass over X by blocks of samples (:class:`~src.methods.core.products.SampleBlocks`); the starts of a
fit advance together, each product with X serving all of them (:mod:`~src.methods.core.products`).
The objective is not invariant under (U D, V D^-1); as for NMF, ``embedding_`` is V with U's columns scaled
to unit L2 norm (Deng Cai's NormalizeUV, applied once at the end).

References
----------
Y. Chen, J. Zhang, D. Cai, W. Liu, X. He, "Nonnegative local coordinate factorization for image
representation", IEEE Trans. Image Processing 22(3), pp. 969-979, 2013 (reference [29] of Liu et al.,
IEEE TNNLS 2014).
"""

import numpy as np

from .core.estimator import Factorization, fit_stops_short
from .core.frobenius import objective as frobenius_objective
from .core.loop import Handoff
from .core.multiplicative import multiply
from .core.products import SampleBlocks, gram, inner, squared_norm, x_dot
from ..checks import NONNEGATIVE


def nlcf_rules(X: np.ndarray, mu: float):
    """Return ``(update, objective)`` of NLCF on X (m x n) >= 0 with locality weight ``mu`` >= 0.

    Over stacks of starts: factors {"U": (s, m, k), "V": (s, n, k)}, the objective one value per start. The
    V update reads X once (:class:`~src.methods.core.products.SampleBlocks`): X^T U for a block of samples,
    their new rows of V and X V accumulated from the same block; the U update and the objective after the
    sweep use that X V.
    """
    X_norm2 = squared_norm(X)
    a = np.einsum("ij,ij->j", X, X)  # ||x_i||^2, (n,)
    locality_a = mu * a[:, None]  # mu a 1^T, (n x 1)
    blocks = SampleBlocks(X)
    handoff = Handoff()

    def update(factors):
        handoff.clear()
        U, V = factors["U"], factors["V"]
        UtU = gram(U)
        locality_c = mu * np.diagonal(UtU, axis1=-2, axis2=-1)[..., None, :]  # mu 1 c^T, (1 x k) per start

        def v_rule(block, XtU_block):  # V update, rows ``block``
            V_b = V[..., block, :]
            denominator = 2.0 * (V_b @ UtU)
            denominator += locality_a[block]
            denominator += locality_c
            multiply(V_b, 2.0 * (1.0 + mu) * XtU_block, denominator)

        XV = blocks.fused(U, v_rule, V)  # the V update and X V (m x k per start) in one pass over X
        M = gram(V)  # V^T V + mu diag(1^T V)
        diagonal = np.arange(M.shape[-1])
        M[..., diagonal, diagonal] += mu * V.sum(axis=-2)
        multiply(U, (1.0 + mu) * XV, U @ M)  # U update
        handoff.keep(XV, U, V)

    def objective(factors):
        U, V = factors["U"], factors["V"]
        XV = handoff.take(U, V)
        if XV is None:
            XV = x_dot(X, V)
        fit = frobenius_objective(X, U, V, XV, X_norm2)
        # sum_ik v_ik (||x_i||^2 - 2 u_k^T x_i + ||u_k||^2)
        squared_u = np.einsum("...ik,...ik->...k", U, U)
        locality = V.sum(axis=-1) @ a - 2.0 * inner(U, XV) + np.einsum("...k,...k->...", squared_u, V.sum(axis=-2))
        return fit + mu * locality

    return update, objective


class NLCF(Factorization):
    """Nonnegative local coordinate factorization X ~ U V^T (Chen et al., IEEE TIP 2013).

    Parameters
    ----------
    n_components, max_iter, tol, init, random_state, n_starts, min_iter, stopping, dtype
        As in :class:`~src.methods.core.estimator.Factorization`; ``init`` is "random" or {"U": (m, k), "V": (n, k)}.
    mu : float, default=0.3
        Weight of the locality penalty. Neither the LCF paper (which tunes every baseline "via cross
        validation" and gives no value) nor our reading of the NLCF paper fixes a default; 0.3 is our
        choice, the value the LCF paper states for its own lambda (the two penalties are the same term on
        u_k and on X w_k, and both weights are scale-free: scaling X and U by t scales both terms by t^2).
        ``mu=0`` is NMF.

    Attributes
    ----------
    factors_ : dict with ``U`` (m x k) and ``V`` (n x k)
    embedding_ : V with U's columns scaled to unit L2 norm

    References
    ----------
    Y. Chen, J. Zhang, D. Cai, W. Liu, X. He, "Nonnegative local coordinate factorization for image
    representation", IEEE Trans. Image Processing 22(3), 2013.
    """

    batched = True
    _parameter_constraints = {**Factorization._parameter_constraints, "mu": NONNEGATIVE}
    _expected_failed_checks = fit_stops_short("NLCF's V rule with U fixed")

    def __init__(self, n_components=2, *, max_iter=10_000, tol=1e-5, init="random", random_state=None, mu=0.3,
                 n_starts=10, min_iter=30, stopping="reference", dtype="float64"):
        super().__init__(n_components, max_iter=max_iter, tol=tol, init=init, random_state=random_state,
                         n_starts=n_starts, min_iter=min_iter, stopping=stopping, dtype=dtype)
        self.mu = mu

    def _rules(self, X, y):
        return nlcf_rules(X, float(self.mu))

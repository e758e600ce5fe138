"""NMF with an L1 sparsity penalty on the coefficients, the basis made scale-free (SparseNMF baseline).

The LCF paper's SparseNMF baseline (Liu et al., TNNLS 2014, section VI) "gave no constraint on the basis
matrix ... and just set the sparsity penalty weighting of the coefficient matrix": the penalty falls on V
only. Written naively, ||X - U V^T||^2 + beta sum V is degenerate: (U t, V / t) keeps the fit and drives the
penalty to 0 as t grows. Hoyer (2002, non-negative sparse coding) fixes this by keeping U's columns at unit
norm; Eggert and Koerner (2004) by writing the objective with the normalized basis U_bar = U diag(||u_k||)^-1.
We use the Eggert-Koerner reading, reparametrized so that it keeps multiplicative updates with a proof:

    O(U, V) = ||X - U V^T||_F^2 + beta sum_i sum_k v_ik ||u_k||_2.

O is invariant under (U D, V D^-1) for every positive diagonal D, and at unit-norm U it is Hoyer's
objective ||X - U V^T||^2 + beta sum V; so its minimum is the minimum of the unit-norm-basis problem, and
normalizing at the end (U_bar = U diag(n)^-1, V_bar = V diag(n), n_k = ||u_k||, which is Deng Cai's
NormalizeUV and therefore ``components_`` / ``embedding_``) gives that problem's solution with the same
objective value (tested). The rules (V first, then U, as our NMF)::

    V <- V * X^T U / (V U^T U + beta/2 1 n^T)                   (Hoyer 2002 NNSC rule, n = 1 there)
    U <- U * X V / (U V^T V + beta/2 U diag(s / n)),   s = V^T 1, n = ||u_k|| at the current U

(beta/2, because our fit term has no factor 1/2; Hoyer writes 1/2 ||X - U V^T||^2 + lambda sum V.)
The V rule is Lee and Seung's for a quadratic with a positive linear term (Hoyer's proof). The U rule is
majorization-minimization: ||u|| <= (||u||^2 + n^2) / (2 n) with equality at the current U turns the
penalty into the quadratic beta sum_k s_k ||u_k||^2 / (2 n_k), whose Lee-Seung step lowers the majorizer
and hence O. So O never increases (tested), and beta = 0 gives exactly our Frobenius NMF (tested). A zero
column of U (n_k = 0) stays zero; its norm is floored at EPS in the U denominator.

Units: beta is in units of the data, not scale-free (scaling X by t scales the fit by t^2 and the penalty
by t): it is compared with the projections X^T u_bar of the samples on the unit basis vectors, so with
unit-norm samples a useful beta lies in (0, 2) and any beta >= 2 max X^T U_bar zeros V. The default 0.1 is
our choice for unit-norm samples; the paper gives none (it tunes beta "via cross validation").

References
----------
P. O. Hoyer, "Non-negative sparse coding", IEEE Workshop on Neural Networks for Signal Processing, 2002.

J. Eggert, E. Koerner, "Sparse coding and NMF", IEEE IJCNN 2004.

P. O. Hoyer, "Non-negative matrix factorization with sparseness constraints", JMLR 5, 2004 (the LCF paper's
reference [18]).
"""

import numpy as np

from .core import frobenius
from .core.estimator import Factorization, fit_stops_short
from .core.loop import Handoff
from .core.multiplicative import EPS, multiply
from .core.products import column_norms, column_sums, gram, squared_norm, x_dot, xt_dot
from ..checks import NONNEGATIVE


def sparse_rules(X, beta: float):
    """Return ``(update, objective)`` of the L1-penalized, scale-free NMF on X (m x n) with weight ``beta``.

    Factors are stacks of starts. The U update computes X V with the new V; the objective after the sweep
    reuses it.
    """
    X_norm2 = squared_norm(X)
    handoff = Handoff()

    def update(factors):
        handoff.clear()
        U, V = factors["U"], factors["V"]
        norms = column_norms(U)  # n_k = ||u_k||, (1 x k)
        numerator = xt_dot(X, U)  # V update, (n x k)
        multiply(V, numerator, V @ gram(U) + (0.5 * beta) * norms)

        XV = x_dot(X, V)  # U update, (m x k); U has not changed, so the norms still hold
        weights = column_sums(V) / np.maximum(norms, EPS)  # s_k / n_k, (1 x k)
        multiply(U, XV, U @ gram(V) + (0.5 * beta) * (U * weights))
        handoff.keep(XV, U, V)

    def objective(factors):
        U, V = factors["U"], factors["V"]
        fit = frobenius.objective(X, U, V, handoff.take(U, V), X_norm2)
        return fit + beta * (column_sums(V) * column_norms(U)).sum(axis=(-2, -1))

    return update, objective


class SparseNMF(Factorization):
    """NMF with an L1 penalty on the coefficients and a scale-free basis (Hoyer 2002 / Eggert-Koerner 2004).

    Minimizes ||X - U V^T||^2 + beta sum_ik v_ik ||u_k||, which equals ||X - U_bar V_bar^T||^2 + beta sum V_bar
    for the unit-norm basis U_bar and V_bar = ``embedding_`` (see the module docstring).

    Parameters
    ----------
    n_components, max_iter, tol, init, random_state
        As in :class:`~src.methods.core.estimator.Factorization`; ``init`` is "random" or {"U": (m, k), "V": (n, k)}.
    beta : float, default=0.1
        Weight of the L1 penalty on the coefficients, in units of the data (see the module docstring);
        ``beta=0`` is NMF.

    Attributes
    ----------
    factors_ : dict with ``U`` (m x k) and ``V`` (n x k) as iterated (U's scale is arbitrary)
    embedding_ : V_bar = V diag(||u_k||), the coefficients of the unit-norm basis
    components_ : (k, m) the unit-norm basis U_bar^T

    References
    ----------
    P. O. Hoyer, "Non-negative sparse coding", IEEE NNSP 2002; J. Eggert, E. Koerner, "Sparse coding and
    NMF", IEEE IJCNN 2004.
    """

    batched = True
    accept_sparse = True  # X enters only through products (core.products), sparse or dense alike
    _parameter_constraints = {**Factorization._parameter_constraints, "beta": NONNEGATIVE}
    _expected_failed_checks = fit_stops_short("the penalized V rule with U fixed")

    def __init__(self, n_components=2, *, max_iter=10_000, tol=1e-5, init="random", random_state=None, beta=0.1,
                 n_starts=10, min_iter=30, stopping="reference", dtype="float64"):
        super().__init__(n_components, max_iter=max_iter, tol=tol, init=init, random_state=random_state,
                         n_starts=n_starts, min_iter=min_iter, stopping=stopping, dtype=dtype)
        self.beta = beta

    def _rules(self, X, y):
        return sparse_rules(X, float(self.beta))  # components_ / embedding_: the base's U_bar^T and V_bar

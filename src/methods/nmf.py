"""NMF with the Frobenius loss, Lee and Seung's multiplicative updates.

Objective: O = ||X - U V^T||_F^2, X (m x n) >= 0, U (m x k), V (n x k).
Updates (V first, then U, as Deng Cai's GNMF code and scikit-learn's ``solver="mu"`` order them; the rules are
:func:`~src.methods.core.frobenius.frobenius_rules`, shared with NMF-NCW and the graph methods' ``transform``)::

    V <- V * (X^T U) / (V U^T U)        (Lee & Seung 2001, eq. 4, transposed)
    U <- U * (X V) / (U V^T V)

References
----------
D. D. Lee and H. S. Seung, "Algorithms for non-negative matrix factorization", NIPS 2001.
"""

from .core.estimator import Factorization, fit_stops_short
from .core.frobenius import frobenius_rules


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
    accept_sparse = True  # X enters only through products (core.products), sparse or dense alike
    _expected_failed_checks = fit_stops_short("NMF's V rule with U fixed")

    def _rules(self, X, y):
        return frobenius_rules(X)

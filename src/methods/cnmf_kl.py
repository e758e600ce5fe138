"""Constrained NMF with the KL divergence (CNMF_KL): labels as hard constraints, V = A Z.

Objective: D(X || Y) = sum_ij x_ij log(x_ij / y_ij) - x_ij + y_ij with Y = U Z^T A^T, i.e.
y_ij = sum_k sum_a u_ik z_ak a_ja; U (m x k), Z (r x k), A (n x r) the label constraint matrix, r = c + n_u.

The paper's section 5 (the KL updates) is missing from our copy of the text, so the rules below are our own
derivation (Lee & Seung's auxiliary-function argument):

*Z update, U fixed.* With gamma_ijka = u_ik z'_ak a_ja / y'_ij (y' = Y at the current Z'), the weights
gamma_ijka >= 0 sum to 1 over (k, a), and the concavity of log (Jensen) gives
-log y_ij <= -sum_ka gamma_ijka log(u_ik z_ak a_ja / gamma_ijka). Hence

    G(Z, Z') = sum_ij [x_ij log x_ij - x_ij + y_ij(Z)] - sum_ij x_ij sum_ka gamma_ijka log(u_ik z_ak a_ja / gamma_ijka)

satisfies G(Z, Z') >= D(Z) and G(Z', Z') = D(Z'), so minimizing G over Z cannot increase D. G is
separable in the z_ak; setting dG/dz_ak = sum_ij u_ik a_ja - sum_ij x_ij gamma_ijka / z_ak = 0 gives ::

    z_ak <- z_ak * sum_ij u_ik (x_ij / y_ij) a_ja / (sum_i u_ik)(sum_j a_ja)
    i.e.  Z <- Z * A^T (X / Y)^T U / ((A^T 1_n)(1_m^T U))

(A^T 1_n holds the class sizes, then ones). This is the V update of NMF-KL summed over each labelled class:
a class row of Z moves by the pooled ratio of its members.

*U update, Z fixed.* V = A Z is fixed, so this is Lee & Seung's rule unchanged:
U <- U * (X / Y) V / (1_m 1_n^T V).

Order: Z first, then U (as :class:`~src.methods.nmf_kl.NMFKL` updates V, then U); with no label A = I and
the method is exactly NMF-KL from the same initial factors (tested). The KL objective is tested to never
increase. Cost: one iteration is O(mnk) as NMF-KL (A is sparse; the paper's Table 1 counts a dense A); the
ratio X / Y is formed block by block by :class:`~src.methods.nmf_kl.KLProducts` (no m x n array, each block
of X read once for all the starts), and the objective's pass gives the next Z update its (X / Y)^T U through
a :class:`~src.methods.core.loop.Handoff`, as in NMF-KL. The products with A and A^T serve all the starts at once.

References
----------
H. Liu, Z. Wu, X. Li, D. Cai, T. S. Huang, "Constrained nonnegative matrix factorization for image
representation", IEEE TPAMI 34(7), 2012 (section 5, missing from the text: rules derived here).

D. D. Lee and H. S. Seung, "Algorithms for non-negative matrix factorization", NIPS 2001.
"""

import numpy as np
import scipy.sparse as sp

from .core.estimator import Factorization, LabelConstrainedMixin, labels_in_fit_only
from .core.loop import Handoff
from .core.multiplicative import multiply
from .core.products import column_sums, dot
from .graph.label_matrix import SHARED_ROWS, label_matrix, n_constraint_columns
from .nmf_kl import NMFKL, KLProducts


def cnmf_kl_rules(X: np.ndarray, A: sp.spmatrix):
    """Return ``(update, objective)`` of KL-divergence CNMF on X (m x n) with constraint matrix A (n x r).

    Factors: ``U`` (m x k) and ``Z`` (r x k) per start, stacks of starts (s, ., k).
    """
    A = sp.csr_matrix(A, dtype=X.dtype)
    At = A.T.tocsr()
    class_sizes = np.asarray(A.sum(axis=0)).reshape(-1, 1)  # A^T 1_n, (r x 1)
    products = KLProducts(X)
    handoff = Handoff()

    def update(factors):
        U, Z = factors["U"], factors["Z"]
        RtU = handoff.take(U, Z)  # (X / Y)^T U, computed by the objective at these factors
        if RtU is None:
            RtU = products.v_numerator(U, dot(A, Z))[0]
        # Z update (derived): A^T (X / Y)^T U / ((A^T 1_n)(1_m^T U)), (r x k) per start
        multiply(Z, dot(At, RtU), class_sizes * column_sums(U))

        V = dot(A, Z)
        # U update (Lee & Seung): (X / Y) A Z / (1_m 1_n^T A Z), (m x k) per start
        multiply(U, products.u_numerator(U, V), np.broadcast_to(column_sums(V), U.shape).copy())

    def objective(factors):
        U, Z = factors["U"], factors["Z"]
        RtU, divergence = products.v_numerator(U, dot(A, Z), divergence=True)
        handoff.keep(RtU, U, Z)
        return divergence

    return update, objective


class CNMFKL(LabelConstrainedMixin, Factorization):
    """Constrained NMF with the KL divergence, X ~ U (A Z)^T (Liu et al., TPAMI 2012, CNMF_KL).

    Parameters are those of :class:`~src.methods.nmf_kl.NMFKL` (``min_iter=10``). ``factors_`` holds ``U``
    (m x k) and ``Z`` ((c + n_u) x k); ``embedding_`` is V = A Z with U's columns scaled to unit L2 norm (the
    normalization of Deng Cai's ``GNMF_KL`` and of :class:`~src.methods.nmf_kl.NMFKL`, applied once at
    the end). ``constraint_matrix_`` is the sparse A of the last fit.

    References
    ----------
    H. Liu, Z. Wu, X. Li, D. Cai, T. S. Huang, "Constrained nonnegative matrix factorization for image
    representation", IEEE TPAMI 34(7), 2012; update rules derived in this module's docstring.
    """

    batched = True
    loss = "kl"
    _expected_failed_checks = labels_in_fit_only(SHARED_ROWS)

    factor_names = ("U", "Z")
    __init__ = NMFKL.__init__  # the KL methods' reference defaults (min_iter=10)

    def _factor_shapes(self, m, n, y):
        k = self.n_components
        return {"U": (m, k), "Z": (n_constraint_columns(y), k)}

    def _rules(self, X, y):
        self.constraint_matrix_ = label_matrix(y)
        return cnmf_kl_rules(X, self.constraint_matrix_)

    def _representation(self, factors):
        Z = factors["Z"]
        return np.asarray(self.constraint_matrix_ @ Z, dtype=Z.dtype) * np.linalg.norm(factors["U"], axis=0)

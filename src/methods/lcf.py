"""Local coordinate concept factorization (LCF, Liu et al., IEEE TNNLS 2014).

LCF is concept factorization X ~ X W V^T (W, V n x k, nonnegative; the paper's V is our V^T) with a
locality penalty that keeps every concept (anchor point) u_k = X w_k close to the samples it codes (eq. 3):

    O = ||X - X W V^T||_F^2 + lambda sum_i sum_k |v_ik| ||X w_k - x_i||^2.

With the kernel K = X^T X, a = diag(K) (n), b = diag(W^T K W) (k) and V >= 0 (so |v_ik| = v_ik and
D_i = diag(v_i)), the paper's sums collapse: sum_i X^T x_i 1^T D_i = K V and sum_i K W D_i = K W diag(1^T V).
Its multiplicative rules (eqs. 11-12; the paper's A and B are, in our orientation, a 1^T and 1 b^T) read

    V <- V * 2 (1 + lambda) K W / (2 V W^T K W + lambda (a 1^T + 1 b^T))          (eq. 12)
    W <- W * (1 + lambda) K V / (K W (V^T V + lambda diag(1^T V)))                   (eq. 11)

and the objective is O = Tr(K) - 2 (1 + lambda) Tr(V^T K W) + Tr(V^T V W^T K W)
+ lambda (a^T V 1 + b^T V^T 1), since ||X w_k - x_i||^2 = K_ii - 2 (K W)_ik + (W^T K W)_kk.

Order. The paper's summary (section IV-B) updates W, then V. We update V first, then W, as Deng Cai's
LCCF code and our CF (:mod:`src.methods.concept`) do; Theorem 1 holds for either order, and with this
order LCF with lambda = 0 is CF iterate for iterate (tested).

Implicit kernel. With nonnegative feature data every product with K is taken as K B = X^T (X B): no n x n
array is formed (tested with tracemalloc at n = 3000), one iteration costs four m x n x k products (X W and
X V are handed from the update to the objective and X W on to the next update, as in CF) instead of the
paper's O(n^2 k) (its Table II), in two passes over X as CF's (the rows of both updates are independent:
:class:`~src.methods.products.SampleBlocks`). As in CF, the starts of a fit advance together, each product
with X serving all of them (:mod:`~src.methods.products`).

General (mixed-sign) form, section V-C. When X has negative entries we apply Sha et al.'s rule (Theorem 2)
with K = K+ - K-, which needs K itself: K, K+ and K- are then built (n x n, as in the paper's complexity
count). With M = V^T V + lambda diag(1^T V), P+- = K+- W M, Q+- = 2 V W^T K+- W:

    V <- V * (c + sqrt(c^2 + 4 Q+ Q-)) / (2 Q+),  c = 2 (1 + lambda) K W - lambda (a 1^T + 1 b^T)   (eq. 40)
    W <- W * (c + sqrt(c^2 + 4 P+ P-)) / (2 P+),  c = (1 + lambda) K V                              (eq. 36)

Eq. 36 as printed has P+ P- under the root; Theorem 2 (Hessian 2 K (x) M, gradient at 0 equal to
-2 (1 + lambda) K V) gives 4 P+ P-, which we use (the printed eq. 40 already has the 4). Both splits are
elementwise nonnegative and symmetric, which is all Sha et al.'s auxiliary function needs; the objective is
tested to never increase. With nonnegative data eq. 36 reduces to eq. 11 (its eq. 37, tested), but eq. 40
reduces to its eq. 41, V <- V * max(0, 2 (1 + lambda) K W - lambda (A + B)) / (2 V W^T K W), which the
paper presents without remarking that it is not eq. 12: a different (also monotone) rule that sets v_ik to
zero for good as soon as lambda ||X w_k - x_i||^2 > 2 (K W)_ik (tested). We therefore run eqs. 11-12
whenever X >= 0 and eqs. 36, 40 only when X has a negative entry (``kernel_`` says which ran); with
lambda = 0 both forms are CF's (tested). The paper's three-Gaussian example (its Fig. 3) also runs NMF on
the same points, so its data are nonnegative and take eqs. 11-12.

Representation and normalization: as CF in :mod:`src.methods.concept` (Deng Cai's LCCF NormalizeUV, applied
once at the end): ``embedding_`` = V diag(W^T K W)^(1/2), ``components_`` = unit-norm concepts. Unlike CF,
the LCF objective is not invariant under (W D, V D^-1), so this is a choice of representation only; the
anchor points the locality term acts on are the unnormalized X W = ``X.T @ factors_["W"]`` (for X with one
sample per row), which is what the paper's three-Gaussian figure draws.

References
----------
H. Liu, Z. Yang, J. Yang, Z. Wu, X. Li, "Local coordinate concept factorization for image representation",
IEEE Trans. Neural Networks and Learning Systems 25(6), pp. 1071-1082, 2014, eqs. 3, 11-12, 36, 40.
F. Sha, Y. Lin, L. K. Saul, D. D. Lee, "Multiplicative updates for nonnegative quadratic programming",
Neural Computation 19(8), 2007.
"""

import logging

import numpy as np

from ..errors import ConfigError
from .base import check_nonnegative_float
from .concept import KERNELS, _ConceptFactorization, data_products
from .loop import Handoff
from .multiplicative import multiply
from .products import SampleBlocks, dot, gram, inner, squared_norm, x_dot

logger = logging.getLogger(__name__)


def _diagonal(M: np.ndarray) -> np.ndarray:
    """diag(M_i) of every (k x k) matrix of a stack, (s, k) (a read-only view)."""
    return np.diagonal(M, axis1=-2, axis2=-1)


def _locality_gram(V: np.ndarray, lam: float) -> np.ndarray:
    """V^T V + lambda diag(1^T V), (k x k) per start."""
    M = gram(V)
    diagonal = np.arange(M.shape[-1])
    M[..., diagonal, diagonal] += lam * V.sum(axis=-2)
    return M


def lcf_rules(X: np.ndarray, lam: float, kernel: str = "implicit"):
    """Return ``(update, objective)`` of LCF on X (m x n), over stacks of starts.

    Parameters
    ----------
    X : ndarray of shape (m, n)
        Data, one sample per column. Must be nonnegative for ``kernel="implicit"``.
    lam : float
        The locality weight lambda >= 0 of eq. 3.
    kernel : {"implicit", "explicit"}
        "implicit": eqs. 11-12 with K B = X^T (X B), no n x n array.
        "explicit": the general mixed-sign rules (eqs. 36, 40) with K, K+, K- built (n x n).

    Returns
    -------
    update, objective : callables over the factor dict {"W": (s, n, k), "V": (s, n, k)}; the objective
        returns one value per start, shape (s,).
    """
    if kernel not in KERNELS:
        raise ConfigError(f"kernel={kernel!r} must be one of {', '.join(KERNELS)}")
    trace_K = squared_norm(X)  # Tr(K)
    a = np.einsum("ij,ij->j", X, X)  # diag(K) = squared sample norms, (n,)
    handoff = Handoff()  # (X W, X V) from the update to the objective, X W on to the next update

    def objective(factors):
        W, V = factors["W"], factors["V"]
        XW, XV = data_products(handoff, X, W, V)
        WKW = gram(XW)
        cross = inner(XV, XW)  # Tr(V^T K W)
        fit = trace_K - 2.0 * cross + inner(gram(V), WKW)  # ||X - X W V^T||^2
        # sum_ik v_ik (K_ii - 2 (K W)_ik + (W^T K W)_kk)
        locality = V.sum(axis=-1) @ a - 2.0 * cross + np.einsum("...k,...k->...", _diagonal(WKW), V.sum(axis=-2))
        return fit + lam * locality

    if kernel == "implicit":
        blocks = SampleBlocks(X)
        locality_a = lam * a[:, None]  # lambda a 1^T, (n x 1)

        def update(factors):
            W, V = factors["W"], factors["V"]
            kept = handoff.take(W, V)
            XW = x_dot(X, W) if kept is None else kept[0]
            WKW = gram(XW)  # W^T K W, (k x k) per start
            locality_b = lam * _diagonal(WKW)[..., None, :]  # lambda 1 b^T, (1 x k) per start
            KW = np.empty_like(W)

            def v_rule(block, KW_block):  # eq. 12, rows ``block`` (they are independent)
                KW[..., block, :] = KW_block  # K W, (n x k) per start, kept for the W update
                V_b = V[..., block, :]
                denominator = 2.0 * (V_b @ WKW)
                denominator += locality_a[block]
                denominator += locality_b
                multiply(V_b, 2.0 * (1.0 + lam) * KW_block, denominator)

            XV = blocks.fused(XW, v_rule, V)  # the V update and X V in one pass over X
            M = _locality_gram(V, lam)

            def w_rule(block, KV_block):  # eq. 11, rows ``block``
                # K V + lambda sum_i X^T x_i 1^T D_i over K W V^T V + lambda sum_i K W D_i
                multiply(W[..., block, :], (1.0 + lam) * KV_block, KW[..., block, :] @ M)

            XW = blocks.fused(XV, w_rule, W)  # X W for the objective and the next update
            handoff.keep((XW, XV), W, V)

        return update, objective

    n = X.shape[1]
    logger.info("mixed-sign data: building the %d x %d kernel and its positive and negative parts", n, n)
    K = X.T @ X
    K_plus = np.maximum(K, 0)
    K_minus = np.maximum(-K, 0)

    def update_general(factors):
        handoff.clear()
        W, V = factors["W"], factors["V"]
        KpW, KmW = dot(K_plus, W), dot(K_minus, W)  # K+ W, K- W, (n x k) per start
        WKpW, WKmW = W.mT @ KpW, W.mT @ KmW  # W^T K+- W, (k x k) per start
        b = _diagonal(WKpW - WKmW)[..., None, :]  # diag(W^T K W), (1 x k) per start
        c = 2.0 * (1.0 + lam) * (KpW - KmW) - lam * (a[:, None] + b)
        Q_plus, Q_minus = 2.0 * (V @ WKpW), 2.0 * (V @ WKmW)
        multiply(V, c + np.sqrt(c * c + 4.0 * Q_plus * Q_minus), 2.0 * Q_plus)  # eq. 40

        M = _locality_gram(V, lam)
        c = (1.0 + lam) * dot(K, V)
        P_plus, P_minus = KpW @ M, KmW @ M
        multiply(W, c + np.sqrt(c * c + 4.0 * P_plus * P_minus), 2.0 * P_plus)  # eq. 36 (Theorem 2's 4 P+ P-)

    return update_general, objective


class LCF(_ConceptFactorization):
    """Local coordinate concept factorization X ~ X W V^T (Liu et al., IEEE TNNLS 2014).

    Parameters
    ----------
    n_components, max_iter, tol, init, random_state, n_starts, min_iter, stopping, dtype
        As in :class:`~src.methods.base.Factorization`; ``init`` is "random" or {"W": (n, k), "V": (n, k)}.
    lam : float, default=0.3
        The paper's lambda (eq. 3), the weight of the locality term; ``lambda`` is a Python keyword, hence
        the name. 0.3 is the value the paper's section VI states for its experiments; its section VI-E
        reports the best results at lambda = 8 (Yale) and 32 (ORL), and good results from 2^0 to 2^6.
        ``lam=0`` is CF.

    Attributes
    ----------
    factors_ : dict with ``W`` (n x k, concept weights of the samples) and ``V`` (n x k)
    kernel_ : "implicit" (X >= 0: eqs. 11-12, no n x n array) or "explicit" (X has negative entries:
        eqs. 36 and 40 on an explicit K)
    embedding_ : V diag(W^T K W)^(1/2), as CF (normalization applied once at the end)
    components_ : (k, m) unit-norm concepts (X W diag(W^T K W)^(-1/2))^T

    References
    ----------
    H. Liu, Z. Yang, J. Yang, Z. Wu, X. Li, "Local coordinate concept factorization for image
    representation", IEEE Trans. Neural Netw. Learn. Syst. 25(6), 2014, eqs. 3, 11-12, 36, 40.
    """

    factor_names = ("W", "V")

    def __init__(self, n_components=2, max_iter=10_000, tol=1e-5, init="random", random_state=None,
                 lam=0.3,
                 n_starts=10, min_iter=30, stopping="reference", dtype="float64"):
        super().__init__(n_components, max_iter, tol, init, random_state, n_starts, min_iter, stopping, dtype)
        self.lam = lam

    def check_params(self):
        super().check_params()
        check_nonnegative_float("lam", self.lam)

    def _factor_shapes(self, m, n, y):
        k = self.n_components
        return {"W": (n, k), "V": (n, k)}

    def _locality(self):
        return float(self.lam)  # transform: LCF's coefficient rule on the fixed anchors X W

    def _rules(self, X, y):
        self.kernel_ = "explicit" if X.min() < 0 else "implicit"
        return lcf_rules(X, float(self.lam), self.kernel_)

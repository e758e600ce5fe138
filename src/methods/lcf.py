"""Local coordinate concept factorization (LCF, Liu et al., IEEE TNNLS 2014).

LCF is concept factorization X ~ X W V^T (W, V n x k, nonnegative; the paper's V is our V^T) with a
locality penalty that keeps every concept (anchor point) u_k = X w_k close to the samples it codes (eq. 3)::

    O = ||X - X W V^T||_F^2 + lambda sum_i sum_k |v_ik| ||X w_k - x_i||^2.

With the kernel K = X^T X, a = diag(K) (n), b = diag(W^T K W) (k) and V >= 0 (so ``|v_ik| = v_ik`` and
D_i = diag(v_i)), the paper's sums collapse: sum_i X^T x_i 1^T D_i = K V and sum_i K W D_i = K W diag(1^T V).
Its multiplicative rules (eqs. 11-12; the paper's A and B are, in our orientation, a 1^T and 1 b^T) read ::

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
:class:`~src.methods.core.products.SampleBlocks`). As in CF, the starts of a fit advance together, each product
with X serving all of them (:mod:`~src.methods.core.products`).

General (mixed-sign) form, section V-C. When X has negative entries we apply Sha et al.'s rule (Theorem 2)
with K = K+ - K-, which needs K itself: K, K+ and K- are then built (n x n, as in the paper's complexity
count). With M = V^T V + lambda diag(1^T V), P+- = K+- W M, Q+- = 2 V W^T K+- W::

    V <- V * (c + sqrt(c^2 + 4 Q+ Q-)) / (2 Q+),  c = 2 (1 + lambda) K W - lambda (a 1^T + 1 b^T)   (eq. 40)
    W <- W * (c + sqrt(c^2 + 4 P+ P-)) / (2 P+),  c = (1 + lambda) K V                              (eq. 36)

Eq. 36 as printed has P+ P- under the root; Theorem 2 (Hessian 2 K (x) M, gradient at 0 equal to
-2 (1 + lambda) K V) gives 4 P+ P-, which we use (the printed eq. 40 already has the 4). Both splits are
elementwise nonnegative and symmetric, which is all Sha et al.'s auxiliary function needs; the objective is
tested to never increase. With nonnegative data eq. 36 reduces to eq. 11 (its eq. 37, tested), but eq. 40
reduces to its eq. 41, V <- V * max(0, 2 (1 + lambda) K W - lambda (A + B)) / (2 V W^T K W), which the
paper presents without remarking that it is not eq. 12: a different (also monotone) rule that sets v_ik to
zero for good as soon as lambda ||X w_k - x_i||^2 > 2 (K W)_ik (tested). By default we therefore run
eqs. 11-12 whenever X >= 0 and eqs. 36, 40 only when X has a negative entry (``kernel_`` says which ran);
with lambda = 0 both forms are CF's (tested). The paper's three-Gaussian example (its Fig. 3) also runs NMF
on the same points, so its data are nonnegative and take eqs. 11-12.

Reading of the V rule (``v_rule``). Which rule the paper's experiments ran on their nonnegative images it
does not say: eq. 12 (its section IV) or eq. 41 (what its general section V-C gives for them).
``v_rule="eq41"`` runs eq. 41 on nonnegative data, on the implicit kernel, in our orientation

    V <- V * max(0, 2 (1 + lambda) K W - lambda (a 1^T + 1 b^T)) / (2 V W^T K W)                  (eq. 41)

(``multiply`` floors only the denominator: a zero numerator sets the entry to 0, and 0 stays 0, as in
eq. 40 with Q- = 0 and as in the printed eq. 41). It is Sha et al.'s rule for the V subproblem (rows
independent, Hessian 2 W^T K W >= 0 elementwise, so Q- = 0, linear term -c with
c = 2 (1 + lambda) K W - lambda (a 1^T + 1 b^T)), so it never increases the objective for W fixed, and eq. 11
does not for V fixed: the objective never increases (tested). On nonnegative data it equals the
explicit-kernel eq. 40 (tested), with lambda = 0 it is eq. 12 (CF's rule, tested), and with lambda > 0 it
differs from eq. 12: eq. 12 keeps every v_ik > 0, eq. 41 zeroes the coefficients of samples far from an
anchor, a sparser V. The same max(0, .) makes it depend on the start: c_ik = 2 (K W)_ik
- lambda ||X w_k - x_i||^2, and from W drawn uniformly on [0, 1) (our random start, as the paper's "randomly")
every anchor X w_k is about n/2 times the mean sample, far from every sample (the farther the larger n), so
that the first update zeroes all or nearly all of V, for good: on 25 uniform samples of 15 features, 96-100%
of it at the paper's lambda = 0.3 (none at 0.1), and where all of V goes, W follows and the fit stays at
V = 0, objective ||X||_F^2. With anchors that are convex combinations of the samples (W's columns summing
to 1) it does not, except for large lambda (32 on those data). Both tested; eq. 12 has no such threshold.
On mixed-sign data eq. 40 runs whichever ``v_rule`` (eq. 12 has no mixed-sign form).

Normalizing V while iterating (``normalize_v``). Deng Cai's LCCF code, whose CF and protocol we follow,
rescales V's columns to unit L2 norm and W's inversely while it iterates (``LCCF_Multi.m`` lines 68,
122-123; :mod:`src.methods.concept` implements it for CF and LCF, with the schedule of his code). The LCF
paper does not mention it. For CF this changes nothing (its objective is invariant), for
LCF it does: the locality term lambda sum_ik v_ik ||X w_k - x_i||^2 is not invariant under
(W D, V D^-1), so each rescaling moves the objective, up or down, and the objective history (evaluated
after the rescaling, as Cai evaluates it) need not be monotone (tested: it does increase at some
iterations). The rules themselves are still applied from the rescaled factors, so each update still never
increases the objective.

Representation and normalization: as CF in :mod:`src.methods.concept` (Deng Cai's LCCF NormalizeUV, applied
once at the end): ``embedding_`` = V diag(W^T K W)^(1/2), ``components_`` = unit-norm concepts. Unlike CF,
the LCF objective is not invariant under (W D, V D^-1), so this is a choice of representation only; the
anchor points the locality term acts on are the unnormalized X W = ``X.T @ factors_["W"]`` (for X with one
sample per row), which is what the paper's three-Gaussian figure draws.

References
----------
H. Liu, Z. Yang, J. Yang, Z. Wu, X. Li, "Local coordinate concept factorization for image representation",
IEEE Trans. Neural Networks and Learning Systems 25(6), pp. 1071-1082, 2014, eqs. 3, 11-12, 36, 40-41.

F. Sha, Y. Lin, L. K. Saul, D. D. Lee, "Multiplicative updates for nonnegative quadratic programming",
Neural Computation 19(8), 2007.

D. Cai, X. He, J. Han, "Locally consistent concept factorization for document clustering", IEEE TKDE
23(6), 2011 (its code ``LCCF_Multi.m``, NormalizeUV).
"""

import logging

import numpy as np

from .concept import KERNELS, _ConceptFactorization, data_products, explicit_kernel
from .core.estimator import Factorization
from .core.loop import Handoff
from .core.multiplicative import multiply
from .core.products import SampleBlocks, dot, gram, inner, squared_norm, x_dot
from ..checks import BOOLEAN, NONNEGATIVE, one_of

logger = logging.getLogger(__name__)

V_RULES = ("eq12", "eq41")
"""The V rules of LCF on nonnegative data: eq. 12 (section IV) or eq. 41 (eq. 40 with X >= 0)."""

ZEROS_THAT_STAY = (
    "the check gives LCF its data as they are, with negative entries (LCF accepts any sign), so the general "
    "rules run (eqs. 36, 40): there a coefficient whose row of V shrinks reaches exactly 0 in floating point, "
    "and a multiplicative rule never moves a 0. The fit's V keeps such a zero (set near iteration 100, while "
    "its gradient was positive) where, for the final anchors X W, the gradient is negative: the fit's "
    "coefficients are not the minimizers for its own basis (objective 8.5 against a minimum of 3.3 with W "
    "fixed, still after 20,000 iterations), and transform, LCF's coefficient rule on the fixed anchors from "
    "positive starts, differs from fit_transform by more than 1")
"""Why ``check_transformer_general`` fails for LCF at a user's settings (measured with tools/estimator_checks.py)."""


def _diagonal(M: np.ndarray) -> np.ndarray:
    """diag(M_i) of every (k x k) matrix of a stack, (s, k) (a read-only view)."""
    return np.diagonal(M, axis1=-2, axis2=-1)


def _locality_gram(V: np.ndarray, lam: float) -> np.ndarray:
    """V^T V + lambda diag(1^T V), (k x k) per start."""
    M = gram(V)
    diagonal = np.arange(M.shape[-1])
    M[..., diagonal, diagonal] += lam * V.sum(axis=-2)
    return M


def lcf_rules(X: np.ndarray, lam: float, kernel: str = "implicit", v_rule: str = "eq12",
              handoff: Handoff | None = None):
    """Return ``(update, objective)`` of LCF on X (m x n), over stacks of starts.

    Parameters
    ----------
    X : ndarray of shape (m, n)
        Data, one sample per column. Must be nonnegative for ``kernel="implicit"``.
    lam : float
        The locality weight lambda >= 0 of eq. 3.
    kernel : {"implicit", "explicit"}
        "implicit": eq. 11 and the V rule ``v_rule`` with K B = X^T (X B), no n x n array.
        "explicit": the general mixed-sign rules (eqs. 36, 40) with K, K+, K- built (n x n).
    v_rule : {"eq12", "eq41"}
        The V rule of the implicit form: eq. 12, or eq. 41 (eq. 40 for X >= 0). Not used by "explicit".
    handoff : Handoff, optional
        Where the update leaves (X W, X V) for the objective (and X W for the next update); a new one if
        None. Given by the estimator when it rescales the factors between the rules (``normalize_v``).

    Returns
    -------
    update, objective : callables over the factor dict {"W": (s, n, k), "V": (s, n, k)}; the objective
        returns one value per start, shape (s,).
    """
    one_of(KERNELS).check("kernel", kernel)
    one_of(V_RULES).check("v_rule", v_rule)
    trace_K = squared_norm(X)  # Tr(K)
    a = np.einsum("ij,ij->j", X, X)  # diag(K) = squared sample norms, (n,)
    if handoff is None:  # (X W, X V) from the update to the objective, X W on to the next update
        handoff = Handoff()

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
        return _implicit_lcf_update(X, lam, v_rule, a, handoff), objective
    return _explicit_lcf_update(X, lam, a, handoff), objective


def _implicit_lcf_update(X: np.ndarray, lam: float, v_rule: str, a: np.ndarray, handoff: Handoff):
    """The update of :func:`lcf_rules` for nonnegative X: eq. 11 and the V rule ``v_rule`` (eq. 12 or 41) with
    K B = X^T (X B); ``a`` is diag(K), (n,)."""
    blocks = SampleBlocks(X)
    locality_a = lam * a[:, None]  # lambda a 1^T, (n x 1)

    def update(factors):
        W, V = factors["W"], factors["V"]
        kept = handoff.take(W, V)
        XW = x_dot(X, W) if kept is None else kept[0]
        WKW = gram(XW)  # W^T K W, (k x k) per start
        locality_b = lam * _diagonal(WKW)[..., None, :]  # lambda 1 b^T, (1 x k) per start
        KW = np.empty_like(W)

        def eq12(block, KW_block):  # eq. 12, rows ``block`` (they are independent)
            KW[..., block, :] = KW_block  # K W, (n x k) per start, kept for the W update
            V_b = V[..., block, :]
            denominator = 2.0 * (V_b @ WKW)
            denominator += locality_a[block]
            denominator += locality_b
            multiply(V_b, 2.0 * (1.0 + lam) * KW_block, denominator)

        def eq41(block, KW_block):  # eq. 41, rows ``block``
            KW[..., block, :] = KW_block
            V_b = V[..., block, :]
            c = 2.0 * (1.0 + lam) * KW_block  # 2 (1 + lambda) K W - lambda (a 1^T + 1 b^T), then max(0, .)
            c -= locality_a[block]
            c -= locality_b
            np.maximum(c, 0.0, out=c)
            multiply(V_b, c, 2.0 * (V_b @ WKW))

        XV = blocks.fused(XW, eq41 if v_rule == "eq41" else eq12, V)  # the V update and X V, one pass
        M = _locality_gram(V, lam)

        def w_rule(block, KV_block):  # eq. 11, rows ``block``
            # K V + lambda sum_i X^T x_i 1^T D_i over K W V^T V + lambda sum_i K W D_i
            multiply(W[..., block, :], (1.0 + lam) * KV_block, KW[..., block, :] @ M)

        XW = blocks.fused(XV, w_rule, W)  # X W for the objective and the next update
        handoff.keep((XW, XV), W, V)

    return update


def _explicit_lcf_update(X: np.ndarray, lam: float, a: np.ndarray, handoff: Handoff):
    """The update of :func:`lcf_rules` for mixed-sign X: eqs. 36 and 40 with K, K+, K- built; ``a`` is
    diag(K), (n,)."""
    K, K_plus, K_minus = explicit_kernel(X)

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

    return update_general


class LCF(_ConceptFactorization):
    """Local coordinate concept factorization X ~ X W V^T (Liu et al., IEEE TNNLS 2014).

    Parameters
    ----------
    n_components, max_iter, tol, init, random_state, n_starts, min_iter, stopping, dtype
        As in :class:`~src.methods.core.estimator.Factorization`; ``init`` is "random" or {"W": (n, k), "V": (n, k)}.
    lam : float, default=0.3
        The paper's lambda (eq. 3), the weight of the locality term; ``lambda`` is a Python keyword, hence
        the name. 0.3 is the value the paper's section VI states for its experiments; its section VI-E
        reports the best results at lambda = 8 (Yale) and 32 (ORL), and good results from 2^0 to 2^6.
        ``lam=0`` is CF.
    v_rule : {"eq12", "eq41"}, default="eq12"
        The V rule on nonnegative data: eq. 12 (the paper's section IV), or eq. 41 (its section V-C's
        eq. 40 with X >= 0), which zeroes v_ik for good once lambda ||X w_k - x_i||^2 > 2 (K W)_ik. Both
        never increase the objective and are CF's rule at ``lam=0``; mixed-sign data run eq. 40 either way.
        See the module docstring.
    normalize_v : bool, default=False
        Apply Deng Cai's NormalizeUV with NormV = 1 (V's columns to unit L2 norm, W's scaled inversely) where
        his ``LCCF_Multi.m`` does while iterating (lines 68, 122-123; :mod:`src.methods.concept`). The
        paper does not say; unlike CF's, LCF's objective depends on that scale, so this changes the fit,
        and the objective history need not be monotone (each rescaling may raise it).

    Attributes
    ----------
    factors_ : dict with ``W`` (n x k, concept weights of the samples) and ``V`` (n x k)
    kernel_ : "implicit" (X >= 0: eq. 11 and eq. 12 or 41 as ``v_rule`` says, no n x n array) or "explicit"
        (X has negative entries: eqs. 36 and 40 on an explicit K)
    embedding_ : V diag(W^T K W)^(1/2), as CF (normalization applied once at the end)
    components_ : (k, m) unit-norm concepts (X W diag(W^T K W)^(-1/2))^T

    References
    ----------
    H. Liu, Z. Yang, J. Yang, Z. Wu, X. Li, "Local coordinate concept factorization for image
    representation", IEEE Trans. Neural Netw. Learn. Syst. 25(6), 2014, eqs. 3, 11-12, 36, 40.
    """

    factor_names = ("W", "V")
    _parameter_constraints = {
        **Factorization._parameter_constraints,
        "lam": NONNEGATIVE,
        "v_rule": one_of(V_RULES),
        "normalize_v": BOOLEAN,
    }
    _expected_failed_checks = dict.fromkeys(("check_transformer_general", "check_transformer_data_not_an_array"),
                                            ZEROS_THAT_STAY)

    def __init__(self, n_components=2, *, max_iter=10_000, tol=1e-5, init="random", random_state=None,
                 lam=0.3, v_rule="eq12", normalize_v=False,
                 n_starts=10, min_iter=30, stopping="reference", dtype="float64"):
        super().__init__(n_components, max_iter=max_iter, tol=tol, init=init, random_state=random_state,
                         n_starts=n_starts, min_iter=min_iter, stopping=stopping, dtype=dtype)
        self.lam = lam
        self.v_rule = v_rule
        self.normalize_v = normalize_v

    def _factor_shapes(self, m, n, y):
        k = self.n_components
        return {"W": (n, k), "V": (n, k)}

    def _locality(self):
        return float(self.lam)  # transform: LCF's coefficient rule on the fixed anchors X W

    def _kernel_rules(self, X, handoff):
        return lcf_rules(X, float(self.lam), self.kernel_, self.v_rule, handoff)

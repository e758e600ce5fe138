"""Concept factorization (CF) and constrained concept factorization (CCF).

CF (Xu & Gong 2004) writes every basis vector as a nonnegative combination of the samples, X ~ X W V^T,
W (n x k) >= 0, V (n x k) >= 0, and minimizes, with the kernel K = X^T X (n x n),

    O = ||X - X W V^T||_F^2 = Tr(K) - 2 Tr(V^T K W) + Tr(V^T V W^T K W).

CCF (Liu et al. 2014) adds the labels as hard constraints, V = A Z with the label constraint matrix A of
:func:`~src.methods.graph.label_matrix.label_matrix` (n x r, r = c + n_u), Z (r x k) >= 0 (eq. 4):
O = ||X - X W Z^T A^T||^2. Its multiplicative rules (eqs. 10-11; CF is the case A = I, its eq. 2)::

    Z <- Z * (A^T K W) / (A^T A Z W^T K W)            (eq. 11)
    W <- W * (K A Z) / (K W Z^T A^T A Z)              (eq. 10)

Order: Z (or V) first, then W, as in Deng Cai's LCCF code (V, then U = our W); the papers list W first
and prove Z first without fixing an order. With no label A = I and CCF is exactly CF (tested).

Implicit kernel. With feature data every product with K is taken as K B = X^T (X B), O(mnk) time and
O(mn + nk) memory: no n x n array is ever formed (tested with tracemalloc at n = 3000). W^T K W = (X W)^T
(X W) and Tr(V^T K W) = <X V, X W>. The products X W and X V of an update are handed to the objective and
X W on to the next update (:class:`~src.methods.core.loop.Handoff`), so one iteration costs four m x n x k
products. The starts of a fit advance together: every factor is a stack (s, p, k) and each product with X
serves all of them at once (:mod:`~src.methods.core.products`). The products take two passes over X
(:class:`~src.methods.core.products.SampleBlocks`): each block of samples gives its rows of K W, their new rows
of V (Z) and its share of X V; then its rows of K V, of the new W and its share of X W. In CCF a labelled
class's row of Z pools all its samples: it is updated after the first pass from the class sums of K W, and
its share of X V is (X A_c) z_c with the class sums X A_c of X computed once.

General (mixed-sign) form. When X has negative entries, K has entries of both signs and the rules above
can leave the nonnegative orthant. The CCF paper's section III-E then applies Sha et al.'s multiplicative
rule for nonnegative quadratic programs, y <- y (-c + sqrt(c^2 + 4 (B+ y)(B- y))) / (2 B+ y) for
Q(y) = y^T B y / 2 + c^T y, with K = K+ - K- split into its positive and negative entries. That needs K
itself, so in this case (and only then) K, K+ and K- are built explicitly (n x n, O(n^2 m) once and
O(n^2 k) per iteration and start, as in the paper's own complexity count; one product per kernel serves
all starts). With P+- = K+- W Z^T A^T A Z and
Q+- = A^T A Z W^T K+- W::

    Z <- Z * (A^T K W + sqrt((A^T K W)^2 + 4 Q+ Q-)) / (2 Q+)       (eq. 27)
    W <- W * (K A Z + sqrt((K A Z)^2 + 4 P+ P-)) / (2 P+)           (eq. 23)

The printed eqs. 23 and 27 are inconsistent in their constants: eq. 23 has P+ P- under the root where
Theorem 2 gives 4 P+ P-, and eq. 27 defines Q+- with a factor 2 and divides by 2 Q+, which halves the step
and does not reduce to eq. 11 as the paper says it does (its eq. 28 is eq. 11 divided by 2). We use the
constants that follow from Theorem 2 (Hessian blocks 2 K (x) (Z^T A^T A Z) and 2 (A^T A) (x) (W^T K W),
gradients at 0 equal to -2 K A Z and -2 A^T K W); they reduce exactly to eqs. 10-11 when K- = 0, and the
objective is tested to never increase with them. Both splits (K+- (x) Z^T A^T A Z and
A^T A (x) W^T K+- W) are elementwise nonnegative and symmetric, which is all Sha et al.'s auxiliary
function needs. Which form runs is decided by the data: the general form iff X has a negative entry.

Normalization (eqs. 12-13). CCF fixes the scale ambiguity (W D, Z D^-1) by w_c^T K w_c = 1:
Z <- Z diag(W^T K W)^(1/2), W <- W diag(W^T K W)^(-1/2). The text introduces it after Theorem 1 as a
normalization of "the solution", so we apply it once at the end; Deng Cai's LCCF code does the same
(its NormalizeUV with K scales U = W by sqrt(diag(U^T K U)) and V inversely, after the iterations). Both
the plain and the general rules are equivariant under (W D, Z D^-1), so normalizing at every iteration
would give the same final representation (tested). ``embedding_`` = A Z diag(W^T K W)^(1/2) and
``components_`` are the unit-norm concept vectors X W diag(W^T K W)^(-1/2).

Normalizing V while iterating (``normalize_v``, CF and LCF). Deng Cai's ``LCCF_Multi.m`` also calls
``NormalizeUV(K, U, V, NormV=1, Norm=2)`` while it iterates: on every start's initial factors (its lines 68
and 175) and after every update from the ``minIter``-th on (lines 122-123; its ``minIter`` is ours minus 1),
i.e. after the last update of the starts' selection, so that the objectives compared are those of normalized
factors, and after every update of the kept start (of every update with a single start). NormalizeUV with
NormV = 1 scales V's columns to unit L2 norm and his U (our W) by the same norms, floored at 1e-15:
V <- V diag(||v_k||)^-1, W <- W diag(||v_k||), so X W V^T is unchanged. ``normalize_v=True`` applies it at
those same points (:func:`normalizing_v`); the products X W and X V handed from an update to the objective
are rescaled with the factors (X W by ||v_k||, X V by 1 / ||v_k||). CF's objective is invariant and its rules
equivariant under this rescaling, so for CF it changes nothing but rounding (tested): it is the control for
LCF, whose objective is not invariant (:mod:`src.methods.lcf`). The final normalization of eqs. 12-13
(NormV = 0, with K) is applied at the end either way, as in Cai's code (its line 193).

References
----------
W. Xu and Y. Gong, "Document clustering by concept factorization", SIGIR 2004.

H. Liu, G. Yang, Z. Wu, D. Cai, "Constrained concept factorization for image representation",
IEEE Trans. Cybernetics 44(7), pp. 1214-1224, 2014.

F. Sha, Y. Lin, L. K. Saul, D. D. Lee, "Multiplicative updates for nonnegative quadratic programming",
Neural Computation 19(8), 2007.
"""

import logging
from collections.abc import Mapping

import numpy as np
import scipy.sparse as sp

from ..errors import ConfigError
from .core.estimator import Factorization, LabelConstrainedMixin, labels_in_fit_only
from .core.loop import Handoff
from .core.multiplicative import multiply
from .core.products import SampleBlocks, dot, gram, inner, squared_norm, x_dot
from ..checks import BOOLEAN, one_of
from .graph.label_matrix import SHARED_ROWS, label_matrix, n_constraint_columns
from .nmf import NMF

logger = logging.getLogger(__name__)

KERNELS = ("implicit", "explicit")
OPPOSITE_CONCEPTS = (
    "the check gives CF its data as they are, standardized, with negative entries (CF accepts any sign): two "
    "tight blobs on a line through 0. At rank 2 the fitted concepts X W point in nearly opposite directions "
    "(cosine -0.99997), so a sample's coefficients are pinned down only in their difference v_i2 - v_i1: the "
    "objective is nearly flat along v_i1 = v_i2, and fit_transform (the fit's V) and transform (the "
    "coefficient rule on the fixed concepts, from its own start) end at points of that valley about 150 apart")
"""Why ``check_transformer_general`` fails for CF at a user's settings (measured with tools/estimator_checks.py)."""
NORM_FLOOR = 1e-15
"""Floor of the column norms in Deng Cai's NormalizeUV (``max(1e-15, ...)``)."""


def explicit_kernel(X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """K = X^T X and its positive and negative parts K+ = max(K, 0), K- = max(-K, 0), each (n x n): what the
    general mixed-sign rules of CF, CCF and LCF need (Theorem 2 of each paper)."""
    n = X.shape[1]
    logger.info("mixed-sign data: building the %d x %d kernel and its positive and negative parts", n, n)
    K = X.T @ X
    return K, np.maximum(K, 0), np.maximum(-K, 0)


def data_products(handoff: Handoff, X, W: np.ndarray, C: np.ndarray, expand=None):
    """(X W, X V) for the factors W and C (V = ``expand(C)``, or C itself), handed on to the next taker.

    Taken from ``handoff`` when the last update or objective left them for these arrays, else computed;
    either way kept again for them (the objective changes no factor).
    """
    products = handoff.take(W, C)
    if products is None:
        products = (x_dot(X, W), x_dot(X, C if expand is None else expand(C)))
    handoff.keep(products, W, C)
    return products


def normalize_v_columns(W: np.ndarray, V: np.ndarray, handoff: Handoff | None = None) -> None:
    """Deng Cai's NormalizeUV with NormV = 1, Norm = 2, in place: V's columns to unit L2 norm, W's scaled up.

    V <- V diag(||v_k||)^-1 and W <- W diag(||v_k||), the norms floored at :data:`NORM_FLOOR` (a zero column
    of V stays zero, W's is scaled by the floor), so X W V^T is unchanged. Works on one start (n x k) or a
    stack of starts (s, n, k), each start with its own norms.

    Parameters
    ----------
    W, V : ndarray of shape (n, k) or (s, n, k)
        The concept weights and the coefficients, rescaled in place.
    handoff : Handoff, optional
        If it holds (X W, X V) for these W and V (as :func:`concept_rules` and
        :func:`~src.methods.lcf.lcf_rules` leave them after an update), they are rescaled likewise and kept,
        so that the objective still finds products valid for the rescaled factors.
    """
    norms = np.maximum(np.linalg.norm(V, axis=-2, keepdims=True), NORM_FLOOR)  # (s, 1, k) or (1, k)
    products = None if handoff is None else handoff.take(W, V)
    V /= norms
    W *= norms
    if products is not None:
        XW, XV = products
        handoff.keep((XW * norms, XV / norms), W, V)


def normalizing_v(update, handoff: Handoff, n_select: int):
    """``update`` followed by :func:`normalize_v_columns` where Deng Cai's LCCF_Multi.m normalizes.

    :func:`~src.methods.core.loop.solve` advances the s > 1 starts together for ``n_select`` updates (stacks of s),
    then the kept start alone (a stack of one); a single start is never selected. Cai (lines 121-123) then
    normalizes after the ``n_select``-th update of the selection, and after every update of the kept or
    single start, which is what the returned update does (it tells the phases apart by the stack size).

    Parameters
    ----------
    update : callable
        One sweep of the rules over the factor dict {"W": (s, n, k), "V": (s, n, k)}, in place.
    handoff : Handoff
        The handoff ``update`` leaves (X W, X V) in (rescaled with the factors).
    n_select : int
        Updates of the selection, min(min_iter, max_iter) as in :func:`~src.methods.core.loop.solve`.
    """
    selection_updates = 0

    def update_and_normalize(factors):
        nonlocal selection_updates
        update(factors)
        W, V = factors["W"], factors["V"]
        if len(V) > 1:  # the starts' selection: only its last update is followed by NormalizeUV
            selection_updates += 1
            if selection_updates != n_select:
                return
        normalize_v_columns(W, V, handoff)

    return update_and_normalize


def concept_rules(X: np.ndarray, A: sp.spmatrix | None = None, kernel: str = "implicit",
                  handoff: Handoff | None = None):
    """Return ``(update, objective)`` of CF (A None) or CCF (A given) on X (m x n), over stacks of starts.

    Parameters
    ----------
    X : ndarray of shape (m, n)
        Data, one sample per column. Must be nonnegative for ``kernel="implicit"``.
    A : scipy.sparse matrix of shape (n, r) or None
        Label constraint matrix; None for plain CF (the coefficient factor is then ``V``, else ``Z``).
    kernel : {"implicit", "explicit"}
        "implicit": the plain rules (eqs. 10-11, CF's eq. 2) with K B = X^T (X B), no n x n array.
        "explicit": the general mixed-sign rules (eqs. 23 and 27) with K, K+, K- built (n x n).
    handoff : Handoff, optional
        Where the update leaves (X W, X A Z) for the objective (and X W for the next update); a new one if
        None. Given by the estimator when it rescales the factors between the rules (``normalize_v``).

    Returns
    -------
    update, objective : callables over the factor dict {"W": (s, n, k), "V" or "Z": (s, n or r, k)}; the
        objective returns one value per start, shape (s,).
    """
    one_of(KERNELS).check("kernel", kernel)
    coefficient = "V" if A is None else "Z"
    if A is None:
        expand = contract = lambda B: B  # noqa: E731  (A = I)
        At = None
    else:
        A = sp.csr_matrix(A)
        if not (np.array_equal(A.indptr, np.arange(A.shape[0] + 1)) and np.all(A.data == 1)):
            raise ValueError("A must hold exactly one 1 per row (each sample in one column: its class or its own)")
        A = A.astype(X.dtype)
        At = A.T.tocsr()

        def expand(Z):  # A Z, (n x k) per start
            return dot(A, Z)

        def contract(B):  # A^T B, (r x k) per start
            return dot(At, B)

    trace_K = squared_norm(X)  # Tr(K) = ||X||_F^2 (np.vdot would copy an F-ordered X twice)
    if handoff is None:  # (X W, X A Z) from the update to the objective, X W on to the next update
        handoff = Handoff()

    def objective(factors):
        W, Z = factors["W"], factors[coefficient]
        XW, XV = data_products(handoff, X, W, Z, expand)
        # Tr(K) - 2 Tr(V^T K W) + Tr(V^T V W^T K W), per start
        return trace_K - 2.0 * inner(XV, XW) + inner(gram(expand(Z)), gram(XW))

    if kernel == "implicit":
        return _implicit_concept_update(X, A, At, coefficient, handoff), objective
    return _explicit_concept_update(X, coefficient, expand, contract, handoff), objective


def _implicit_concept_update(X: np.ndarray, A: sp.csr_matrix | None, At: sp.csr_matrix | None,
                             coefficient: str, handoff: Handoff):
    """The update of :func:`concept_rules` for nonnegative X: eqs. 10-11 (CF's eq. 2) with K B = X^T (X B)."""
    blocks = SampleBlocks(X)
    # each sample sits in one column of A (its class, or its own): samples alone in their column have
    # independent rows of Z, updated within the pass over X; the classes' rows pool their samples
    column_of = np.arange(X.shape[1]) if A is None else A.indices
    sizes = np.bincount(column_of, minlength=column_of.size if A is None else A.shape[1])
    single = sizes[column_of] == 1  # (n,)
    pooled = np.flatnonzero(sizes > 1)  # columns of A with more than one sample
    pooled_sizes = sizes[pooled].astype(X.dtype)[:, None]
    if pooled.size:
        A_pooled_T = At[pooled]  # (p x n)
        XA_pooled = np.asarray(A_pooled_T @ X.T).T  # X A restricted to the pooled columns, (m x p)

    def update(factors):
        W, Z = factors["W"], factors[coefficient]
        kept = handoff.take(W, Z)
        XW = x_dot(X, W) if kept is None else kept[0]
        WKW = gram(XW)  # W^T K W, (k x k) per start
        KW = np.empty_like(W)  # K W, (n x k) per start, filled block by block, kept for the W update
        V = Z if A is None else Z[..., column_of, :]  # A Z: each sample's row of Z (a copy for CCF)
        if pooled.size:
            V[..., ~single, :] = 0.0  # pooled rows are updated after the pass; meanwhile they add nothing

        def z_rule(block, KW_block):  # eq. 11 for the rows of samples alone in their column of A
            KW[..., block, :] = KW_block  # A^T K W for such a row; A^T A Z W^T K W with (A^T A)_jj = 1
            V_b = V[..., block, :]
            multiply(V_b, KW_block, V_b @ WKW)  # a pooled row is 0 and stays 0

        XV = blocks.fused(XW, z_rule, V)  # the independent rows and their share of X V, one pass over X
        if A is not None:
            Z[..., column_of[single], :] = V[..., single, :]
        if pooled.size:  # eq. 11 for the classes' rows: A^T K W sums K W over the class
            Z_pooled = Z[..., pooled, :]  # a copy, written back
            multiply(Z_pooled, dot(A_pooled_T, KW), pooled_sizes * (Z_pooled @ WKW))  # / A^T A Z W^T K W
            Z[..., pooled, :] = Z_pooled
            XV += dot(XA_pooled, Z_pooled)  # their share of X V = X A Z
            V[..., ~single, :] = Z[..., column_of[~single], :]

        VtV = gram(V)  # Z^T A^T A Z

        def w_rule(block, KV_block):  # eq. 10, rows ``block``: W * K A Z / (K W Z^T A^T A Z)
            multiply(W[..., block, :], KV_block, KW[..., block, :] @ VtV)

        XW = blocks.fused(XV, w_rule, W)  # X W for the objective and the next update
        handoff.keep((XW, XV), W, Z)

    return update


def _explicit_concept_update(X: np.ndarray, coefficient: str, expand, contract, handoff: Handoff):
    """The update of :func:`concept_rules` for mixed-sign X: eqs. 23 and 27 with K, K+, K- built."""
    K, K_plus, K_minus = explicit_kernel(X)

    def update_general(factors):
        handoff.clear()
        W, Z = factors["W"], factors[coefficient]
        KpW, KmW = dot(K_plus, W), dot(K_minus, W)  # K+ W, K- W, (n x k) per start
        V = expand(Z)
        G = contract(KpW - KmW)  # A^T K W
        Q_plus = contract(V @ (W.mT @ KpW))  # A^T A Z W^T K+ W
        Q_minus = contract(V @ (W.mT @ KmW))  # A^T A Z W^T K- W
        multiply(Z, G + np.sqrt(G * G + 4.0 * Q_plus * Q_minus), 2.0 * Q_plus)  # eq. 27 (Theorem 2's constants)

        V = expand(Z)
        S = gram(V)  # Z^T A^T A Z
        KV = dot(K, V)  # K A Z
        P_plus, P_minus = KpW @ S, KmW @ S  # K+- W Z^T A^T A Z
        multiply(W, KV + np.sqrt(KV * KV + 4.0 * P_plus * P_minus), 2.0 * P_plus)  # eq. 23 (Theorem 2's)

    return update_general


def concept_factors_from_nmf(X: np.ndarray, U: np.ndarray, V: np.ndarray, A: sp.spmatrix):
    """Map NMF factors X ~ U V^T to CCF initial factors ``W`` (n x k) and ``Z`` (r x k).

    The CCF paper initializes from NMF without saying how. We take

    * Z = (A^T A)^-1 A^T V: the least-squares fit of V by A Z (the mean of V's rows over each labelled
      class, V's own row for an unlabelled sample), nonnegative;
    * W = V D with D diagonal, d_k = <u_k, X v_k> / ||X v_k||^2: the concepts are the NMF coefficients
      used as sample weights, each column scaled so that X w_k fits the NMF basis vector u_k in least
      squares (d_k = 0 when X v_k = 0). W >= 0 because X, U, V >= 0.

    Parameters
    ----------
    X : ndarray (m, n); U : ndarray (m, k); V : ndarray (n, k); A : sparse (n, r).

    Returns
    -------
    W : ndarray (n, k); Z : ndarray (r, k)
    """
    A = sp.csr_matrix(A)
    class_sizes = np.asarray(A.sum(axis=0)).ravel()
    Z = (A.T @ V) / class_sizes[:, None]
    XV = X @ V
    fit = np.einsum("ik,ik->k", U, XV)
    scale = np.einsum("ik,ik->k", XV, XV)
    d = np.divide(fit, scale, out=np.zeros_like(fit), where=scale > 0)
    return V * d, Z


class _ConceptFactorization(Factorization):
    """Shared machinery of CF, CCF and LCF: the concepts X W are computed from the training data once fitted."""

    nonnegative_data = False  # mixed-sign data run the general rules (eqs. 23, 27) with an explicit K
    batched = True
    coefficient = "V"
    normalize_v = False  # Cai's NormalizeUV (NormV = 1) while iterating; a parameter of CF and LCF

    def _fit(self, X_rows, y, callback=None):
        """Fit to validated X (n_samples, n_features), labels y (-1 = unlabelled); X may have negative entries.

        Also sets ``concept_norms_`` (k,), sqrt(diag(W^T K W)): ``components_.T * concept_norms_`` is X W.
        """
        self._prepare(y)
        return super()._fit(X_rows, y, callback)

    def _new_samples(self, X):
        """CF's coefficient rule with the fitted concepts U = X W as a fixed basis (:mod:`.core.fixed_basis`).

        The concepts are tied to the training samples, so ``transform`` keeps them: K W becomes X_new^T U
        (new samples unlabelled, so A = I for CCF). Returns V diag(||u_k||), the convention of ``embedding_``.
        """
        return self._fixed_basis_samples(X, self.components_.T * self.concept_norms_, self._locality())

    def _locality(self) -> float:
        """Weight of LCF's locality term in ``transform`` (0 for CF and CCF)."""
        return 0.0

    def _prepare(self, y):
        """Hook run before fitting with the validated labels y (n,)."""

    def _constraint(self):
        """The label constraint matrix A (n x r), or None for plain CF."""
        return None

    def _initial_factors(self, shapes, init, rng, X):
        factors = super()._initial_factors(shapes, init, rng, X)  # fresh arrays: the caller's init is not touched
        if self.normalize_v:  # Cai's NormalizeUV on every start's initial factors (LCCF_Multi.m lines 68, 175)
            normalize_v_columns(factors["W"], factors["V"])
        return factors

    def _rules(self, X, y):
        self.kernel_ = "explicit" if X.min() < 0 else "implicit"
        handoff = Handoff()
        update, objective = self._kernel_rules(X, handoff)
        if self.normalize_v:
            update = normalizing_v(update, handoff, min(int(self.min_iter), int(self.max_iter)))
        return update, objective

    def _kernel_rules(self, X, handoff):
        """``(update, objective)`` of the method on X (m x n), the form ``kernel_`` names, over ``handoff``."""
        return concept_rules(X, self._constraint(), self.kernel_, handoff)

    def _outputs(self, X, factors):
        """The unit-norm concepts X W diag(W^T K W)^-1/2 (eq. 13, m x k) and the representation
        A Z diag(W^T K W)^1/2 (eq. 12 applied to V = A Z, n x k), from one product X W with the training data
        X (m x n); sets ``concept_norms_``, sqrt(diag(W^T K W)) = the column norms of X W."""
        XW = X @ factors["W"]
        norms = np.linalg.norm(XW, axis=0)
        self.concept_norms_ = norms
        basis = np.divide(XW, norms, out=np.zeros_like(XW), where=norms > 0)
        V = factors[self.coefficient]
        A = self._constraint()
        if A is not None:
            V = dot(A.astype(V.dtype), V)
        return basis, V * norms


class CF(_ConceptFactorization):
    """Concept factorization X ~ X W V^T (Xu & Gong 2004), multiplicative updates.

    ``factors_`` holds ``W`` (n x k, concept weights of the samples) and ``V`` (n x k). X may have negative
    entries: the general mixed-sign rules then run on an explicit kernel (``kernel_`` says which form ran,
    "implicit" or "explicit"). ``embedding_`` is V diag(W^T K W)^(1/2), ``components_`` the unit-norm
    concepts (X W diag(W^T K W)^(-1/2))^T (Deng Cai's LCCF normalization, applied once at the end).

    Parameters
    ----------
    n_components, max_iter, tol, init, random_state, n_starts, min_iter, stopping, dtype
        As in :class:`~src.methods.core.estimator.Factorization`; ``init`` is "random" or {"W": (n, k), "V": (n, k)}.
    normalize_v : bool, default=False
        Apply Deng Cai's NormalizeUV with NormV = 1 (V's columns to unit L2 norm, W's scaled inversely) where
        his ``LCCF_Multi.m`` does while iterating (lines 68, 122-123): see the module docstring. CF's
        objective and rules do not depend on that scale, so the result is the same up to rounding; the
        parameter exists as the control of :class:`~src.methods.lcf.LCF`'s.

    References
    ----------
    W. Xu and Y. Gong, "Document clustering by concept factorization", SIGIR 2004 (rules as eq. 2 of
    Liu et al., IEEE TCYB 2014).

    D. Cai, X. He, J. Han, "Locally consistent concept factorization for document clustering", IEEE TKDE
    23(6), 2011 (its code ``LCCF_Multi.m``, NormalizeUV).
    """

    factor_names = ("W", "V")
    _parameter_constraints = {**Factorization._parameter_constraints, "normalize_v": BOOLEAN}
    _expected_failed_checks = dict.fromkeys(("check_transformer_general", "check_transformer_data_not_an_array"),
                                            OPPOSITE_CONCEPTS)

    def __init__(self, n_components=2, *, max_iter=10_000, tol=1e-5, init="random", random_state=None,
                 normalize_v=False, n_starts=10, min_iter=30, stopping="reference", dtype="float64"):
        super().__init__(n_components, max_iter=max_iter, tol=tol, init=init, random_state=random_state,
                         n_starts=n_starts, min_iter=min_iter, stopping=stopping, dtype=dtype)
        self.normalize_v = normalize_v

    def _factor_shapes(self, m, n, y):
        k = self.n_components
        return {"W": (n, k), "V": (n, k)}


class CCF(LabelConstrainedMixin, _ConceptFactorization):
    """Constrained concept factorization X ~ X W (A Z)^T (Liu et al., IEEE TCYB 2014).

    Parameters
    ----------
    n_components, max_iter, tol, init, random_state, n_starts, min_iter, stopping, dtype
        As in :class:`~src.methods.core.estimator.Factorization`.
    init_from_nmf : bool, default=False
        Initialize from NMF as the paper does: fit :class:`~src.methods.nmf.NMF` with the same
        ``n_components``, solver settings (``n_starts``, ``min_iter``, ``max_iter``, ``tol``, ``stopping``)
        and ``random_state`` (``init`` is then "random" or the NMF factors {"U", "V"}), so that CCF starts
        from the very solution of the NMF baseline; map its U, V to W, Z with
        :func:`concept_factors_from_nmf` and iterate CCF from that one start. Needs nonnegative X. The
        paper gives neither the mapping nor how long NMF runs: both are our choices.

    Attributes
    ----------
    factors_ : dict with ``W`` (n x k) and ``Z`` ((c + n_u) x k)
    constraint_matrix_ : scipy.sparse matrix (n x (c + n_u)), the label constraint matrix A
    kernel_ : "implicit" (plain rules, eqs. 10-11) or "explicit" (mixed-sign data, eqs. 23 and 27)
    embedding_ : A Z diag(W^T K W)^(1/2) (eq. 12, applied once at the end)

    References
    ----------
    H. Liu, G. Yang, Z. Wu, D. Cai, "Constrained concept factorization for image representation",
    IEEE Trans. Cybernetics 44(7), 2014, eqs. 4, 10-13, 23, 27.
    """

    factor_names = ("W", "Z")
    coefficient = "Z"
    _parameter_constraints = {**Factorization._parameter_constraints, "init_from_nmf": BOOLEAN}
    _expected_failed_checks = labels_in_fit_only(SHARED_ROWS)

    def __init__(self, n_components=2, *, max_iter=10_000, tol=1e-5, init="random", random_state=None,
                 init_from_nmf=False, n_starts=10, min_iter=30, stopping="reference", dtype="float64"):
        super().__init__(n_components, max_iter=max_iter, tol=tol, init=init, random_state=random_state,
                         n_starts=n_starts, min_iter=min_iter, stopping=stopping, dtype=dtype)
        self.init_from_nmf = init_from_nmf

    def _factor_shapes(self, m, n, y):
        k = self.n_components
        return {"W": (n, k), "Z": (n_constraint_columns(y), k)}

    def _prepare(self, y):
        self.constraint_matrix_ = label_matrix(y)

    def _constraint(self):
        return self.constraint_matrix_

    def _start_inits(self):
        inits = super()._start_inits()
        return inits[:1] if self.init_from_nmf else inits  # one start: the NMF solution (NMF has the starts)

    def _initial_factors(self, shapes, init, rng, X):
        if not self.init_from_nmf:
            return super()._initial_factors(shapes, init, rng, X)
        if isinstance(init, Mapping) and set(init) != {"U", "V"}:
            raise ConfigError(
                f"init_from_nmf=True takes init='random' or the NMF factors {{'U', 'V'}}, got {sorted(init)}"
            )
        if X.min() < 0:
            raise ConfigError("init_from_nmf=True needs X >= 0 (it runs NMF), but X has negative entries")
        nmf = NMF(  # the NMF baseline's own fit: same seed, starts and stopping rule
            n_components=self.n_components,
            max_iter=self.max_iter,
            tol=self.tol,
            init=self.init,
            random_state=self.random_state,
            n_starts=self.n_starts,
            min_iter=self.min_iter,
            stopping=self.stopping,
            dtype=self.dtype,
        ).fit(X.T)
        logger.debug("CCF initialized from NMF after %d iterations", nmf.n_iter_)
        W, Z = concept_factors_from_nmf(X, nmf.factors_["U"], nmf.factors_["V"], self._constraint())
        return {"W": W, "Z": Z}

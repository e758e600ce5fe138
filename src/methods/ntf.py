"""Nonnegative tensor factorization (nonnegative PARAFAC / CP) of the image stack, Shashua and Hazan.

Each sample (a row of the data, h*w pixels) is an h x w image; the n images form the third-order tensor
G (h x w x n), G[i, s, t] = pixel (i, s) of image t. NTF approximates G by k nonnegative rank-one tensors

    G ~ sum_j a_j o b_j o c_j,     A = [a_j] (h x k), B = [b_j] (w x k), C = [c_j] (n x k) >= 0,

minimizing O = ||G - sum_j a_j o b_j o c_j||_F^2 (Shashua & Hazan write 1/2 O; the factor does not change
the updates). Row t of C is the representation of image t; the basis image of component j is a_j b_j^T.

Multiplicative updates (Shashua & Hazan 2005: their entry-wise rules for u^j, v^j, w^j, applied to a
whole factor at a time), with "⊙" the Khatri-Rao (column-wise Kronecker) product and G_(1), G_(2), G_(3)
the mode unfoldings::

    A <- A * G_(1) (C ⊙ B) / (A ((B^T B) * (C^T C)))
    B <- B * G_(2) (C ⊙ A) / (B ((A^T A) * (C^T C)))
    C <- C * G_(3) (B ⊙ A) / (C ((A^T A) * (B^T B)))

Each is Lee and Seung's Frobenius NMF update of one unfolding with the other two factors fixed, so the
objective never increases.

In the papers' orientation X (m x n), m = h*w, the image of sample t is X[:, t] reshaped to (h, w) in C
(row-major) order, so that X is exactly G reshaped to (h*w, n). The products with G are taken through X:
G_(1) (C ⊙ B) and G_(2) (C ⊙ A) from the (m x k) product X C, and G_(3) (B ⊙ A) = X^T (A ⊙' B), with
(A ⊙' B)[i*w + s, j] = A[i, j] B[s, j] (m x k). No tensor copy and no (m x n x k) array is formed.

Choices where the papers are silent (CNMF only says "each face image is represented as a second order
tensor"):

* pixel order: rows are always reshaped in C (row-major) order. Deng Cai's face files store an h x w image
  column by column (MATLAB order); such a row is the C-order row of the transposed (w x h) image, and a CP
  factorization of the transposed stack is the same problem with A and B exchanged (same C, same
  objective; tested). So column-major data need ``image_shape=(w, h)``; for square images (the 32 x 32
  face and object sets, 28 x 28 MNIST) ``image_shape`` is the same either way;
* update order A, B, C (mode order; on transposed images the iterates therefore differ slightly, the
  problem does not); the factors are drawn uniform in [0, 1) (the base class) and not rescaled;
* the representation is C with column j scaled by ||a_j|| ||b_j|| (the Frobenius norm of basis image j),
  the tensor analogue of Deng Cai's ``NormalizeUV``: it leaves the reconstruction unchanged. The basis
  images of ``components_`` are scaled inversely (unit norm), so that ``inverse_transform`` of the
  representation is the reconstruction.

References
----------
A. Shashua and T. Hazan, "Non-negative tensor factorization with applications to statistics and computer
vision", Proc. ICML 2005 (cited as [35] in CNMF).
"""


import numpy as np

from ..errors import ConfigError
from .core.estimator import Factorization, fit_stops_short
from .core.loop import Handoff
from .core.multiplicative import multiply
from .core.products import gram, inner, squared_norm, x_dot, xt_dot
from ..checks import POSITIVE_INT, Rule


def khatri_rao_rows(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """(h*w x k) matrix (per start) whose column j is vec(a_j b_j^T) in C order: row i*w + s holds A[i, j] B[s, j]."""
    h, k = A.shape[-2:]
    w = B.shape[-2]
    return (A[..., :, None, :] * B[..., None, :, :]).reshape(*A.shape[:-2], h * w, k)


def cp_objective(normX2: float, A, B, C, M_C):
    """||G - [[A, B, C]]||_F^2 = ||G||^2 - 2 <C, G_(3)(B ⊙ A)> + sum((A^T A) * (B^T B) * (C^T C)), per start.

    ``M_C`` (n x k) is G_(3) (B ⊙ A) computed with the given A and B.
    """
    grams = gram(A) * gram(B) * gram(C)
    return normX2 - 2.0 * inner(C, M_C) + grams.sum(axis=(-2, -1))


def ntf_rules(X: np.ndarray, image_shape: tuple[int, int]):
    """Return ``(update, objective)`` of nonnegative CP on X (m x n), images of ``image_shape`` = (h, w).

    Parameters
    ----------
    X : ndarray of shape (m, n)
        Nonnegative data, one image per column, pixels in C order (m = h*w).
    image_shape : tuple of int
        (h, w).

    Notes
    -----
    Factors are stacks of starts: ``A`` (s, h, k), ``B`` (s, w, k), ``C`` (s, n, k).
    """
    h, w = image_shape
    normX2 = squared_norm(X)  # ||X||^2 (np.vdot would copy an F-ordered X twice)
    handoff = Handoff()

    def update(factors):
        handoff.clear()
        A, B, C = factors["A"], factors["B"], factors["C"]
        XC = x_dot(X, C).reshape(*C.shape[:-2], h, w, C.shape[-1])  # G x_3 C, (h x w x k) per start
        CtC = gram(C)

        numerator = np.einsum("...isj,...sj->...ij", XC, B)  # A update, G_(1)(C ⊙ B) (Shashua-Hazan rule for u^j)
        multiply(A, numerator, A @ (gram(B) * CtC))

        numerator = np.einsum("...isj,...ij->...sj", XC, A)  # B update, G_(2)(C ⊙ A) (rule for v^j)
        multiply(B, numerator, B @ (gram(A) * CtC))

        M_C = xt_dot(X, khatri_rao_rows(A, B))  # C update, G_(3)(B ⊙ A) (rule for w^j)
        multiply(C, M_C, C @ (gram(A) * gram(B)))
        handoff.keep(M_C, A, B, C)

    def objective(factors):
        A, B, C = factors["A"], factors["B"], factors["C"]
        M_C = handoff.take(A, B, C)
        if M_C is None:
            M_C = xt_dot(X, khatri_rao_rows(A, B))
        return cp_objective(normX2, A, B, C, M_C)

    return update, objective


IMAGE_SHAPE = Rule(lambda shape: isinstance(shape, (tuple, list)) and len(shape) == 2
                   and all(POSITIVE_INT.test(d) for d in shape),
                   "a pair (h, w) of positive integers (NTF needs the images' shape)")
"""The rule of NTF's ``image_shape`` without the data (with them, h * w must be the number of features)."""


def check_image_shape(image_shape, n_features: int | None = None) -> tuple[int, int]:
    """Return ``image_shape`` as (h, w), else raise :class:`~src.errors.ConfigError` naming it.

    With ``n_features`` given, also require h * w == n_features.
    """
    IMAGE_SHAPE.check("image_shape", image_shape)
    h, w = int(image_shape[0]), int(image_shape[1])
    if n_features is not None and h * w != n_features:
        raise ConfigError(f"image_shape={image_shape!r} has {h * w} pixels but the data have "
                          f"{n_features} features")
    return h, w


class NTF(Factorization):
    """Nonnegative tensor factorization (nonnegative CP) of the stack of images, rank ``n_components``.

    Parameters
    ----------
    n_components : int, default=2
        Number k of rank-one components.
    max_iter : int, default=200
        Number of iterations (exactly this many when ``tol=0``).
    tol : float, default=0.0
        Relative decrease of the objective below which iterating stops.
    init : "random" or dict, default="random"
        "random" draws A, B, C uniform in [0, 1); a dict gives ``A`` (h x k), ``B`` (w x k), ``C`` (n x k).
    random_state : int, numpy.random.Generator or None, default=None
        Seed of the random initial factors.
    image_shape : tuple (h, w)
        Shape of one image; required, h * w must equal the number of features. Rows are reshaped in C
        order; for column-major (MATLAB) rows of h x w images pass (w, h) (see the module docstring).

    Attributes
    ----------
    factors_ : dict
        ``A`` (h x k) row-mode factor, ``B`` (w x k) column-mode factor, ``C`` (n x k) sample-mode factor.
    components_ : ndarray of shape (k, h*w)
        Unit-norm basis images vec(a_j b_j^T) / (||a_j|| ||b_j||), C order: ``embedding_ @ components_`` is
        the reconstruction [[A, B, C]], one image per row (``inverse_transform``).
    embedding_ : ndarray of shape (n, k)
        C with column j scaled by ||a_j|| ||b_j||.
    n_iter_, objective_history_
        Iterations run and ||G - [[A, B, C]]||_F^2 after each.

    References
    ----------
    A. Shashua and T. Hazan, "Non-negative tensor factorization with applications to statistics and
    computer vision", Proc. ICML 2005.
    """

    factor_names = ("A", "B", "C")
    batched = True
    accept_sparse = True  # X enters only through products (core.products), sparse or dense alike
    _parameter_constraints = {**Factorization._parameter_constraints, "image_shape": IMAGE_SHAPE}
    _expected_failed_checks = dict.fromkeys(
        ("check_estimators_overwrite_params", "check_estimators_fit_returns_self", "check_readonly_memmap_input",
         "check_n_features_in_after_fitting", "check_estimators_dtypes", "check_dtype_object",
         "check_fit2d_1sample", "check_fit2d_1feature", "check_fit_idempotent", "check_fit_check_is_fitted",
         "check_n_features_in"),
        "NTF needs image_shape = (h, w) with h * w = n_features, and this check fits data whose number of "
        "features the estimator's image_shape does not match") | fit_stops_short("the C rule with A and B fixed")

    def __init__(self, n_components=2, *, max_iter=10_000, tol=1e-5, init="random", random_state=None,
                 image_shape=None, n_starts=10, min_iter=30, stopping="reference", dtype="float64"):
        super().__init__(n_components=n_components, max_iter=max_iter, tol=tol, init=init,
                         random_state=random_state, n_starts=n_starts, min_iter=min_iter, stopping=stopping,
                         dtype=dtype)
        self.image_shape = image_shape

    def _factor_shapes(self, m, n, y):
        h, w = check_image_shape(self.image_shape, m)
        k = self.n_components
        return {"A": (h, k), "B": (w, k), "C": (n, k)}

    def _rules(self, X, y):
        return ntf_rules(X, check_image_shape(self.image_shape, X.shape[0]))

    def _representation(self, factors):
        scale = np.linalg.norm(factors["A"], axis=0) * np.linalg.norm(factors["B"], axis=0)
        return factors["C"] * scale

    def _basis(self, factors):
        """(h*w, k) basis images vec(a_j b_j^T) divided by ||a_j|| ||b_j||, the scale ``_representation`` gives
        C, so that basis @ representation^T is the reconstruction (a zero image stays zero)."""
        scale = np.linalg.norm(factors["A"], axis=0) * np.linalg.norm(factors["B"], axis=0)
        images = khatri_rao_rows(factors["A"], factors["B"])
        return np.divide(images, scale, out=np.zeros_like(images), where=scale > 0)

    def _new_samples(self, X):
        """``transform``: the C rule with A and B fixed is NMF's V rule on the basis images U = A ⊙ B
        (U^T U = (A^T A) * (B^T B)); C scaled by ||a_j|| ||b_j|| = ||u_j||, as ``embedding_``."""
        return self._fixed_basis_samples(X, khatri_rao_rows(self.factors_["A"], self.factors_["B"]))

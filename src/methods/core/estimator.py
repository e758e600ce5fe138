"""The estimator contract every factorization follows: :class:`Factorization`, and the mixins the methods share.

Outside the methods the data are scikit-learn's rows-as-samples: ``fit(X, y)`` takes X of shape
(n_samples, n_features) and ``y`` with -1 for unlabelled samples. Inside, the papers' orientation is used:
the data matrix is ``X = X_rows.T`` (m features x n samples) and the factorization reads X ~ U V^T. The
transpose happens once, here.

A factorization subclass declares its factor names and shapes and returns its update rule and objective;
:func:`src.methods.core.loop.solve` does the rest: Deng Cai's multi-start protocol and stopping rule by default
(``n_starts`` random starts of ``min_iter`` iterations, the lowest objective goes on until the running-mean
rule with ``tol`` holds, ``max_iter`` a cap), or ``stopping="fixed"`` for exactly ``max_iter`` iterations.
Fitted attributes:

``factors_``
    dict of the final factors, named and shaped as in the ``init`` parameter.
``components_``
    (n_components, n_features) basis vectors, one per row, in the convention of ``embedding_``: their product
    ``embedding_ @ components_`` is the fit's reconstruction (U V^T, one sample per row). For X ~ U V^T
    they are U's columns scaled to unit L2 norm, the ``U`` of Deng Cai's NormalizeUV, whose ``V`` is
    ``embedding_`` (the iterated U is ``factors_["U"]``).
``embedding_``
    (n_samples, n_components) representation that KMeans clusters (also returned by ``fit_transform``).
``reconstruction_err_``
    how far the fit's reconstruction is from the data, as scikit-learn's ``NMF`` reports it: the Frobenius
    norm ||X - U V^T||_F, or for the KL methods (``loss = "kl"``) sqrt(2 D(X || U V^T)), scikit-learn's
    error for ``beta_loss="kullback-leibler"`` (``reconstruction_error``).
``n_iter_``, ``objective_history_``
    iterations of the kept start (counted as the reference code counts them) and its objective history
    (see :mod:`src.methods.core.loop`).
``converged_``
    whether the reference stopping rule was met before ``max_iter`` (None under ``stopping="fixed"``).
``best_start_``, ``start_objectives_``
    index of the kept start and the objective of every start after its ``min_iter`` iterations.
``n_features_in_``, ``feature_names_in_``
    as in scikit-learn (the latter when X has string column names, e.g. a pandas DataFrame).

scikit-learn estimator API. Every method is a transformer: ``transform(X_new)`` gives the representation
of new samples (:mod:`.new_samples`), ``inverse_transform(Z)`` maps a representation back to the data space
(``Z @ components_``, as scikit-learn's ``NMF``), ``get_feature_names_out`` and ``set_output`` work as in scikit-learn,
and X and the parameters are validated as :mod:`.validation` says (array-likes, DataFrames; scipy.sparse CSR
where the class sets ``accept_sparse``; other methods name themselves and ask for a dense array).
``__sklearn_tags__`` says whether X must be >= 0 (``positive_only``) and whether sparse X is accepted;
``expected_failed_checks`` lists the checks of ``sklearn.utils.estimator_checks.check_estimator`` that
cannot hold for a method, each with its reason (the class's ``_expected_failed_checks``;
``python -m tools.estimator_checks`` runs the checks).

The methods constrained by labels (CNMF, CNMF-KL, CCF, SemiGNMF, PCGNMF, COP-KMeans, SDA) share
:class:`LabelConstrainedMixin`; those that start from Deng Cai's normalized factors share
:class:`NormalizedInitMixin`.
"""

import warnings
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import scipy.sparse as sp
from scipy.special import xlogy
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_array
from sklearn.utils.validation import check_is_fitted

from ...errors import ConfigError
from .loop import STOPPING, Factors, Stopping, per_start, solve
from .multiplicative import EPS
from .new_samples import NewSamplesMixin
from .products import block_slices
from ...checks import NONNEGATIVE, POSITIVE_INT, one_of
from .validation import CHECKED_BY_FIT, DTYPES, UNLABELLED, ParameterRulesMixin, SampleInputMixin


class Factorization(ClassNamePrefixFeaturesOutMixin, TransformerMixin, NewSamplesMixin, SampleInputMixin,
                    ParameterRulesMixin, BaseEstimator):
    """Base class of the matrix factorization methods (see the module docstring for the contract).

    Subclasses set ``factor_names`` and implement ``_factor_shapes``, ``_rules`` and, if the
    representation is not ``V``, ``_representation`` and ``_basis`` (or ``_outputs`` when they need the
    data), in one convention: basis @ representation^T is the fit's reconstruction of the data ``_rules``
    factorize (``_approximated``: X itself unless the method reweights it); ``basis_factors`` names the
    factors that ``transform`` holds fixed (override ``_new_samples`` where that does not apply). A subclass
    with parameters of its own extends ``_parameter_constraints``.

    Parameters
    ----------
    n_components : int, default=2
        Rank k of the factorization.
    max_iter : int, default=10000
        Under ``stopping="reference"`` a cap on the iterations (the reference code has none); under
        ``"fixed"`` the exact number of iterations.
    tol : float, default=1e-5
        The reference rule's threshold on the relative decrease of the running mean of the objective
        (Cai's ``error``); unused under ``"fixed"``.
    init : "random", dict of str to ndarray, or list of such dicts, default="random"
        "random" draws ``n_starts`` starts, every factor uniformly from [0, 1) as Deng Cai's code does; a
        dict gives the initial factors of a single start by their names in the paper (see
        ``factor_names``; as in Cai's code, given factors mean one start and no ``min_iter``); a list of
        dicts gives several starts.
    random_state : int, numpy.random.Generator or None, default=None
        Seed of the random initial factors; start s takes the s-th draws of one generator, so start 0 is
        the same whatever ``n_starts``.
    n_starts : int, default=10
        Random starts (Cai's ``nRepeat``).
    min_iter : int, default=30
        Iterations of every start before the lowest objective is chosen (Cai's ``minIter``; 10 for the KL
        methods, as in GNMF_KL).
    stopping : {"reference", "fixed"}, default="reference"
        The reference code's running-mean rule, or exactly ``max_iter`` iterations.
    dtype : {"float64", "float32"}, default="float64"
        Precision of the data and the factors while iterating: float32 halves the memory and speeds up
        the products (the objective values the stopping rule compares are float64 sums either way).

    Notes
    -----
    The starts advance together through the same passes over X (see :mod:`src.methods.core.loop`) when the
    method's rules take stacks of starts (``batched = True``); otherwise one after another.
    """

    factor_names: tuple[str, ...] = ("U", "V")
    basis_factors: tuple[str, ...] = ("U",)  # held fixed by ``transform``
    nonnegative_data: bool = True
    batched: bool = False  # whether ``_rules`` takes stacks of starts (s, p, k) (see src.methods.core.loop)
    loss: str = "frobenius"  # the data-fit term: "frobenius" or "kl"
    # products of X's size with a rank-k factor per iteration and start (m n k multiply-adds each), when they
    # are all of an iteration's arithmetic but O((m + n) k^2) terms; None when other terms weigh as much
    products_per_iteration: int | None = None

    _parameter_constraints = {
        "n_components": POSITIVE_INT,
        "max_iter": POSITIVE_INT,
        "tol": NONNEGATIVE,
        "init": CHECKED_BY_FIT,  # against the factor shapes, which need the data
        "random_state": CHECKED_BY_FIT,
        "n_starts": POSITIVE_INT,
        "min_iter": POSITIVE_INT,
        "stopping": one_of(STOPPING),
        "dtype": one_of(DTYPES),
    }

    def __init__(self, n_components=2, *, max_iter=10_000, tol=1e-5, init="random", random_state=None,
                 n_starts=10, min_iter=30, stopping="reference", dtype="float64"):
        self.n_components = n_components
        self.max_iter = max_iter
        self.tol = tol
        self.init = init
        self.random_state = random_state
        self.n_starts = n_starts
        self.min_iter = min_iter
        self.stopping = stopping
        self.dtype = dtype

    # -- what a subclass provides ---------------------------------------------------------------
    def _factor_shapes(self, m: int, n: int, y: np.ndarray) -> dict[str, tuple[int, int]]:
        k = self.n_components
        return {"U": (m, k), "V": (n, k)}

    def _rules(self, X: np.ndarray, y: np.ndarray) -> tuple[Callable[[Factors], None], Callable[[Factors], float]]:
        """Return ``(update, objective)`` for data X (m x n) and labels y."""
        raise NotImplementedError

    def _representation(self, factors: Factors) -> np.ndarray:
        """(n, k) representation, V with U's columns scaled to unit L2 norm (Deng Cai's NormalizeUV)."""
        norms = np.linalg.norm(factors["U"], axis=0)
        return factors["V"] * norms

    def _basis(self, factors: Factors) -> np.ndarray:
        """(m, k) basis vectors in the convention of ``_representation``: U's columns scaled to unit L2 norm
        (NormalizeUV's U; a zero column stays zero), so that basis @ representation^T = U V^T."""
        U = factors["U"]
        norms = np.linalg.norm(U, axis=0)
        return np.divide(U, norms, out=np.zeros_like(U), where=norms > 0)

    def _outputs(self, X, factors: Factors) -> tuple[np.ndarray, np.ndarray]:
        """(basis (m x k), representation (n x k)) of the fitted factors on the training data X (m x n)."""
        return self._basis(factors), self._representation(factors)

    def _approximated(self, X):
        """The data (m x n) that the fit's reconstruction approximates: the training data X (m x n) itself
        (NMF-NCW overrides it with its reweighted samples)."""
        return X

    # -- the shared machinery -------------------------------------------------------------------
    def _stopping(self) -> Stopping:
        """The stopping rule of the loop, from ``stopping``, ``max_iter``, ``min_iter`` and ``tol``."""
        return Stopping(self.stopping, int(self.max_iter), int(self.min_iter), float(self.tol))

    def _start_inits(self) -> list:
        """What each start is initialized from: "random" (``n_starts`` times) or the caller's factors."""
        if isinstance(self.init, str):
            if self.init != "random":
                raise ConfigError(f"init={self.init!r} must be 'random' or a dict of initial factors")
            return ["random"] * self.n_starts
        if isinstance(self.init, Mapping):
            return [self.init]
        if isinstance(self.init, Sequence) and self.init and all(isinstance(i, Mapping) for i in self.init):
            return list(self.init)
        raise ConfigError(f"init must be 'random' or a dict of initial factors (or a non-empty list of such "
                          f"dicts), got {type(self.init).__name__}")

    def _initial_factors(self, shapes: dict[str, tuple[int, int]], init, rng: np.random.Generator, X) -> Factors:
        """The factors of one start: drawn from ``rng`` (``init="random"``) or copied from a dict.

        X (m x n) is the training data, for the subclasses whose start is computed from them.
        """
        if isinstance(init, str):
            return {name: rng.random(shape) for name, shape in shapes.items()}  # float64 draws, cast later
        if set(init) != set(shapes):
            raise ConfigError(f"init has factors {sorted(init)}, expected {sorted(shapes)}")
        factors = {}
        for name, shape in shapes.items():
            value = np.array(init[name], dtype=np.float64)  # a copy: the caller's arrays stay as given
            if value.shape != shape:
                raise ConfigError(f"init[{name!r}] has shape {value.shape}, expected {shape}")
            if not np.all(np.isfinite(value)) or value.min() < 0:
                raise ConfigError(f"init[{name!r}] must be finite and nonnegative")
            factors[name] = value
        return factors

    def fit(self, X, y=None, callback=None):
        """Fit the factorization to X (n_samples, n_features), with partial labels y (-1 = unlabelled).

        ``callback``, if given, is called with a :class:`src.methods.core.loop.Pass` after every update.
        """
        self.check_params()
        X_rows = self._validate_X(X, reset=True, dtype=self.dtype)
        y = self._validate_y(y, X_rows.shape[0])
        return self._fit(X_rows, y, callback)

    def _fit(self, X_rows, y: np.ndarray, callback=None):
        """Fit to validated data X_rows (n_samples, n_features) and labels y."""
        X = X_rows.T  # the papers' orientation: m features x n samples
        m, n = X.shape
        shapes = self._factor_shapes(m, n, y)
        rng = np.random.default_rng(self.random_state)
        inits = self._start_inits()
        factors = {name: np.empty((len(inits), *shape), dtype=self.dtype) for name, shape in shapes.items()}
        for index, init in enumerate(inits):  # (s, p, k) stacks of the starts, filled one start at a time
            for name, value in self._initial_factors(shapes, init, rng, X).items():
                factors[name][index] = value
        update, objective = self._rules(X, y)
        if not self.batched:
            update, objective = per_start(update, objective)
        solution = solve(factors, update, objective, self._stopping(), callback)
        if solution.converged is False:
            warnings.warn(f"{type(self).__name__}: the reference stopping rule (tol={self.tol}) was not met "
                          f"within max_iter={self.max_iter} iterations; raise max_iter", ConvergenceWarning,
                          stacklevel=3)
        self.factors_ = solution.factors
        self.n_iter_ = solution.n_iter
        self.objective_history_ = np.asarray(solution.history)
        self.converged_ = solution.converged
        self.best_start_ = solution.best_start
        self.start_objectives_ = np.asarray(solution.start_objectives)
        basis, representation = self._outputs(X, solution.factors)
        # in the fit's dtype, whatever the dtype of a method's constant matrices (e.g. CNMF's label matrix)
        self.components_ = basis.T.astype(self.dtype, copy=False)
        self.embedding_ = representation.astype(self.dtype, copy=False)
        self.reconstruction_err_ = reconstruction_error(self._approximated(X), self.components_.T, self.embedding_,
                                                        self.loss)
        return self

    def fit_transform(self, X, y=None):
        """Fit and return the (n_samples, n_components) representation ``embedding_``."""
        return self.fit(X, y).embedding_

    def transform(self, X):
        """Representation of new samples X (n_samples, n_features), the fitted basis held fixed.

        The new samples are unlabelled. See :mod:`src.methods.core.new_samples` (and the class's
        ``_new_samples`` where it overrides it) for how the representation is solved.

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            In the convention and the dtype of ``embedding_``.
        """
        check_is_fitted(self)
        X_rows = self._validate_X(X, reset=False, dtype=self.dtype)
        return self._transform(X_rows.T)[0].astype(self.dtype, copy=False)  # (CNMF's A Z: float64 otherwise)

    def inverse_transform(self, X):
        """Map a representation back to the data space: ``X @ components_``, as scikit-learn's ``NMF`` does.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components)
            A representation in the convention of ``embedding_`` (e.g. the output of ``transform``).

        Returns
        -------
        ndarray of shape (n_samples, n_features)
            The samples the representation reconstructs: for ``embedding_``, the fit's reconstruction U V^T
            (one sample per row) of the data the method factorizes (NMF-NCW: its reweighted samples),
            whose distance to them is ``reconstruction_err_`` (the Frobenius methods).
        """
        check_is_fitted(self)
        Z = check_array(X, dtype=[np.float64, np.float32])
        k = self.components_.shape[0]
        if Z.shape[1] != k:
            raise ConfigError(f"X has {Z.shape[1]} columns, but {type(self).__name__}.inverse_transform takes a "
                              f"representation of n_components={k} columns")
        return Z @ self.components_

    @property
    def _n_features_out(self) -> int:
        return self.components_.shape[0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = [str(self.dtype)]  # the representation comes in ``dtype``
        return tags


def reconstruction_error(X, basis: np.ndarray, representation: np.ndarray, loss: str = "frobenius") -> float:
    """scikit-learn's ``NMF.reconstruction_err_`` for X (m x n) ~ U V^T, U = ``basis``, V = ``representation``.

    ``loss="frobenius"``: ||X - U V^T||_F. ``loss="kl"``: sqrt(2 D(X || U V^T)) with the generalized KL
    divergence D(X || Y) = sum_ij x_ij log(x_ij / y_ij) - x_ij + y_ij (Y floored at EPS as in the fit's
    objective), which is what scikit-learn reports for ``beta_loss="kullback-leibler"`` (its beta-divergence
    error with ``square_root=True``), so that the attribute compares with scikit-learn's for either loss; D
    itself is the KL methods' objective, ``objective_history_[-1]``.

    Summed in float64 over blocks of samples (no m x n temporary, and no cancellation between ||X||^2 and
    2 <X, U V^T>, which would lose the digits of a small error).

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (m, n)
        The data the fit approximates, one sample per column.
    basis : ndarray of shape (m, k)
        U, in the convention of ``representation`` (``components_.T``).
    representation : ndarray of shape (n, k)
        V (``embedding_``).
    loss : {"frobenius", "kl"}, default="frobenius"

    Returns
    -------
    float
    """
    U = np.asarray(basis, dtype=np.float64)
    V = np.asarray(representation, dtype=np.float64)
    total = 0.0
    for block in block_slices(V.shape[0], U.shape[0]):
        X_b = X[:, block]
        X_b = np.asarray(X_b.toarray() if sp.issparse(X_b) else X_b, dtype=np.float64)  # (m x b)
        Y_b = U @ V[block].T  # U V^T for the samples of the block
        if loss == "kl":
            np.maximum(Y_b, EPS, out=Y_b)
            total += float(xlogy(X_b, X_b / Y_b).sum() - X_b.sum() + Y_b.sum())
        else:
            Y_b -= X_b
            total += float(np.einsum("ij,ij->", Y_b, Y_b))
    return float(np.sqrt(2.0 * max(total, 0.0) if loss == "kl" else total))


class NormalizedInitMixin:
    """Adds Deng Cai's NormalizeUV on the initial factors when ``self.normalize_init`` is true.

    U's columns are scaled to unit L2 norm and V's columns by the same norms, so U V^T is unchanged; a zero
    column of U is left as it is. NMF's rules are equivariant under this rescaling, graph-regularized
    rules are not, which is why the methods with a graph term expose it.
    """

    def _initial_factors(self, shapes, init, rng, X):
        factors = super()._initial_factors(shapes, init, rng, X)  # fresh arrays: the caller's init is not touched
        if self.normalize_init:
            norms = np.linalg.norm(factors["U"], axis=0)
            norms[norms == 0] = 1.0
            factors["U"] /= norms
            factors["V"] *= norms
        return factors


def labels_in_fit_only(how: str) -> dict[str, str]:
    """The checks of scikit-learn's ``check_estimator`` that compare ``fit_transform`` with ``transform`` and
    cannot hold for a method constrained by labels, with the reason; ``how`` says how its labels act."""
    reason = ("fit_transform returns the label-constrained representation of the training samples; transform "
              f"treats samples as unlabelled ({how})")
    return {"check_transformer_general": reason, "check_transformer_data_not_an_array": reason}


def fit_stops_short(how: str) -> dict[str, str]:
    """The checks of scikit-learn's ``check_estimator`` that compare ``fit_transform`` with ``transform`` and
    fail at a user's settings (``tools.estimator_checks``: two starts, ``max_iter=300``, the defaults
    otherwise) because the fit stops before its coefficients have converged, with the reason; ``how`` says
    what ``transform`` solves for the training samples.

    Measured on the checks' data (tools/estimator_checks.py): the objective ``transform`` minimizes, at the
    fit's own coefficients, is the fit's final objective (the same problem), yet its minimum with the basis
    fixed is lower; run to convergence (10^4 to 10^5 iterations) the fit and ``transform`` agree to 0.01.
    """
    reason = ("the fit stops (the reference rule at tol=1e-5, or max_iter=300) with coefficients that are not yet "
              "the minimizers for its own basis, and fit_transform returns them; transform solves the same "
              f"objective for the training samples ({how}) from its own start and stops, under the same rule, "
              "elsewhere: on the check's data (two tight blobs on a line, at rank 2) they differ by more than 0.01, "
              "a gap that closes as the fit is run to convergence")
    return {"check_transformer_general": reason, "check_transformer_data_not_an_array": reason}


class LabelConstrainedMixin:
    """The methods that partial labels constrain: CNMF, CNMF-KL, CCF, SemiGNMF, PCGNMF, COP-KMeans, SDA.

    ``needs_labels`` tells a protocol that the method is run with labelled samples (``src.run`` refuses a
    protocol without labels). ``fit(X, y)`` takes y (n_samples,) with -1 for unlabelled samples, checked by
    :func:`~.validation.check_labels`; without any label the constrained factorizations are their
    unconstrained counterparts (CNMF is NMF, CCF is CF, ...). A method that the labelled samples define
    (``requires_labelled_samples``, SDA) refuses y = None or a y without a label, and tells scikit-learn that
    it needs y (``target_tags.required``).
    """

    needs_labels = True
    requires_labelled_samples = False

    def _validate_y(self, y, n_samples: int) -> np.ndarray:
        """The partial labels of ``fit`` (n_samples,), -1 = unlabelled; see the class docstring."""
        name = type(self).__name__
        if y is None and self.requires_labelled_samples:
            raise ConfigError(f"{name} needs labelled samples: it requires y to be passed, but the target y is "
                              "None (partial labels, -1 = unlabelled)")
        y = super()._validate_y(y, n_samples)
        if self.requires_labelled_samples and np.all(y == UNLABELLED):
            raise ConfigError(f"{name} needs labelled samples: y has no label >= 0 (protocol.labels.mode='none'?)")
        return y

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        if self.requires_labelled_samples:
            tags.target_tags.required = True
        return tags

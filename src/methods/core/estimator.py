"""The estimator contract every method follows.

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
    (n_components, n_features) basis vectors, one per row.
``embedding_``
    (n_samples, n_components) representation that KMeans clusters (also returned by ``fit_transform``).
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
of new samples, ``get_feature_names_out`` and ``set_output`` work as in scikit-learn, and X is validated as
scikit-learn does (array-likes, DataFrames; scipy.sparse CSR where the class sets ``accept_sparse``; other
methods name themselves and ask for a dense array). ``__sklearn_tags__`` says whether X must be >= 0
(``positive_only``) and whether sparse X is accepted; ``expected_failed_checks`` lists the checks of
``sklearn.utils.estimator_checks.check_estimator`` that cannot hold for a method, each with its reason
(see :mod:`tools.estimator_checks`).

``transform`` (new samples are unlabelled). The fitted basis factors (``basis_factors``, e.g. ``("U",)``)
are held fixed, restored after every update of the method's own rules built on the new data
(``_rules(X_new, y = all -1)``, on a copy of the estimator so that no fitted attribute changes); the other
factors start, row by row, from the sample's least-squares scale on the summed basis (a function of the
sample alone: no random draw, so a sample's result does not depend on the batch for the methods whose
coefficient rows are independent). One start is iterated under the estimator's stopping rule (``stopping``,
``max_iter``, ``tol``; ``ConvergenceWarning`` when the cap is reached first), and the result is returned in
the convention of ``embedding_`` (e.g. V scaled by the fitted U's column norms). Methods whose graph
couples the samples (GNMF, SemiGNMF, PCGNMF, FNMF, NPNMF) build it among the new samples, with
``n_neighbors`` clipped to n_new - 1; a single new sample has no graph term (NMF's rule). Classes whose
basis is not a factor of their own rules override ``_new_samples`` (concept factorizations, NTF: see
:mod:`.fixed_basis`).
"""

import copy
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from ...errors import ConfigError, UserError
from .fixed_basis import sample_scales
from .loop import STOPPING, Factors, Solution, Stopping, per_start, solve

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _validate_data

    _FINITE = "ensure_all_finite"
except ImportError:  # scikit-learn 1.4 and 1.5: the estimator method, and the older keyword

    def _validate_data(estimator, X, **params):
        return estimator._validate_data(X, **params)

    _FINITE = "force_all_finite"

UNLABELLED = -1


def check_positive_int(name: str, value) -> int:
    """Return ``value`` if it is an integer >= 1, else raise :class:`ConfigError` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise ConfigError(f"{name}={value!r} must be a positive integer")
    return int(value)


def check_nonnegative_float(name: str, value) -> float:
    """Return ``value`` as a float if it is a finite real >= 0, else raise :class:`ConfigError`."""
    if isinstance(value, bool) or not isinstance(value, Real) or not np.isfinite(value) or value < 0:
        raise ConfigError(f"{name}={value!r} must be a finite number >= 0")
    return float(value)


def check_bool(name: str, value) -> bool:
    """Return ``value`` if it is a boolean, else raise :class:`ConfigError` naming ``name``."""
    if not isinstance(value, (bool, np.bool_)):
        raise ConfigError(f"{name}={value!r} must be True or False")
    return bool(value)


DTYPES = ("float64", "float32")


class DataTypeError(UserError, TypeError):
    """X holds something that is not a number (a TypeError, as scikit-learn raises it); one line."""


def _check_shape(shape: tuple) -> None:
    """Raise :class:`ConfigError` unless ``shape`` is that of a non-empty 2-D array (scikit-learn's wording too)."""
    if len(shape) == 2 and shape[0] >= 1 and shape[1] >= 1:
        return
    text = f"X must be a non-empty 2-D array (n_samples, n_features), got shape {shape}"
    if len(shape) == 2:  # scikit-learn's own phrases, which its checks look for
        what = "sample(s)" if shape[0] < 1 else "feature(s)"
        text += f": found {min(shape)} {what} (shape={shape}) while a minimum of 1 is required."
    elif len(shape) == 1:
        text += ". Reshape your data with X.reshape(-1, 1) (one feature) or X.reshape(1, -1) (one sample)"
    raise ConfigError(text)


def _check_values(X, nonnegative: bool, who: str = "this method") -> None:
    """Raise :class:`ConfigError` if X (dense or sparse) has NaN or infinite values, or negative ones when
    ``nonnegative``."""
    values = X.data if sp.issparse(X) else X
    if not np.all(np.isfinite(values)):
        raise ConfigError("X contains NaN or infinite values")
    if nonnegative and values.size and values.min() < 0:
        raise ConfigError(f"Negative values in data passed to {who}: X has negative entries (min "
                          f"{values.min():.4g}) but this method needs X >= 0")


def check_data(X, nonnegative: bool, dtype="float64") -> np.ndarray:
    """Validate a data matrix with one sample per row and return it as an array of ``dtype``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    nonnegative : bool
        Whether negative entries are rejected.
    dtype : {"float64", "float32"}
    """
    try:
        X = np.asarray(X, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"X must be a numeric array ({exc})") from None
    _check_shape(X.shape)
    _check_values(X, nonnegative)
    return X


def check_labels(y, n_samples: int) -> np.ndarray:
    """Validate partial labels: integer class labels of length n_samples, -1 marking unlabelled samples.

    Real or object arrays whose values are all integers (e.g. 0.0, 1.0, as scikit-learn passes them) are
    accepted and converted.
    """
    if y is None:
        return np.full(n_samples, UNLABELLED, dtype=np.int64)
    y = np.asarray(y)
    if y.shape != (n_samples,):
        raise ConfigError(f"y must have shape ({n_samples},), got {y.shape}")
    if not np.issubdtype(y.dtype, np.integer):
        values = None
        if y.dtype.kind in "fO":
            try:
                values = y.astype(np.float64)
            except (TypeError, ValueError):
                values = None
        if values is None or not np.all(np.isfinite(values)) or np.any(values != np.round(values)):
            raise ConfigError(f"y must hold integer class labels (-1 = unlabelled), got dtype {y.dtype}"
                              + (" with non-integer values" if values is not None else ""))
        y = values
    if np.any(y < UNLABELLED):
        raise ConfigError(f"y has label {int(y.min())}; class labels are >= 0 and -1 marks unlabelled")
    return y.astype(np.int64)


class SampleInputMixin:
    """X validated as scikit-learn validates it, with this project's one-line errors, and the input tags.

    ``nonnegative_data`` (X >= 0 required) and ``accept_sparse`` (scipy.sparse CSR accepted) are class
    attributes.
    """

    nonnegative_data: bool = True
    accept_sparse: bool = False

    def expected_failed_checks(self) -> dict[str, str]:
        """The checks of scikit-learn's ``check_estimator`` that cannot hold for this method, with the reason.

        Pass it on: ``check_estimator(est, expected_failed_checks=est.expected_failed_checks())``. The table
        is :data:`tools.estimator_checks.EXPECTED_FAILED_CHECKS`.
        """
        from tools.estimator_checks import expected_failed_checks

        return expected_failed_checks(self)

    def _validate_X(self, X, reset: bool, dtype="float64"):
        """X (n_samples, n_features) as an array of ``dtype`` (CSR when sparse and accepted).

        Sets ``n_features_in_`` and ``feature_names_in_`` when ``reset``, else checks X against them.
        """
        name = type(self).__name__
        if sp.issparse(X):
            if not self.accept_sparse:
                raise ConfigError(f"{name} does not accept sparse X: pass a dense array (X.toarray())")
            _check_shape(X.shape)
        else:
            try:
                shape = X.shape if hasattr(X, "shape") else np.asarray(X).shape
            except ValueError as exc:  # a ragged nested list
                raise ConfigError(f"X must be a 2-D array (n_samples, n_features) ({exc})") from None
            _check_shape(shape)
        try:
            X = _validate_data(self, X, reset=reset, accept_sparse="csr" if self.accept_sparse else False,
                               dtype=dtype, **{_FINITE: False})
        except TypeError as exc:
            raise DataTypeError(f"X must be a numeric array ({' '.join(str(exc).split())})") from None
        except ValueError as exc:
            text = " ".join(str(exc).split())
            raise ConfigError(f"X must be a numeric array ({text})" if "convert" in text else text) from None
        _check_values(X, self.nonnegative_data, name)
        return X

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = bool(self.nonnegative_data)
        tags.input_tags.sparse = bool(self.accept_sparse)
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {"requires_positive_X": bool(self.nonnegative_data)}


@dataclass
class NewSamples:
    """What ``transform`` solves for new samples X (m x n_new): see the module docstring.

    Attributes
    ----------
    update, objective : callable
        The rules over stacks of starts (as :func:`~src.methods.core.loop.solve` takes them).
    factors : dict of str to ndarray of shape (1, p, k)
        The initial factors, the fixed ones already at their fitted values.
    representation : callable
        Maps the final factors (p x k matrices) to the (n_new, n_components) representation.
    fixed : dict of str to ndarray
        Factors the rules update but ``transform`` holds fixed: restored after every update.
    """

    update: Callable[[Factors], None]
    objective: Callable[[Factors], np.ndarray]
    factors: Factors
    representation: Callable[[Factors], np.ndarray]
    fixed: dict[str, np.ndarray] = field(default_factory=dict)


class Factorization(ClassNamePrefixFeaturesOutMixin, TransformerMixin, SampleInputMixin, BaseEstimator):
    """Base class of the matrix factorization methods (see the module docstring for the contract).

    Subclasses set ``factor_names`` and implement ``_factor_shapes``, ``_rules`` and, if the
    representation is not ``V``, ``_representation`` and ``_basis``; ``basis_factors`` names the factors
    that ``transform`` holds fixed (override ``_new_samples`` where that does not apply).

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

    The starts advance together through the same passes over X (see :mod:`src.methods.core.loop`) when the
    method's rules take stacks of starts (``batched = True``); otherwise one after another.
    """

    factor_names: tuple[str, ...] = ("U", "V")
    basis_factors: tuple[str, ...] = ("U",)  # held fixed by ``transform``
    nonnegative_data: bool = True
    needs_labels: bool = False  # label-constrained methods: a protocol must give some labelled samples
    batched: bool = False  # whether ``_rules`` takes stacks of starts (s, p, k) (see src.methods.core.loop)
    loss: str = "frobenius"  # the data-fit term: "frobenius" or "kl"
    # products of X's size with a rank-k factor per iteration and start (m n k multiply-adds each), when they
    # are all of an iteration's arithmetic but O((m + n) k^2) terms; None when other terms weigh as much
    products_per_iteration: int | None = None

    def __init__(self, n_components=2, max_iter=10_000, tol=1e-5, init="random", random_state=None,
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
        """(m, k) basis vectors."""
        return factors["U"]

    def check_params(self) -> None:
        check_positive_int("n_components", self.n_components)
        check_positive_int("max_iter", self.max_iter)
        check_nonnegative_float("tol", self.tol)
        check_positive_int("n_starts", self.n_starts)
        check_positive_int("min_iter", self.min_iter)
        if self.stopping not in STOPPING:
            raise ConfigError(f"stopping={self.stopping!r} must be one of {', '.join(STOPPING)}")
        if self.dtype not in DTYPES:
            raise ConfigError(f"dtype={self.dtype!r} must be one of {', '.join(DTYPES)}")

    # -- the shared machinery -------------------------------------------------------------------
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

    def _initial_factors(self, shapes: dict[str, tuple[int, int]], init, rng: np.random.Generator) -> Factors:
        """The factors of one start: drawn from ``rng`` (``init="random"``) or copied from a dict."""
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
        y = check_labels(y, X_rows.shape[0])
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
            for name, value in self._initial_factors(shapes, init, rng).items():
                factors[name][index] = value
        update, objective = self._rules(X, y)
        if not self.batched:
            update, objective = per_start(update, objective)
        stopping = Stopping(self.stopping, int(self.max_iter), int(self.min_iter), float(self.tol))
        solution = solve(factors, update, objective, stopping, callback)
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
        # in the fit's dtype, whatever the dtype of a method's constant matrices (e.g. CNMF's label matrix)
        self.components_ = self._basis(solution.factors).T.astype(self.dtype, copy=False)
        self.embedding_ = self._representation(solution.factors).astype(self.dtype, copy=False)
        return self

    def fit_transform(self, X, y=None):
        """Fit and return the (n_samples, n_components) representation ``embedding_``."""
        return self.fit(X, y).embedding_

    # -- new samples ------------------------------------------------------------------------------
    @property
    def _n_features_out(self) -> int:
        return self.components_.shape[0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = [str(self.dtype)]  # the representation comes in ``dtype``
        return tags

    def transform(self, X):
        """Representation of new samples X (n_samples, n_features), the fitted basis held fixed.

        The new samples are unlabelled. See the module docstring (and the class's ``_new_samples`` where
        it overrides it) for how the representation is solved.

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            In the convention of ``embedding_``.
        """
        check_is_fitted(self)
        X_rows = self._validate_X(X, reset=False, dtype=self.dtype)
        return self._transform(X_rows.T)[0]

    def _transform(self, X) -> tuple[np.ndarray, Solution]:
        """(representation, solution of the loop) for new samples X (m x n_new)."""
        problem = self._new_samples(X)
        update = problem.update
        if problem.fixed:
            def update(factors, rules=problem.update, fixed=problem.fixed):
                rules(factors)
                for name, value in fixed.items():  # in place: the rules' views and handoffs stay valid
                    factors[name][0] = value

        stopping = Stopping(self.stopping, int(self.max_iter), int(self.min_iter), float(self.tol))
        solution = solve(problem.factors, update, problem.objective, stopping)
        if solution.converged is False:
            warnings.warn(f"{type(self).__name__}.transform: the reference stopping rule (tol={self.tol}) was "
                          f"not met within max_iter={self.max_iter} iterations; raise max_iter",
                          ConvergenceWarning, stacklevel=3)
        return problem.representation(solution.factors), solution

    def _transform_rules(self, X, y: np.ndarray):
        """``(update, objective)`` of the method on new samples X (m x n_new), labels y (all -1).

        Called on a copy of the fitted estimator (``_rules`` may set attributes): the method's own rules.
        """
        return self._rules(X, y)

    def _new_samples(self, X) -> NewSamples:
        """The method's own rules on X (m x n_new), ``basis_factors`` fixed (see the module docstring)."""
        m, n = X.shape
        y = np.full(n, UNLABELLED, dtype=np.int64)
        model = copy.copy(self)  # the rules may set attributes (graph_, constraint_matrix_, ...): not on self
        graph = getattr(model, "n_neighbors", None) is not None
        if graph and n == 1:  # no neighbour: the graph term vanishes (NPNMF's would be a ridge: dropped)
            from ..nmf import frobenius_rules

            update, objective = frobenius_rules(X)
            batched = True
        else:
            if graph:
                model.n_neighbors = min(int(model.n_neighbors), n - 1)
            update, objective = model._transform_rules(X, y)
            batched = model.batched
        if not batched:
            update, objective = per_start(update, objective)
        shapes = model._factor_shapes(m, n, y)
        fixed = {name: np.asarray(self.factors_[name], dtype=self.dtype) for name in self.basis_factors}
        basis = fixed["U"] if "U" in fixed else self._basis(self.factors_)
        scales = sample_scales(X, basis).astype(self.dtype)
        factors = {}
        for name, shape in shapes.items():
            if name in fixed:
                factors[name] = fixed[name][None].copy()
            elif shape[0] == n:  # a coefficient factor, one row per new sample
                factors[name] = np.repeat(scales[None, :, None], shape[1], axis=2)
            else:
                raise NotImplementedError(f"{type(self).__name__}: factor {name!r} of shape {shape} is neither "
                                          "a basis factor nor one row per sample; override _new_samples")
        return NewSamples(update, objective, factors, model._representation, fixed)

    def _fixed_basis_samples(self, X, basis: np.ndarray, lam: float = 0.0) -> NewSamples:
        """New samples on a fixed basis (m x k) by :func:`.fixed_basis.fixed_basis_rules` (factor ``V``).

        The representation is V scaled by the basis's column norms, as ``embedding_`` of NMF, CF and NTF.
        """
        from .fixed_basis import fixed_basis_rules

        basis = np.asarray(basis, dtype=self.dtype)
        update, objective = fixed_basis_rules(X, basis, lam)
        scales = sample_scales(X, basis).astype(self.dtype)
        factors = {"V": np.repeat(scales[None, :, None], basis.shape[1], axis=2)}
        norms = np.linalg.norm(basis, axis=0)
        return NewSamples(update, objective, factors, lambda solved: solved["V"] * norms)


class NormalizedInitMixin:
    """Adds Deng Cai's NormalizeUV on the initial factors when ``self.normalize_init`` is true.

    U's columns are scaled to unit L2 norm and V's columns by the same norms, so U V^T is unchanged; a zero
    column of U is left as it is. NMF's rules are equivariant under this rescaling, graph-regularized
    rules are not, which is why the methods with a graph term expose it.
    """

    def _initial_factors(self, shapes, init, rng):
        factors = super()._initial_factors(shapes, init, rng)  # fresh arrays: the caller's init is not touched
        if self.normalize_init:
            norms = np.linalg.norm(factors["U"], axis=0)
            norms[norms == 0] = 1.0
            factors["U"] /= norms
            factors["V"] *= norms
        return factors

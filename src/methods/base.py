"""The estimator contract every method follows.

Outside the methods the data are scikit-learn's rows-as-samples: ``fit(X, y)`` takes X of shape
(n_samples, n_features) and ``y`` with -1 for unlabelled samples. Inside, the papers' orientation is used:
the data matrix is ``X = X_rows.T`` (m features x n samples) and the factorization reads X ~ U V^T. The
transpose happens once, here.

A factorization subclass declares its factor names and shapes and returns its update rule and objective;
:func:`src.methods.loop.solve` does the rest: Deng Cai's multi-start protocol and stopping rule by default
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
    (see :mod:`src.methods.loop`).
``converged_``
    whether the reference stopping rule was met before ``max_iter`` (None under ``stopping="fixed"``).
``best_start_``, ``start_objectives_``
    index of the kept start and the objective of every start after its ``min_iter`` iterations.
"""

import warnings
from collections.abc import Callable, Mapping, Sequence
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning

from ..errors import ConfigError
from .loop import STOPPING, Factors, Stopping, per_start, solve

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
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise ConfigError(f"X must be a non-empty 2-D array (n_samples, n_features), got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ConfigError("X contains NaN or infinite values")
    if nonnegative and X.min() < 0:
        raise ConfigError(f"X has negative entries (min {X.min():.4g}) but this method needs X >= 0")
    return X


def check_labels(y, n_samples: int) -> np.ndarray:
    """Validate partial labels: an integer array of length n_samples, -1 marking unlabelled samples."""
    if y is None:
        return np.full(n_samples, UNLABELLED, dtype=np.int64)
    y = np.asarray(y)
    if y.shape != (n_samples,):
        raise ConfigError(f"y must have shape ({n_samples},), got {y.shape}")
    if not np.issubdtype(y.dtype, np.integer):
        raise ConfigError(f"y must hold integer class labels (-1 = unlabelled), got dtype {y.dtype}")
    if np.any(y < UNLABELLED):
        raise ConfigError(f"y has label {int(y.min())}; class labels are >= 0 and -1 marks unlabelled")
    return y.astype(np.int64)


class Factorization(BaseEstimator):
    """Base class of the matrix factorization methods (see the module docstring for the contract).

    Subclasses set ``factor_names`` and implement ``_factor_shapes``, ``_rules`` and, if the
    representation is not ``V``, ``_representation`` and ``_basis``.

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

    The starts advance together through the same passes over X (see :mod:`src.methods.loop`) when the
    method's rules take stacks of starts (``batched = True``); otherwise one after another.
    """

    factor_names: tuple[str, ...] = ("U", "V")
    nonnegative_data: bool = True
    needs_labels: bool = False  # label-constrained methods: a protocol must give some labelled samples
    batched: bool = False  # whether ``_rules`` takes stacks of starts (s, p, k) (see src.methods.loop)
    loss: str = "frobenius"  # the data-fit term: "frobenius" or "kl"

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

        ``callback``, if given, is called with a :class:`src.methods.loop.Pass` after every update.
        """
        self.check_params()
        X_rows = check_data(X, self.nonnegative_data, self.dtype)
        y = check_labels(y, X_rows.shape[0])
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
                          stacklevel=2)
        self.factors_ = solution.factors
        self.n_iter_ = solution.n_iter
        self.objective_history_ = np.asarray(solution.history)
        self.converged_ = solution.converged
        self.best_start_ = solution.best_start
        self.start_objectives_ = np.asarray(solution.start_objectives)
        self.components_ = self._basis(solution.factors).T
        self.embedding_ = self._representation(solution.factors)
        return self

    def fit_transform(self, X, y=None):
        """Fit and return the (n_samples, n_components) representation."""
        return self.fit(X, y).embedding_


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

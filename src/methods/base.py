"""The estimator contract every method follows.

Outside the methods the data are scikit-learn's rows-as-samples: ``fit(X, y)`` takes X of shape
(n_samples, n_features) and ``y`` with -1 for unlabelled samples. Inside, the papers' orientation is used:
the data matrix is ``X = X_rows.T`` (m features x n samples) and the factorization reads X ~ U V^T. The
transpose happens once, here.

A factorization subclass declares its factor names and shapes and returns its update rule and objective;
:func:`src.methods.loop.iterate` does the rest. Fitted attributes:

``factors_``
    dict of the final factors, named and shaped as in the ``init`` parameter.
``components_``
    (n_components, n_features) basis vectors, one per row.
``embedding_``
    (n_samples, n_components) representation that KMeans clusters (also returned by ``fit_transform``).
``n_iter_``, ``objective_history_``
    number of iterations run and the objective after each of them.
"""

from collections.abc import Callable, Mapping
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator

from ..errors import ConfigError
from .loop import Factors, iterate

EPS = 1e-10
"""Floor applied to every multiplicative-update denominator (Deng Cai's GNMF code uses the same value)."""

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


def check_data(X, nonnegative: bool) -> np.ndarray:
    """Validate a data matrix with one sample per row and return it as a float64 array.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    nonnegative : bool
        Whether negative entries are rejected.
    """
    try:
        X = np.asarray(X, dtype=np.float64)
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
    max_iter : int, default=200
        Number of iterations (exactly this many when ``tol=0``).
    tol : float, default=0.0
        Relative decrease of the objective below which iterating stops; 0 runs ``max_iter`` iterations.
    init : "random" or dict of str to ndarray, default="random"
        "random" draws every factor uniformly from [0, 1), as Deng Cai's code does; a dict gives the
        initial factors by their names in the paper (see ``factor_names``).
    random_state : int, numpy.random.Generator or None, default=None
        Seed of the random initial factors.
    """

    factor_names: tuple[str, ...] = ("U", "V")
    nonnegative_data: bool = True
    needs_labels: bool = False  # label-constrained methods: a protocol must give some labelled samples

    def __init__(self, n_components=2, max_iter=200, tol=0.0, init="random", random_state=None):
        self.n_components = n_components
        self.max_iter = max_iter
        self.tol = tol
        self.init = init
        self.random_state = random_state

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

    # -- the shared machinery -------------------------------------------------------------------
    def _initial_factors(self, shapes: dict[str, tuple[int, int]]) -> Factors:
        if isinstance(self.init, str):
            if self.init != "random":
                raise ConfigError(f"init={self.init!r} must be 'random' or a dict of initial factors")
            rng = np.random.default_rng(self.random_state)
            return {name: rng.random(shape) for name, shape in shapes.items()}
        if not isinstance(self.init, Mapping):
            raise ConfigError(f"init must be 'random' or a dict of initial factors, got {type(self.init).__name__}")
        if set(self.init) != set(shapes):
            raise ConfigError(f"init has factors {sorted(self.init)}, expected {sorted(shapes)}")
        factors = {}
        for name, shape in shapes.items():
            value = np.array(self.init[name], dtype=np.float64)  # a copy: the caller's arrays stay as given
            if value.shape != shape:
                raise ConfigError(f"init[{name!r}] has shape {value.shape}, expected {shape}")
            if not np.all(np.isfinite(value)) or value.min() < 0:
                raise ConfigError(f"init[{name!r}] must be finite and nonnegative")
            factors[name] = value
        return factors

    def fit(self, X, y=None):
        """Fit the factorization to X (n_samples, n_features), with partial labels y (-1 = unlabelled)."""
        self.check_params()
        X_rows = check_data(X, self.nonnegative_data)
        y = check_labels(y, X_rows.shape[0])
        X = X_rows.T  # the papers' orientation: m features x n samples
        m, n = X.shape
        factors = self._initial_factors(self._factor_shapes(m, n, y))
        update, objective = self._rules(X, y)
        factors, history = iterate(factors, update, objective, self.max_iter, self.tol)
        self.factors_ = factors
        self.n_iter_ = len(history)
        self.objective_history_ = np.asarray(history)
        self.components_ = self._basis(factors).T
        self.embedding_ = self._representation(factors)
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

    def _initial_factors(self, shapes):
        factors = super()._initial_factors(shapes)  # fresh arrays: the caller's init is not touched
        if self.normalize_init:
            norms = np.linalg.norm(factors["U"], axis=0)
            norms[norms == 0] = 1.0
            factors["U"] /= norms
            factors["V"] *= norms
        return factors

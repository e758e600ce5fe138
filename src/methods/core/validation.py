"""What every method checks before it computes: its parameters, the data X and the partial labels y.

Errors are one line naming the parameter (or X, or y) and the value, raised as
:class:`~src.errors.ConfigError` (a ValueError), so that a command line, a config file and the Python API
report a bad input the same way.

Parameters. Each estimator declares a rule for every constructor parameter in the class-level table
``_parameter_constraints`` (name -> :class:`~src.checks.Rule`), as scikit-learn's estimators do; a subclass
extends its parent's table, ``{**Parent._parameter_constraints, "alpha": NONNEGATIVE}``.
:meth:`ParameterRulesMixin.check_params` applies the table in its order, without data (the protocol checks a
method's settings before it loads any). The rules are the project's one vocabulary of checks
(:mod:`src.checks`, which the configs' checks share), plus :data:`CHECKED_BY_FIT` for what needs the data:
``alpha=-1 must be a finite number >= 0``.

Data. X arrives as scikit-learn passes it, one sample per row (n_samples, n_features): array-likes, pandas
DataFrames, scipy.sparse CSR where the class sets ``accept_sparse``; :class:`SampleInputMixin` validates it as
scikit-learn does and rejects NaN, infinite values and, where the method needs X >= 0, negative entries.
Labels are integers, -1 (:data:`UNLABELLED`) marking the samples without one (:func:`check_labels`).
"""

import numpy as np
import scipy.sparse as sp

from ...checks import Rule
from ...errors import ConfigError, UserError

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _validate_data

    _FINITE = "ensure_all_finite"
except ImportError:  # scikit-learn 1.4 and 1.5: the estimator method, and the older keyword

    def _validate_data(estimator, X, **params):
        return estimator._validate_data(X, **params)

    _FINITE = "force_all_finite"

UNLABELLED = -1
"""The label of a sample without one."""

DTYPES = ("float64", "float32")
"""Precisions a factorization iterates in (its ``dtype`` parameter)."""


# -- parameter rules ------------------------------------------------------------------------------------------
class _CheckedByFit(Rule):
    """A parameter that cannot be judged without the data; ``fit`` checks it (``check`` accepts anything)."""

    def __init__(self, where: str):
        super().__init__(lambda value: True, where)

    def check(self, name: str, value):
        return value


CHECKED_BY_FIT = _CheckedByFit("checked by fit")
"""The rule of ``init`` (checked against the factor shapes, which need the data) and ``random_state``
(taken by numpy.random.default_rng when fitting)."""


class ParameterRulesMixin:
    """``check_params()``: every constructor parameter checked against its rule, without data.

    ``_parameter_constraints`` maps each parameter of ``__init__`` to its :class:`~src.checks.Rule` (scikit-learn's name
    for such a table); subclasses extend their parent's table. The checks run in the table's order.
    """

    _parameter_constraints: dict[str, Rule] = {}

    def check_params(self) -> None:
        """Raise :class:`~src.errors.ConfigError` (one line naming the parameter and its value) at the first bad
        value."""
        for name, rule in self._parameter_constraints.items():
            rule.check(name, getattr(self, name))


# -- data and labels ------------------------------------------------------------------------------------------
class DataTypeError(UserError, TypeError):
    """X holds something that is not a number (a TypeError, as scikit-learn raises it); one line."""


def _check_shape(shape: tuple) -> None:
    """Raise :class:`~src.errors.ConfigError` unless ``shape`` is that of a non-empty 2-D array (scikit-learn's
    wording too)."""
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
    """Raise :class:`~src.errors.ConfigError` if X (dense or sparse) has NaN or infinite values, or negative ones when
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
    accepted and converted. None means no sample is labelled.

    Returns
    -------
    ndarray of shape (n_samples,), int64
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
    """X and y of ``fit`` validated as scikit-learn validates them, with one-line errors; the input tags.

    ``nonnegative_data`` (X >= 0 required) and ``accept_sparse`` (scipy.sparse CSR accepted) are class
    attributes. ``needs_labels`` says whether a protocol must give labelled samples (see
    :class:`~.estimator.LabelConstrainedMixin`). ``_expected_failed_checks`` names the checks of
    scikit-learn's ``check_estimator`` that cannot hold for the class, each with its reason.
    """

    nonnegative_data: bool = True
    accept_sparse: bool = False
    needs_labels: bool = False
    _expected_failed_checks: dict[str, str] = {}

    def expected_failed_checks(self) -> dict[str, str]:
        """The checks of scikit-learn's ``check_estimator`` that cannot hold for this method, with the reason.

        Pass it on: ``check_estimator(est, expected_failed_checks=est.expected_failed_checks())`` (a copy of
        the class's ``_expected_failed_checks``).
        """
        return dict(self._expected_failed_checks)

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

    def _validate_y(self, y, n_samples: int) -> np.ndarray:
        """The partial labels of ``fit`` (n_samples,), -1 = unlabelled; None: no sample labelled."""
        return check_labels(y, n_samples)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = bool(self.nonnegative_data)
        tags.input_tags.sparse = bool(self.accept_sparse)
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {"requires_positive_X": bool(self.nonnegative_data)}

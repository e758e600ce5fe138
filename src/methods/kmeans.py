"""The KMeans baseline: the representation is the data itself."""

from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ..checks import POSITIVE_INT
from .core.validation import ParameterRulesMixin, SampleInputMixin


class KMeansBaseline(OneToOneFeatureMixin, TransformerMixin, SampleInputMixin, ParameterRulesMixin, BaseEstimator):
    """Identity representation, so that the protocol's KMeans runs on the (preprocessed) features.

    ``transform(X)`` returns a copy of X (validated; scipy.sparse CSR accepted), the feature names pass
    through unchanged. Nothing is iterated: no ``n_iter_`` or ``objective_history_``.

    Parameters
    ----------
    n_components : int, default=2
        Accepted for a uniform interface and validated; the representation keeps all features.

    Attributes
    ----------
    embedding_ : ndarray of shape (n_samples, n_features)
        A copy of X.
    factors_ : dict
        Empty (not a factorization).
    """

    nonnegative_data = False
    accept_sparse = True
    _parameter_constraints = {"n_components": POSITIVE_INT}

    def __init__(self, n_components=2):
        self.n_components = n_components

    def fit(self, X, y=None):
        """Store X (n_samples, n_features) as the representation."""
        self.check_params()
        X = self._validate_X(X, reset=True)
        self._validate_y(y, X.shape[0])
        self.embedding_ = X.copy()
        self.factors_ = {}
        return self

    def fit_transform(self, X, y=None):
        """Return a copy of X, (n_samples, n_features)."""
        return self.fit(X, y).embedding_

    def transform(self, X):
        """Return a copy of X (n_samples, n_features), checked against the fitted features."""
        check_is_fitted(self)
        return self._validate_X(X, reset=False).copy()

"""The KMeans baseline: the representation is the data itself."""

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .core.estimator import SampleInputMixin, check_labels, check_positive_int


class KMeansBaseline(OneToOneFeatureMixin, TransformerMixin, SampleInputMixin, BaseEstimator):
    """Identity representation, so that the protocol's KMeans runs on the (preprocessed) features.

    ``transform(X)`` returns a copy of X (validated; scipy.sparse CSR accepted), the feature names pass
    through unchanged.

    Parameters
    ----------
    n_components : int, default=2
        Accepted for a uniform interface and validated; the representation keeps all features.
    """

    nonnegative_data = False
    accept_sparse = True

    def __init__(self, n_components=2):
        self.n_components = n_components

    def check_params(self) -> None:
        check_positive_int("n_components", self.n_components)

    def fit(self, X, y=None):
        """Store X (n_samples, n_features) as the representation."""
        self.check_params()
        X = self._validate_X(X, reset=True)
        check_labels(y, X.shape[0])
        self.embedding_ = X.copy()
        self.factors_ = {}
        self.n_iter_ = 0
        self.objective_history_ = np.empty(0)
        return self

    def fit_transform(self, X, y=None):
        """Return a copy of X, (n_samples, n_features)."""
        return self.fit(X, y).embedding_

    def transform(self, X):
        """Return a copy of X (n_samples, n_features), checked against the fitted features."""
        check_is_fitted(self)
        return self._validate_X(X, reset=False).copy()

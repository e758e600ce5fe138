"""The KMeans baseline: the representation is the data itself."""

import numpy as np
from sklearn.base import BaseEstimator

from .base import check_data, check_labels, check_positive_int


class KMeansBaseline(BaseEstimator):
    """Identity representation, so that the protocol's KMeans runs on the (preprocessed) features.

    Parameters
    ----------
    n_components : int, default=2
        Accepted for a uniform interface and validated; the representation keeps all features.
    """

    def __init__(self, n_components=2):
        self.n_components = n_components

    def check_params(self) -> None:
        check_positive_int("n_components", self.n_components)

    def fit(self, X, y=None):
        """Store X (n_samples, n_features) as the representation."""
        self.check_params()
        X = check_data(X, nonnegative=False)
        check_labels(y, X.shape[0])
        self.embedding_ = X.copy()
        self.factors_ = {}
        self.n_iter_ = 0
        self.objective_history_ = np.empty(0)
        return self

    def fit_transform(self, X, y=None):
        """Return a copy of X, (n_samples, n_features)."""
        return self.fit(X, y).embedding_

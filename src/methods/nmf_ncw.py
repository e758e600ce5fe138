"""NMF with normalized-cut weighting (NCW), Xu, Liu and Gong (SIGIR 2003): the "NMF" of the CNMF paper.

What is implemented, X (m x n) >= 0 with one sample per column:

1. Normalized-cut weighting of the samples: d = X^T X 1 (d_j = x_j^T sum_l x_l, the degree of sample j
   in the graph whose weights are the inner products x_j^T x_l), computed as X^T (X 1) without forming
   X^T X, and X_w = X D^{-1/2}, i.e. column j is scaled by d_j^(-1/2).
2. Frobenius NMF of the weighted data, X_w ~ U V^T, with Lee and Seung's multiplicative rules
   (:func:`src.methods.core.frobenius.frobenius_rules`, V first then U). The objective is ||X_w - U V^T||_F^2.
3. The representation is V with U's columns scaled to unit Euclidean length (u_k <- u_k / ||u_k||,
   v_k <- v_k ||u_k||), which leaves U V^T unchanged.

Sources and honesty. The CNMF paper says only "a normalized cut weighted version of NMF as suggested in
[13]" (Xu et al. 2003); the CCF paper cites the same reference for its "NMF" baseline but describes it as
"nonnegative matrix factorization using update based on Euclidean distance". Xu et al.'s paper is not
available to this project; steps 1 and 3 are recalled from memory of it (the weighting X D^{-1/2} with
D = diag(X^T X e), and the normalization of U's columns with V scaled accordingly) and agree with Deng
Cai's ``GNMF_Multi.m``, whose ``weight='NCW'`` option scales the samples by (X^T (X 1))^(-1/2) in the
same way (also recalled from memory). Choices made here where the memory or the papers are silent:

* V is clustered as it comes out of the weighted factorization; it is not multiplied back by D^{1/2}
  (Xu et al. assign clusters by the largest entry of each normalized v_j, which such a per-sample scale
  would not change; the CNMF protocol runs KMeans on V, where it would).
* A sample with d_j = 0 (only possible for an all-zero sample of nonnegative data) gets weight 0 instead
  of an infinite one; its column stays zero.
* ``factors_``, ``components_``, ``objective_history_`` and ``reconstruction_err_`` refer to the weighted
  data X_w, and so does ``inverse_transform``: it gives the reconstruction U V^T of the weighted samples
  (the weight d_j^(-1/2) of a sample is not a function of its representation, so it cannot be undone there).

References
----------
W. Xu, X. Liu and Y. Gong, "Document clustering based on non-negative matrix factorization", Proc. ACM
SIGIR 2003, pp. 267-273.
"""

import numpy as np

from .core.estimator import Factorization
from .core.frobenius import frobenius_rules


def ncw_weights(X: np.ndarray) -> np.ndarray:
    """Per-sample normalized-cut weights d_j^(-1/2), d = X^T (X 1), shape (n,); 0 where d_j = 0.

    Parameters
    ----------
    X : ndarray of shape (m, n)
        Nonnegative data, one sample per column. X^T X is never formed: O(mn) time, O(m + n) memory.
    """
    d = X.T @ X.sum(axis=1)
    weights = np.zeros_like(d)  # X's dtype
    np.divide(1.0, np.sqrt(d), out=weights, where=d > 0)
    return weights


class NMFNCW(Factorization):
    """Normalized-cut weighted NMF (Xu et al. 2003): Frobenius NMF of X D^{-1/2}, D = diag(X^T X 1).

    Parameters are those of :class:`~src.methods.core.estimator.Factorization`. ``factors_`` holds ``U`` (m x k)
    and ``V`` (n x k) of the weighted data; ``sample_weights_`` (n,) holds d^(-1/2); ``embedding_`` is V
    with U's columns scaled to unit L2 norm.

    References
    ----------
    W. Xu, X. Liu and Y. Gong, "Document clustering based on non-negative matrix factorization", Proc. ACM
    SIGIR 2003.
    """

    batched = True

    def _rules(self, X, y):
        self.sample_weights_ = ncw_weights(X)
        self.feature_sums_ = X.sum(axis=1)  # X 1, (m,): the training graph's degrees of new samples
        return frobenius_rules(X * self.sample_weights_)  # X D^{-1/2}: column j scaled by d_j^(-1/2)

    def _approximated(self, X):
        """X D^{-1/2}, the weighted samples (m x n) that U V^T approximates (``reconstruction_err_``)."""
        return X * self.sample_weights_

    def _transform_rules(self, X, y):
        """``transform``: a new sample x is weighted by its degree in the training graph, x^T (X_train 1)
        (so that its weight does not depend on the other new samples), then NMF's rules with U fixed."""
        d = X.T @ self.feature_sums_
        weights = np.zeros_like(d)
        np.divide(1.0, np.sqrt(d), out=weights, where=d > 0)
        return frobenius_rules(X * weights)

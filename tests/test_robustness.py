"""Numerical robustness: 10,000 iterations of every factorization on degenerate data, never NaN or inf.

Every registered method that iterates a factorization (the :class:`~src.methods.core.estimator.Factorization`
subclasses; KMeans, COP-KMeans and SDA do not) runs 10,000 iterations on an 8 x 6 matrix that has an all-zero
sample, an all-zero feature, three identical samples and rank 2, factorized at rank 5 (above the data rank),
at three scales: 1, 1e-100 (tiny) and 1e100 (huge). The factors, the embedding, the basis and the objective
after every iteration must be finite, and no floating-point overflow, division by zero or invalid operation
may occur on the way (underflow to zero is allowed: tiny data drive the factors to zero). The methods that
accept mixed-sign data (the concept factorizations' explicit-kernel rules) also run on it.
"""

import warnings

import numpy as np
import pytest

from src import methods
from src.methods.core.estimator import Factorization

from helpers import FIXED

ITERATIONS = 10_000
# 10,000 iterations per method and scale: ~1 s each, ~40 s in all; `make test` runs them, `make test-fast` not.
pytestmark = pytest.mark.integration
#: A minute of iterations in Python: run in a pytest process of its own on the other core (conftest.py).
IN_ITS_OWN_PROCESS = True

FACTORIZATIONS = [name for name in methods.NAMES if issubclass(methods.REGISTRY[name], Factorization)]
MIXED_SIGN = [name for name in FACTORIZATIONS if not methods.REGISTRY[name].nonnegative_data]


def degenerate() -> np.ndarray:
    rng = np.random.default_rng(0)
    X = rng.random((8, 2)) @ rng.random((2, 6))  # rank 2
    X[3] = 0.0  # an all-zero sample
    X[:, 4] = 0.0  # an all-zero feature
    X[5] = X[6] = X[1]  # duplicated samples
    return X


LABELS = np.array([0, -1, 1, -1, -1, -1, 0, -1])  # two labelled classes (constrained and pairwise methods)


def fit_long(name: str, X: np.ndarray):
    accepted = methods.parameter_names(methods.REGISTRY[name])
    params = {"n_components": 5, "max_iter": ITERATIONS, "random_state": 0, **FIXED}  # one start, exactly ITERATIONS
    if "image_shape" in accepted:
        params["image_shape"] = (2, 3)
    if "n_neighbors" in accepted:
        params["n_neighbors"] = 3
    model = methods.make(name, **params)
    with np.errstate(over="raise", divide="raise", invalid="raise", under="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        embedding = model.fit_transform(X, LABELS)
    return model, embedding


def assert_finite(model, embedding):
    assert model.n_iter_ == ITERATIONS and model.objective_history_.shape == (ITERATIONS,)
    assert np.all(np.isfinite(model.objective_history_)), "objective not finite"
    assert np.all(np.isfinite(embedding)) and embedding.shape == (8, 5)
    assert np.all(np.isfinite(model.components_))
    for factor, value in model.factors_.items():
        assert np.all(np.isfinite(value)) and value.min() >= 0, factor


def test_every_iterative_method_is_covered():
    assert {"nmf", "nmf_kl", "nmf_ncw", "ntf", "gnmf", "semignmf", "cf", "cnmf", "cnmf_kl", "ccf", "sparse_nmf",
            "nlcf", "lcf"} <= set(FACTORIZATIONS)
    assert not {"kmeans", "copkmeans", "sda"} & set(FACTORIZATIONS)


@pytest.mark.parametrize("scale", [1.0, 1e-100, 1e100], ids=["unit", "tiny", "huge"])
@pytest.mark.parametrize("name", FACTORIZATIONS)
def test_degenerate_data_stay_finite(name, scale):
    assert_finite(*fit_long(name, degenerate() * scale))


@pytest.mark.parametrize("name", MIXED_SIGN)
def test_mixed_sign_degenerate_data_stay_finite(name):
    X = degenerate() - 0.5 * degenerate().mean()
    X[3] = 0.0
    assert X.min() < 0
    assert_finite(*fit_long(name, X))

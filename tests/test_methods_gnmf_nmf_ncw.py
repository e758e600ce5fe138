"""Properties shared by GNMF, SemiGNMF and NMF-NCW (src.methods.gnmf, .nmf_ncw): monotone objective, finite factors, seeds."""

import numpy as np
import pytest

from src.methods.gnmf import GNMF, SemiGNMF
from src.methods.nmf_ncw import NMFNCW

METHODS = {"gnmf": GNMF, "semignmf": SemiGNMF, "nmf_ncw": NMFNCW}


def initial_factors(rng, m, n, k):
    return {"U": rng.random((m, k)), "V": rng.random((n, k))}


def partial_labels(rng, n, n_classes, n_labelled):
    """Labels in 0..n_classes-1 for n_labelled random samples, -1 elsewhere."""
    y = np.full(n, -1)
    chosen = rng.choice(n, n_labelled, replace=False)
    y[chosen] = rng.integers(0, n_classes, n_labelled)
    return y


# -- dense reference graphs written out by hand ---------------------------------------------------


# -- properties shared by the three methods ------------------------------------------------------
CONFIGS = [
    ("gnmf", {}),
    ("gnmf", {"weight": "heat", "alpha": 10.0}),
    ("gnmf", {"weight": "cosine", "n_neighbors": 3}),
    ("semignmf", {}),
    ("semignmf", {"weight": "heat"}),
    ("semignmf", {"normalize_init": True}),
    ("nmf_ncw", {}),
]


@pytest.mark.parametrize("name, params", CONFIGS)
def test_objective_never_increases_and_factors_stay_nonnegative(name, params, rng):
    X = rng.random((25, 15))
    y = partial_labels(rng, 25, 3, 8)
    model = METHODS[name](n_components=4, max_iter=200, random_state=0, **params).fit(X, y)
    history = model.objective_history_
    assert len(history) == 200
    assert np.all(np.diff(history) <= 1e-9 * history[0])
    assert history[-1] < history[0]
    for factor in model.factors_.values():
        assert np.all(factor >= 0) and np.all(np.isfinite(factor))


@pytest.mark.parametrize("name, params", CONFIGS)
def test_degenerate_input_stays_finite(name, params, rng):
    X = rng.random((10, 8))
    X[3] = 0.0  # an all-zero sample
    X[:, 5] = 0.0  # an all-zero feature
    X[7] = X[2]  # duplicated samples
    y = np.array([0, -1, 1, -1, 0, -1, -1, 1, -1, 0])
    model = METHODS[name](n_components=12, max_iter=300, random_state=1, **params).fit(X, y)
    assert np.all(np.isfinite(model.embedding_)) and np.all(np.isfinite(model.objective_history_))
    for factor in model.factors_.values():
        assert np.all(factor >= 0) and np.all(np.isfinite(factor))


@pytest.mark.parametrize("name", METHODS)
def test_same_seed_same_result_and_init_is_not_modified(name, rng):
    X = rng.random((12, 6))
    a = METHODS[name](n_components=3, max_iter=20, random_state=7).fit_transform(X)
    b = METHODS[name](n_components=3, max_iter=20, random_state=7).fit_transform(X)
    np.testing.assert_array_equal(a, b)
    init = initial_factors(rng, 6, 12, 3)
    kept = {key: value.copy() for key, value in init.items()}
    METHODS[name](n_components=3, max_iter=5, init=init).fit(X)
    for key in init:
        np.testing.assert_array_equal(init[key], kept[key])

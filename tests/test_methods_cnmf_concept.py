"""Properties shared by CNMF, CNMF-KL, CF and CCF (src.methods.cnmf, .cnmf_kl, .concept): labels, monotone objective, seeds."""

import numpy as np
import pytest
from sklearn.base import clone

from src.errors import ConfigError
from src.methods.cnmf import CNMF
from src.methods.cnmf_kl import CNMFKL
from src.methods.concept import CCF, CF
from src.methods.graph.label_matrix import n_constraint_columns

from helpers import FIXED, monotone, partial_labels, random_init

LABELLED = {"cnmf": CNMF, "cnmf_kl": CNMFKL, "ccf": CCF}
ALL = {**LABELLED, "cf": CF}


# -- hard constraints ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", LABELLED)
def test_samples_of_one_class_share_their_representation(name, rng):
    X = rng.random((20, 8))
    y = partial_labels(20, rng)
    model = LABELLED[name](n_components=3, max_iter=30, random_state=0).fit(X, y)
    V = model.embedding_
    for label in range(3):
        rows = V[y == label]
        np.testing.assert_array_equal(rows, np.broadcast_to(rows[0], rows.shape))
    firsts = np.array([V[y == label][0] for label in range(3)])
    assert np.unique(firsts.round(12), axis=0).shape[0] == 3  # different classes differ
    assert model.factors_["Z"].shape == (n_constraint_columns(y), 3)


# -- convergence ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ALL)
def test_objective_never_increases_with_labels(name, rng):
    X = rng.random((25, 15))
    y = partial_labels(25, rng)
    model = ALL[name](n_components=4, max_iter=200, random_state=0, **FIXED).fit(X, y)
    history = model.objective_history_
    assert len(history) == 200 and monotone(history) and history[-1] < history[0]
    for factor in model.factors_.values():
        assert np.all(factor >= 0) and np.all(np.isfinite(factor))


# -- degenerate input and parameters -------------------------------------------------------------------
@pytest.mark.parametrize("name", ALL)
def test_degenerate_input_stays_finite(name, rng):
    X = rng.random((10, 8))
    X[3] = 0.0  # an all-zero sample (labelled below)
    X[:, 5] = 0.0  # an all-zero feature
    X[7] = X[2]  # duplicated samples
    y = np.array([0, -1, 1, 0, -1, -1, 1, -1, -1, 0])
    model = ALL[name](n_components=12, max_iter=300, random_state=1).fit(X, y)  # rank above data rank
    assert np.all(np.isfinite(model.embedding_)) and np.all(np.isfinite(model.objective_history_))
    assert np.all(np.isfinite(model.components_))
    for factor in model.factors_.values():
        assert np.all(factor >= 0) and np.all(np.isfinite(factor))


@pytest.mark.parametrize("name", ALL)
def test_bad_parameters_name_themselves(name, rng):
    with pytest.raises(ConfigError, match="n_components=0"):
        ALL[name](n_components=0).fit(rng.random((5, 4)))
    with pytest.raises(ConfigError, match="max_iter=-1"):
        ALL[name](max_iter=-1).fit(rng.random((5, 4)))
    model = ALL[name](n_components=3, max_iter=5, init_from_nmf=True) if name == "ccf" else ALL[name]()
    assert clone(model).get_params() == model.get_params()


@pytest.mark.parametrize("name", ALL)
def test_same_seed_same_result_and_init_is_not_modified(name, rng):
    X = rng.random((10, 6))
    y = partial_labels(10, rng)
    a = ALL[name](n_components=3, max_iter=20, random_state=7).fit_transform(X, y)
    b = ALL[name](n_components=3, max_iter=20, random_state=7).fit_transform(X, y)
    np.testing.assert_array_equal(a, b)
    init = random_init(ALL[name], rng, 6, 10, 3, y)
    kept = {key: value.copy() for key, value in init.items()}
    ALL[name](n_components=3, max_iter=5, init=init).fit(X, y)
    for key in init:
        np.testing.assert_array_equal(init[key], kept[key])

"""Properties shared by LCF, NLCF and SparseNMF (src.methods.lcf, .nlcf, .sparse_nmf): monotone objective, seeds, parameters."""

import numpy as np
import pytest
from sklearn.base import clone

from src.errors import ConfigError
from src.methods.lcf import LCF
from src.methods.nlcf import NLCF
from src.methods.sparse_nmf import SparseNMF

from helpers import FIXED, monotone, random_init

ALL = {"lcf": LCF, "nlcf": NLCF, "sparse_nmf": SparseNMF}
PARAM = {"lcf": "lam", "nlcf": "mu", "sparse_nmf": "beta"}


# -- shared properties --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, value", [("lcf", 0.3), ("lcf", 8.0), ("lcf", 32.0), ("nlcf", 0.3), ("nlcf", 10.0),
                    ("sparse_nmf", 0.1), ("sparse_nmf", 1.0)]
)
def test_objective_never_increases_and_factors_stay_nonnegative(name, value, rng):
    X = rng.random((25, 15))
    model = ALL[name](n_components=4, max_iter=200, random_state=0, **{PARAM[name]: value}, **FIXED).fit(X)
    history = model.objective_history_
    assert len(history) == 200
    assert monotone(history) and history[-1] < history[0]
    for factor in model.factors_.values():
        assert np.all(factor >= 0) and np.all(np.isfinite(factor))


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("value", [0.0, 0.3, 32.0])
def test_degenerate_input_stays_finite(name, value, rng):
    X = rng.random((10, 8))
    X[3] = 0.0  # an all-zero sample
    X[:, 5] = 0.0  # an all-zero feature
    X[7] = X[2]  # duplicated samples
    model = ALL[name](n_components=12, max_iter=300, random_state=1, **{PARAM[name]: value}).fit(X)  # rank > rank X
    assert np.all(np.isfinite(model.embedding_)) and np.all(np.isfinite(model.components_))
    assert np.all(np.isfinite(model.objective_history_)) and monotone(model.objective_history_)
    for factor in model.factors_.values():
        assert np.all(factor >= 0) and np.all(np.isfinite(factor))


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf"), "big", True])
def test_bad_parameters_name_themselves(name, bad, rng):
    param = PARAM[name]
    with pytest.raises(ConfigError, match=f"{param}="):
        ALL[name](n_components=2, **{param: bad}).fit(rng.random((5, 4)))
    with pytest.raises(ConfigError, match="n_components=0"):
        ALL[name](n_components=0).fit(rng.random((5, 4)))


@pytest.mark.parametrize("name", ["nlcf", "sparse_nmf"])
def test_nmf_variants_reject_negative_data(name, rng):
    with pytest.raises(ConfigError, match="negative"):
        ALL[name](n_components=2).fit(-rng.random((5, 4)))


@pytest.mark.parametrize("name", ALL)
def test_params_defaults_clone_seed_and_init_untouched(name, rng):
    cls = ALL[name]
    assert cls().get_params()[PARAM[name]] == {"lcf": 0.3, "nlcf": 0.3, "sparse_nmf": 0.1}[name]
    model = cls(n_components=3, max_iter=10, random_state=7, **{PARAM[name]: 2.5})
    assert clone(model).get_params() == model.get_params()
    X = rng.random((10, 6))
    np.testing.assert_array_equal(clone(model).fit_transform(X), model.fit_transform(X))
    init = random_init(cls, rng, 6, 10, 3)
    kept = {key: value.copy() for key, value in init.items()}
    model.set_params(init=init).fit(X)
    for key in init:
        np.testing.assert_array_equal(init[key], kept[key])
    assert model.embedding_.shape == (10, 3) and model.components_.shape == (3, 6)

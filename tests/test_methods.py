"""Property tests of the registered factorizations on tiny matrices."""

import warnings

import numpy as np
import pytest
from sklearn.decomposition import NMF as SklearnNMF

from src import methods
from src.errors import ConfigError
from src.methods.core.estimator import Factorization

from helpers import FIXED, check_float32_fit, check_starts_together_equal_each_alone, initial_factors

# methods that run on any matrix (NTF needs an image shape and has its own tests)
FACTORIZATIONS = [name for name, cls in methods.REGISTRY.items()
                  if issubclass(cls, Factorization) and "image_shape" not in cls._get_param_names()]
SKLEARN_LOSS = {"nmf": "frobenius", "nmf_kl": "kullback-leibler"}


@pytest.mark.parametrize("name", SKLEARN_LOSS)
def test_matches_sklearn_multiplicative_update(name, rng):
    X = rng.random((30, 20))  # 30 samples, 20 features
    init = initial_factors(rng, 20, 30, 4)
    ours = methods.make(name, n_components=4, max_iter=50, init=init, **FIXED).fit(X)
    sk = SklearnNMF(4, solver="mu", beta_loss=SKLEARN_LOSS[name], init="custom", max_iter=50, tol=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        W = sk.fit_transform(X, W=init["V"].copy(), H=init["U"].T.copy())
    V, U = ours.factors_["V"], ours.factors_["U"]
    assert np.abs(V - W).max() / np.abs(W).max() < 1e-6
    assert np.abs(U - sk.components_.T).max() / np.abs(U).max() < 1e-6


def test_one_nmf_step_follows_lee_seung(rng):
    X = rng.random((9, 7))
    init = initial_factors(rng, 7, 9, 3)
    model = methods.make("nmf", n_components=3, max_iter=1, init=init, **FIXED).fit(X)
    Xp, U, V = X.T, init["U"], init["V"]
    V1 = V * (Xp.T @ U) / (V @ U.T @ U)
    U1 = U * (Xp @ V1) / (U @ V1.T @ V1)
    np.testing.assert_allclose(model.factors_["V"], V1, rtol=1e-12)
    np.testing.assert_allclose(model.factors_["U"], U1, rtol=1e-12)
    assert model.objective_history_[0] == pytest.approx(np.linalg.norm(Xp - U1 @ V1.T) ** 2)


def test_one_kl_step_follows_lee_seung(rng):
    X = rng.random((9, 7))
    init = initial_factors(rng, 7, 9, 3)
    model = methods.make("nmf_kl", n_components=3, max_iter=1, init=init, **FIXED).fit(X)
    Xp, U, V = X.T, init["U"], init["V"]
    V1 = V * ((Xp / (U @ V.T)).T @ U) / U.sum(axis=0)
    U1 = U * ((Xp / (U @ V1.T)) @ V1) / V1.sum(axis=0)
    np.testing.assert_allclose(model.factors_["V"], V1, rtol=1e-12)
    np.testing.assert_allclose(model.factors_["U"], U1, rtol=1e-12)
    Y = U1 @ V1.T
    assert model.objective_history_[0] == pytest.approx((Xp * np.log(Xp / Y) - Xp + Y).sum())


@pytest.mark.parametrize("name", FACTORIZATIONS)
def test_objective_never_increases_and_factors_stay_nonnegative(name, rng):
    X = rng.random((25, 15))
    model = methods.make(name, n_components=4, max_iter=200, random_state=0, **FIXED).fit(X)
    history = model.objective_history_
    assert len(history) == 200 and model.n_iter_ == 200
    assert np.all(np.diff(history) <= 1e-9 * history[0])
    assert history[-1] < history[0]
    for factor in model.factors_.values():
        assert np.all(factor >= 0) and np.all(np.isfinite(factor))


@pytest.mark.parametrize("name", FACTORIZATIONS)
def test_starts_advanced_together_equal_each_start_alone(name, rng):
    """The selection phase of a batched fit gives every start the objective it has when fitted alone."""
    cls = methods.REGISTRY[name]
    check_starts_together_equal_each_alone(cls, {}, rng, n_labelled=60 if cls.needs_labels else 0)


@pytest.mark.parametrize("name", FACTORIZATIONS)
def test_float32_keeps_its_precision_and_the_objective_decreasing(name, rng):
    cls = methods.REGISTRY[name]
    check_float32_fit(cls, {}, rng, n_labelled=15 if cls.needs_labels else 0)


@pytest.mark.parametrize("name", FACTORIZATIONS)
def test_degenerate_input_stays_finite(name, rng):
    X = rng.random((10, 8))
    X[3] = 0.0  # an all-zero sample
    X[:, 5] = 0.0  # an all-zero feature
    X[7] = X[2]  # duplicated samples
    model = methods.make(name, n_components=12, max_iter=300, random_state=1).fit(X)  # rank above data rank
    assert np.all(np.isfinite(model.embedding_))
    assert np.all(np.isfinite(model.objective_history_))
    for factor in model.factors_.values():
        assert np.all(factor >= 0) and np.all(np.isfinite(factor))


@pytest.mark.parametrize("name", FACTORIZATIONS)
def test_same_seed_same_factors_and_init_is_not_modified(name, rng):
    X = rng.random((10, 6))
    a = methods.make(name, n_components=3, max_iter=20, random_state=7).fit_transform(X)
    b = methods.make(name, n_components=3, max_iter=20, random_state=7).fit_transform(X)
    np.testing.assert_array_equal(a, b)
    model = methods.make(name, n_components=3, max_iter=5)
    init = {key: rng.random(shape) for key, shape in model._factor_shapes(6, 10, np.full(10, -1)).items()}
    kept = {key: value.copy() for key, value in init.items()}
    model.set_params(init=init).fit(X)
    for key in init:
        np.testing.assert_array_equal(init[key], kept[key])


def test_tol_stops_early_and_zero_tol_runs_max_iter(rng):
    X = rng.random((20, 10))
    assert methods.make("nmf", n_components=2, max_iter=300, tol=0).fit(X).n_iter_ == 300
    assert methods.make("nmf", n_components=2, max_iter=300, tol=1e-3, random_state=0).fit(X).n_iter_ < 300


def test_fitted_attributes_shapes(rng):
    X = rng.random((11, 7))
    model = methods.make("nmf", n_components=3, max_iter=5)
    Z = model.fit_transform(X)
    assert Z.shape == (11, 3) and model.components_.shape == (3, 7)
    assert model.factors_["U"].shape == (7, 3) and model.factors_["V"].shape == (11, 3)
    # the representation is V with U's columns scaled to unit norm: U V^T is unchanged
    U = model.factors_["U"]
    np.testing.assert_allclose((U / np.linalg.norm(U, axis=0)) @ Z.T, U @ model.factors_["V"].T)


def test_kmeans_baseline_returns_the_features(rng):
    X = rng.normal(size=(6, 4))
    np.testing.assert_array_equal(methods.make("kmeans", n_components=2).fit_transform(X), X)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"n_components": 0}, "n_components=0"),
        ({"n_components": 2.5}, "n_components=2.5"),
        ({"max_iter": -1}, "max_iter=-1"),
        ({"max_iter": "ten"}, "max_iter='ten'"),
        ({"tol": -0.1}, "tol=-0.1"),
        ({"init": "nndsvd"}, "init='nndsvd'"),
    ],
)
def test_bad_parameters_name_themselves(params, match, rng):
    with pytest.raises(ConfigError, match=match):
        methods.make("nmf", **params).fit(rng.random((5, 4)))


def test_bad_data_and_labels(rng):
    model = methods.make("nmf", n_components=2)
    with pytest.raises(ConfigError, match="negative"):
        model.fit(-rng.random((5, 4)))
    with pytest.raises(ConfigError, match="NaN"):
        model.fit(np.full((5, 4), np.nan))
    with pytest.raises(ConfigError, match=r"y must have shape \(5,\)"):
        model.fit(rng.random((5, 4)), y=np.zeros(4, dtype=int))
    with pytest.raises(ConfigError, match="2-D"):
        model.fit(rng.random(5))


def test_bad_init_factors(rng):
    X = rng.random((5, 4))
    good = initial_factors(rng, 4, 5, 2)
    with pytest.raises(ConfigError, match=r"init\['U'\] has shape"):
        methods.make("nmf", n_components=2, init={**good, "U": rng.random((3, 2))}).fit(X)
    with pytest.raises(ConfigError, match="nonnegative"):
        methods.make("nmf", n_components=2, init={**good, "V": -good["V"]}).fit(X)
    with pytest.raises(ConfigError, match="expected"):
        methods.make("nmf", n_components=2, init={"U": good["U"]}).fit(X)


def test_registry_errors_list_the_choices():
    with pytest.raises(ConfigError, match="method='nope' is not one of kmeans, nmf"):
        methods.make("nope")
    with pytest.raises(ConfigError, match="no parameter 'alpha'"):
        methods.make("nmf", alpha=1.0)

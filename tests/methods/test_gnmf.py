"""Tests of GNMF and SemiGNMF (Cai et al. 2011; src.methods.gnmf): one step by Cai's equations, reductions, parameters."""

import numpy as np
import pytest
from sklearn.base import clone

from src.errors import ConfigError
from src.methods.gnmf import GNMF, SemiGNMF, gnmf_rules
from src.methods.graph.knn import knn_graph, label_graph
from src.methods.graph.label_matrix import SameClassBlock
from src.methods.nmf import NMF

from helpers import (AT_THE_CAP, FIXED, assert_same_fit, check_objective_never_increases, check_starts_together_equal_each_alone,
                     dense_knn, dense_label_graph, initial_factors, random_partial_labels, traced_peak)


# -- GNMF and SemiGNMF ----------------------------------------------------------------------------
@pytest.mark.filterwarnings(AT_THE_CAP)  # one iteration: the defaults are checked
def test_defaults_are_cais(rng):
    params = GNMF().get_params()
    assert params["alpha"] == 100 and params["n_neighbors"] == 5 and params["weight"] == "binary"
    assert params["t"] is None and params["normalize_init"] is True  # Cai's NormalizeUV, as conf/method/gnmf.yaml
    assert params["stopping"] == "reference" and params["n_starts"] == 10 and params["min_iter"] == 30
    assert params["tol"] == 1e-5 and params["max_iter"] == 10_000
    assert SemiGNMF().get_params()["normalize_init"] is True
    assert clone(SemiGNMF(alpha=3.0, weight="heat")).get_params()["weight"] == "heat"
    X = rng.random((20, 6))
    model = GNMF(max_iter=1).fit(X)
    np.testing.assert_array_equal(model.graph_.toarray(), dense_knn(X, 5, "binary"))


# GNMF on the kNN graph; SemiGNMF on the label graph (heat weights) built from partial labels.
@pytest.mark.parametrize(
    "cls, n, m, k, n_labelled, alpha, weight",
    [(GNMF, 14, 8, 3, 0, 2.5, "binary"), (SemiGNMF, 16, 6, 2, 7, 4.0, "heat")],
    ids=["gnmf", "semignmf_with_the_label_graph"],
)
def test_one_step_follows_cais_equations(cls, n, m, k, n_labelled, alpha, weight, rng):
    X = rng.random((n, m))  # n samples, m features
    y = random_partial_labels(rng, n, 2, n_labelled) if n_labelled else None
    init = initial_factors(rng, m, n, k)
    model = cls(n_components=k, max_iter=1, init=init, alpha=alpha, n_neighbors=3, weight=weight,
                normalize_init=False, **FIXED).fit(X, y)
    Xp, U, V = X.T, init["U"], init["V"]
    W = dense_knn(X, 3, weight)
    if y is not None:
        W = dense_label_graph(W, y)
    D = np.diag(W.sum(axis=1))
    V1 = V * (Xp.T @ U + alpha * W @ V) / (V @ U.T @ U + alpha * D @ V)
    U1 = U * (Xp @ V1) / (U @ V1.T @ V1)
    np.testing.assert_allclose(model.factors_["V"], V1, rtol=1e-12)
    np.testing.assert_allclose(model.factors_["U"], U1, rtol=1e-12)
    expected = np.linalg.norm(Xp - U1 @ V1.T) ** 2 + alpha * np.trace(V1.T @ (D - W) @ V1)
    assert model.objective_history_[0] == pytest.approx(expected, rel=1e-12)


def test_gnmf_with_alpha_zero_is_nmf(rng):
    X = rng.random((20, 9))
    init = initial_factors(rng, 9, 20, 4)
    ours = GNMF(n_components=4, max_iter=60, init=init, alpha=0.0, normalize_init=False, **FIXED).fit(X)
    nmf = NMF(n_components=4, max_iter=60, init=init, **FIXED).fit(X)
    assert_same_fit(ours, nmf)


def test_normalize_init_is_cais_normalizeuv_then_the_same_rules(rng):
    X = rng.random((15, 6))
    init = initial_factors(rng, 6, 15, 3)
    norms = np.linalg.norm(init["U"], axis=0)
    scaled = {"U": init["U"] / norms, "V": init["V"] * norms}
    ours = GNMF(n_components=3, max_iter=25, init=init, alpha=3.0, normalize_init=True, **FIXED).fit(X)
    ref = GNMF(n_components=3, max_iter=25, init=scaled, alpha=3.0, normalize_init=False, **FIXED).fit(X)
    for name in ("U", "V"):
        np.testing.assert_allclose(ours.factors_[name], ref.factors_[name], rtol=1e-10)
    raw = GNMF(n_components=3, max_iter=25, init=init, alpha=3.0, normalize_init=False, **FIXED).fit(X)
    assert np.abs(raw.embedding_ - ours.embedding_).max() > 1e-3  # the initial scale matters for GNMF
    # alpha = 0: exactly NMF from the normalized init, and NMF's representation from the raw init
    zero = GNMF(n_components=3, max_iter=25, init=init, alpha=0.0, normalize_init=True, **FIXED).fit(X)
    nmf_scaled = NMF(n_components=3, max_iter=25, init=scaled, **FIXED).fit(X)
    np.testing.assert_allclose(zero.factors_["V"], nmf_scaled.factors_["V"], rtol=1e-10)
    nmf_raw = NMF(n_components=3, max_iter=25, init=init, **FIXED).fit(X)
    np.testing.assert_allclose(zero.embedding_, nmf_raw.embedding_, rtol=1e-8)
    # a zero column of U is left alone, no division by zero
    init["U"][:, 1] = 0.0
    model = GNMF(n_components=3, max_iter=5, init=init, normalize_init=True, **FIXED).fit(X)
    assert np.all(np.isfinite(model.embedding_))


@pytest.mark.filterwarnings(AT_THE_CAP)  # ten iterations of both compared
def test_gnmf_with_alpha_differs_from_nmf(rng):
    X = rng.random((20, 9))
    init = initial_factors(rng, 9, 20, 4)
    ours = GNMF(n_components=4, max_iter=10, init=init, alpha=10.0).fit(X)
    nmf = NMF(n_components=4, max_iter=10, init=init).fit(X)
    assert np.abs(ours.factors_["V"] - nmf.factors_["V"]).max() > 1e-3


def test_semignmf_without_labels_is_gnmf(rng):
    X = rng.random((18, 7))
    init = initial_factors(rng, 7, 18, 3)
    gnmf = GNMF(n_components=3, max_iter=30, init=init, alpha=5.0).fit(X)
    for y in (None, np.full(18, -1)):
        semi = SemiGNMF(n_components=3, max_iter=30, init=init, alpha=5.0).fit(X, y)
        for name in ("U", "V"):
            np.testing.assert_allclose(semi.factors_[name], gnmf.factors_[name], rtol=1e-10)
        np.testing.assert_allclose(semi.objective_history_, gnmf.objective_history_, rtol=1e-10)
    labelled = SemiGNMF(n_components=3, max_iter=30, init=init, alpha=5.0).fit(X, random_partial_labels(rng, 18, 2, 8))
    assert abs(labelled.graph_ - gnmf.graph_).max() > 0


# -- SemiGNMF's label block through per-class sums ------------------------------------------------------------
@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-12), (np.float32, 1e-4)])
def test_semignmf_rules_are_those_of_the_explicit_label_graph(dtype, rtol, rng):
    m, n, k, s = 7, 30, 3, 4
    X = rng.random((m, n)).astype(dtype)
    W = knn_graph(X.T, 4, "heat")
    y = random_partial_labels(rng, n, 3, 16)
    block = SameClassBlock(y)
    explicit = gnmf_rules(X, label_graph(W, y), 20.0)
    by_sums = gnmf_rules(X, block.outside(W), 20.0, block)
    start = {"U": rng.random((s, m, k)).astype(dtype), "V": rng.random((s, n, k)).astype(dtype)}
    factors = [{name: value.copy() for name, value in start.items()} for _ in range(2)]
    for _ in range(5):
        for (update, objective), fac in zip((explicit, by_sums), factors):
            update(fac)
            fac["objective"] = objective(fac)
        for name in ("U", "V", "objective"):
            np.testing.assert_allclose(factors[1][name], factors[0][name], rtol=rtol)


def test_semignmf_objective_never_increases_with_a_large_label_block(rng):
    check_objective_never_increases(SemiGNMF, {"alpha": 100.0}, rng, n_labelled=20)
    check_objective_never_increases(SemiGNMF, {"alpha": 1000.0, "weight": "heat", "normalize_init": False}, rng,
                                    n_labelled=25)


@pytest.mark.filterwarnings(AT_THE_CAP)  # three iterations: the graphs are checked
def test_semignmf_keeps_the_knn_graph_and_writes_the_label_graph_out_on_demand(rng):
    X = rng.random((20, 6))
    y = random_partial_labels(rng, 20, 3, 9)
    model = SemiGNMF(n_components=2, max_iter=3, n_neighbors=3).fit(X, y)
    np.testing.assert_array_equal(model.knn_graph_.toarray(), dense_knn(X, 3, "binary"))
    np.testing.assert_array_equal(model.graph_.toarray(), dense_label_graph(dense_knn(X, 3, "binary"), y))


@pytest.mark.filterwarnings(AT_THE_CAP)  # three iterations: the memory is traced
def test_semignmf_never_builds_the_label_block():
    n, m = 5000, 10
    rng = np.random.default_rng(0)
    X = rng.random((n, m))
    y = rng.integers(0, 5, n)  # every sample labelled: about n^2 / 5 = 5 million label edges
    model, peak = traced_peak(lambda: SemiGNMF(n_components=4, max_iter=3, random_state=0).fit(X, y))
    assert peak < n * n * 8 / 10, peak
    assert np.all(np.isfinite(model.embedding_))


# -- stacks of starts -------------------------------------------------------------------------------
STACKED = [(GNMF, {"alpha": 10.0}, 0), (SemiGNMF, {"alpha": 10.0, "weight": "heat"}, 60)]


@pytest.mark.parametrize("cls, params, n_labelled", STACKED, ids=["gnmf", "semignmf"])
def test_starts_advanced_together_equal_each_start_alone(cls, params, n_labelled, rng):
    check_starts_together_equal_each_alone(cls, params, rng, n_labelled)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"alpha": -1.0}, "alpha=-1.0"),
        ({"alpha": "big"}, "alpha='big'"),
        ({"n_neighbors": 0}, "n_neighbors=0"),
        ({"n_neighbors": 2.5}, "n_neighbors=2.5"),
        ({"weight": "gauss"}, "weight='gauss'"),
        ({"t": 0.0}, "t=0.0"),
        ({"t": -2}, "t=-2"),
        ({"n_components": 0}, "n_components=0"),
        ({"normalize_init": "yes"}, "normalize_init='yes'"),
    ],
)
@pytest.mark.parametrize("cls", [GNMF, SemiGNMF])
def test_bad_parameters_name_themselves(cls, params, match, rng):
    with pytest.raises(ConfigError, match=match):
        cls(**params).fit(rng.random((8, 4)))


def test_semignmf_writes_a_small_label_block_and_sums_a_large_one_with_the_same_fit(rng, monkeypatch):
    """The papers' blocks are written into the graph (their products round as they always have); above
    EXPLICIT_LABEL_EDGES the block is applied through per-class sums: the same fit to rounding."""
    import src.methods.gnmf as gnmf_module

    X = rng.random((40, 12))
    y = np.full(40, -1)
    y[:12] = np.repeat([0, 1, 2], 4)
    fits = {}
    for limit in (10**6, 0):  # written out (12 edges), then summed
        monkeypatch.setattr(gnmf_module, "EXPLICIT_LABEL_EDGES", limit)
        model = gnmf_module.SemiGNMF(3, stopping="fixed", n_starts=1, max_iter=50, random_state=0)
        fits[limit] = model.fit_transform(X, y)
    assert np.allclose(fits[0], fits[10**6], rtol=1e-10, atol=1e-12)

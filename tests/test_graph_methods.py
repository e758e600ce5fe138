"""Tests of the kNN graphs, GNMF, SemiGNMF and the normalized-cut weighted NMF."""

import logging
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from src.errors import ConfigError
from src.methods.gnmf import GNMF, SemiGNMF
from src.methods.knn_graph import degree, knn_graph, label_graph, laplacian
from src.methods.nmf import NMF
from src.methods.nmf_ncw import NMFNCW, ncw_weights

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
def dense_knn(X_rows, k, weight="binary"):
    """The graph of constructW (KNN mode) with dense matrices: n x n, for tiny n only."""
    n = X_rows.shape[0]
    diff = X_rows[:, None, :] - X_rows[None, :, :]
    d2 = (diff**2).sum(axis=-1)
    if weight == "cosine":
        Xn = X_rows / np.linalg.norm(X_rows, axis=1, keepdims=True)
        C = Xn @ Xn.T
        score = -C.copy()
    else:
        score = d2.copy()
    np.fill_diagonal(score, np.inf)
    neighbours = np.argsort(score, axis=1)[:, :k]
    A = np.zeros((n, n))
    A[np.arange(n)[:, None], neighbours] = 1.0
    A = np.maximum(A, A.T)
    if weight == "binary":
        return A
    if weight == "cosine":
        return A * C
    s = np.sqrt(d2).mean()  # Cai: t = mean(mean(EuDist2(fea))), kernel exp(-d^2 / (2 t^2))
    return A * np.exp(-d2 / (2 * s**2))


def dense_label_graph(W, y):
    W = W.copy()
    n = len(y)
    for i in range(n):
        for j in range(n):
            if i != j and y[i] >= 0 and y[j] >= 0:
                W[i, j] = 1.0 if y[i] == y[j] else 0.0
    return W


# -- the graph ------------------------------------------------------------------------------------
@pytest.mark.parametrize("weight", ["binary", "heat", "cosine"])
def test_graph_is_symmetric_sparse_without_self_loops(weight, rng):
    X = rng.random((40, 6))
    W = knn_graph(X, n_neighbors=5, weight=weight)
    assert sp.issparse(W) and W.format == "csr" and W.shape == (40, 40)
    assert abs(W - W.T).max() == 0
    assert np.all(W.diagonal() == 0)
    assert np.all(np.diff(W.indptr) >= 5)  # every row keeps at least its own k neighbours
    assert W.data.min() > 0
    if weight == "binary":
        assert np.all(W.data == 1.0)
    else:
        assert W.data.max() <= 1.0


@pytest.mark.parametrize("weight", ["binary", "heat", "cosine"])
def test_graph_equals_constructW_written_densely(weight, rng):
    X = rng.random((30, 7))
    np.testing.assert_allclose(knn_graph(X, 4, weight).toarray(), dense_knn(X, 4, weight), rtol=1e-12, atol=0)


def test_heat_kernel_with_given_t_and_default_t(rng):
    X = rng.random((20, 5))
    A = dense_knn(X, 3, "binary")
    d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=-1)
    np.testing.assert_allclose(knn_graph(X, 3, "heat", t=0.7).toarray(), A * np.exp(-d2 / 0.7), rtol=1e-12)
    # identical samples: Cai's default t would be 0; the fallback t = 1 gives weights 1
    W = knn_graph(np.ones((6, 3)), 2, "heat")
    assert np.all(np.isfinite(W.data)) and np.all(W.data == 1.0)


def test_n_neighbors_above_n_is_clipped_with_a_warning(rng, caplog):
    X = rng.random((6, 3))
    with caplog.at_level(logging.WARNING):
        W = knn_graph(X, n_neighbors=20)
    assert "n_neighbors=20" in caplog.text
    np.testing.assert_array_equal(W.toarray(), 1.0 - np.eye(6))  # complete graph, no self loops


def test_duplicated_and_zero_samples_give_a_valid_graph(rng):
    X = rng.random((12, 4))
    X[3] = X[5]
    X[7] = 0.0
    for weight in ("binary", "heat", "cosine"):
        W = knn_graph(X, 3, weight)
        assert np.all(np.isfinite(W.data)) and abs(W - W.T).max() == 0 and np.all(W.diagonal() == 0)
    assert knn_graph(X, 3, "binary")[3, 5] == 1.0  # a duplicate is a neighbour (distance 0), not dropped


def test_graph_construction_never_builds_a_dense_n_by_n_array():
    n, m = 5000, 10
    X = np.random.default_rng(0).random((n, m))
    for weight in ("binary", "heat", "cosine"):
        tracemalloc.start()
        try:
            W = knn_graph(X, 5, weight)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < n * n * 8 / 10, (weight, peak)
        assert W.nnz <= 2 * 5 * n


def test_label_graph_overwrites_only_the_labelled_block(rng):
    X = rng.random((25, 5))
    W = knn_graph(X, 4)
    y = partial_labels(rng, 25, 3, 12)
    W_before = W.copy()
    G = label_graph(W, y)
    assert sp.issparse(G)
    expected = dense_label_graph(W.toarray(), y)
    np.testing.assert_array_equal(G.toarray(), expected)
    np.testing.assert_array_equal(W.toarray(), W_before.toarray())  # input not modified
    labelled = np.flatnonzero(y >= 0)
    unlabelled = np.flatnonzero(y < 0)
    same = y[labelled][:, None] == y[labelled][None, :]
    block = G.toarray()[np.ix_(labelled, labelled)]
    assert np.all(block[same & ~np.eye(len(labelled), dtype=bool)] == 1)
    assert np.all(block[~same] == 0)
    assert np.all(np.diag(block) == 0)
    np.testing.assert_array_equal(G.toarray()[unlabelled], W.toarray()[unlabelled])
    np.testing.assert_array_equal(G.toarray()[:, unlabelled], W.toarray()[:, unlabelled])
    assert abs(G - G.T).max() == 0


def test_label_graph_without_labels_is_the_identity(rng):
    W = knn_graph(rng.random((10, 3)), 3)
    np.testing.assert_array_equal(label_graph(W, np.full(10, -1)).toarray(), W.toarray())
    with pytest.raises(ConfigError, match=r"y must have shape \(10,\)"):
        label_graph(W, np.zeros(9, dtype=int))


def test_laplacian(rng):
    W = knn_graph(rng.random((15, 4)), 3, "heat")
    D, L = degree(W), laplacian(W)
    assert sp.issparse(L)
    np.testing.assert_allclose(D, W.toarray().sum(axis=1), rtol=1e-14)
    np.testing.assert_allclose(L.toarray(), np.diag(D) - W.toarray(), rtol=1e-14)
    np.testing.assert_allclose(L @ np.ones(15), 0, atol=1e-13)


# -- GNMF and SemiGNMF ----------------------------------------------------------------------------
def test_defaults_are_cais(rng):
    params = GNMF().get_params()
    assert params["alpha"] == 100 and params["n_neighbors"] == 5 and params["weight"] == "binary"
    assert params["t"] is None and params["normalize_init"] is False
    assert clone(SemiGNMF(alpha=3.0, weight="heat")).get_params()["weight"] == "heat"
    X = rng.random((20, 6))
    model = GNMF(max_iter=1).fit(X)
    np.testing.assert_array_equal(model.graph_.toarray(), dense_knn(X, 5, "binary"))


def test_one_gnmf_step_follows_cais_equations(rng):
    X = rng.random((14, 8))  # 14 samples, 8 features
    init = initial_factors(rng, 8, 14, 3)
    alpha = 2.5
    model = GNMF(n_components=3, max_iter=1, init=init, alpha=alpha, n_neighbors=3).fit(X)
    Xp, U, V = X.T, init["U"], init["V"]
    W = dense_knn(X, 3)
    D = np.diag(W.sum(axis=1))
    V1 = V * (Xp.T @ U + alpha * W @ V) / (V @ U.T @ U + alpha * D @ V)
    U1 = U * (Xp @ V1) / (U @ V1.T @ V1)
    np.testing.assert_allclose(model.factors_["V"], V1, rtol=1e-12)
    np.testing.assert_allclose(model.factors_["U"], U1, rtol=1e-12)
    expected = np.linalg.norm(Xp - U1 @ V1.T) ** 2 + alpha * np.trace(V1.T @ (D - W) @ V1)
    assert model.objective_history_[0] == pytest.approx(expected, rel=1e-12)


def test_one_semignmf_step_follows_the_equations_with_the_label_graph(rng):
    X = rng.random((16, 6))
    y = partial_labels(rng, 16, 2, 7)
    init = initial_factors(rng, 6, 16, 2)
    alpha = 4.0
    model = SemiGNMF(n_components=2, max_iter=1, init=init, alpha=alpha, n_neighbors=3, weight="heat").fit(X, y)
    Xp, U, V = X.T, init["U"], init["V"]
    W = dense_label_graph(dense_knn(X, 3, "heat"), y)
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
    ours = GNMF(n_components=4, max_iter=60, init=init, alpha=0.0).fit(X)
    nmf = NMF(n_components=4, max_iter=60, init=init).fit(X)
    for name in ("U", "V"):
        np.testing.assert_allclose(ours.factors_[name], nmf.factors_[name], rtol=1e-10)
    np.testing.assert_allclose(ours.objective_history_, nmf.objective_history_, rtol=1e-10)
    np.testing.assert_allclose(ours.embedding_, nmf.embedding_, rtol=1e-10)


def test_normalize_init_is_cais_normalizeuv_then_the_same_rules(rng):
    X = rng.random((15, 6))
    init = initial_factors(rng, 6, 15, 3)
    norms = np.linalg.norm(init["U"], axis=0)
    scaled = {"U": init["U"] / norms, "V": init["V"] * norms}
    ours = GNMF(n_components=3, max_iter=25, init=init, alpha=3.0, normalize_init=True).fit(X)
    ref = GNMF(n_components=3, max_iter=25, init=scaled, alpha=3.0).fit(X)
    for name in ("U", "V"):
        np.testing.assert_allclose(ours.factors_[name], ref.factors_[name], rtol=1e-10)
    raw = GNMF(n_components=3, max_iter=25, init=init, alpha=3.0).fit(X)
    assert np.abs(raw.embedding_ - ours.embedding_).max() > 1e-3  # the initial scale matters for GNMF
    # alpha = 0: exactly NMF from the normalized init, and NMF's representation from the raw init
    zero = GNMF(n_components=3, max_iter=25, init=init, alpha=0.0, normalize_init=True).fit(X)
    nmf_scaled = NMF(n_components=3, max_iter=25, init=scaled).fit(X)
    np.testing.assert_allclose(zero.factors_["V"], nmf_scaled.factors_["V"], rtol=1e-10)
    nmf_raw = NMF(n_components=3, max_iter=25, init=init).fit(X)
    np.testing.assert_allclose(zero.embedding_, nmf_raw.embedding_, rtol=1e-8)
    # a zero column of U is left alone, no division by zero
    init["U"][:, 1] = 0.0
    model = GNMF(n_components=3, max_iter=5, init=init, normalize_init=True).fit(X)
    assert np.all(np.isfinite(model.embedding_))


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
    labelled = SemiGNMF(n_components=3, max_iter=30, init=init, alpha=5.0).fit(X, partial_labels(rng, 18, 2, 8))
    assert abs(labelled.graph_ - gnmf.graph_).max() > 0


# -- NMF with normalized-cut weighting -----------------------------------------------------------
def test_ncw_weights_are_d_to_the_minus_half(rng):
    X = rng.random((7, 11))  # papers' orientation: 7 features x 11 samples
    X[:, 4] = 0.0  # an all-zero sample gets weight 0, not inf
    d = X.T @ X @ np.ones(11)
    expected = np.where(d > 0, 1 / np.sqrt(np.where(d > 0, d, 1)), 0.0)
    np.testing.assert_allclose(ncw_weights(X), expected, rtol=1e-14)
    assert ncw_weights(X)[4] == 0


def test_ncw_weights_never_form_the_gram_matrix():
    n, m = 5000, 10
    X = np.random.default_rng(0).random((m, n))
    tracemalloc.start()
    try:
        ncw_weights(X)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < n * n * 8 / 100


def test_nmf_ncw_is_nmf_on_the_weighted_data(rng):
    X = rng.random((15, 8))
    init = initial_factors(rng, 8, 15, 3)
    ours = NMFNCW(n_components=3, max_iter=40, init=init).fit(X)
    weights = 1 / np.sqrt(X @ X.T @ np.ones(15))  # per sample (row here)
    nmf = NMF(n_components=3, max_iter=40, init=init).fit(X * weights[:, None])
    for name in ("U", "V"):
        np.testing.assert_allclose(ours.factors_[name], nmf.factors_[name], rtol=1e-10)
    np.testing.assert_allclose(ours.objective_history_, nmf.objective_history_, rtol=1e-10)
    np.testing.assert_allclose(ours.sample_weights_, weights, rtol=1e-12)
    # Xu et al.'s normalization: U's columns to unit length, V scaled so that U V^T is unchanged
    U = ours.factors_["U"]
    np.testing.assert_allclose(ours.embedding_, ours.factors_["V"] * np.linalg.norm(U, axis=0), rtol=1e-12)
    np.testing.assert_allclose((U / np.linalg.norm(U, axis=0)) @ ours.embedding_.T, U @ ours.factors_["V"].T)


def test_one_nmf_ncw_step_by_hand(rng):
    X = rng.random((9, 6))
    init = initial_factors(rng, 6, 9, 2)
    model = NMFNCW(n_components=2, max_iter=1, init=init).fit(X)
    Xp = X.T
    D = np.diag(Xp.T @ Xp @ np.ones(9))  # D = diag(X^T X 1)
    Xw = Xp @ np.diag(np.diag(D) ** -0.5)  # X D^{-1/2}
    U, V = init["U"], init["V"]
    V1 = V * (Xw.T @ U) / (V @ U.T @ U)
    U1 = U * (Xw @ V1) / (U @ V1.T @ V1)
    np.testing.assert_allclose(model.factors_["V"], V1, rtol=1e-12)
    np.testing.assert_allclose(model.factors_["U"], U1, rtol=1e-12)
    assert model.objective_history_[0] == pytest.approx(np.linalg.norm(Xw - U1 @ V1.T) ** 2, rel=1e-12)


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


def test_bad_graph_arguments_name_themselves(rng):
    X = rng.random((8, 3))
    with pytest.raises(ConfigError, match="weight='dot'"):
        knn_graph(X, weight="dot")
    with pytest.raises(ConfigError, match="n_neighbors=-1"):
        knn_graph(X, n_neighbors=-1)
    with pytest.raises(ConfigError, match=r"t=nan"):
        knn_graph(X, weight="heat", t=float("nan"))
    with pytest.raises(ConfigError, match="negative"):
        NMFNCW().fit(-X)

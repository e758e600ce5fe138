"""Tests of FNMF (Babaee et al. 2014, src.methods.fnmf): the complement graph, the paper's factor, the objective."""

import numpy as np
import pytest

from src.methods.fnmf import (
    FNMF,
    PAPER_BETA,
    complement_degree,
    complement_product,
    complement_traces,
    fnmf_rules,
    paper_factor,
)
from src.methods.graph.knn import knn_graph
from src.methods.nmf import NMF

from helpers import (AT_THE_CAP, FIXED, assert_same_fit, check_float32_fit, check_starts_together_equal_each_alone,
                     initial_factors, traced_peak)


def nmf_step(X, U, V):
    """One Lee-Seung sweep (V then U), X in the papers' orientation (m x n)."""
    V = V * (X.T @ U) / (V @ (U.T @ U))
    U = U * (X @ V) / (U @ (V.T @ V))
    return U, V


# -- FNMF: the implemented objective ---------------------------------------------------------------
def fnmf_dense_step(Xp, U, V, W, gamma):
    n = V.shape[0]
    G = np.ones((n, n)) - np.eye(n) - W
    D_G = np.diag(G.sum(axis=1))
    L_G = D_G - G
    N = np.diag(np.sum(U**2, axis=0))
    V1 = V * (Xp.T @ U + gamma * D_G @ V @ N) / (V @ U.T @ U + gamma * G @ V @ N)
    t = np.diag(V1.T @ L_G @ V1)
    U1 = U * (Xp @ V1 + gamma * U @ np.diag(t)) / (U @ V1.T @ V1)
    V_tilde = V1 * np.linalg.norm(U1, axis=0)
    objective = np.linalg.norm(Xp - U1 @ V1.T) ** 2 - gamma * np.trace(V_tilde.T @ L_G @ V_tilde)
    return U1, V1, objective


# -- FNMF: the complement graph ---------------------------------------------------------------------
def test_complement_graph_products_equal_the_dense_complement(rng):
    X = rng.random((30, 5))
    W = knn_graph(X, 4)
    G = np.ones((30, 30)) - np.eye(30) - W.toarray()
    assert G.min() == 0 and G.max() == 1
    B = rng.random((30, 3))
    np.testing.assert_allclose(complement_product(W, B), G @ B, rtol=1e-12)
    np.testing.assert_allclose(complement_degree(W), G.sum(axis=1), rtol=1e-14)
    L_G = np.diag(G.sum(axis=1)) - G
    np.testing.assert_allclose(complement_traces(W, B), np.diag(B.T @ L_G @ B), rtol=1e-10)
    pairwise = 0.5 * sum(G[i, j] * (B[i] - B[j]) ** 2 for i in range(30) for j in range(30))
    np.testing.assert_allclose(complement_traces(W, B), pairwise, rtol=1e-10)


@pytest.mark.filterwarnings(AT_THE_CAP)  # three iterations: the memory is traced
def test_fnmf_never_builds_an_n_by_n_array():
    # tracemalloc also counts what other threads allocate meanwhile (the tests' background work: about 10 MB
    # seen), so n is large enough that one n x n array, even of booleans (100 MB), stands far above the rest
    n, m = 10000, 10
    X = np.random.default_rng(0).random((n, m))
    model, peak = traced_peak(lambda: FNMF(n_components=4, max_iter=3, random_state=0).fit(X))
    assert peak < n * n * 8 / 10, peak
    assert np.all(np.isfinite(model.embedding_))


# -- FNMF: the paper's factor underflows -----------------------------------------------------------
def test_paper_factor_underflows_and_fnmf_is_then_nmf(rng):
    """Eqs. 13-14 as printed (beta = 200) on ORL-like data: the factor is 0 and FNMF is NMF bit for bit."""
    n, m, k = 100, 1024, 10  # ten 10-image classes of 32 x 32 images, unit-norm samples
    X_rows = rng.random((n, m))
    X_rows /= np.linalg.norm(X_rows, axis=1, keepdims=True)
    X = X_rows.T
    W = knn_graph(X_rows, 5)
    D_G = complement_degree(W)[:, None]
    # the threshold: beta T above ~745 is exp underflow to exactly 0.0
    assert np.exp(-745.2) == 0.0 and 745.2 / PAPER_BETA < 3.73

    for normalize in (True, False):
        init = initial_factors(rng, m, n, k)
        U, V = init["U"].copy(), init["V"].copy()
        if normalize:  # Cai's NormalizeUV: U's columns unit length, V scaled to keep U V^T
            norms = np.linalg.norm(U, axis=0)
            U, V = U / norms, V * norms
        U_nmf, V_nmf = U.copy(), V.copy()
        factors, traces = [], []
        for _ in range(200):
            factor, T = paper_factor(V, W)
            factors.append(factor)
            traces.append(T)
            numerator = X.T @ U + factor * D_G * V
            V = V * numerator / (V @ (U.T @ U) + factor * complement_product(W, V))  # eq. 14
            U = U * (X @ V) / (U @ (V.T @ V))  # eq. 13
            U_nmf, V_nmf = nmf_step(X, U_nmf, V_nmf)
        if normalize:
            assert min(traces) > 100  # measured: ~223
            assert max(factors) == 0.0
        else:  # NMF shrinks V (long random columns of U); T falls to ~0.6, the factor stays < 1e-50
            assert min(traces) > 0.3
            assert max(factors) < 1e-50
        np.testing.assert_array_equal(V, V_nmf)
        np.testing.assert_array_equal(U, U_nmf)
    assert traces[0] > 0.05 * n * n * k / 12  # Cai's random init: T ~ n^2 k / 12 (here ~7,000)


def test_one_fnmf_step_by_hand(rng):
    X = rng.random((16, 7))
    init = initial_factors(rng, 7, 16, 3)
    farness = 0.2
    model = FNMF(n_components=3, max_iter=1, init=init, farness=farness, n_neighbors=3, **FIXED).fit(X)
    W = knn_graph(X, 3).toarray()
    np.testing.assert_array_equal(model.graph_.toarray(), W)
    U1, V1, objective = fnmf_dense_step(X.T, init["U"], init["V"], W, farness / 16)
    np.testing.assert_allclose(model.factors_["V"], V1, rtol=1e-10)
    np.testing.assert_allclose(model.factors_["U"], U1, rtol=1e-10)
    assert model.objective_history_[0] == pytest.approx(objective, rel=1e-10)


def test_fnmf_v_update_is_eq_14_with_a_constant_factor_when_u_has_unit_columns(rng):
    X = rng.random((16, 7))
    Xp = X.T
    U = rng.random((7, 3))
    U /= np.linalg.norm(U, axis=0)
    V = rng.random((16, 3))
    W = knn_graph(X, 3)
    gamma = 0.05
    update, _ = fnmf_rules(Xp, W, gamma)
    factors = {"U": U[None].copy(), "V": V[None].copy()}  # a stack of one start
    update(factors)
    G = np.ones((16, 16)) - np.eye(16) - W.toarray()
    L = np.diag(G.sum(axis=1)) - G
    L_plus, L_minus = np.maximum(L, 0), np.maximum(-L, 0)  # the paper's split: L^+ = D_G, L^- = G
    np.testing.assert_array_equal(L_plus, np.diag(G.sum(axis=1)))
    V1 = V * (Xp.T @ U + gamma * L_plus @ V) / (V @ U.T @ U + gamma * L_minus @ V)  # eq. 14, factor gamma
    np.testing.assert_allclose(factors["V"][0], V1, rtol=1e-10)


@pytest.mark.filterwarnings(AT_THE_CAP)  # the same 60 iterations of both compared, not converged fits
def test_fnmf_with_farness_zero_is_nmf(rng):
    X = rng.random((20, 9))
    init = initial_factors(rng, 9, 20, 4)
    ours = FNMF(n_components=4, max_iter=60, init=init, farness=0.0).fit(X)
    nmf = NMF(n_components=4, max_iter=60, init=init).fit(X)
    assert_same_fit(ours, nmf)
    acting = FNMF(n_components=4, max_iter=60, init=init).fit(X)  # the default farness acts
    assert np.abs(acting.embedding_ - nmf.embedding_).max() > 1e-3 * np.abs(nmf.embedding_).max()


@pytest.mark.parametrize("farness", [0.01, 0.3, 0.9, 0.99])
def test_fnmf_objective_never_increases_and_is_bounded_below(farness, rng):
    X = rng.random((30, 12))
    model = FNMF(n_components=5, max_iter=300, farness=farness, random_state=2).fit(X)
    h = model.objective_history_
    assert np.all(np.diff(h) <= 1e-9 * abs(h[0]))
    bound = -farness / (1 - farness) * np.sum(X**2)
    assert h[-1] >= bound
    for factor in model.factors_.values():
        assert np.all(factor >= 0) and np.all(np.isfinite(factor))


@pytest.mark.filterwarnings(AT_THE_CAP)  # the same 40 iterations of each compared
def test_fnmf_is_invariant_to_the_scale_split_and_dimensionless(rng):
    X = rng.random((18, 8))
    init = initial_factors(rng, 8, 18, 3)
    S = np.array([0.1, 3.0, 17.0])
    split = {"U": init["U"] / S, "V": init["V"] * S}
    a = FNMF(n_components=3, max_iter=40, init=init, farness=0.3).fit(X)
    b = FNMF(n_components=3, max_iter=40, init=split, farness=0.3).fit(X)
    np.testing.assert_allclose(b.embedding_, a.embedding_, rtol=1e-8)
    np.testing.assert_allclose(b.objective_history_, a.objective_history_, rtol=1e-8)
    c = 250.0  # X in 0..255 instead of 0..1: the factors scale by sqrt(c), the objective by c^2
    scaled = {name: value * np.sqrt(c) for name, value in init.items()}
    d = FNMF(n_components=3, max_iter=40, init=scaled, farness=0.3).fit(c * X)
    np.testing.assert_allclose(d.factors_["V"], np.sqrt(c) * a.factors_["V"], rtol=1e-8)
    np.testing.assert_allclose(d.objective_history_, c**2 * a.objective_history_, rtol=1e-8)


@pytest.mark.filterwarnings(AT_THE_CAP)  # 100 iterations of both compared
def test_fnmf_pushes_far_samples_apart(rng):
    X = rng.random((40, 10))
    init = initial_factors(rng, 10, 40, 4)
    nmf = FNMF(n_components=4, max_iter=100, init=init, farness=0.0).fit(X)
    far = FNMF(n_components=4, max_iter=100, init=init, farness=0.3).fit(X)
    W = far.graph_

    def spread(model):  # farness of the normalized representation relative to its size
        E = model.embedding_
        return complement_traces(W, E).sum() / np.sum(E**2)

    assert spread(far) > spread(nmf)


def test_starts_advanced_together_equal_each_start_alone(rng):
    check_starts_together_equal_each_alone(FNMF, {"farness": 0.3}, rng)


def test_float32_keeps_its_precision_and_the_objective_decreasing(rng):
    check_float32_fit(FNMF, {"farness": 0.3}, rng)

"""Tests of PCGNMF (He et al. 2015, objective inferred; src.methods.pcgnmf): the pairwise constraints, the rules."""

import numpy as np
import pytest

from src.methods.gnmf import GNMF
from src.methods.graph.knn import knn_graph
from src.methods.pcgnmf import PCGNMF, PairwiseConstraints, pcgnmf_rules

from helpers import (AT_THE_CAP, FIXED, assert_same_fit, check_starts_together_equal_each_alone,
                     initial_factors, random_partial_labels, traced_peak)


# -- PCGNMF ----------------------------------------------------------------------------------------
def dense_pairs(y):
    n = len(y)
    M, C = np.zeros((n, n)), np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i != j and y[i] >= 0 and y[j] >= 0:
                if y[i] == y[j]:
                    M[i, j] = 1.0
                else:
                    C[i, j] = 1.0
    return M, C


# -- properties shared by the three methods ---------------------------------------------------------


def test_pairwise_constraints_equal_the_dense_must_and_cannot_link_matrices(rng):
    y = random_partial_labels(rng, 20, 3, 11)
    pairs = PairwiseConstraints(y)
    M, C = dense_pairs(y)
    M_ours, C_ours = pairs.dense()
    np.testing.assert_array_equal(M_ours, M)
    np.testing.assert_array_equal(C_ours, C)
    V = rng.random((20, 4))
    np.testing.assert_allclose(pairs.must(V), M @ V, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(pairs.cannot(V), C @ V, rtol=1e-12, atol=1e-15)
    assert pairs.n_labelled == 11 and pairs.n_must == M.sum() / 2 and pairs.n_cannot == C.sum() / 2
    none = PairwiseConstraints(np.full(20, -1))
    assert np.all(none.must(V) == 0) and np.all(none.cannot(V) == 0)


@pytest.mark.parametrize("steps", [1, 2])
def test_pcgnmf_steps_are_the_appendix_formula(rng, steps):
    """One step, and a second that starts from the V the objective was just evaluated on and takes its M V and
    C V from it: a stale or wrong hand-over would move the second step off the formula."""
    X = rng.random((18, 7))
    y = random_partial_labels(rng, 18, 3, 9)
    init = initial_factors(rng, 7, 18, 4)
    alpha, beta = 3.0, 5.0
    model = PCGNMF(n_components=4, max_iter=steps, init=init, alpha=alpha, beta=beta, n_neighbors=3,
                   normalize_init=False, **FIXED).fit(X, y)
    Xp, U, V = X.T, init["U"], init["V"]
    W = knn_graph(X, 3).toarray()
    D = np.diag(W.sum(axis=1))
    M, C = dense_pairs(y)
    A = np.ones((4, 4)) - np.eye(4)
    for _ in range(steps):
        V = V * (Xp.T @ U + alpha * W @ V) / (V @ U.T @ U + alpha * D @ V + beta / 2 * (M @ V @ A + C @ V))
        U = U * (Xp @ V) / (U @ V.T @ V)
    np.testing.assert_allclose(model.factors_["V"], V, rtol=1e-10)
    np.testing.assert_allclose(model.factors_["U"], U, rtol=1e-10)
    J = (
        np.linalg.norm(Xp - U @ V.T) ** 2
        + alpha * np.trace(V.T @ (D - W) @ V)
        + beta / 2 * (np.trace(V.T @ M @ V @ A) + np.trace(V.T @ C @ V))
    )
    assert model.objective_history_[-1] == pytest.approx(J, rel=1e-10)


def test_pcgnmf_objective_gradient_is_the_appendix_eq_21(rng):
    X = rng.random((6, 10))  # papers' orientation: 6 features x 10 samples
    y = np.array([0, 0, 1, -1, 1, 2, -1, 0, 2, -1])
    alpha, beta = 2.0, 3.0
    W = knn_graph(X.T, 3)
    _, objective = pcgnmf_rules(X, W, alpha, beta, y)
    U, V = rng.random((6, 3)), rng.random((10, 3))
    Wd = W.toarray()
    D = np.diag(Wd.sum(axis=1))
    M, C = dense_pairs(y)
    A = np.ones((3, 3)) - np.eye(3)
    grad = -2 * X.T @ U + 2 * V @ U.T @ U + 2 * alpha * D @ V - 2 * alpha * Wd @ V + beta * (M @ V @ A + C @ V)
    h = 1e-6
    numeric = np.zeros_like(V)
    for a in range(10):
        for b in range(3):
            E = np.zeros_like(V)
            E[a, b] = h
            plus, minus = objective({"U": U[None], "V": (V + E)[None]}), objective({"U": U[None], "V": (V - E)[None]})
            numeric[a, b] = (plus[0] - minus[0]) / (2 * h)
    np.testing.assert_allclose(numeric, grad, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("normalize_init", [False, True])
@pytest.mark.filterwarnings(AT_THE_CAP)  # the same 50 iterations of each compared, not converged fits
def test_pcgnmf_with_beta_zero_or_without_labels_is_gnmf(normalize_init, rng):
    X = rng.random((20, 9))
    y = random_partial_labels(rng, 20, 3, 10)
    init = initial_factors(rng, 9, 20, 4)
    common = dict(n_components=4, max_iter=50, init=init, alpha=4.0, n_neighbors=4, normalize_init=normalize_init)
    gnmf = GNMF(**common).fit(X)
    for beta, labels in ((0.0, y), (50.0, None), (50.0, np.full(20, -1))):
        ours = PCGNMF(beta=beta, **common).fit(X, labels)
        assert_same_fit(ours, gnmf)
    acting = PCGNMF(beta=50.0, **common).fit(X, y)
    assert np.abs(acting.factors_["V"] - gnmf.factors_["V"]).max() > 1e-3


@pytest.mark.filterwarnings(AT_THE_CAP)  # 150 iterations of both compared
def test_pcgnmf_pulls_must_links_together(rng):
    X = rng.random((30, 10))
    y = random_partial_labels(rng, 30, 3, 15)
    init = initial_factors(rng, 10, 30, 3)
    M, C = dense_pairs(y)

    def cross_loading(model):  # normalized Tr(V^T C V) + Tr(V^T M V A)
        E = model.embedding_ / np.linalg.norm(model.embedding_, axis=1, keepdims=True)
        A = np.ones((3, 3)) - np.eye(3)
        return np.trace(E.T @ C @ E) + np.trace(E.T @ M @ E @ A)

    off = PCGNMF(n_components=3, max_iter=150, init=init, alpha=1.0, beta=0.0).fit(X, y)
    on = PCGNMF(n_components=3, max_iter=150, init=init, alpha=1.0, beta=100.0).fit(X, y)
    assert cross_loading(on) < 0.5 * cross_loading(off)


@pytest.mark.filterwarnings(AT_THE_CAP)  # three iterations: the memory is traced
def test_pcgnmf_never_builds_an_l_by_l_array():
    n, m = 5000, 10
    rng = np.random.default_rng(0)
    X = rng.random((n, m))
    y = rng.integers(0, 5, n)  # every sample labelled: l = n
    model, peak = traced_peak(lambda: PCGNMF(n_components=4, max_iter=3, random_state=0).fit(X, y))
    assert peak < n * n * 8 / 10, peak
    assert np.all(np.isfinite(model.embedding_))


def test_starts_advanced_together_equal_each_start_alone(rng):
    check_starts_together_equal_each_alone(PCGNMF, {"alpha": 10.0, "beta": 50.0}, rng, n_labelled=60)
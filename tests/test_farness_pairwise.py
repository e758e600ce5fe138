"""Tests of NPNMF (Gu & Zhou 2009), FNMF (Babaee et al. 2014) and PCGNMF (He et al. 2015, inferred)."""

import tracemalloc

import numpy as np
import pytest
from sklearn.base import clone

from src.errors import ConfigError
from src.methods.fnmf import (
    FNMF,
    PAPER_BETA,
    complement_degree,
    complement_product,
    complement_traces,
    fnmf_rules,
    paper_factor,
)
from src.methods.gnmf import GNMF
from src.methods.knn_graph import knn_graph
from src.methods.nmf import NMF
from src.methods.npnmf import NPNMF, lle_weights, split_regularizer
from src.methods.pcgnmf import PCGNMF, PairwiseConstraints, pcgnmf_rules

METHODS = {"npnmf": NPNMF, "fnmf": FNMF, "pcgnmf": PCGNMF}


def initial_factors(rng, m, n, k):
    return {"U": rng.random((m, k)), "V": rng.random((n, k))}


def partial_labels(rng, n, n_classes, n_labelled):
    """Labels in 0..n_classes-1 for n_labelled random samples, -1 elsewhere."""
    y = np.full(n, -1)
    chosen = rng.choice(n, n_labelled, replace=False)
    y[chosen] = rng.integers(0, n_classes, n_labelled)
    return y


def nmf_step(X, U, V):
    """One Lee-Seung sweep (V then U), X in the papers' orientation (m x n)."""
    V = V * (X.T @ U) / (V @ (U.T @ U))
    U = U * (X @ V) / (U @ (V.T @ V))
    return U, V


# -- NPNMF ------------------------------------------------------------------------------------------
def dense_lle_weights(X_rows, k, reg):
    """LLE weights written out sample by sample (Roweis & Saul), dense n x n."""
    n = X_rows.shape[0]
    d2 = ((X_rows[:, None, :] - X_rows[None, :, :]) ** 2).sum(axis=-1)
    np.fill_diagonal(d2, np.inf)
    M = np.zeros((n, n))
    for i in range(n):
        nbrs = np.argsort(d2[i], kind="stable")[:k]
        Z = X_rows[nbrs] - X_rows[i]
        C = Z @ Z.T
        tr = np.trace(C)
        C = C + (reg * tr if tr > 0 else reg) * np.eye(k)
        w = np.linalg.solve(C, np.ones(k))
        M[i, nbrs] = w / w.sum()
    return M


def test_lle_weights_follow_roweis_and_saul(rng):
    X = rng.random((25, 4))
    M = lle_weights(X, n_neighbors=6, reg=1e-3)
    np.testing.assert_allclose(M.toarray(), dense_lle_weights(X, 6, 1e-3), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.asarray(M.sum(axis=1)).ravel(), 1.0, rtol=1e-12)
    assert np.all(M.diagonal() == 0) and np.all(np.diff(M.indptr) == 6)
    assert M.data.min() < 0  # n_neighbors > m: LLE weights have mixed signs
    # a sample that is the midpoint of its two neighbours is reconstructed by weights 1/2, 1/2
    line = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [10.0, 10.0]])
    row = lle_weights(line, n_neighbors=2, reg=1e-12).toarray()[1]
    np.testing.assert_allclose(row, [0.5, 0.0, 0.5, 0.0], atol=1e-9)


def test_lle_weights_of_duplicated_and_zero_samples_are_finite(rng):
    X = rng.random((12, 3))
    X[4] = X[7] = X[9] = X[2]  # a sample whose neighbours all coincide with it: tr(C) = 0
    X[5] = 0.0
    M = lle_weights(X, n_neighbors=3)
    assert np.all(np.isfinite(M.data))
    np.testing.assert_allclose(np.asarray(M.sum(axis=1)).ravel(), 1.0, rtol=1e-12)


def test_split_regularizer_is_the_positive_and_negative_part(rng):
    M = lle_weights(rng.random((15, 3)), n_neighbors=5)
    L_plus, L_minus = split_regularizer(M)
    R = np.eye(15) - M.toarray()
    L = R.T @ R
    np.testing.assert_allclose((L_plus - L_minus).toarray(), L, rtol=1e-12, atol=1e-14)
    assert L_plus.data.min() > 0 and L_minus.data.min() > 0
    assert L_plus.multiply(L_minus).nnz == 0  # disjoint supports
    assert abs(L_plus - L_plus.T).max() == 0 and abs(L_minus - L_minus.T).max() == 0
    np.testing.assert_allclose(L_plus.diagonal(), np.diag(L), rtol=1e-12)  # the diagonal is positive


def test_one_npnmf_step_by_hand(rng):
    X = rng.random((14, 6))
    init = initial_factors(rng, 6, 14, 3)
    mu = 7.0
    model = NPNMF(n_components=3, max_iter=1, init=init, mu=mu, n_neighbors=4).fit(X)
    Xp, U, V = X.T, init["U"], init["V"]
    M = dense_lle_weights(X, 4, 1e-3)
    R = np.eye(14) - M
    L = R.T @ R
    Lp, Lm = np.maximum(L, 0), np.maximum(-L, 0)
    V1 = V * (Xp.T @ U + mu * Lm @ V) / (V @ U.T @ U + mu * Lp @ V)
    U1 = U * (Xp @ V1) / (U @ V1.T @ V1)
    np.testing.assert_allclose(model.factors_["V"], V1, rtol=1e-9)
    np.testing.assert_allclose(model.factors_["U"], U1, rtol=1e-9)
    expected = np.linalg.norm(Xp - U1 @ V1.T) ** 2 + mu * np.trace(V1.T @ L @ V1)
    assert model.objective_history_[0] == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("normalize_init", [False, True])
def test_npnmf_with_mu_zero_is_nmf(normalize_init, rng):
    X = rng.random((20, 9))
    init = initial_factors(rng, 9, 20, 4)
    ours = NPNMF(n_components=4, max_iter=60, init=init, mu=0.0, normalize_init=normalize_init).fit(X)
    start = init
    if normalize_init:
        norms = np.linalg.norm(init["U"], axis=0)
        start = {"U": init["U"] / norms, "V": init["V"] * norms}
    nmf = NMF(n_components=4, max_iter=60, init=start).fit(X)
    for name in ("U", "V"):
        np.testing.assert_allclose(ours.factors_[name], nmf.factors_[name], rtol=1e-10)
    np.testing.assert_allclose(ours.objective_history_, nmf.objective_history_, rtol=1e-10)
    different = NPNMF(n_components=4, max_iter=10, init=init, mu=10.0).fit(X)
    assert np.abs(different.factors_["V"] - nmf.factors_["V"]).max() > 1e-3


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


def test_fnmf_never_builds_an_n_by_n_array():
    n, m = 5000, 10
    X = np.random.default_rng(0).random((n, m))
    tracemalloc.start()
    try:
        model = FNMF(n_components=4, max_iter=3, random_state=0).fit(X)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
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


def test_one_fnmf_step_by_hand(rng):
    X = rng.random((16, 7))
    init = initial_factors(rng, 7, 16, 3)
    farness = 0.2
    model = FNMF(n_components=3, max_iter=1, init=init, farness=farness, n_neighbors=3).fit(X)
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
    factors = {"U": U.copy(), "V": V.copy()}
    update(factors)
    G = np.ones((16, 16)) - np.eye(16) - W.toarray()
    L = np.diag(G.sum(axis=1)) - G
    L_plus, L_minus = np.maximum(L, 0), np.maximum(-L, 0)  # the paper's split: L^+ = D_G, L^- = G
    np.testing.assert_array_equal(L_plus, np.diag(G.sum(axis=1)))
    V1 = V * (Xp.T @ U + gamma * L_plus @ V) / (V @ U.T @ U + gamma * L_minus @ V)  # eq. 14, factor gamma
    np.testing.assert_allclose(factors["V"], V1, rtol=1e-10)


def test_fnmf_with_farness_zero_is_nmf(rng):
    X = rng.random((20, 9))
    init = initial_factors(rng, 9, 20, 4)
    ours = FNMF(n_components=4, max_iter=60, init=init, farness=0.0).fit(X)
    nmf = NMF(n_components=4, max_iter=60, init=init).fit(X)
    for name in ("U", "V"):
        np.testing.assert_allclose(ours.factors_[name], nmf.factors_[name], rtol=1e-10)
    np.testing.assert_allclose(ours.objective_history_, nmf.objective_history_, rtol=1e-10)
    np.testing.assert_allclose(ours.embedding_, nmf.embedding_, rtol=1e-10)
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


def test_pairwise_constraints_equal_the_dense_must_and_cannot_link_matrices(rng):
    y = partial_labels(rng, 20, 3, 11)
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


def test_one_pcgnmf_step_is_the_appendix_formula(rng):
    X = rng.random((18, 7))
    y = partial_labels(rng, 18, 3, 9)
    init = initial_factors(rng, 7, 18, 4)
    alpha, beta = 3.0, 5.0
    model = PCGNMF(n_components=4, max_iter=1, init=init, alpha=alpha, beta=beta, n_neighbors=3).fit(X, y)
    Xp, U, V = X.T, init["U"], init["V"]
    W = knn_graph(X, 3).toarray()
    D = np.diag(W.sum(axis=1))
    M, C = dense_pairs(y)
    A = np.ones((4, 4)) - np.eye(4)
    V1 = V * (Xp.T @ U + alpha * W @ V) / (V @ U.T @ U + alpha * D @ V + beta / 2 * (M @ V @ A + C @ V))
    U1 = U * (Xp @ V1) / (U @ V1.T @ V1)
    np.testing.assert_allclose(model.factors_["V"], V1, rtol=1e-10)
    np.testing.assert_allclose(model.factors_["U"], U1, rtol=1e-10)
    J = (
        np.linalg.norm(Xp - U1 @ V1.T) ** 2
        + alpha * np.trace(V1.T @ (D - W) @ V1)
        + beta / 2 * (np.trace(V1.T @ M @ V1 @ A) + np.trace(V1.T @ C @ V1))
    )
    assert model.objective_history_[0] == pytest.approx(J, rel=1e-10)


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
            numeric[a, b] = (objective({"U": U, "V": V + E}) - objective({"U": U, "V": V - E})) / (2 * h)
    np.testing.assert_allclose(numeric, grad, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("normalize_init", [False, True])
def test_pcgnmf_with_beta_zero_or_without_labels_is_gnmf(normalize_init, rng):
    X = rng.random((20, 9))
    y = partial_labels(rng, 20, 3, 10)
    init = initial_factors(rng, 9, 20, 4)
    common = dict(n_components=4, max_iter=50, init=init, alpha=4.0, n_neighbors=4, normalize_init=normalize_init)
    gnmf = GNMF(**common).fit(X)
    for beta, labels in ((0.0, y), (50.0, None), (50.0, np.full(20, -1))):
        ours = PCGNMF(beta=beta, **common).fit(X, labels)
        for name in ("U", "V"):
            np.testing.assert_allclose(ours.factors_[name], gnmf.factors_[name], rtol=1e-10)
        np.testing.assert_allclose(ours.objective_history_, gnmf.objective_history_, rtol=1e-10)
        np.testing.assert_allclose(ours.embedding_, gnmf.embedding_, rtol=1e-10)
    acting = PCGNMF(beta=50.0, **common).fit(X, y)
    assert np.abs(acting.factors_["V"] - gnmf.factors_["V"]).max() > 1e-3


def test_pcgnmf_pulls_must_links_together(rng):
    X = rng.random((30, 10))
    y = partial_labels(rng, 30, 3, 15)
    init = initial_factors(rng, 10, 30, 3)
    M, C = dense_pairs(y)

    def cross_loading(model):  # normalized Tr(V^T C V) + Tr(V^T M V A)
        E = model.embedding_ / np.linalg.norm(model.embedding_, axis=1, keepdims=True)
        A = np.ones((3, 3)) - np.eye(3)
        return np.trace(E.T @ C @ E) + np.trace(E.T @ M @ E @ A)

    off = PCGNMF(n_components=3, max_iter=150, init=init, alpha=1.0, beta=0.0).fit(X, y)
    on = PCGNMF(n_components=3, max_iter=150, init=init, alpha=1.0, beta=100.0).fit(X, y)
    assert cross_loading(on) < 0.5 * cross_loading(off)


def test_pcgnmf_never_builds_an_l_by_l_array():
    n, m = 5000, 10
    rng = np.random.default_rng(0)
    X = rng.random((n, m))
    y = rng.integers(0, 5, n)  # every sample labelled: l = n
    tracemalloc.start()
    try:
        model = PCGNMF(n_components=4, max_iter=3, random_state=0).fit(X, y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < n * n * 8 / 10, peak
    assert np.all(np.isfinite(model.embedding_))


# -- properties shared by the three methods ---------------------------------------------------------
CONFIGS = [
    ("npnmf", {}),
    ("npnmf", {"mu": 1e4, "n_neighbors": 8}),
    ("npnmf", {"mu": 1.0, "normalize_init": True}),
    ("fnmf", {}),
    ("fnmf", {"farness": 0.5}),
    ("pcgnmf", {}),
    ("pcgnmf", {"beta": 1e4, "alpha": 1.0}),
    ("pcgnmf", {"weight": "heat", "normalize_init": True}),
]


@pytest.mark.parametrize("name, params", CONFIGS)
def test_objective_never_increases_and_factors_stay_nonnegative(name, params, rng):
    X = rng.random((25, 15))
    y = partial_labels(rng, 25, 3, 10)
    model = METHODS[name](n_components=4, max_iter=200, random_state=0, **params).fit(X, y)
    h = model.objective_history_
    assert len(h) == 200
    assert np.all(np.diff(h) <= 1e-9 * abs(h[0]))
    assert h[-1] < h[0]
    for factor in model.factors_.values():
        assert np.all(factor >= 0) and np.all(np.isfinite(factor))


@pytest.mark.parametrize("name, params", CONFIGS)
def test_degenerate_input_stays_finite(name, params, rng):
    X = rng.random((10, 8))
    X[3] = 0.0  # an all-zero sample
    X[:, 5] = 0.0  # an all-zero feature
    X[7] = X[2]  # duplicated samples
    y = np.array([0, -1, 1, -1, 0, -1, -1, 1, -1, 0])
    model = METHODS[name](n_components=12, max_iter=300, random_state=1, **params).fit(X, y)  # rank > data rank
    assert np.all(np.isfinite(model.embedding_)) and np.all(np.isfinite(model.objective_history_))
    for factor in model.factors_.values():
        assert np.all(factor >= 0) and np.all(np.isfinite(factor))


@pytest.mark.parametrize("name", METHODS)
def test_same_seed_same_result_init_untouched_and_clone(name, rng):
    X = rng.random((12, 6))
    a = METHODS[name](n_components=3, max_iter=20, random_state=7).fit_transform(X)
    b = METHODS[name](n_components=3, max_iter=20, random_state=7).fit_transform(X)
    np.testing.assert_array_equal(a, b)
    init = initial_factors(rng, 6, 12, 3)
    kept = {key: value.copy() for key, value in init.items()}
    METHODS[name](n_components=3, max_iter=5, init=init).fit(X)
    for key in init:
        np.testing.assert_array_equal(init[key], kept[key])
    params = clone(METHODS[name](n_components=3)).get_params()
    assert params["n_components"] == 3


def test_defaults():
    assert NPNMF().get_params()["mu"] == 100 and NPNMF().get_params()["n_neighbors"] == 5
    assert FNMF().get_params()["farness"] == 0.01 and FNMF().get_params()["n_neighbors"] == 5
    params = PCGNMF().get_params()
    assert params["alpha"] == 100 and params["beta"] == 100 and params["n_neighbors"] == 5
    assert params["weight"] == "binary" and params["normalize_init"] is False


@pytest.mark.parametrize(
    "cls, params, match",
    [
        (NPNMF, {"mu": -1.0}, "mu=-1.0"),
        (NPNMF, {"mu": "big"}, "mu='big'"),
        (NPNMF, {"n_neighbors": 0}, "n_neighbors=0"),
        (NPNMF, {"reg": 0.0}, "reg=0.0"),
        (NPNMF, {"normalize_init": "yes"}, "normalize_init='yes'"),
        (FNMF, {"farness": -0.1}, "farness=-0.1"),
        (FNMF, {"farness": 1.0}, "farness=1.0"),
        (FNMF, {"farness": float("nan")}, "farness=nan"),
        (FNMF, {"n_neighbors": 2.5}, "n_neighbors=2.5"),
        (FNMF, {"n_components": 0}, "n_components=0"),
        (PCGNMF, {"beta": -2.0}, "beta=-2.0"),
        (PCGNMF, {"beta": None}, "beta=None"),
        (PCGNMF, {"alpha": -1.0}, "alpha=-1.0"),
        (PCGNMF, {"weight": "gauss"}, "weight='gauss'"),
    ],
)
def test_bad_parameters_name_themselves(cls, params, match, rng):
    with pytest.raises(ConfigError, match=match):
        cls(**params).fit(rng.random((8, 4)))

"""Tests of NPNMF (Gu & Zhou 2009, src.methods.npnmf): the LLE weights, the split regularizer, one step by hand."""

import numpy as np
import pytest

from src.methods.nmf import NMF
from src.methods.npnmf import NPNMF, lle_weights, split_regularizer

from helpers import AT_THE_CAP, FIXED, check_starts_together_equal_each_alone, initial_factors


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


# -- properties shared by the three methods ---------------------------------------------------------


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
    model = NPNMF(n_components=3, max_iter=1, init=init, mu=mu, n_neighbors=4, normalize_init=False, **FIXED).fit(X)
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
@pytest.mark.filterwarnings(AT_THE_CAP)  # the same 60 (and 10) iterations of both compared, not converged fits
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


def test_starts_advanced_together_equal_each_start_alone(rng):
    check_starts_together_equal_each_alone(NPNMF, {"mu": 10.0}, rng)
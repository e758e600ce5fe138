"""Tests of SparseNMF (src.methods.sparse_nmf): one step by hand, Hoyer's objective."""

import numpy as np
import pytest

from src.methods.nmf import NMF
from src.methods.sparse_nmf import SparseNMF

from helpers import AT_THE_CAP, FIXED, assert_same_fit, random_init


# -- SparseNMF ----------------------------------------------------------------------------------------------
def test_one_sparse_nmf_step_follows_the_rules(rng):
    X = rng.random((9, 6))
    init = random_init(SparseNMF, rng, 6, 9, 3)
    beta = 0.4
    model = SparseNMF(n_components=3, max_iter=1, init=init, beta=beta, **FIXED).fit(X)
    Xp, U, V = X.T, init["U"], init["V"]
    norms = np.sqrt(np.sum(U**2, axis=0))
    V1 = V * (Xp.T @ U) / (V @ U.T @ U + beta / 2 * np.ones((9, 1)) @ norms[None, :])
    U1 = U * (Xp @ V1) / (U @ V1.T @ V1 + beta / 2 * U @ np.diag(V1.sum(axis=0) / norms))
    np.testing.assert_allclose(model.factors_["V"], V1, rtol=1e-12)
    np.testing.assert_allclose(model.factors_["U"], U1, rtol=1e-12)
    expected = np.linalg.norm(Xp - U1 @ V1.T) ** 2 + beta * np.sum(V1 * np.sqrt(np.sum(U1**2, axis=0)))
    assert model.objective_history_[0] == pytest.approx(expected, rel=1e-12)


@pytest.mark.filterwarnings(AT_THE_CAP)  # the same 100 iterations of both compared, not converged fits
def test_sparse_nmf_with_beta_zero_is_nmf(rng):
    X = rng.random((14, 8))
    init = random_init(SparseNMF, rng, 8, 14, 3)
    a = SparseNMF(n_components=3, max_iter=100, init=init, beta=0.0).fit(X)
    b = NMF(n_components=3, max_iter=100, init=init).fit(X)
    assert_same_fit(a, b)


@pytest.mark.filterwarnings(AT_THE_CAP)  # the same 50 iterations of both compared
def test_sparse_nmf_is_scale_free_and_its_objective_is_the_unit_basis_one(rng):
    """(U D, V D^-1) is the same point: same history and normalized factors; the objective is Hoyer's
    ||X - U_bar V_bar^T||^2 + beta sum V_bar at the unit-norm basis U_bar and V_bar = embedding_."""
    X = rng.random((14, 8))
    init = random_init(SparseNMF, rng, 8, 14, 3)
    D = np.array([0.05, 2.0, 30.0])
    a = SparseNMF(n_components=3, max_iter=50, init=init, beta=0.5).fit(X)
    b = SparseNMF(n_components=3, max_iter=50, init={"U": init["U"] * D, "V": init["V"] / D}, beta=0.5).fit(X)
    np.testing.assert_allclose(a.objective_history_, b.objective_history_, rtol=1e-8)
    np.testing.assert_allclose(a.embedding_, b.embedding_, rtol=1e-8)
    np.testing.assert_allclose(a.components_, b.components_, rtol=1e-8)
    U_bar, V_bar = a.components_.T, a.embedding_
    np.testing.assert_allclose(np.linalg.norm(U_bar, axis=0), 1.0)
    hoyer = np.linalg.norm(X.T - U_bar @ V_bar.T) ** 2 + 0.5 * V_bar.sum()
    assert a.objective_history_[-1] == pytest.approx(hoyer, rel=1e-10)


def test_sparse_nmf_penalty_sparsifies_the_coefficients(rng):
    X = rng.random((30, 10))
    init = random_init(SparseNMF, rng, 10, 30, 4)

    def zero_fraction(beta):
        V_bar = SparseNMF(n_components=4, max_iter=300, init=init, beta=beta).fit_transform(X)
        return np.mean(V_bar < 1e-3 * V_bar.max())

    assert zero_fraction(0.0) < zero_fraction(1.0)

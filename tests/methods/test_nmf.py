"""NMF and NMF-KL (src.methods.nmf, .nmf_kl) against Lee and Seung's rules and scikit-learn's solver "mu".

The properties every method shares are in test_properties.py; these are the two plain factorizations the
others reduce to, checked step by step with dense matrices and over 50 steps against an independent solver.
"""

import numpy as np
import pytest
from sklearn.decomposition import NMF as SklearnNMF

from src import methods

from helpers import FIXED

SKLEARN_LOSS = {"nmf": "frobenius", "nmf_kl": "kullback-leibler"}


def start(rng, m, n, k):
    return {"U": rng.random((m, k)), "V": rng.random((n, k))}


@pytest.mark.parametrize("name", SKLEARN_LOSS)
def test_fifty_steps_reach_the_factors_of_sklearns_multiplicative_solver(name, rng):
    X = rng.random((30, 20))  # 30 samples, 20 features; sklearn's W (30 x 4) is our V, its H (4 x 20) our U^T
    init = start(rng, 20, 30, 4)
    ours = methods.make(name, n_components=4, max_iter=50, init=init, **FIXED).fit(X)
    reference = SklearnNMF(n_components=4, solver="mu", beta_loss=SKLEARN_LOSS[name], init="custom", max_iter=50,
                           tol=0)
    W = reference.fit_transform(X, W=init["V"].copy(), H=init["U"].T.copy())  # tol=0: scikit-learn does not warn
    V, U = ours.factors_["V"], ours.factors_["U"]
    assert np.abs(V - W).max() / np.abs(W).max() < 1e-6
    assert np.abs(U - reference.components_.T).max() / np.abs(U).max() < 1e-6


@pytest.mark.parametrize("name", SKLEARN_LOSS)
def test_reconstruction_err_and_inverse_transform_are_sklearns(name, rng):
    """After the same 50 steps from the same start: scikit-learn's reconstruction_err_ (the Frobenius norm, or
    sqrt(2 D) for KL) and its inverse_transform of its representation (W H), from ours of our representation."""
    X = rng.random((30, 20))
    init = start(rng, 20, 30, 4)
    ours = methods.make(name, n_components=4, max_iter=50, init=init, **FIXED).fit(X)
    reference = SklearnNMF(n_components=4, solver="mu", beta_loss=SKLEARN_LOSS[name], init="custom", max_iter=50,
                           tol=0)
    W = reference.fit_transform(X, W=init["V"].copy(), H=init["U"].T.copy())
    assert ours.reconstruction_err_ == pytest.approx(reference.reconstruction_err_, rel=1e-6)
    X_hat = ours.inverse_transform(ours.embedding_)
    assert np.abs(X_hat - reference.inverse_transform(W)).max() / X.max() < 1e-6
    U, V = ours.factors_["U"], ours.factors_["V"]
    if name == "nmf":
        assert ours.reconstruction_err_ == pytest.approx(np.linalg.norm(X - V @ U.T), rel=1e-12)  # ||X - U V^T||_F
        assert ours.reconstruction_err_**2 == pytest.approx(ours.objective_history_[-1], rel=1e-9)
    # components_ are U's unit-norm columns, embedding_ V scaled inversely: their product is V U^T
    np.testing.assert_allclose(np.linalg.norm(ours.components_, axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(ours.components_.T * np.linalg.norm(U, axis=0), U, rtol=1e-12)
    np.testing.assert_allclose(X_hat, V @ U.T, rtol=1e-12)


def test_one_frobenius_step_is_lee_and_seungs_v_then_u(rng):
    X_rows = rng.random((9, 7))
    init = start(rng, 7, 9, 3)
    model = methods.make("nmf", n_components=3, max_iter=1, init=init, **FIXED).fit(X_rows)
    X, U, V = X_rows.T, init["U"], init["V"]
    V1 = V * (X.T @ U) / (V @ U.T @ U)
    U1 = U * (X @ V1) / (U @ V1.T @ V1)
    np.testing.assert_allclose(model.factors_["V"], V1, rtol=1e-12)
    np.testing.assert_allclose(model.factors_["U"], U1, rtol=1e-12)
    assert model.objective_history_[0] == pytest.approx(np.linalg.norm(X - U1 @ V1.T) ** 2, rel=1e-12)


def test_one_kl_step_is_lee_and_seungs_v_then_u(rng):
    X_rows = rng.random((9, 7))
    init = start(rng, 7, 9, 3)
    model = methods.make("nmf_kl", n_components=3, max_iter=1, init=init, **FIXED).fit(X_rows)
    X, U, V = X_rows.T, init["U"], init["V"]
    V1 = V * ((X / (U @ V.T)).T @ U) / U.sum(axis=0)
    U1 = U * ((X / (U @ V1.T)) @ V1) / V1.sum(axis=0)
    np.testing.assert_allclose(model.factors_["V"], V1, rtol=1e-12)
    np.testing.assert_allclose(model.factors_["U"], U1, rtol=1e-12)
    Y = U1 @ V1.T
    assert model.objective_history_[0] == pytest.approx((X * np.log(X / Y) - X + Y).sum(), rel=1e-12)

"""Tests of NLCF (src.methods.nlcf): one step by hand, the objective."""

import numpy as np
import pytest

from src.methods.nlcf import NLCF
from src.methods.nmf import NMF

from helpers import AT_THE_CAP, FIXED, assert_same_fit, check_float32_fit, random_init


# -- NLCF ---------------------------------------------------------------------------------------------------
def nlcf_objective(Xp, U, V, mu):
    fit = np.linalg.norm(Xp - U @ V.T) ** 2
    locality = sum(
        V[i, k] * np.linalg.norm(U[:, k] - Xp[:, i]) ** 2 for i in range(Xp.shape[1]) for k in range(U.shape[1])
    )
    return fit + mu * locality


def test_one_nlcf_step_follows_the_rules(rng):
    X = rng.random((9, 6))
    init = random_init(NLCF, rng, 6, 9, 3)
    mu = 0.7
    model = NLCF(n_components=3, max_iter=1, init=init, mu=mu, **FIXED).fit(X)
    Xp, U, V = X.T, init["U"], init["V"]
    n, k = V.shape
    A = np.tile(np.sum(Xp**2, axis=0)[:, None], (1, k))  # ||x_i||^2
    C = np.tile(np.sum(U**2, axis=0)[None, :], (n, 1))  # ||u_k||^2
    V1 = V * (2 * (1 + mu) * Xp.T @ U) / (2 * V @ U.T @ U + mu * (A + C))
    S1 = sum(np.outer(Xp[:, i], V1[i]) for i in range(n))  # sum_i x_i v_i^T = X V
    S2 = sum(U @ np.diag(V1[i]) for i in range(n))  # sum_i U diag(v_i)
    U1 = U * (Xp @ V1 + mu * S1) / (U @ V1.T @ V1 + mu * S2)
    np.testing.assert_allclose(model.factors_["V"], V1, rtol=1e-12)
    np.testing.assert_allclose(model.factors_["U"], U1, rtol=1e-12)
    assert model.objective_history_[0] == pytest.approx(nlcf_objective(Xp, U1, V1, mu), rel=1e-12)


@pytest.mark.filterwarnings(AT_THE_CAP)  # the same 100 and 20 iterations of both compared, not converged fits
def test_nlcf_with_mu_zero_is_nmf(rng):
    X = rng.random((14, 8))
    init = random_init(NLCF, rng, 8, 14, 3)
    a = NLCF(n_components=3, max_iter=100, init=init, mu=0.0).fit(X)
    b = NMF(n_components=3, max_iter=100, init=init).fit(X)
    assert_same_fit(a, b)
    c = NLCF(n_components=3, max_iter=20, init=init, mu=0.3).fit(X)
    assert not np.allclose(c.factors_["V"], NMF(n_components=3, max_iter=20, init=init).fit(X).factors_["V"])


# -- starts iterated together, float32 ---------------------------------------------------------------------
def test_batched_starts_equal_single_start_fits(rng):
    """Four starts advancing in one stack give each start's objective (and the kept factors) of its own fit."""
    X = rng.random((16, 7))
    inits = [random_init(NLCF, rng, 7, 16, 3) for _ in range(4)]
    batched = NLCF(n_components=3, mu=0.7, init=inits, n_starts=4, min_iter=5, stopping="fixed", max_iter=5).fit(X)
    singles = [NLCF(n_components=3, mu=0.7, init=init, n_starts=1, stopping="fixed", max_iter=5).fit(X) for init in inits]
    np.testing.assert_allclose(batched.start_objectives_, [s.objective_history_[-1] for s in singles], rtol=1e-9)
    for name, value in singles[batched.best_start_].factors_.items():
        np.testing.assert_allclose(batched.factors_[name], value, rtol=1e-9, err_msg=name)


def test_float32_fit_stays_float32_and_descends(rng):
    check_float32_fit(NLCF, {"mu": 0.7}, rng)

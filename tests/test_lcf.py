"""Tests of LCF (Liu et al. 2014; src.methods.lcf) on tiny matrices.

The hand-written steps use the paper's orientation (X is m x n, the LCF paper's V is k x n), an explicit
kernel K = X^T X and the sums over samples written out as loops (sum_i X^T x_i 1^T D_i, sum_i K W D_i), so
that they check the implicit-kernel, collapsed-sum code against the equations as printed."""

import numpy as np
import pytest

from src.errors import ConfigError
from src.methods.concept import CF
from src.methods.lcf import LCF, lcf_rules
from src.methods.loop import Stopping, solve

from helpers import FIXED, assert_same_fit, check_float32_fit, monotone, random_init, traced_peak


# -- LCF written out by hand (paper orientation: Xp m x n, W n x k, Vp k x n) ------------------------------
def lcf_objective_eq3(Xp, W, Vp, lam):
    """Eq. 3 term by term: ||X - X W V||^2 + lambda sum_i sum_k |v_ki| ||sum_j w_jk x_j - x_i||^2."""
    fit = np.linalg.norm(Xp - Xp @ W @ Vp) ** 2
    anchors = Xp @ W
    locality = sum(
        abs(Vp[k, i]) * np.linalg.norm(anchors[:, k] - Xp[:, i]) ** 2
        for i in range(Xp.shape[1])
        for k in range(W.shape[1])
    )
    return fit + lam * locality


def locality_sums(K_left, K_right, W, Vp):
    """sum_i K_left^T x_i 1^T D_i (via K_left[:, i]) and sum_i K_right W D_i, D_i = diag(|v_i|)."""
    n, k = W.shape
    first = sum(np.outer(K_left[:, i], np.ones(k)) @ np.diag(np.abs(Vp[:, i])) for i in range(n))
    second = sum(K_right @ W @ np.diag(np.abs(Vp[:, i])) for i in range(n))
    return first, second


def lcf_step_eqs_11_12(Xp, W, Vp, lam):
    """One LCF iteration, V by eq. 12 then W by eq. 11, with K built explicitly."""
    K = Xp.T @ Xp
    k, n = Vp.shape
    A = np.tile(np.diag(K), (k, 1))  # K x N, rows a^T
    B = np.tile(np.diag(W.T @ K @ W)[:, None], (1, n))  # K x N, columns b
    Vp = Vp * (2 * (lam + 1) * (W.T @ K)) / (2 * W.T @ K @ W @ Vp + lam * A + lam * B)
    S1, S2 = locality_sums(K, K, W, Vp)
    W = W * (K @ Vp.T + lam * S1) / (K @ W @ Vp @ Vp.T + lam * S2)
    return W, Vp


def lcf_step_eqs_36_40(Xp, W, Vp, lam):
    """One general (mixed-sign) LCF iteration, V by eq. 40 then W by eq. 36 (with 4 P+ P-)."""
    K = Xp.T @ Xp
    Kp, Km = np.where(K > 0, K, 0.0), np.where(K < 0, -K, 0.0)
    k, n = Vp.shape
    A = np.tile(np.diag(K), (k, 1))
    B = np.tile(np.diag(W.T @ K @ W)[:, None], (1, n))
    c = 2 * (lam + 1) * (W.T @ K) - lam * (A + B)
    Qp, Qm = 2 * W.T @ Kp @ W @ Vp, 2 * W.T @ Km @ W @ Vp
    Vp = Vp * (c + np.sqrt(c**2 + 4 * Qp * Qm)) / (2 * Qp)
    S1, _ = locality_sums(K, K, W, Vp)
    c = K @ Vp.T + lam * S1
    _, Sp = locality_sums(K, Kp, W, Vp)
    _, Sm = locality_sums(K, Km, W, Vp)
    Pp = Kp @ W @ Vp @ Vp.T + lam * Sp
    Pm = Km @ W @ Vp @ Vp.T + lam * Sm
    W = W * (c + np.sqrt(c**2 + 4 * Pp * Pm)) / (2 * Pp)
    return W, Vp


def three_gaussians(rng, n_per=50):
    """150 points from three 2-D Gaussians around the origin (mixed-sign), as in the LCF paper's Fig. 3."""
    centers = np.array([[-2.0, 0.0], [2.0, 0.5], [0.0, -2.5]])
    return np.vstack([c + 0.5 * rng.normal(size=(n_per, 2)) for c in centers]), np.repeat(np.arange(3), n_per)


# -- NLCF ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lam", [0.3, 8.0])
def test_one_lcf_step_follows_eqs_11_and_12(lam, rng):
    X = rng.random((9, 6))  # 9 samples, 6 features
    init = random_init(LCF, rng, 6, 9, 3)
    model = LCF(n_components=3, max_iter=1, init=init, lam=lam, **FIXED).fit(X)
    assert model.kernel_ == "implicit"
    W1, Vp1 = lcf_step_eqs_11_12(X.T, init["W"], init["V"].T, lam)
    np.testing.assert_allclose(model.factors_["V"], Vp1.T, rtol=1e-12)
    np.testing.assert_allclose(model.factors_["W"], W1, rtol=1e-12)
    assert model.objective_history_[0] == pytest.approx(lcf_objective_eq3(X.T, W1, Vp1, lam), rel=1e-12)


def test_one_general_lcf_step_follows_eqs_36_and_40(rng):
    X = rng.normal(size=(9, 6))
    init = random_init(LCF, rng, 6, 9, 3)
    model = LCF(n_components=3, max_iter=1, init=init, lam=0.7, **FIXED).fit(X)
    assert model.kernel_ == "explicit"
    W1, Vp1 = lcf_step_eqs_36_40(X.T, init["W"], init["V"].T, 0.7)
    np.testing.assert_allclose(model.factors_["V"], Vp1.T, rtol=1e-12)
    np.testing.assert_allclose(model.factors_["W"], W1, rtol=1e-12)
    assert model.objective_history_[0] == pytest.approx(lcf_objective_eq3(X.T, W1, Vp1, 0.7), rel=1e-12)


def test_general_rules_on_nonnegative_data_give_eq_37_for_w_but_eq_41_not_12_for_v(rng):
    """With K- = 0, eq. 36 is eq. 11 (the paper's eq. 37) but eq. 40 is eq. 41, which is not eq. 12."""
    Xp = rng.random((6, 9))
    lam = 0.3
    W, Vp = rng.random((9, 3)), rng.random((3, 9))
    factors = {"W": W[None].copy(), "V": Vp.T[None].copy()}
    update, _ = lcf_rules(Xp, lam, "explicit")
    update(factors)
    factors = {key: value[0] for key, value in factors.items()}
    K = Xp.T @ Xp
    A = np.tile(np.diag(K), (3, 1))
    B = np.tile(np.diag(W.T @ K @ W)[:, None], (1, 9))
    V41 = Vp * np.maximum(2 * (lam + 1) * (W.T @ K) - lam * (A + B), 0) / (2 * W.T @ K @ W @ Vp)  # eq. 41
    np.testing.assert_allclose(factors["V"], V41.T, rtol=1e-10, atol=1e-300)
    W_eq11, V_eq12 = lcf_step_eqs_11_12(Xp, W, Vp, lam)
    assert not np.allclose(V41, V_eq12, rtol=1e-3)  # eq. 41 is not eq. 12
    S1, S2 = locality_sums(K, K, W, V41)
    W37 = W * (K @ V41.T + lam * S1) / np.maximum(K @ W @ V41 @ V41.T + lam * S2, 1e-10)  # eq. 37 = eq. 11
    np.testing.assert_allclose(factors["W"], W37, rtol=1e-10)


def test_implicit_kernel_equals_explicit_kernel(rng):
    """Thirty implicit-kernel iterations equal eqs. 11-12 iterated on an explicit K, and eq. 3 throughout."""
    X = rng.random((10, 7))
    init = random_init(LCF, rng, 7, 10, 4)
    model = LCF(n_components=4, max_iter=30, init=init, lam=8.0, **FIXED).fit(X)
    W, Vp = init["W"], init["V"].T
    history = []
    for _ in range(30):
        W, Vp = lcf_step_eqs_11_12(X.T, W, Vp, 8.0)
        history.append(lcf_objective_eq3(X.T, W, Vp, 8.0))
    np.testing.assert_allclose(model.factors_["W"], W, rtol=1e-10)
    np.testing.assert_allclose(model.factors_["V"], Vp.T, rtol=1e-10)
    np.testing.assert_allclose(model.objective_history_, history, rtol=1e-10)


@pytest.mark.parametrize("sign", ["nonnegative", "mixed"])
def test_lcf_with_lambda_zero_is_cf(sign, rng):
    X = rng.random((14, 8)) if sign == "nonnegative" else rng.normal(size=(14, 8))
    init = random_init(LCF, rng, 8, 14, 3)
    lcf = LCF(n_components=3, max_iter=100, init=init, lam=0.0).fit(X)
    cf = CF(n_components=3, max_iter=100, init=init).fit(X)
    assert lcf.kernel_ == cf.kernel_ == ("implicit" if sign == "nonnegative" else "explicit")
    assert_same_fit(lcf, cf, factors=("W", "V"))
    np.testing.assert_allclose(lcf.components_, cf.components_, rtol=1e-10)


def test_locality_changes_the_factorization(rng):
    """lambda > 0 is not CF: the same init gives different factors (the reduction test above can fail)."""
    X = rng.random((14, 8))
    init = random_init(LCF, rng, 8, 14, 3)
    lcf = LCF(n_components=3, max_iter=20, init=init, lam=0.3).fit(X)
    cf = CF(n_components=3, max_iter=20, init=init).fit(X)
    assert not np.allclose(lcf.factors_["V"], cf.factors_["V"], rtol=1e-3)


def test_no_n_by_n_array_with_feature_data(rng):
    n, m = 3000, 20
    X = rng.random((n, m))
    # one start: s starts iterate together in (s, n, k) stacks, s times the factors
    model, peak = traced_peak(lambda: LCF(n_components=5, max_iter=3, random_state=0, lam=8.0, n_starts=1).fit(X))
    assert model.kernel_ == "implicit"
    assert peak < n * n * 8 / 20, f"LCF peak {peak} bytes"


def test_mixed_sign_data_do_build_the_kernel(rng):
    """The memory check above can fail: the general rules build K (n x n) and it shows."""
    n = 1000
    X = rng.normal(size=(n, 5))
    _, peak = traced_peak(lambda: LCF(n_components=2, max_iter=1, random_state=0).fit(X))
    assert peak > n * n * 8


@pytest.mark.parametrize("lam", [0.0, 0.3, 8.0, 32.0])
def test_mixed_sign_three_gaussians_run_the_general_rules(lam, rng):
    X, _ = three_gaussians(rng)
    assert X.min() < 0
    model = LCF(n_components=3, max_iter=200, random_state=0, lam=lam).fit(X)
    history = model.objective_history_
    assert model.kernel_ == "explicit"
    assert np.all(np.isfinite(history)) and np.all(np.isfinite(model.embedding_))
    assert monotone(history) and history[-1] < history[0]
    for factor in model.factors_.values():
        assert np.all(factor >= 0) and np.all(np.isfinite(factor))


def test_locality_pulls_the_anchors_to_the_data(rng):
    """On the three Gaussians, a large lambda puts the anchors X w_k nearer their closest samples than CF."""
    X, _ = three_gaussians(rng)

    def anchor_gap(lam):
        model = LCF(n_components=3, max_iter=200, random_state=3, lam=lam).fit(X)
        anchors = X.T @ model.factors_["W"]  # (2 x k), unnormalized concepts
        distances = np.linalg.norm(X[:, :, None] - anchors[None, :, :], axis=1)  # (n x k)
        return distances.min(axis=0).mean()

    assert anchor_gap(32.0) < anchor_gap(0.0)


def test_nonnegative_three_gaussians_put_the_anchors_at_the_centres(rng):
    """The paper's Fig. 3 claim (its data must be nonnegative, since NMF runs on them too): with lambda = 0.3
    the three unnormalized anchors X w_k sit at the three cluster centres, while CF's (lambda = 0) do not."""
    X, _ = three_gaussians(rng)
    centres = np.array([[-2.0, 0.0], [2.0, 0.5], [0.0, -2.5]]) + 5.0
    X = X + 5.0
    assert X.min() > 0

    def worst_centre_miss(lam):
        model = LCF(n_components=3, max_iter=500, random_state=0, lam=lam).fit(X)
        anchors = (X.T @ model.factors_["W"]).T  # (k x 2)
        return np.linalg.norm(centres[:, None, :] - anchors[None, :, :], axis=2).min(axis=1).max()

    assert worst_centre_miss(0.3) < 0.3
    assert worst_centre_miss(0.0) > 10.0


def test_lcf_rules_reject_an_unknown_kernel(rng):
    with pytest.raises(ConfigError, match="kernel='dense'"):
        lcf_rules(rng.random((4, 5)), 0.3, "dense")


def test_shared_loop_drives_lcf_rules_directly(rng):
    """lcf_rules plugs into the shared loop like concept_rules (used by the estimator)."""
    Xp = rng.random((6, 9))
    factors = {"W": rng.random((9, 2)), "V": rng.random((9, 2))}
    update, objective = lcf_rules(Xp, 0.3)
    history = solve({k: v[None] for k, v in factors.items()}, update, objective, Stopping("fixed", max_iter=50)).history
    assert len(history) == 50 and monotone(history)


# -- starts iterated together, float32 ---------------------------------------------------------------------
@pytest.mark.parametrize("sign", ["nonnegative", "mixed"])
def test_batched_starts_equal_single_start_fits(sign, rng):
    """Four starts advancing in one stack give each start's objective (and the kept factors) of its own fit."""
    X = rng.random((16, 7)) if sign == "nonnegative" else rng.normal(size=(16, 7))
    inits = [random_init(LCF, rng, 7, 16, 3) for _ in range(4)]
    batched = LCF(n_components=3, lam=0.7, init=inits, n_starts=4, min_iter=5, stopping="fixed", max_iter=5).fit(X)
    singles = [LCF(n_components=3, lam=0.7, init=init, n_starts=1, stopping="fixed", max_iter=5).fit(X) for init in inits]
    assert batched.kernel_ == ("implicit" if sign == "nonnegative" else "explicit")
    np.testing.assert_allclose(batched.start_objectives_, [s.objective_history_[-1] for s in singles], rtol=1e-9)
    for name, value in singles[batched.best_start_].factors_.items():
        np.testing.assert_allclose(batched.factors_[name], value, rtol=1e-9, err_msg=name)


@pytest.mark.parametrize("mixed_sign", [False, True], ids=["nonnegative", "mixed"])
def test_float32_fit_stays_float32_and_descends(mixed_sign, rng):
    check_float32_fit(LCF, {"lam": 0.7}, rng, mixed_sign=mixed_sign)

"""Tests of LCF (Liu et al. 2014; src.methods.lcf) on tiny matrices.

The hand-written steps use the paper's orientation (X is m x n, the LCF paper's V is k x n), an explicit
kernel K = X^T X and the sums over samples written out as loops (sum_i X^T x_i 1^T D_i, sum_i K W D_i), so
that they check the implicit-kernel, collapsed-sum code against the equations as printed."""

import numpy as np
import pytest

from src.errors import ConfigError
from src.methods.concept import CF, normalize_v_columns
from src.methods.lcf import LCF, lcf_rules
from src.methods.core.loop import Handoff, Stopping, solve

from helpers import AT_THE_CAP, FIXED, assert_same_fit, check_float32_fit, monotone, random_init, traced_peak


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
    Vp = Vp * (c + np.sqrt(c**2 + 4 * Qp * Qm)) / np.maximum(2 * Qp, 1e-10)  # the code's floor: 0 stays 0
    S1, _ = locality_sums(K, K, W, Vp)
    c = K @ Vp.T + lam * S1
    _, Sp = locality_sums(K, Kp, W, Vp)
    _, Sm = locality_sums(K, Km, W, Vp)
    Pp = Kp @ W @ Vp @ Vp.T + lam * Sp
    Pm = Km @ W @ Vp @ Vp.T + lam * Sm
    W = W * (c + np.sqrt(c**2 + 4 * Pp * Pm)) / np.maximum(2 * Pp, 1e-10)
    return W, Vp


def lcf_step_eqs_11_41(Xp, W, Vp, lam):
    """One LCF iteration, V by eq. 41 (as printed, A = a 1^T rows, B = b columns) then W by eq. 11."""
    K = Xp.T @ Xp
    k, n = Vp.shape
    A = np.tile(np.diag(K), (k, 1))
    B = np.tile(np.diag(W.T @ K @ W)[:, None], (1, n))
    Vp = Vp * np.maximum(2 * (lam + 1) * (W.T @ K) - lam * (A + B), 0) / (2 * W.T @ K @ W @ Vp)
    S1, S2 = locality_sums(K, K, W, Vp)
    W = W * (K @ Vp.T + lam * S1) / (K @ W @ Vp @ Vp.T + lam * S2)
    return W, Vp


def anchored_init(rng, n, k):
    """W with columns summing to 1 (each anchor X w_k a convex combination of the samples, near the data)
    and V uniform on [0, 1): a start from which eq. 41 does not zero V at once (see the collapse test)."""
    W = rng.random((n, k))
    return {"W": W / W.sum(axis=0), "V": rng.random((n, k))}


def normalized_v(W, V):
    """Deng Cai's NormalizeUV with NormV = 1, Norm = 2, written out: V's columns to unit norm, W inversely."""
    norms = np.maximum(np.sqrt((V**2).sum(axis=0)), 1e-15)
    return W * norms, V / norms


def three_gaussians(rng, n_per=50):
    """150 points from three 2-D Gaussians around the origin (mixed-sign), as in the LCF paper's Fig. 3."""
    centers = np.array([[-2.0, 0.0], [2.0, 0.5], [0.0, -2.5]])
    return np.vstack([c + 0.5 * rng.normal(size=(n_per, 2)) for c in centers]), np.repeat(np.arange(3), n_per)


# -- NLCF ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("v_rule, lam", [("eq12", 0.3), ("eq12", 8.0), ("eq41", 0.3), ("eq41", 2.0)])
def test_one_lcf_step_follows_eq_11_and_its_v_rule(v_rule, lam, rng):
    """eq12: eqs. 11-12 from a random start; eq41: eqs. 11 and 41 from anchors inside the data (eq. 41 would
    zero V from a random start, see test_eq41_zeroes_all_of_v_from_far_anchors)."""
    X = rng.random((9, 6))  # 9 samples, 6 features
    init = random_init(LCF, rng, 6, 9, 3) if v_rule == "eq12" else anchored_init(rng, 9, 3)
    model = LCF(n_components=3, max_iter=1, init=init, lam=lam, v_rule=v_rule, **FIXED).fit(X)
    assert model.kernel_ == "implicit"
    step = {"eq12": lcf_step_eqs_11_12, "eq41": lcf_step_eqs_11_41}[v_rule]
    W1, Vp1 = step(X.T, init["W"], init["V"].T, lam)
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
@pytest.mark.filterwarnings(AT_THE_CAP)  # the same 100 iterations of both compared, not converged fits
def test_lcf_with_lambda_zero_is_cf(sign, rng):
    X = rng.random((14, 8)) if sign == "nonnegative" else rng.normal(size=(14, 8))
    init = random_init(LCF, rng, 8, 14, 3)
    lcf = LCF(n_components=3, max_iter=100, init=init, lam=0.0).fit(X)
    cf = CF(n_components=3, max_iter=100, init=init).fit(X)
    assert lcf.kernel_ == cf.kernel_ == ("implicit" if sign == "nonnegative" else "explicit")
    assert_same_fit(lcf, cf, factors=("W", "V"))
    np.testing.assert_allclose(lcf.components_, cf.components_, rtol=1e-10)


@pytest.mark.filterwarnings(AT_THE_CAP)  # the same 20 iterations of both compared
def test_locality_changes_the_factorization(rng):
    """lambda > 0 is not CF: the same init gives different factors (the reduction test above can fail)."""
    X = rng.random((14, 8))
    init = random_init(LCF, rng, 8, 14, 3)
    lcf = LCF(n_components=3, max_iter=20, init=init, lam=0.3).fit(X)
    cf = CF(n_components=3, max_iter=20, init=init).fit(X)
    assert not np.allclose(lcf.factors_["V"], cf.factors_["V"], rtol=1e-3)


@pytest.mark.filterwarnings(AT_THE_CAP)  # three iterations: the memory of the rules is traced
def test_no_n_by_n_array_with_feature_data(rng):
    n, m = 3000, 20
    X = rng.random((n, m))
    # one start: s starts iterate together in (s, n, k) stacks, s times the factors
    model, peak = traced_peak(lambda: LCF(n_components=5, max_iter=3, random_state=0, lam=8.0, n_starts=1).fit(X))
    assert model.kernel_ == "implicit"
    assert peak < n * n * 8 / 20, f"LCF peak {peak} bytes"


@pytest.mark.filterwarnings(AT_THE_CAP)  # one iteration: the memory of the rules is traced
def test_mixed_sign_data_do_build_the_kernel(rng):
    """The memory check above can fail: the general rules build K (n x n) and it shows."""
    n = 1000
    X = rng.normal(size=(n, 5))
    _, peak = traced_peak(lambda: LCF(n_components=2, max_iter=1, random_state=0).fit(X))
    assert peak > n * n * 8


@pytest.mark.parametrize("lam", [0.0, 0.3, 8.0, 32.0])
@pytest.mark.filterwarnings(AT_THE_CAP)  # 200 iterations: the rules are checked, not convergence
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


@pytest.mark.filterwarnings(AT_THE_CAP)  # 200 iterations place the anchors, converged or not
def test_locality_pulls_the_anchors_to_the_data(rng):
    """On the three Gaussians, a large lambda puts the anchors X w_k nearer their closest samples than CF."""
    X, _ = three_gaussians(rng)

    def anchor_gap(lam):
        model = LCF(n_components=3, max_iter=200, random_state=3, lam=lam).fit(X)
        anchors = X.T @ model.factors_["W"]  # (2 x k), unnormalized concepts
        distances = np.linalg.norm(X[:, :, None] - anchors[None, :, :], axis=1)  # (n x k)
        return distances.min(axis=0).mean()

    assert anchor_gap(32.0) < anchor_gap(0.0)


@pytest.mark.filterwarnings(AT_THE_CAP)  # 500 iterations place the anchors, converged or not
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


# -- v_rule="eq41": eq. 41 instead of eq. 12 on nonnegative data ------------------------------------------
def test_eq41_equals_the_general_rules_on_nonnegative_data(rng):
    """Eq. 41 on the implicit kernel is eq. 40 on an explicit K with K- = 0 (zeroed entries included)."""
    Xp = rng.random((8, 12))
    init = anchored_init(rng, 12, 3)
    runs = {}
    for kernel in ("implicit", "explicit"):
        update, objective = lcf_rules(Xp, 4.0, kernel, v_rule="eq41")
        factors = {key: value[None].copy() for key, value in init.items()}
        runs[kernel] = solve(factors, update, objective, Stopping("fixed", max_iter=60))
    assert np.any(runs["implicit"].factors["V"] == 0) and np.any(runs["implicit"].factors["V"] > 0)
    for key in init:
        np.testing.assert_allclose(runs["implicit"].factors[key], runs["explicit"].factors[key], rtol=1e-10)
    np.testing.assert_array_equal(runs["implicit"].factors["V"] == 0, runs["explicit"].factors["V"] == 0)
    np.testing.assert_allclose(runs["implicit"].history, runs["explicit"].history, rtol=1e-10)


@pytest.mark.parametrize("lam", [0.3, 2.0, 8.0])
def test_eq41_never_increases_the_objective_and_keeps_factors_nonnegative(lam, rng):
    """Sha et al.'s rule for the V subproblem (Q- = 0) and eq. 11 for W: the objective never increases."""
    X = rng.random((25, 15))
    model = LCF(n_components=4, max_iter=200, init=anchored_init(rng, 25, 4), lam=lam, v_rule="eq41",
                **FIXED).fit(X)
    history = model.objective_history_
    assert monotone(history) and history[-1] < history[0]
    V = model.factors_["V"]
    assert np.any(V > 0)  # not the collapse of the test below
    for factor in model.factors_.values():
        assert np.all(factor >= 0) and np.all(np.isfinite(factor))


@pytest.mark.filterwarnings(AT_THE_CAP)  # the same 100 iterations of each compared, not converged fits
def test_eq41_with_lambda_zero_is_eq12_and_cf(rng):
    X = rng.random((14, 8))
    init = random_init(LCF, rng, 8, 14, 3)
    eq41 = LCF(n_components=3, max_iter=100, init=init, lam=0.0, v_rule="eq41").fit(X)
    eq12 = LCF(n_components=3, max_iter=100, init=init, lam=0.0).fit(X)
    for name in ("W", "V"):
        np.testing.assert_array_equal(eq41.factors_[name], eq12.factors_[name])
    np.testing.assert_array_equal(eq41.objective_history_, eq12.objective_history_)
    assert_same_fit(eq41, CF(n_components=3, max_iter=100, init=init).fit(X), factors=("W", "V"))


@pytest.mark.parametrize("lam", [0.3, 8.0])
def test_eq41_differs_from_eq12_for_positive_lambda(lam, rng):
    """Eq. 12 keeps every v_ik > 0; eq. 41 zeroes the coefficients of samples far from an anchor."""
    X = rng.random((25, 15))
    init = anchored_init(rng, 25, 4)
    eq41 = LCF(n_components=4, max_iter=200, init=init, lam=lam, v_rule="eq41", **FIXED).fit(X)
    eq12 = LCF(n_components=4, max_iter=200, init=init, lam=lam, **FIXED).fit(X)
    assert not np.allclose(eq41.factors_["V"], eq12.factors_["V"], rtol=1e-3)
    assert np.all(eq12.factors_["V"] > 0)
    if lam == 8.0:
        assert np.mean(eq41.factors_["V"] == 0) > 0.5


@pytest.mark.parametrize("start, lam", [("uniform", 0.3), ("anchored", 32.0)])
def test_eq41_zeroes_all_of_v_from_far_anchors(start, lam, rng):
    """The other side of eq. 41's max(0, .): v_ik is zeroed for good once lambda ||X w_k - x_i||^2 >
    2 (K W)_ik. From W uniform on [0, 1) (the estimator's random start) the anchors X w_k are about n/2 times
    the mean sample, far from every sample, and with lambda = 32 even convex-combination anchors are too far
    on these data: the first update zeroes all of V, W follows, and the objective stays at ||X||_F^2 (V = 0 is
    then a KKT point of the V subproblem: no increase, and at lambda = 32 not even a worse objective than
    eq. 12's after 50 updates). Eq. 12 from the same start keeps V positive."""
    X = rng.random((25, 15))
    init = random_init(LCF, rng, 15, 25, 4) if start == "uniform" else anchored_init(rng, 25, 4)
    eq41 = LCF(n_components=4, max_iter=50, init=init, lam=lam, v_rule="eq41", **FIXED).fit(X)
    assert not np.any(eq41.factors_["V"]) and not np.any(eq41.factors_["W"])
    np.testing.assert_allclose(eq41.objective_history_, np.sum(X**2), rtol=1e-12)
    assert np.all(np.isfinite(eq41.embedding_))
    eq12 = LCF(n_components=4, max_iter=50, init=init, lam=lam, **FIXED).fit(X)
    assert np.all(eq12.factors_["V"] > 0)


@pytest.mark.filterwarnings(AT_THE_CAP)  # the same 30 iterations of each compared
def test_v_rule_does_not_change_mixed_sign_fits(rng):
    """Mixed-sign data run eq. 40 whichever v_rule (eq. 41 is its nonnegative case, eq. 12 has no such form)."""
    X = rng.normal(size=(14, 8))
    init = random_init(LCF, rng, 8, 14, 3)
    eq41 = LCF(n_components=3, max_iter=30, init=init, lam=0.7, v_rule="eq41").fit(X)
    eq12 = LCF(n_components=3, max_iter=30, init=init, lam=0.7).fit(X)
    assert eq41.kernel_ == eq12.kernel_ == "explicit"
    for name in ("W", "V"):
        np.testing.assert_array_equal(eq41.factors_[name], eq12.factors_[name])


def test_eq41_batched_starts_equal_single_start_fits(rng):
    """Four starts in one stack, over two blocks of samples in the fused passes (300 samples x 230
    features, as tests/helpers.py::check_starts_together_equal_each_alone), give each start's own fit."""
    n, m, k = 300, 230, 3
    X = rng.random((n, m))
    inits = [anchored_init(rng, n, k) for _ in range(4)]
    common = dict(n_components=k, lam=0.7, v_rule="eq41", stopping="fixed", max_iter=5)
    batched = LCF(init=inits, n_starts=4, min_iter=5, **common).fit(X)
    singles = [LCF(init=init, n_starts=1, **common).fit(X) for init in inits]
    np.testing.assert_allclose(batched.start_objectives_, [s.objective_history_[-1] for s in singles], rtol=1e-9)
    for name, value in singles[batched.best_start_].factors_.items():
        np.testing.assert_allclose(batched.factors_[name], value, rtol=1e-8, err_msg=name)
    assert np.any(batched.factors_["V"] > 0)


# -- normalize_v: Deng Cai's NormalizeUV (NormV = 1) while iterating ----------------------------------------
@pytest.mark.parametrize("sign", ["nonnegative", "mixed"])
def test_normalize_v_follows_cais_schedule(sign, rng):
    """LCCF_Multi.m normalizes every initial start (line 68), after the last update of the selection and
    after every later update (lines 122-123); the objectives are those of the normalized factors. Written
    out with explicit K: checks the schedule, the batched starts and the rescaled X W, X V handoff."""
    X = rng.random((12, 6)) if sign == "nonnegative" else rng.normal(size=(12, 6))
    step = lcf_step_eqs_11_12 if sign == "nonnegative" else lcf_step_eqs_36_40
    lam = 0.7
    inits = [random_init(LCF, rng, 6, 12, 3) for _ in range(3)]
    model = LCF(n_components=3, lam=lam, normalize_v=True, init=inits, n_starts=3, min_iter=4, stopping="fixed",
                max_iter=9).fit(X)
    starts = []
    for init in inits:
        W, V = normalized_v(init["W"], init["V"])
        for _ in range(4):  # no normalization in between
            W, Vp = step(X.T, W, V.T, lam)
            V = Vp.T
        starts.append(normalized_v(W, V))
    objectives = [lcf_objective_eq3(X.T, W, V.T, lam) for W, V in starts]
    np.testing.assert_allclose(model.start_objectives_, objectives, rtol=1e-10)
    assert model.best_start_ == int(np.argmin(objectives))
    W, V = starts[model.best_start_]
    history = [objectives[model.best_start_]]
    for _ in range(5):
        W, Vp = step(X.T, W, V.T, lam)
        W, V = normalized_v(W, Vp.T)
        history.append(lcf_objective_eq3(X.T, W, V.T, lam))
    np.testing.assert_allclose(model.objective_history_, history, rtol=1e-10)
    np.testing.assert_allclose(model.factors_["W"], W, rtol=1e-10, atol=1e-14)  # entries decaying to 0
    np.testing.assert_allclose(model.factors_["V"], V, rtol=1e-10, atol=1e-14)


@pytest.mark.filterwarnings(AT_THE_CAP)  # 100 iterations of both compared
def test_normalize_v_leaves_unit_columns_and_changes_lcf(rng):
    X = rng.random((25, 15))
    common = dict(n_components=4, max_iter=100, random_state=0, n_starts=3, min_iter=5, lam=0.3)
    plain = LCF(**common).fit(X)
    normalized = LCF(normalize_v=True, **common).fit(X)
    np.testing.assert_allclose(np.linalg.norm(normalized.factors_["V"], axis=0), 1.0, rtol=1e-12)
    assert not np.allclose(np.linalg.norm(plain.factors_["V"], axis=0), 1.0, rtol=1e-3)  # the control
    assert not np.allclose(normalized.embedding_, plain.embedding_, rtol=1e-3)
    # the final representation is still eqs. 12-13 of CF (unit-norm concepts), applied once at the end
    np.testing.assert_allclose(np.linalg.norm(normalized.components_, axis=1), 1.0, rtol=1e-12)
    for factor in normalized.factors_.values():
        assert np.all(factor >= 0) and np.all(np.isfinite(factor))


@pytest.mark.filterwarnings(AT_THE_CAP)  # the same 150 iterations of both compared
def test_normalize_v_at_lambda_zero_is_cf_up_to_rounding(rng):
    """With lambda = 0 LCF is CF, whose objective does not depend on the scale of (W, V): the rescaling
    changes nothing but rounding."""
    X = rng.random((20, 10))
    common = dict(n_components=3, max_iter=150, random_state=1, n_starts=3, min_iter=5, lam=0.0)
    plain, normalized = LCF(**common).fit(X), LCF(normalize_v=True, **common).fit(X)
    product = plain.factors_["W"] @ plain.factors_["V"].T
    difference = normalized.factors_["W"] @ normalized.factors_["V"].T - product
    assert np.abs(difference).max() <= 1e-8 * np.abs(product).max()
    np.testing.assert_allclose(normalized.objective_history_, plain.objective_history_, rtol=1e-8)
    np.testing.assert_allclose(normalized.embedding_, plain.embedding_, rtol=1e-8)
    assert normalized.n_iter_ == plain.n_iter_ and normalized.best_start_ == plain.best_start_


def test_normalize_v_history_can_rise_but_only_at_the_rescaling(rng):
    """LCF's locality term is not invariant under (W D, V D^-1): the history of a normalize_v fit (evaluated
    after each rescaling, as Cai does) rises at some iterations, while each update itself never increases
    the objective; the rises are the rescalings'."""
    X = rng.random((25, 15))
    model = LCF(n_components=4, max_iter=200, random_state=0, lam=0.3, normalize_v=True, **FIXED).fit(X)
    history = model.objective_history_
    assert np.any(np.diff(history) > 1e-6 * history[0])
    assert history[-1] < history[0]

    handoff = Handoff()  # (X W, X V) of the update, rescaled by normalize_v_columns with the factors
    update, objective = lcf_rules(X.T, 0.3, handoff=handoff)
    init = random_init(LCF, rng, 15, 25, 4)
    factors = {key: value[None].copy() for key, value in init.items()}
    rises = []
    for _ in range(100):
        before = objective(factors)[0]
        update(factors)
        after = objective(factors)[0]
        assert after <= before + 1e-9 * abs(before)
        normalize_v_columns(factors["W"], factors["V"], handoff)
        rises.append(objective(factors)[0] - after)
    assert max(rises) > 0


@pytest.mark.parametrize("params", [{"v_rule": "eq41"}, {"normalize_v": True}, {"v_rule": "eq41", "normalize_v": True}])
@pytest.mark.parametrize("lam", [0.3, 32.0])
@pytest.mark.filterwarnings(AT_THE_CAP)  # 300 iterations on degenerate data: finiteness is checked
def test_readings_on_degenerate_input_stay_finite(params, lam, rng):
    X = rng.random((10, 8))
    X[3] = 0.0  # an all-zero sample
    X[:, 5] = 0.0  # an all-zero feature
    X[7] = X[2]  # duplicated samples
    model = LCF(n_components=12, max_iter=300, random_state=1, lam=lam, **params).fit(X)  # rank > rank X
    assert np.all(np.isfinite(model.embedding_)) and np.all(np.isfinite(model.components_))
    assert np.all(np.isfinite(model.objective_history_))
    for factor in model.factors_.values():
        assert np.all(factor >= 0) and np.all(np.isfinite(factor))


def test_readings_parameters(rng):
    assert LCF().get_params()["v_rule"] == "eq12" and LCF().get_params()["normalize_v"] is False
    X = rng.random((5, 4))
    with pytest.raises(ConfigError, match="v_rule='eq13' is not one of eq12, eq41"):
        LCF(v_rule="eq13").fit(X)
    with pytest.raises(ConfigError, match="normalize_v='yes'"):
        LCF(normalize_v="yes").fit(X)
    with pytest.raises(ConfigError, match="v_rule='eq40'"):
        lcf_rules(X.T, 0.3, v_rule="eq40")

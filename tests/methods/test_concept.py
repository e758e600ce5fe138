"""Tests of CF and CCF (Xu & Gong 2004, Liu et al. 2014; src.methods.concept) on tiny matrices.

The hand-written steps use dense matrices (A as a dense array, K = X^T X built explicitly) so that they
check the sparse / implicit-kernel code against the papers' equations as printed."""

import numpy as np
import pytest
from sklearn.base import clone

from src.errors import ConfigError
from src.methods.concept import CCF, CF, concept_factors_from_nmf, concept_rules
from src.methods.graph.label_matrix import label_matrix
from src.methods.core.loop import Stopping, solve
from src.methods.nmf import NMF

from helpers import AT_THE_CAP, FIXED, assert_same_fit, check_float32_fit, monotone, partial_labels, random_init, traced_peak


@pytest.mark.parametrize("sign", ["nonnegative", "mixed"])
@pytest.mark.filterwarnings(AT_THE_CAP)  # the same 50 iterations of both compared, not converged fits
def test_ccf_without_labels_is_cf(sign, rng):
    X = rng.random((14, 9)) if sign == "nonnegative" else rng.normal(size=(14, 9))
    W0, V0 = rng.random((14, 3)), rng.random((14, 3))
    ours = CCF(n_components=3, max_iter=50, init={"W": W0, "Z": V0}).fit(X, np.full(14, -1))
    ref = CF(n_components=3, max_iter=50, init={"W": W0, "V": V0}).fit(X)
    assert ours.kernel_ == ref.kernel_ == ("implicit" if sign == "nonnegative" else "explicit")
    assert_same_fit(ours, ref, factors=("W", ("Z", "V")))


def test_one_cf_step_follows_xu_gong(rng):
    X_rows = rng.random((10, 7))
    init = {"W": rng.random((10, 3)), "V": rng.random((10, 3))}
    model = CF(n_components=3, max_iter=1, init=init, **FIXED).fit(X_rows)
    X, W, V = X_rows.T, init["W"], init["V"]
    K = X.T @ X
    V1 = V * (K @ W) / (V @ W.T @ K @ W)  # CCF paper eq. 2 (Xu & Gong)
    W1 = W * (K @ V1) / (K @ W @ V1.T @ V1)
    np.testing.assert_allclose(model.factors_["V"], V1, rtol=1e-12)
    np.testing.assert_allclose(model.factors_["W"], W1, rtol=1e-12)
    objective = np.trace(K) - 2 * np.trace(V1.T @ K @ W1) + np.trace(V1.T @ V1 @ W1.T @ K @ W1)
    assert model.objective_history_[0] == pytest.approx(objective, rel=1e-10)
    assert objective == pytest.approx(np.linalg.norm(X - X @ W1 @ V1.T) ** 2, rel=1e-10)


def test_one_ccf_step_follows_eqs_10_and_11(rng):
    X_rows = rng.random((10, 7))
    y = partial_labels(10, rng, classes=2)
    init = random_init(CCF, rng, 7, 10, 3, y)
    model = CCF(n_components=3, max_iter=1, init=init, **FIXED).fit(X_rows, y)
    X, A, W, Z = X_rows.T, label_matrix(y).toarray(), init["W"], init["Z"]
    K = X.T @ X
    Z1 = Z * (A.T @ K @ W) / (A.T @ A @ Z @ W.T @ K @ W)  # eq. 11
    W1 = W * (K @ A @ Z1) / (K @ W @ Z1.T @ A.T @ A @ Z1)  # eq. 10
    np.testing.assert_allclose(model.factors_["Z"], Z1, rtol=1e-12)
    np.testing.assert_allclose(model.factors_["W"], W1, rtol=1e-12)
    assert model.objective_history_[0] == pytest.approx(np.linalg.norm(X - X @ W1 @ Z1.T @ A.T) ** 2, rel=1e-10)
    # eq. 12: the representation is A Z diag(W^T K W)^(1/2)
    np.testing.assert_allclose(model.embedding_, A @ Z1 * np.sqrt(np.diag(W1.T @ K @ W1)), rtol=1e-12)


def test_one_general_ccf_step_follows_eqs_23_and_27(rng):
    X_rows = rng.normal(size=(10, 7))  # mixed signs: K has negative entries
    y = partial_labels(10, rng, classes=2)
    init = random_init(CCF, rng, 7, 10, 3, y)
    model = CCF(n_components=3, max_iter=1, init=init, **FIXED).fit(X_rows, y)
    assert model.kernel_ == "explicit"
    X, A, W, Z = X_rows.T, label_matrix(y).toarray(), init["W"], init["Z"]
    K = X.T @ X
    Kp, Km = np.where(K > 0, K, 0), np.where(K < 0, -K, 0)
    assert Km.max() > 0
    G = A.T @ K @ W
    Qp, Qm = A.T @ A @ Z @ W.T @ Kp @ W, A.T @ A @ Z @ W.T @ Km @ W
    Z1 = Z * (G + np.sqrt(G**2 + 4 * Qp * Qm)) / (2 * Qp)  # eq. 27 with Theorem 2's constants
    S = Z1.T @ A.T @ A @ Z1
    KAZ, Pp, Pm = K @ A @ Z1, Kp @ W @ S, Km @ W @ S
    W1 = W * (KAZ + np.sqrt(KAZ**2 + 4 * Pp * Pm)) / (2 * Pp)  # eq. 23 with Theorem 2's constants
    np.testing.assert_allclose(model.factors_["Z"], Z1, rtol=1e-12)
    np.testing.assert_allclose(model.factors_["W"], W1, rtol=1e-12)
    assert model.objective_history_[0] == pytest.approx(np.linalg.norm(X - X @ W1 @ Z1.T @ A.T) ** 2, rel=1e-10)


@pytest.mark.parametrize("cls", [CF, CCF])
@pytest.mark.filterwarnings(AT_THE_CAP)  # 200 iterations: the rules are checked, not convergence
def test_mixed_sign_data_run_the_general_rules(cls, rng):
    X = rng.normal(size=(25, 15))
    y = partial_labels(25, rng)
    model = cls(n_components=4, max_iter=200, random_state=0).fit(X, y)
    history = model.objective_history_
    assert model.kernel_ == "explicit"
    assert np.all(np.isfinite(history)) and monotone(history) and history[-1] < history[0]
    for factor in model.factors_.values():
        assert np.all(factor >= 0) and np.all(np.isfinite(factor))
    assert np.all(np.isfinite(model.embedding_))


@pytest.mark.parametrize("labelled", [False, True])
def test_implicit_kernel_equals_explicit_kernel(labelled, rng):
    """On nonnegative data K- = 0 and the general rules on an explicit K equal the plain implicit ones."""
    X = rng.random((8, 12))  # m = 8 features, n = 12 samples
    A = label_matrix(partial_labels(12, rng)) if labelled else None
    init = {"W": rng.random((12, 3)), ("Z" if labelled else "V"): rng.random((A.shape[1] if labelled else 12, 3))}
    runs = {}
    for kernel in ("implicit", "explicit"):
        factors = {key: value.copy() for key, value in init.items()}
        update, objective = concept_rules(X, A, kernel)
        runs[kernel] = solve({k: v[None] for k, v in factors.items()}, update, objective, Stopping("fixed", max_iter=60))
    for key in init:
        np.testing.assert_allclose(runs["implicit"].factors[key], runs["explicit"].factors[key], rtol=1e-10)
    np.testing.assert_allclose(runs["implicit"].history, runs["explicit"].history, rtol=1e-10)


@pytest.mark.filterwarnings(AT_THE_CAP)  # three iterations: the memory of the rules is traced
def test_no_n_by_n_array_with_feature_data(rng):
    n, m = 3000, 20
    X = rng.random((n, m))
    y = partial_labels(n, rng, classes=5, fraction=0.1)
    for cls in (CF, CCF):  # one start: s starts iterate together in (s, n, k) stacks, s times the factors
        _, peak = traced_peak(lambda: cls(n_components=5, max_iter=3, random_state=0, n_starts=1).fit(X, y))
        assert peak < n * n * 8 / 20, f"{cls.__name__} peak {peak} bytes"


@pytest.mark.filterwarnings(AT_THE_CAP)  # one iteration: the memory of the rules is traced
def test_mixed_sign_data_do_build_the_kernel(rng):
    """The memory check above can fail: the general rules build K (n x n) and it shows."""
    n = 1000
    X = rng.normal(size=(n, 5))
    _, peak = traced_peak(lambda: CF(n_components=2, max_iter=1, random_state=0).fit(X))
    assert peak > n * n * 8


# -- normalization (eqs. 12-13) ------------------------------------------------------------------------
@pytest.mark.parametrize("sign", ["nonnegative", "mixed"])
@pytest.mark.filterwarnings(AT_THE_CAP)  # the same 20 iterations of both compared
def test_normalizing_during_the_iterations_changes_nothing(sign, rng):
    """The updates are equivariant under (W D, Z D^-1), so eqs. 12-13 once at the end suffice."""
    X = rng.random((12, 6)) if sign == "nonnegative" else rng.normal(size=(12, 6))
    y = partial_labels(12, rng)
    init = random_init(CCF, rng, 6, 12, 3, y)
    D = np.array([0.1, 3.0, 40.0])
    scaled = {"W": init["W"] * D, "Z": init["Z"] / D}
    a = CCF(n_components=3, max_iter=20, init=init).fit(X, y)
    b = CCF(n_components=3, max_iter=20, init=scaled).fit(X, y)
    np.testing.assert_allclose(a.embedding_, b.embedding_, rtol=1e-8)
    np.testing.assert_allclose(a.objective_history_, b.objective_history_, rtol=1e-8)


@pytest.mark.parametrize("cls", [CF, CCF])
@pytest.mark.filterwarnings(AT_THE_CAP)  # 30 iterations suffice for the norms and the reconstruction
def test_concepts_have_unit_norm_and_reconstruct_the_data(cls, rng):
    X = rng.random((12, 6))
    y = partial_labels(12, rng)
    model = cls(n_components=3, max_iter=30, random_state=0).fit(X, y)
    np.testing.assert_allclose(np.linalg.norm(model.components_, axis=1), 1.0, rtol=1e-12)
    W = model.factors_["W"]
    V = model.factors_["V"] if cls is CF else label_matrix(y) @ model.factors_["Z"]
    np.testing.assert_allclose(model.embedding_ @ model.components_, V @ W.T @ X, rtol=1e-10)


# -- CCF initialized from NMF --------------------------------------------------------------------------
def test_concept_factors_from_nmf_by_hand(rng):
    X, U, V = rng.random((6, 9)), rng.random((6, 2)), rng.random((9, 2))
    y = np.array([0, 1, 0, -1, 1, -1, 0, -1, -1])
    A = label_matrix(y)
    W0, Z0 = concept_factors_from_nmf(X, U, V, A)
    expected_Z = np.vstack([V[y == 0].mean(axis=0), V[y == 1].mean(axis=0), V[y == -1]])
    np.testing.assert_allclose(Z0, expected_Z, rtol=1e-12)
    for k in range(2):  # least-squares scale d_k of X (v_k d_k) ~ u_k
        d = np.linalg.lstsq((X @ V[:, k])[:, None], U[:, k], rcond=None)[0][0]
        np.testing.assert_allclose(W0[:, k], V[:, k] * d, rtol=1e-10)


@pytest.mark.filterwarnings(AT_THE_CAP)  # 25 iterations: the start is checked
def test_ccf_init_from_nmf_starts_from_the_mapped_nmf_factors(rng):
    X = rng.random((15, 8))
    y = partial_labels(15, rng)
    nmf_init = {"U": rng.random((8, 3)), "V": rng.random((15, 3))}
    model = CCF(n_components=3, max_iter=25, init=nmf_init, init_from_nmf=True).fit(X, y)
    nmf = NMF(n_components=3, max_iter=25, init=nmf_init).fit(X)
    W0, Z0 = concept_factors_from_nmf(X.T, nmf.factors_["U"], nmf.factors_["V"], label_matrix(y))
    ref = CCF(n_components=3, max_iter=25, init={"W": W0, "Z": Z0}).fit(X, y)
    np.testing.assert_allclose(model.factors_["W"], ref.factors_["W"], rtol=1e-10)
    np.testing.assert_allclose(model.factors_["Z"], ref.factors_["Z"], rtol=1e-10)
    seeded = CCF(n_components=3, max_iter=25, random_state=3, init_from_nmf=True)
    np.testing.assert_array_equal(seeded.fit_transform(X, y), clone(seeded).fit_transform(X, y))
    assert monotone(model.objective_history_)


def test_ccf_init_from_nmf_errors(rng):
    X = rng.random((6, 4))
    with pytest.raises(ConfigError, match="init_from_nmf='yes'"):
        CCF(init_from_nmf="yes").fit(X)
    with pytest.raises(ConfigError, match="X >= 0"):
        CCF(init_from_nmf=True).fit(-X)
    with pytest.raises(ConfigError, match="NMF factors"):
        CCF(init_from_nmf=True, init={"W": rng.random((6, 2)), "Z": rng.random((6, 2))}).fit(X)


# -- starts iterated together, float32 ---------------------------------------------------------------------
@pytest.mark.parametrize("sign", ["nonnegative", "mixed"])
@pytest.mark.parametrize("cls", [CF, CCF])
def test_batched_starts_equal_single_start_fits(cls, sign, rng):
    """Four starts advancing in one stack give each start's objective (and the kept factors) of its own fit."""
    X = rng.random((16, 7)) if sign == "nonnegative" else rng.normal(size=(16, 7))
    y = partial_labels(16, rng)
    inits = [random_init(cls, rng, 7, 16, 3, y) for _ in range(4)]
    batched = cls(n_components=3, init=inits, n_starts=4, min_iter=5, stopping="fixed", max_iter=5).fit(X, y)
    singles = [cls(n_components=3, init=init, n_starts=1, stopping="fixed", max_iter=5).fit(X, y) for init in inits]
    assert batched.kernel_ == ("implicit" if sign == "nonnegative" else "explicit")
    np.testing.assert_allclose(batched.start_objectives_, [s.objective_history_[-1] for s in singles], rtol=1e-9)
    for name, value in singles[batched.best_start_].factors_.items():
        np.testing.assert_allclose(batched.factors_[name], value, rtol=1e-9, err_msg=name)


@pytest.mark.parametrize("cls", [CF, CCF])
def test_float32_fit_on_mixed_sign_data(cls, rng):
    """The general rules (explicit kernel) in float32; nonnegative data:
    tests/methods/test_properties.py::test_float32_keeps_its_precision_and_the_objective_decreasing."""
    check_float32_fit(cls, {}, rng, n_labelled=12 if cls.needs_labels else 0, mixed_sign=True)


# -- normalize_v: Deng Cai's NormalizeUV (NormV = 1) while iterating -------------------------------------------
@pytest.mark.parametrize("sign", ["nonnegative", "mixed"])
@pytest.mark.filterwarnings(AT_THE_CAP)  # the same 300 iterations of both compared
def test_cf_normalize_v_changes_nothing_but_the_scale(sign, rng):
    """The control of LCF's normalize_v: CF's objective is invariant and its rules equivariant under
    (W D, V D^-1), so Cai's rescaling (initial starts, last selection update, every later update) leaves
    W V^T, the objective history, the chosen start, the iteration count and the representation as they are,
    up to rounding; only V's columns now have unit norm."""
    X = rng.random((20, 10)) if sign == "nonnegative" else rng.normal(size=(20, 10))
    common = dict(n_components=3, random_state=0, n_starts=3, min_iter=5, max_iter=300)  # the reference rule
    plain, normalized = CF(**common).fit(X), CF(normalize_v=True, **common).fit(X)
    assert normalized.kernel_ == plain.kernel_ == ("implicit" if sign == "nonnegative" else "explicit")
    product = plain.factors_["W"] @ plain.factors_["V"].T
    difference = normalized.factors_["W"] @ normalized.factors_["V"].T - product
    assert np.abs(difference).max() <= 1e-8 * np.abs(product).max()
    np.testing.assert_allclose(normalized.objective_history_, plain.objective_history_, rtol=1e-8)
    np.testing.assert_allclose(normalized.start_objectives_, plain.start_objectives_, rtol=1e-8)
    assert (normalized.n_iter_, normalized.best_start_) == (plain.n_iter_, plain.best_start_)
    np.testing.assert_allclose(normalized.embedding_, plain.embedding_, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(normalized.factors_["V"], axis=0), 1.0, rtol=1e-12)
    assert not np.allclose(np.linalg.norm(plain.factors_["V"], axis=0), 1.0, rtol=1e-3)


def test_cf_normalize_v_parameter(rng):
    assert CF().get_params()["normalize_v"] is False
    model = CF(n_components=2, max_iter=10, random_state=3, normalize_v=True)
    assert clone(model).get_params() == model.get_params()
    with pytest.raises(ConfigError, match="normalize_v=1 must be true or false"):
        CF(normalize_v=1).fit(rng.random((5, 4)))

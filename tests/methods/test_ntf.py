"""Tests of NTF (Shashua & Hazan 2005, nonnegative CP of the image stack; src.methods.ntf) on tiny data."""

import numpy as np
import pytest

from src.errors import ConfigError
from src.methods.ntf import NTF, ntf_rules

from helpers import AT_THE_CAP, FIXED

# ---------------------------------------------------------------------------------------------------------
# NTF


def ntf_init(rng, h, w, n, k):
    return {"A": rng.random((h, k)), "B": rng.random((w, k)), "C": rng.random((n, k))}


def image_tensor(X_rows, h, w):
    """G (h x w x n), G[i, s, t] = pixel (i, s) of sample t, C-order reshape."""
    return X_rows.reshape(-1, h, w).transpose(1, 2, 0)


def cp_full(A, B, C):
    return np.einsum("ij,sj,tj->ist", A, B, C)


# ---------------------------------------------------------------------------------------------------------
# SDA


def test_one_ntf_step_follows_shashua_hazan(rng):
    h, w, n, k = 4, 3, 7, 2
    X = rng.random((n, h * w))
    init = ntf_init(rng, h, w, n, k)
    model = NTF(n_components=k, max_iter=1, init=init, image_shape=(h, w), **FIXED).fit(X)
    G = image_tensor(X, h, w)
    A, B, C = init["A"], init["B"], init["C"]
    # u_i^j <- u_i^j sum_{s,t} G_ist v_s^j w_t^j / sum_m u_i^m <v^m, v^j> <w^m, w^j>, then v, then w
    A1 = A * np.einsum("ist,sj,tj->ij", G, B, C) / (A @ ((B.T @ B) * (C.T @ C)))
    B1 = B * np.einsum("ist,ij,tj->sj", G, A1, C) / (B @ ((A1.T @ A1) * (C.T @ C)))
    C1 = C * np.einsum("ist,ij,sj->tj", G, A1, B1) / (C @ ((A1.T @ A1) * (B1.T @ B1)))
    np.testing.assert_allclose(model.factors_["A"], A1, rtol=1e-12)
    np.testing.assert_allclose(model.factors_["B"], B1, rtol=1e-12)
    np.testing.assert_allclose(model.factors_["C"], C1, rtol=1e-12)
    assert model.objective_history_[0] == pytest.approx(np.sum((G - cp_full(A1, B1, C1)) ** 2), rel=1e-10)


def test_ntf_objective_never_increases_and_factors_stay_nonnegative(rng):
    X = rng.random((20, 5 * 4))
    model = NTF(n_components=4, max_iter=200, random_state=0, image_shape=(5, 4), **FIXED).fit(X)
    history = model.objective_history_
    assert len(history) == 200 and model.n_iter_ == 200
    assert np.all(np.diff(history) <= 1e-9 * history[0])
    assert history[-1] < 0.7 * history[0]  # the reconstruction improves
    for factor in model.factors_.values():
        assert np.all(factor >= 0) and np.all(np.isfinite(factor))
    assert model.factors_["A"].shape == (5, 4) and model.factors_["B"].shape == (4, 4)
    assert model.factors_["C"].shape == (20, 4)


def test_ntf_fits_an_exact_nonnegative_cp_tensor(rng):
    h, w, n, k = 6, 5, 30, 2
    A, B, C = rng.random((h, k)), rng.random((w, k)), rng.random((n, k))
    X = cp_full(A, B, C).transpose(2, 0, 1).reshape(n, h * w)  # rows = C-order images
    model = NTF(n_components=k, max_iter=2000, random_state=3, image_shape=(h, w)).fit(X)
    assert model.objective_history_[-1] < 1e-4 * np.sum(X**2)


@pytest.mark.filterwarnings(AT_THE_CAP)  # 30 iterations: the shapes and the reconstruction are checked
def test_ntf_representation_and_basis_reconstruct_the_images(rng):
    h, w, n, k = 4, 4, 9, 3
    X = rng.random((n, h * w))
    model = NTF(n_components=k, max_iter=30, random_state=1, image_shape=(h, w)).fit(X)
    A, B, C = (model.factors_[name] for name in "ABC")
    reconstruction = cp_full(A, B, C).transpose(2, 0, 1).reshape(n, h * w)
    basis = model.components_  # (k, h*w), basis images vec(a_j b_j^T)
    unit = basis / np.linalg.norm(basis, axis=1, keepdims=True)
    np.testing.assert_allclose(model.embedding_ @ unit, reconstruction, rtol=1e-10)
    np.testing.assert_allclose(model.embedding_, C * np.linalg.norm(A, axis=0) * np.linalg.norm(B, axis=0))
    assert model.objective_history_[-1] == pytest.approx(np.sum((X - reconstruction) ** 2), rel=1e-10)


@pytest.mark.filterwarnings(AT_THE_CAP)  # the same 50 iterations of both compared
def test_ntf_pixel_order_only_swaps_the_image_modes(rng):
    """Fortran-order rows (transposed images) pose the same problem with A and B exchanged."""
    h, w, n, k = 4, 3, 8, 2
    X = rng.random((n, h * w))
    X_fortran = X.reshape(n, h, w).transpose(0, 2, 1).reshape(n, h * w)  # the same images, column by column
    A, B, C = rng.random((h, k)), rng.random((w, k)), rng.random((n, k))
    _, objective = ntf_rules(X.T, (h, w))
    _, objective_fortran = ntf_rules(X_fortran.T, (w, h))
    assert objective_fortran({"A": B, "B": A, "C": C}) == pytest.approx(objective({"A": A, "B": B, "C": C}),
                                                                         rel=1e-12)
    ours = NTF(n_components=k, max_iter=50, image_shape=(h, w), init={"A": A, "B": B, "C": C}).fit(X)
    theirs = NTF(n_components=k, max_iter=50, image_shape=(w, h), init={"A": B, "B": A, "C": C}).fit(X_fortran)
    # the trajectories differ only by the order of the two image-mode updates in a sweep
    assert theirs.objective_history_[-1] == pytest.approx(ours.objective_history_[-1], rel=1e-2)


@pytest.mark.filterwarnings(AT_THE_CAP)  # 300 iterations on degenerate data: finiteness is checked
def test_ntf_degenerate_input_stays_finite(rng):
    X = rng.random((10, 3 * 3))
    X[3] = 0.0  # an all-zero sample
    X[:, 5] = 0.0  # an all-zero pixel
    X[7] = X[2]  # duplicated samples
    model = NTF(n_components=12, max_iter=300, random_state=1, image_shape=(3, 3)).fit(X)  # rank above
    assert np.all(np.isfinite(model.embedding_)) and np.all(np.isfinite(model.objective_history_))
    for factor in model.factors_.values():
        assert np.all(factor >= 0) and np.all(np.isfinite(factor))


@pytest.mark.filterwarnings(AT_THE_CAP)  # a few iterations compared: the seed and the init are checked
def test_ntf_same_seed_same_result_and_init_not_modified(rng):
    X = rng.random((8, 6))
    a = NTF(n_components=2, max_iter=20, random_state=5, image_shape=(2, 3)).fit_transform(X)
    b = NTF(n_components=2, max_iter=20, random_state=5, image_shape=(2, 3)).fit_transform(X)
    np.testing.assert_array_equal(a, b)
    init = ntf_init(rng, 2, 3, 8, 2)
    kept = {key: value.copy() for key, value in init.items()}
    NTF(n_components=2, max_iter=5, init=init, image_shape=(2, 3)).fit(X)
    for key in init:
        np.testing.assert_array_equal(init[key], kept[key])


@pytest.mark.parametrize(
    "image_shape, match",
    [
        (None, "image_shape=None"),
        ((4, 4), r"image_shape=\(4, 4\) has 16 pixels but the data have 12"),
        ((3, 4, 1), r"image_shape=\(3, 4, 1\)"),
        ((3, 0), r"image_shape=\(3, 0\)"),
        ((3.0, 4), r"image_shape=\(3.0, 4\)"),
        ("3x4", "image_shape='3x4'"),
    ],
)
def test_ntf_bad_image_shape_names_itself(image_shape, match, rng):
    with pytest.raises(ConfigError, match=match):
        NTF(n_components=2, image_shape=image_shape).fit(rng.random((5, 12)))


def test_ntf_check_params_and_bad_init(rng):
    with pytest.raises(ConfigError, match="image_shape=None"):
        NTF(n_components=2).check_params()
    with pytest.raises(ConfigError, match="n_components=0"):
        NTF(n_components=0, image_shape=(3, 4)).check_params()
    NTF(n_components=2, image_shape=[3, 4]).check_params()  # a list is accepted (YAML configs)
    X = rng.random((5, 12))
    with pytest.raises(ConfigError, match="expected"):
        NTF(n_components=2, image_shape=(3, 4), init={"U": rng.random((12, 2)), "V": rng.random((5, 2))}).fit(X)
    with pytest.raises(ConfigError, match="negative"):
        NTF(n_components=2, image_shape=(3, 4)).fit(-X)

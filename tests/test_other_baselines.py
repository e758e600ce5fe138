"""Property tests of the NTF, COP-KMeans and SDA baselines (CNMF and CCF papers) on tiny data."""

import logging

import numpy as np
import pytest
import scipy.linalg
from sklearn.metrics import adjusted_rand_score
from sklearn.neighbors import kneighbors_graph

from src.errors import ConfigError
from src.methods.copkmeans import COPKMeans, cop_kmeans_run
from src.methods.ntf import NTF, ntf_rules
from src.methods.sda import SDA, sda_directions

# ---------------------------------------------------------------------------------------------------------
# NTF


def ntf_init(rng, h, w, n, k):
    return {"A": rng.random((h, k)), "B": rng.random((w, k)), "C": rng.random((n, k))}


def image_tensor(X_rows, h, w):
    """G (h x w x n), G[i, s, t] = pixel (i, s) of sample t, C-order reshape."""
    return X_rows.reshape(-1, h, w).transpose(1, 2, 0)


def cp_full(A, B, C):
    return np.einsum("ij,sj,tj->ist", A, B, C)


def test_one_ntf_step_follows_shashua_hazan(rng):
    h, w, n, k = 4, 3, 7, 2
    X = rng.random((n, h * w))
    init = ntf_init(rng, h, w, n, k)
    model = NTF(n_components=k, max_iter=1, init=init, image_shape=(h, w)).fit(X)
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
    model = NTF(n_components=4, max_iter=200, random_state=0, image_shape=(5, 4)).fit(X)
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


def test_ntf_degenerate_input_stays_finite(rng):
    X = rng.random((10, 3 * 3))
    X[3] = 0.0  # an all-zero sample
    X[:, 5] = 0.0  # an all-zero pixel
    X[7] = X[2]  # duplicated samples
    model = NTF(n_components=12, max_iter=300, random_state=1, image_shape=(3, 3)).fit(X)  # rank above
    assert np.all(np.isfinite(model.embedding_)) and np.all(np.isfinite(model.objective_history_))
    for factor in model.factors_.values():
        assert np.all(factor >= 0) and np.all(np.isfinite(factor))


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


# ---------------------------------------------------------------------------------------------------------
# COP-KMeans


def blobs(rng, centres, per_class, spread=0.3):
    centres = np.asarray(centres, dtype=float)
    X = np.concatenate([c + spread * rng.standard_normal((per_class, centres.shape[1])) for c in centres])
    return X, np.repeat(np.arange(len(centres)), per_class)


def partial(rng, y, fraction):
    y_partial = np.full_like(y, -1)
    for c in np.unique(y):
        members = np.flatnonzero(y == c)
        chosen = rng.choice(members, size=max(1, int(fraction * members.size)), replace=False)
        y_partial[chosen] = c
    return y_partial


def assert_constraints_hold(labels, y_partial):
    labelled = np.flatnonzero(y_partial >= 0)
    same = y_partial[labelled][:, None] == y_partial[labelled][None, :]
    together = labels[labelled][:, None] == labels[labelled][None, :]
    np.testing.assert_array_equal(together, same)  # must-link and cannot-link, every pair


def test_copkmeans_output_satisfies_every_constraint(rng):
    X = rng.random((60, 5))  # no cluster structure: the constraints must be enforced against the geometry
    y = rng.integers(0, 4, size=60)
    y_partial = partial(rng, y, 0.3)
    model = COPKMeans(n_components=4, n_restarts=5, random_state=0)
    labels = model.fit_predict(X, y_partial)
    assert_constraints_hold(labels, y_partial)
    assert model.constraints_satisfied_ and model.n_failed_restarts_ == 0
    assert set(np.unique(labels)) <= set(range(4))


def test_copkmeans_constraints_override_the_geometry(rng):
    # two tight blobs; the labels say the left blob holds two classes
    X, _ = blobs(rng, [[0.0, 0.0], [10.0, 0.0]], 20, spread=0.1)
    y_partial = np.full(40, -1)
    y_partial[[0, 1]] = 0
    y_partial[[2, 3]] = 1
    labels = COPKMeans(n_components=2, random_state=0).fit_predict(X, y_partial)
    assert labels[0] == labels[1] and labels[2] == labels[3] and labels[0] != labels[2]


def test_copkmeans_recovers_separable_data(rng):
    X, y = blobs(rng, [[0, 0, 0], [6, 0, 0], [0, 6, 0], [0, 0, 6]], 25)
    y_partial = partial(rng, y, 0.1)
    model = COPKMeans(n_components=4, random_state=2)
    labels = model.fit_predict(X, y_partial)
    assert adjusted_rand_score(y, labels) == 1.0
    assert_constraints_hold(labels, y_partial)
    for c in range(4):  # each labelled class sits in its own cluster
        assert np.unique(labels[y_partial == c]).size == 1


@pytest.mark.parametrize("seed", range(10))
def test_copkmeans_one_assignment_step_follows_the_chunk_rule(seed):
    rng = np.random.default_rng(seed)
    X = rng.random((14, 3))
    chunk_of = np.array([0, 0, 0, 0, 1, 1, 1, 2, -1, -1, -1, -1, -1, -1])
    K = 4
    labels, n_iter = cop_kmeans_run(X, chunk_of, K, np.random.default_rng(seed), max_iter=1)
    assert n_iter == 1
    draws = np.random.default_rng(seed)  # the same draws as the run: starting samples, then the chunk order
    centres = X[draws.choice(14, K, replace=False)]
    order = draws.permutation(3)
    expected = np.empty(14, dtype=int)
    taken = set()
    for g in order:  # each chunk: the free centre minimizing the sum of its members' squared distances
        members = np.flatnonzero(chunk_of == g)
        cost = [((X[members] - centres[j]) ** 2).sum() if j not in taken else np.inf for j in range(K)]
        expected[members] = int(np.argmin(cost))
        taken.add(int(np.argmin(cost)))
    for i in np.flatnonzero(chunk_of < 0):
        expected[i] = int(np.argmin(((X[i] - centres) ** 2).sum(axis=1)))
    np.testing.assert_array_equal(labels, expected)


def test_copkmeans_keeps_the_best_restart_and_reports_its_objective(rng):
    X, y = blobs(rng, [[0, 0], [3, 0], [0, 3]], 15, spread=1.0)
    y_partial = partial(rng, y, 0.2)
    best = COPKMeans(n_components=3, n_restarts=20, random_state=4).fit(X, y_partial)
    first = COPKMeans(n_components=3, n_restarts=1, random_state=4).fit(X, y_partial)  # the first restart
    assert best.objective_ <= first.objective_ + 1e-12
    within = sum(((X[best.labels_ == j] - X[best.labels_ == j].mean(axis=0)) ** 2).sum()
                 for j in np.unique(best.labels_))
    assert best.objective_ == pytest.approx(within, rel=1e-10)
    for j in np.unique(best.labels_):
        np.testing.assert_allclose(best.cluster_centers_[j], X[best.labels_ == j].mean(axis=0))


def test_copkmeans_without_labels_is_kmeans_at_a_fixed_point(rng):
    X, y = blobs(rng, [[0, 0], [4, 0], [0, 4]], 20)
    model = COPKMeans(n_components=3, random_state=0).fit(X)
    assert model.n_iter_ < 300  # converged
    d = ((X[:, None, :] - model.cluster_centers_[None]) ** 2).sum(axis=2)
    np.testing.assert_array_equal(model.labels_, d.argmin(axis=1))  # every sample at its nearest centre
    assert adjusted_rand_score(y, model.labels_) == 1.0


def test_copkmeans_seeded_reproducibility(rng):
    X = rng.random((40, 4))
    y_partial = partial(rng, rng.integers(0, 3, size=40), 0.3)
    a = COPKMeans(n_components=3, random_state=11).fit_predict(X, y_partial)
    b = COPKMeans(n_components=3, random_state=11).fit_predict(X, y_partial)
    np.testing.assert_array_equal(a, b)


def test_copkmeans_infeasible_constraints_fall_back_with_a_warning(rng, caplog):
    X, y = blobs(rng, [[0, 0], [5, 0], [0, 5]], 10)
    y_partial = partial(rng, y, 0.3)  # three labelled classes, two clusters: no feasible assignment
    with caplog.at_level(logging.WARNING, logger="src.methods.copkmeans"):
        model = COPKMeans(n_components=2, n_restarts=3, random_state=0).fit(X, y_partial)
    assert "all 3 restarts failed" in caplog.text
    assert not model.constraints_satisfied_ and model.n_failed_restarts_ == 3
    assert model.labels_.shape == (30,) and set(np.unique(model.labels_)) <= {0, 1}


def test_copkmeans_attributes(rng):
    X = rng.normal(size=(10, 3))  # negative data are fine
    model = COPKMeans(n_components=2, random_state=0)
    assert COPKMeans.clusters_directly is True and model.get_params()["n_restarts"] == 20
    model.fit(X, np.array([0, 1] + [-1] * 8))
    assert model.factors_ == {} and model.embedding_ is not None and model.objective_history_.size == 0
    np.testing.assert_array_equal(model.embedding_, X)
    assert model.n_iter_ >= 1


@pytest.mark.parametrize(
    "params, match",
    [
        ({"n_components": 0}, "n_components=0"),
        ({"n_restarts": 0}, "n_restarts=0"),
        ({"max_iter": -1}, "max_iter=-1"),
        ({"n_restarts": 2.5}, "n_restarts=2.5"),
        ({"n_components": 20}, "n_components=20 exceeds"),
    ],
)
def test_copkmeans_bad_parameters_name_themselves(params, match, rng):
    with pytest.raises(ConfigError, match=match):
        COPKMeans(**params).fit(rng.random((6, 3)))


# ---------------------------------------------------------------------------------------------------------
# SDA


def match_directions(actual, expected):
    """Compare unit directions (columns) up to sign."""
    assert actual.shape == expected.shape
    signs = np.sign(np.sum(actual * expected, axis=0))
    np.testing.assert_allclose(actual * signs, expected, atol=1e-8)


def test_sda_with_alpha_zero_and_all_labelled_is_regularized_lda(rng):
    X, y = blobs(rng, rng.normal(size=(3, 6)) * 2, 10, spread=1.0)
    beta = 0.5
    model = SDA(n_components=4, alpha=0.0, beta=beta).fit(X, y)
    mu = X.mean(axis=0)
    S_b = sum((y == c).sum() * np.outer(X[y == c].mean(axis=0) - mu, X[y == c].mean(axis=0) - mu)
              for c in range(3))
    S_t = (X - mu).T @ (X - mu)
    values, vectors = scipy.linalg.eigh(S_b, S_t + beta * np.eye(6))
    top = vectors[:, ::-1][:, :2]  # c - 1 = 2 discriminant directions
    top /= np.linalg.norm(top, axis=0)
    assert model.n_directions_ == 2
    match_directions(model.components_[:2].T, top)
    np.testing.assert_allclose(model.eigenvalues_[:2], values[::-1][:2], rtol=1e-8)
    np.testing.assert_array_equal(model.components_[2:], 0.0)  # padded
    np.testing.assert_array_equal(model.embedding_[:, 2:], 0.0)


def test_sda_graph_term_follows_the_paper(rng):
    X, y = blobs(rng, rng.normal(size=(3, 5)) * 2, 12, spread=1.0)
    y_partial = partial(rng, y, 0.3)
    alpha, beta, p = 0.7, 0.2, 4
    model = SDA(n_components=3, alpha=alpha, beta=beta, n_neighbors=p).fit(X, y_partial)
    Xc = X - X.mean(axis=0)  # centred by the mean of all samples
    W = kneighbors_graph(X, p, mode="connectivity").toarray()
    W = np.maximum(W, W.T)
    L = np.diag(W.sum(axis=1)) - W
    lab = y_partial >= 0
    S_b = sum((y_partial == c).sum() * np.outer(Xc[y_partial == c].mean(axis=0), Xc[y_partial == c].mean(axis=0))
              for c in range(3))
    S_t = Xc[lab].T @ Xc[lab]
    values, vectors = scipy.linalg.eigh(S_b, S_t + alpha * Xc.T @ L @ Xc + beta * np.eye(5))
    top = vectors[:, ::-1][:, :3]
    top /= np.linalg.norm(top, axis=0)
    match_directions(model.components_.T, top)
    np.testing.assert_allclose(model.eigenvalues_, values[::-1][:3], rtol=1e-8)
    np.testing.assert_allclose(model.embedding_, X @ model.components_.T)  # uncentred projection


def test_sda_sample_space_solution_equals_feature_space(rng):
    X, y = blobs(rng, rng.normal(size=(3, 40)), 6, spread=1.0)  # m = 40 > n = 18
    y_partial = partial(rng, y, 0.5)
    a, va = sda_directions(X, y_partial, 0.1, 0.1, 3, 5, solve_in_sample_space=True)
    b, vb = sda_directions(X, y_partial, 0.1, 0.1, 3, 5, solve_in_sample_space=False)
    assert a.shape == b.shape == (40, 3)
    np.testing.assert_allclose(va, vb, rtol=1e-8)
    match_directions(a, b)


def test_sda_separates_well_separated_labelled_classes(rng):
    centres = np.zeros((3, 20))
    centres[0, 0], centres[1, 1], centres[2, 2] = 4.0, 4.0, 4.0
    X, y = blobs(rng, centres, 30, spread=1.0)
    y_partial = partial(rng, y, 0.3)
    Z = SDA(n_components=4).fit_transform(X, y_partial)
    assert Z.shape == (90, 4)
    means = np.array([Z[y == c].mean(axis=0) for c in range(3)])
    nearest = ((Z[:, None, :] - means[None]) ** 2).sum(axis=2).argmin(axis=1)
    assert np.mean(nearest == y) > 0.97
    spread = max(np.linalg.norm(Z[y == c] - means[c], axis=1).mean() for c in range(3))
    gap = min(np.linalg.norm(means[i] - means[j]) for i in range(3) for j in range(i + 1, 3))
    assert gap > 3 * spread


def test_sda_shapes_cap_and_pad(rng):
    X, y = blobs(rng, rng.normal(size=(4, 8)) * 3, 8)
    y_partial = partial(rng, y, 0.3)
    wide = SDA(n_components=6).fit(X, y_partial)
    assert wide.embedding_.shape == (32, 6) and wide.components_.shape == (6, 8)
    assert wide.n_directions_ <= 4  # rank(S_b) <= c with unlabelled samples
    np.testing.assert_array_equal(wide.components_[wide.n_directions_:], 0.0)
    np.testing.assert_allclose(np.linalg.norm(wide.components_[: wide.n_directions_], axis=1), 1.0)
    narrow = SDA(n_components=2).fit(X, y_partial)
    assert narrow.n_directions_ == 2 and narrow.embedding_.shape == (32, 2)
    np.testing.assert_allclose(narrow.components_, wide.components_[:2])
    assert narrow.factors_ == {} and narrow.n_iter_ == 0 and narrow.objective_history_.size == 0
    assert SDA.nonnegative_data is False


@pytest.mark.parametrize(
    "params, match",
    [
        ({"n_components": 0}, "n_components=0"),
        ({"alpha": -1.0}, "alpha=-1.0"),
        ({"beta": -0.1}, "beta=-0.1"),
        ({"beta": float("nan")}, "beta=nan"),
        ({"n_neighbors": 0}, "n_neighbors=0"),
    ],
)
def test_sda_bad_parameters_name_themselves(params, match, rng):
    with pytest.raises(ConfigError, match=match):
        SDA(**params).fit(rng.random((6, 3)), np.array([0, 0, 1, 1, -1, -1]))


def test_sda_needs_labels_and_a_regular_denominator(rng):
    with pytest.raises(ConfigError, match="needs labelled samples"):
        SDA().fit(rng.random((6, 3)))
    X = rng.random((6, 10))  # m > n and beta = 0 with alpha = 0: the denominator is singular
    with pytest.raises(ConfigError, match="beta=0"):
        SDA(alpha=0.0, beta=0.0).fit(X, np.array([0, 0, 1, -1, -1, -1]))


def test_copkmeans_and_sda_stay_finite_on_degenerate_input(rng):
    X = rng.random((12, 6))
    X[3] = 0.0  # an all-zero sample
    X[:, 4] = 0.0  # an all-zero feature
    X[7] = X[2]  # duplicated samples
    X[8] = X[2]
    y_partial = np.array([0, 0, 1, -1, 1, 2, -1, -1, -1, -1, 2, -1])
    model = COPKMeans(n_components=6, n_restarts=5, random_state=0).fit(X, y_partial)
    assert_constraints_hold(model.labels_, y_partial)
    assert np.isfinite(model.objective_) and np.all(np.isfinite(model.cluster_centers_))
    Z = SDA(n_components=4).fit_transform(X, y_partial)
    assert Z.shape == (12, 4) and np.all(np.isfinite(Z))
    Z = SDA(n_components=4).fit_transform(np.repeat(X[:1], 12, axis=0), y_partial)  # all samples identical
    np.testing.assert_array_equal(Z, 0.0)

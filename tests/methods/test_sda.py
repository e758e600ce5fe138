"""Tests of SDA (Cai et al. 2007, semi-supervised discriminant analysis; src.methods.sda) on tiny data."""

import numpy as np
import pytest
import scipy.linalg
from sklearn.neighbors import kneighbors_graph

from src.errors import ConfigError
from src.methods.copkmeans import COPKMeans
from src.methods.sda import SDA, sda_directions

from helpers import assert_constraints_hold, blobs_around, partial

# ---------------------------------------------------------------------------------------------------------
# SDA


def match_directions(actual, expected):
    """Compare unit directions (columns) up to sign."""
    assert actual.shape == expected.shape
    signs = np.sign(np.sum(actual * expected, axis=0))
    np.testing.assert_allclose(actual * signs, expected, atol=1e-8)


def test_sda_with_alpha_zero_and_all_labelled_is_regularized_lda(rng):
    X, y = blobs_around(rng, rng.normal(size=(3, 6)) * 2, 10, spread=1.0)
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
    X, y = blobs_around(rng, rng.normal(size=(3, 5)) * 2, 12, spread=1.0)
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
    X, y = blobs_around(rng, rng.normal(size=(3, 40)), 6, spread=1.0)  # m = 40 > n = 18
    y_partial = partial(rng, y, 0.5)
    a, va = sda_directions(X, y_partial, 0.1, 0.1, 3, 5, solve_in_sample_space=True)
    b, vb = sda_directions(X, y_partial, 0.1, 0.1, 3, 5, solve_in_sample_space=False)
    assert a.shape == b.shape == (40, 3)
    np.testing.assert_allclose(va, vb, rtol=1e-8)
    match_directions(a, b)


def test_sda_separates_well_separated_labelled_classes(rng):
    centres = np.zeros((3, 20))
    centres[0, 0], centres[1, 1], centres[2, 2] = 4.0, 4.0, 4.0
    X, y = blobs_around(rng, centres, 30, spread=1.0)
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
    X, y = blobs_around(rng, rng.normal(size=(4, 8)) * 3, 8)
    y_partial = partial(rng, y, 0.3)
    wide = SDA(n_components=6).fit(X, y_partial)
    assert wide.embedding_.shape == (32, 6) and wide.components_.shape == (6, 8)
    assert wide.n_directions_ <= 4  # rank(S_b) <= c with unlabelled samples
    np.testing.assert_array_equal(wide.components_[wide.n_directions_:], 0.0)
    np.testing.assert_allclose(np.linalg.norm(wide.components_[: wide.n_directions_], axis=1), 1.0)
    narrow = SDA(n_components=2).fit(X, y_partial)
    assert narrow.n_directions_ == 2 and narrow.embedding_.shape == (32, 2)
    np.testing.assert_allclose(narrow.components_, wide.components_[:2])
    assert narrow.factors_ == {}
    assert not hasattr(narrow, "n_iter_") and not hasattr(narrow, "objective_history_")  # closed form: no iterations
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


def test_fits_on_the_same_samples_serve_the_basis_and_graph_term_and_give_a_fresh_fits_numbers(rng, monkeypatch):
    from src.methods import sda
    from src.methods.graph import knn

    bases, searches = [], []
    real_basis, real_search = sda._sample_basis, knn.NearestNeighbors.fit
    monkeypatch.setattr(sda, "_sample_basis", lambda Xc: bases.append(1) or real_basis(Xc))
    monkeypatch.setattr(knn.NearestNeighbors, "fit", lambda self, X: searches.append(1) or real_search(self, X))
    sda.SAMPLE_TERMS.forget()
    knn.SEARCHES.forget()
    X = rng.random((30, 50))  # m > n: solved in the span of the samples
    y = partial(rng, np.arange(30) % 3, 0.4)
    settings = [dict(alpha=0.1, beta=0.1), dict(alpha=1.0, beta=0.1), dict(alpha=0.1, beta=10.0)]
    kept = [SDA(3, **setting).fit(X, y).embedding_ for setting in settings]
    assert len(bases) == 1 and len(searches) == 1  # one basis, one graph term, one search for the three fits
    for setting, embedding in zip(settings, kept):
        sda.SAMPLE_TERMS.forget()
        knn.SEARCHES.forget()
        np.testing.assert_array_equal(SDA(3, **setting).fit(X, y).embedding_, embedding)  # bit for bit
    assert len(bases) == 4

"""The KMeans step's restarts run as stacks: the same partitions as the runs one after another."""

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.preprocessing import normalize

import src.protocol.clustering as clustering
from src.protocol.clustering import best_kmeans


def spherical_one_by_one(Z, k, restarts, seed, init="random", max_iter=300):
    """The spherical KMeans step written run after run: the reference the stacked runs must equal."""
    rng = np.random.default_rng(seed)
    Zn = normalize(Z)
    n = len(Zn)
    best = None
    for _ in range(restarts):
        centers = clustering._spherical_start(Zn, k, rng, init)
        labels = None
        for _ in range(max_iter):
            similarity = Zn @ centers.T
            new_labels = similarity.argmax(axis=1)
            if labels is not None and np.array_equal(new_labels, labels):
                break
            labels = new_labels
            sums = np.zeros((k, Zn.shape[1]))
            for sample, cluster in enumerate(labels):  # the members' sum, sample after sample
                sums[cluster] += Zn[sample]
            empty = np.flatnonzero(np.bincount(labels, minlength=k) == 0)
            if empty.size:
                far = np.argsort(similarity[np.arange(n), labels])[: empty.size]
                sums[empty] = Zn[far]
            centers = normalize(sums)
        similarity = Zn @ centers.T
        labels = similarity.argmax(axis=1)
        objective = (1.0 - similarity[np.arange(n), labels]).sum()
        if best is None or objective < best[1]:
            best = (labels, objective)
    return best


@pytest.mark.parametrize("n, k, init", [(40, 2, "random"), (165, 15, "random"), (432, 6, "random"),
                                        (120, 5, "k-means++"), (60, 12, "random")])
def test_spherical_restarts_equal_the_runs_one_by_one(n, k, init):
    rng = np.random.default_rng(n * k)
    Z = rng.random((n, k + 1)) ** 3
    if k == 12:  # few distinct directions: empty clusters re-seeded
        Z = Z[rng.integers(0, 8, n)]
    labels, objective = best_kmeans(Z, k, 20, "cosine", seed=5, init=init)
    expected_labels, expected_objective = spherical_one_by_one(Z, k, 20, 5, init)
    np.testing.assert_array_equal(labels, expected_labels)
    assert objective == pytest.approx(expected_objective, rel=1e-12, abs=1e-12)


def test_spherical_restarts_stop_at_the_cap():
    Z = np.random.default_rng(1).random((200, 5))
    labels, objective = best_kmeans(Z, 5, 10, "cosine", seed=2, max_iter=2)
    expected_labels, expected_objective = spherical_one_by_one(Z, 5, 10, 2, max_iter=2)
    np.testing.assert_array_equal(labels, expected_labels)
    assert objective == pytest.approx(expected_objective, rel=1e-12)


@pytest.mark.parametrize("n, k", [(60, 5), (1200, 8)])
def test_euclidean_restarts_stacked_or_not_give_scikit_learns_partition(monkeypatch, n, k):
    """Below STACKED_UP_TO samples x clusters the stacked Lloyd runs, above it scikit-learn's KMeans; both
    keep the partition of KMeans(n_init=restarts) seeded from the step's generator."""
    rng = np.random.default_rng(k)
    Z = rng.random((n, k)) ** 2
    fits = []
    monkeypatch.setattr(KMeans, "fit", lambda self, *a, _fit=KMeans.fit, **kw: fits.append(1) or _fit(self, *a, **kw))
    labels, objective = best_kmeans(Z, k, 20, "euclidean", seed=4)
    assert bool(fits) == (n * k > clustering.STACKED_UP_TO)
    monkeypatch.undo()
    state = int(np.random.default_rng(4).integers(2**31 - 1))
    model = KMeans(k, init="random", n_init=20, algorithm="lloyd", random_state=state).fit(Z)
    np.testing.assert_array_equal(labels, model.labels_)
    assert objective == pytest.approx(model.inertia_, rel=1e-12)

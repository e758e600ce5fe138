"""The stacked Lloyd restarts against scikit-learn's KMeans: the same partitions, objectives and warnings."""

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import adjusted_rand_score

from src.protocol.lloyd import _squared_distances, lloyd_restarts


def sklearn_best(Z, k, restarts, seed, max_iter=300, tol=1e-4):
    model = KMeans(k, init="random", n_init=restarts, max_iter=max_iter, tol=tol, algorithm="lloyd",
                   random_state=seed).fit(Z)
    return model.labels_, model.inertia_


CASES = [(20, 2, 2), (60, 6, 7), (165, 15, 15), (144, 3, 5), (240, 8, 9), (400, 5, 5), (700, 3, 4)]


@pytest.mark.parametrize("n, k, d", CASES)
def test_restarts_find_scikit_learns_partition(n, k, d):
    rng = np.random.default_rng(n + k)
    Z = rng.random((n, d)) ** 3  # skewed, as nonnegative embeddings are
    seed = int(rng.integers(2**31 - 1))
    labels, inertia = lloyd_restarts(Z, k, 20, seed)
    expected_labels, expected_inertia = sklearn_best(Z, k, 20, seed)
    np.testing.assert_array_equal(labels, expected_labels)
    assert inertia == pytest.approx(expected_inertia, rel=1e-12)
    assert labels.dtype == expected_labels.dtype


@pytest.mark.parametrize("max_iter, tol", [(1, 1e-4), (2, 1e-4), (3, 0.0), (300, 0.0), (300, 1e-1)])
def test_each_stopping_rule_as_scikit_learns(max_iter, tol):
    """The cap on iterations (the samples then assigned to the last centres), a zero tolerance (only repeated
    labels stop) and a loose one (the shift stops most runs before their labels settle)."""
    rng = np.random.default_rng(7)
    Z = rng.random((150, 4))
    labels, inertia = lloyd_restarts(Z, 5, 10, 11, max_iter=max_iter, tol=tol)
    expected_labels, expected_inertia = sklearn_best(Z, 5, 10, 11, max_iter=max_iter, tol=tol)
    np.testing.assert_array_equal(labels, expected_labels)
    assert inertia == pytest.approx(expected_inertia, rel=1e-12)


def test_empty_clusters_are_moved_to_the_farthest_samples():
    """Few distinct rows and many clusters: starts on duplicates leave clusters empty, which take samples far
    from their centres; the kept partition is as good as scikit-learn's (which one of the equally good
    partitions is kept depends on rounding ties between identical centres)."""
    rng = np.random.default_rng(3)
    Z = rng.random((6, 4))[rng.integers(0, 6, 120)] + 1e-3 * rng.random((120, 4))
    labels, inertia = lloyd_restarts(Z, 9, 20, 5)
    expected_labels, expected_inertia = sklearn_best(Z, 9, 20, 5)
    assert inertia == pytest.approx(expected_inertia, rel=1e-9)
    assert adjusted_rand_score(labels, expected_labels) > 0.9
    assert np.unique(labels).size == 9


def test_fewer_distinct_rows_than_clusters_warns_as_scikit_learn():
    Z = np.repeat(np.eye(3), 10, axis=0)
    with pytest.warns(ConvergenceWarning, match="Number of distinct clusters"):
        labels, inertia = lloyd_restarts(Z, 4, 5, 0)
    with pytest.warns(ConvergenceWarning, match=r"Number of distinct clusters \(3\) found smaller than n_clusters"):
        expected_labels, expected_inertia = sklearn_best(Z, 4, 5, 0)
    assert adjusted_rand_score(labels, expected_labels) == 1.0
    assert inertia == pytest.approx(expected_inertia, abs=1e-12)


def test_the_objective_is_the_summed_squared_distance_to_the_means():
    rng = np.random.default_rng(9)
    Z = rng.random((90, 3))
    labels, inertia = lloyd_restarts(Z, 4, 8, 2)
    means = np.array([Z[labels == c].mean(axis=0) for c in range(4)])
    assert inertia == pytest.approx(((Z - means[labels]) ** 2).sum(), rel=1e-9)


def test_squared_distances_are_row_sums_of_squares():
    rng = np.random.default_rng(4)
    for d in (1, 3, 4, 7, 9):
        A, B = rng.random((2, 5, d))
        np.testing.assert_allclose(_squared_distances(A, B), ((A - B) ** 2).sum(axis=1), rtol=1e-14)

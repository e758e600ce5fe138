"""Tests of :mod:`src.methods.graph.nndescent`: the NN-descent neighbour lists.

* every row is complete: q distinct samples, never the row's own, sorted by distance (ties by index);
* the lists hold nearly every exact neighbour of clustered data, and all of them when q = n - 1;
* duplicated samples (ties at distance 0) list their copies first; identical samples still give complete
  rows;
* the result is a function of the seed: the same in two calls, in the same process and in a fresh one
  (which loads the compiled code from numba's disk cache), and different for another seed;
* the search copy's exact transformations (constant features left out, a power-of-two scale against
  overflow) change nothing;
* bad arguments raise ConfigError naming the parameter and the value.

The first call after ``nndescent.py`` changed compiles it (about 13 s on this 2-core VM, paid by the first
test that runs); with numba's cache warm the file takes a few seconds. The fresh-process test is
``integration`` (a subprocess).
"""

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from sklearn.neighbors import NearestNeighbors

from src.errors import ConfigError
from src.methods.graph.nndescent import approximate_neighbours

REPO = Path(__file__).resolve().parents[3]


def clustered(rng, n, m=20, n_clusters=10, spread=0.3):
    """n points around n_clusters random centres in [0, 1]^m, shape (n, m)."""
    centres = rng.random((n_clusters, m))
    return centres[rng.integers(0, n_clusters, n)] + spread * rng.random((n, m))


def squared_distances(X, rows, neighbours):
    """Squared distances (float64) from each sample of ``rows`` to its listed neighbours, shape (r, q)."""
    return ((X[rows, None, :] - X[neighbours]) ** 2).sum(axis=-1)


def check_rows(neighbours, X, q):
    """Complete rows of q distinct other samples, sorted by distance up to float32 rounding."""
    n = X.shape[0]
    assert neighbours.shape == (n, q) and neighbours.dtype == np.intp
    assert neighbours.min() >= 0 and neighbours.max() < n
    assert not np.any(neighbours == np.arange(n)[:, None])
    ordered = np.sort(neighbours, axis=1)
    assert np.all(ordered[:, 1:] != ordered[:, :-1])
    d = squared_distances(X, np.arange(n), neighbours)
    assert np.all(np.diff(d, axis=1) >= -1e-5 * (1 + d[:, 1:]))


def recall(neighbours, X):
    """Fraction of the exact q nearest others (float64, scikit-learn) that the lists hold."""
    q = neighbours.shape[1]
    exact = NearestNeighbors(n_neighbors=q).fit(X).kneighbors(return_distance=False)
    return np.mean([np.intersect1d(a, b).size for a, b in zip(neighbours, exact)]) / q


@pytest.fixture(scope="module")
def data():
    """3000 clustered points and their lists for q = 15, seed 0."""
    X = clustered(np.random.default_rng(3), 3000)
    return X, approximate_neighbours(X, 15, np.random.default_rng(0))


def test_rows_are_complete_distinct_without_self_and_sorted(data):
    X, neighbours = data
    check_rows(neighbours, X, 15)


def test_nearly_every_exact_neighbour_of_clustered_data(data):
    X, neighbours = data
    assert recall(neighbours, X) >= 0.95
    assert recall(neighbours[:, :5], X) >= 0.98  # the first few of a wider search are nearly all exact


def test_the_search_improves_on_its_initialization(data):
    X, neighbours = data
    initial = approximate_neighbours(X, 15, np.random.default_rng(0), n_trees=1, max_iter=0)
    check_rows(initial, X, 15)  # one tree and the random fill already give complete rows
    assert recall(initial, X) < recall(neighbours, X) - 0.1


@pytest.mark.parametrize("n", [2, 3, 7, 30])
def test_q_of_n_minus_one_lists_every_other_sample_by_distance(n, rng):
    X = rng.random((n, 4))
    neighbours = approximate_neighbours(X, n - 1, np.random.default_rng(1))
    d = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=-1)
    np.fill_diagonal(d, np.inf)
    np.testing.assert_array_equal(neighbours, np.argsort(d, axis=1)[:, : n - 1])  # random data: no ties


def test_duplicated_samples_list_their_copies_first(rng):
    X = np.tile(clustered(rng, 300, m=8), (3, 1))  # sample i has its copies i +- 300, i +- 600 (mod 900)
    neighbours = approximate_neighbours(X, 5, np.random.default_rng(2))
    check_rows(neighbours, X, 5)
    copies = np.sort((np.arange(900)[:, None] + [300, 600]) % 900, axis=1)
    np.testing.assert_array_equal(neighbours[:, :2], copies)  # distance 0, ties by index


def test_identical_samples_give_complete_rows():
    X = np.ones((40, 3))
    neighbours = approximate_neighbours(X, 10, np.random.default_rng(0))
    check_rows(neighbours, X, 10)


def test_the_seed_fixes_the_result(data):
    X, neighbours = data
    np.testing.assert_array_equal(approximate_neighbours(X, 15, np.random.default_rng(0)), neighbours)


def test_another_seed_gives_other_lists(data):
    X = data[0]

    def initial(rng):  # one tree and the random fill: far from converged, so the seed shows
        return approximate_neighbours(X, 15, rng, n_trees=1, max_iter=0)

    assert not np.array_equal(initial(np.random.default_rng(0)), initial(np.random.default_rng(1)))
    rng = np.random.default_rng(0)
    assert np.array_equal(initial(rng), initial(np.random.default_rng(0)))
    assert not np.array_equal(initial(rng), initial(np.random.default_rng(0)))  # the Generator moved on


@pytest.mark.integration  # a fresh Python process
def test_a_fresh_process_gives_the_same_lists(data, tmp_path):
    X, neighbours = data
    np.save(tmp_path / "X.npy", X)
    script = textwrap.dedent(f"""
        import numpy as np
        from src.methods.graph.nndescent import approximate_neighbours
        X = np.load({str(tmp_path / "X.npy")!r})
        np.save({str(tmp_path / "found.npy")!r}, approximate_neighbours(X, 15, np.random.default_rng(0)))
    """)
    subprocess.run([sys.executable, "-c", script], cwd=REPO, check=True, timeout=600)
    np.testing.assert_array_equal(np.load(tmp_path / "found.npy"), neighbours)


def test_constant_features_and_a_power_of_two_scale_change_nothing(data):
    X = data[0][:500]
    reference = approximate_neighbours(X, 8, np.random.default_rng(5))
    with_constants = np.hstack([X, np.full((500, 3), 7.0)])
    np.testing.assert_array_equal(approximate_neighbours(with_constants, 8, np.random.default_rng(5)), reference)
    huge = X * 2.0**110  # squared distances beyond float32: searched at a smaller power of two
    np.testing.assert_array_equal(approximate_neighbours(huge, 8, np.random.default_rng(5)), reference)
    as_float32 = approximate_neighbours(X.astype(np.float32), 8, np.random.default_rng(5))
    np.testing.assert_array_equal(as_float32, reference)  # searched in float32 either way


@pytest.mark.parametrize("kwargs, match", [
    (dict(q=0), "q=0 must be an integer >= 1"),
    (dict(q=10), "q=10 must be at most n - 1 = 9"),
    (dict(q=2.0), "q=2.0 must be an integer >= 1"),
    (dict(n_trees=0), "n_trees=0 must be an integer >= 1"),
    (dict(leaf_size=1), "leaf_size=1 must be an integer >= 2"),
    (dict(max_candidates=0), "max_candidates=0 must be an integer >= 1"),
    (dict(max_iter=-1), "max_iter=-1 must be an integer >= 0"),
    (dict(delta=1.5), r"delta=1.5 must be a number in \[0, 1\)"),
])
def test_bad_arguments_name_the_parameter(kwargs, match, rng):
    arguments = dict(Y=rng.random((10, 3)), q=3, rng=np.random.default_rng(0)) | kwargs
    with pytest.raises(ConfigError, match=match):
        approximate_neighbours(**arguments)


@pytest.mark.parametrize("value", [np.nan, np.inf, 1e39])
def test_non_finite_or_out_of_range_samples_are_refused(value, rng):
    X = rng.random((10, 3))
    X[4, 1] = value
    with pytest.raises(ConfigError, match="Y must be finite and within float32's range"):
        approximate_neighbours(X, 3, np.random.default_rng(0))

"""Tests of COP-KMeans (Wagstaff et al. 2001; src.methods.copkmeans).

* the fast assignment (bounded, incremental) against a plain reference run written out here, and its bounds;
* the constraints (must-link and cannot-link of the labelled samples) hold, the best restart is kept, the
  partition objective is reported; seeds, attributes and bad parameters.

Restarts that reach the same partition under permuted labels tie up to rounding, so the kept run is
compared with the reference up to relabelling and its objective with a relative tolerance.
"""

import logging

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from src.errors import ConfigError
from src.methods.copkmeans import COPData, COPKMeans, FreeState, cop_kmeans_run

from helpers import assert_constraints_hold, blobs_around, partial


def reference_run(X, chunk_of, K, rng, max_iter):
    """COP-KMeans as the module docstring states it: every distance and every cluster sum at every step."""
    n = X.shape[0]
    free = np.flatnonzero(chunk_of < 0)
    n_chunks = int(chunk_of.max()) + 1 if chunk_of.size else 0
    sizes = np.array([np.sum(chunk_of == g) for g in range(n_chunks)])
    means = np.array([X[chunk_of == g].mean(axis=0) for g in range(n_chunks)] or np.zeros((0, X.shape[1])))
    centres = X[rng.choice(n, K, replace=False)].copy()
    order = rng.permutation(n_chunks)
    labels = None
    for n_iter in range(1, max_iter + 1):
        new = np.empty(n, dtype=np.int64)
        taken = []
        for g in order:
            cost = [np.inf if j in taken else sizes[g] * np.sum((means[g] - centres[j]) ** 2) for j in range(K)]
            j = int(np.argmin(cost))
            if not np.isfinite(cost[j]):
                return None, n_iter
            new[chunk_of == g] = j
            taken.append(j)
        d = ((X[free][:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
        new[free] = d.argmin(axis=1)
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
        for j in range(K):
            if np.any(labels == j):
                centres[j] = X[labels == j].mean(axis=0)
        empty = [j for j in range(K) if not np.any(labels == j)]
        if empty and free.size:
            far = np.argsort(-d.min(axis=1), kind="stable")[: len(empty)]
            centres[empty[: far.size]] = X[free[far]]
    return labels, n_iter


def blobs(rng, n, m, k, spread=1.0):
    centres = rng.normal(scale=4.0, size=(k, m))
    y = rng.integers(0, k, size=n)
    return centres[y] + rng.normal(scale=spread, size=(n, m)), y


def chunks_of(rng, y, fraction):
    chunk_of = np.full(y.size, -1)
    labelled = rng.random(y.size) < fraction
    chunk_of[labelled] = np.unique(y[labelled], return_inverse=True)[1]
    return chunk_of


def assert_same_run(X, chunk_of, K, seed, max_iter=300):
    labels, n_iter = cop_kmeans_run(X, chunk_of, K, np.random.default_rng(seed), max_iter)
    expected, expected_iter = reference_run(X, chunk_of, K, np.random.default_rng(seed), max_iter)
    assert n_iter == expected_iter
    np.testing.assert_array_equal(labels, expected)
    return labels


@pytest.mark.parametrize("seed", range(8))
def test_fast_run_equals_the_reference_on_overlapping_blobs(seed):
    rng = np.random.default_rng(seed)
    X, y = blobs(rng, 300, 6, 5, spread=2.5)  # overlapping: many samples change cluster late
    chunk_of = chunks_of(rng, y, 0.1)
    assert_same_run(X, chunk_of, 6, seed)


@pytest.mark.parametrize("seed", range(4))
def test_fast_run_equals_the_reference_without_labels_and_with_one_cluster(seed):
    rng = np.random.default_rng(seed)
    X, _ = blobs(rng, 200, 5, 4, spread=2.0)
    no_labels = np.full(200, -1)
    assert_same_run(X, no_labels, 4, seed)
    assert_same_run(X, no_labels, 1, seed)
    assert_same_run(X, no_labels, 4, seed, max_iter=3)  # stopped before convergence


def test_fast_run_equals_the_reference_with_every_sample_labelled(rng):
    X, y = blobs(rng, 60, 4, 3)
    assert_same_run(X, y.copy(), 4, 0)


@pytest.mark.parametrize("seed", range(6))
def test_fast_run_equals_the_reference_on_exact_ties_and_empty_clusters(seed):
    # integer points: distances are exact, so many are tied exactly; duplicated points start as identical
    # centres, whose clusters empty and get re-seeded
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(80, 2)).astype(float)
    chunk_of = np.full(80, -1)
    chunk_of[:4] = [0, 0, 1, 1]
    assert_same_run(X, chunk_of, 7, seed)


def test_the_bounds_skip_most_distance_computations(rng, monkeypatch):
    X, y = blobs(rng, 2000, 10, 5, spread=1.5)
    chunk_of = chunks_of(rng, y, 0.1)
    computed = []
    distances = COPData.distances

    def counting(self, pos, centres, cc):
        computed.append(pos.size)
        return distances(self, pos, centres, cc)

    monkeypatch.setattr(COPData, "distances", counting)
    labels, n_iter = cop_kmeans_run(X, chunk_of, 5, np.random.default_rng(0), 300)
    n_free = np.sum(chunk_of < 0)
    assert n_iter > 3 and computed[0] == n_free  # the first step computes everything
    assert sum(computed[1:]) < 0.5 * n_free * (n_iter - 1)


@pytest.mark.parametrize("seed", range(5))
def test_bounds_and_sums_stay_valid_while_centres_move(seed):
    rng = np.random.default_rng(seed)
    X, _ = blobs(rng, 150, 7, 4, spread=3.0)
    data = COPData(X, np.full(150, -1))
    K = 5
    state = FreeState(data, K)
    centres = X[:K].copy()
    state.assign(np.arange(150), centres)
    for _ in range(15):
        moved = centres + rng.normal(scale=rng.choice([0.01, 0.3, 2.0]), size=centres.shape)
        state.centres_moved(centres, moved)
        centres = moved
        state.assign(state.unsettled(centres), centres)
        true = np.sqrt(((X[:, None, :] - centres[None]) ** 2).sum(axis=2))
        np.testing.assert_array_equal(state.a, true.argmin(axis=1))
        own = true[np.arange(150), state.a]
        assert np.all(state.u >= own)
        others = np.where(np.arange(K)[None, :] == state.a[:, None], np.inf, true).min(axis=1)
        assert np.all(state.l <= others)
        for j in range(K):
            np.testing.assert_allclose(state.sums[j], X[state.a == j].sum(axis=0), rtol=1e-10, atol=1e-10)
        np.testing.assert_array_equal(state.sizes, np.bincount(state.a, minlength=K))


def test_fit_keeps_the_constraints_and_reports_the_partition_objective(rng):
    X, y = blobs(rng, 400, 8, 6, spread=3.0)
    y_partial = np.where(rng.random(400) < 0.15, y, -1)
    model = COPKMeans(n_components=6, n_restarts=4, random_state=3).fit(X, y_partial)
    labelled = np.flatnonzero(y_partial >= 0)
    same_class = y_partial[labelled][:, None] == y_partial[labelled][None, :]
    same_cluster = model.labels_[labelled][:, None] == model.labels_[labelled][None, :]
    np.testing.assert_array_equal(same_cluster, same_class)  # must-links kept, cannot-links kept
    within = sum(((X[model.labels_ == j] - X[model.labels_ == j].mean(axis=0)) ** 2).sum()
                 for j in np.unique(model.labels_))
    assert model.objective_ == pytest.approx(within, rel=1e-10)
    chunk_of = np.full(400, -1)
    chunk_of[labelled] = y_partial[labelled]
    draws = np.random.default_rng(3)
    runs = [reference_run(X, chunk_of, 6, draws, 300)[0] for _ in range(4)]  # the same 4 restarts
    objectives = np.array([sum(((X[r == j] - X[r == j].mean(axis=0)) ** 2).sum() for j in np.unique(r))
                           for r in runs])
    # The kept run is one of the best: restarts that reach the same partition under other labels tie up to
    # rounding (here restarts 0 and 3, ~1e-15 apart), and the floating-point path decides which one is kept.
    assert model.objective_ == pytest.approx(objectives.min(), rel=1e-10)
    best = [r for r, value in zip(runs, objectives) if value <= objectives.min() * (1 + 1e-10)]
    assert any(same_partition(model.labels_, r) for r in best)


def same_partition(a, b):
    """Whether two labellings are the same partition, up to renaming the clusters (a bijection of the labels)."""
    pairs = np.unique(np.stack([a, b]), axis=1)  # the distinct (label in a, label in b) pairs
    return pairs.shape[1] == np.unique(a).size == np.unique(b).size


def test_same_partition_is_equality_up_to_relabelling():
    a = np.array([0, 0, 1, 1, 2])
    assert same_partition(a, np.array([2, 2, 0, 0, 1]))
    assert not same_partition(a, np.array([0, 0, 1, 1, 1]))  # merged
    assert not same_partition(a, np.array([0, 1, 1, 1, 2]))  # one sample moved
    assert not same_partition(np.array([0, 0, 1, 1, 1]), a)  # split


# -- the fit: constraints, restarts, attributes ------------------------------------------------------
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
    X, _ = blobs_around(rng, [[0.0, 0.0], [10.0, 0.0]], 20, spread=0.1)
    y_partial = np.full(40, -1)
    y_partial[[0, 1]] = 0
    y_partial[[2, 3]] = 1
    labels = COPKMeans(n_components=2, random_state=0).fit_predict(X, y_partial)
    assert labels[0] == labels[1] and labels[2] == labels[3] and labels[0] != labels[2]


def test_copkmeans_recovers_separable_data(rng):
    X, y = blobs_around(rng, [[0, 0, 0], [6, 0, 0], [0, 6, 0], [0, 0, 6]], 25)
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
    X, y = blobs_around(rng, [[0, 0], [3, 0], [0, 3]], 15, spread=1.0)
    y_partial = partial(rng, y, 0.2)
    best = COPKMeans(n_components=3, n_restarts=20, random_state=4).fit(X, y_partial)
    first = COPKMeans(n_components=3, n_restarts=1, random_state=4).fit(X, y_partial)  # the first restart
    assert best.objective_ <= first.objective_ * (1 + 1e-10)  # the first restart may tie with the best
    within = sum(((X[best.labels_ == j] - X[best.labels_ == j].mean(axis=0)) ** 2).sum()
                 for j in np.unique(best.labels_))
    assert best.objective_ == pytest.approx(within, rel=1e-10)
    for j in np.unique(best.labels_):
        np.testing.assert_allclose(best.cluster_centers_[j], X[best.labels_ == j].mean(axis=0))


def test_copkmeans_without_labels_is_kmeans_at_a_fixed_point(rng):
    X, y = blobs_around(rng, [[0, 0], [4, 0], [0, 4]], 20)
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
    X, y = blobs_around(rng, [[0, 0], [5, 0], [0, 5]], 10)
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
    assert model.factors_ == {} and model.embedding_ is not None
    assert not hasattr(model, "objective_history_")  # no objective per iteration; n_iter_ counts its steps
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

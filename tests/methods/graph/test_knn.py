"""Tests of :mod:`src.methods.graph.knn`: the kNN graphs (Cai's constructW), the label graph, the Laplacian,
and the scalable neighbour search.

* the graph equals constructW written out densely (binary, heat, cosine weights), is symmetric with no self
  loops, and never builds a dense n x n array; the label graph and the Laplacian follow their definitions;
* ``algorithm="auto"`` is the exact search, bit for bit, up to ``EXACT_MAX_SAMPLES`` samples (every
  experiment of the papers), in the graph, in NPNMF's weights and in every graph method's fit;
* the NN-descent path (:mod:`src.methods.graph.nndescent`, tested on its own in test_nndescent.py) finds nearly
  every exact edge of clustered data, gives a symmetric graph with a zero diagonal and no self loops even
  with duplicated samples, and is reproducible from its seed. What the graph code hands to the search (the
  over-query, the seeded Generator) and keeps of it (the first k) is checked with a stand-in;
* the heat kernel's default t on a random subset above the threshold is close to the exact one;
* a bad ``knn_algorithm`` raises ConfigError naming the parameter and the value;
* a repeated exact search is served from the process's kept searches: equal to a fresh one, a copy, keyed by
  the samples, k, layout and threads, at most ``SEARCHES.limit_bytes`` of them; the approximate one is never kept.

Every test starts with no kept search (``fresh_searches``), so that each search it makes is its own.

The real NN-descent runs share one module fixture. They take about a second with numba's disk cache warm;
the first run after ``nndescent.py`` changed compiles it (about 13 s here), in whichever test file gets
there first.
"""

import logging

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.neighbors import kneighbors_graph, NearestNeighbors

from src.errors import ConfigError
from src.methods.graph import knn as kg
from src.methods.graph import nndescent
from src.methods.fnmf import FNMF
from src.methods.gnmf import GNMF, SemiGNMF
from src.methods.graph.knn import degree, knn_graph, label_graph, laplacian
from src.methods.npnmf import lle_weights, NPNMF
from src.methods.pcgnmf import PCGNMF
from src.methods.sda import SDA

from helpers import AT_THE_CAP, dense_knn, dense_label_graph, random_partial_labels, traced_peak

GRAPH_METHODS = [GNMF, SemiGNMF, PCGNMF, FNMF, NPNMF, SDA]


@pytest.fixture(autouse=True)
def fresh_searches():
    kg.SEARCHES.forget()
    yield
    kg.SEARCHES.forget()


def clustered(rng, n, m=20, n_clusters=10, spread=0.3):
    """n nonnegative points around n_clusters random centres in [0, 1]^m, shape (n, m)."""
    centres = rng.random((n_clusters, m))
    X = centres[rng.integers(0, n_clusters, n)] + spread * rng.random((n, m))
    return X


def partial_labels(n, n_labelled=20):
    y = np.full(n, -1)
    y[:n_labelled] = np.arange(n_labelled) % 2
    return y


def shared_edge_fraction(W_approx, W_exact):
    """Fraction of the exact graph's edges that the approximate graph also holds."""
    A, E = W_approx.tocsr().astype(bool), W_exact.tocsr().astype(bool)
    return E.multiply(A).nnz / E.nnz


def check_graph(W, n, k):
    """Symmetric, zero diagonal, nonnegative, every sample joined to at least k others."""
    assert W.shape == (n, n)
    assert abs(W - W.T).max() == 0
    assert np.all(W.diagonal() == 0)
    assert W.min() >= 0
    assert np.all(np.diff(W.indptr) >= k)


# -- auto is the exact search up to the threshold -----------------------------------------------------
def refuse_nndescent(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("nndescent must not run here")

    monkeypatch.setattr(kg, "_nndescent_neighbours", refuse)
    kg.SEARCHES.forget()  # what follows searches afresh, not from a search kept before


@pytest.mark.parametrize("weight", kg.WEIGHTS)
def test_auto_is_the_exact_graph_below_the_threshold(weight, rng, monkeypatch):
    X = clustered(rng, 300)
    exact = kg.knn_graph(X, 5, weight, algorithm="exact")
    refuse_nndescent(monkeypatch)
    auto = kg.knn_graph(X, 5, weight, random_state=0)
    assert (auto != exact).nnz == 0
    np.testing.assert_array_equal(auto.indices, exact.indices)
    np.testing.assert_array_equal(auto.data, exact.data)
    if weight == "binary":  # and the exact search is scikit-learn's kNN graph symmetrized by max
        reference = kneighbors_graph(X, 5, mode="connectivity", include_self=False)
        assert (auto != reference.maximum(reference.T)).nnz == 0


def test_auto_switches_to_nndescent_above_the_threshold(rng, monkeypatch):
    X = clustered(rng, 200)
    calls = []

    def fake(Y, k, generator):
        calls.append((Y.shape, k))
        return NearestNeighbors(n_neighbors=k).fit(Y).kneighbors(return_distance=False)

    monkeypatch.setattr(kg, "_nndescent_neighbours", fake)
    monkeypatch.setattr(kg, "EXACT_MAX_SAMPLES", 200)
    kg.knn_graph(X, 5)
    assert calls == []  # n = threshold: exact
    monkeypatch.setattr(kg, "EXACT_MAX_SAMPLES", 199)
    kg.knn_graph(X, 5)
    assert calls == [((200, 20), 5)]
    assert kg.resolve_algorithm("auto", 199) == "exact" and kg.resolve_algorithm("auto", 200) == "nndescent"
    assert kg.resolve_algorithm("exact", 10**6) == "exact"


def test_npnmf_weights_auto_are_the_exact_weights(rng, monkeypatch):
    X = clustered(rng, 200)
    exact = lle_weights(X, 5, algorithm="exact")
    refuse_nndescent(monkeypatch)
    auto = lle_weights(X, 5)
    assert (auto != exact).nnz == 0


@pytest.mark.parametrize("cls", GRAPH_METHODS, ids=lambda c: c.__name__)
@pytest.mark.filterwarnings(AT_THE_CAP)  # five iterations compared bit for bit
def test_every_graph_method_fits_bit_for_bit_the_same_with_auto(cls, rng, monkeypatch):
    X, y = clustered(rng, 60, m=8), partial_labels(60)
    params = dict(n_components=3, random_state=0)
    if cls is not SDA:
        params["max_iter"] = 5
    exact = cls(**params, knn_algorithm="exact").fit(X, y)
    refuse_nndescent(monkeypatch)
    auto = cls(**params).fit(X, y)
    assert auto.get_params()["knn_algorithm"] == "auto"
    for name, value in exact.factors_.items():
        np.testing.assert_array_equal(auto.factors_[name], value)
    if cls is SDA:
        np.testing.assert_array_equal(auto.embedding_, exact.embedding_)


# -- what the graph code asks of NN-descent, with a stand-in -----------------------------------------------
def test_nndescent_path_over_queries_and_keeps_the_nearest_k(rng, monkeypatch):
    X = rng.random((100, 6))
    calls = []

    def stand_in(Y, q, generator):  # the exact q nearest others, nearest first
        calls.append((Y, q, generator.integers(1000)))
        return NearestNeighbors(n_neighbors=q).fit(Y).kneighbors(return_distance=False)

    monkeypatch.setattr(nndescent, "approximate_neighbours", stand_in)
    found = kg.nearest_neighbours(X, 4, "nndescent", random_state=7)
    np.testing.assert_array_equal(found, kg.nearest_neighbours(X, 4, "exact"))
    (Y, q, draw), = calls
    assert Y is X and q == max(3 * 4, 21)  # the samples as given (the search makes its float32 copy)
    assert draw == np.random.default_rng(7).integers(1000)  # the Generator seeded by random_state
    kg.nearest_neighbours(X, 8, "nndescent", random_state=7)
    assert calls[1][1] == 3 * 8


def test_nndescent_is_exact_when_the_search_would_cover_every_sample(rng, monkeypatch):
    X = rng.random((21, 4))
    refuse_nndescent(monkeypatch)  # 21 samples <= max(3k, 21): nothing to gain from the approximation
    assert (kg.knn_graph(X, 3, algorithm="nndescent") != kg.knn_graph(X, 3, algorithm="exact")).nnz == 0


# -- the real NN-descent -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def clustered_graphs():
    """3000 clustered points: exact and NN-descent (seed 0) graphs."""
    X = clustered(np.random.default_rng(3), 3000)
    return X, kg.knn_graph(X, 5, algorithm="exact"), kg.knn_graph(X, 5, algorithm="nndescent", random_state=0)


def test_nndescent_graph_holds_nearly_every_exact_edge(clustered_graphs):
    X, exact, approx = clustered_graphs
    check_graph(approx, 3000, 5)
    assert shared_edge_fraction(approx, exact) >= 0.95
    assert abs(approx.nnz - exact.nnz) <= 0.05 * exact.nnz


def test_nndescent_is_reproducible_from_its_seed(clustered_graphs):
    X, exact, approx = clustered_graphs
    again = kg.knn_graph(X, 5, algorithm="nndescent", random_state=0)
    assert (again != approx).nnz == 0
    generator = kg.knn_graph(X, 5, algorithm="nndescent", random_state=np.random.default_rng(0))
    assert (generator != approx).nnz == 0  # an int seed and the Generator it seeds draw the same seed


def test_nndescent_with_duplicated_samples_has_no_self_loops(clustered_graphs):
    X = clustered_graphs[0][:1000]
    X_dup = np.concatenate([X, X, X])  # every sample three times: two neighbours at distance 0 each
    n, k = X_dup.shape[0], 5
    neighbours = kg.nearest_neighbours(X_dup, k, "nndescent", random_state=1)
    assert not np.any(neighbours == np.arange(n)[:, None])
    assert np.all(np.sort(neighbours, axis=1)[:, 1:] != np.sort(neighbours, axis=1)[:, :-1])  # distinct
    twins = np.sort(np.stack([np.arange(n) - 1000, np.arange(n) + 1000, np.arange(n) - 2000,
                              np.arange(n) + 2000], axis=1) % n, axis=1)
    found_twins = np.array([np.isin(row[:2], t).all() for row, t in zip(neighbours, twins)])
    assert found_twins.mean() >= 0.95  # the two copies come first (they are at distance 0)
    W = kg.knn_graph(X_dup, k, algorithm="nndescent", random_state=1)
    check_graph(W, n, k)
    assert shared_edge_fraction(W, kg.knn_graph(X_dup, k, algorithm="exact")) >= 0.9  # ties are ambiguous


@pytest.mark.filterwarnings(AT_THE_CAP)  # two iterations compared: the graph is checked
def test_npnmf_and_gnmf_use_the_seeded_nndescent_search(clustered_graphs):
    X, exact, approx = clustered_graphs
    M_exact = lle_weights(X, 5, algorithm="exact")
    M = lle_weights(X, 5, algorithm="nndescent", random_state=2)
    assert shared_edge_fraction(M, M_exact) >= 0.95
    np.testing.assert_allclose(np.asarray(M.sum(axis=1)).ravel(), 1.0)
    assert np.all(M.diagonal() == 0)
    first = GNMF(n_components=3, max_iter=2, random_state=4, knn_algorithm="nndescent").fit(X)
    second = GNMF(n_components=3, max_iter=2, random_state=4, knn_algorithm="nndescent").fit(X)
    assert (first.graph_ != second.graph_).nnz == 0
    np.testing.assert_array_equal(first.factors_["V"], second.factors_["V"])


# -- the heat kernel's default t ---------------------------------------------------------------------
def test_heat_default_t_on_a_subset_is_close_to_the_exact_one(rng, monkeypatch):
    X = clustered(rng, 6000, m=10)
    exact = kg.default_t(X, random_state=0)
    s = kg.mean_pairwise_distance(X)
    assert exact == 2 * s * s and kg.default_t(X, random_state=1) == exact  # exact: no randomness
    monkeypatch.setattr(kg, "EXACT_MAX_SAMPLES", 5000)
    subset = kg.default_t(X, random_state=0)
    assert subset != exact
    np.testing.assert_allclose(subset, exact, rtol=0.02)
    assert kg.default_t(X, random_state=0) == subset  # seeded
    # the graph's default t is the one seeded by its random_state (the exact search draws nothing before)
    W = kg.knn_graph(X, 5, "heat", algorithm="exact", random_state=0)
    reference = kg.knn_graph(X, 5, "heat", t=subset, algorithm="exact")
    assert (W != reference).nnz == 0


# -- bad values ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", GRAPH_METHODS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("value", ["abc", 3, None, "Exact"])
def test_bad_knn_algorithm_names_the_parameter(cls, value, rng):
    X, y = rng.random((12, 4)), partial_labels(12, 4)
    with pytest.raises(ConfigError, match=f"knn_algorithm={value!r} is not one of auto, exact, nndescent"):
        cls(knn_algorithm=value).fit(X, y)


@pytest.mark.parametrize("function", [kg.knn_graph, lle_weights, kg.nearest_neighbours])
def test_bad_algorithm_of_the_functions(function, rng):
    with pytest.raises(ConfigError, match="algorithm='kd_tree' is not one of"):
        function(rng.random((12, 4)), 3, algorithm="kd_tree")


# -- the graph ------------------------------------------------------------------------------------
@pytest.mark.parametrize("weight", ["binary", "heat", "cosine"])
def test_graph_is_symmetric_sparse_without_self_loops(weight, rng):
    X = rng.random((40, 6))
    W = knn_graph(X, n_neighbors=5, weight=weight)
    assert sp.issparse(W) and W.format == "csr" and W.shape == (40, 40)
    assert abs(W - W.T).max() == 0
    assert np.all(W.diagonal() == 0)
    assert np.all(np.diff(W.indptr) >= 5)  # every row keeps at least its own k neighbours
    assert W.data.min() > 0
    if weight == "binary":
        assert np.all(W.data == 1.0)
    else:
        assert W.data.max() <= 1.0


@pytest.mark.parametrize("weight", ["binary", "heat", "cosine"])
def test_graph_equals_constructW_written_densely(weight, rng):
    X = rng.random((30, 7))
    np.testing.assert_allclose(knn_graph(X, 4, weight).toarray(), dense_knn(X, 4, weight), rtol=1e-12, atol=0)


def test_heat_kernel_with_given_t_and_default_t(rng):
    X = rng.random((20, 5))
    A = dense_knn(X, 3, "binary")
    d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=-1)
    np.testing.assert_allclose(knn_graph(X, 3, "heat", t=0.7).toarray(), A * np.exp(-d2 / 0.7), rtol=1e-12)
    # identical samples: Cai's default t would be 0; the fallback t = 1 gives weights 1
    W = knn_graph(np.ones((6, 3)), 2, "heat")
    assert np.all(np.isfinite(W.data)) and np.all(W.data == 1.0)


def test_n_neighbors_above_n_is_clipped_with_a_warning(rng, caplog):
    X = rng.random((6, 3))
    with caplog.at_level(logging.WARNING):
        W = knn_graph(X, n_neighbors=20)
    assert "n_neighbors=20" in caplog.text
    np.testing.assert_array_equal(W.toarray(), 1.0 - np.eye(6))  # complete graph, no self loops


def test_duplicated_and_zero_samples_give_a_valid_graph(rng):
    X = rng.random((12, 4))
    X[3] = X[5]
    X[7] = 0.0
    for weight in ("binary", "heat", "cosine"):
        W = knn_graph(X, 3, weight)
        assert np.all(np.isfinite(W.data)) and abs(W - W.T).max() == 0 and np.all(W.diagonal() == 0)
    assert knn_graph(X, 3, "binary")[3, 5] == 1.0  # a duplicate is a neighbour (distance 0), not dropped


def test_graph_construction_never_builds_a_dense_n_by_n_array():
    n, m = 5000, 10
    X = np.random.default_rng(0).random((n, m))
    for weight in ("binary", "heat", "cosine"):
        W, peak = traced_peak(lambda: knn_graph(X, 5, weight))
        assert peak < n * n * 8 / 10, (weight, peak)
        assert W.nnz <= 2 * 5 * n


def test_label_graph_overwrites_only_the_labelled_block(rng):
    X = rng.random((25, 5))
    W = knn_graph(X, 4)
    y = random_partial_labels(rng, 25, 3, 12)
    W_before = W.copy()
    G = label_graph(W, y)
    assert sp.issparse(G)
    expected = dense_label_graph(W.toarray(), y)
    np.testing.assert_array_equal(G.toarray(), expected)
    np.testing.assert_array_equal(W.toarray(), W_before.toarray())  # input not modified
    labelled = np.flatnonzero(y >= 0)
    unlabelled = np.flatnonzero(y < 0)
    same = y[labelled][:, None] == y[labelled][None, :]
    block = G.toarray()[np.ix_(labelled, labelled)]
    assert np.all(block[same & ~np.eye(len(labelled), dtype=bool)] == 1)
    assert np.all(block[~same] == 0)
    assert np.all(np.diag(block) == 0)
    np.testing.assert_array_equal(G.toarray()[unlabelled], W.toarray()[unlabelled])
    np.testing.assert_array_equal(G.toarray()[:, unlabelled], W.toarray()[:, unlabelled])
    assert abs(G - G.T).max() == 0


def test_label_graph_without_labels_is_the_identity(rng):
    W = knn_graph(rng.random((10, 3)), 3)
    np.testing.assert_array_equal(label_graph(W, np.full(10, -1)).toarray(), W.toarray())
    with pytest.raises(ConfigError, match=r"y must have shape \(10,\)"):
        label_graph(W, np.zeros(9, dtype=int))


def test_laplacian(rng):
    W = knn_graph(rng.random((15, 4)), 3, "heat")
    D, L = degree(W), laplacian(W)
    assert sp.issparse(L)
    np.testing.assert_allclose(D, W.toarray().sum(axis=1), rtol=1e-14)
    np.testing.assert_allclose(L.toarray(), np.diag(D) - W.toarray(), rtol=1e-14)
    np.testing.assert_allclose(L @ np.ones(15), 0, atol=1e-13)


def test_a_share_of_the_samples_is_rounded_and_at_least_one():
    from src.methods.graph.knn import NEIGHBOURS, neighbour_count
    assert neighbour_count(5, 1000) == 5
    assert neighbour_count(0.015, 200) == 3 and neighbour_count(0.015, 3044) == 46
    assert neighbour_count(0.015, 50) == 1  # 0.75 rounds to 1
    assert neighbour_count(0.001, 20) == 1  # never fewer than one
    for bad in (0, 1.0, 1.5, -0.1, True):
        with pytest.raises(ConfigError):
            NEIGHBOURS.check("n_neighbors", bad)


@pytest.mark.parametrize("name", ["gnmf", "npnmf", "fnmf"])
@pytest.mark.filterwarnings(AT_THE_CAP)  # five iterations of both compared: the graph is checked
def test_a_share_builds_the_graph_of_that_many_neighbours(name, rng):
    from src.methods import REGISTRY
    X = rng.random((12, 100))
    share = REGISTRY[name](n_components=3, n_neighbors=0.03, max_iter=5, random_state=0)
    count = REGISTRY[name](n_components=3, n_neighbors=3, max_iter=5, random_state=0)
    np.testing.assert_allclose(share.fit_transform(X.T), count.fit_transform(X.T), rtol=1e-12)


# -- repeated searches ------------------------------------------------------------------------------------------
def counting_search(monkeypatch):
    """Count the exact searches :func:`kg.nearest_neighbours` runs (scikit-learn's NearestNeighbors.fit)."""
    fits = []
    real = NearestNeighbors.fit

    def fit(self, X, *args, **kwargs):
        fits.append(np.asarray(X).shape)
        return real(self, X, *args, **kwargs)

    monkeypatch.setattr(NearestNeighbors, "fit", fit)
    return fits


def test_a_repeated_exact_search_is_served_from_the_kept_one_and_equals_a_fresh_one(rng, monkeypatch):
    fits = counting_search(monkeypatch)
    X = rng.random((60, 8))
    first = kg.nearest_neighbours(X, 5)
    again = kg.nearest_neighbours(X.copy(), 5)  # the same values in another array
    assert len(fits) == 1 and np.array_equal(first, again)
    again[:] = 0  # a copy: the kept search is not changed through it
    assert np.array_equal(kg.nearest_neighbours(X, 5), first) and len(fits) == 1
    kg.SEARCHES.forget()
    assert np.array_equal(kg.nearest_neighbours(X, 5), first) and len(fits) == 2  # fresh, and the same
    for changed in (lambda: kg.nearest_neighbours(X, 4),  # another k
                    lambda: kg.nearest_neighbours(np.asfortranarray(X), 5),  # another layout
                    lambda: kg.nearest_neighbours(X.astype(np.float32), 5)):  # another dtype
        changed()
    assert len(fits) == 5
    Y = X.copy()
    Y[7, 3] += 1e-12  # one value changed by far less than any distance: another search all the same
    kg.nearest_neighbours(Y, 5)
    assert len(fits) == 6


def test_every_fit_of_a_graph_method_on_the_same_samples_searches_once(rng, monkeypatch):
    fits = counting_search(monkeypatch)
    X = rng.random((50, 12))
    y = partial_labels(50)
    graphs = [cls(3, alpha=alpha, max_iter=5, n_starts=1, stopping="fixed", random_state=0).fit(X, y).graph_
              for cls in (GNMF, PCGNMF) for alpha in (1.0, 10.0)]
    assert len(fits) == 1
    kg.SEARCHES.forget()
    fresh = GNMF(3, alpha=1.0, max_iter=5, n_starts=1, stopping="fixed", random_state=0).fit(X, y).graph_
    assert len(fits) == 2 and all((graph != fresh).nnz == 0 for graph in graphs)


def test_the_kept_searches_are_bounded_and_the_least_recent_goes_first(rng, monkeypatch):
    fits = counting_search(monkeypatch)
    monkeypatch.setattr(kg.SEARCHES, "limit_bytes", 2 * 30 * 3 * 8)  # two searches of 30 samples, k = 3
    A, B, C = (rng.random((30, 4)) for _ in range(3))
    for X in (A, B, A, C):  # A used again before C comes: B is the least recent
        kg.nearest_neighbours(X, 3)
    assert len(fits) == 3
    kg.nearest_neighbours(A, 3)
    assert len(fits) == 3
    kg.nearest_neighbours(B, 3)
    assert len(fits) == 4


def test_the_approximate_search_is_never_kept(rng, monkeypatch):
    calls = []

    def stand_in(Y, k, generator):
        calls.append(k)
        return np.tile(np.arange(1, k + 1), (Y.shape[0], 1))

    monkeypatch.setattr(kg, "_nndescent_neighbours", stand_in)
    X = rng.random((100, 4))
    for _ in range(2):
        kg.nearest_neighbours(X, 3, algorithm="nndescent", random_state=0)
    assert calls == [3, 3]

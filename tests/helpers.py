"""Helpers shared by several test files (imported as ``from helpers import ...``: tests/ is on sys.path)."""

import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
"""The environment variables conftest.py sets to 1 for the processes the tests start (one BLAS / OpenMP thread)."""

FIXED = {"stopping": "fixed", "n_starts": 1}
"""Estimator parameters of the old protocol: one start, exactly ``max_iter`` iterations, the objective after each."""

AT_THE_CAP_MESSAGE = r".*the reference stopping rule \(tol=[^)]*\) was not met within max_iter=\d+ iterations"
"""What the family's ConvergenceWarning says when a fit (or a transform) stops at ``max_iter`` before the
reference rule is met (src/methods/core/estimator.py), as a ``warnings.filterwarnings`` message."""
AT_THE_CAP = f"ignore:{AT_THE_CAP_MESSAGE}:sklearn.exceptions.ConvergenceWarning"
"""The filter of a test that stops fits at ``max_iter`` on purpose (``@pytest.mark.filterwarnings(AT_THE_CAP)``,
the reason beside it): that warning, that message only. A run keeps it for its report
(src/running/cell_warnings.py); such a test checks something else."""


# -- random starting points and labels -------------------------------------------------------------------
def initial_factors(rng, m, n, k):
    return {"U": rng.random((m, k)), "V": rng.random((n, k))}


def random_init(cls, rng, m, n, k, y=None):
    """Random factors of the shapes ``cls`` uses for m features, n samples, k components (no labels if y is None)."""
    if y is None:
        y = np.full(n, -1)
    shapes = cls(n_components=k)._factor_shapes(m, n, y)
    return {name: rng.random(shape) for name, shape in shapes.items()}


def random_partial_labels(rng, n, n_classes, n_labelled):
    """Labels in 0..n_classes-1 for n_labelled random samples, -1 elsewhere."""
    y = np.full(n, -1)
    chosen = rng.choice(n, n_labelled, replace=False)
    y[chosen] = rng.integers(0, n_classes, n_labelled)
    return y


def partial_labels(n, rng, classes=3, fraction=0.4):
    """Labels 0..classes-1 for about ``fraction`` of n samples (at least two per class), -1 elsewhere."""
    y = np.full(n, -1)
    chosen = rng.permutation(n)[: max(2 * classes, int(fraction * n))]
    y[chosen] = np.arange(chosen.size) % classes
    return y


def monotone(history):
    return np.all(np.diff(history) <= 1e-9 * history[0])


# -- dense reference graphs written out by hand ---------------------------------------------------
def dense_knn(X_rows, k, weight="binary"):
    """The graph of constructW (KNN mode) with dense matrices: n x n, for tiny n only."""
    n = X_rows.shape[0]
    diff = X_rows[:, None, :] - X_rows[None, :, :]
    d2 = (diff**2).sum(axis=-1)
    score = d2.copy()  # constructW ranks by Euclidean distance in every weight mode (bNormalized = 0)
    if weight == "cosine":
        Xn = X_rows / np.linalg.norm(X_rows, axis=1, keepdims=True)
        C = Xn @ Xn.T
    np.fill_diagonal(score, np.inf)
    neighbours = np.argsort(score, axis=1)[:, :k]
    A = np.zeros((n, n))
    A[np.arange(n)[:, None], neighbours] = 1.0
    A = np.maximum(A, A.T)
    if weight == "binary":
        return A
    if weight == "cosine":
        return A * C
    s = np.sqrt(d2).mean()  # Cai: t = mean(mean(EuDist2(fea))), kernel exp(-d^2 / (2 t^2))
    return A * np.exp(-d2 / (2 * s**2))


def dense_label_graph(W, y):
    W = W.copy()
    n = len(y)
    for i in range(n):
        for j in range(n):
            if i != j and y[i] >= 0 and y[j] >= 0:
                W[i, j] = 1.0 if y[i] == y[j] else 0.0
    return W


# -- blobs with partial labels, and the must-link / cannot-link check (COP-KMeans, SDA) ----------------------
def blobs_around(rng, centres, per_class, spread=0.3):
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



# -- properties shared by the graph methods (GNMF, SemiGNMF, NMF-NCW, NPNMF, FNMF, PCGNMF) ------------------
def check_objective_never_increases(cls, params, rng, n_labelled):
    """200 fixed iterations on random data with partial labels: the objective never increases (relative to
    its first value), ends lower, and the factors stay nonnegative and finite."""
    X = rng.random((25, 15))
    y = random_partial_labels(rng, 25, 3, n_labelled)
    model = cls(n_components=4, max_iter=200, random_state=0, **params, **FIXED).fit(X, y)
    history = model.objective_history_
    assert len(history) == 200
    assert np.all(np.diff(history) <= 1e-9 * abs(history[0]))
    assert history[-1] < history[0]
    for factor in model.factors_.values():
        assert np.all(factor >= 0) and np.all(np.isfinite(factor))


def check_degenerate_input_stays_finite(cls, params, rng):
    """Zero samples and features, duplicates and a rank above the data's: embedding, objective and factors finite."""
    X = rng.random((10, 8))
    X[3] = 0.0  # an all-zero sample
    X[:, 5] = 0.0  # an all-zero feature
    X[7] = X[2]  # duplicated samples
    y = np.array([0, -1, 1, -1, 0, -1, -1, 1, -1, 0])
    model = cls(n_components=12, max_iter=300, random_state=1, **params).fit(X, y)  # rank > data rank
    assert np.all(np.isfinite(model.embedding_)) and np.all(np.isfinite(model.objective_history_))
    for factor in model.factors_.values():
        assert np.all(factor >= 0) and np.all(np.isfinite(factor))


def check_same_seed_same_result_and_init_untouched(cls, rng):
    """Two fits with one random_state give the same embedding; a user's init dictionary is not modified."""
    X = rng.random((12, 6))
    a = cls(n_components=3, max_iter=20, random_state=7).fit_transform(X)
    b = cls(n_components=3, max_iter=20, random_state=7).fit_transform(X)
    np.testing.assert_array_equal(a, b)
    init = initial_factors(rng, 6, 12, 3)
    kept = {key: value.copy() for key, value in init.items()}
    cls(n_components=3, max_iter=5, init=init).fit(X)
    for key in init:
        np.testing.assert_array_equal(init[key], kept[key])


# -- stacks of starts (methods with ``batched = True``) -------------------------------------------------------
def check_starts_together_equal_each_alone(cls, params, rng, n_labelled=0):
    """4 starts advanced together (5 fixed iterations) reach the objectives and factors each reaches alone.

    X has 300 samples of 230 features: 69,000 entries, two blocks of samples in the fused passes of
    src.methods.core.products.SampleBlocks (4 starts of 3 components are narrow enough to be fused)."""
    n, m, k = 300, 230, 3
    X = rng.random((n, m))
    y = random_partial_labels(rng, n, 3, n_labelled) if n_labelled else None
    starts = [random_init(cls, rng, m, n, k, y) for _ in range(4)]
    together = cls(n_components=k, init=starts, n_starts=4, min_iter=5, stopping="fixed", max_iter=5,
                   **params).fit(X, y)
    assert len(together.start_objectives_) == 4
    for index, (start, value) in enumerate(zip(starts, together.start_objectives_)):
        alone = cls(n_components=k, init=start, max_iter=5, **params, **FIXED).fit(X, y)
        assert abs(alone.objective_history_[-1] - value) <= 1e-9 * abs(value), (index, value)
        if index == together.best_start_:
            for name, factor in alone.factors_.items():
                np.testing.assert_allclose(together.factors_[name], factor, rtol=1e-8)


def check_float32_fit(cls, params, rng, n_labelled=0, mixed_sign=False):
    """A float32 fit keeps float32 factors, its objective never increases (relative slack 1e-5) and ends
    lower than it began and near the float64 fit of the same (float32-representable) data."""
    X = rng.normal(size=(40, 15)) if mixed_sign else rng.random((40, 15))
    X = X.astype(np.float32).astype(np.float64)  # the same data (and graph) in both precisions
    y = random_partial_labels(rng, 40, 3, n_labelled) if n_labelled else None
    common = dict(n_components=4, random_state=0, n_starts=3, min_iter=5, stopping="fixed", max_iter=60, **params)
    single = cls(dtype="float32", **common).fit(X, y)
    double = cls(**common).fit(X, y)
    assert single.get_params()["dtype"] == "float32"
    assert all(factor.dtype == np.float32 for factor in single.factors_.values())
    assert single.embedding_.dtype == np.float32
    history = np.asarray(single.objective_history_)
    assert len(history) == 56 and np.all(np.isfinite(history))  # at the selection, then 55 updates
    assert np.all(np.diff(history) <= 1e-5 * abs(history[0])) and history[-1] < history[0]
    assert single.best_start_ == double.best_start_
    assert abs(history[-1] - double.objective_history_[-1]) <= 1e-3 * abs(double.objective_history_[-1])


# -- memory ---------------------------------------------------------------------------------------------
def traced_peak(call):
    """Run ``call()`` under tracemalloc: its result and the peak of traced memory in bytes."""
    tracemalloc.start()
    try:
        result = call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return result, peak


# -- comparing two fits ------------------------------------------------------------------------------------
def assert_same_fit(a, b, factors=("U", "V"), rtol=1e-10):
    """Two fitted models reached the same factors, objective history and embedding.

    ``factors`` names the factors compared: a name, or a pair (name in a, name in b) such as ("Z", "V")."""
    for name in factors:
        name_a, name_b = (name, name) if isinstance(name, str) else name
        np.testing.assert_allclose(a.factors_[name_a], b.factors_[name_b], rtol=rtol)
    np.testing.assert_allclose(a.objective_history_, b.objective_history_, rtol=rtol)
    np.testing.assert_allclose(a.embedding_, b.embedding_, rtol=rtol)


# --- result rows and paper homes for the reproduce, scorecard and explain tests ---------------------

def fake_rows(dataset, method, estimator, mean, ks=(2, 3), trials=6, seed=0, **columns):
    rng = np.random.default_rng(seed)
    return pd.DataFrame([{"dataset": dataset, "method": method, "estimator": estimator, "k": k, "trial": t,
                          "acc": mean + 0.01 * rng.standard_normal(), "nmi": mean, "fit_seconds": 0.1,
                          "kmeans_seconds": 0.1, **columns} for k in ks for t in range(trials)])


def make_home(tmp_path):
    home = tmp_path / "papers"
    (home / "toy").mkdir(parents=True)
    (home / "toy" / "reproduce.yaml").write_text("sweeps: [[]]\n")
    published = {"paper": "Toy", "families": {"GNMF": {"estimator": "gnmf", "param": "alpha", "value": 100}},
                 "claims": [{"dataset": "yale", "method": "CNMF", "baseline": "NMF", "metric": "acc", "gain": 5.0,
                             "source": "l.1"},
                            {"dataset": "yale", "method": "NMF", "baseline": "CNMF", "metric": "acc", "gain": 1.0,
                             "source": "l.2"}],
                 "published_averages": [{"dataset": "yale", "metric": "acc", "NMF": 50.0, "GNMF": 70.0}],
                 "causes": [{"dataset": "yale", "method": "GNMF", "cause": "a known reason", "verified_by": "a run"}]}
    (home / "toy" / "published.yaml").write_text(yaml.safe_dump(published))
    return home


def write_home(root, name, text):
    """A paper home ``root/name/`` whose reproduce.yaml holds ``text``."""
    (root / name).mkdir(parents=True)
    (root / name / "reproduce.yaml").write_text(text)


# -- the pool's toy papers (tests/running/pool/, tests/test_reproduce.py) ---------------------------------------------
TOY_EXPERIMENT = """# @package _global_
defaults:
  - override /protocol: {protocol}
  - _self_
protocol:
  ks: [2, 3]
  n_trials: 2
  kmeans_restarts: 3
dataset:
  preprocess: unit_norm
hydra:
  sweep:
    dir: ${{paths.output_dir}}/reproduce/{name}/runs
    subdir: ${{dataset.name}}_${{safe_name:${{method.label}}}}
  sweeper:
    params:
      dataset: yale
      method: {methods}
"""
TOY_HOMES = {"toy": ("cnmf", "kmeans,nmf,cnmf"), "toy2": ("cnmf", "kmeans,nmf")}


def toy_papers(root: Path, names=("toy", "toy2")) -> tuple[list, list[str]]:
    """Two toy papers: ``toy`` (CNMF's labelling: KMeans, NMF and CNMF on Yale) and ``toy2`` (the same labelling:
    KMeans and NMF on Yale, cells ``toy`` has too), their settings ``root/experiment/<name>.yaml`` on a Hydra
    search path of their own and their homes ``root/papers/<name>/``, and the overrides that find them (the
    search path) and keep them small."""
    for name in names:
        protocol, methods = TOY_HOMES[name]
        home = root / "papers" / name
        home.mkdir(parents=True, exist_ok=True)
        (home / "reproduce.yaml").write_text("sweeps:\n  - []\n")
        settings = root / "experiment" / f"{name}.yaml"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(TOY_EXPERIMENT.format(protocol=protocol, name=name, methods=methods))
    from src.reproduction import homes as papers

    chosen = [papers.load(name, root / "papers") for name in names]
    return chosen, [f"hydra.searchpath=[file://{root}]", "solver=fixed", "solver.max_iter=20",
                    f"paths.output_dir={root / 'outputs'}"]


def in_process(fail=None):
    """A stand-in for :func:`src.running.pool.workers.run_local`: each item by :func:`work` here, in order; the items
    for which ``fail(item)`` holds answer an error instead."""
    from src.running.pool.workers import Done, work

    def run(items, workers):
        for item in items:
            yield Done(item.task, "RuntimeError: a worker broke") if fail and fail(item) else work(item)
    return run


def toy_benchmark(root: Path, methods: str = "kmeans,nmf,cnmf,cf", track: str = "toylabels", protocol: str = "cnmf"):
    """A benchmark track on the toy papers' search path, its settings ``root/experiment/benchmark/<track>.yaml``
    and its home ``root/papers/benchmark/<track>/``: ``protocol``'s labelling (CNMF's) on Yale, ``methods``,
    written into
    ``outputs/benchmark/<track>/runs``; returns its :class:`Paper`. The track needs a name the project's
    ``conf/experiment/benchmark/`` does not use: the project's configs come first on the search path."""
    home = root / "papers" / "benchmark" / track
    home.mkdir(parents=True, exist_ok=True)
    (home / "reproduce.yaml").write_text("sweeps:\n  - []\n")
    settings = root / "experiment" / "benchmark" / f"{track}.yaml"
    settings.parent.mkdir(parents=True, exist_ok=True)
    text = TOY_EXPERIMENT.format(protocol=protocol, name=track, methods=methods)
    settings.write_text(text.replace("/reproduce/", "/benchmark/"))
    from src.reproduction import homes as papers

    return papers.load(track, root / "papers" / "benchmark", "benchmark")

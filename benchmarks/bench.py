"""Speed and scale benchmark of every registered method: ``make bench`` -> outputs/bench/bench.md, bench.csv.

A plain script (not a test). The parent process loads the data once and starts one fresh child process per
measurement, one at a time. A child reads its own peak resident memory (``resource.getrusage(RUSAGE_SELF)
.ru_maxrss``) right after its fit: the peak of that fit plus the Python runtime and the data. Children run
under ``threadpool_limits(--threads)`` (BLAS and OpenMP; default ``runtime.blas_threads`` of
conf/config.yaml, the threads of one protocol job) and never two at a time, so no thread pools compete for
the cores; no joblib workers are used.

For every method of ``src.methods.REGISTRY`` on Yale, COIL20, MNIST-10k and MNIST-70k at rank 10 (10% of
each class labelled, for the methods that use labels):

* ms / iter: mean wall time of one pass of the shared loop (the method's update and the objective the loop
  records), first pass excluded, from a fit of 200 iterations (``--timed-iters``, default 20, on MNIST-10k).
  kmeans, copkmeans and sda do not iterate through the loop: their fit is timed as a whole (n/a per
  iteration);
* time to a fit of 200 iterations: measured, except on MNIST-10k where it is (fit - loop time) + 200 x the
  loop time per iteration, marked "est."; on MNIST-70k a fit still running after ``--fit-cap`` seconds is
  stopped (it has failed the 2-minute target) with its peak memory so far (VmHWM);
* peak memory: ru_maxrss of the child (whole process); for n <= 10,000 also the tracemalloc peak (numpy's
  allocations) of a separate 2-iteration fit, which on MNIST-10k shows whether an n x n array was allocated;
* (a) ms / iter over scikit-learn's ``NMF(solver="mu", tol=0)`` per iteration on the same data (Frobenius;
  KL for the KL methods), from the difference of two fits (2 and 2 + N iterations, N >= 20 and about 1 s);
* (b) ms / iter over the GEMM lower bound: the flops of the m x n x k products one iteration needs
  (:data:`PRODUCTS`) at the throughput of plain X^T U and X V products on the same data in the same run
  ("x peak GEMM": at a square 2000 x 2000 DGEMM's throughput instead);
* the protocol cost of one trial: the 200-iteration fit plus KMeans best of 20 (Euclidean, random starts) on
  its representation, 10 clusters, all samples;
* cf, ccf, lcf on MNIST-10k (n = 10,000): an iteration with the implicit kernel against the explicit-kernel
  formulation (``concept_rules`` / ``lcf_rules`` with ``kernel="explicit"``), same data and start;
* nmf in float32 against float64 on MNIST-10k: speed, and AC/NMI over protocol trials (only the
  factorization runs in float32; the same float64 KMeans clusters both), with a second float64 seed as the
  noise scale;
* the wall time of each ``make reproduce-<paper>`` (outputs/reproduce/<paper>/wall_seconds.txt).

Usage::

    python benchmarks/bench.py                      # the full run (about 30 min on 2 quiet cores)
    python benchmarks/bench.py --quick              # small sizes, few iterations: tests the script
    python benchmarks/bench.py --methods nmf,cf --datasets yale,mnist10k --threads 2
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import math
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

DATASETS = {"yale": "Yale", "coil20": "COIL20", "mnist10k": "MNIST-10k", "mnist": "MNIST-70k"}
RANK = 10
FIT_ITERS = 200
KMEANS_RESTARTS = 20
LABEL_FRACTION = 0.1
TIME_LIMIT_S = 120.0  # every method fits MNIST-70k in under 2 minutes ...
MEMORY_LIMIT_MB = 4096.0  # ... with peak memory under 4 GB
EXPLICIT_SPEEDUP = 20.0  # cf, ccf, lcf at n = 10,000: at least this much faster than the explicit kernel
REPRODUCE_ALL_LIMIT_MIN = 60.0  # make reproduce-all (all five papers) under an hour
SKLEARN_RATIO = 1.0  # nmf and nmf_kl per iteration <= this x scikit-learn's MU
CONCEPT = ("cf", "ccf", "lcf")
BIG = "mnist"  # the data set of the 2-minute / 4 GB target
EXPLICIT_DATASET = "mnist10k"
EXTRAPOLATED = "mnist10k"  # the data set timed over --timed-iters iterations; 200 measured elsewhere

PRODUCTS = {
    # m x n x k products one iteration needs (each 2 m n k flops; k x k and sparse terms not counted)
    "nmf": 2, "nmf_ncw": 2, "sparse_nmf": 2, "nlcf": 2, "cnmf": 2,  # X^T U, X V
    "gnmf": 2, "semignmf": 2,  # X^T U, X V (+ the sparse graph product W V, O(nnz k), not counted)
    "nmf_kl": 4, "cnmf_kl": 4,  # U V^T twice, (X / Y)^T U, (X / Y) V
    "cf": 4, "ccf": 4, "lcf": 4,  # X W, X^T (X W), X V, X^T (X V)
    "ntf": 2,  # X C, X^T (A (.) B)
}
KL_METHODS = ("nmf_kl", "cnmf_kl")
KNN_METHODS = ("gnmf", "semignmf", "sda", "npnmf", "fnmf", "pcgnmf")  # build a kNN graph (NN-descent above 30,000)


# ---------------------------------------------------------------------------------------------------------
# helpers shared by parent and children
# ---------------------------------------------------------------------------------------------------------
def current_rss_mb() -> float:
    """Resident set size of this process now, in MB (Linux /proc)."""
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return math.nan


def peak_rss_mb() -> float:
    """ru_maxrss of this process (kilobytes on Linux) in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def method_params(name: str) -> dict:
    """The parameters of conf/method/<name>.yaml (the configured variant the experiments run)."""
    from omegaconf import OmegaConf

    path = REPO / "conf" / "method" / f"{name}.yaml"
    if not path.exists():
        return {}
    return dict(OmegaConf.to_container(OmegaConf.load(path), resolve=True).get("params") or {})


class LoopTimer:
    """Replaces the shared loop (src.methods.base.solve) by a copy that times every update and objective."""

    def __init__(self):
        import src.methods.base as base
        from src.methods.loop import solve

        self._base, self._solve = base, solve
        self.loops: list[dict] = []

    def __enter__(self):
        def timed_solve(starts, update, objective, stopping):
            record = {"iterations": [], "objective_s": 0.0, "start": time.perf_counter()}

            def timed_update(f):
                record["t0"] = time.perf_counter()
                update(f)

            def timed_objective(f):
                start = time.perf_counter()
                value = objective(f)
                end = time.perf_counter()
                if "t0" in record:  # the objective before the first update is not an iteration
                    record["iterations"].append(end - record.pop("t0"))
                    record["objective_s"] += end - start
                return value

            out = self._solve(starts, timed_update, timed_objective, stopping)
            record["total"] = time.perf_counter() - record.pop("start")
            self.loops.append(record)
            return out

        self._base.solve = timed_solve
        return self

    def __exit__(self, *exc):
        self._base.solve = self._solve


def per_iteration(times: list[float]) -> float:
    """Mean time of an iteration, the first one (warm-up) excluded when there are three or more."""
    if not times:
        return math.nan
    times = times[1:] if len(times) >= 3 else times
    return float(np.mean(times))


def load_cached(cache: str) -> dict:
    data = np.load(cache, allow_pickle=False)
    shape = data["image_shape"]
    return {
        "X": data["X"],
        "y": data["y"],
        "y_partial": data["y_partial"],
        "image_shape": tuple(int(v) for v in shape) if shape.size else None,
    }


def best_of(fn, repeats: int) -> tuple[float, float]:
    """(min, mean) wall time of ``repeats`` calls of fn."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), float(np.mean(times))


# ---------------------------------------------------------------------------------------------------------
# child measurements
# ---------------------------------------------------------------------------------------------------------
def child_yardstick(spec: dict) -> dict:
    """BLAS throughput (square and the data's skinny products) and scikit-learn's MU per iteration."""
    import warnings

    from sklearn.decomposition import NMF as SklearnNMF

    data = load_cached(spec["cache"])
    X_rows = data["X"]
    n, m = X_rows.shape
    k = RANK
    rng = np.random.default_rng(0)
    size = spec["square"]
    A = rng.random((size, size))
    A @ A  # warm-up
    t_square, _ = best_of(lambda: A @ A, 3)
    del A
    U, V = rng.random((m, k)), rng.random((n, k))
    X_rows.T @ V  # warm-up
    # X = X_rows.T (m x n): X^T U and X V as written (tall-skinny) and in the short-wide form (k x m)(m x n)
    t_xtu, _ = best_of(lambda: X_rows @ U, 5)
    t_xv, _ = best_of(lambda: X_rows.T @ V, 5)
    t_xtu_wide, _ = best_of(lambda: (U.T @ X_rows.T).T, 5)
    t_xv_wide, _ = best_of(lambda: (V.T @ X_rows).T, 5)
    best = min(t_xtu, t_xtu_wide) + min(t_xv, t_xv_wide)
    out = {
        "square_gflops": 2 * size**3 / t_square / 1e9,
        "xtu_ms": 1e3 * t_xtu,
        "xv_ms": 1e3 * t_xv,
        "xtu_wide_ms": 1e3 * t_xtu_wide,
        "xv_wide_ms": 1e3 * t_xv_wide,
        "skinny_gflops": 2 * (2 * m * n * k) / best / 1e9,
    }
    def sklearn_fit(loss, n_iter):
        model = SklearnNMF(k, solver="mu", beta_loss=loss, init="random", max_iter=n_iter, tol=0.0, random_state=0)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X_rows)
        return time.perf_counter() - start

    for key, loss in (("sk_fro_ms", "frobenius"), ("sk_kl_ms", "kullback-leibler")):
        # per iteration = (t(2 + N) - t(2)) / N, N at least spec["iters"] and enough for about a second of
        # iterations, so that the difference is not noise on small data; min of 3 repeats unless slow
        per = sklearn_fit(loss, 2 + spec["iters"]) / (2 + spec["iters"])  # an overestimate (includes the init)
        n_iter = int(min(max(spec["iters"], 1.0 / max(per, 1e-6)), 2000))
        repeats = 3 if per * n_iter < 3.0 else 1
        short = min(sklearn_fit(loss, 2) for _ in range(repeats))
        long = min(sklearn_fit(loss, 2 + n_iter) for _ in range(repeats))
        out[key] = 1e3 * max(long - short, 0.0) / n_iter
        out[key.replace("_ms", "_iters")] = n_iter
    return out


def make_model(name: str, image_shape, iters: int | None, seed: int = 0):
    """Method ``name`` at rank 10 with its configured parameters (exactly ``iters`` iterations from one start)."""
    from src import methods
    from src.protocol import method_params as protocol_params

    params = method_params(name)
    if iters is not None and "max_iter" in methods.REGISTRY[name]._get_param_names():
        params.update(max_iter=iters, stopping="fixed", n_starts=1)
    return methods.make(name, **protocol_params(name, params, RANK, seed, image_shape))


def fit_model(model, X, y_partial) -> float:
    """Fit (or fit_predict, for a method that clusters directly); returns the wall time."""
    start = time.perf_counter()
    if getattr(model, "clusters_directly", False):
        model.fit_predict(X, y_partial)
    else:
        model.fit(X, y_partial)
    return time.perf_counter() - start


def update_only_ms(name: str, X_rows: np.ndarray, iters: int) -> float:
    """ms per call of nmf's or nmf_kl's update alone, without the objective the loop records after it.

    scikit-learn's MU with ``tol=0`` never evaluates its loss, so this is the like-for-like time; the
    targets still use the loop's full pass.
    """
    from src.methods.nmf import frobenius_rules
    from src.methods.nmf_kl import kl_rules

    X = X_rows.T
    update, _ = (kl_rules if name == "nmf_kl" else frobenius_rules)(X)
    rng = np.random.default_rng(0)
    factors = {"U": rng.random((X.shape[0], RANK)), "V": rng.random((X.shape[1], RANK))}
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        update(factors)
        times.append(time.perf_counter() - start)
    return 1e3 * per_iteration(times)


def child_method(spec: dict) -> dict:
    """One method on one data set: traced 2-iteration fit, timed fit, peak memory, KMeans best of 20."""
    from src import methods
    from src.clustering import best_kmeans
    from src.methods.base import Factorization
    from src.metrics import accuracy, nmi

    data = load_cached(spec["cache"])
    X, y, y_partial, image_shape = data["X"], data["y"], data["y_partial"], data["image_shape"]
    n, m = X.shape
    name = spec["method"]
    cls = methods.REGISTRY[name]
    iterative = issubclass(cls, Factorization)
    direct = getattr(cls, "clusters_directly", False)
    out = {"iterative": iterative, "rss_before_mb": current_rss_mb()}

    if spec["trace"]:  # also the warm-up
        model = make_model(name, image_shape, 2 if iterative else None)
        tracemalloc.start()
        try:
            fit_model(model, X, y_partial)
            out["traced_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
        finally:
            tracemalloc.stop()
        del model

    model = make_model(name, image_shape, spec["iters"] if iterative else None)
    Path(spec["result"] + ".fit_started").write_text(str(time.time()))  # the parent may stop a fit over its cap
    with LoopTimer() as timer:
        fit_s = fit_model(model, X, y_partial)
    Path(spec["result"] + ".fit_done").write_text(str(time.time()))
    out["peak_rss_mb"] = peak_rss_mb()
    out["fit_s"] = fit_s
    if iterative and timer.loops:
        main = timer.loops[-1]  # the method's own loop (CCF first runs an NMF loop for its initial factors)
        out["n_iter"] = len(main["iterations"])
        out["per_iter_ms"] = 1e3 * per_iteration(main["iterations"])
        out["objective_ms"] = 1e3 * main["objective_s"] / max(len(main["iterations"]), 1)
        loop_s = sum(loop["total"] for loop in timer.loops)
        out["setup_s"] = fit_s - loop_s
        out["n_loops"] = len(timer.loops)
        if out["n_iter"] == FIT_ITERS:
            out["fit200_s"], out["fit200_measured"] = fit_s, True
        else:  # setup + 200 x each loop's time per iteration
            per_loop = [loop["total"] / max(len(loop["iterations"]), 1) for loop in timer.loops]
            out["fit200_s"], out["fit200_measured"] = out["setup_s"] + FIT_ITERS * sum(per_loop), False
    else:
        out["fit200_s"], out["fit200_measured"], out["setup_s"] = fit_s, True, fit_s

    if name in ("nmf", "nmf_kl"):
        out["update_only_ms"] = update_only_ms(name, X, max(3, min(spec["iters"], 20)))

    start = time.perf_counter()
    if direct:
        predicted = model.labels_
        out["kmeans_s"] = 0.0
    else:
        predicted, _ = best_kmeans(model.embedding_, RANK, KMEANS_RESTARTS, "euclidean", 0)
        out["kmeans_s"] = time.perf_counter() - start
    out["protocol_s"] = out["fit200_s"] + out["kmeans_s"]
    out["acc"] = accuracy(y, predicted)
    out["nmi"] = nmi(y, predicted)
    return out


def child_explicit(spec: dict) -> dict:
    """cf, ccf, lcf: one iteration with the implicit kernel and with the explicit one, same data and init."""
    from src.methods.concept import concept_rules
    from src.methods.label_matrix import label_matrix
    from src.methods.lcf import lcf_rules

    data = load_cached(spec["cache"])
    X = data["X"].T  # m x n, the papers' orientation (a view, as the methods use it)
    n = X.shape[1]
    name = spec["method"]
    A = label_matrix(data["y_partial"]) if name == "ccf" else None
    lam = float(method_params("lcf").get("lam", 0.3))
    rng = np.random.default_rng(0)
    coefficient = "Z" if A is not None else "V"
    init = {"W": rng.random((n, RANK)), coefficient: rng.random((A.shape[1] if A is not None else n, RANK))}

    def rules(kernel):
        return lcf_rules(X, lam, kernel) if name == "lcf" else concept_rules(X, A, kernel)

    out = {}
    for kernel, reps in (("implicit", spec["implicit_iters"]), ("explicit", spec["explicit_iters"])):
        factors = {key: value.copy() for key, value in init.items()}
        start = time.perf_counter()
        update, objective = rules(kernel)
        objective(factors)
        out[f"{kernel}_setup_s"] = time.perf_counter() - start
        times = []
        for _ in range(reps):
            start = time.perf_counter()
            update(factors)
            objective(factors)
            times.append(time.perf_counter() - start)
        out[f"{kernel}_ms"] = 1e3 * per_iteration(times)
        out[f"{kernel}_peak_rss_mb"] = peak_rss_mb()
        del update, objective
    out["speedup"] = out["explicit_ms"] / out["implicit_ms"]
    out["n"] = n
    return out


def nmf_in_dtype(X_rows, k, seed, max_iter, dtype):
    """Frobenius NMF (the project's rules and loop) run in ``dtype``; returns (embedding, history, loop)."""
    from src.methods.base import Factorization
    from src.methods.loop import Stopping, solve
    from src.methods.nmf import frobenius_rules

    X = np.asarray(X_rows, dtype=dtype).T
    m, n = X.shape
    shapes = Factorization(n_components=k)._factor_shapes(m, n, None)
    rng = np.random.default_rng(seed)
    factors = {name: rng.random(shape).astype(dtype) for name, shape in shapes.items()}  # the same draws
    update, objective = frobenius_rules(X)
    times = []

    def timed_update(f):
        start = time.perf_counter()
        update(f)
        times.append(time.perf_counter() - start)

    solution = solve([factors], timed_update, objective, Stopping("fixed", max_iter=max_iter))
    factors, history = solution.factors, solution.history
    embedding = factors["V"] * np.linalg.norm(factors["U"], axis=0)
    return embedding.astype(np.float64), np.asarray(history), times


def child_dtype(spec: dict) -> dict:
    """nmf in float32 and float64: AC/NMI over protocol trials (plus a second float64 seed as noise), speed."""
    from src import methods
    from src.clustering import best_kmeans
    from src.metrics import accuracy, nmi
    from src.protocol import make_trial, subrun_seed

    data = load_cached(spec["cache"])
    X, y = data["X"], data["y"]
    iters = spec["iters"]
    # the float64 path is the project's NMF exactly
    check = min(200, X.shape[0])
    ref = methods.make("nmf", n_components=3, max_iter=5, random_state=1, stopping="fixed",
                       n_starts=1).fit(X[:check]).embedding_
    mine = nmf_in_dtype(X[:check], 3, 1, 5, np.float64)[0]
    assert np.allclose(ref, mine, rtol=1e-12, atol=0), "float64 path differs from src.methods.NMF"

    rows = []
    for k in spec["ks"]:
        for trial_number in range(spec["trials"]):
            trial = make_trial(y, spec["dataset"], k, trial_number, 0, {"mode": "none"})
            Xt = X[trial.index]
            row = {"k": k, "trial": trial_number, "n": int(trial.index.size)}
            for label, dtype, seed in (("f64", np.float64, trial.init_seed), ("f32", np.float32, trial.init_seed),
                                       ("f64b", np.float64, subrun_seed(trial.init_seed, 1))):
                embedding, history, _ = nmf_in_dtype(Xt, k, seed, iters, dtype)
                predicted, _ = best_kmeans(embedding, k, KMEANS_RESTARTS, "euclidean", trial.kmeans_seed)
                row[f"acc_{label}"] = accuracy(trial.y_true, predicted)
                row[f"nmi_{label}"] = nmi(trial.y_true, predicted)
                row[f"obj_{label}"] = float(history[-1])
            rows.append(row)
    speed = {}
    for label, dtype in (("f64", np.float64), ("f32", np.float32)):
        nmf_in_dtype(X, RANK, 0, 2, dtype)  # warm-up
        _, _, times = nmf_in_dtype(X, RANK, 0, spec["speed_iters"], dtype)
        speed[f"update_ms_{label}"] = 1e3 * per_iteration(times)
    return {"rows": rows, **speed, "n": int(X.shape[0])}


CHILDREN = {"yardstick": child_yardstick, "method": child_method, "explicit": child_explicit, "dtype": child_dtype}


def child_main(spec_path: str) -> None:
    from threadpoolctl import threadpool_info, threadpool_limits

    spec = json.loads(Path(spec_path).read_text())
    result_path = Path(spec["result"])
    with threadpool_limits(limits=spec["threads"]):
        pools = sorted({(p["user_api"], p["num_threads"]) for p in threadpool_info()})
        try:
            result = CHILDREN[spec["kind"]](spec)
            result["status"] = "ok"
        except MemoryError:
            result = {"status": "error", "error": "MemoryError"}
        except Exception as exc:  # reported in the table, the run goes on
            result = {"status": "error", "error": f"{type(exc).__name__}: {exc}"[:300]}
    result["thread_pools"] = [f"{api}={threads}" for api, threads in pools]
    result_path.write_text(json.dumps(result))


# ---------------------------------------------------------------------------------------------------------
# parent: orchestration
# ---------------------------------------------------------------------------------------------------------
def peak_rss_of(pid: int) -> float:
    """Peak resident memory so far (VmHWM) of a running process, in MB (Linux /proc)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return math.nan


class Runner:
    """Starts one child per measurement, sequentially, and collects its JSON result.

    ``fit_cap`` (seconds, per call): a method child whose fit runs longer is stopped; its result then says
    so, with the peak memory it had reached (enough to decide a time target that it has already failed).
    """

    def __init__(self, work: Path, threads: int, timeout: float, memory_cap_gb: float | None):
        self.work = work
        self.threads = threads
        self.timeout = timeout
        self.memory_cap = memory_cap_gb
        self.count = 0

    def _limit(self):
        if self.memory_cap:
            cap = int(self.memory_cap * 2**30)
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    def run(self, kind: str, fit_cap: float | None = None, **spec) -> dict:
        self.count += 1
        spec_path = self.work / f"spec_{self.count}.json"
        result_path = self.work / f"result_{self.count}.json"
        started = Path(f"{result_path}.fit_started")
        spec.update(kind=kind, threads=self.threads, result=str(result_path))
        spec_path.write_text(json.dumps(spec))
        env = dict(os.environ)
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = str(self.threads)
        log_path = self.work / f"child_{self.count}.log"
        start = time.perf_counter()
        with open(log_path, "w") as log:
            proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--child", str(spec_path)],
                                    env=env, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, preexec_fn=self._limit)
            stopped = None
            while proc.poll() is None:
                time.sleep(0.2)
                now = time.perf_counter() - start
                fit_running = started.exists() and not Path(f"{result_path}.fit_done").exists()
                if fit_cap and fit_running and time.time() - float(started.read_text() or time.time()) > fit_cap:
                    stopped = f"fit stopped after {fit_cap:.0f} s (over the limit)"
                elif now > self.timeout:
                    stopped = f"stopped after {self.timeout:.0f} s (--timeout)"
                if stopped:
                    peak = peak_rss_of(proc.pid)
                    proc.kill()
                    proc.wait()
                    return {"status": "stopped", "error": stopped, "peak_rss_mb": peak, "fit_s": fit_cap,
                            "wall_s": time.perf_counter() - start}
        wall = time.perf_counter() - start
        if result_path.exists():
            result = json.loads(result_path.read_text())
        else:
            lines = log_path.read_text().strip().splitlines()
            result = {"status": "error", "error": f"child died ({proc.returncode}): {(lines or ['?'])[-1]}"[:300]}
        result["wall_s"] = wall
        return result


def prepare_data(names, work: Path, n_cap: dict) -> dict:
    """Load each data set once (src.data.named), subsample in quick mode, cache X, y, partial labels."""
    from src.data.named import load_named
    from src.protocol import make_trial

    info = {}
    for name in names:
        ds = load_named(name)
        X, y = ds.X, ds.y
        cap = n_cap.get(name)
        if cap and X.shape[0] > cap:
            keep = np.sort(np.random.default_rng(0).choice(X.shape[0], cap, replace=False))
            X, y = X[keep], y[keep]
            y = np.searchsorted(np.unique(y), y)
        n_classes = int(y.max()) + 1
        # 10% of each class labelled (the CNMF protocol's scheme), drawn by the protocol's own code
        trial = make_trial(y, name, n_classes, 0, 0, {"mode": "fraction", "fraction": LABEL_FRACTION})
        assert np.array_equal(trial.index, np.arange(y.size)) and np.array_equal(trial.y_true, y)
        y_partial = trial.y_partial
        path = work / f"{name}.npz"
        np.savez(path, X=X, y=y, y_partial=y_partial,
                 image_shape=np.asarray(ds.image_shape if ds.image_shape else (), dtype=np.int64))
        info[name] = {"cache": str(path), "n": int(X.shape[0]), "m": int(X.shape[1]), "classes": n_classes,
                      "labelled": int((y_partial >= 0).sum()), "sparsity": float((X == 0).mean()),
                      "order": "C" if X.flags["C_CONTIGUOUS"] else "F"}
    return info


def reproduce_walls() -> dict:
    """Wall time of each ``make reproduce-<paper>`` (outputs/reproduce/<paper>/wall_seconds.txt)."""
    papers = re.findall(r"^reproduce-([\w-]+):", (REPO / "Makefile").read_text(), flags=re.M)
    out = {}
    for paper in papers:
        folder = REPO / "outputs" / "reproduce" / paper
        wall = folder / "wall_seconds.txt"
        if wall.exists():
            seconds = float(wall.read_text().split()[0])
            out[paper] = f"{seconds:.0f} s ({seconds / 60:.1f} min)"
            out[f"{paper}_seconds"] = seconds
        elif (folder / ".start").exists():
            started = dt.datetime.fromtimestamp(int((folder / ".start").read_text().split()[0]))
            out[paper] = f"not run to the end (started {started:%Y-%m-%d %H:%M}, no wall_seconds.txt)"
        else:
            out[paper] = "not run"
    return out


def fmt(value, digits=1, suffix=""):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:,.{digits}f}{suffix}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes and few iterations (tests the script)")
    parser.add_argument("--methods", default="", help="comma-separated method names (default: every registered one)")
    parser.add_argument("--datasets", default="", help=f"comma-separated, from {','.join(DATASETS)}")
    parser.add_argument("--out", default=str(REPO / "outputs" / "bench"), help="output folder")
    parser.add_argument("--threads", type=int, default=None,
                        help="BLAS/OpenMP threads of each child (children run one at a time; default: "
                             "runtime.blas_threads of conf/config.yaml, as every protocol job runs)")
    parser.add_argument("--timed-iters", type=int, default=None,
                        help="iterations of the timed fit on MNIST-10k (default 20; 200 on the others)")
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds before a child is stopped")
    parser.add_argument("--fit-cap", type=float, default=TIME_LIMIT_S + 5,
                        help="on MNIST-70k, stop a fit running longer than this many seconds: it has failed the "
                             "2-minute target already (0 = never)")
    parser.add_argument("--memory-cap-gb", type=float, default=16.0,
                        help="address-space limit of each child (0 = none), so a runaway fit fails alone")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child_main(args.child)
        return 0

    from src.methods import NAMES, REGISTRY
    from src.methods.base import Factorization

    quick = args.quick
    names = [m for m in args.methods.split(",") if m] or list(NAMES)
    unknown = [m for m in names if m not in NAMES]
    if unknown:
        parser.error(f"unknown method {unknown[0]!r}; registered: {', '.join(NAMES)}")
    datasets = [d for d in args.datasets.split(",") if d] or (["yale", EXPLICIT_DATASET, BIG] if quick else list(DATASETS))
    threads = args.threads or configured_threads()
    if any(d not in DATASETS for d in datasets):
        parser.error(f"--datasets takes names from {', '.join(DATASETS)}")
    timed_iters = args.timed_iters or (5 if quick else 20)
    direct_iters = 10 if quick else FIT_ITERS
    n_cap = {"coil20": 600, "mnist10k": 1000, "mnist": 3000} if quick else {}
    square = 500 if quick else 2000
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="bench_", dir=out_dir))
    runner = Runner(work, threads, args.timeout, args.memory_cap_gb or None)
    started = time.perf_counter()
    load_before = os.getloadavg()
    log = lambda msg: print(f"[bench {time.perf_counter() - started:7.1f}s] {msg}", flush=True)  # noqa: E731

    from src.errors import UserError

    try:
        log(f"loading {', '.join(datasets)}")
        try:
            info = prepare_data(datasets, work, n_cap)
        except UserError as exc:  # missing data, bad mirror: one line, as the other entry points
            print(f"[bench] {exc}", file=sys.stderr)
            return 2
        rows, yard = [], {}
        for ds in datasets:
            d = info[ds]
            iters = timed_iters if ds == EXTRAPOLATED else direct_iters
            log(f"{DATASETS[ds]}: BLAS and scikit-learn yardstick")
            yard[ds] = runner.run("yardstick", cache=d["cache"], square=square, iters=min(iters, 20, timed_iters))
            for name in names:
                result = runner.run("method", cache=d["cache"], method=name, iters=iters,
                                    trace=d["n"] <= (1000 if quick else 10_000),
                                    fit_cap=(args.fit_cap or None) if ds == BIG else None)
                result.update(method=name, dataset=ds)
                result.setdefault("iterative", issubclass(REGISTRY[name], Factorization))  # also when stopped
                rows.append(result)
                log(f"{DATASETS[ds]} {name}: " + (
                    f"{fmt(result.get('per_iter_ms'), 2)} ms/it, fit {fmt(result.get('fit200_s'), 2)} s, "
                    f"peak {fmt(result.get('peak_rss_mb'), 0)} MB" if result["status"] == "ok" else
                    f"{result['status']}: {result['error']}"))
        explicit = {}
        if EXPLICIT_DATASET in info:
            for name in (c for c in CONCEPT if c in names):
                log(f"explicit vs implicit kernel: {name}")
                explicit[name] = runner.run("explicit", cache=info[EXPLICIT_DATASET]["cache"], method=name,
                                            implicit_iters=6 if quick else 30, explicit_iters=3)
        dtype = None
        dtype_ds = "yale" if quick else "mnist10k"
        if "nmf" in names and dtype_ds in info:
            log(f"nmf float32 vs float64 on {DATASETS[dtype_ds]}")
            dtype = runner.run("dtype", cache=info[dtype_ds]["cache"], dataset=dtype_ds,
                               ks=[3, 5] if quick else [3, 6, 10], trials=2,
                               iters=20 if quick else FIT_ITERS, speed_iters=5 if quick else 20)
            dtype["dataset"] = dtype_ds
        meta = {
            "date": dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
            "mode": "quick (small sizes, few iterations: checks the script, not the targets)" if quick else "full",
            "host": f"{platform.node()}, {os.cpu_count()} cores, Python {platform.python_version()}",
            "threads": threads,
            "load_before": load_before,
            "load_after": os.getloadavg(),
            "timed_iters": timed_iters,
            "direct_iters": direct_iters,
            "elapsed_s": time.perf_counter() - started,
            "versions": versions(),
            "command": " ".join(["python benchmarks/bench.py", *sys.argv[1:]]),
        }
        write_outputs(out_dir, meta, info, yard, rows, explicit, dtype, reproduce_walls(), quick)
        log(f"wrote {out_dir / 'bench.md'} and {out_dir / 'bench.csv'}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def configured_threads() -> int:
    """runtime.blas_threads of conf/config.yaml (the threads of one protocol job); all cores when null."""
    from omegaconf import OmegaConf

    try:
        value = OmegaConf.load(REPO / "conf" / "config.yaml").runtime.blas_threads
    except Exception:  # no such key: the library default
        value = None
    return int(value) if value else (os.cpu_count() or 1)


def versions() -> str:
    import scipy
    import sklearn
    from threadpoolctl import threadpool_info

    blas = sorted({f"{p.get('internal_api')} {p.get('version')}" for p in threadpool_info() if p["user_api"] == "blas"})
    return f"numpy {np.__version__}, scipy {scipy.__version__}, scikit-learn {sklearn.__version__}; BLAS: {', '.join(blas)}"


# ---------------------------------------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------------------------------------
CSV_COLUMNS = [
    "dataset", "method", "status", "n", "m", "k", "iterative", "n_iter", "per_iter_ms", "objective_ms",
    "sklearn_ref", "x_sklearn", "update_only_ms", "x_sklearn_update", "gemm_bound_ms", "x_gemm", "x_peak", "setup_s", "fit_s", "fit200_s",
    "fit200_measured", "peak_rss_mb", "rss_before_mb", "traced_peak_mb", "nn_mb", "nn_ok", "kmeans_s", "protocol_s",
    "acc", "nmi", "wall_s", "threads", "error",
]


def derive(row: dict, info: dict, yard: dict) -> dict:
    """Add the two ratios of a method row: (a) over scikit-learn MU, (b) over the GEMM lower bound."""
    d, y = info[row["dataset"]], yard.get(row["dataset"], {})
    row.update(n=d["n"], m=d["m"], k=RANK)
    if row.get("traced_peak_mb") is not None:  # an n x n float32 array: 4 n^2 bytes
        row["nn_mb"] = 4.0 * d["n"] ** 2 / 2**20
        row["nn_ok"] = row["traced_peak_mb"] < row["nn_mb"]
    per_iter = row.get("per_iter_ms")
    if per_iter is None or y.get("status") != "ok":
        return row
    ref = "KL" if row["method"] in KL_METHODS else "Frobenius"
    sk = y["sk_kl_ms"] if ref == "KL" else y["sk_fro_ms"]
    row.update(sklearn_ref=ref, x_sklearn=per_iter / sk)
    if row.get("update_only_ms") is not None:
        row["x_sklearn_update"] = row["update_only_ms"] / sk
    products = PRODUCTS.get(row["method"])
    if products:
        flops = products * 2.0 * d["m"] * d["n"] * RANK
        row["gemm_bound_ms"] = 1e3 * flops / (y["skinny_gflops"] * 1e9)
        row["x_gemm"] = per_iter / row["gemm_bound_ms"]
        row["x_peak"] = per_iter / (1e3 * flops / (y["square_gflops"] * 1e9))
    return row


def verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("PASS" if ok else "**FAIL**")


def big_reason(r: dict, info: dict, yard: dict) -> str:
    """Why a method misses the MNIST-70k target, when the run tells."""
    if r["method"] in KNN_METHODS and r.get("setup_s") is not None:
        return f"; kNN graph (NN-descent, including its ~25 s numba compilation) and setup {r['setup_s']:.0f} s"
    if r.get("setup_s") and r.get("fit200_s") and r["setup_s"] > 0.5 * r["fit200_s"]:
        return f"; setup {r['setup_s']:.0f} s of it"
    return ""


def write_outputs(out_dir, meta, info, yard, rows, explicit, dtype, walls, quick):
    rows = [derive(dict(row), info, yard) for row in rows]
    by = {(r["dataset"], r["method"]): r for r in rows}
    with open(out_dir / "bench.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({**row, "threads": meta["threads"]})

    L = ["# Speed and scale benchmark\n"]
    L.append(f"- run: {meta['date']}, mode **{meta['mode']}**, {meta['elapsed_s'] / 60:.1f} min; "
             f"command: `{meta['command']}`")
    L.append(f"- machine: {meta['host']}; load average before {'/'.join(f'{v:.2f}' for v in meta['load_before'])}, "
             f"after {'/'.join(f'{v:.2f}' for v in meta['load_after'])} (a load above the number of cores means "
             "other work shared the machine: the times are inflated and the ratios noisy)")
    L.append(f"- {meta['versions']}; each measurement in a fresh child process, one at a time, "
             f"BLAS/OpenMP threads = {meta['threads']} (threadpoolctl), no joblib workers")
    L.append(f"- rank k = {RANK}; {int(LABEL_FRACTION * 100)}% of each class labelled (for the methods that take "
             f"labels); timed fit: {meta['direct_iters']} iterations, measured, on Yale, COIL20 and MNIST-70k; "
             f"{meta['timed_iters']} on {DATASETS[EXTRAPOLATED]}, the 200-iteration time extrapolated (est.); "
             "ms / iter = mean pass of the shared loop (update + the objective it records), first pass excluded")
    L.append("- peak RSS = ru_maxrss of the child process (interpreter, libraries, the data and the fit; for a fit "
             "stopped at the cap, its VmHWM when stopped); traced peak = tracemalloc peak of the numpy "
             "allocations of a separate 2-iteration fit (whole fit for non-iterative methods), n <= 10,000 only\n")

    # -- targets ------------------------------------------------------------------------------------------
    L.append("## Targets\n")
    L.append("| target | data set | measured | limit | result |")
    L.append("| --- | --- | --- | --- | --- |")
    for name in ("nmf", "nmf_kl"):
        for ds in info:
            r = by.get((ds, name))
            if r and r.get("x_sklearn") is not None:
                alone = (f" (update alone {r['update_only_ms']:.2f} ms = {r['x_sklearn_update']:.2f}x)"
                         if r.get("x_sklearn_update") is not None else "")
                L.append(f"| {name} per iteration vs scikit-learn MU ({r['sklearn_ref']}) | {DATASETS[ds]} | "
                         f"{r['per_iter_ms']:.2f} ms = {r['x_sklearn']:.2f}x{alone} | <= {SKLEARN_RATIO:.1f}x | "
                         f"{verdict(r['x_sklearn'] <= SKLEARN_RATIO)} |")
    for name, e in explicit.items():
        if e.get("status") == "ok":
            L.append(f"| {name} explicit / implicit kernel per iteration | {DATASETS[EXPLICIT_DATASET]} "
                     f"(n = {e['n']:,}) | {e['explicit_ms']:.1f} / {e['implicit_ms']:.1f} ms = {e['speedup']:.1f}x | "
                     f">= {EXPLICIT_SPEEDUP:.0f}x | {verdict(e['speedup'] >= EXPLICIT_SPEEDUP)} |")
        else:
            L.append(f"| {name} explicit / implicit kernel | {DATASETS[EXPLICIT_DATASET]} | {e.get('error')} | "
                     f">= {EXPLICIT_SPEEDUP:.0f}x | **FAIL** |")
    for name in CONCEPT:
        r = by.get((EXPLICIT_DATASET, name))
        if r and r.get("traced_peak_mb") is not None:
            L.append(f"| {name}: no n x n array (traced peak < 4 n^2 bytes, an n x n float32) | "
                     f"{DATASETS[EXPLICIT_DATASET]} (n = {r['n']:,}) | {r['traced_peak_mb']:.1f} MB | "
                     f"{r['nn_mb']:.1f} MB | {verdict(r['nn_ok'])} |")
    if BIG in info:
        for r in (r for r in rows if r["dataset"] == BIG):
            name = r["method"]
            iterative = r.get("iterative", True)
            # a method that is not a factorization (kmeans, sda) is timed with the KMeans best of 20 it runs on
            # its representation: for the KMeans baseline that clustering of the raw samples is all its work
            label = f"fit of {FIT_ITERS} iterations" if iterative else f"whole fit + KMeans best of {KMEANS_RESTARTS}"
            head = f"| {name}: {label} < {TIME_LIMIT_S:.0f} s, peak RSS < 4 GB | MNIST-70k (n = {info[BIG]['n']:,}) | "
            limit = f"{TIME_LIMIT_S:.0f} s, {MEMORY_LIMIT_MB:,.0f} MB"
            if r["status"] == "stopped":
                L.append(head + f"{r['error']}; peak so far {fmt(r.get('peak_rss_mb'), 0)} MB{big_reason(r, info, yard)} | "
                         f"{limit} | **FAIL** |")
            elif r["status"] != "ok":
                L.append(head + f"{r['error']} | {limit} | **FAIL** |")
            else:
                measured = "" if r["fit200_measured"] else " (est.)"
                seconds = r["fit200_s"] if iterative else r["protocol_s"]
                ok = seconds < TIME_LIMIT_S and r["peak_rss_mb"] < MEMORY_LIMIT_MB
                reason = "" if ok else big_reason(r, info, yard)
                L.append(head + f"{seconds:.1f} s{measured}, {r['peak_rss_mb']:,.0f} MB{reason} | {limit} | "
                         f"{verdict(ok)} |")
    pools = sorted({p for r in rows for p in r.get("thread_pools", [])})
    oversub = any(int(p.split("=")[1]) > (os.cpu_count() or 1) for p in pools)
    L.append(f"| no oversubscription: children one at a time, thread pools {', '.join(pools) or 'n/a'} | all | "
             f"{meta['threads']} thread(s) x 1 process | <= {os.cpu_count()} cores | {verdict(not oversub)} |")
    if "all_seconds" in walls:
        minutes = walls["all_seconds"] / 60
        L.append(f"| make reproduce-all (outputs/reproduce/all/wall_seconds.txt) | all five papers | {minutes:.1f} min | "
                 f"< {REPRODUCE_ALL_LIMIT_MIN:.0f} min | {verdict(minutes < REPRODUCE_ALL_LIMIT_MIN)} |")
    else:
        L.append(f"| make reproduce-all | all five papers | {walls.get('all', 'not run')} | "
                 f"< {REPRODUCE_ALL_LIMIT_MIN:.0f} min | not measured |")
    L.append("\nnmf / nmf_kl per iteration: the loop's full pass (the update and the objective it records after "
             "every iteration), which the verdict uses; scikit-learn's MU with tol=0 evaluates no loss, so the "
             "update alone, in parentheses, is the like-for-like time.")
    if quick:
        L.append("\n*Quick mode: the sizes are small and the targets above are not meaningful.*")
    L.append("")

    # -- per data set tables ------------------------------------------------------------------------------
    L.append("## Per data set\n")
    for ds, d in info.items():
        y = yard.get(ds, {})
        L.append(f"### {DATASETS[ds]}: n = {d['n']:,} samples, m = {d['m']} features, {d['classes']} classes, "
                 f"{d['labelled']} labelled, {100 * d['sparsity']:.0f}% zeros\n")
        if y.get("status") == "ok":
            L.append(f"Yardstick (same run): square DGEMM {y['square_gflops']:.1f} GFLOPS; X^T U {y['xtu_ms']:.2f} ms "
                     f"as written, {y['xtu_wide_ms']:.2f} ms as (U^T X)^T; X V {y['xv_ms']:.2f} ms, "
                     f"{y['xv_wide_ms']:.2f} ms as (V^T X^T)^T; the faster of each: {y['skinny_gflops']:.1f} GFLOPS, "
                     f"the GEMM-bound throughput. scikit-learn NMF(solver='mu') per iteration: Frobenius "
                     f"{y['sk_fro_ms']:.2f} ms, KL {y['sk_kl_ms']:.2f} ms.\n")
        else:
            L.append(f"Yardstick failed: {y.get('error')}\n")
        L.append("| method | ms / iter | x sklearn MU | x GEMM bound | x peak GEMM | fit 200 it (s) | setup (s) | "
                 "peak RSS (MB) | traced peak (MB) | KMeans x20 (s) | protocol trial (s) | AC | NMI |")
        L.append("| --- | " + " | ".join(["---:"] * 12) + " |")
        for r in (r for r in rows if r["dataset"] == ds):
            if r["status"] == "stopped":
                L.append(f"| {r['method']} | | | | | > {fmt(r.get('fit_s'), 0)} (stopped) | | "
                         f"{fmt(r.get('peak_rss_mb'), 0)} so far | | | | | |")
                continue
            if r["status"] != "ok":
                L.append(f"| {r['method']} | {r['error']} |" + " |" * 11)
                continue
            sk = f"{r['x_sklearn']:.2f} ({'KL' if r['sklearn_ref'] == 'KL' else 'F'})" if r.get("x_sklearn") else "n/a"
            fit = fmt(r["fit200_s"], 2) + ("" if r["fit200_measured"] else " est.")
            if not r["iterative"]:
                fit += " (whole fit)"
            L.append(f"| {r['method']} | {fmt(r.get('per_iter_ms'), 2)} | {sk} | {fmt(r.get('x_gemm'), 1)} | "
                     f"{fmt(r.get('x_peak'), 1)} | {fit} | {fmt(r.get('setup_s'), 2)} | {fmt(r['peak_rss_mb'], 0)} | "
                     f"{fmt(r.get('traced_peak_mb'), 1)} | {fmt(r['kmeans_s'], 2)} | {fmt(r['protocol_s'], 2)} | "
                     f"{r['acc']:.3f} | {r['nmi']:.3f} |")
        L.append("")
    L.append("x sklearn MU: ms / iter over scikit-learn's MU per iteration on the same data (F = Frobenius loss, the "
             "yardstick for every method; KL for the KL methods). x GEMM bound: ms / iter over the time of the "
             "m x n x k products one iteration needs (PRODUCTS in the script: 2 for the NMF-like methods, 4 for the "
             "KL and concept methods) at the faster measured X^T U / X V throughput; x peak GEMM: the same at the "
             "square-DGEMM throughput. est. = setup + 200 x the measured time per iteration. Protocol trial = fit "
             "of 200 iterations + KMeans best of 20 (Euclidean, random starts) on all samples, 10 clusters; AC / NMI "
             "of that clustering against all labels are a sanity check, not results. n/a: not an iterative "
             "factorization (timed as a whole fit).\n")

    # -- explicit kernel ----------------------------------------------------------------------------------
    if explicit:
        L.append(f"## Implicit vs explicit kernel ({DATASETS[EXPLICIT_DATASET]})\n")
        L.append("| method | implicit ms / iter | explicit ms / iter | speed-up | flop ratio | explicit setup "
                 "(K, K+, K-) s | explicit peak RSS (MB) |")
        L.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        m = info[EXPLICIT_DATASET]["m"]
        for name, e in explicit.items():
            if e.get("status") != "ok":
                L.append(f"| {name} | {e.get('error')} | | | | | |")
                continue
            ratio = (3 * e["n"] + 2 * m) / (4 * m)
            L.append(f"| {name} | {e['implicit_ms']:.2f} | {e['explicit_ms']:.1f} | {e['speedup']:.1f}x | "
                     f"{ratio:.1f} | {e['explicit_setup_s']:.1f} | {e['explicit_peak_rss_mb']:,.0f} |")
        L.append("\nBoth from the same initial factors; one iteration = update + objective, as the loop runs them. "
                 "Flop ratio: the explicit iteration multiplies K+, K- and K (n x n) by n x k factors and its "
                 "objective takes X W and X V (3 n^2 k + 2 m n k), the implicit one four m x n x k products "
                 "(4 m n k): (3n + 2m) / 4m. A speed-up above it comes from the n x n products' memory traffic.\n")

    # -- dtype --------------------------------------------------------------------------------------------
    if dtype is not None:
        L.append(f"## nmf in float32 vs float64 ({DATASETS[dtype['dataset']]})\n")
        if dtype.get("status") != "ok":
            L.append(f"failed: {dtype.get('error')}\n")
        else:
            L.extend(dtype_section(dtype))

    # -- reproduce ----------------------------------------------------------------------------------------
    L.append("## Wall time of the reproduce targets\n")
    L.append("From outputs/reproduce/<paper>/wall_seconds.txt (written by each target; whatever ran on the machine "
             "at the same time is included).\n")
    L.append("| target | wall time |")
    L.append("| --- | --- |")
    for paper, wall in walls.items():
        if not paper.endswith("_seconds"):
            L.append(f"| make reproduce-{paper} | {wall} |")
    L.append(f"\nTarget: `make reproduce-all` under {REPRODUCE_ALL_LIMIT_MIN:.0f} minutes.")
    L.append("")
    (out_dir / "bench.md").write_text("\n".join(L))


def dtype_section(dtype: dict) -> list[str]:
    rows = dtype["rows"]
    L = []
    f64, f32 = dtype["update_ms_f64"], dtype["update_ms_f32"]
    L.append(f"Speed (update only, n = {dtype['n']:,}, rank {RANK}): float64 {f64:.2f} ms, float32 {f32:.2f} ms "
             f"per iteration ({f64 / f32:.2f}x).\n")
    L.append("| k | trial | n | AC f64 | AC f32 | AC f64, 2nd seed | NMI f64 | NMI f32 | NMI f64, 2nd seed | "
             "rel. objective gap f32 |")
    L.append("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        gap = abs(r["obj_f32"] - r["obj_f64"]) / abs(r["obj_f64"])
        L.append(f"| {r['k']} | {r['trial']} | {r['n']} | {r['acc_f64']:.3f} | {r['acc_f32']:.3f} | {r['acc_f64b']:.3f} | "
                 f"{r['nmi_f64']:.3f} | {r['nmi_f32']:.3f} | {r['nmi_f64b']:.3f} | {gap:.1e} |")
    for metric in ("acc", "nmi"):
        d_dtype = np.array([r[f"{metric}_f32"] - r[f"{metric}_f64"] for r in rows])
        d_seed = np.array([r[f"{metric}_f64b"] - r[f"{metric}_f64"] for r in rows])
        changed = int(np.sum(d_dtype != 0))
        se = d_dtype.std(ddof=1) / np.sqrt(d_dtype.size) if d_dtype.size > 1 else math.nan
        beyond = abs(d_dtype.mean()) > 2 * se if changed and se > 0 else False
        noise = float(np.mean(np.abs(d_seed)))
        L.append(f"\n{metric.upper()}: float32 - float64 mean {d_dtype.mean():+.4f} (standard error {fmt(se, 4)}), "
                 f"mean |difference| {np.mean(np.abs(d_dtype)):.4f} in {changed} of {d_dtype.size} trials; "
                 f"noise scale (a second float64 seed) mean |difference| {noise:.4f}. "
                 + ("**float32 changes it beyond noise.**" if beyond and np.mean(np.abs(d_dtype)) > noise
                    else "Not beyond noise."))
    L.append("")
    return L


if __name__ == "__main__":
    sys.exit(main())

"""The measurements of every target, in one run: :class:`Bench` turns a :class:`Plan` into report rows.

* Item 1: the wall time of the last ``make reproduce-all``; beside it, where that reproduction's time went
  (:mod:`.reproduction`: work, the arithmetic bound at the GEMM rate of one thread, simulated schedules).

Which methods a target covers is read from the classes (:mod:`.facts`): the iterating methods (subclasses
of ``Factorization``) for items 2, 3 and 6, all of them and the KMeans baseline for item 4; the loss of the
scikit-learn comparison is the class's ``loss``; labels go to a method whose class ``needs_labels``.

* Item 2: ms per iteration of the kept start (:class:`.measure.PassTimer`: update plus the objective the
  loop evaluates) of a one-start fit of about ``budget_s`` seconds of iterations after a warm-up fit, at
  one BLAS thread and at all cores; scikit-learn's MU per iteration by
  :func:`.measure.sklearn_per_iteration_ms` at the same rank. nmf and nmf_kl (:data:`SKLEARN_METHODS`)
  have the limit, at every rank of ``sklearn_ranks`` (k = 10 and 20), one row per rank; every other
  iterating method's ratio, at ``rank``, is reported beside its time to convergence (item 6).
* Item 3: one fit of ``n_starts`` = 10 starts, ``min_iter`` = ``max_iter`` = 30 under
  ``stopping="fixed"`` (the selection phase and nothing else) against ten one-start fits of 30 iterations
  (``random_state`` seed, seed + 1, ...), whole ``fit`` calls at one thread after a warm-up fit.
* Item 4: in a child process each (:func:`.measure.run_in_child`), at all cores: a one-start fit of 200
  iterations under ``stopping="fixed"``, stopped past ``cap_factor`` x its limit; the ``kmeans`` method
  through the protocol (:func:`src.protocol.cell.fit_and_cluster`: KMeans best of ``kmeans_restarts``).
* Item 5: nmf and the first selected KL method that takes ``dtype``: per iteration in float64 and float32,
  and protocol trials (:func:`src.protocol.cell.fit_and_cluster`, the configured solver) in float64, float32 and
  float64 from a second seed (:func:`src.protocol.cell.subrun_seed`), at one thread.
* Item 6: each iterating method with its configured parameters (the reference rule, 10 starts) at one
  thread, stopped past ``convergence_cap_s``.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from threadpoolctl import threadpool_limits

from src.reproduction import homes as papers
from src.errors import one_line
from src.protocol.cell import fit_and_cluster, subrun_seed
from src.protocol.trials import make_trial
from src.running.settings import MethodSpec, freeze, protocol_spec
from src.reproduction.runner import START, WALL
from . import data as bench_data
from . import jobs, reproduction, targets
from .facts import SKLEARN_LOSS, Facts, build, configured_params, facts, protocol_settings
from .measure import gemm_gflops, iterations_for, run_in_child, sklearn_per_iteration_ms, timed_fit, wall_seconds
from .targets import Target

logger = logging.getLogger(__name__)

SKLEARN_METHODS = ("nmf", "nmf_kl")  # item 2's subjects
SKLEARN_DATASETS = ("yale", "coil20", "mnist10k")
RATIO_DATASETS = ("yale", "coil20")  # every iterating method: ratio to scikit-learn, time to convergence
BATCHED_DATASETS = ("yale", "orl", "coil20")
BIG_DATASET = "mnist"
KMEANS = "kmeans"  # item 4's baseline
DTYPE_DATASETS = ("coil20", "mnist10k")  # item 5 runs on the first selected
DTYPE_METHOD = "nmf"
DATASETS = tuple(bench_data.TITLES)


@dataclass(frozen=True)
class Plan:
    """Sizes, iterations and caps of a run (:data:`FULL` or :data:`QUICK`)."""

    quick: bool = False
    rank: int = 10
    sklearn_ranks: tuple[int, ...] = (10, 20)  # item 2: nmf and nmf_kl against scikit-learn's MU at each
    seed: int = 0
    sizes: Mapping = field(default_factory=dict)  # data set -> at most this many samples
    budget_s: float = 1.0  # seconds of timed iterations per per-iteration measurement
    timed_iters: tuple[int, int] = (20, 500)  # fewest and most timed iterations
    n_starts: int = 10
    select_iters: int = 30
    big_iters: int = 200
    cap_factor: float = 2.0  # item 4: a fit is stopped past this many times its limit
    convergence_cap_s: float = 180.0
    convergence_overrides: Mapping = field(default_factory=dict)
    dtype_ks: tuple[int, ...] = (5, 10)
    dtype_trials: int = 3
    dtype_overrides: Mapping = field(default_factory=dict)
    datasets: tuple[str, ...] = DATASETS


FULL = Plan()
QUICK = Plan(quick=True, sizes={"orl": 200, "coil20": 300, "mnist10k": 1000, "mnist": 2000}, budget_s=0.05,
             timed_iters=(5, 20), select_iters=5, big_iters=10, convergence_cap_s=10.0,
             convergence_overrides={"max_iter": 60, "min_iter": 5}, dtype_ks=(3,), dtype_trials=1,
             dtype_overrides={"max_iter": 30, "min_iter": 5, "n_starts": 2},
             datasets=("yale", "coil20", "mnist10k"))


def cores() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def reproduce_wall(outputs: Path = papers.OUTPUTS) -> tuple[float | None, str]:
    """Seconds of the last ``make reproduce-all`` (``<outputs>/all/wall_seconds.txt``), or None and why not."""
    folder = Path(outputs) / "all"
    try:
        return float((folder / WALL).read_text().split()[0]), ""
    except FileNotFoundError:
        if (folder / START).is_file():
            return None, f"not run to the end ({folder / START} but no {WALL})"
        return None, f"not run ({folder / WALL} absent)"
    except (OSError, ValueError, IndexError) as exc:
        return None, f"unreadable {folder / WALL}: {one_line(exc)}"


class Bench:
    """One run over the selected methods and data sets; :meth:`run` returns the report's rows.

    Parameters
    ----------
    plan : Plan
    names : list of str
        Registered method names.
    datasets : dict of str to BenchData
        The loaded data sets by config name.
    work : Path
        A folder for the files handed to child processes.
    outputs : Path
        Where ``make reproduce-all`` wrote (``outputs/reproduce``).
    reproduction_loader : callable, optional
        Reads the last reproduction's cell table from ``outputs`` (:func:`.reproduction.load`); default
        :func:`.reproduction.default_loader`.
    """

    def __init__(self, plan: Plan, names: Sequence[str], datasets: Mapping[str, bench_data.BenchData], work: Path,
                 outputs: Path = papers.OUTPUTS, reproduction_loader: reproduction.Loader | None = None):
        self.plan = plan
        self.names = list(names)
        self.data = dict(datasets)
        self.work = Path(work)
        self.outputs = Path(outputs)
        self.reproduction_loader = reproduction_loader
        self.facts: dict[str, Facts] = {name: facts(name) for name in self.names}
        self.cores = cores()
        self.rows: list[Target] = []

    # -- helpers ---------------------------------------------------------------------------------------
    @property
    def iterating(self) -> list[str]:
        return [name for name in self.names if self.facts[name].iterates]

    def selected(self, wanted: Sequence[str]) -> list[str]:
        return [name for name in wanted if name in self.data]

    def thread_settings(self) -> list[int]:
        return sorted({1, self.cores})

    def add(self, row: Target) -> None:
        self.rows.append(row)
        shown = row.failure or row.missing or (f"{row.measured:.4g} {row.unit}" if row.measured is not None else "")
        logger.info("%d. %s %s %s: %s [%s]", row.item, row.dataset, row.method, row.name, shown, row.result)

    def model(self, name: str, data: bench_data.BenchData, seed: int | None = None, rank: int | None = None,
              **overrides):
        return build(name, self.plan.rank if rank is None else rank, self.plan.seed if seed is None else seed,
                     data.image_shape, **overrides)

    def per_iteration_ms(self, name: str, data: bench_data.BenchData, threads: int, rank: int | None = None,
                         **overrides) -> float:
        """ms per iteration of the kept start of a one-start fit at ``rank`` (default the plan's; see the
        module docstring)."""
        labels = data.labels(self.facts[name].needs_labels)
        low, high = self.plan.timed_iters

        def fit(iters):
            model = self.model(name, data, rank=rank, stopping="fixed", n_starts=1, max_iter=iters, **overrides)
            return timed_fit(model, data.X, labels)

        with threadpool_limits(limits=threads):
            pilot = fit(low)  # warm-up and cost estimate
            if not pilot.iterate_passes:
                raise RuntimeError(f"{name}.fit takes no callback: its iterations cannot be timed")
            return fit(iterations_for(pilot.iterate_ms / 1e3, self.plan.budget_s, low, high) + 1).iterate_ms

    # -- the items -------------------------------------------------------------------------------------
    def run(self) -> list[Target]:
        """Measure every item (1, 2, 6, 3, 5, 4: the child processes last); the rows in item order."""
        return self._measured(self.reproduce, self.last_reproduction, self.per_iteration, self.convergence,
                              self.batched, self.dtypes, self.big)

    def record_only(self) -> list[Target]:
        """Item 1's section alone, from the record of the run in ``outputs`` (:meth:`last_reproduction`): what
        that run's cells cost against the arithmetic bound, for any pool run that leaves ``schedule.csv``."""
        return self._measured(self.last_reproduction)

    def _measured(self, *measures) -> list[Target]:
        """Run ``measures`` in turn; every row so far, in item order."""
        for measure in measures:
            measure()
        return sorted(self.rows, key=lambda row: row.item)

    def reproduce(self) -> None:
        self.add(targets.reproduce_all(*reproduce_wall(self.outputs)))

    def per_iteration_subjects(self, dataset: str) -> list[tuple[int, list[str]]]:
        """Item 2 on ``dataset``: the methods measured at each rank. nmf and nmf_kl at every rank of
        ``sklearn_ranks``; on :data:`RATIO_DATASETS` the other iterating methods at the plan's ``rank`` too."""
        plan = self.plan
        subjects = []
        for rank in dict.fromkeys((*plan.sklearn_ranks, plan.rank)):
            names = [n for n in self.iterating if (rank in plan.sklearn_ranks if n in SKLEARN_METHODS
                                                   else rank == plan.rank and dataset in RATIO_DATASETS)]
            if names:
                subjects.append((rank, names))
        return subjects

    def last_reproduction(self) -> None:
        """Beside item 1: the last reproduction's work, arithmetic bound (also at each cell's own shapes) and
        schedules (:mod:`.reproduction`), the GEMM rates at one thread. Whatever goes wrong is one row; the rest
        of the bench runs."""
        def at_one_thread(measure):
            def measured(*args):
                with threadpool_limits(limits=1):
                    return measure(*args)
            return measured

        try:
            rows = reproduction.report_rows(self.outputs, self.reproduction_loader,
                                            at_one_thread(reproduction.gemm_rates),
                                            own_rates=at_one_thread(reproduction.shape_rates))
        except Exception as exc:  # an unreadable record: said in its row
            rows = [Target(reproduction.ITEM, reproduction.NO_REPRODUCTION, dataset="all papers",
                           missing=f"unreadable: {one_line(exc)}")]
        self.rows.extend(rows)
        try:  # the family benchmark beside the reproduction whose cells it copies
            self.rows.extend(reproduction.benchmark_rows(self.outputs.parent / "benchmark", self.reproduction_loader))
        except Exception as exc:  # an unreadable record: said in its row
            self.rows.append(Target(reproduction.ITEM, reproduction.BENCHMARK, dataset="the benchmark",
                                    missing=f"unreadable: {one_line(exc)}"))
        named = {(row.name, row.method, row.dataset): row for row in rows}
        if len(rows) == 1:
            logger.info("1. last reproduction: %s", rows[0].missing)
            return
        ratio = named.get((reproduction.RATIO, "", "all papers"))
        above = named.get((reproduction.BOUND, "all", "all"))
        logger.info("1. last reproduction: wall / (work / cores) %s, %s of the work above the arithmetic bound",
                    "n/a" if ratio is None or ratio.measured is None else f"{ratio.measured:.2f}x",
                    "n/a" if above is None or above.measured is None else f"{above.measured:.0f}%")

    def per_iteration(self) -> None:
        """Item 2 (and the ratios item 6 shows)."""
        plan = self.plan
        for name in SKLEARN_METHODS:
            if name not in self.iterating:
                self.add(targets.missing(2, "per iteration / scikit-learn MU", "method not selected", name,
                                         op="<=", limit=targets.SKLEARN_RATIO, unit="x"))
        for dataset in SKLEARN_DATASETS:
            if dataset not in self.data:
                self.add(targets.missing(2, "per iteration / scikit-learn MU", "data set not selected",
                                         dataset=bench_data.title(dataset), op="<=", limit=targets.SKLEARN_RATIO,
                                         unit="x"))
                continue
            data = self.data[dataset]
            for threads in self.thread_settings():
                reference: dict[tuple[str, int], float] = {}
                for rank, names in self.per_iteration_subjects(dataset):
                    for name in names:
                        loss = SKLEARN_LOSS.get(self.facts[name].loss)
                        is_target = name in SKLEARN_METHODS
                        limit = {"op": "<=", "limit": targets.SKLEARN_RATIO} if is_target else {}
                        try:
                            if loss is None:
                                raise ValueError(f"loss {self.facts[name].loss!r} has no scikit-learn MU counterpart")
                            if (loss, rank) not in reference:
                                with threadpool_limits(limits=threads):
                                    reference[loss, rank], _ = sklearn_per_iteration_ms(
                                        data.X, rank, loss, plan.budget_s, *plan.timed_iters)
                            ours = self.per_iteration_ms(name, data, threads, rank)
                        except Exception as exc:  # reported in its row; the run goes on
                            self.add(targets.failed(2, targets.sklearn_ratio_name(rank), one_line(exc), name,
                                                    data.title, threads, unit="x", **limit))
                            continue
                        self.add(targets.sklearn_ratio(name, data.title, threads, ours, reference[loss, rank], loss,
                                                       is_target, rank))

    def convergence(self) -> None:
        """Item 6."""
        for dataset in self.selected(RATIO_DATASETS):
            data = self.data[dataset]
            for name in self.iterating:
                try:
                    model = self.model(name, data, **self.plan.convergence_overrides)
                    with threadpool_limits(limits=1):
                        timing = timed_fit(model, data.X, data.labels(self.facts[name].needs_labels),
                                           self.plan.convergence_cap_s)
                except Exception as exc:
                    self.add(targets.convergence(name, data.title, {"rank": self.plan.rank}, one_line(exc)))
                    continue
                self.add(targets.convergence(name, data.title, {**timing.as_dict(), "rank": self.plan.rank},
                                             timing.stopped))
        if not self.selected(RATIO_DATASETS):
            self.add(targets.missing(6, "fit to convergence (reference rule)", "data sets not selected"))

    def batched(self) -> None:
        """Item 3."""
        plan = self.plan
        solver = {"stopping": "fixed", "min_iter": plan.select_iters, "max_iter": plan.select_iters}
        gflops = None
        if self.selected(BATCHED_DATASETS) and self.iterating:
            with threadpool_limits(limits=1):
                gflops = gemm_gflops()
        for dataset in self.selected(BATCHED_DATASETS):
            data = self.data[dataset]
            for name in self.iterating:
                labels = data.labels(self.facts[name].needs_labels)

                def fit_seconds(n_starts, seed):
                    model = self.model(name, data, seed, n_starts=n_starts, **solver)
                    return wall_seconds(lambda: model.fit(data.X, labels))

                try:
                    with threadpool_limits(limits=1):
                        fit_seconds(1, plan.seed)  # warm-up
                        batched = fit_seconds(plan.n_starts, plan.seed)
                        singles = sum(fit_seconds(1, plan.seed + i) for i in range(plan.n_starts))
                except Exception as exc:
                    self.add(targets.failed(3, "ten single-start fits / ten batched starts", one_line(exc), name,
                                            data.title, 1, ">=", targets.BATCHED_SPEEDUP, "x"))
                    continue
                products = self.facts[name].products_per_iteration
                flops = None if products is None else (
                    2.0 * products * data.X.shape[0] * data.X.shape[1] * plan.rank * plan.n_starts * plan.select_iters)
                self.add(targets.batched_speedup(name, data.title, batched, singles,
                                                 {"batched_class": self.facts[name].batched, "gemm_gflops": gflops},
                                                 targets.batched_bound(singles, flops, gflops)))
        if not self.selected(BATCHED_DATASETS) or not self.iterating:
            self.add(targets.missing(3, "ten single-start fits / ten batched starts", "nothing selected",
                                     op=">=", limit=targets.BATCHED_SPEEDUP, unit="x"))

    def dtype_dataset(self) -> str | None:
        chosen = self.selected(DTYPE_DATASETS)
        if not chosen and self.plan.quick:
            chosen = list(self.data)  # quick: any data set stands in
        return chosen[0] if chosen else None

    def dtype_methods(self) -> list[str]:
        with_dtype = [n for n in self.iterating if self.facts[n].has_dtype]
        out = [DTYPE_METHOD] if DTYPE_METHOD in with_dtype else []
        kl = [n for n in with_dtype if self.facts[n].loss == "kl"]
        return out + kl[:1]

    def dtypes(self) -> None:
        """Item 5."""
        dataset = self.dtype_dataset()
        chosen = self.dtype_methods()
        if dataset is None or not chosen:
            self.add(targets.missing(5, "float32 against float64", "no data set of " + ", ".join(DTYPE_DATASETS)
                                     if dataset is None else "no selected method takes dtype"))
            return
        if not any(self.facts[n].loss == "kl" for n in chosen):
            self.add(targets.missing(5, "float32 against float64, a KL method",
                                     "no selected method with loss 'kl' takes dtype"))
        data = self.data[dataset]
        for name in chosen:
            try:
                f64 = self.per_iteration_ms(name, data, 1, dtype="float64")
                f32 = self.per_iteration_ms(name, data, 1, dtype="float32")
                self.add(targets.dtype_speed(name, data.title, f64, f32))
                rows = self.dtype_trials(name, data)
            except Exception as exc:
                self.add(targets.failed(5, "float32 against float64", one_line(exc), name, data.title, 1))
                continue
            for metric in ("acc", "nmi"):
                self.add(targets.dtype_quality(name, data.title, metric, rows))

    def dtype_trials(self, name: str, data: bench_data.BenchData) -> list[dict]:
        """Protocol trials of ``name`` in float64, float32 and float64 from a second seed."""
        protocol = protocol_spec(protocol_settings(), data.name)
        params = {**configured_params(name), **self.plan.dtype_overrides}
        n_classes = int(data.y.max()) + 1
        labels = ({"mode": "fraction", "fraction": bench_data.LABEL_FRACTION} if self.facts[name].needs_labels
                  else {"mode": "none"})
        rows = []
        for k in (k for k in self.plan.dtype_ks if 2 <= k <= n_classes):
            for number in range(self.plan.dtype_trials):
                trial = make_trial(data.y, data.name, k, number, self.plan.seed, labels)
                row = {"k": k, "trial": number, "n": int(trial.index.size)}
                variants = (("f64", "float64", trial.init_seed), ("f32", "float32", trial.init_seed),
                            ("f64b", "float64", subrun_seed(trial.init_seed, 1)))
                for label, dtype, seed in variants:
                    with threadpool_limits(limits=1), warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # ConvergenceWarning: n_iter says it
                        method = MethodSpec(name=name, label=name, params=freeze({**params, "dtype": dtype}))
                        fit = fit_and_cluster(data.X, method, trial, protocol, seed, data.image_shape)
                    row.update({f"acc_{label}": fit.acc, f"nmi_{label}": fit.nmi,
                                f"n_iter_{label}": fit.n_iter, f"objective_{label}": fit.objective})
                rows.append(row)
                self.add(Target(5, "protocol trial: AC float32 - float64", name, data.title, 1,
                                row["acc_f32"] - row["acc_f64"], extra=row))
        return rows

    def big_dataset(self) -> str | None:
        if BIG_DATASET in self.data:
            return BIG_DATASET
        return list(self.data)[-1] if self.plan.quick and self.data else None  # quick: the last one stands in

    def big(self) -> None:
        """Item 4, each measurement in a child process."""
        plan = self.plan
        dataset = self.big_dataset()
        subjects = self.iterating + ([KMEANS] if KMEANS in self.names else [])
        if dataset is None or not subjects:
            self.add(targets.missing(4, "fit on MNIST-70k", f"{bench_data.title(BIG_DATASET)} not selected"
                                     if dataset is None else "no factorization selected", op="<",
                                     limit=targets.BIG_FIT_SECONDS, unit="s"))
            return
        data = self.data[dataset]
        path = str(bench_data.save(data, self.work / f"{dataset}.npz"))
        for name in subjects:
            params = configured_params(name)
            if name == KMEANS:
                limit = targets.KMEANS_SECONDS
                what = f"protocol trial: fit + KMeans best of {protocol_settings()['kmeans_restarts']}"
                job, kwargs = jobs.protocol_job, {"protocol": protocol_settings()}
                timeout = plan.cap_factor * limit
            else:
                limit = targets.BIG_FIT_SECONDS
                what = f"fit, {plan.big_iters} iterations"
                job, kwargs = jobs.fit_job, {"rank": plan.rank, "iters": plan.big_iters,
                                             "cap_s": plan.cap_factor * limit}
                timeout = plan.cap_factor * limit + 60  # the fit stops itself; this covers set-up and loading
            kwargs.update(path=path, name=name, params=params, seed=plan.seed, threads=self.cores)
            result = run_in_child(job, kwargs=kwargs, timeout_s=timeout)
            value = result.value if result.status == "ok" else {}
            failure = result.error if result.status != "ok" else value.get("stopped", "")
            extra = {"peak_rss_mb": result.peak_rss_mb, "child_s": result.seconds,
                     **{k: v for k, v in value.items() if k != "stopped"}}
            self.add(targets.big_fit(name, data.title, self.cores, value.get("seconds"), limit, what, failure,
                                     big_detail(value, result.peak_rss_mb), extra))


def big_detail(value: Mapping, peak_rss_mb: float) -> str:
    """What a child of item 4 reported besides its time."""
    parts = []
    if value.get("n_iter") is not None:
        parts.append(f"{value['n_iter']} iterations, first pass (set-up + one update) {value['first_pass_s']:.1f} s")
    if "kmeans_s" in value:
        parts.append(f"fit {value['fit_s']:.1f} s + KMeans {value['kmeans_s']:.1f} s, AC {value['acc']:.3f}")
    if not math.isnan(peak_rss_mb):
        parts.append(f"peak RSS {peak_rss_mb:,.0f} MB")
    return "; ".join(parts)


def describe(plan: Plan) -> dict:
    """The plan as plain data, for the report's header and provenance."""
    return dataclasses.asdict(plan)

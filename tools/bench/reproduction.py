"""The last reproduction (``make reproduce-all``): where its time went, the arithmetic it needed, and how its cells
would spread over more cores. A section of ``make bench`` (``python -m tools.bench --reproduction DIR``).

Input: the reproduction's cell table, one row per cell (:data:`COLUMNS`): its paper, sweep (index in the paper's
``reproduce.yaml``), job (run directory), data set, method (label), estimator (registry name), params (JSON), k,
trial, rank, n_samples, n_features, n_iter, ``seconds`` (fit and KMeans seconds of the row, at one BLAS thread),
``status`` ("computed"; "shared": computed once for another job and copied; "reused": on disk before the run;
"failed"), ``cpu_seconds`` and ``expected_seconds`` (NaN when unknown); and a summary with ``wall_seconds``,
``workers`` and ``cores``. :func:`load` gets both from a loader (:func:`default_loader`: the record the
reproduction leaves, ``schedule.csv`` and ``schedule.json``), which a caller may replace.

1. Work and wall (:func:`summary`): the wall time, the work (the summed seconds of the cells this run computed),
   the CPU time where known, workers and cores, and wall / (work / cores) (1.0: every core busy all the time).
2. The arithmetic bound (:func:`bounds`): each computed cell's floating-point operations in dense products
   (:func:`cell_flops`, the model below) at the rates of one BLAS thread on COIL20's X with one start's or ten
   starts' columns (:func:`gemm_rates`), against its recorded seconds; per (method, data set): work, bound and
   the share of the work above the bound, 1 - bound / work. Beside it, the same flops at the rates of each
   cell's own shapes (:func:`shape_rates`: X^T F with the cell's n samples, m features and r or ten starts' r
   columns): the bound asks of every cell the rate of COIL20's shape with 16 columns, which a product of fewer
   columns (ranks 2 to 10) or of a few dozen samples (ORL, Yale) does not reach even alone; the work above the
   bound at the cell's own shapes is what its products alone would not explain.
3. Schedules (:func:`schedules`) from the recorded cell times, at :data:`SIMULATED_CORES` and the reproduction's
   own core count: "before" (:func:`simulate_sweeps`: each sweep one unit, its jobs and their cells one after
   another, the sweeps in paper order on min(P, sweeps) workers, each taking the next when free; a shared cell
   counts in every job that holds it, as the old scheduler computed it there), "after" (:func:`simulate_pool`:
   one pool of cells, each shared cell once, longest expected first, greedy list scheduling) and the ideal,
   work / P. Every cell counts, reused ones too (with the seconds recorded when they were computed): the
   simulations are of a reproduction from scratch.
4. The family benchmark after it (:func:`benchmark_rows`, ``outputs/benchmark``): wall time, the work of the
   cells it computed, the cells it copied from the reproduction, and its pool simulated on the same cores.

Cost model (:func:`cell_flops`). m features, n samples of the cell, r its rank, c its k (clusters); s starts;
t_s = min(min_iter, max_iter) selection updates of every start when s > 1 (else 0); t = n_iter - t_s updates of
the kept start (``n_iter_`` counts the t_s selection updates of the kept start and the updates after them,
:mod:`src.methods.core.loop`). One product with X costs P = 2 m n r flops, one product of a factor with an
(r x r) matrix about G = 2 (m + n) r^2 (U^T U, V U^T U, V^T V, U V^T V). An iterating method costs

    s t_s (a P + 2 g G) + t (b P + 3 g G) + o (e P + g G) + (f0 + f1 s) P + set-up

with o the objectives evaluated on the starts after the selection (s; with one start, 1 under the reference
rule, 0 under "fixed"). A kept start that ends no lower than where it was chosen is dropped for the chosen
factors and ``n_iter_`` then says t_s (loop.py): its iterations are not counted, and the bound of such a cell is
low. The products of the selection phase (the first term) are s r columns wide and are
timed at the wide rate, all the others at the narrow one (:func:`gemm_rates`). Per estimator (lines as of this
writing):

=====================================  ==  ==  ==  ==  =======  =======  ============================================
estimators                             a   b   e   g   f0, f1   set-up   the code each term counts
=====================================  ==  ==  ==  ==  =======  =======  ============================================
nmf nmf_ncw sparse_nmf nlcf cnmf ntf   2   2   0   1   1, 0     --       X^T U and X V in one fused pass
                                                                         (core/frobenius.py:64 ``blocks.fused``;
                                                                         sparse_nmf.py:66, 69; nlcf.py:71;
                                                                         cnmf.py:48, 53; ntf.py:97, 106); the
                                                                         objective takes X V from the update
                                                                         (frobenius.py:70); f0: U V^T of
                                                                         ``reconstruction_err_`` (estimator.py:345)
gnmf semignmf pcgnmf fnmf npnmf        2   2   0   1   1, 0     2 n^2 m  gnmf.py:194 ``regularized_v_update`` (one
                                                                         fused pass, gnmf.py:113); fnmf.py:200,
                                                                         npnmf.py:183, pcgnmf.py:173; set-up: the
                                                                         kNN graph's distances, brute force
                                                                         (graph/knn.py:177)
cf ccf lcf                             4   4   0   1   3, 1     --       two fused passes, X^T (X W) with X V and
                                                                         X^T (X V) with X W (concept.py:259, 274;
                                                                         lcf.py:210, 217); f1: the first X W of
                                                                         each start (concept.py:247), f0: that of
                                                                         the kept start, the outputs' X W
                                                                         (concept.py:390) and U V^T
ccf, ``init_from_nmf``                 one start (s = 1), plus the NMF fit it starts from (concept.py:516), at the
                                       ``n_iter`` of the nmf cell of the same paper, data set, k, trial, rank and
                                       solver settings (not counted when the table has none)
nmf_kl cnmf_kl                         4   4   2   0   3, 0     --       two passes over X per update, each forming
                                                                         Y = U V^T by blocks and one of R V, R^T U
                                                                         (nmf_kl.py:128, 133, 135); the objective's
                                                                         pass (nmf_kl.py:214) hands its V numerator
                                                                         to the next update (nmf_kl.py:206); f0:
                                                                         the first update after the selection
                                                                         (new arrays: no handoff) and U V^T
copkmeans                              n_restarts x 2 n c m: the first assignment of every restart (copkmeans.py:189);
                                       later steps recompute only the samples the bounds leave unsettled
sda                                    2 n^2 m (kNN, sda.py:133) + 4 m n min(m, n) (thin SVD, sda.py:119: its
                                       leading term) + 2 n m r (the projection, sda.py:239)
kmeans                                 0 (the representation is X itself)
=====================================  ==========================================================================

Protocol KMeans, after every method but those that cluster by themselves (COP-KMeans):
:data:`KMEANS_RUNS` runs (``kmeans_restarts`` = 20 and the readouts' 1 + 10, src/protocol/cell.py:155, 162) of
:data:`KMEANS_ITERATIONS` Lloyd iterations, each 2 n c d flops, d = r (the representation) or m (the KMeans
baseline); on more than 100 dimensions scikit-learn runs Elkan's algorithm (src/protocol/clustering.py), counted
as its first full assignment only. KMeans iterations are not recorded: 10 is assumed (6-20 measured on ORL, Yale
and COIL20 embeddings). Estimators absent from the table get no bound (counted in the row's ``unmodelled``).

The set-up terms (the kNN search, SDA's SVD and graph term) are counted in every cell, though a process serves
them again to the next fit on the same samples (:mod:`src.methods.core.kept`): a served cell can take less
than its bound, and a run's share above the bound is then understated.
"""

from __future__ import annotations

import functools
import heapq
import json
import logging
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from src import methods
from src.errors import UserError, one_line
from src.protocol.clustering import ELKAN_ABOVE_DIMS
from .targets import Target

logger = logging.getLogger(__name__)

ITEM = 1  # its rows belong to item 1 (the reproduction's wall time); none has a limit, so its verdict is item 1's
COLUMNS = ("paper", "sweep", "job", "dataset", "method", "estimator", "params", "k", "trial", "rank", "n_samples",
           "n_features", "n_iter", "seconds", "status", "cpu_seconds", "expected_seconds")
COMPUTED, SHARED, REUSED, FAILED = "computed", "shared", "reused", "failed"
SIMULATED_CORES = (4, 16, 64)
KMEANS_RUNS = 20 + 1 + 10  # the protocol's kmeans_restarts and the kmeans_once and kmeans_best10 readouts
KMEANS_ITERATIONS = 10  # assumed: not recorded (module docstring)
NARROW = (1440, 1024, 16)  # n x m times m x r: COIL20's X with one start's 16 columns
WIDE_STARTS = 10  # the selection phase's products: ten starts' columns at once

# -- the rows' names -----------------------------------------------------------------------------------------
WALL = "wall time (the reproduction's record)"
WORK = "work: summed cell seconds (one thread)"
CPU = "CPU time of the cells"
RATIO = "wall / (work / cores)"
RATE = "GEMM rate, one thread"
BOUND = "work above the arithmetic bound"
SCHEDULE = "simulated wall time"
BEFORE, AFTER, IDEAL = "before: sweeps", "after: cell pool", "ideal: work / P"
NO_REPRODUCTION = "the last reproduction's cells"
BENCHMARK = "make benchmark after make reproduce-all"
NAMES = (WALL, WORK, CPU, RATIO, RATE, BOUND, SCHEDULE, NO_REPRODUCTION, BENCHMARK)  # the rows of this section


class NoReproduction(UserError):
    """The directory holds no reproduction to report on (the section says why, in one line)."""


@dataclass(frozen=True)
class Reproduction:
    """A reproduction's cells (:data:`COLUMNS`) and what its summary says (None where it says nothing)."""

    cells: pd.DataFrame
    wall_seconds: float | None = None
    workers: int | None = None
    cores: int | None = None
    source: str = ""


Loader = Callable[[Path], object]


def default_loader(reproduce_dir: Path):
    """The record a reproduction leaves in ``reproduce_dir``: ``src.running.pool.schedule.cell_table`` (``schedule.csv``,
    ``schedule.json``), or ``src.reproduce.cell_table`` where that is the one defined."""
    try:
        from src.running.pool.schedule import cell_table
    except ImportError:
        from src import reproduce
        cell_table = getattr(reproduce, "cell_table", None)
        if cell_table is None:
            raise NoReproduction("no cell table: neither src.running.pool.schedule nor src.reproduce has cell_table") from None
    return cell_table(Path(reproduce_dir))


def _wall_file(reproduce_dir: Path) -> float | None:
    """``all/wall_seconds.txt`` of ``make reproduce-all``, or None."""
    try:
        return float((Path(reproduce_dir) / "all" / "wall_seconds.txt").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _count(value) -> int | None:
    try:
        return int(value) if value is not None and not (isinstance(value, float) and math.isnan(value)) else None
    except (TypeError, ValueError):
        return None


def load(reproduce_dir: Path, loader: Loader | None = None) -> Reproduction:
    """The reproduction in ``reproduce_dir`` as ``loader`` (default :func:`default_loader`) reads it.

    The loader returns the cell table, or (table, summary), or None when there is none. The wall time comes from
    the summary's ``wall_seconds``, else from ``all/wall_seconds.txt``.

    Raises
    ------
    NoReproduction
        The directory is absent, or the loader finds no cells; or the table lacks a column of :data:`COLUMNS`.
    """
    reproduce_dir = Path(reproduce_dir)
    if not reproduce_dir.is_dir():
        raise NoReproduction(f"no reproduction in {reproduce_dir} (no such directory)")
    got = (loader or default_loader)(reproduce_dir)
    table, record = got if isinstance(got, tuple) else (got, {})
    if table is None or len(table) == 0:
        raise NoReproduction(f"no reproduction in {reproduce_dir} (no cell table)")
    missing = [name for name in COLUMNS if name not in table.columns]
    if missing:
        raise NoReproduction(f"the cell table of {reproduce_dir} lacks {', '.join(missing)}")
    record = dict(record or {})
    logger.debug("%d cells of the reproduction in %s; its record: %s", len(table), reproduce_dir, record)
    wall = record.get("wall_seconds")
    wall = float(wall) if wall is not None else _wall_file(reproduce_dir)
    return Reproduction(table.reset_index(drop=True), wall, _count(record.get("workers")),
                        _count(record.get("cores")), str(reproduce_dir))


# -- 1. work and wall ---------------------------------------------------------------------------------------
def summary(run: Reproduction) -> list[Target]:
    """Part 1: wall time, work, CPU time where known, and wall / (work / cores)."""
    cells = run.cells
    computed = cells[cells.status == COMPUTED]
    work = float(computed.seconds.sum())
    counts = cells.status.value_counts()
    statuses = ", ".join(f"{int(counts.get(s, 0)):,} {s}" for s in (COMPUTED, SHARED, REUSED, FAILED)
                         if counts.get(s, 0) or s == COMPUTED)
    cpu = computed.cpu_seconds.dropna()
    where = f"{run.workers} workers" if run.workers else "workers unknown"
    rows = [
        Target(ITEM, WALL, dataset="all papers", measured=run.wall_seconds, unit="s",
               missing="" if run.wall_seconds is not None else "no wall time recorded",
               detail=f"{where} on {run.cores} cores" if run.cores else where,
               extra={"workers": run.workers, "cores": run.cores}),
        Target(ITEM, WORK, dataset="all papers", threads=1, measured=work, unit="s",
               detail=f"{len(cells):,} cells: {statuses}; fit + KMeans seconds of the computed ones",
               extra={"cells": len(cells), **{f"cells_{s}": int(counts.get(s, 0)) for s in counts.index}}),
        Target(ITEM, CPU, dataset="all papers", measured=float(cpu.sum()) if len(cpu) else None, unit="s",
               missing="" if len(cpu) else "unknown for every cell",
               detail=f"known for {len(cpu):,} of {len(computed):,} computed cells" if len(cpu) else ""),
    ]
    if run.wall_seconds is not None and run.cores and work > 0:
        ratio, note = run.wall_seconds / (work / run.cores), ""
    else:
        ratio, note = None, "needs the wall time, the cores and some work"
    rows.append(Target(ITEM, RATIO, dataset="all papers", measured=ratio, unit="x", missing=note,
                       detail="" if note else f"{run.wall_seconds:,.0f} s / ({work:,.0f} s / {run.cores})"))
    return rows


# -- 2. the arithmetic bound ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Cost:
    """Products with X of an iterating method (units of P = 2 m n r flops; see the module docstring)."""

    select: float  # a: per update of one start in the selection phase
    step: float  # b: per iteration of the kept start, its update and the objective after it
    objective: float  # e: per objective evaluated on a start after the selection (or the initial one)
    grams: float  # g: 1 if its updates and objective take the (r x r) products of the Frobenius family
    per_fit: float  # f0
    per_start: float = 0.0  # f1
    knn: bool = False  # set-up: the kNN graph of the samples, 2 n^2 m


FROBENIUS = Cost(select=2, step=2, objective=0, grams=1, per_fit=1)
GRAPH = Cost(select=2, step=2, objective=0, grams=1, per_fit=1, knn=True)
CONCEPT = Cost(select=4, step=4, objective=0, grams=1, per_fit=3, per_start=1)
KL = Cost(select=4, step=4, objective=2, grams=0, per_fit=3)
COSTS: dict[str, Cost] = {
    **dict.fromkeys(("nmf", "nmf_ncw", "sparse_nmf", "nlcf", "cnmf", "ntf"), FROBENIUS),
    **dict.fromkeys(("gnmf", "semignmf", "pcgnmf", "fnmf", "npnmf"), GRAPH),
    **dict.fromkeys(("cf", "ccf", "lcf"), CONCEPT),
    **dict.fromkeys(("nmf_kl", "cnmf_kl"), KL),
}
SOLVER = ("n_starts", "min_iter", "max_iter", "stopping", "tol")


@functools.cache
def _defaults(estimator: str) -> dict:
    """The constructor's defaults of a registered estimator (empty for an unknown one)."""
    cls = methods.REGISTRY.get(estimator)
    return dict(cls().get_params()) if cls is not None else {}


@functools.cache
def _params(estimator: str, params: str) -> dict:
    """The estimator's parameters: its defaults with the cell's JSON ``params`` on top."""
    given = json.loads(params) if isinstance(params, str) and params else {}
    return {**_defaults(estimator), **given}


def _clusters_directly(estimator: str) -> bool:
    return bool(getattr(methods.REGISTRY.get(estimator), "clusters_directly", False))


def kmeans_flops(n: int, c: int, d: int) -> float:
    """The protocol's KMeans on n samples of d dimensions into c clusters (module docstring)."""
    per_assignment = 2.0 * n * c * d
    iterations = 1 if d > ELKAN_ABOVE_DIMS else KMEANS_ITERATIONS
    return KMEANS_RUNS * iterations * per_assignment


def iterating_flops(cost: Cost, params: Mapping, m: int, n: int, r: int, n_iter: int,
                    starts: int | None = None) -> tuple[float, float]:
    """(selection-phase flops, other flops) of an iterating fit with the solver settings of ``params``."""
    s = int(params["n_starts"]) if starts is None else starts
    n_select = min(int(params["min_iter"]), int(params["max_iter"])) if s > 1 else 0
    kept = max(int(n_iter) - n_select, 0)
    objectives = s if s > 1 else int(params["stopping"] == "reference")
    P, G = 2.0 * m * n * r, 2.0 * (m + n) * r * r
    select = s * n_select * (cost.select * P + 2 * cost.grams * G)
    other = (kept * (cost.step * P + 3 * cost.grams * G) + objectives * (cost.objective * P + cost.grams * G)
             + (cost.per_fit + cost.per_start * s) * P + (2.0 * n * n * m if cost.knn else 0.0))
    return select, other


def cell_flops(estimator: str, params: str, m: int, n: int, r: int, c: int, n_iter: int,
               nmf_iter: int | None = None) -> tuple[float, float]:
    """(selection-phase flops, other flops) of one cell: its fit and the protocol's KMeans (module docstring).

    Parameters
    ----------
    estimator, params : str
        Registry name and the cell's JSON parameters.
    m, n, r, c, n_iter : int
        Features, samples, rank, clusters (the cell's k), iterations reported.
    nmf_iter : int, optional
        For CCF initialized from NMF: the iterations of that NMF fit (None: not counted).

    Returns
    -------
    tuple of float
        NaN for an estimator the model does not cover.
    """
    p = _params(estimator, params)
    kmeans = 0.0 if _clusters_directly(estimator) else kmeans_flops(n, c, m if estimator == "kmeans" else r)
    if estimator in COSTS:
        starts = 1 if estimator == "ccf" and p.get("init_from_nmf") else None
        select, other = iterating_flops(COSTS[estimator], p, m, n, r, n_iter, starts)
        if starts == 1 and nmf_iter is not None:
            nmf_select, nmf_other = iterating_flops(COSTS["nmf"], {**_defaults("nmf"), **{k: p[k] for k in SOLVER}},
                                                    m, n, r, nmf_iter)
            select, other = select + nmf_select, other + nmf_other
        return select, other + kmeans
    if estimator == "kmeans":
        return 0.0, kmeans
    if estimator == "sda":
        return 0.0, 2.0 * n * n * m + 4.0 * m * n * min(m, n) + 2.0 * n * m * r + kmeans
    if estimator == "copkmeans":
        return 0.0, float(p.get("n_restarts", 20)) * 2.0 * n * c * m
    return math.nan, math.nan


def _solver(cells: pd.DataFrame, estimator: str) -> pd.Series:
    """The solver settings of each cell's parameters, as one comparable string."""
    return cells.params.map(lambda params: repr(tuple(_params(estimator, params).get(k) for k in SOLVER)))


def _nmf_iterations(cells: pd.DataFrame) -> pd.Series:
    """For each CCF cell initialized from NMF, the ``n_iter`` of the nmf cell it starts from (same paper, data
    set, k, trial, rank and solver settings); NaN for every other cell and where there is no such nmf cell."""
    ccf = cells[cells.estimator == "ccf"]
    ccf = ccf[ccf.params.map(lambda params: bool(_params("ccf", params).get("init_from_nmf")))]
    nmf = cells[cells.estimator == "nmf"]
    if ccf.empty or nmf.empty:
        return pd.Series(np.nan, index=cells.index)
    key = ["paper", "dataset", "k", "trial", "rank", "solver"]
    nmf = nmf.assign(solver=_solver(nmf, "nmf"))[key + ["n_iter"]].drop_duplicates(key)
    found = ccf.assign(solver=_solver(ccf, "ccf"))[key].reset_index().merge(nmf, on=key, how="left")
    return found.set_index("index").n_iter.astype(float).reindex(cells.index)


def flops(cells: pd.DataFrame) -> pd.DataFrame:
    """``cells`` with ``select_flops`` and ``other_flops`` (:func:`cell_flops`) added, times the cell's sub-runs
    where the table has a ``subruns`` column (the protocol's ``subruns`` fits of a cell, each counted at the
    chosen one's iterations)."""
    nmf_iter = _nmf_iterations(cells)
    columns = ["estimator", "params", "n_features", "n_samples", "rank", "k", "n_iter"]
    pairs = [cell_flops(estimator, params, int(m), int(n), int(r), int(c), int(n_iter),
                        None if math.isnan(nmf) else int(nmf))
             if not (pd.isna(m) or pd.isna(n_iter)) else (math.nan, math.nan)
             for (estimator, params, m, n, r, c, n_iter), nmf in zip(cells[columns].itertuples(index=False, name=None),
                                                                    nmf_iter.to_numpy(dtype=float))]
    select, other = (np.array(column, dtype=float) for column in zip(*pairs)) if pairs else ([], [])
    if "subruns" in cells.columns:  # a cell's seconds sum its sub-runs; its n_iter is the chosen one's
        subruns = cells.subruns.fillna(1).to_numpy(dtype=float)
        select, other = select * subruns, other * subruns
    return cells.assign(select_flops=list(select), other_flops=list(other))


def product_gflops(n: int, m: int, r: int, budget_s: float = 0.3, most: int = 200) -> float:
    """GFLOP/s of numpy's BLAS, with the threads it has now, on X^T F for X (m x n) and F (m x r): the faster of
    (F^T X)^T (the short-and-wide form :func:`src.methods.core.products.xt_dot` takes with OpenBLAS) and X^T F,
    the fastest of as many products as fit in ``budget_s`` seconds (at most ``most``) each: on a busy machine
    some of them still run undisturbed."""
    rng = np.random.default_rng(0)
    X, F = rng.random((m, n)), rng.random((m, r))
    best = math.inf
    for product in (lambda: F.T @ X, lambda: X.T @ F):
        product()  # warm-up
        ends = time.perf_counter() + budget_s
        for _ in range(most):
            start = time.perf_counter()
            product()
            best = min(best, time.perf_counter() - start)
            if start > ends:
                break
    return 2.0 * n * m * r / best / 1e9


def gemm_rates(shape: tuple[int, int, int] = NARROW, starts: int = WIDE_STARTS) -> dict[str, float]:
    """The rates the bound divides by: ``narrow`` at ``shape`` (n, m, r), ``wide`` with ``starts`` x r columns
    (the selection phase's stacked products), in GFLOP/s with numpy's current threads."""
    n, m, r = shape
    return {"narrow": product_gflops(n, m, r), "wide": product_gflops(n, m, r * starts)}


def bound_seconds(select_flops, other_flops, rates: Mapping[str, float]):
    """Seconds of the flops at the rates (selection phase at ``wide``, the rest at ``narrow``)."""
    return select_flops / (rates["wide"] * 1e9) + other_flops / (rates["narrow"] * 1e9)


SHAPE_BUDGET_S = 0.05
"""Seconds of products per form (:func:`product_gflops`) when :func:`shape_rates` measures a cell's own shape:
hundreds of shapes in a reproduction, each the fastest of up to 50 products."""


def cell_shapes(cells: pd.DataFrame) -> list[tuple[int, int, int]]:
    """The products' shapes (n, m, r) of the computed cells: n samples, m features, and r the rank (one start's
    columns) or :data:`WIDE_STARTS` times it (the selection phase's), each once."""
    known = cells[cells.status == COMPUTED].dropna(subset=["n_samples", "n_features", "rank"])
    shapes = {(int(n), int(m), int(r) * width) for n, m, r in
              zip(known.n_samples, known.n_features, known["rank"]) for width in (1, WIDE_STARTS)}
    return sorted(shapes)


def shape_rates(shapes: Iterable[tuple[int, int, int]], budget_s: float = SHAPE_BUDGET_S) -> dict:
    """GFLOP/s of numpy's BLAS, with the threads it has now, on X^T F at each shape (n, m, r)
    (:func:`product_gflops`)."""
    return {shape: product_gflops(*shape, budget_s=budget_s, most=50) for shape in shapes}


def own_bound_seconds(cells: pd.DataFrame, rates: Mapping[tuple[int, int, int], float]) -> np.ndarray:
    """Each cell's flops (the ``select_flops`` and ``other_flops`` of :func:`flops`) at the rates of its own shapes:
    the selection phase at (n, m, :data:`WIDE_STARTS` r), the rest at (n, m, r); NaN where a rate is missing."""
    def rate(n, m, r) -> float:
        if pd.isna(n) or pd.isna(m) or pd.isna(r):
            return math.nan
        return rates.get((int(n), int(m), int(r)), math.nan) * 1e9

    seconds = [select / rate(n, m, r * WIDE_STARTS) + other / rate(n, m, r) for select, other, n, m, r in
               zip(cells.select_flops, cells.other_flops, cells.n_samples, cells.n_features, cells["rank"])]
    return np.array(seconds, dtype=float)


def bounds(cells: pd.DataFrame, rates: Mapping[str, float],
           own_rates: Mapping[tuple[int, int, int], float] | None = None) -> pd.DataFrame:
    """Part 2 per (method, data set) over the computed cells: cells, work, bound, above (1 - bound / work), and the
    cells the model does not cover (``unmodelled``); sorted by work, longest first, then a total row ("all").

    With ``own_rates`` (GFLOP/s per shape, :func:`shape_rates` of :func:`cell_shapes`) also ``own_bound``, the
    flops at each cell's own shapes (:func:`own_bound_seconds`), and ``own_above``, 1 - own_bound / work."""
    computed = flops(cells[cells.status == COMPUTED])
    computed = computed.assign(bound=bound_seconds(computed.select_flops, computed.other_flops, rates),
                               unmodelled=computed.select_flops.isna())
    computed["own_bound"] = own_bound_seconds(computed, own_rates) if own_rates is not None else math.nan

    def total_of(b):
        return b.sum(min_count=1)

    grouped = computed.groupby(["method", "dataset"], sort=False).agg(
        cells=("seconds", "size"), work=("seconds", "sum"), bound=("bound", total_of),
        own_bound=("own_bound", total_of), unmodelled=("unmodelled", "sum"),
        estimator=("estimator", "first")).reset_index()
    grouped = grouped.sort_values("work", ascending=False, kind="stable")
    total = pd.DataFrame([{"method": "all", "dataset": "all", "cells": len(computed),
                           "work": computed.seconds.sum(), "bound": total_of(computed.bound),
                           "own_bound": total_of(computed.own_bound),
                           "unmodelled": int(computed.unmodelled.sum()), "estimator": ""}])
    out = pd.concat([grouped, total], ignore_index=True)
    work = out.work.where(out.work > 0)
    out["above"] = 1.0 - out.bound / work
    out["own_above"] = 1.0 - out.own_bound / work
    return out


# -- 3. schedules --------------------------------------------------------------------------------------------
def list_ends(durations: Iterable[float], workers: int, begin: float = 0.0) -> list[float]:
    """When each duration ends under greedy list scheduling from ``begin``: each in turn goes to the worker
    that is free first."""
    if workers < 1:
        raise ValueError(f"workers={workers} must be at least 1")
    free, ends = [float(begin)] * workers, []
    for duration in durations:
        ends.append(heapq.heappop(free) + float(duration))
        heapq.heappush(free, ends[-1])
    return ends


def list_schedule(durations: Iterable[float], workers: int) -> float:
    """Wall time of greedy list scheduling (:func:`list_ends`)."""
    return max(list_ends(durations, workers), default=0.0)


def paper_order(papers: Iterable[str]) -> list[str]:
    """The order the old scheduler started the papers in: by name (cai, ccf, cnmf, fnmf, lcf, pcgnmf; pcgnmf,
    which reads cnmf's runs, comes after it)."""
    return sorted(set(papers))


def simulate_sweeps(table: pd.DataFrame, cores: int, order: Sequence[str] | None = None) -> float:
    """Wall time of the old scheduler on ``cores`` cores (see the module docstring, part 3).

    Each (paper, sweep) is one unit lasting the sum of its cells' ``seconds`` (every status: a shared cell was
    computed in each job that holds it); the units start in paper order (``order``, default :func:`paper_order`)
    and sweep order on min(cores, units) workers, each taking the next unit when free.
    """
    cells = table[table.status != FAILED]
    sums = cells.assign(sweep=cells.sweep.fillna(-1)).groupby(["paper", "sweep"]).seconds.sum()
    rank = {paper: i for i, paper in enumerate(order if order is not None else paper_order(cells.paper))}
    units = sorted(sums.items(), key=lambda item: (rank.get(item[0][0], len(rank)), item[0][0], item[0][1]))
    if not units:
        return 0.0
    return list_schedule([seconds for _, seconds in units], min(cores, len(units)))


def pool_cells(table: pd.DataFrame) -> pd.DataFrame:
    """The cells a pool computes: every cell once (shared copies and failed cells left out)."""
    return table[~table.status.isin((SHARED, FAILED))]


def simulate_pool(table: pd.DataFrame, cores: int) -> float:
    """Wall time of one pool of cells on ``cores`` workers: longest expected first (``expected_seconds`` where
    known, else the recorded ``seconds``), each cell to the worker free first, lasting its recorded seconds."""
    cells = pool_cells(table)
    expected = cells.expected_seconds.where(cells.expected_seconds.notna(), cells.seconds)
    order = np.argsort(-expected.to_numpy(dtype=float), kind="stable")
    return list_schedule(cells.seconds.fillna(0.0).to_numpy(dtype=float)[order], cores)


def schedules(table: pd.DataFrame, cores: Iterable[int]) -> pd.DataFrame:
    """Part 3: for each core count, the wall time before, after and ideal (work / P, the pool's work), and the
    ratios to the ideal."""
    work = float(pool_cells(table).seconds.sum())
    rows = []
    for P in sorted(set(cores)):
        ideal = work / P
        before, after = simulate_sweeps(table, P), simulate_pool(table, P)
        rows.append({"cores": P, "before": before, "after": after, "ideal": ideal,
                     "before_ratio": before / ideal if ideal else math.nan,
                     "after_ratio": after / ideal if ideal else math.nan})
    return pd.DataFrame(rows)


def benchmark_rows(benchmark_dir: Path, loader: Loader | None = None,
                   cores: Sequence[int] = SIMULATED_CORES) -> list[Target]:
    """The family benchmark's cost after a reproduction (``make benchmark``, ``outputs/benchmark``): its wall time,
    the work of the cells it computed, how many it copied from the reproduction, and its pool simulated on
    ``cores`` cores (the cells it computes; a copied cell costs nothing). One row saying why when there is none.
    """
    try:
        run = load(benchmark_dir, loader)
    except NoReproduction:
        return [Target(ITEM, BENCHMARK, dataset="the benchmark", missing=f"no make benchmark record in {benchmark_dir}")]
    cells = run.cells
    copied = (cells.status == REUSED) & cells.shared_with.notna() if "shared_with" in cells else cells.status.isna()
    computed = cells[cells.status == COMPUTED]
    work = float(computed.seconds.sum())
    detail = (f"{len(cells):,} cells: {len(computed):,} computed, {int(copied.sum()):,} copied from the "
              f"reproduction, {int((cells.status == REUSED).sum() - copied.sum()):,} on disk before")
    rows = [Target(ITEM, BENCHMARK, "wall", "the benchmark", measured=run.wall_seconds, unit="s", detail=detail,
                   missing="" if run.wall_seconds is not None else "no wall time recorded",
                   extra={"cells": len(cells), "computed": len(computed), "copied": int(copied.sum())}),
            Target(ITEM, BENCHMARK, "work", "the benchmark", threads=1, measured=work, unit="s",
                   detail="fit + KMeans seconds of the computed cells")]
    for P in sorted(set([*cores, *([run.cores] if run.cores else [])])):
        rows.append(Target(ITEM, BENCHMARK, AFTER, f"the benchmark, {P} cores", measured=simulate_pool(computed, P),
                           unit="s", detail=f"ideal {work / P:,.0f} s", extra={"cores": P}))
    return rows


# -- the rows of the report ----------------------------------------------------------------------------------
def bound_rows(table: pd.DataFrame, rates: Mapping[str, float],
               own_rates: Mapping[tuple[int, int, int], float] | None = None) -> list[Target]:
    """Part 2 as rows: one per (method, data set) and the total (method "all"); with ``own_rates`` (see
    :func:`bounds`) each also gives the bound at its cells' own shapes (``own_bound_s``) and the share of the
    work above it (``own_above_pct``)."""
    rows = []
    for row in bounds(table, rates, own_rates).itertuples(index=False):
        known = not math.isnan(row.bound)
        detail = (f"{row.work:,.1f} s of work, bound {row.bound:,.1f} s" if known else "no model for its estimator")
        if known and not math.isnan(row.own_bound):
            detail += f", {row.own_bound:,.1f} s at its own shapes' rates"
        if known and row.unmodelled:
            detail += f" ({row.unmodelled} cells without a model)"
        extra = {"estimator": row.estimator, "cells": int(row.cells), "work_s": float(row.work),
                 "bound_s": float(row.bound), "unmodelled": int(row.unmodelled)}
        if own_rates is not None:
            extra.update(own_bound_s=float(row.own_bound), own_above_pct=100.0 * float(row.own_above))
        rows.append(Target(ITEM, BOUND, row.method, row.dataset, 1, 100.0 * row.above if known else None, "%",
                           detail=detail, extra=extra))
    return rows


def schedule_rows(table: pd.DataFrame, cores: Iterable[int]) -> list[Target]:
    """Part 3 as rows: per core count, one row per scheduler (before, after, ideal)."""
    rows = []
    for row in schedules(table, cores).itertuples(index=False):
        for name, wall, ratio in ((BEFORE, row.before, row.before_ratio), (AFTER, row.after, row.after_ratio),
                                  (IDEAL, row.ideal, 1.0)):
            rows.append(Target(ITEM, SCHEDULE, name, f"{row.cores} cores", measured=wall, unit="s",
                               detail=f"{ratio:.2f}x the ideal",
                               extra={"cores": int(row.cores), "ratio_to_ideal": ratio}))
    return rows


def report_rows(reproduce_dir: Path, loader: Loader | None = None,
                rates: Mapping[str, float] | Callable[[], Mapping[str, float]] = gemm_rates,
                cores: Sequence[int] = SIMULATED_CORES,
                own_rates: Callable[[list[tuple[int, int, int]]], Mapping] | None = None) -> list[Target]:
    """Every row of the section for the reproduction in ``reproduce_dir``; one row saying why when there is none.

    Parameters
    ----------
    reproduce_dir : Path
        Where ``make reproduce-all`` wrote (``outputs/reproduce``).
    loader : callable, optional
        Reads the cell table (:func:`load`); default :func:`default_loader`.
    rates : mapping or callable
        The GEMM rates ``narrow`` and ``wide`` in GFLOP/s, or what measures them (called only when there is a
        reproduction; measure at one thread).
    cores : sequence of int
        Core counts to simulate, besides the reproduction's own.
    own_rates : callable, optional
        Given the cells' shapes (:func:`cell_shapes`), their GEMM rates (:func:`shape_rates`, at one thread), for
        the bound at each cell's own shapes; None leaves it out.
    """
    try:
        run = load(reproduce_dir, loader)
    except NoReproduction as exc:
        return [Target(ITEM, NO_REPRODUCTION, dataset="all papers", missing=str(exc))]
    rows = summary(run)
    try:
        rates = dict(rates() if callable(rates) else rates)
        n, m, r = NARROW
        for name, width, used in (("narrow", r, "one start's columns: the kept start, KMeans and the set-up"),
                                  ("wide", r * WIDE_STARTS, f"{WIDE_STARTS} starts' columns: the selection phase")):
            rows.append(Target(ITEM, RATE, name, threads=1, measured=rates[name], unit="GFLOP/s",
                               detail=f"X^T F, X {m} x {n}, F {m} x {width} ({used})",
                               extra={"n": n, "m": m, "r": width}))
        shapes = dict(own_rates(cell_shapes(run.cells))) if own_rates is not None else None
        rows += bound_rows(run.cells, rates, shapes)
    except Exception as exc:  # reported in its row (no limit, so no verdict); the other parts go on
        rows.append(Target(ITEM, BOUND, missing=f"not computed: {one_line(exc)}"))
    own = [run.cores] if run.cores else []
    rows += schedule_rows(run.cells, [*cores, *own])
    return rows

"""The order of the pool and the record of a reproduction's schedule.

Longest first. A pool of workers finishes soonest when its longest cells start first (longest processing
time first: the wall time is at most the work divided by the workers plus one cell). A cell's expected time
(:func:`expected_seconds`) is the time its row on disk recorded, when an earlier run left one (a stale row,
computed under other code, still says how long the cell takes, if it ran the same loop settings), or the
published cost of its job and k, else the cost model: the updates its settings make (:func:`updates`: the
starts' selection, then the stopping rule's iterations or its cap), times the sub-runs, at what an update and
a KMeans step of that method on that data set cost as the rows on disk measured them (:class:`UnitCosts`:
the command's own cells already on disk, and the rows of the runs it copies from), else the size model
(samples x features x rank x sub-runs x updates) in the seconds per unit of the cells that have both a
measured time and a model (:func:`calibrate`). A setting nobody has measured (a tighter stopping rule, a cap
of 20,000) is priced at its bound: its cells run first and the forecast learns their real cost from them
(:class:`Forecast`).

The record. Each reproduction writes, into ``outputs/reproduce/``, ``schedule.csv`` (one row per cell of the
selected papers: :data:`COLUMNS`) and ``schedule.json`` (the papers, workers, cores, wall
and CPU time, cells computed, shared and reused, the forecast's samples and its errors at 10%, 25% and 50% of
the cells and of the wall time: :func:`forecast_errors`), replaced by the next run. ``make bench`` reads
them back with :func:`cell_table` (``tools/bench/reproduction.py``).
"""

from __future__ import annotations

import json
import math
import time
from collections import deque
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import nnls

from ...files import write_atomic
from ..progress import duration
from ..results import load_cell

SCHEDULE, SUMMARY = "schedule.csv", "schedule.json"
#: The columns of ``schedule.csv``: the cell, its job and sweep, its costs and when and where it ran.
#: ``kmeans_runs`` counts the KMeans runs a sub-run makes (restarts and readouts). ``status`` is computed,
#: shared (computed once for another job: ``shared_with``), reused (on disk before, or copied from another
#: command's run: ``shared_with``), failed or not run;
#: ``seconds`` is the row's fit and KMeans time, ``cpu_seconds`` the worker's CPU time for the cell,
#: ``start``/``end`` seconds since the pool started.
COLUMNS = ("paper", "sweep", "job", "dataset", "method", "estimator", "params", "k", "trial", "rank", "n_samples",
           "n_features", "subruns", "kmeans_runs", "n_iter", "seconds", "status", "shared_with", "cpu_seconds",
           "expected_seconds", "start", "end", "worker")


def model_seconds(n_samples: float, n_features: int, rank: int, subruns: int, updates: float = 1.0) -> float:
    """A cell's relative cost when nothing was recorded: samples x features x rank x sub-runs x the updates
    of one fit (:func:`updates`; unit: 1e9)."""
    return n_samples * n_features * rank * subruns * updates / 1e9


#: The shared loop's settings (:mod:`src.methods.core.loop`) with the estimators' defaults: what the number of
#: updates of a fit follows.
LOOP = {"stopping": "reference", "n_starts": 10, "min_iter": 30, "tol": 1e-5, "max_iter": 10_000}


def loop_settings(params) -> dict | None:
    """The shared loop's settings among a method's parameters, defaults filled; None for a method without
    ``max_iter`` (KMeans, COP-KMeans, SDA: one pass of their own, priced by their size alone)."""
    if "max_iter" not in params:
        return None
    return {key: params.get(key, default) for key, default in LOOP.items()}


def updates(loop: dict | None, continued: float | None = None) -> float:
    """The single-start updates of one fit under the loop settings ``loop`` (:func:`loop_settings`).

    Several starts are first updated ``min_iter`` times each (``n_starts x min_iter``), then the kept start
    goes on: under ``stopping="fixed"`` to ``max_iter`` updates in all; under the reference rule for
    ``continued`` updates when cells of the same settings measured it (:meth:`UnitCosts.continued`), else
    up to its cap, ``max_iter``: a stopping rule nobody has measured is priced at its bound. 1.0 for a method
    outside the loop (``loop`` None).
    """
    if loop is None:
        return 1.0
    starts, first = int(loop["n_starts"]), int(loop["min_iter"])
    selection, kept = (starts * first, first) if starts > 1 else (0, 0)
    cap = max(0, int(loop["max_iter"]) - kept)
    if loop["stopping"] == "fixed" or continued is None:
        return float(selection + cap)
    return float(selection + min(cap, max(0.0, continued)))


def continued_of(loop: dict | None, n_iter) -> float | None:
    """The kept start's updates after the selection in a row with ``n_iter`` (the loop counts the selection's
    ``min_iter`` updates in it when there were several starts)."""
    if loop is None or not isinstance(n_iter, (int, float)) or math.isnan(n_iter):
        return None
    return max(0.0, float(n_iter) - (int(loop["min_iter"]) if int(loop["n_starts"]) > 1 else 0))


def change_key(params, subruns: int, preprocess) -> str:
    """What a setting changes in a cell's cost, whatever the method and data set: the loop settings, the
    sub-runs and the preprocessing (a reading that tightens the stopping rule of five methods shares one key)."""
    return json.dumps([loop_settings(params), int(subruns), preprocess], sort_keys=True, default=str)


class UnitCosts:
    """What an update of each method costs on each data set, what its KMeans step costs, and how many updates
    the reference rule made under each loop setting and rank, as the rows on disk measured them
    (:meth:`learn`); :meth:`seconds` prices a cell with them.

    An update's seconds are fitted as ``n x (a + b x rank)`` (nonnegative least squares over the rows of the
    method and data set, with the updates each row made: its ``n_iter``): on these data sets an update is
    bound by its per-sample work as much as by the rank, so a cost proportional to the rank prices a rank-2
    cell at a third of what it takes and a rank-10 one at twice. The KMeans step does not follow the updates:
    it is fitted apart as ``c + d x n x rank`` per sub-run. A setting no row has run (200 fixed updates, a
    cap of 20,000) is priced by its own updates at the measured speed.
    """

    def __init__(self):
        self.rows: dict[tuple[str, str], list[tuple[float, float, float, float, float]]] = {}
        self.runs: dict[tuple, list[float]] = {}
        self.fitted: dict[tuple[str, str], tuple[float, float, float, float]] = {}

    @staticmethod
    def loop_key(method: str, dataset: str, loop: dict | None) -> tuple[str, str, str]:
        return method, dataset, json.dumps(loop, sort_keys=True, default=str)

    def learn(self, method: str, dataset: str, params, row: dict, subruns: int) -> None:
        """Take one row on disk of a cell of ``method`` on ``dataset`` (``params`` its method's parameters)."""
        fit, kmeans = float(row.get("fit_seconds") or 0.0), float(row.get("kmeans_seconds") or 0.0)
        n, rank = row.get("n_samples"), row.get("rank")
        if not (isinstance(n, (int, float)) and isinstance(rank, (int, float)) and n > 0 and rank > 0):
            return
        loop = loop_settings(params)
        continued = continued_of(loop, row.get("n_iter"))
        if loop is not None and loop["stopping"] != "fixed" and continued is not None:
            self.runs.setdefault(self.loop_key(method, dataset, loop), []).append(continued)
            self.runs.setdefault((*self.loop_key(method, dataset, loop), int(rank)), []).append(continued)
        done = updates(loop, continued) if loop is None or continued is not None else None
        if done and fit > 0:
            self.rows.setdefault((method, dataset), []).append((n, rank, subruns * done, fit, kmeans / subruns))
            self.fitted.pop((method, dataset), None)

    def continued(self, method: str, dataset: str, loop: dict | None, rank: int | None = None) -> float | None:
        """The mean updates after the selection of the rows of the same method, data set and loop settings (of
        the same rank when there are some)."""
        key = self.loop_key(method, dataset, loop)
        found = self.runs.get((*key, int(rank)) if rank is not None else key) or self.runs.get(key)
        return sum(found) / len(found) if found else None

    def coefficients(self, method: str, dataset: str) -> tuple[float, float, float, float] | None:
        """``(a, b, c, d)`` of the class docstring, fitted once per (method, data set) on its rows."""
        if (method, dataset) not in self.fitted:
            rows = np.array(self.rows.get((method, dataset), []), dtype=float).reshape(-1, 5)
            if not len(rows):
                return None
            n, rank, done, fit, kmeans = rows.T
            self.fitted[method, dataset] = (*two_terms(n * done, n * done * rank, fit),
                                            *two_terms(np.ones_like(n), n * rank, kmeans))
        return self.fitted[method, dataset]

    def seconds(self, method: str, dataset: str, params, n_samples: float, rank: int, subruns: int) -> float | None:
        """A cell's expected seconds at the measured costs of its method and data set (None when no row of
        them was read)."""
        found = self.coefficients(method, dataset)
        if found is None:
            return None
        a, b, c, d = found
        loop = loop_settings(params)
        done = updates(loop, self.continued(method, dataset, loop, rank))
        return subruns * (n_samples * done * (a + b * rank) + c + d * n_samples * rank)


def two_terms(first: np.ndarray, second: np.ndarray, seconds: np.ndarray) -> tuple[float, float]:
    """Nonnegative ``(x, y)`` with ``seconds ~ x first + y second`` (least squares); with one distinct ratio
    of the terms (one rank), ``seconds`` proportional to ``second`` alone."""
    terms = np.column_stack([first, second])
    if len(np.unique(np.round(second / np.maximum(first, 1e-300), 9))) < 2:
        return 0.0, float(np.median(seconds / np.maximum(second, 1e-300)))
    x, _ = nnls(terms, seconds)
    return float(x[0]), float(x[1])


def recorded_seconds(paths: list[Path], change: str | None = None) -> float | None:
    """The fit and KMeans seconds of a row an earlier run left at one of ``paths`` (whatever its code), or None.
    Given the cell's ``change`` (:func:`change_key`), a row whose method ran other loop settings, sub-runs or
    preprocessing does not count: a sweep rerun with ten times the iterations into the same folder is not
    expected at the old rows' seconds."""
    for path in paths:
        row = load_cell(path) if Path(path).is_file() else None
        if row and isinstance(row.get("fit_seconds"), (int, float)) and (change is None or row_change(row) in (
                None, change)):
            return float(row["fit_seconds"]) + float(row.get("kmeans_seconds") or 0.0)
    return None


def row_change(row: dict) -> str | None:
    """The :func:`change_key` of the settings a row on disk records, or None when it records no parameters."""
    try:
        params = json.loads(row["params"]) if isinstance(row.get("params"), str) else row["params"]
        return change_key(params, int(row.get("protocol_subruns") or 1), row.get("dataset_preprocess"))
    except (KeyError, TypeError, ValueError):
        return None


#: The cell costs of the reproduction ``make results`` published (:func:`write_costs`), in the checkout: what a
#: fresh clone, with no cell on disk, expects each cell to take.
PUBLISHED_COSTS = Path(__file__).resolve().parents[3] / "docs" / "results" / "cell_costs.csv"


def job_key(job_dir) -> str:
    """A job's run directory from its command's folder on (``reproduce/lcf/runs/yale_LCF``,
    ``explain/lcf/eq41/runs/1/yale_LCF``, ``benchmark/labels10/runs/orl_CNMF``): the same in every checkout,
    whatever the path to its outputs."""
    parts = Path(job_dir).parts
    start = max((i for i, part in enumerate(parts) if part in COMMAND_FOLDERS), default=0)
    return "/".join(parts[start:])


#: The folders under ``outputs/`` whose jobs the pool runs: ``make reproduce-*``, ``make explain-*`` and
#: ``make benchmark``.
COMMAND_FOLDERS = ("reproduce", "explain", "benchmark")


def costs_of(schedule: pd.DataFrame) -> pd.DataFrame:
    """The mean cost of each (job, k) of the ``schedule.csv`` rows of a reproduction (and of a benchmark,
    concatenated), as columns ``job`` (as :func:`job_key` gives it), ``k`` and ``seconds``: about a thousand rows
    a command, for every cell's cost.

    A cell's cost is the wall seconds its worker spent on it (``end - start``), which is what
    :class:`Forecast` measures and forecasts: on top of the fit and KMeans seconds of the row it holds the
    cell's set-up and the writing of its row, a tenth of a short cell. A cell with no worker time (on disk
    before the run) counts its row's fit and KMeans seconds."""
    done = schedule[schedule["status"].isin(["computed", "shared", "reused"]) & schedule["seconds"].notna()].copy()
    done["job"] = done["job"].map(job_key)
    times = done.reindex(columns=["start", "end"])  # a record without them: the rows' seconds
    worker = times["end"] - times["start"]
    done["seconds"] = worker.where(worker > 0, done["seconds"])
    return done.groupby(["job", "k"], as_index=False)["seconds"].mean().round({"seconds": 4})


def write_costs(schedule: pd.DataFrame, path: Path) -> None:
    """Write :func:`costs_of` the ``schedule`` rows to ``path``, whole or not at all."""
    write_atomic(Path(path), costs_of(schedule).to_csv(index=False))


def published_costs(path: Path = PUBLISHED_COSTS) -> dict[tuple[str, int], float]:
    """The costs :func:`write_costs` wrote, by ``(job as :func:`job_key` gives it, k)``; empty when
    there are none."""
    try:
        table = pd.read_csv(path)
    except (OSError, ValueError, pd.errors.EmptyDataError):
        return {}
    return {(str(job), int(k)): float(seconds) for job, k, seconds in table[["job", "k", "seconds"]].itertuples(
        index=False)}


def prior_seconds(costs: dict[tuple[str, int], float], job_dir: Path, k: int,
                  twins: Mapping[str, tuple[str, ...]] | None = None) -> float | None:
    """The published cost of cell k of the job in ``job_dir`` (matched on :func:`job_key`), else that of the
    job of the same name in its folder's twins, nearest first (:func:`twin_folders`)."""
    key = job_key(job_dir)
    folder, _, name = key.rpartition("/")
    for candidate in (key, *(f"{twin}/{name}" for twin in (twins or {}).get(folder, ()))):
        if (candidate, int(k)) in costs:
            return costs[candidate, int(k)]
    return None


def twin_folders(homes) -> dict[str, tuple[str, ...]]:
    """The twins the ``homes`` declare (a home's optional ``twins``: pairs of a sweep folder and the folders
    whose jobs of the same name cost about what its jobs do, nearest first), keyed as :func:`job_key` keys a
    folder. A job that nobody has published is priced like its twin, not by the cost model, which knows a
    method's cost only from rows on disk and can be wrong by an order of magnitude for a fast method."""
    return {job_key(folder): tuple(job_key(twin) for twin in twins)
            for home in homes for folder, twins in getattr(home, "twins", ())}


def expected_seconds(recorded: list[float | None], models: list[float]) -> list[float]:
    """Each cell's expected seconds: its recorded time, else its model (:func:`model_seconds`) in seconds
    (:func:`calibrate` over the cells that have both)."""
    scale = calibrate([(seconds, model) for seconds, model in zip(recorded, models) if seconds is not None])
    return [seconds if seconds is not None else model * scale for seconds, model in zip(recorded, models)]


def calibrate(recorded: list[tuple[float, float]]) -> float:
    """Seconds per model unit: the median ratio of recorded seconds to :func:`model_seconds` over the
    ``(recorded, model)`` pairs of cells that have both; 1.0 when there are none."""
    ratios = sorted(seconds / model for seconds, model in recorded if model > 0 and seconds > 0)
    return ratios[len(ratios) // 2] if ratios else 1.0


def write_record(folder: Path, rows: list[dict], summary: dict) -> None:
    """Write ``schedule.csv`` (``rows``, in :data:`COLUMNS`) and ``schedule.json`` (``summary``) into ``folder``."""
    frame = pd.DataFrame(rows).reindex(columns=list(COLUMNS))
    write_atomic(Path(folder) / SCHEDULE, frame.to_csv(index=False))
    write_atomic(Path(folder) / SUMMARY, json.dumps(summary, indent=2, default=str) + "\n")


def cell_table(folder: Path) -> tuple[pd.DataFrame, dict] | None:
    """The last reproduction's cells (``schedule.csv``: :data:`COLUMNS`) and summary (``schedule.json``) in
    ``folder``, or None if it holds none. Shared cells carry the time of the cell they copy."""
    try:
        table = pd.read_csv(Path(folder) / SCHEDULE, low_memory=False)  # worker: empty where reused
        summary = json.loads((Path(folder) / SUMMARY).read_text())
    except (OSError, ValueError, pd.errors.EmptyDataError):
        return None
    return table, summary


def utilisation(wall: float, work: float, cores: int) -> float:
    """Wall time over the ideal (work / cores): 1.0 when every core was busy all the time."""
    return wall / (work / cores) if work > 0 and cores > 0 else math.nan


def group_chain(method: str, dataset: str, setting: str | None = None, change: str | None = None,
                basis: str = "size") -> tuple:
    """The groups of a modelled cell whose ratios :class:`Forecast` reads, finest first, by the ``basis`` of
    its expected seconds.

    Every cell first takes its setting's (every setting of its job but k and the trial,
    :func:`src.running.pool.jobs.setting_key`): a sweep is priced by what its first cells cost. Then:

    * ``"rows"`` (the model at the costs the rows on disk measured, :class:`UnitCosts`): nothing else; until
      a cell of its setting is done the model stands (ratio 1). A pooled ratio would be learnt on the cells
      the pool ran first, those the model priced highest, which are mostly those it priced too high.
    * ``"cap"`` (the same, with a stopping rule no row has run, priced at its cap): the same change of
      settings on other methods and data sets (:func:`change_key`; a tightened rule runs a like share of its
      cap everywhere), then the model.
    * ``"size"`` (the size model in seconds of :func:`calibrate`, which misjudges methods by several times):
      its (method, data set), its method, then every cell done.
    """
    chain = [("setting", setting)] if setting else []
    if basis == "cap" and change:
        chain.append(("change", change))
    if basis == "size":
        chain += [(method, dataset), method, None]
    return tuple(chain)


#: The key of :class:`Forecast`'s ratio of the cells whose expectation was measured.
MEASURED = ("measured",)
#: The wall seconds over which :class:`Forecast` measures the machine's speed on measured cells: the cells
#: that ended in the last five minutes.
RECENT_SECONDS = 300.0


class Forecast:
    """The time left of a pool, calibrated on the cells already measured.

    Before a cell is done the expected seconds of :func:`expected_seconds` are all there is: a time measured
    for the cell (a row on disk, or the published cost of its job and k, :func:`prior_seconds`), or the size
    model in seconds, which orders cells but misjudges methods by several times (iterations, the KMeans step
    and Python's dispatch are not in it). Each finished cell tells how far off its expectation was: the wall
    seconds its worker spent on it over its expected seconds. A modelled cell still to run is expected at its
    expectation times the ratio of the first of its groups (:func:`group_chain`) with a cell done, else at
    its expectation: its own setting (method, parameters, protocol and data set: a sweep nobody ran before is
    priced by what its first cells cost), then by how its expectation was made (sums of seconds over sums of
    expectations, so that long cells weigh as they cost). A measured cell already carries its method's and size's cost; only the machine's speed is unknown,
    so it takes one ratio over the measured cells that ended in the last :data:`RECENT_SECONDS` (all measured
    cells done when none did): a per-group ratio, learnt on a group's long cells (the pool runs them first),
    misjudged its short ones; a ratio over the whole run carried the speed of its first minutes to the end,
    when another load on the machine came or went (the speed of a shared machine drifts by a third within a
    run), and a measured cost's own run may have been slowed that way. The time left is the
    work left over the workers (or, on SLURM, over the work done per second so far), and at least the longest
    cell left, plus the reports still to write: a paper's report (tables, figures) is written once its last
    cell is in, and the pool's longest-first order leaves most of them to the end, after the workers stop.
    Each report left is expected to take the mean of those written so far (nothing before the first).

    Parameters
    ----------
    expected : list of float
        Each task's expected seconds (longest first is not required).
    groups : list of tuple
        Each task's groups, finest first (:func:`group_chain`).
    workers : int or None
        Worker processes; None (SLURM) uses the rate measured so far.
    measured : list of bool, optional
        Whether each task's expectation is a measured time rather than the size model (default: none is).
    reports : int, optional
        The reports the pool writes as its papers finish (:meth:`report_done` counts them down).
    later : float, optional
        The seconds of work expected after this pool, by the same costs (a tuned run's later rounds, priced
        before they are known: :func:`src.tuning.later_work`), added to the time left at the pool's own speed
        (its seconds taken per second expected, over the workers).
    """

    def __init__(self, expected: list[float], groups: list[tuple[str, str]], workers: int | None,
                 started: float | None = None, measured: list[bool] | None = None, reports: int = 0,
                 later: float = 0.0):
        self.expected, self.groups, self.workers = list(expected), list(groups), workers
        self.later = max(0.0, float(later))
        self.measured = list(measured) if measured is not None else [False] * len(self.expected)
        self.started = time.time() if started is None else started
        self.left = set(range(len(self.expected)))
        self.sums: dict[object, list[float]] = {}  # key -> [seconds taken, seconds expected]
        self.taken = 0.0
        self.samples: list[list[float]] = []
        self.reports_left, self.report_seconds = int(reports), []
        self.recent: deque[tuple[float, float, float]] = deque()  # measured cells done: (when, taken, expected)
        self.now: float | None = None  # the time the ratios are read at (seconds_left's)
        self._recent, self._recent_at = None, None

    def report_done(self, seconds: float) -> None:
        """A paper's report took ``seconds`` (wall, in the pool's own process)."""
        self.reports_left = max(0, self.reports_left - 1)
        self.report_seconds.append(max(0.0, float(seconds)))

    def reports_seconds(self) -> float:
        """The wall seconds the reports left are expected to take (0 before one is written)."""
        if not self.report_seconds:
            return 0.0
        return self.reports_left * sum(self.report_seconds) / len(self.report_seconds)

    def done(self, task: int, seconds: float, now: float | None = None) -> None:
        """Task ``task`` took ``seconds`` (wall, in its worker), ending at ``now`` (default: the time)."""
        if task not in self.left:
            return
        self.left.discard(task)
        seconds = max(0.0, float(seconds)) if math.isfinite(seconds) else self.expected[task]
        self.taken += seconds
        if self.measured[task]:
            self.recent.append((time.time() if now is None else now, seconds, self.expected[task]))
            while self.recent and self.recent[0][0] < self.recent[-1][0] - RECENT_SECONDS:
                self.recent.popleft()
        for key in self.keys(task):
            pair = self.sums.setdefault(key, [0.0, 0.0])
            pair[0] += seconds
            pair[1] += self.expected[task]

    def keys(self, task: int) -> tuple:
        """The groups whose ratio a task takes, first found first: measured cells the measured ones', then
        every cell's; modelled cells their groups' (:func:`group_chain`)."""
        if self.measured[task]:
            return (MEASURED, None)
        return self.groups[task]

    def ratio(self, task: int) -> float:
        """Seconds taken per second expected, for cells like ``task`` (1.0 before any is done)."""
        if self.measured[task]:
            recent = self.recent_ratio()
            if recent is not None:
                return recent
        for key in self.keys(task):
            taken, expected = self.sums.get(key, (0.0, 0.0))
            if expected > 0 and taken > 0:
                return taken / expected
        return 1.0

    def recent_ratio(self) -> float | None:
        """Seconds taken per second expected over the measured cells that ended in the :data:`RECENT_SECONDS`
        before ``self.now`` (the last one done when it is not set), or None when none did; computed once per
        time it is read at."""
        now = self.now if self.now is not None else (self.recent[-1][0] if self.recent else 0.0)
        if self._recent_at != (now, len(self.recent), self.taken):
            window = [(taken, expected) for when, taken, expected in self.recent if when >= now - RECENT_SECONDS]
            taken, expected = sum(pair[0] for pair in window), sum(pair[1] for pair in window)
            self._recent = taken / expected if expected > 0 and taken > 0 else None
            self._recent_at = (now, len(self.recent), self.taken)
        return self._recent

    def work_left(self) -> float:
        """The seconds of work the cells left are expected to take."""
        return sum(self.expected[task] * self.ratio(task) for task in self.left)

    def fraction_done(self) -> float:
        """The share of the work done, in [0, 1]."""
        total = self.taken + self.work_left()
        return self.taken / total if total > 0 else 1.0

    def later_seconds(self) -> float:
        """The wall seconds the work after this pool is expected to take (``later``): at the speed of the
        cells done so far (seconds taken per second expected), over the workers."""
        if not self.later:
            return 0.0
        done = [task for task in range(len(self.expected)) if task not in self.left]
        expected = sum(self.expected[task] for task in done)
        speed = self.taken / expected if expected > 0 and self.taken > 0 else 1.0
        return self.later * speed / max(self.workers or 1, 1)

    def seconds_left(self, now: float | None = None) -> float | None:
        """The wall seconds left, or None before any cell is done (no calibration yet)."""
        if not self.left:
            return self.reports_seconds() + self.later_seconds()
        if not self.sums:
            return None
        now = time.time() if now is None else now
        self.now = now
        work = self.work_left()
        if self.workers:
            rate = min(self.workers, len(self.left))
        else:
            rate = self.taken / max(now - self.started, 1e-9)
        longest = max(self.expected[task] * self.ratio(task) for task in self.left)
        return max(work / max(rate, 1e-9), longest) + self.reports_seconds() + self.later_seconds()

    def record(self, cells_fraction: float, now: float | None = None) -> None:
        """Keep ``(seconds since the start, share of cells done, share of work done, seconds left)``
        for ``schedule.json``, so that the forecast can be checked against the time the pool took."""
        now = time.time() if now is None else now
        left = self.seconds_left(now)
        self.samples.append([round(now - self.started, 2), round(cells_fraction, 5),
                             round(self.fraction_done(), 5), None if left is None else round(left, 2)])


#: The shares of the cells (or of the wall time) at which a forecast is held to the time that remained.
SHARES = (0.1, 0.25, 0.5)


def forecast_errors(samples: list[list[float]], wall: float, at=SHARES, by: str = "cells") -> list[dict]:
    """How far the recorded forecast was from the time that actually remained, at the first sample where
    each share ``at`` of the cells was done (``by="cells"``), or of the pool's wall time had passed
    (``by="time"``: the share of the work, as the run turned out): ``{"cells": share of the cells, "elapsed",
    "work", "forecast", "actual", "error"}`` (``"time"``: the share of the wall time, with ``by="time"``), with
    ``error = forecast / actual - 1``."""
    out = []
    for share in at:
        reached = (lambda s: s[1] >= share) if by == "cells" else (lambda s: s[0] >= share * wall)
        sample = next((s for s in samples if reached(s) and s[3] is not None), None)
        if sample is None:
            continue
        error = sample_error(sample, wall)
        out.append({**error, "cells": share} if by == "cells" else {"time": share, **error})
    return out


def sample_error(sample: list[float], wall: float) -> dict:
    """How far one recorded forecast (``[elapsed, share of the cells, share of the work, forecast]``) was from
    the time that remained of ``wall``: ``{"cells", "elapsed", "work", "forecast", "actual", "error"}``, with
    ``error = forecast / actual - 1`` (NaN where nothing remained)."""
    actual = wall - sample[0]
    return {"cells": sample[1], "elapsed": sample[0], "work": sample[2], "forecast": sample[3], "actual": actual,
            "error": sample[3] / actual - 1 if actual > 0 else math.nan}


def error_lines(summary: dict, unit: str = "cells", whose: str = "the time left") -> list[str]:
    """The summary's forecast errors (:func:`forecast_errors`, of the ``unit`` and of the time) as log lines:
    ``the time left forecast at 10% of the cells (2 min in): 9 min, it took 8 min (+12%)``."""
    return [f"{whose} forecast at {100 * error.get('time', error['cells']):.0f}% of the "
            f"{'time' if 'time' in error else unit} ({duration(error['elapsed'])} in): {duration(error['forecast'])}, "
            f"it took {duration(error['actual'])} ({100 * error['error']:+.0f}%)"
            for error in summary.get("forecast_errors", []) + summary.get("forecast_errors_by_time", [])]


#: The summary's counts that add up over pools run one after another (:func:`combined`).
ADDED = ("jobs", "cells", "computed", "shared", "reused", "copied", "cpu_seconds")


def combined(rounds: list[tuple[float, pd.DataFrame, dict]]) -> tuple[pd.DataFrame, dict]:
    """One record of pools run one after another (a tuned benchmark's rounds, :mod:`src.tuning.growth`), each
    ``(its start in seconds after the first's, its cells, its summary)``: the cells of all, the counts added,
    the wall time from the first start to the last end, and the forecast's samples on that one clock (the
    share of the cells of all rounds), so that its errors are the whole run's (a round's forecast knows
    nothing of the rounds after it). ``rounds`` in the summary keeps each round's counts and wall time."""
    table = pd.concat([rows for _, rows, _ in rounds], ignore_index=True)
    summary = dict(rounds[-1][2])
    for key in ADDED:
        summary[key] = sum(found.get(key, 0) or 0 for _, _, found in rounds)
    wall = rounds[-1][0] + float(rounds[-1][2].get("wall_seconds", 0))
    total = sum(found.get("computed", 0) or 0 for _, _, found in rounds) or 1
    work = sum(float(found.get("cpu_seconds", 0) or 0) for _, _, found in rounds) or 1.0
    samples, cells_before, work_before = [], 0, 0.0
    for start, _, found in rounds:
        cells, seconds = found.get("computed", 0) or 0, float(found.get("cpu_seconds", 0) or 0)
        for elapsed, cell_share, work_share, left in found.get("forecast", []):
            samples.append([start + elapsed, (cells_before + cell_share * cells) / total,
                            (work_before + work_share * seconds) / work, left])
        cells_before, work_before = cells_before + cells, work_before + seconds
    summary.update(wall_seconds=wall, forecast=samples, forecast_errors=forecast_errors(samples, wall),
                   forecast_errors_by_time=forecast_errors(samples, wall, by="time"),
                   rounds=[{key: found.get(key) for key in (*ADDED, "wall_seconds")} | {"start": start}
                           for start, _, found in rounds])
    return table, summary

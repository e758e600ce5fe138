"""One pool of cells for a reproduction: every cell of every selected paper, longest first, on every core.

:func:`run_pool` takes the papers' sweeps (:mod:`.jobs`: each job composed as Hydra's multirun composes
it, into the same run directory), checks every job before it starts any (settings, method, labels, data:
:func:`src.running.cells.open_run`; the invalid ones are listed, one line each, and nothing starts), and hands the
cells still to compute to a pool of workers (:mod:`.workers`: processes on this machine, or SLURM array
tasks when the sweeps' ``hydra.launcher`` is submitit's SLURM launcher), longest expected first
(:mod:`.schedule`). A cell two jobs share is computed once (:func:`.jobs.sharing_key`).

A cell stays the unit of results and of resumption: its row is written into ``cells/`` of its job's run
directory as soon as it is done, and a re-run computes only the cells not on disk. When a job's last cell
is in, its ``results.csv``, the report that ``job_report`` writes beside it (the entry points pass the tables
and figure of :func:`src.presentation.report.write_reports`; without one, ``results.csv`` only) and
``provenance.json`` are written as a sweep job writes them (:func:`src.running.cells.end_run`); when a
paper's last job is in (and those of the papers it reads), ``paper_done`` is called with it
(:mod:`src.reproduce` has its figures drawn and its report written there).

A cell that fails is reported on one line with its job; the job gets no ``results.csv``, the other cells
go on, and :class:`PoolFailed` lists the failed jobs at the end. The schedule is recorded in
``schedule.csv`` and ``schedule.json`` (:mod:`.schedule`), also when the pool stops early.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable
from typing import Protocol
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from hydra.errors import HydraException
from omegaconf.errors import OmegaConfBaseException
from threadpoolctl import threadpool_limits

from ... import methods
from ...data import load_dataset
from ...errors import StepFailed, UserError, one_line
from .. import cell_warnings
from ..progress import counted, duration
from ...protocol.cell import READOUTS, clusters_directly
from ..results import load_cell
from ..slurm import NEEDED_COMMANDS, missing_commands
from ..cells import OpenRun, ReportWriter, begin_run, cell_paths, end_run, open_run, run_cells, stale_reason
from ..settings import check_without_data
from ...resolvers import usable_cores
from . import reuse, schedule
from .jobs import Job, Task, expand, setting_key, sharing_keys, tasks_of
from .workers import Done, Row, Work, run_local, run_slurm

logger = logging.getLogger(__name__)


class Home(Protocol):
    """What the pool reads of a paper's home (:class:`src.reproduction.homes.Paper` is one; so is a reading's
    or a benchmark track's): its name, the homes whose runs it waits for, and its sweeps as Hydra overrides.
    A home may also declare ``twins``, the folders whose jobs price its own (:func:`.schedule.twin_folders`)."""

    name: str
    depends_on: tuple[str, ...]

    def sweep_overrides(self) -> list[list[str]]:
        ...

#: The seconds between two samples of the forecast that ``schedule.json`` keeps (:meth:`.schedule.Forecast.record`).
SAMPLE_SECONDS = 5.0

#: Where submitit keeps the files of a reproduction's SLURM tasks, under the reproduction's folder.
SLURM_FOLDER = ".slurm"


class PoolFailed(Exception):
    """Cells failed: ``lines`` holds one line per failed job (the others finished)."""

    def __init__(self, lines: list[str]):
        super().__init__(f"{len(lines)} job(s) failed")
        self.lines = lines

    def as_step(self) -> StepFailed:
        """Log the failed jobs, one line each, and return the one-line failure a command reports."""
        for line in self.lines:
            logger.error("  %s", line)
        return StepFailed(f"{len(self.lines)} job(s) failed (listed above; the other jobs finished): run the same "
                          "command again to compute the missing cells")


def sweeps_of(chosen: list[Home], overrides: list[str]) -> list[tuple[str, int, list[str]]]:
    """Each sweep of the ``chosen`` papers as ``(paper, sweep index, overrides)``, ``overrides`` added last."""
    return [(paper.name, i, [*sweep, *overrides])
            for paper in chosen for i, sweep in enumerate(paper.sweep_overrides())]


def plan_jobs(chosen: list[Home], overrides: list[str]) -> list[Job]:
    """The jobs of the ``chosen`` papers' sweeps; a bad override or setting is one
    :class:`~src.errors.UserError` line."""
    started = time.monotonic()
    try:
        jobs = expand(sweeps_of(chosen, overrides))
    except (HydraException, OmegaConfBaseException) as exc:
        raise UserError(f"the papers' sweeps cannot be composed: {one_line(exc)}") from None
    if len(jobs) > 1:
        logger.info("composed %s in %.1f s", counted(len(jobs), "job"), time.monotonic() - started)
    return jobs


class DataCache:
    """Load each data set once for all jobs (each :class:`~src.data.Dataset` keeps the files it was read from)."""

    def __init__(self):
        self.loaded = {}

    def __call__(self, config, data_dir, mirror, seed):
        key = json.dumps([config, str(data_dir), str(mirror), seed], sort_keys=True, default=str)
        if key not in self.loaded:
            self.loaded[key] = load_dataset(config, data_dir, mirror, seed)
        return self.loaded[key]


def checked(jobs: list[Job], check: Callable[[Job], object]) -> list:
    """``check(job)`` of every job, in order; the jobs it refuses are logged one per line and make one
    :class:`~src.errors.UserError` naming the first, before any cell is computed."""
    results, problems = [], []
    for job in jobs:
        try:
            results.append(check(job))
        except (UserError, KeyError, TypeError, ValueError) as exc:
            problems.append(f"{job.name} (sweep {job.sweep + 1} job {job.number}): {one_line(exc)}")
    if problems:
        for line in problems:
            logger.error("  %s", line)
        raise UserError(f"{len(problems)} of {len(jobs)} jobs are invalid (listed above); no cell was computed. "
                        f"The first: {problems[0]}")
    return results


def open_jobs(jobs: list[Job]) -> list[OpenRun]:
    """Open every job (settings checked, data loaded, cells on disk read); the invalid ones are listed
    (:func:`checked`)."""
    cache = DataCache()

    def open_one(job: Job) -> OpenRun:
        with threadpool_limits(limits=job.spec.blas_threads):
            return open_run(job.spec, job.out_dir, load=cache)

    return checked(jobs, open_one)


@dataclass
class Progress:
    """The pool's counters: jobs and cells done of all, and the forecast of the work left
    (:class:`.schedule.Forecast`, calibrated on the cells done)."""

    jobs: int
    cells: int
    forecast: schedule.Forecast
    jobs_done: int = 0
    cells_done: int = 0

    def line(self, what: str) -> str:
        """``[jobs 12/151, cells 1,234/11,240, work 23%] <what>; 4 min so far, about 30 min left``."""
        elapsed = time.time() - self.forecast.started
        left = self.forecast.seconds_left()
        if left is None:
            when = f"{duration(elapsed)} so far, time left not known yet"
        elif left <= 0:
            when = f"{duration(elapsed)} in all"
        else:
            when = f"{duration(elapsed)} so far, about {duration(left)} left"
        return (f"[jobs {self.jobs_done}/{self.jobs}, cells {self.cells_done:,}/{self.cells:,}, "
                f"work {100 * self.forecast.fraction_done():.0f}%] {what}; {when}")


def mean_scores(rows: list[dict]) -> str:
    acc = sum(row["acc"] for row in rows) / len(rows)
    nmi = sum(row["nmi"] for row in rows) / len(rows)
    return f"mean AC {acc:.3f} NMI {nmi:.3f} over {counted(len(rows), 'cell')}"


def run_pool(chosen: list[Home], overrides: list[str], workers: int | None = None,
             record_dir: Path | None = None, paper_done: Callable[[Home], None] | None = None,
             dry_run: bool = False, sources: list[Home] = (),
             time_limits: Callable[[Job], float | None] | None = None,
             job_report: ReportWriter | None = None, unit: str = "paper", later: float = 0.0) -> dict:
    """Compute every cell of the ``chosen`` papers (see the module docstring); returns the summary that
    ``schedule.json`` records.

    ``workers`` is the number of worker processes (default: the cores this process may use); ignored when
    the sweeps' launcher is SLURM. ``record_dir`` receives ``schedule.csv`` / ``schedule.json`` (and the
    SLURM tasks' files). A dry run checks every job's settings as far as they go without data, logs what
    would be computed, and computes and writes nothing (:func:`dry_run_summary`). A cell that a job of the
    ``sources`` (homes whose runs are on disk, with the same ``overrides``) computed alike is copied, not
    computed (:mod:`.reuse`). ``time_limits(job)`` gives the seconds after which a cell of ``job`` is stopped
    and fails (None: no limit), for methods from outside the repository. ``job_report`` writes each finished
    job's report beside its ``results.csv`` (:func:`src.running.cells.end_run`; None: ``results.csv`` only).
    ``unit`` names what ``chosen`` holds in the log's lines ("paper", a benchmark's "track"); ``later`` the
    seconds of work expected after the pool (a tuned run's later rounds), which its time left includes
    (:class:`.schedule.Forecast`). What the methods
    warned while their cells ran is logged at the end, one line per method, category and message
    (:mod:`src.running.cell_warnings`).

    Raises
    ------
    UserError
        An override, setting or data set is wrong (one line; nothing computed).
    PoolFailed
        Cells failed; their jobs are listed, every other job is finished.
    """
    jobs = plan_jobs(chosen, overrides)
    source_jobs = plan_jobs(list(sources), overrides) if sources else []
    if dry_run:
        return dry_run_summary(chosen, jobs, source_jobs, unit)
    slurm = slurm_launcher(jobs)
    missing = missing_commands() if slurm else []
    if missing:
        raise UserError(f"the SLURM launcher needs {', '.join(NEEDED_COMMANDS)} on this machine's PATH, and "
                        f"{', '.join(missing)} is missing: run on a machine that submits to the cluster; "
                        "nothing was started")
    opened = open_jobs(jobs)
    copied = reuse.copy_cells(jobs, opened, source_jobs) if source_jobs else {}
    if copied:
        logger.info("%s cells copied from %s's runs (computed alike by the same code)", f"{len(copied):,}",
                    ", ".join(p.name for p in sources))
    tasks = tasks_of(jobs, [run.todo for run in opened])
    expect(tasks, jobs, opened, source_jobs, schedule.twin_folders(chosen))
    workers = workers or usable_cores()
    books = Books(chosen, jobs, opened, tasks, None if slurm else workers, paper_done, time_limits, job_report, unit,
                  later)
    summary = books.announce(len(copied), "SLURM array tasks" if slurm
                             else counted(workers, "worker process", "worker processes"))
    summary.update(workers=None if slurm else workers, cores=usable_cores(), slurm=slurm is not None)
    books.start()
    try:
        if slurm:
            folder = Path(record_dir or ".") / SLURM_FOLDER / time.strftime("%Y-%m-%d_%H-%M-%S")
            answers = run_slurm(books.items(), slurm, folder, lambda item: tasks[item.task].expected_seconds)
        else:
            answers = run_local(books.items(), workers)
        for answer in answers:
            books.take(answer)
    finally:
        summary.update(books.closing())
        if len(books.done) < len(tasks):  # stopped before its end: the counts of the cells it did compute
            finished = [number for number, answer in books.done.items() if answer.error is None]
            summary.update(computed=len(finished), stopped=True,
                           shared=sum(len(tasks[number].places) - 1 for number in finished))
        if record_dir is not None:
            schedule.write_record(Path(record_dir), record_rows(jobs, opened, tasks, books.done, books.started,
                                                                copied), summary)
    for line in schedule.error_lines(summary, whose="the time left" if not later else "this round's time left "
                                     "(the rounds after it in its forecast, not in its end)"):
        logger.info("%s", line)
    for line in cell_warnings.lines(cell_warnings.distinct(pd.DataFrame(books.rows))):  # once per method
        logger.warning("%s", line)
    if books.failed:
        raise PoolFailed([books.failed[i] for i in sorted(books.failed)])
    return summary


def expect(tasks: list[Task], jobs: list[Job], opened: list[OpenRun], sources: list[Job] = (),
           twins: dict[str, tuple[str, ...]] | None = None) -> None:
    """Give each task its expected seconds, whether they were measured (a row on disk, else the published
    cost of its job and k, or of its twin's in ``twins``: :func:`.schedule.twin_folders`), else the cost
    model at the unit costs the rows on disk measured (:func:`unit_costs`), else the model calibrated on the
    measured tasks (:mod:`.schedule`), and the groups whose ratios the forecast reads for it
    (:func:`.schedule.group_chain`); sort the tasks longest first."""
    models, recorded, priced, prior = [], [], [], schedule.published_costs()
    units = unit_costs(jobs, opened, sources)
    settings = [JobCost.of(job.spec, units) for job in jobs]
    for task in tasks:
        first = task.places[0]
        job, run, cost = jobs[first.job], opened[first.job], settings[first.job]
        spec = job.spec
        n, m = run.prepared.dataset.X.shape
        n_k, rank = n * first.k / max(1, run.prepared.dataset.n_classes), first.k + spec.protocol.rank_offset
        done = schedule.updates(cost.loop, units.continued(spec.method.name, spec.dataset.name, cost.loop, rank))
        models.append(schedule.model_seconds(n_k, m, rank, spec.protocol.subruns, done))
        priced.append(units.seconds(spec.method.name, spec.dataset.name, spec.method.params, n_k, rank,
                                    spec.protocol.subruns))
        seconds = schedule.recorded_seconds([opened[p.job].paths[p.k, p.trial] for p in task.places], cost.change)
        recorded.append(seconds if seconds is not None else schedule.prior_seconds(prior, job.out_dir, first.k, twins))
    for task, seconds, known, price in zip(tasks, schedule.expected_seconds(recorded, models), recorded, priced):
        task.measured = known is not None
        task.expected_seconds = seconds if task.measured or price is None else price
        spec, cost = jobs[task.places[0].job].spec, settings[task.places[0].job]
        basis = "size" if price is None else "cap" if cost.capped else "rows"
        task.groups = schedule.group_chain(spec.method.name, spec.dataset.name, cost.setting, cost.change, basis)
    tasks.sort(key=lambda task: -task.expected_seconds)


@dataclass(frozen=True)
class JobCost:
    """What a job's settings say of its cells' cost, read once per job: its loop settings
    (:func:`.schedule.loop_settings`), its setting and change keys (:func:`.jobs.setting_key`,
    :func:`.schedule.change_key`), and whether its stopping rule is priced at its cap (no row measured it)."""

    loop: dict | None
    setting: str
    change: str
    capped: bool

    @classmethod
    def of(cls, spec, units: schedule.UnitCosts) -> JobCost:
        loop = schedule.loop_settings(spec.method.params)
        capped = loop is not None and loop["stopping"] != "fixed" and \
            units.continued(spec.method.name, spec.dataset.name, loop) is None
        return cls(loop, setting_key(spec), schedule.change_key(spec.method.params, spec.protocol.subruns,
                                                                 spec.dataset.config.get("preprocess")), capped)


#: The trials of each k of a source job whose rows :func:`unit_costs` reads (its own jobs' rows are read already).
SOURCE_TRIALS = 2


def unit_costs(jobs: list[Job], opened: list[OpenRun], sources: list[Job] = ()) -> schedule.UnitCosts:
    """What an update of each method costs on each data set, and how many the reference rule made, from the
    rows on disk: every row the pool's jobs hold (cells done before, or copied), and the first
    :data:`SOURCE_TRIALS` trials of each k of the ``sources`` (the runs equal cells are copied from) on the
    data sets the jobs run."""
    units = schedule.UnitCosts()
    for job, run in zip(jobs, opened):
        for row in run.stored.values():
            if row is not None:
                units.learn(job.spec.method.name, job.spec.dataset.name, job.spec.method.params, row,
                            job.spec.protocol.subruns)
    datasets = {job.spec.dataset.name for job in jobs}
    for job in sources:
        if job.spec.dataset.name not in datasets:
            continue
        for (k, trial), path in cell_paths(job.spec, job.out_dir).items():
            row = load_cell(path) if trial < SOURCE_TRIALS and path.is_file() else None
            if row is not None:
                units.learn(job.spec.method.name, job.spec.dataset.name, job.spec.method.params, row,
                            job.spec.protocol.subruns)
    return units


class Books:
    """What the pool keeps while its cells come in: the cells each job still waits for, the failed jobs, the
    papers finished, the progress and its forecast. A job's results (and the report ``job_report`` writes
    beside them) are written when its last cell is in (:func:`src.running.cells.end_run`), a paper's report
    when its last job is (``paper_done``)."""

    def __init__(self, chosen: list[Home], jobs: list[Job], opened: list[OpenRun], tasks: list[Task],
                 workers: int | None, paper_done: Callable[[Home], None] | None,
                 time_limits: Callable[[Job], float | None] | None = None, job_report: ReportWriter | None = None,
                 unit: str = "paper", later: float = 0.0):
        self.chosen, self.jobs, self.opened, self.tasks, self.paper_done = chosen, jobs, opened, tasks, paper_done
        self.job_report, self.unit = job_report, unit
        self.time_limits = time_limits or (lambda job: None)
        self.records = [begin_run(run, job.config, job.overrides) for job, run in zip(jobs, opened)]
        self.left = [len(run.todo) for run in opened]
        self.n_cells, self.n_todo = sum(len(run.paths) for run in opened), sum(self.left)
        self.failed: dict[int, str] = {}
        self.finished: set[str] = set()
        self.by_paper = {paper.name: [i for i, job in enumerate(jobs) if job.paper == paper.name] for paper in chosen}
        self.forecast = schedule.Forecast(
            [task.expected_seconds for task in tasks], [task.groups for task in tasks],
            workers, measured=[task.measured for task in tasks], reports=len(chosen) if paper_done else 0,
            later=later)
        self.progress = Progress(len(jobs), self.n_cells, self.forecast)
        self.progress.cells_done = self.n_cells - self.n_todo
        self.done: dict[int, Done] = {}
        self.rows: list[dict] = []  # the rows of the jobs finished, for what their methods warned
        self.started = self.last_line = time.time()

    def announce(self, n_copied: int, where: str) -> dict:
        """Log what the pool will compute; the counts ``schedule.json`` records."""
        logger.info("%s, %s, %s: %s already done, %s to compute as %s (%s shared with another job, computed "
                    "once) on %s", counted(len(self.chosen), self.unit), counted(len(self.jobs), "job"),
                    counted(self.n_cells, "cell"), f"{self.n_cells - self.n_todo:,}", f"{self.n_todo:,}",
                    counted(len(self.tasks), "distinct cell"), f"{self.n_todo - len(self.tasks):,}", where)
        return {"papers": [p.name for p in self.chosen], "jobs": len(self.jobs), "cells": self.n_cells,
                "computed": len(self.tasks), "shared": self.n_todo - len(self.tasks),
                "reused": self.n_cells - self.n_todo, "copied": n_copied}

    def start(self) -> None:
        """Finish the jobs (and papers) whose cells are all on disk, then start the clock."""
        for index in range(len(self.jobs)):
            if not self.left[index]:
                self.finish_job(index)
        self.finish_papers()
        self.started = self.last_line = self.forecast.started = time.time()

    def items(self) -> list[Work]:
        """The workers' items, one per task, longest first: the cell to compute and the rows to write."""
        jobs, opened = self.jobs, self.opened
        return [Work(number, jobs[task.places[0].job].spec, task.places[0].k, task.places[0].trial,
                     tuple(Row(opened[p.job].paths[p.k, p.trial], opened[p.job].prepared.dataset.name,
                               jobs[p.job].spec.method, jobs[p.job].spec.seed, opened[p.job].identity)
                           for p in task.places), self.time_limits(jobs[task.places[0].job]))
                for number, task in enumerate(self.tasks)]

    def take(self, answer: Done) -> None:
        """A worker's answer: count its cells in, finish what they complete, log and record the progress."""
        self.done[answer.task] = answer
        self.forecast.done(answer.task, answer.end - answer.start, now=answer.end)
        for place in self.tasks[answer.task].places:
            error = answer.error
            if error is not None and valid_row(self.opened[place.job], place):
                error = None  # its row was written before the worker died
            if error is not None:
                line = f"{self.jobs[place.job].name}: cell k={place.k} trial={place.trial}: {error}"
                self.failed.setdefault(place.job, line)  # the job's first failed cell; each one is logged
                logger.error("%s", line)
            self.progress.cells_done += 1
            self.left[place.job] -= 1
            if self.left[place.job] == 0 and place.job not in self.failed:
                self.finish_job(place.job)
        if time.time() - self.last_line > 60:
            logger.info("%s", self.progress.line("running"))
            self.last_line = time.time()
        samples = self.forecast.samples
        if not samples or time.time() - self.forecast.started - samples[-1][0] >= SAMPLE_SECONDS:
            self.forecast.record((self.progress.cells_done - self.n_cells + self.n_todo) / max(1, self.n_todo))
        self.finish_papers()

    def finish_job(self, index: int) -> None:
        job, run = self.jobs[index], self.opened[index]
        rows = [load_cell(path) for path in run.paths.values()]
        end_run(run, rows, self.records[index], self.job_report)
        self.rows += [row for row in rows if row is not None]
        self.progress.jobs_done += 1
        computed = len(run.todo)
        logger.info("%s", self.progress.line(f"{job.name} done ({mean_scores(rows)}, "
                                             f"{'all reused' if not computed else f'{computed} computed'})"))

    def finish_papers(self) -> None:
        """Call ``paper_done`` for each paper whose jobs, and whose papers it reads, are all in."""
        names = {p.name for p in self.chosen}
        for paper in self.chosen:
            if paper.name in self.finished or any(self.left[i] or i in self.failed for i in self.by_paper[paper.name]):
                continue
            if any(dep in names and dep not in self.finished for dep in paper.depends_on):
                continue
            if any(i in self.failed for dep in paper.depends_on for i in self.by_paper.get(dep, [])):
                continue
            self.finished.add(paper.name)
            if self.paper_done is not None:
                began = time.time()
                self.paper_done(paper)
                self.forecast.report_done(time.time() - began)

    def closing(self) -> dict:
        """The times ``schedule.json`` records once the pool stops (also early)."""
        wall = time.time() - self.started
        return {"wall_seconds": wall,
                "cpu_seconds": sum(d.cpu_seconds for d in self.done.values() if not math.isnan(d.cpu_seconds)),
                "forecast": self.forecast.samples,
                "forecast_errors": schedule.forecast_errors(self.forecast.samples, wall),
                "forecast_errors_by_time": schedule.forecast_errors(self.forecast.samples, wall, by="time")}


def slurm_launcher(jobs: list[Job]) -> dict | None:
    """The ``hydra.launcher`` node of the jobs when it is submitit's SLURM launcher (or ours), else None."""
    return next((job.launcher for job in jobs if "slurm" in str(job.launcher.get("_target_", "")).lower()), None)


def dry_run_summary(chosen: list[Home], jobs: list[Job], sources: list[Job] = (), unit: str = "paper") -> dict:
    """What a reproduction would compute, from the settings and the cells on disk (no data loaded): every
    job's settings checked as far as they go without data (:func:`~src.running.settings.check_without_data`:
    the method's parameters, its need of labels; the invalid jobs listed as :func:`checked` lists them), then
    one line per paper (or ``unit``) and one in all (the cells the ``sources`` would give counted apart);
    returns the counts."""
    checked(jobs, lambda job: check_without_data(job.spec))
    totals = {"jobs": len(jobs), "cells": 0, "to_compute": 0}
    keys = []
    for paper in chosen:
        mine = [job for job in jobs if job.paper == paper.name]
        cells = todo = 0
        for job in mine:
            _, paths, stored = run_cells(job.spec, job.out_dir, dry_run=True)
            cells += len(paths)
            missing = [cell for cell, row in stored.items() if row is None]
            todo += len(missing)
            keys += sharing_keys(job.spec, missing)
        logger.info("dry run of %s %s: %s, %s, %s to compute", unit, paper.name, counted(len(mine), "job"),
                    counted(cells, "cell"), f"{todo:,}")
        totals["cells"] += cells
        totals["to_compute"] += todo
    found = reuse.source_rows(list(sources), set(keys)) if sources else {}
    totals["copied"] = sum(key in found for key in keys)
    keys = [key for key in keys if key not in found]
    totals["shared"] = len(keys) - len(set(keys))
    logger.info("dry run: %s, %s, %s, %s to compute, of which %s%s shared with another job (computed once); "
                "nothing computed, nothing written", counted(len(chosen), unit), counted(len(jobs), "job"),
                counted(totals["cells"], "cell"), f"{totals['to_compute']:,}",
                f"{totals['copied']:,} copied from runs on disk and " if sources else "", f"{totals['shared']:,}")
    return totals


def valid_row(run: OpenRun, place) -> bool:
    """Whether the row of ``place`` is on disk and reusable (written by a worker that died afterwards)."""
    row = load_cell(run.paths[place.k, place.trial])
    return row is not None and stale_reason(row, run.identity) is None


def record_rows(jobs: list[Job], opened: list[OpenRun], tasks: list[Task], done: dict[int, Done],
                started: float, copied: dict | None = None) -> list[dict]:
    """The rows of ``schedule.csv``: every cell of every job (:data:`.schedule.COLUMNS`); a cell ``copied``
    from another command's run is "reused" with that run in ``shared_with``."""
    copied = copied or {}
    placed = {(p.job, p.k, p.trial): (number, i) for number, task in enumerate(tasks)
              for i, p in enumerate(task.places)}
    rows = []
    for index, (job, run) in enumerate(zip(jobs, opened)):
        spec = job.spec
        for (k, trial), path in run.paths.items():
            row = {"paper": job.paper, "sweep": job.sweep, "job": str(job.out_dir), "dataset": spec.dataset.name,
                   "method": spec.method.label, "estimator": spec.method.name,
                   "params": json.dumps(dict(spec.method.params), sort_keys=True, default=str), "k": k,
                   "trial": trial, "n_features": run.prepared.dataset.X.shape[1], "subruns": spec.protocol.subruns,
                   "kmeans_runs": kmeans_runs(spec)}
            where = placed.get((index, k, trial))
            stored = run.stored[k, trial]
            if where is None:
                row.update(status="reused", **costs(stored))
                if (index, k, trial) in copied:
                    row["shared_with"] = str(copied[index, k, trial])
            else:
                number, nth = where
                answer, task = done.get(number), tasks[number]
                row["expected_seconds"] = task.expected_seconds
                if answer is None:
                    row["status"] = "not run"
                elif answer.error is not None:
                    row["status"] = "failed"
                else:
                    first = task.places[0]
                    row.update(status="computed" if nth == 0 else "shared", **costs(load_cell(path)),
                               cpu_seconds=answer.cpu_seconds if nth == 0 else math.nan,
                               start=answer.start - started, end=answer.end - started, worker=answer.worker)
                    if nth:
                        row["shared_with"] = str(jobs[first.job].out_dir)
            rows.append(row)
    return rows


def kmeans_runs(spec) -> int:
    """The KMeans runs of one sub-run of a cell of ``spec``: the protocol's restarts and its readouts' runs
    (0 for a method that clusters by itself)."""
    if clusters_directly(methods.estimator_class(spec.method.name)):
        return 0
    return spec.protocol.kmeans_restarts + sum(READOUTS.get(name) or 0 for name in spec.protocol.readouts)


def costs(row: dict | None) -> dict:
    """The cost columns of ``schedule.csv`` read from a cell's row."""
    if not row:
        return {}
    return {"rank": row.get("rank"), "n_samples": row.get("n_samples"), "n_iter": row.get("n_iter"),
            "seconds": float(row.get("fit_seconds", math.nan)) + float(row.get("kmeans_seconds", math.nan))}

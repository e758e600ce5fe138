"""Reproducing papers: the chosen papers in dependency order, their cells in one pool, each paper's figures
and report as soon as its cells are in.

:func:`plan` orders the papers (a paper after those whose runs it reads, an unfinished dependency added);
:func:`reproduce` runs every cell in one pool (:func:`src.running.pool.run_pool`) and calls
:func:`finish_paper` (figures, wall time, report) for each paper whose cells are in. The clock of a timed
run (:func:`start_clock`, :func:`stop_clock`: ``wall_seconds.txt``) and :func:`terminate` (SIGTERM as an
interrupt) serve the explain and benchmark commands too.

This module does not know how a report is written: :mod:`src.reproduce` hands down the writer of each job's
tables and figure (:func:`src.presentation.report.write_reports`) and the builder of each paper's report
(:func:`src.presentation.paper_report.build`).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from textwrap import shorten
from pathlib import Path

from ..errors import StepFailed, UserError
from ..files import write_atomic
from ..running.cell_warnings import caught, read, recorded
from ..running.cells import ReportWriter
from ..running.progress import counted
from ..running.provenance import git_state
from ..running.pool import PoolFailed, run_pool
from ..running.results import MixedResultsError
from . import homes as papers
from .homes import TUNED_DIR, Paper

logger = logging.getLogger(__name__)

WALL = "wall_seconds.txt"
START = ".start"

# What builds a paper's report once its cells are in: called with the paper's name, the run directories it
# reads, its output directory and its report's data sets (Paper.report_datasets); returns the report's path, as
# src.presentation.paper_report.build does. It may raise FileNotFoundError, UserError or MixedResultsError.
PaperReport = Callable[[str, list[Path], Path, tuple[str, ...] | None], Path]


def start_clock(out: Path) -> float:
    """Mark the start of a timed reproduction in ``out`` (``.start``, as epoch seconds; a stale
    ``wall_seconds.txt`` is removed so an interrupted run never looks finished)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / WALL).unlink(missing_ok=True)
    started = time.time()
    write_atomic(out / START, f"{int(started)}\n")
    return started


def stop_clock(out: Path, started: float) -> int:
    """Record the whole seconds since ``started`` in ``out/wall_seconds.txt`` and return them."""
    seconds = int(round(time.time() - started))
    write_atomic(out / WALL, f"{seconds}\n")
    return seconds


#: The record of each command that computed cells into a folder (a long run done in pieces): :func:`add_piece`.
PIECES = "pieces.json"


def add_piece(out: Path, command: str, seconds: int, summary: dict | None, stopped: bool = False) -> list[dict]:
    """Add to ``out/pieces.json`` the command that just computed cells there (its words, its cells' wall
    seconds, the cells it computed, copied and found on disk, the commit; ``stopped`` where it was interrupted
    before its end), unless it computed none; returns every piece. A run done in pieces (sessions too short for
    the whole) is the sum of its pieces, each named, a stopped one too: its time was spent."""
    found = pieces(out)
    if not summary or not summary.get("computed"):
        return found
    found.append({"command": command, "wall_seconds": seconds, "computed": summary.get("computed", 0),
                  "copied": summary.get("copied", 0), "reused": summary.get("reused", 0),
                  "workers": summary.get("workers"), "commit": git_state()["commit"],
                  "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **({"stopped": True} if stopped
                                                                                     else {})})
    write_atomic(out / PIECES, json.dumps(found, indent=2) + "\n")
    return found


def pieces(out: Path) -> list[dict]:
    """The pieces recorded in ``out`` (:func:`add_piece`), oldest first; none for a folder without a record."""
    path = Path(out) / PIECES
    try:
        return list(json.loads(path.read_text()))
    except (OSError, ValueError):
        return []


def finish_paper(paper: Paper, outputs: Path, started: float, build_report: PaperReport) -> Path:
    """A paper whose cells are all in: its figures, its wall time, its report (built by ``build_report``;
    :mod:`src.reproduce` passes :func:`src.presentation.paper_report.build`); returns the report's path. A
    failure is a one-line :class:`~src.errors.StepFailed`."""
    out = paper.out(outputs)
    module = paper.module()
    if module is not None and hasattr(module, "figures"):
        logger.info("%s: figures (%s.figures)", paper.name, module.__name__)
        try:
            with caught() as records:  # the figures' own fits: what they warn, said once, not one by one
                module.figures(out)
        except UserError as exc:
            raise StepFailed(f"{paper.name}: figures failed: {exc}") from None
        for entry in read(recorded(records)):
            logger.info("%s: figures: %s raised %s (first: %s)", paper.name, entry["category"],
                        counted(entry["count"], "time"), shorten(entry["message"], 120, placeholder=" ..."))
    seconds = stop_clock(out, started)
    try:
        report = build_report(paper.name, paper.runs(out), out, paper.report_datasets)
    except (FileNotFoundError, UserError, MixedResultsError) as exc:
        raise StepFailed(f"{paper.name}: report failed: {exc}") from None
    logger.info("%s: all cells in after %d s (%s); wrote %s", paper.name, seconds, out / WALL, report)
    return report


def reproduce(chosen: list[Paper], build_report: PaperReport, overrides: list[str] = (), workers: int | None = None,
              outputs: Path = papers.OUTPUTS, dry_run: bool = False, job_report: ReportWriter | None = None) \
        -> list[Path]:
    """Every cell of the ``chosen`` papers in one pool (:func:`src.running.pool.run_pool`), each paper's figures and
    report as soon as its cells are in; returns the reports' paths.

    ``job_report`` writes each job's report beside its ``results.csv`` (:func:`src.running.cells.end_run`),
    ``build_report`` each paper's report (:func:`finish_paper`); :mod:`src.reproduce` passes
    :func:`src.presentation.report.write_reports` and :func:`src.presentation.paper_report.build`. Without a
    ``job_report`` each job writes ``results.csv`` only.

    Raises :class:`~src.errors.StepFailed` (one line; the failed jobs logged one per line before) when a
    cell, a figure or a report failed; the papers that could be finished are.
    """
    started = {} if dry_run else {paper.name: start_clock(paper.out(outputs)) for paper in chosen}
    reports, failures = {}, []

    def paper_done(paper: Paper) -> None:
        try:
            reports[paper.name] = finish_paper(paper, outputs, started[paper.name], build_report)
        except StepFailed as exc:
            logger.error("%s", exc)
            failures.append(str(exc))

    try:
        run_pool(chosen, list(overrides), workers, Path(outputs), None if dry_run else paper_done, dry_run,
                 job_report=job_report)
    except PoolFailed as exc:
        raise exc.as_step() from None
    if failures:
        raise StepFailed(failures[0] if len(failures) == 1 else f"{len(failures)} papers failed: {failures[0]}; ...")
    return [reports[paper.name] for paper in chosen if paper.name in reports]


def plan(selected: list[str], home: Path = papers.HOME, outputs: Path = papers.OUTPUTS) -> list[Paper]:
    """The papers to reproduce, in order: the selected ones, each after those it depends on, preceded by
    any unselected dependency that has not run to the end in ``outputs``."""
    chosen = papers.in_order(selected, home)
    names = {p.name for p in chosen}
    missing = []
    for paper in chosen:
        for dep in paper.depends_on:
            if dep not in names and dep not in missing and not (Path(outputs) / dep / WALL).is_file():
                logger.info("%s reads the runs of %s, which has not run to the end here: reproducing %s first",
                            paper.name, dep, dep)
                missing.append(dep)
    if not missing:
        return chosen
    return plan([*missing, *selected], home, outputs)


# What writes a finished job's table and figure: called with the job's rows and its run directory, returns the
# paths written, as src.presentation.report.write_reports does.
JobReport = Callable[..., list[Path]]


@dataclass(frozen=True)
class Writers:
    """The report writers the benchmark's entry point hands down (this room imports no presentation module).

    Attributes
    ----------
    job : callable
        A finished job's table and figure, ``job(frame, out_dir)`` (``write_reports``).
    benchmark : callable
        The family benchmark's report, ``benchmark(out)`` (``benchmark_report.build``).
    contender : callable
        A contender's or your data's report (``contender_report.build``).
    """

    job: JobReport
    benchmark: Callable[[Path], Path]
    contender: Callable[..., Path]

    def per_job(self, frame, out_dir) -> list[Path]:
        """``job``, except for a tuned setting's or fold's job (``tuned/``): the tuned report reads those as
        a whole, and a figure per job would cost the pool's main process a second each, hundreds of times."""
        if TUNED_DIR in Path(out_dir).parts:
            return []
        return self.job(frame, out_dir)


def pooled(homes, options, out: Path, writers: Writers, limit=None, later: float = 0.0) -> dict | None:
    """Run the homes' cells in the pool into ``out`` with the command line's ``options`` (overrides, workers,
    dry run), each finished job written by :meth:`Writers.per_job` and timed in ``out/wall_seconds.txt``; a
    dry run only counts them and returns None. ``limit(job)``: a cell's time limit in seconds, or None;
    ``later``: the seconds of work expected after these cells (a tuned run's later rounds), for the time left."""
    if options.dry_run:
        run_pool(homes, options.overrides, options.workers, out, dry_run=True, unit="track")
        return None
    started = start_clock(out)
    summary = run_pool(homes, options.overrides, options.workers, out, time_limits=limit,
                       job_report=writers.per_job, unit="track", later=later)
    logger.info("the cells took %d s (%s)", stop_clock(out, started), out / WALL)
    return summary


def terminate(signum, frame) -> None:
    """SIGTERM as an interrupt: the pool's workers are stopped on the way out."""
    raise KeyboardInterrupt

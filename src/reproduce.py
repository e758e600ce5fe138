"""Reproduce papers from their homes: one command per paper, one for all, every cell in one pool.

Usage::

    python -m src.reproduce PAPER [PAPER ...]        # e.g. cnmf; what `make reproduce-<paper>` runs
    python -m src.reproduce all                      # every paper
    python -m src.reproduce all --workers 16         # 16 worker processes (default: the cores)
    python -m src.reproduce fnmf --dry-run           # the jobs and cells, computed and to compute
    python -m src.reproduce cnmf --overrides hydra/launcher=submitit_slurm hydra.launcher.partition=cpu

For the selected papers, as their homes ``papers/<paper>/`` say (:mod:`src.presentation.papers`), into
``outputs/reproduce/<paper>/``:

1. every job of every sweep of every paper (``experiment=<paper>`` and the sweep's overrides, then
   ``--overrides``), composed as Hydra's multirun composes it, into the run directory it would get, is
   checked (settings, method, labels, data set; a bad one is named on one line and nothing starts);
2. their cells go into one pool of workers (:mod:`src.pool`): longest expected first, as many workers as
   cores, a cell that two papers' jobs share computed once and written into both; a job's results and
   tables are written when its last cell is in;
3. when a paper's last cell is in (and those of the papers it reads), its figures are drawn (if
   ``src/presentation/papers/<paper>.py`` defines ``figures(out)``), its wall time since the start is
   recorded in ``wall_seconds.txt`` and its ``report.md`` built (:func:`src.presentation.paper_report.build`,
   with its runs, those of the papers it depends on and its ``report`` options).

``all`` ends with the scorecard over the papers, ``outputs/reproduce/README.md``
(:mod:`src.presentation.scorecard`), and its wall time in ``outputs/reproduce/all/``. Every reproduction
records its schedule in ``outputs/reproduce/schedule.csv`` and ``schedule.json`` (:mod:`src.pool.schedule`,
read by ``make bench``). A cell is the unit of resumption: running the same command again computes only the
cells not on disk. A failed cell fails its job on one line; the other jobs finish, and the command exits 1
listing the failed jobs. With the SLURM launcher in ``--overrides`` the cells run as SLURM array tasks
(:mod:`src.pool.workers`), with the resources of ``hydra.launcher``.

A paper whose ``depends_on`` names another paper reads that paper's runs: its report waits for them. When
that paper is not selected and has not run to the end here (no ``wall_seconds.txt``), it is reproduced
too.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import time
from pathlib import Path

from .command_line import add_pool_arguments, check_pool_arguments, with_experiment_group
from .errors import StepFailed, UserError
from .files import write_atomic
from .pool import PoolFailed, run_pool
from .progress import duration
from .presentation import paper_report, papers, scorecard
from .presentation.papers import Paper

logger = logging.getLogger(__name__)

WALL = "wall_seconds.txt"
START = ".start"


def start_clock(out: Path) -> float:
    """Mark the start of a timed reproduction in ``out`` (``.start``, as epoch seconds; a stale
    ``wall_seconds.txt`` is removed so an interrupted run never looks finished)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / WALL).unlink(missing_ok=True)
    started = time.time()
    write_atomic(out / START, f"{int(started)}\n")
    return started


def stop_clock(out: Path, started: float) -> int:
    seconds = int(round(time.time() - started))
    write_atomic(out / WALL, f"{seconds}\n")
    return seconds


def finish_paper(paper: Paper, outputs: Path, started: float) -> Path:
    """A paper whose cells are all in: its figures, its wall time, its report; returns the report's path.
    A failure is a one-line :class:`~src.errors.StepFailed`."""
    out = paper.out(outputs)
    module = paper.module()
    if module is not None and hasattr(module, "figures"):
        logger.info("%s: figures (%s.figures)", paper.name, module.__name__)
        try:
            module.figures(out)
        except UserError as exc:
            raise StepFailed(f"{paper.name}: figures failed: {exc}") from None
    seconds = stop_clock(out, started)
    try:
        report = paper_report.build(paper.name, paper.runs(out), out, paper.report_datasets)
    except (FileNotFoundError, UserError, paper_report.MixedResultsError) as exc:
        raise StepFailed(f"{paper.name}: report failed: {exc}") from None
    logger.info("%s: all cells in after %d s (%s); wrote %s", paper.name, seconds, out / WALL, report)
    return report


def reproduce(chosen: list[Paper], overrides: list[str] = (), workers: int | None = None,
              outputs: Path = papers.OUTPUTS, dry_run: bool = False) -> list[Path]:
    """Every cell of the ``chosen`` papers in one pool (:func:`src.pool.run_pool`), each paper's figures and
    report as soon as its cells are in; returns the reports' paths.

    Raises :class:`~src.errors.StepFailed` (one line; the failed jobs logged one per line before) when a
    cell, a figure or a report failed; the papers that could be finished are.
    """
    started = {} if dry_run else {paper.name: start_clock(paper.out(outputs)) for paper in chosen}
    reports, failures = {}, []

    def paper_done(paper: Paper) -> None:
        try:
            reports[paper.name] = finish_paper(paper, outputs, started[paper.name])
        except StepFailed as exc:
            logger.error("%s", exc)
            failures.append(str(exc))

    try:
        summary = run_pool(chosen, list(overrides), workers, Path(outputs), None if dry_run else paper_done, dry_run)
        for error in summary.get("forecast_errors", []):
            logger.info("the time left forecast at %.0f%% of the cells (%s in): %s, it took %s (%+.0f%%)",
                        100 * error["cells"], duration(error["elapsed"]), duration(error["forecast"]),
                        duration(error["actual"]), 100 * error["error"])
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0],
                                     epilog=f"papers: {', '.join(papers.names())} (homes in papers/)")
    parser.add_argument("papers", nargs="+", metavar="PAPER", help="paper names, or 'all'")
    add_pool_arguments(parser)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="[%(levelname)s] %(message)s")
    args.overrides = with_experiment_group(args.overrides)  # +paper/<name>=experiment, deprecated
    everything = args.papers == ["all"]
    try:
        if "all" in args.papers and not everything:
            raise UserError("'all' cannot be combined with paper names")
        check_pool_arguments(args)
        chosen = plan(papers.names() if everything else args.papers)
    except UserError as exc:
        logger.error("%s", exc)
        return 2
    all_out = papers.OUTPUTS / "all"
    started = start_clock(all_out) if everything and not args.dry_run else None
    signal.signal(signal.SIGTERM, terminate)  # a killed reproduction stops its workers too
    try:
        logger.info("reproducing %s", ", ".join(p.name for p in chosen))
        reproduce(chosen, args.overrides, args.workers, dry_run=args.dry_run)
    except UserError as exc:
        logger.error("%s", exc)
        return 2
    except StepFailed as exc:
        logger.error("%s", exc)
        return exc.status
    except KeyboardInterrupt:
        logger.error("interrupted: the cells in progress are lost, the others are on disk; run the same command "
                     "again to resume")
        return 130
    if started is not None:
        logger.info("wrote %s", scorecard.build(papers.OUTPUTS))  # every published number beside ours
        logger.info("all papers took %d s (%s)", stop_clock(all_out, started), all_out / WALL)
    return 0


def terminate(signum, frame) -> None:
    """SIGTERM as an interrupt: the pool's workers are stopped on the way out."""
    raise KeyboardInterrupt


if __name__ == "__main__":
    sys.exit(main())

"""Reproduce papers from their homes: one command per paper, one for all.

Usage::

    python -m src.reproduce PAPER [PAPER ...]        # e.g. cnmf; what `make reproduce-<paper>` runs
    python -m src.reproduce all                      # every paper, each after those it depends on
    python -m src.reproduce fnmf --dry-run           # print the commands only
    python -m src.reproduce cnmf --overrides hydra/launcher=submitit_slurm hydra.launcher.partition=cpu
    python -m src.reproduce all --sweeps-at-once 1   # one sweep at a time, each on every core

For each paper, as its home ``conf/paper/<paper>/`` says (:mod:`src.presentation.papers`), into
``outputs/reproduce/<paper>/``:

1. fetch and build its data sets (``python -m src.data <prefetch>``);
2. run each of its sweeps as ``python -m src.run -m +paper/<paper>=experiment <overrides> [--overrides]``,
   one process per sweep, so that Hydra's multirun behaves exactly as on the command line (a sweep checks
   every job first, then runs them; re-running resumes from the finished cells); the first failing sweep
   stops everything with one line and a non-zero exit status;
3. draw its own figures, if ``src/presentation/papers/<paper>.py`` defines ``figures(out)``;
4. record the wall time of steps 1-3 in ``wall_seconds.txt`` (``all``: ``outputs/reproduce/all/``);
5. build ``report.md`` (:func:`src.presentation.paper_report.build`, with its runs, those of the papers it depends on
   and its ``report`` options).

``all`` ends with the scorecard over the papers, ``outputs/reproduce/README.md`` (:mod:`src.presentation.scorecard`).

Sweeps at once. A sweep spreads its jobs (one per data set and method) over the launcher's workers, and the
last job of a sweep often runs alone (NPNMF on ORL, a GNMF grid on COIL20): one core would idle until it
ends, once per sweep. So with the default launcher the sweeps of all selected papers share the cores
instead: up to ``--sweeps-at-once`` (default: the cores) run at the same time, each with one worker
(``hydra.launcher.n_jobs=1``), started in paper order, a paper's sweeps after its data step (data steps
one at a time, beside other papers' sweeps), each paper's figures drawn as soon as its own sweeps have
ended, and the reports built when every sweep has. The same jobs run with the same seeds, so
the results are those of one sweep at a time. With a launcher of your own in ``--overrides``
(``hydra/launcher=...`` or ``hydra.launcher.*``) the sweeps run one after another, each as configured. A
paper's ``wall_seconds.txt`` then spans its first to its last step, which may overlap other papers'.

A paper whose ``depends_on`` names another paper reads that paper's runs. Such papers run first when they
are selected too; otherwise, if one has not run to the end here (no ``wall_seconds.txt``), it is reproduced
first.
"""

from __future__ import annotations

import argparse
import logging
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from .presentation import paper_report, papers, scorecard
from .errors import UserError
from .files import write_atomic
from .presentation.papers import Paper
from .sweep import usable_cores

logger = logging.getLogger(__name__)

WALL = "wall_seconds.txt"
START = ".start"
ONE_WORKER = "hydra.launcher.n_jobs=1"
POLL_SECONDS = 0.5


class StepFailed(Exception):
    """A step of a reproduction failed; the message is one line, ``status`` the exit status to return."""

    def __init__(self, message: str, status: int = 1):
        super().__init__(message)
        self.status = status


#: The package's own name: ``src`` in a checkout, ``repro_mf`` installed; child processes run its modules.
PACKAGE = (__package__ or __name__).partition(".")[0]


def python_module(module: str, *args: str) -> list[str]:
    """The command that runs the package's module ``module`` (``run``, ``data``) with ``args``."""
    return [sys.executable, "-m", f"{PACKAGE}.{module}", *args]


def commands(paper: Paper, overrides: list[str] = ()) -> list[list[str]]:
    """The processes a reproduction of ``paper`` starts: the data prefetch, then one per sweep."""
    out = [python_module("data", *paper.prefetch)] if paper.prefetch else []
    return out + [python_module("run", "-m", *sweep, *overrides) for sweep in paper.sweep_overrides()]


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


def reproduce(paper: Paper, overrides: list[str] = (), outputs: Path = papers.OUTPUTS) -> Path:
    """Run every step of ``paper``, one after another (see the module docstring); returns its report's path."""
    return reproduce_together([paper], list(overrides), 1, outputs)[0]


def cores() -> int:
    """The cores this process may use (:func:`src.sweep.usable_cores`, as the local launcher counts them)."""
    return usable_cores()


def sweeps_at_once(requested: int | None, overrides: list[str]) -> int:
    """How many sweeps run at the same time: ``requested``, else 1 when ``overrides`` set a launcher of
    their own, else the cores this process may use."""
    if requested is not None:
        if requested < 1:
            raise UserError(f"--sweeps-at-once={requested} must be at least 1")
        return requested
    if any(o.lstrip("+~").startswith(("hydra/launcher", "hydra.launcher")) for o in overrides):
        return 1
    return cores()


def _figures_and_clock(paper: Paper, out: Path, started: float) -> None:
    module = paper.module()
    if module is not None and hasattr(module, "figures"):
        logger.info("%s: figures (%s.figures)", paper.name, module.__name__)
        try:
            module.figures(out)
        except UserError as exc:
            raise StepFailed(f"{paper.name}: figures failed: {exc}") from None
    seconds = stop_clock(out, started)
    logger.info("%s: sweeps and figures took %d s (%s)", paper.name, seconds, out / WALL)


def _stop(running: dict) -> None:
    """Stop the sweeps still running (their whole process groups: the launcher and its workers)."""
    for process in running:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass
    for process in running:
        process.wait()


def run_steps(steps: list[tuple], at_once: int, ready=None, finished=None) -> list[float]:
    """Run ``(what, command, item)`` steps as processes, up to ``at_once`` at the same time; returns each
    step's wall seconds.

    Steps start in the given order, each as soon as a place is free and ``ready(item, running_items)`` holds
    (default: always); ``finished(item)`` runs after each step that succeeds. The first step that fails stops
    the others (their whole process groups) and raises :class:`StepFailed` with one line; so does an
    interrupt, after stopping them.
    """
    queue = list(enumerate(steps))  # (index, (what, command, item))
    running: dict = {}  # process -> (index, what, command, item, start time)
    seconds = [0.0] * len(steps)

    def startable():
        items = [entry[3] for entry in running.values()]
        return next((q for q in queue if ready is None or ready(q[1][2], items)), None)

    try:
        while queue or running:
            while len(running) < at_once and (entry := startable()) is not None:
                queue.remove(entry)
                i, (what, command, item) = entry
                logger.info("%s: %s", what, shlex.join(["python", *command[1:]]))
                running[subprocess.Popen(command, start_new_session=True)] = (i, what, command, item, time.time())
            time.sleep(POLL_SECONDS)
            for process in [p for p in running if p.poll() is not None]:
                i, what, command, item, clock = running.pop(process)
                seconds[i] = time.time() - clock
                if process.returncode != 0:
                    raise StepFailed(f"{what} failed (exit status {process.returncode}): "
                                     f"{shlex.join(['python', *command[1:]])}; its errors are above. Run the same "
                                     "command again to resume.", process.returncode)
                logger.info("%s: done in %.0f s", what, seconds[i])
                if finished is not None:
                    finished(item)
    finally:
        _stop(running)  # after a failure or an interrupt: nothing keeps running behind the error
    return seconds


def reproduce_together(chosen: list[Paper], overrides: list[str], at_once: int,
                       outputs: Path = papers.OUTPUTS) -> list[Path]:
    """Every step of the ``chosen`` papers (in order) with up to ``at_once`` steps running at the same time,
    each sweep with one worker when ``at_once`` > 1 (see "Sweeps at once" in the module docstring); returns
    the reports' paths.

    A paper's data step (fetch and build) runs before its sweeps, alongside other papers' sweeps, one data
    step at a time (two papers may build the same data set). A failing step stops the others and raises
    :class:`StepFailed`; re-running resumes from the finished cells.
    """
    started, waiting, fetched = {}, {}, set()
    queue = []  # (paper, sweep index or None for the data step, command), in paper order
    one_worker = [ONE_WORKER] if at_once > 1 else []
    for paper in chosen:
        started[paper.name] = start_clock(paper.out(outputs))
        steps = commands(paper, overrides)
        if paper.prefetch:
            queue.append((paper, None, steps.pop(0)))
        else:
            fetched.add(paper.name)
        waiting[paper.name] = len(steps)
        queue += [(paper, i, [*command, *one_worker]) for i, command in enumerate(steps)]
        if not steps:
            _figures_and_clock(paper, paper.out(outputs), started[paper.name])

    def ready(item, running) -> bool:  # a data step when no other runs; a sweep once its paper's data are there
        paper, sweep, _ = item
        if sweep is None:
            return not any(step[1] is None for step in running)
        return paper.name in fetched

    def finished(item) -> None:
        paper, sweep, _ = item
        if sweep is None:
            fetched.add(paper.name)
            return
        waiting[paper.name] -= 1
        if waiting[paper.name] == 0:
            _figures_and_clock(paper, paper.out(outputs), started[paper.name])

    def what(item) -> str:
        paper, sweep, _ = item
        return f"{paper.name}: data" if sweep is None else f"{paper.name}: sweep {sweep + 1} of {len(paper.sweeps)}"

    run_steps([(what(item), item[2], item) for item in queue], at_once, ready, finished)
    reports = []
    for paper in chosen:
        try:
            reports.append(paper_report.build(paper.name, paper.runs(paper.out(outputs)), paper.out(outputs),
                                              paper.report_datasets))
        except (FileNotFoundError, UserError, paper_report.MixedResultsError) as exc:
            raise StepFailed(f"{paper.name}: report failed: {exc}") from None
        logger.info("%s: wrote %s", paper.name, reports[-1])
    return reports


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
                                     epilog=f"papers: {', '.join(papers.names())} (homes in conf/paper/)")
    parser.add_argument("papers", nargs="+", metavar="PAPER", help="paper names, or 'all'")
    parser.add_argument("--overrides", nargs="+", default=[], metavar="OVERRIDE",
                        help="Hydra overrides added to every sweep (e.g. a launcher: hydra/launcher=submitit_slurm)")
    parser.add_argument("--sweeps-at-once", type=int, default=None, metavar="N",
                        help="sweeps running at the same time, one worker each (default: the cores; 1 when "
                             "--overrides sets a launcher)")
    parser.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="[%(levelname)s] %(message)s")
    everything = args.papers == ["all"]
    try:
        if "all" in args.papers and not everything:
            raise UserError("'all' cannot be combined with paper names")
        chosen = plan(papers.names() if everything else args.papers)
        at_once = sweeps_at_once(args.sweeps_at_once, args.overrides)
    except UserError as exc:
        logger.error("%s", exc)
        return 2
    if args.dry_run:
        for paper in chosen:
            print(f"# {paper.name} -> {paper.out()}")
            for command in commands(paper, args.overrides):
                sweep = at_once > 1 and f"{PACKAGE}.run" in command
                print(shlex.join(["python", *command[1:], *([ONE_WORKER] if sweep else [])]))
            if paper.module() is not None:
                print(f"# figures: src.presentation.papers.{paper.name}.figures({str(paper.out())!r})")
            print(f"# report: {', '.join(map(str, paper.runs()))}")
        return 0
    logger.info("reproducing %s, %d sweep(s) at once", ", ".join(p.name for p in chosen), at_once)
    all_out = papers.OUTPUTS / "all"
    started = start_clock(all_out) if everything else None
    try:
        reproduce_together(chosen, args.overrides, at_once)
    except StepFailed as exc:
        logger.error("%s", exc)
        return exc.status
    if everything:
        logger.info("wrote %s", scorecard.build(papers.OUTPUTS))  # every published number beside ours
        logger.info("all papers took %d s (%s)", stop_clock(all_out, started), all_out / WALL)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Explain a paper's numbers: run each of its readings and measure what it does to every published number.

Usage::

    python -m src.explain PAPER [PAPER ...]      # what `make explain-<paper>` runs (after make reproduce-<paper>)
    python -m src.explain all                    # every paper with readings, then the scorecard again
    python -m src.explain lcf --dry-run          # the readings' sweeps, jobs and cells to compute
    python -m src.explain cnmf --overrides hydra/launcher=submitit_slurm hydra.launcher.partition=cpu

A paper's *readings* (``papers/<paper>/readings.yaml``) are the defensible choices where its text is
silent or ambiguous, each with its source and a label: ``text`` (the paper says so), ``reference-code``
(Deng Cai's code does so), ``alternative`` (an equally defensible reading of a silent text) or ``oracle``
(uses the test labels; a diagnostic, never a result). The primary reading, the one in the paper's tables
and the scorecard, was fixed by text and reference code before any number was seen and stays; a reading
that brings a table back is a finding to report, not a setting to adopt.

A reading is computed in one of four ways, all on the primary run's trials (same seed, so the same
classes, labels and initial factors: every comparison is paired):

* ``readout``: another cluster assignment of the primary fits (``acc_<readout>``, ``nmi_<readout>``,
  recorded by every cell, :data:`src.protocol.cell.READOUTS`); methods without that readout keep their numbers;
* ``family_value``: a tuned family stood in by another value of the grid that already ran;
* ``oracle_per_k``: per data set and k, the grid value of a family with the best mean accuracy;
* ``sweeps``: new fits, each sweep a list of Hydra overrides added to the paper's experiment, written to
  ``outputs/explain/<paper>/<reading>/runs/<i>``; their rows replace the primary rows of the same data set,
  method, k and trial, or add new ones (other k).

The sweeps of every selected paper's readings run as one pool (:func:`src.running.pool.run_pool`, as a
reproduction's: longest first, one progress line, resumable cell by cell, SLURM through ``--overrides``). A
reading's cell that equals a cell of the paper's primary run (same data, trial, settings and code:
:func:`src.running.pool.jobs.sharing_key`) is copied from ``outputs/reproduce/``, and a cell that two readings
share is computed once. When a paper's sweeps are all in, its readings are marked done and its report is
written; papers whose readings fit nothing new are reported after the pool.

For each reading the paper's numbers are compared with the published ones as the scorecard does
(:mod:`src.presentation.published`); Holm's adjustment runs over the paper's numbers under that reading, and the primary
run is judged the same way here so that the two are comparable. Writes ``outputs/explain/<paper>/report.md``
and ``readings.csv`` (one row per number and reading: the effect on ours and the verdict), which the
scorecard's cause column reads, and ``wall_seconds.txt``. ``all`` rebuilds the scorecard at the end.
"""

from __future__ import annotations

import argparse
import logging
import shlex
import signal
import sys
import time
from pathlib import Path

from .errors import StepFailed, UserError
from .files import write_atomic
from .presentation import scorecard
from .presentation.explain_report import OUTPUTS, explain_paper, primary_frame
from .presentation.report import write_reports
from .reproduction import homes as papers
from .reproduction.readings import fit_readings, load_readings, readings_home
from .reproduction.runner import WALL, terminate
from .running.command_line import add_pool_arguments, check_pool_arguments, with_experiment_group

logger = logging.getLogger(__name__)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0])
    parser.add_argument("papers", nargs="+", metavar="PAPER", help="paper names, or 'all'")
    parser.add_argument("--outputs", default=str(papers.OUTPUTS), help="the reproduce outputs (primary runs)")
    parser.add_argument("--out", default=str(OUTPUTS), help="where the readings' runs and reports go")
    parser.add_argument("--readings", nargs="+", metavar="NAME", help="only these readings' sweeps (all reported)")
    parser.add_argument("--report-only", action="store_true", help="run no sweep; report from what exists")
    add_pool_arguments(parser)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="[%(levelname)s] %(message)s")
    args.overrides = with_experiment_group(args.overrides)  # +paper/<name>=experiment, deprecated
    everything = args.papers == ["all"]
    out_root, outputs = Path(args.out), Path(args.outputs)
    try:
        if "all" in args.papers and not everything:
            raise UserError("'all' cannot be combined with paper names")
        check_pool_arguments(args)
        chosen = [papers.load(name, papers.HOME) for name in (papers.names(papers.HOME) if everything else args.papers)]
        plans = {paper.name: [r for r in load_readings(paper)[1] if not args.readings or r.name in args.readings]
                 for paper in chosen}
        homes = [home for home in (readings_home(paper, plans[paper.name], out_root / paper.name) for paper in chosen)
                 if home is not None]
        if args.dry_run:
            for home in homes:
                for sweep in home.sweep_overrides():
                    print(f"# {home.name}\n{shlex.join(['python', '-m', 'src.run', '-m', *sweep, *args.overrides])}")
        elif not args.report_only:
            for paper in chosen:
                if plans[paper.name]:
                    primary_frame(paper, outputs)  # the primary run must exist before any reading is fitted
    except UserError as exc:
        logger.error("%s", exc)
        return 2
    started = time.time()
    signal.signal(signal.SIGTERM, terminate)  # a killed run stops its workers too
    try:
        if homes and (args.dry_run or not args.report_only):
            # the primary runs' cells may be copied only if they may be on disk (else composing them is wasted)
            sources = chosen if papers.runs_may_be_on_disk(args.overrides) else []
            fit_readings(homes, plans, out_root, sources, args.overrides, args.workers, args.dry_run,
                         job_report=write_reports)
        if args.dry_run:
            return 0
        for paper in chosen:
            report = explain_paper(paper, outputs, out_root)
            if report is not None:
                logger.info("%s: wrote %s", paper.name, report)
                if not args.report_only:
                    write_atomic(out_root / paper.name / WALL, f"{int(round(time.time() - started))}\n")
    except (StepFailed, UserError) as exc:
        logger.error("%s", exc)
        return getattr(exc, "status", 2)
    except KeyboardInterrupt:
        logger.error("interrupted: the cells in progress are lost, the others are on disk; run the same command "
                     "again to resume")
        return 130
    if everything:
        if not args.report_only:
            write_atomic(out_root / "all" / WALL, f"{int(round(time.time() - started))}\n")
        logger.info("wrote %s", scorecard.build(outputs, explain=out_root))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Reproduce papers from their homes: one command per paper, one for all, every cell in one pool.

Usage::

    python -m src.reproduce PAPER [PAPER ...]        # e.g. cnmf; what `make reproduce-<paper>` runs
    python -m src.reproduce all                      # every paper
    python -m src.reproduce all --workers 16         # 16 worker processes (default: the cores)
    python -m src.reproduce fnmf --dry-run           # the jobs and cells, computed and to compute
    python -m src.reproduce cnmf --overrides hydra/launcher=submitit_slurm hydra.launcher.partition=cpu

For the selected papers, as their homes ``papers/<paper>/`` say (:mod:`src.reproduction.homes`), into
``outputs/reproduce/<paper>/``:

1. every job of every sweep of every paper (``experiment=<paper>`` and the sweep's overrides, then
   ``--overrides``), composed as Hydra's multirun composes it, into the run directory it would get, is
   checked (settings, method, labels, data set; a bad one is named on one line and nothing starts);
2. their cells go into one pool of workers (:mod:`src.running.pool`): longest expected first, as many workers as
   cores, a cell that two papers' jobs share computed once and written into both; a job's results and
   tables are written when its last cell is in;
3. when a paper's last cell is in (and those of the papers it reads), its figures are drawn (if
   ``src/presentation/papers/<paper>.py`` defines ``figures(out)``), its wall time since the start is
   recorded in ``wall_seconds.txt`` and its ``report.md`` built (:func:`src.presentation.paper_report.build`,
   with its runs, those of the papers it depends on and its ``report`` options).

``all`` ends with the scorecard over the papers, ``outputs/reproduce/README.md``
(:mod:`src.presentation.scorecard`), and its wall time in ``outputs/reproduce/all/``. Every reproduction
records its schedule in ``outputs/reproduce/schedule.csv`` and ``schedule.json`` (:mod:`src.running.pool.schedule`,
read by ``make bench``). A cell is the unit of resumption: running the same command again computes only the
cells not on disk. A failed cell fails its job on one line; the other jobs finish, and the command exits 1
listing the failed jobs. With the SLURM launcher in ``--overrides`` the cells run as SLURM array tasks
(:mod:`src.running.pool.workers`), with the resources of ``hydra.launcher``.

A paper whose ``depends_on`` names another paper reads that paper's runs: its report waits for them. When
that paper is not selected and has not run to the end here (no ``wall_seconds.txt``), it is reproduced
too.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys

from .errors import StepFailed, UserError
from .presentation import paper_report, scorecard
from .presentation.report import write_reports
from .reproduction import homes as papers
from .reproduction.runner import WALL, plan, reproduce, start_clock, stop_clock, terminate
from .running.command_line import add_pool_arguments, check_pool_arguments, with_experiment_group

logger = logging.getLogger(__name__)


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
        reproduce(chosen, paper_report.build, args.overrides, args.workers, dry_run=args.dry_run,
                  job_report=write_reports)
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


if __name__ == "__main__":
    sys.exit(main())

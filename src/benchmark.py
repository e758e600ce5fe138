"""The family benchmark: every method on every data set under one protocol, ranked with the statistics.

Usage::

    python -m src.benchmark                          # what `make benchmark` runs: every track
    python -m src.benchmark --tracks unsupervised    # one track
    python -m src.benchmark --dry-run                # the cells: to compute, copied from the reproduction
    python -m src.benchmark --report-only            # rebuild outputs/benchmark/report.md from the runs
    python -m src.benchmark --overrides hydra/launcher=submitit_slurm hydra.launcher.partition=cpu

The tracks are the homes of ``papers/benchmark/`` (``reproduce.yaml``, as a paper's), with their settings in
``conf/experiment/benchmark/`` (``experiment=benchmark/<track>``):
the unsupervised track (every method that takes no labels) and two semi-supervised tracks (every label
method with 10% and with 30% of each class labelled, the unsupervised methods they extend beside them as
references). Recipe:

1. compose and check every job of every track (a bad one is named on one line and nothing starts);
2. compute their cells in one pool (:func:`src.running.pool.run_pool`: longest first, one progress line, resumable,
   SLURM through ``--overrides``) into ``outputs/benchmark/<track>/runs/``, copying every cell that
   ``make reproduce-all`` computed alike (same settings and trials, same code: :mod:`src.running.pool.reuse`);
3. write ``outputs/benchmark/report.md`` (:mod:`src.presentation.benchmark_report`); the schedule is in
   ``outputs/benchmark/schedule.csv`` and the wall time in ``wall_seconds.txt``.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from pathlib import Path

from .errors import UserError
from .presentation import benchmark_report
from .reproduction import homes as papers
from .reproduction.runner import start_clock, stop_clock, terminate
from .running.command_line import add_pool_arguments, check_pool_arguments, with_experiment_group
from .running.pool import PoolFailed, run_pool

logger = logging.getLogger(__name__)


def sources(overrides: list[str]) -> list[papers.Paper]:
    """The papers whose cells the benchmark may copy: every paper home, unless no reproduction can be on disk
    (no ``outputs/reproduce`` and no ``paths.output_dir`` override pointing elsewhere:
    :func:`src.reproduction.homes.runs_may_be_on_disk`), which saves composing their jobs."""
    return papers.in_order() if papers.runs_may_be_on_disk(overrides) else []


def main(argv=None) -> int:
    tracks = papers.names(benchmark_report.HOME)
    parser = argparse.ArgumentParser(prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0],
                                     epilog=f"tracks: {', '.join(tracks)} (homes in papers/benchmark/)")
    parser.add_argument("--tracks", nargs="+", choices=tracks, default=tracks, help="the tracks to run (default all)")
    add_pool_arguments(parser)
    parser.add_argument("--report-only", action="store_true", help="only rebuild the report from the runs on disk")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="[%(levelname)s] %(message)s")
    args.overrides = with_experiment_group(args.overrides)  # +benchmark/<track>=experiment, deprecated
    out = benchmark_report.OUTPUTS
    signal.signal(signal.SIGTERM, terminate)  # a killed benchmark stops its workers too
    try:
        check_pool_arguments(args)
        if not args.report_only:
            chosen = [papers.load(track, benchmark_report.HOME, "benchmark") for track in args.tracks]
            started = None if args.dry_run else start_clock(out)
            run_pool(chosen, args.overrides, args.workers, out, dry_run=args.dry_run, sources=sources(args.overrides))
            if args.dry_run:
                return 0
            logger.info("the benchmark's cells took %d s (%s)", stop_clock(out, started), Path(out) / "wall_seconds.txt")
        logger.info("wrote %s", benchmark_report.build(out))
    except UserError as exc:
        logger.error("%s", exc)
        return 2
    except PoolFailed as exc:
        failed = exc.as_step()
        logger.error("%s", failed)
        return failed.status
    except FileNotFoundError as exc:
        logger.error("%s", exc)
        return 1
    except KeyboardInterrupt:
        logger.error("interrupted: the cells in progress are lost, the others are on disk; run the same command "
                     "again to resume")
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The family benchmark's orchestration: what ``python -m src.benchmark`` does once its arguments are read.

The tracks are the homes of ``papers/benchmark/`` (:data:`src.reproduction.homes.BENCHMARK_HOME`, each a ``reproduce.yaml`` as a
paper's), with their settings in ``conf/experiment/benchmark/``. :func:`run` takes the command line's
arguments and the report writers the entry point hands down (:class:`src.reproduction.runner.Writers`; this room imports no
presentation module) and

1. sends ``--method``, ``--grid`` and ``--dataset`` to :mod:`src.tuning.outside` (your method or your data against the
   family);
2. otherwise composes and checks every job of the chosen tracks (a bad one is named on one line and nothing
   starts), computes their cells in one pool (:func:`src.running.pool.run_pool`) into
   ``outputs/benchmark/<track>/runs/``, copying every cell that ``make reproduce-all`` or another track computed
   alike (:mod:`src.running.pool.reuse`), and with ``--tune`` every setting of every grid and its folds
   (:mod:`src.tuning`), then the tuned tables;
3. writes the report, and turns what went wrong (a pool option included) into one line and an exit status.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from pathlib import Path

from .. import tuning
from ..errors import UserError
from ..reproduction import homes as papers
from ..reproduction import shipped
from ..reproduction.rounds import Rounds
from ..reproduction.runner import WALL, Writers, add_piece, start_clock, stop_clock
from ..running.command_line import check_pool_arguments
from ..running.pool import PoolFailed
from . import tables as tuned_tables
from .outside import run_outside

logger = logging.getLogger(__name__)


def sources(overrides: list[str]) -> list[papers.Paper]:
    """The papers whose cells the benchmark may copy: every paper home, unless no reproduction can be on disk
    (no ``outputs/reproduce`` and no ``paths.output_dir`` override pointing elsewhere:
    :func:`src.reproduction.homes.runs_may_be_on_disk`), which saves composing their jobs."""
    return papers.in_order() if papers.runs_may_be_on_disk(overrides) else []


def narrowed(track: papers.Paper, datasets: list[str] | None) -> papers.Paper:
    """The track's home with its sweeps narrowed to ``datasets`` (None: as it is): a sweep's own data sets
    intersected with them, the sweep left out where none is left; a sweep over the experiment's data sets gets
    them as its ``dataset=`` override (a command-line value takes the place of the sweeper's)."""
    if not datasets:
        return track
    sweeps = []
    for sweep in track.sweeps:
        given = [override for override in sweep if override.startswith("dataset=")]
        if not given:
            sweeps.append((*sweep, f"dataset={','.join(datasets)}"))
            continue
        kept = [name for name in given[0].split("=", 1)[1].split(",") if name in datasets]
        if kept:
            sweeps.append(tuple(f"dataset={','.join(kept)}" if override == given[0] else override
                                for override in sweep))
    return replace(track, sweeps=tuple(sweeps))


def of_methods(track: papers.Paper, runs: list[str], only: list[str] | None) -> papers.Paper:
    """The track's home with its sweeps narrowed to the methods ``only`` names (None: as it is): a sweep's own
    ``method=`` intersected with them, a sweep over the experiment's methods (``runs``) given theirs; a sweep
    left with none is left out."""
    if not only:
        return track
    sweeps = []
    for sweep in track.sweeps:
        given = [override for override in sweep if override.startswith("method=")]
        kept = [name for name in (given[0].split("=", 1)[1].split(",") if given else runs) if name in only]
        if kept:
            sweeps.append((*(o for o in sweep if not o.startswith("method=")), f"method={','.join(kept)}"))
    return replace(track, sweeps=tuple(sweeps))


def command_words(args) -> str:
    """The benchmark's command as a person types it, with the arguments that choose its cells."""
    words = ["python -m src.benchmark", *(["--tune"] if args.tune else [])]
    if sorted(args.tracks) != sorted(papers.names(papers.BENCHMARK_HOME)):
        words += ["--tracks", *args.tracks]
    words += ["--datasets", *args.datasets] if args.datasets else []
    words += ["--methods", *args.methods] if args.methods else []
    return " ".join(words)


def run_family(args, writers: Writers, out: Path = papers.BENCHMARK_OUTPUTS) -> int:
    """The family's own benchmark (``args``: the command line's ``tracks``, ``datasets``, ``tune``, ``methods``,
    ``report_only`` and pool options): its cells, its tuned tables with ``--tune``, its report. With
    ``--tune --methods``, the methods named alone are tuned against the family as it ships, and their tuned rows
    and settings take the place of theirs in the shipped tuned files (:func:`src.reproduction.shipped.join_tuned`), with no
    report: the benchmark's report is rebuilt from the shipped files (``--tuned-from-shipped``)."""
    tracks = papers.names(papers.BENCHMARK_HOME)
    only = list(args.methods) or None
    if only:
        if not args.tune:
            raise UserError("--methods narrows a tuned run: give --tune too (python -m src.benchmark --tune "
                            f"--methods {' '.join(only)})")
        args.tracks = [track for track in args.tracks if tuning.family_grids([track], only)]
        if not args.tracks:
            raise UserError(f"--methods {' '.join(only)}: no track of the benchmark runs them")
    classes = tuning.TrackClasses(args.overrides)  # each data set loaded once, for the folds and the tables
    if not args.report_only:
        chosen = [of_methods(narrowed(papers.load(track, papers.BENCHMARK_HOME, "benchmark"), args.datasets),
                             tuning.homes.track_methods(track), only)
                  for track in args.tracks]
        others = [narrowed(papers.load(track, papers.BENCHMARK_HOME, "benchmark"), args.datasets)
                  for track in tracks if track not in args.tracks]  # their cells on disk serve these tracks
        started = None if args.dry_run else start_clock(out)
        compute = Rounds(chosen, args, out, writers, sources=others + sources(args.overrides))
        if args.dry_run:
            compute(tuning.family_homes(args.tracks, args.datasets, out, classes, only=only) if args.tune else [])
            if args.tune:
                predicted = tuning.predicted_growth(args.tracks, args.datasets, only)
                start = tuning.Growth(tuning.family_grids(args.tracks, only), tuple(args.tracks))
                logger.info("dry run: the grids are expected to grow %d value(s) past their edges, about %.0f s "
                            "of cell work more (predicted from the shipped choices: src/tuning/growth.py)",
                            len(predicted.added()) if predicted else 0, tuning.later_work(predicted, start, classes))
            return 0
        try:
            if args.tune:
                tuning.grow(out, args.tracks, args.datasets, classes, compute, only)
            else:
                compute([])
        except KeyboardInterrupt:  # a stopped piece's time was spent: the whole's sum names it
            add_piece(out, command_words(args), int(round(time.time() - started)), compute.summary(), stopped=True)
            raise
        seconds = stop_clock(out, started)
        logger.info("the benchmark's cells took %d s (%s)", seconds, Path(out) / WALL)
        add_piece(out, command_words(args), seconds, compute.summary())
    elif args.tune:
        tuning.grow(out, args.tracks, args.datasets, classes, only=only)
    if only:
        found = {track: tables for track in args.tracks if (tables := tuned_tables.read(out, track)) is not None}
        for path in shipped.join_tuned(found, only, shipped.run_digests(out, list(found))):
            logger.info("wrote %s (commit it; python -m src.presentation.benchmark_report --tuned-from-shipped "
                        "rebuilds the report)", path)
        return 0
    logger.info("wrote %s", writers.benchmark(out))
    return 0


def run(args, writers: Writers) -> int:
    """``python -m src.benchmark`` with its parsed arguments ``args``: your method or data against the family
    (:func:`src.tuning.outside.run_outside`) or the family's own benchmark (:func:`run_family`); what went wrong is one
    line and the exit status (2 for bad input, the failed step's for a failed pool, 1 for missing runs, 130 for
    an interrupt)."""
    try:
        check_pool_arguments(args)
        if args.method or args.dataset or args.grid:
            return run_outside(args, writers)
        return run_family(args, writers)
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

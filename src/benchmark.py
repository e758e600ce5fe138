"""The family benchmark: every method on every data set under one protocol, ranked with the statistics.

Usage::

    python -m src.benchmark                          # what `make benchmark` runs: every track
    python -m src.benchmark --tracks unsupervised    # one track
    python -m src.benchmark --datasets yale          # the tracks on one data set
    python -m src.benchmark --dry-run                # the cells: to compute, copied from the reproduction
    python -m src.benchmark --report-only            # rebuild outputs/benchmark/report.md from the runs
    python -m src.benchmark --tune --methods knn     # tune one method alone, into the shipped tuned files
    python -m src.benchmark --fold-fits yale orl     # the fold fits the choice's rule reads, a piece a data set
    python -m src.benchmark --choice-entrants        # the choice's entrants from the shipped files alone
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

Your method and your data against the family (:mod:`src.reproduction.contenders`)::

    python -m src.benchmark --method mypkg.mymodule:MyNMF             # an estimator outside the repository
    python -m src.benchmark --method path/to/my_nmf.py:MyNMF --param beta=0.5 --datasets orl yale
    python -m src.benchmark --config-dir mine/conf --method my_nmf    # mine/conf/method/my_nmf.yaml (_target_)
    python -m src.benchmark --dataset path/to/mine.npz                # every family method on your data
    python -m src.benchmark --dataset path/to/mine.npz --tune         # ... each tuned on it, and the choice

``--method`` runs the estimator through the gate (:mod:`src.running.gate`; a failed check is one line, exit
status 2, nothing written), computes only its own cells in the tracks it belongs to, into
``outputs/benchmark/<label>/``, and ranks it against the family's shipped cells
(``papers/benchmark/family_cells.csv.gz``: :mod:`src.reproduction.shipped`); ``--dataset`` runs every family
method on the file in the three tracks (with ``--tune`` each tuned on it, and the choice's entrants). Both
write ``report.md`` there (:mod:`src.presentation.contender_report`).

This module is the recipe: its arguments and one call, :func:`src.tuning.benchmark.run`, handed the
report writers (:class:`src.reproduction.runner.Writers`); the orchestration is in
:mod:`src.tuning.benchmark` and :mod:`src.tuning.outside`.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys

from pathlib import Path

from .choice import entrants, fold_fits
from .presentation import benchmark_report, contender_report
from .presentation.report import write_reports
from .tuning import benchmark
from .reproduction import contenders as opened
from .reproduction import homes as papers
from .reproduction.runner import Writers, terminate
from .running.command_line import add_pool_arguments, with_experiment_group
from .tuning import homes as tuning_homes


def main(argv=None) -> int:
    tracks = papers.names(papers.BENCHMARK_HOME)
    parser = argparse.ArgumentParser(prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0],
                                     epilog=f"tracks: {', '.join(tracks)} (homes in papers/benchmark/)")
    parser.add_argument("--tracks", nargs="+", choices=tracks, default=tracks, help="the tracks to run (default all)")
    add_pool_arguments(parser)
    parser.add_argument("--report-only", action="store_true", help="only rebuild the report from the runs on disk")
    parser.add_argument("--tune", action="store_true",
                        help="tune every method alike: each grid (conf/method/, tune) searched per trial on the "
                             "labels the method may see, the oracle beside the unsupervised track (src/tuning/); "
                             "with --dataset, on your file")
    parser.add_argument("--methods", nargs="+", default=[], metavar="NAME",
                        choices=sorted(tuning_homes.family_grids(tracks)),
                        help="with --tune: tune these family methods alone (registry names), against the family "
                             "as it ships; their tuned rows and settings take the place of theirs in "
                             "papers/benchmark/tuned_cells.csv.gz and tuned_settings.csv.gz")
    parser.add_argument("--fold-fits", nargs="+", default=[], metavar="DATASET", choices=opened.DATASETS,
                        help="fit the label tracks' folds of every setting of the settings file on these data "
                             "sets, keeping each fit's partition and readouts (src/choice/fold_fits.py), into "
                             "papers/benchmark/fold_fits/<dataset>.csv.xz; resumable")
    parser.add_argument("--choice-entrants", action="store_true",
                        help="recompute the choice's two entrants of the label tracks from the shipped fold fits, "
                             "cells and settings alone (src/choice/entrants.py), into "
                             "papers/benchmark/choice_entrants.csv.gz, which the report ranks with the family")
    outside_args = parser.add_argument_group("your method or your data against the family")
    outside_args.add_argument("--method", nargs="+", default=[], metavar="METHOD",
                              help="estimators outside the repository: package.module:Class, path/to/file.py:Class, "
                                   "or a method config of --config-dir (with _target_); ranked together")
    outside_args.add_argument("--label", nargs="+", default=None, metavar="LABEL",
                              help="the --method estimators' names in tables (default: their class names)")
    outside_args.add_argument("--param", nargs="+", default=[], metavar="NAME=VALUE",
                              help="constructor parameters of the --method estimators (values read as YAML)")
    outside_args.add_argument("--grid", nargs="+", default=[], metavar="NAME=V1,V2,...",
                              help="tune the --method estimators as the family is tuned (--tune): each parameter's "
                                   "values, searched per trial on the labels the method may see")
    outside_args.add_argument("--config-dir", default=None, metavar="DIR",
                              help="your own Hydra config directory: DIR/method/<name>.yaml for --method <name>")
    outside_args.add_argument("--dataset", default=None, metavar="FILE",
                              help="your labelled data file (.npz, .mat, .csv as dataset=file reads it): every "
                                   "family method on it, ranked")
    outside_args.add_argument("--datasets", nargs="+", default=None, choices=opened.DATASETS, metavar="NAME",
                              help="the data sets the run covers, the family's own or a --method's (default all: "
                                   f"{', '.join(opened.DATASETS)})")
    outside_args.add_argument("--cell-timeout", type=float, default=None, metavar="SECONDS",
                              help="stop an outside method's cell after this long (default: 10x the family's "
                                   "slowest cell of that data set, at least 60 s)")
    outside_args.add_argument("--family-mismatch", choices=("leave-out", "recompute"), default="leave-out",
                              help="where the local data differ from the shipped cells' (Caltech-101's bag of "
                                   "words is built here): leave that data set out, or recompute the family there")
    outside_args.add_argument("--out", default=None, metavar="DIR",
                              help="where the run and its report go (default outputs/benchmark/<label or file>)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="[%(levelname)s] %(message)s")
    args.overrides = with_experiment_group(args.overrides)  # +benchmark/<track>=experiment, deprecated
    signal.signal(signal.SIGTERM, terminate)  # a killed benchmark stops its workers too
    if args.fold_fits:
        return fold_fits.run(args.fold_fits, Path(args.out or "outputs/benchmark"), args.workers or 2)
    if args.choice_entrants:
        return entrants.run()
    return benchmark.run(args, Writers(job=write_reports, benchmark=benchmark_report.build,
                                       contender=contender_report.build))


if __name__ == "__main__":
    sys.exit(main())

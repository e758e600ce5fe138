"""The family benchmark: every method on every data set under one protocol, ranked with the statistics.

Usage::

    python -m src.benchmark                          # what `make benchmark` runs: every track
    python -m src.benchmark --tracks unsupervised    # one track
    python -m src.benchmark --datasets yale          # the tracks on one data set
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

Your method and your data against the family (:mod:`src.reproduction.contenders`)::

    python -m src.benchmark --method mypkg.mymodule:MyNMF             # an estimator outside the repository
    python -m src.benchmark --method path/to/my_nmf.py:MyNMF --param beta=0.5 --datasets orl yale
    python -m src.benchmark --config-dir mine/conf --method my_nmf    # mine/conf/method/my_nmf.yaml (_target_)
    python -m src.benchmark --dataset path/to/mine.npz                # every family method on your data

``--method`` runs the estimator through the gate (:mod:`src.running.gate`; a failed check is one line, exit
status 2, nothing written), computes only its own cells in the tracks it belongs to, into
``outputs/benchmark/<label>/``, and ranks it against the family's shipped cells
(``papers/benchmark/family_cells.csv.gz``: :mod:`src.reproduction.shipped`); ``--dataset`` runs every family
method on the file in the three tracks. Both write ``report.md`` there (:mod:`src.presentation.contender_report`).
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from dataclasses import replace
from pathlib import Path

import pandas as pd

from .data import load_dataset
from .errors import ConfigError, UserError
from . import methods, tuning
from .presentation import benchmark_report, contender_report
from .presentation.report import write_reports
from .reproduction import contenders as opened
from .reproduction import homes as papers
from .reproduction import shipped
from .reproduction.runner import start_clock, stop_clock, terminate
from .running.command_line import add_pool_arguments, check_pool_arguments, with_experiment_group
from .running import gate, provenance
from .running.pool import PoolFailed, plan_jobs, run_pool
from .running.settings import thaw
from .resolvers import safe_name

logger = logging.getLogger(__name__)


def job_report(frame: pd.DataFrame, out_dir: Path):
    """A finished job's table and figure (:func:`src.presentation.report.write_reports`), except a tuned
    setting's or fold's (``tuned/``): those the tuned report reads as a whole, and a figure per job would
    cost the pool's main process a second each, hundreds of times."""
    if tuning.tables.TUNED_DIR in Path(out_dir).parts:
        return []
    return write_reports(frame, out_dir)


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


def main(argv=None) -> int:
    tracks = papers.names(benchmark_report.HOME)
    parser = argparse.ArgumentParser(prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0],
                                     epilog=f"tracks: {', '.join(tracks)} (homes in papers/benchmark/)")
    parser.add_argument("--tracks", nargs="+", choices=tracks, default=tracks, help="the tracks to run (default all)")
    add_pool_arguments(parser)
    parser.add_argument("--report-only", action="store_true", help="only rebuild the report from the runs on disk")
    parser.add_argument("--tune", action="store_true",
                        help="tune every method alike: each grid (conf/method/, tune) searched per trial on the "
                             "labels the method may see, the oracle beside the unsupervised track (src/tuning/)")
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
    out = benchmark_report.OUTPUTS
    signal.signal(signal.SIGTERM, terminate)  # a killed benchmark stops its workers too
    try:
        check_pool_arguments(args)
        if args.method or args.dataset or args.grid:
            return run_outside(args)
        classes = tuning.TrackClasses(args.overrides)  # each data set loaded once, for the folds and the tables
        if not args.report_only:
            chosen = [narrowed(papers.load(track, benchmark_report.HOME, "benchmark"), args.datasets)
                      for track in args.tracks]
            others = [narrowed(papers.load(track, benchmark_report.HOME, "benchmark"), args.datasets)
                      for track in tracks if track not in args.tracks]  # their cells on disk serve these tracks
            started = None if args.dry_run else start_clock(out)
            tuned = tuning.family_homes(args.tracks, args.datasets, out, classes) if args.tune else []
            run_pool([home for home in chosen if home.sweeps] + tuned, args.overrides, args.workers, out,
                     dry_run=args.dry_run, sources=[home for home in others if home.sweeps] + sources(args.overrides),
                     job_report=job_report, unit="track")
            if args.dry_run:
                return 0
            logger.info("the benchmark's cells took %d s (%s)", stop_clock(out, started), Path(out) / "wall_seconds.txt")
        if args.tune:
            tuning.tabulate(out, args.tracks, tuning.family_grids(args.tracks), classes)
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


def run_outside(args) -> int:
    """``--method`` or ``--dataset``: check, compute the missing cells in the pool, write the report."""
    if args.method and args.dataset:
        raise ConfigError("give --method (your method against the family) or --dataset (the family on your data), "
                          "not both")
    if args.tune:
        raise ConfigError("--tune tunes the family's own benchmark; give a --method its grid with --grid (the family "
                          "is then ranked tuned from its shipped cells)" if args.method else
                          "--tune runs on the benchmark's data sets, not on --dataset")
    if args.grid and not args.method:
        raise ConfigError("--grid tunes a --method; the family's grids are in conf/method/ (tune), run with --tune")
    if args.cell_timeout is not None and not args.cell_timeout > 0:
        raise ConfigError(f"--cell-timeout={args.cell_timeout:g} must be a positive number of seconds")
    if args.dataset:
        return run_user_data(args)
    return run_contenders(args)


def run_contenders(args) -> int:
    """Gate each outside method, compute its cells in its tracks, rank it against the shipped family."""
    params = opened.parse_params(args.param)
    grid_values = tuning.grids.parse_grid(args.grid)
    if args.label and len(args.label) != len(args.method):
        raise ConfigError(f"--label gives {len(args.label)} label(s) for {len(args.method)} --method(s): one each")
    given = args.label or [None] * len(args.method)
    contenders = [opened.resolve(spec, params, args.config_dir, label) for spec, label in zip(args.method, given)]
    labels = [c.label for c in contenders]
    family = shipped.load()
    if len(set(labels)) < len(labels) or set(labels) & set(family["method"]):
        raise ConfigError(f"the methods' labels {', '.join(labels)} must differ from each other and from the "
                          "family's: give each its own with --label")
    contenders, grids, deaf = gated(contenders, grid_values, args.cell_timeout)
    datasets = list(args.datasets or opened.DATASETS)
    out = Path(args.out or benchmark_report.OUTPUTS / safe_name("+".join(labels)))
    homes = opened.contender_homes(contenders, list(args.tracks), datasets, out, args.config_dir)
    classes = tuning.TrackClasses(args.overrides)  # each data set loaded once, for the folds and the tables
    if grids:
        homes += tuning.contender_homes(contenders, grids, list(args.tracks), datasets, out, args.config_dir,
                                         classes)
    if not homes:
        raise ConfigError(f"--tracks {' '.join(args.tracks)}: the methods enter none of them (a method that takes "
                          f"labels runs in {' and '.join(opened.LABEL_TRACKS)})")
    jobs = plan_jobs(homes, args.overrides)
    first = jobs[0].spec
    local = shipped.local_digests({job.spec.dataset.name: thaw(job.spec.dataset.config) for job in jobs},
                                  first.paths.data_dir, first.paths.mirror, first.seed)
    mine = family[family["track"].isin(args.tracks) & family["dataset"].isin(datasets)]
    check_seed(mine, first.seed)
    notes = fingerprint_notes(mine) + deaf
    differ = opened.mismatched(mine, local)
    for dataset, (theirs, ours) in differ.items():
        notes.append(f"{dataset}: the shipped family cells were computed on other data (sha256 {theirs[:12]}, "
                     f"here {ours[:12]}); " + ("the family is recomputed there" if args.family_mismatch == "recompute"
                                               else "left out (--family-mismatch recompute computes them)"))
        logger.warning("%s", notes[-1])
    kept = [d for d in datasets if d not in differ]
    if differ and args.family_mismatch == "recompute":
        homes += opened.family_homes(list(args.tracks), [f"dataset={','.join(differ)}"], out / "family")
    limits = opened.time_limits(family)
    names = {c.name for c in contenders}

    def limit(job) -> float | None:
        if job.spec.method.name not in names:
            return None
        return args.cell_timeout or limits.get(job.spec.dataset.name, opened.MIN_LIMIT)

    summary = pooled(homes, args, out, limit)
    if summary is None:
        return 0
    if grids:
        entered = [t for t in opened.TRACKS if t in args.tracks and (out / t / "runs").is_dir()]
        tuning.tabulate(out, entered, grids, classes)
    frames, read = {}, 0
    for track in [t for t in opened.TRACKS if t in args.tracks]:
        own = benchmark_report.load_track(out / track / "runs")
        if own is None:
            continue
        theirs = shipped_rows(mine, track, kept)
        read += len(theirs)
        rows = [own, theirs]
        if differ and args.family_mismatch == "recompute":
            rows.append(benchmark_report.load_track(out / "family" / track / "runs"))
        frames[track] = pd.concat([r for r in rows if r is not None], ignore_index=True)
    twins = {c.label: twin_label(c, family) for c in contenders}
    cost = {"cells_computed": summary.get("computed", 0), "cells_shipped": read,
            "wall_seconds": summary.get("wall_seconds"), "workers": summary.get("workers")}
    how = [how_set(c, grids.get(c.name), params) for c in contenders]
    tuned = tuned_frames(out, frames, mine, labels, kept, notes) if grids else {}
    path = contender_report.build(out, frames, labels, title=f"{' and '.join(labels)} against the family",
                                  twins={k: v for k, v in twins.items() if v}, notes=notes, cost=cost, how=how,
                                  tuned=tuned)
    logger.info("%s against the family: %s", " and ".join(labels), path)
    return 0


def gated(contenders: list, grid_values: dict, seconds: float | None) -> tuple[list, dict, list[str]]:
    """Each contender through the gate (:func:`src.running.gate.check`), its grid's other settings first
    (:func:`src.tuning.contender_grid`), then the contender at its grid's defaults: the contenders, their grids
    by name, and a note for each that says it takes labels but ignored them on the gate's problem."""
    grids = {c.name: tuning.contender_grid(c, grid_values, seconds) for c in contenders} if grid_values else {}
    contenders = [replace(c, params={**c.params, **grids[c.name].defaults}) if c.name in grids else c
                  for c in contenders]
    deaf = []
    for contender in contenders:
        try:
            passed = gate.check(contender.name, contender.params, seconds)
        except UserError as exc:
            if contender.name not in grids:
                raise
            default = tuning.grids.setting_text(grids[contender.name].defaults)
            raise ConfigError(f"--grid {default}: {contender.label} refuses it ({exc})") from None
        logger.info("gate: %s passed (%s%s)", contender.label, "clusters directly" if passed.clusters_directly
                    else "a representation", ", takes labels" if passed.needs_labels else "")
        if passed.reads_labels is False:
            deaf.append(f"{contender.label} says it takes labels (needs_labels) but gave the same output when "
                        "they changed, on the gate's tiny problem: read its label-track ranks as a method that "
                        "ignores them")
    return contenders, grids, deaf


def how_set(contender, grid, given: dict) -> str:
    """How a contender's parameters were set, in one sentence for its report."""
    if grid is not None:
        values = "; ".join(f"{p} over {', '.join(map(str, v))} (default {grid.defaults[p]})"
                           for p, v in grid.values.items())
        return (f"{contender.label}: tuned by the benchmark on the labels it may see ({values}), per trial by the "
                "family's rule and with the same folds (`src/tuning/selection.py`).")
    if given:
        return (f"{contender.label}: set with --param ({', '.join(f'{k}={v}' for k, v in given.items())}). Values "
                "chosen by looking at this benchmark's scores flatter the method, since those scores read the test "
                "labels: give a --grid to have it tuned as the family is.")
    return f"{contender.label}: at its constructor's defaults; nothing given, nothing tuned."


def tuned_frames(out: Path, frames: dict, family, contenders: list[str], datasets: list[str], notes: list[str]) -> dict:
    """Per track, the tuned rows of the contenders (their tuned tables under ``out``) and of the family (the
    shipped tuned cells), on the data sets both have, and the contenders' searched settings; a track or data
    set whose tuned family cells do not ship is named in ``notes`` and left out of the tuned ranking."""
    shipped_tuned = shipped.load_tuned()
    found = {}
    for track in frames:
        own = tuning.tables.read(out, track)
        if own is None:
            continue
        rows, searched = own
        theirs = shipped.tuned_family(shipped_rows(family, track, datasets).assign(track=track),
                                      None if shipped_tuned is None else shipped_tuned[shipped_tuned["track"] == track])
        if theirs is None:
            notes.append(f"{track}: the family's tuned cells do not ship for this track, so no tuned ranking is drawn "
                         "(python -m src.benchmark --tune and make results write them)")
            continue
        covered = sorted(set(theirs["dataset"]) & set(rows["dataset"]))
        missing = sorted(set(rows["dataset"]) - set(covered))
        if missing:
            notes.append(f"{track}: the family's tuned cells do not ship for {', '.join(missing)}, so the tuned "
                         f"ranking is over {', '.join(covered) or 'no data set'}")
        if not covered:
            continue
        theirs = theirs[theirs["dataset"].isin(covered)].drop(columns="track")
        mine = rows[rows["method"].isin(contenders) & rows["dataset"].isin(covered)]
        found[track] = (pd.concat([mine, theirs], ignore_index=True),
                        searched[searched["method"].isin(contenders)])
    return found


def run_user_data(args) -> int:
    """Every family method on the user's labelled file in the three tracks, ranked: which one to use."""
    probe = plan_jobs([opened.Sweeps("probe", ((f"experiment=benchmark/{args.tracks[0]}", "method=nmf",
                                                *opened.user_data_overrides(args.dataset, opened.MAX_K)),))],
                      args.overrides)[0].spec
    data = load_dataset(thaw(probe.dataset.config), probe.paths.data_dir, probe.paths.mirror, probe.seed)
    n_classes = opened.check_user_data(data.y, args.dataset)
    out = Path(args.out or benchmark_report.OUTPUTS / safe_name(Path(args.dataset).stem))
    homes = opened.family_homes(list(args.tracks), opened.user_data_overrides(args.dataset, n_classes), out, "yours")
    summary = pooled(homes, args, out, None)
    if summary is None:
        return 0
    frames = {t: f for t in opened.TRACKS
              if t in args.tracks and (f := benchmark_report.load_track(out / t / "runs")) is not None}
    cost = {"cells_computed": summary.get("computed", 0), "cells_shipped": 0,
            "wall_seconds": summary.get("wall_seconds"), "workers": summary.get("workers")}
    path = contender_report.build(out, frames, [], title=f"The family on {data.name}: which method to use",
                                  notes=[f"{data.name}: {data.X.shape[0]} samples, {data.X.shape[1]} features, "
                                         f"{n_classes} classes, k = 2..{min(opened.MAX_K, n_classes)}"], cost=cost)
    logger.info("the family on %s: %s", data.name, path)
    return 0


def pooled(homes, args, out: Path, limit) -> dict | None:
    """Run the homes' cells in the pool into ``out`` (a dry run: only count them, returning None)."""
    if args.dry_run:
        run_pool(homes, args.overrides, args.workers, out, dry_run=True, unit="track")
        return None
    started = start_clock(out)
    summary = run_pool(homes, args.overrides, args.workers, out, time_limits=limit, job_report=job_report,
                       unit="track")
    logger.info("the cells took %d s (%s)", stop_clock(out, started), out / "wall_seconds.txt")
    return summary


def shipped_rows(family, track: str, datasets: list[str]):
    """The shipped family cells of ``track`` on ``datasets``, as a track's rows read
    (:func:`src.reproduction.shipped.load_track`)."""
    return family[(family["track"] == track) & family["dataset"].isin(datasets)].drop(columns="track")


def check_seed(family, seed: int) -> None:
    """Refuse a seed other than the shipped cells' (other trials: no paired comparison), in one line."""
    seeds = sorted(set(family["seed"].dropna().astype(int)))
    if seeds and seeds != [seed]:
        raise ConfigError(f"seed={seed}: the shipped family cells use seed {seeds[0]}, whose trials a comparison "
                          "needs; leave the seed as it is")


def fingerprint_notes(family) -> list[str]:
    """The report's note when the shipped cells were computed by other code than this checkout's."""
    here = provenance.code_fingerprint()
    theirs = sorted(set(family["code_fingerprint"].astype(str)))
    if not theirs or theirs == [here]:
        return []
    return [f"the shipped family cells were computed by code fingerprint {', '.join(theirs)}; this checkout's is "
            f"{here} (`make benchmark` and `make results` refresh them)"]


def twin_label(contender, family) -> str | None:
    """The family method the contender says it extends (class attribute ``twin``: a registry name), by its
    label in the shipped cells; a name the shipped cells do not hold is one warning and no twin."""
    twin = getattr(methods.estimator_class(contender.name), "twin", None)
    if not twin:
        return None
    found = family.loc[family["estimator"] == twin, "method"]
    if found.empty:
        logger.warning("%s: twin = %r is none of the family's registry names (%s); no twin drawn",
                       contender.label, twin, ", ".join(methods.NAMES))
        return None
    return str(found.iloc[0])


if __name__ == "__main__":
    sys.exit(main())

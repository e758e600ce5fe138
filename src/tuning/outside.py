"""Your method or your data against the family: the orchestration of ``python -m src.benchmark --method``,
``--grid`` and ``--dataset``.

``--method`` resolves each estimator from outside the repository (:mod:`src.reproduction.contenders`), sends it through the
gate (:mod:`src.running.gate`; a failed check is one line, exit status 2, nothing written), computes only its own
cells in the tracks it belongs to (and, with ``--grid``, its settings and folds: :mod:`src.tuning`), and ranks it
against the family's shipped cells (:mod:`src.reproduction.shipped`). ``--dataset`` runs every family method on the user's
labelled file in the three tracks. The reports are written by the writers the entry point hands down
(:class:`src.reproduction.runner.Writers`): this room imports no presentation module.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

from .. import methods, tuning
from ..data import load_dataset
from ..errors import ConfigError
from ..resolvers import safe_name
from ..running import provenance
from ..running.pool import plan_jobs
from ..running.settings import thaw
from ..reproduction import contenders as opened
from ..reproduction import shipped
from ..reproduction.homes import BENCHMARK_OUTPUTS
from ..reproduction.rounds import Rounds
from ..reproduction.runner import WALL, Writers, pooled, start_clock, stop_clock
from ..reproduction.shipped import load_track

logger = logging.getLogger(__name__)


def run_outside(args, writers: Writers) -> int:
    """``--method`` or ``--dataset`` (``args``, the command line's): check, compute the missing cells in the pool,
    write the report with ``writers``."""
    if args.method and args.dataset:
        raise ConfigError("give --method (your method against the family) or --dataset (the family on your data), "
                          "not both")
    if args.tune and args.method:
        raise ConfigError("--tune tunes the family's own benchmark; give a --method its grid with --grid (the family "
                          "is then ranked tuned from its shipped cells)")
    if args.grid and not args.method:
        raise ConfigError("--grid tunes a --method; the family's grids are in conf/method/ (tune), run with --tune")
    if args.cell_timeout is not None and not args.cell_timeout > 0:
        raise ConfigError(f"--cell-timeout={args.cell_timeout:g} must be a positive number of seconds")
    if args.dataset:
        return run_user_data(args, writers)
    return run_contenders(args, writers)


def run_contenders(args, writers: Writers) -> int:
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
    contenders, grids, deaf = tuning.gated(contenders, grid_values, args.cell_timeout)
    datasets = list(args.datasets or opened.DATASETS)
    out = Path(args.out or BENCHMARK_OUTPUTS / safe_name("+".join(labels)))
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

    summary = pooled(homes, args, out, writers, limit)
    if summary is None:
        return 0
    if grids:
        entered = [t for t in opened.TRACKS if t in args.tracks and (out / t / "runs").is_dir()]
        tuning.tabulate(out, entered, tuning.Growth(grids, tuple(entered)), classes)
    frames, read = {}, 0
    for track in [t for t in opened.TRACKS if t in args.tracks]:
        own = load_track(out / track / "runs")
        if own is None:
            continue
        theirs = shipped_rows(mine, track, kept)
        read += len(theirs)
        rows = [own, theirs]
        if differ and args.family_mismatch == "recompute":
            rows.append(load_track(out / "family" / track / "runs"))
        frames[track] = pd.concat([r for r in rows if r is not None], ignore_index=True)
    twins = {c.label: twin_label(c, family) for c in contenders}
    cost = {"cells_computed": summary.get("computed", 0), "cells_shipped": read,
            "wall_seconds": summary.get("wall_seconds"), "workers": summary.get("workers")}
    how = [how_set(c, grids.get(c.name), params) for c in contenders]
    tuned = tuned_frames(out, frames, mine, labels, kept, notes) if grids else {}
    path = writers.contender(out, frames, labels, title=f"{' and '.join(labels)} against the family",
                             twins={k: v for k, v in twins.items() if v}, notes=notes, cost=cost, how=how,
                             tuned=tuned)
    logger.info("%s against the family: %s", " and ".join(labels), path)
    return 0


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


def run_user_data(args, writers: Writers) -> int:
    """Every family method on the user's labelled file in the three tracks, ranked: which one to use."""
    probe = plan_jobs([opened.Sweeps("probe", ((f"experiment=benchmark/{args.tracks[0]}", "method=nmf",
                                                *opened.user_data_overrides(args.dataset, opened.MAX_K)),))],
                      args.overrides)[0].spec
    data = load_dataset(thaw(probe.dataset.config), probe.paths.data_dir, probe.paths.mirror, probe.seed)
    n_classes = opened.check_user_data(data.y, args.dataset, data.class_names)
    out = Path(args.out or BENCHMARK_OUTPUTS / safe_name(Path(args.dataset).stem))
    chosen = opened.user_data_overrides(args.dataset, n_classes)
    homes = opened.family_homes(list(args.tracks), chosen, out, "yours")
    if args.tune:
        summary, tuned = tuned_user_data(args, writers, homes, out, {probe.dataset.name: chosen})
    else:
        summary, tuned = pooled(homes, args, out, writers), {}
    if summary is None:
        return 0
    frames = {t: f for t in opened.TRACKS
              if t in args.tracks and (f := load_track(out / t / "runs")) is not None}
    cost = {"cells_computed": summary.get("computed", 0), "cells_shipped": 0,
            "wall_seconds": summary.get("wall_seconds"), "workers": summary.get("workers")}
    notes = [f"{data.name}: {data.X.shape[0]} samples, {data.X.shape[1]} features, {n_classes} classes, "
             f"k = 2..{min(opened.MAX_K, n_classes)}"]
    path = writers.contender(out, frames, [], title=f"The family on {data.name}: which method to use",
                             notes=notes, cost=cost, tuned=tuned)
    logger.info("the family on %s: %s", data.name, path)
    return 0


def tuned_user_data(args, writers: Writers, homes: list, out: Path, given: dict[str, list[str]]) \
        -> tuple[dict | None, dict]:
    """``--dataset --tune``: the family's fixed cells on the file (``homes``) and every grid's other settings and
    folds, grown round after round as on the benchmark's data sets (:func:`src.tuning.grow`, each round by
    :class:`src.reproduction.rounds.Rounds`; ``given``: the file's name and the overrides that choose it). Returns the rounds'
    record (cells summed, the wall time of them all; None for a dry run) and each track's tuned rows and
    settings table."""
    classes = tuning.TrackClasses(args.overrides, given)
    names = list(given)
    compute = Rounds(homes, args, out, writers)
    if args.dry_run:
        compute(tuning.family_homes(list(args.tracks), names, out, classes))
        return None, {}
    started = start_clock(out)
    tuning.grow(out, list(args.tracks), names, classes, compute)
    logger.info("the cells took %d s (%s)", stop_clock(out, started), out / WALL)
    found = {track: read for track in args.tracks if (read := tuning.tables.read(out, track)) is not None}
    return compute.summary(), found


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

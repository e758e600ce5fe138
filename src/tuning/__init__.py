"""The tuned benchmark: every method tuned alike, on the labels it may see (``python -m src.benchmark --tune``).

* :mod:`.grids`: the grids (declared in ``conf/method/``, or a contender's ``--grid``) and their settings;
* :mod:`.selection`: the rule that chooses a setting per trial, and the oracle;
* :mod:`.growth`: how a grid grows past an edge where the rule's choices pile, up to a bound;
* :mod:`.homes`: the cells the grids add to the benchmark's, and where they go;
* :mod:`.tables`: the tuned rows and the searched settings, assembled from the cells on disk;
* :mod:`.benchmark`: what ``python -m src.benchmark`` does (the family's cells, tuned or not, and the report),
  and :mod:`.outside`: your method or your data against the family. They sit here, on top of
  :mod:`src.reproduction` (the pool, the rounds, the shipped cells), since they orchestrate the tuning.

The report's part is :mod:`src.presentation.tuning_report`; the manual's is ``docs/benchmark.md``
("Tuned alike").
"""

from __future__ import annotations

import functools
import inspect
import itertools
import json
import logging
import math
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np

from .. import methods
from ..data import load_dataset
from ..errors import ConfigError, UserError
from ..files import write_atomic
from ..reproduction import shipped
from ..reproduction.contenders import LABEL_TRACKS, Sweeps, method_overrides
from ..reproduction.homes import TUNED_DIR
from ..resolvers import safe_name
from ..running import gate
from ..running.pool import plan_jobs
from ..running.pool.schedule import published_costs
from ..running.settings import thaw
from . import grids, growth
from .grids import Grid
from .growth import Growth
from .homes import choosing, family_grids, scored_ks, track_datasets, tuned_homes
from .selection import FOLDS, Trials, takes_labels
from . import tables as tables_module
from .tables import tuned_track, write

logger = logging.getLogger(__name__)


def contender_grid(contender, values: dict, seconds: float | None = None) -> Grid:
    """The grid ``--grid`` gives a contender (:func:`.grids.contender_grid`), each setting but the default
    passed through the gate (:func:`src.running.gate.check`) before any cell: a value the estimator refuses
    is one line. The default setting is the contender's own, which the gate checks with the contender."""
    cls = methods.estimator_class(contender.name)
    signature = inspect.signature(cls).parameters
    defaults = {name: p.default for name, p in signature.items() if p.default is not inspect.Parameter.empty}
    grid = grids.contender_grid(contender.name, contender.label, contender.params, values,
                                methods.parameter_names(cls), defaults)
    for setting in grids.settings(grid)[1:]:  # one parameter off its default in each
        param, value = next((p, v) for p, v in setting.items() if v != grid.defaults[p])
        try:
            gate.check(contender.name, {**contender.params, **setting}, seconds)
        except UserError as exc:
            raise ConfigError(f"--grid {param}={value!r}: {contender.label} refuses it ({exc})") from None
    return grid


def gated(contenders: list, grid_values: dict, seconds: float | None) -> tuple[list, dict, list[str]]:
    """Each contender through the gate (:func:`src.running.gate.check`), its grid's other settings first
    (:func:`contender_grid`), then the contender at its grid's defaults: the contenders, their grids
    by name, and a note for each that says it takes labels but ignored them on the gate's problem."""
    found = {c.name: contender_grid(c, grid_values, seconds) for c in contenders} if grid_values else {}
    contenders = [replace(c, params={**c.params, **found[c.name].defaults}) if c.name in found else c
                  for c in contenders]
    deaf = []
    for contender in contenders:
        try:
            passed = gate.check(contender.name, contender.params, seconds)
        except UserError as exc:
            if contender.name not in found:
                raise
            default = grids.setting_text(found[contender.name].defaults)
            raise ConfigError(f"--grid {default}: {contender.label} refuses it ({exc})") from None
        logger.info("gate: %s passed (%s%s)", contender.label, "clusters directly" if passed.clusters_directly
                    else "a representation", ", takes labels" if passed.needs_labels else "")
        if passed.reads_labels is False:
            deaf.append(f"{contender.label} says it takes labels (needs_labels) but gave the same output when "
                        "they changed, on the gate's tiny problem: read its label-track ranks as a method that "
                        "ignores them")
    return contenders, found, deaf


class TrackClasses:
    """The data sets' classes as a track's cells read them, each data set loaded once (``overrides`` as the
    run's): the fold k of the homes, before the pool, and the trials of the tables, after it, share one
    instance, so a tuned run loads each data set once. ``given``: a person's data sets by name, each with the
    overrides that choose it (``python -m src.benchmark --dataset mine.npz --tune``: ``dataset=file``, its path
    and its k); the others are the benchmark's, chosen by ``dataset=<name>``."""

    def __init__(self, overrides: list[str], given: dict[str, list[str]] | None = None):
        self.overrides = list(overrides)
        self.given = {name: list(chosen) for name, chosen in (given or {}).items()}
        self.loaded: dict[str, np.ndarray] = {}
        self.specs: dict[tuple[str, str], object] = {}
        self.found: dict[str, Trials] = {}

    def spec(self, track: str, dataset: str):
        """The settings of the track's cells on ``dataset``, composed once (:meth:`compose`)."""
        if (track, dataset) not in self.specs:
            self.compose([track], [dataset])
        return self.specs[track, dataset]

    def compose(self, tracks: list[str], datasets: list[str]) -> None:
        """Compose the settings of every track on every data set in one plan (one Hydra start)."""
        pairs = [(t, d) for t in tracks for d in datasets if (t, d) not in self.specs]
        if not pairs:
            return
        sweeps = tuple((f"experiment=benchmark/{t}", *choosing([d], self.given)[0], "method=kmeans")
                       for t, d in pairs)
        for pair, job in zip(pairs, plan_jobs([Sweeps("classes", sweeps)], self.overrides)):
            self.specs[pair] = job.spec

    def __call__(self, track: str, dataset: str) -> np.ndarray:
        """The classes (n_samples,) of ``dataset`` in ``track``."""
        spec = self.spec(track, dataset)
        key = json.dumps([thaw(spec.dataset.config), str(spec.paths.data_dir), str(spec.paths.mirror), spec.seed],
                         sort_keys=True, default=str)
        if key not in self.loaded:
            self.loaded[key] = load_dataset(thaw(spec.dataset.config), spec.paths.data_dir, spec.paths.mirror,
                                            spec.seed).y
        return self.loaded[key]

    def trials(self, track: str) -> Trials:
        """The track's trials (:class:`~.selection.Trials`), one instance per track, so a run's rounds rebuild
        each trial and score each cell once."""
        if track not in self.found:
            self.found[track] = Trials(functools.partial(self, track))
        return self.found[track]

    def fold_ks(self, track: str, dataset: str) -> list[int]:
        """The k of the track's protocol whose folds can score (:func:`.homes.scored_ks`)."""
        spec = self.spec(track, dataset)
        return scored_ks(self(track, dataset), thaw(spec.protocol.labels), spec.protocol.ks)


def contender_homes(contenders, grid_of: dict[str, Grid], tracks: list[str], datasets: list[str], out: Path,
                    config_dir: str | None, classes: TrackClasses):
    """The homes of the contenders' other settings and folds, under ``out/tuned/``."""
    by_name = {c.name: c for c in contenders}

    def overrides(grid: Grid, setting) -> list[str]:
        contender = by_name[grid.name]
        return method_overrides(replace(contender, label=grids.setting_label(grid, setting),
                                        params={**contender.params, **setting}), config_dir)
    return tuned_homes([(grid, datasets) for grid in grid_of.values()], tracks, datasets, Path(out), overrides,
                       classes.fold_ks)


def family_homes(tracks: list[str], datasets: list[str] | None, out: Path, classes: TrackClasses,
                 growth: Growth | None = None, only: list[str] | None = None):
    """The homes of the family's other settings and folds in ``tracks`` on ``datasets`` (default: each track's),
    each grid as ``growth`` has grown it (None: as declared, of the methods ``only`` names alone where given);
    a person's data set (``classes.given``) runs every grid but NTF's, which runs beside the benchmark's image
    data sets only."""
    declared = dict(growth.start) if growth is not None else family_grids(tracks, only)
    image = [d for d in track_datasets(tracks[0]) if d != "caltech101"]  # NTF: the image data sets (no grid)
    everywhere = [*track_datasets(tracks[0]), *classes.given]
    pairs = [(grid, image if name == "ntf" else everywhere) for name, grid in declared.items()]
    grid_at = None if growth is None else (lambda track, dataset, grid: growth.grid(track, dataset, grid.name))
    datasets = list(datasets or track_datasets(tracks[0]))
    classes.compose(tracks, datasets)
    return tuned_homes(pairs, tracks, datasets, Path(out),
                       fold_ks=classes.fold_ks, grid_at=grid_at, given=classes.given)


def tabulate(out: Path, tracks: list[str], grids: Growth, classes: TrackClasses,
             only: list[str] | None = None) -> dict[str, tuple]:
    """Assemble and write each track's tuned tables (:mod:`.tables`) from the cells under ``out``, each trial
    dealt from the data set's classes as the track reads them (``classes``), each method's grid as ``grids``
    has it on the data set (a contender's: a :class:`~.growth.Growth` that never stepped), of the estimators
    ``only`` names alone where given. Returns each track's (tuned rows, searched settings)."""
    found = {}
    for track in tracks:
        if not (Path(out) / track / "runs").is_dir():
            logger.info("tuned %s: no cells under %s, nothing to tune", track, Path(out) / track / "runs")
            continue
        trials = classes.trials(track)
        try:
            tuned, searched = tuned_track(Path(out), track, functools.partial(grids.find, track), trials, only)
        except FileNotFoundError as exc:
            raise ConfigError(f"--tune: {exc}") from None
        write(Path(out), track, tuned, searched)
        found[track] = tuned, searched
        logger.info("tuned %s: %d rows, %d settings searched (%s)", track, len(tuned), len(searched),
                    Path(out) / "tuned")
    return found


#: The growth's record under ``out/tuned/``: each grid as it grew, and the edge table (:meth:`.Growth.edges`).
GRIDS_FILE, EDGES_FILE = "grids.json", "edges.csv"


def grow(out: Path, tracks: list[str], datasets: list[str] | None, classes: TrackClasses,
         compute: Callable[[list, int, float], None] | None = None, only: list[str] | None = None) -> Growth:
    """The family's tuned run, round after round (:mod:`.growth`): ``compute(homes, round, later)`` fits the
    homes of the grids as they stand (None: read the cells on disk only), ``later`` the work the rounds after
    it are expected to add (:func:`later_work`, for the time left); the tables are written and the grids
    grow where the rule's choices pile; the rounds end when nothing grows. ``only`` (registry names) tunes
    those alone, the rest of the family as it ships (``--tune --methods``). The grids and the edge table are
    written under ``out/tuned/`` (:data:`GRIDS_FILE`, :data:`EDGES_FILE`)."""
    growth = Growth(family_grids(tracks, only), tuple(tracks))
    predicted = predicted_growth(tracks, datasets, only) if compute is not None else None
    first = None
    for round_number in itertools.count(1):
        if compute is not None:
            compute(family_homes(tracks, datasets, out, classes, growth), round_number,
                    later_work(predicted, growth, classes))
        tables = tabulate(out, tracks, growth, classes, only)
        choices = {track: tuned for track, (tuned, _) in tables.items()}
        first = choices if first is None else first
        added = growth.step(choices)
        if not added:
            break
        logger.info("tuned grids, round %d: %d grew (%s)", round_number, len(added),
                    "; ".join(f"{t} {d} {n} {p} -> {v:g}" for t, d, n, p, v in added))
    folder = Path(out) / TUNED_DIR
    folder.mkdir(parents=True, exist_ok=True)
    record = [{"track": track, "dataset": dataset, "estimator": name, "values": {p: list(v) for p, v in values.items()}}
              for (track, dataset, name), values in sorted(growth.grown.items())]
    write_atomic(folder / GRIDS_FILE, json.dumps({"grown": record}, indent=2) + "\n")
    if first:
        write_atomic(folder / EDGES_FILE, growth.edges(first, choices).to_csv(index=False))
    return growth


def predicted_growth(tracks: list[str], datasets: list[str] | None, only: list[str] | None = None) \
        -> Growth | None:
    """The grids a run of ``tracks`` on ``datasets`` is expected to grow to, before it knows: the growth of the
    shipped settings replayed (:func:`.growth.replay`, every round), or where only the tuned cells ship (the
    choices among the declared grids), each edge where they pile grown on to its bound (on Yale and ORL 9 of the
    14 edges that grew once grew again, to their bounds); None where nothing ships. Exact when the shipped cells were computed by the same
    code on the same data, a guess otherwise: it only prices the time left (:func:`later_work`). ``only``:
    the grids of the methods it names alone (:func:`grow`)."""
    start = family_grids(tracks, only)
    settings = shipped.load_settings()
    if settings is not None:
        settings = settings[settings["track"].isin(tracks) & (settings["dataset"].isin(datasets) if datasets
                                                              else True)]
        searched = {track: rows.drop(columns="track") for track, rows in settings.groupby("track")}
        return growth.replay(searched, start, tracks)[0] if searched else None
    tuned = shipped.load_tuned()
    if tuned is None:
        return None
    tuned = tuned[tuned["track"].isin(tracks) & (tuned["dataset"].isin(datasets) if datasets else True)]
    predicted = Growth(start, tuple(tracks))
    for track, dataset, name, param, value in predicted.step({track: rows for track, rows in tuned.groupby("track")}):
        # the later rounds are unknown: each edge that piles is expected to go on to its bound
        grid = predicted.grid(track, dataset, name)
        side = "low" if value < min(start[name].values[param]) else "high"
        while (beyond := growth.next_value(grid, param, side)) is not None:
            grid = grid.with_values({**grid.values, param: tuple(sorted((*grid.values[param], beyond)))})
        predicted.grown[track, dataset, name] = dict(grid.values)
    return predicted


def later_work(predicted: Growth | None, now: Growth, classes: TrackClasses) -> float:
    """The seconds of work of the cells the predicted grids hold beyond the grids as they stand (``now``):
    each new setting's cells (a method without labels once for every track) and a label method's folds,
    each priced like the cells of the edge it extends (the published costs, ``docs/results/cell_costs.csv``)."""
    if predicted is None:
        return 0.0
    costs, seconds, counted_once = published_costs(), 0.0, set()
    for (track, dataset, name), values in predicted.grown.items():
        grid, declared = now.grid(track, dataset, name), now.start[name]
        spec = classes.spec(track, dataset)
        for param, found in values.items():
            for value in found:
                if value in grid.values[param]:
                    continue
                edge = min(grid.values[param], key=lambda v: abs(math.log(v / value)))
                setting = {**declared.defaults, param: edge}
                label = safe_name(grids.setting_label(declared, setting))
                fixed = setting == dict(declared.defaults)
                runs = f"benchmark/{track}/runs" if fixed else f"benchmark/tuned/{track}/runs"
                if takes_labels(name) or (dataset, name, param, value) not in counted_once:
                    counted_once.add((dataset, name, param, value))
                    seconds += spec.protocol.n_trials * sum(costs.get((f"{runs}/{dataset}_{label}", k), 0.0)
                                                            for k in spec.protocol.ks)
                if takes_labels(name) and track in LABEL_TRACKS:
                    seconds += spec.protocol.n_trials * sum(
                        costs.get((f"benchmark/tuned/{track}/folds/{fold}/{dataset}_{label}", k), 0.0)
                        for fold in range(FOLDS) for k in classes.fold_ks(track, dataset))
    return seconds

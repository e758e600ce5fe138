"""The tuned benchmark: every method tuned alike, on the labels it may see (``python -m src.benchmark --tune``).

* :mod:`.grids`: the grids (declared in ``conf/method/``, or a contender's ``--grid``) and their settings;
* :mod:`.selection`: the rule that chooses a setting per trial, and the oracle;
* :mod:`.homes`: the cells the grids add to the benchmark's, and where they go;
* :mod:`.tables`: the tuned rows and the searched settings, assembled from the cells on disk.

The report's part is :mod:`src.presentation.tuning_report`; the manual's is ``docs/benchmark.md``
("Tuned alike").
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
from dataclasses import replace
from pathlib import Path

import numpy as np

from .. import methods
from ..data import load_dataset
from ..errors import ConfigError, UserError
from ..reproduction.contenders import Sweeps, method_overrides
from ..running import gate
from ..running.pool import plan_jobs
from ..running.settings import thaw
from . import grids
from .grids import Grid
from .homes import family_grids, scored_ks, track_datasets, tuned_homes
from .selection import Trials
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


class TrackClasses:
    """The data sets' classes as a track's cells read them, each data set loaded once (``overrides`` as the
    run's): the fold k of the homes, before the pool, and the trials of the tables, after it, share one
    instance, so a tuned run loads each data set once."""

    def __init__(self, overrides: list[str]):
        self.overrides = list(overrides)
        self.loaded: dict[str, np.ndarray] = {}
        self.specs: dict[tuple[str, str], object] = {}

    def spec(self, track: str, dataset: str):
        """The settings of the track's cells on ``dataset``, composed once (a Hydra composition each)."""
        if (track, dataset) not in self.specs:
            self.specs[track, dataset] = plan_jobs([Sweeps("classes", ((f"experiment=benchmark/{track}",
                                                                        f"dataset={dataset}", "method=kmeans"),))],
                                                   self.overrides)[0].spec
        return self.specs[track, dataset]

    def __call__(self, track: str, dataset: str) -> np.ndarray:
        """The classes (n_samples,) of ``dataset`` in ``track``."""
        spec = self.spec(track, dataset)
        key = json.dumps([thaw(spec.dataset.config), str(spec.paths.data_dir), str(spec.paths.mirror), spec.seed],
                         sort_keys=True, default=str)
        if key not in self.loaded:
            self.loaded[key] = load_dataset(thaw(spec.dataset.config), spec.paths.data_dir, spec.paths.mirror,
                                            spec.seed).y
        return self.loaded[key]

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


def family_homes(tracks: list[str], datasets: list[str] | None, out: Path, classes: TrackClasses):
    """The homes of the family's other settings and folds in ``tracks`` on ``datasets`` (default: each track's)."""
    declared = family_grids(tracks)
    image = [d for d in track_datasets(tracks[0]) if d != "caltech101"]  # NTF: the image data sets (no grid)
    pairs = [(grid, image if name == "ntf" else track_datasets(tracks[0])) for name, grid in declared.items()]
    return tuned_homes(pairs, tracks, list(datasets or track_datasets(tracks[0])), Path(out),
                       fold_ks=classes.fold_ks)


def tabulate(out: Path, tracks: list[str], grids: dict[str, Grid], classes: TrackClasses) -> list[Path]:
    """Assemble and write each track's tuned tables (:mod:`.tables`) from the cells under ``out``, each trial
    dealt from the data set's classes as the track reads them (``classes``)."""
    written = []
    for track in tracks:
        if not (Path(out) / track / "runs").is_dir():
            logger.info("tuned %s: no cells under %s, nothing to tune", track, Path(out) / track / "runs")
            continue
        trials = Trials(functools.partial(classes, track))
        try:
            tuned, searched = tuned_track(Path(out), track, grids, trials)
        except FileNotFoundError as exc:
            raise ConfigError(f"--tune: {exc}") from None
        written += write(Path(out), track, tuned, searched)
        logger.info("tuned %s: %d rows, %d settings searched (%s)", track, len(tuned), len(searched),
                    Path(out) / "tuned")
    return written

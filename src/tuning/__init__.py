"""The tuned benchmark: every method tuned alike, on the labels it may see (``python -m src.benchmark --tune``).

* :mod:`.grids`: the grids (declared in ``conf/method/``, or a contender's ``--grid``) and their settings;
* :mod:`.selection`: the rule that chooses a setting per trial, and the oracle;
* :mod:`.homes`: the cells the grids add to the benchmark's, and where they go;
* :mod:`.tables`: the tuned rows and the searched settings, assembled from the cells on disk.

The report's part is :mod:`src.presentation.tuning_report`; the manual's is ``docs/benchmark.md``
("Tuned alike").
"""

from __future__ import annotations

import inspect
import logging
from dataclasses import replace
from pathlib import Path

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
    """The grid ``--grid`` gives a contender (:func:`.grids.contender_grid`), each value passed through the
    gate (:func:`src.running.gate.check`) before any cell: a value the estimator refuses is one line."""
    cls = methods.estimator_class(contender.name)
    signature = inspect.signature(cls).parameters
    defaults = {name: p.default for name, p in signature.items() if p.default is not inspect.Parameter.empty}
    grid = grids.contender_grid(contender.name, contender.label, contender.params, values,
                                methods.parameter_names(cls), defaults)
    for param, options in grid.values.items():
        for value in options:
            try:
                gate.check(contender.name, {**contender.params, **grid.defaults, param: value}, seconds)
            except UserError as exc:
                raise ConfigError(f"--grid {param}={value!r}: {contender.label} refuses it ({exc})") from None
    return grid


def contender_homes(contenders, grid_of: dict[str, Grid], tracks: list[str], datasets: list[str], out: Path,
                    config_dir: str | None, run_overrides: list[str]):
    """The homes of the contenders' other settings and folds, under ``out/tuned/``."""
    by_name = {c.name: c for c in contenders}

    def overrides(grid: Grid, setting) -> list[str]:
        contender = by_name[grid.name]
        return method_overrides(replace(contender, label=grids.setting_label(grid, setting),
                                        params={**contender.params, **setting}), config_dir)
    return tuned_homes([(grid, datasets) for grid in grid_of.values()], tracks, datasets, Path(out), overrides,
                       fold_ks(run_overrides))


def family_homes(tracks: list[str], datasets: list[str] | None, out: Path, overrides: list[str]):
    """The homes of the family's other settings and folds in ``tracks`` on ``datasets`` (default: each track's)."""
    declared = family_grids(tracks)
    image = [d for d in track_datasets(tracks[0]) if d != "caltech101"]  # NTF: the image data sets (no grid)
    pairs = [(grid, image if name == "ntf" else track_datasets(tracks[0])) for name, grid in declared.items()]
    return tuned_homes(pairs, tracks, list(datasets or track_datasets(tracks[0])), Path(out),
                       fold_ks=fold_ks(overrides))


def fold_ks(overrides: list[str]):
    """``fold_ks(track, dataset)``: the k of the track's protocol (``overrides`` as the run's) whose folds can
    score (:func:`.homes.scored_ks`), from the data set's classes."""
    classes = {}

    def ks(track: str, dataset: str) -> list[int]:
        spec = plan_jobs([Sweeps("ks", ((f"experiment=benchmark/{track}", f"dataset={dataset}", "method=kmeans"),))],
                         overrides)[0].spec
        if dataset not in classes:
            classes[dataset] = load_dataset(thaw(spec.dataset.config), spec.paths.data_dir, spec.paths.mirror,
                                            spec.seed).y
        return scored_ks(classes[dataset], thaw(spec.protocol.labels), spec.protocol.ks)
    return ks


def classes_loader(track: str, overrides: list[str]):
    """A function giving a data set's classes (n_samples,) as the track's cells read them: the data set
    loaded once through the track's settings (``overrides`` as the run's)."""
    def classes(dataset: str):
        spec = plan_jobs([Sweeps("classes", ((f"experiment=benchmark/{track}", f"dataset={dataset}",
                                               "method=kmeans"),))], overrides)[0].spec
        return load_dataset(thaw(spec.dataset.config), spec.paths.data_dir, spec.paths.mirror, spec.seed).y
    return classes


def tabulate(out: Path, tracks: list[str], grids: dict[str, Grid], overrides: list[str],
             classes=None) -> list[Path]:
    """Assemble and write each track's tuned tables (:mod:`.tables`) from the cells under ``out``;
    ``classes`` (a data set's name -> its classes) defaults to loading the data set as the track does."""
    written = []
    for track in tracks:
        if not (Path(out) / track / "runs").is_dir():
            logger.info("tuned %s: no cells under %s, nothing to tune", track, Path(out) / track / "runs")
            continue
        trials = Trials(classes or classes_loader(track, overrides))
        try:
            tuned, searched = tuned_track(Path(out), track, grids, trials)
        except FileNotFoundError as exc:
            raise ConfigError(f"--tune: {exc}") from None
        written += write(Path(out), track, tuned, searched)
        logger.info("tuned %s: %d rows, %d settings searched (%s)", track, len(tuned), len(searched),
                    Path(out) / "tuned")
    return written

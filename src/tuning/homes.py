"""What ``python -m src.benchmark --tune`` computes beside the fixed-setting cells: the cells of every other
setting of each grid, and the folds' cells of the methods that take labels.

Under the benchmark's folder ``out`` (``outputs/benchmark``, or a contender's own):

* ``<track>/runs/``: the default setting's cells, the fixed-setting benchmark's own (reused, never
  recomputed);
* ``tuned/<track>/runs/``: the cells of every other setting, each method labelled with its setting
  (``GNMF(alpha=10.0)``, :func:`src.tuning.grids.setting_label`);
* ``tuned/<track>/folds/<f>/``: a label method's cells of every setting with fold f of the trial's labelled
  samples hidden (``protocol.labels.folds``, ``protocol.labels.fold``: :mod:`src.protocol.trials`), a
  method with nothing to tune included (its one setting), scored on the same held-out samples as every
  method (the benchmark's fold fits, :mod:`src.choice.fold_fits`, refit these folds with their partitions).

A method that takes no labels has the same cell in every track (one clustering serves them all: the pool
computes it once), so its grid costs its settings once, whichever tracks run.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import yaml

from ..config_dir import CONF_DIR
from ..protocol.cell import READOUTS
from ..protocol.trials import label_counts
from ..reproduction.contenders import LABEL_TRACKS, Sweeps, quoted
from ..reproduction.homes import TUNED_DIR
from .grids import Grid, family_grid, setting_label, setting_text, settings
from .selection import FOLDS, MIN_VALIDATION, takes_labels


#: The tuned cells' readouts: the label-free ones. The readouts by the labels are the fixed-setting cells'
#: (``make benchmark``); at every setting and fold of every grid they would cost what the benchmark's report
#: prices from the fixed cells, for numbers the tuning rule does not read.
TUNED_READOUTS = f"protocol.readouts=[{','.join(READOUTS)}]"


def experiment(track: str) -> dict:
    """The track's experiment config ``conf/experiment/benchmark/<track>.yaml`` as written."""
    return yaml.safe_load((Path(CONF_DIR) / "experiment" / "benchmark" / f"{track}.yaml").read_text())


def track_methods(track: str) -> list[str]:
    """The registry names the track's sweep runs (its experiment's ``hydra.sweeper.params.method``)."""
    return str(experiment(track)["hydra"]["sweeper"]["params"]["method"]).split(",")


def track_datasets(track: str) -> list[str]:
    """The data sets the track's sweep runs."""
    return str(experiment(track)["hydra"]["sweeper"]["params"]["dataset"]).split(",")


def family_grids(tracks, only=None) -> dict[str, Grid]:
    """The grid of every family method the tracks run, by registry name (the rows' ``estimator``), NTF's
    (image data sets only, its own sweep) included; ``only`` (registry names) keeps those alone
    (``python -m src.benchmark --tune --methods ...``)."""
    names = sorted({name for track in tracks for name in track_methods(track)} | {"ntf"})
    return {name: family_grid(name) for name in names if only is None or name in only}


def family_overrides(grid: Grid, setting) -> list[str]:
    """The overrides that run the family method of ``grid`` at ``setting``, labelled with it."""
    return [f"method={grid.name}", *(f"method.params.{p}={v}" for p, v in setting.items()),
            f"method.label={quoted(setting_label(grid, setting))}"]


def enters(grid: Grid, track: str) -> bool:
    """Whether the tuned benchmark searches the grid in ``track``: a label method in the label tracks, a
    method that takes no labels in every track (the unsupervised one: the oracle)."""
    return grid.tuned and (track in LABEL_TRACKS or not takes_labels(grid.name))


def scored_ks(class_labels: np.ndarray, scheme: dict, ks) -> list[int]:
    """The k of ``ks`` at which some trial can have every fold score
    :data:`~src.tuning.selection.MIN_VALIDATION` samples: the k classes with the most labelled samples under
    ``scheme`` (:func:`src.protocol.trials.label_counts`) deal at least that many into each of the
    :data:`~src.tuning.selection.FOLDS` folds. At any other k every trial keeps the default
    (too few to score), so its folds are not fitted."""
    sizes = np.unique(np.asarray(class_labels), return_counts=True)[1]
    counts = np.sort(label_counts(sizes, scheme))[::-1]
    return [k for k in ks if counts[:k].sum() // FOLDS >= MIN_VALIDATION]


def choosing(names: list[str], given: dict[str, list[str]] | None = None) -> list[tuple[str, ...]]:
    """The overrides that choose the data sets ``names``, one tuple per sweep: the benchmark's own in one
    ``dataset=a,b``, each of ``given`` (a person's file by its name: ``dataset=file``, its path, its k) in a
    sweep of its own, its overrides as given."""
    given = given or {}
    own = [name for name in names if name not in given]
    return ([(f"dataset={','.join(own)}",)] if own else []) + [tuple(given[name]) for name in names if name in given]


def tuned_homes(grids: list[tuple[Grid, list[str]]], tracks: list[str], datasets: list[str], out: Path,
                overrides: Callable[[Grid, dict], list[str]] = family_overrides,
                fold_ks: Callable[[str, str], list[int]] | None = None,
                grid_at: Callable[[str, str, Grid], Grid] | None = None,
                given: dict[str, list[str]] | None = None) -> list[Sweeps]:
    """One home per track: the sweeps of the grids' other settings and of their folds (module docstring).

    ``grids`` pairs each grid with the data sets it runs on (NTF: the image data sets), intersected with
    ``datasets``; ``overrides(grid, setting)`` names the method at a setting; ``fold_ks(track, dataset)``
    gives the k whose folds are fitted (:func:`scored_ks`; None: every k of the protocol); ``grid_at(track,
    dataset, grid)`` the grid as it has grown there (:class:`src.tuning.growth.Growth`; None: as declared);
    ``given`` a person's data sets by name, each with the overrides that choose it (:func:`choosing`).
    A setting runs in one sweep over every data set whose grid holds it (a person's file in its own).
    Each home declares its twins: a tuned fold's job fits the same method at the same setting on the same
    samples, a fold's labels hidden, so it is priced like that setting's tuned run, then like the track's own
    job of that name (a method with nothing to tune, or its default); a tuned run like the track's own job.
    """
    homes = []
    for track in tracks:
        sweeps = []
        runs, own = Path(out) / TUNED_DIR / track / "runs", Path(out) / track / "runs"
        fold_dirs = [Path(out) / TUNED_DIR / track / "folds" / str(fold) for fold in range(FOLDS)]
        twins = ((runs, (own,)), *((folder, (runs, own)) for folder in fold_dirs))
        for declared, where in grids:
            on = [d for d in where if d in datasets]
            folds = track in LABEL_TRACKS and takes_labels(declared.name)
            if not on or not (enters(declared, track) or folds):
                continue
            at = {d: declared if grid_at is None else grid_at(track, d, declared) for d in on}
            texts = {d: [setting_text(s) for s in settings(at[d])] for d in on}
            found = {setting_text(s): s for d in on for s in settings(at[d])}
            default = setting_text(declared.defaults)
            for text, setting in found.items():
                if text == default:
                    continue
                there = [d for d in on if text in texts[d]]
                sweeps += [(f"experiment=benchmark/{track}", *chosen, TUNED_READOUTS, *overrides(declared, setting),
                            f"hydra.sweep.dir={quoted(runs)}")
                           for chosen in choosing(there, given)]
            if not folds:
                continue
            for dataset in on:
                ks = None if fold_ks is None else fold_ks(track, dataset)
                if ks is not None and not ks:
                    continue
                where = (f"experiment=benchmark/{track}", *choosing([dataset], given)[0], TUNED_READOUTS,
                         *([f"protocol.ks=[{','.join(map(str, ks))}]"] if ks is not None else []))
                for setting in settings(at[dataset]):
                    for fold in range(FOLDS):
                        sweeps.append((*where, *overrides(declared, setting), f"++protocol.labels.folds={FOLDS}",
                                       f"++protocol.labels.fold={fold}",
                                       f"hydra.sweep.dir={quoted(fold_dirs[fold])}"))
        if sweeps:
            homes.append(Sweeps(f"tuned {track}", tuple(sweeps), twins=twins))
    return homes

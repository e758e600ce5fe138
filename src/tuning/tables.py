"""The tuned benchmark's tables, assembled from the cells on disk (:mod:`src.tuning.homes` says where).

Per track, two tables:

* the **tuned rows** (``tuned/<track>.csv``): one per (data set, method, k, trial), the method's cell at the
  setting the rule chose (:mod:`src.tuning.selection`; in the unsupervised track the oracle's), with
  ``setting``, ``selection``, ``validation_acc`` and ``n_validation``; a method with nothing to tune keeps
  its one cell;
* the **searched settings** (``tuned/<track>_settings.csv``): one per (data set, method, k, trial,
  setting) of a tuned method's grid (as grown: :mod:`src.tuning.growth`), the setting's scores on the test
  labels (:data:`CELL_COLUMNS`: AC, NMI and ARI of every sample and of the unlabelled ones, every label told
  as the track fits it; its iterations and whether it converged), on the samples that judge it
  (``validation_acc``, the mean over the folds, ``n_validation``, the fewest samples a fold scored, and each
  fold's, :data:`~src.tuning.selection.FOLD_COLUMNS`), and whether it was chosen: what the parameter figures
  and the expected best accuracy read, and all the rule reads, so the choices are re-derived from this table
  alone (:func:`src.tuning.selection.choose`; ``make results`` ships it, :mod:`src.reproduction.shipped`).
  In the label tracks a family method with nothing to tune has its one setting here too (``setting`` empty,
  read back as NaN; :func:`with_grid` leaves it out), scored on each fold's samples as every method is: what
  what the held-out AC of the benchmark's fold fits is checked against (:mod:`src.choice.fold_fits`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from ..files import write_atomic
from ..reproduction.contenders import LABEL_TRACKS
from ..reproduction.homes import TUNED_DIR
from ..reproduction.shipped import load_track
from .grids import Grid, setting_text
from .selection import (FOLD_COLUMNS, FOLDS, KEY, Trials, in_grid, oracle, select, takes_labels, untuned, validated,
                        with_settings)

#: The columns of a cell the searched-settings table keeps: its test scores (every sample, and the unlabelled
#: ones), its iterations and whether it converged.
CELL_COLUMNS = ("acc", "nmi", "ari", "acc_unlabelled", "nmi_unlabelled", "ari_unlabelled", "n_iter", "converged")
#: The columns of the searched-settings table.
SEARCHED = (*KEY, "estimator", "setting", "default", *CELL_COLUMNS, "validation_acc", "n_validation", *FOLD_COLUMNS,
            "chosen")


def read_cells(out: Path, track: str) -> tuple[pd.DataFrame | None, pd.DataFrame | None, pd.DataFrame | None]:
    """The track's fixed-setting rows, its other settings' rows and its folds' rows (a ``fold`` column),
    each None when none is on disk."""
    fixed = load_track(Path(out) / track / "runs")
    other = load_track(Path(out) / TUNED_DIR / track / "runs")
    folds = [frame.assign(fold=fold) for fold in range(FOLDS)
             if (frame := load_track(Path(out) / TUNED_DIR / track / "folds" / str(fold))) is not None]
    return fixed, other, (pd.concat(folds, ignore_index=True) if folds else None)


def tuned_track(out: Path, track: str, grid_of: Callable[[str, str], Grid | None], trials: Trials,
                only: list[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The tuned rows and the searched settings of ``track`` (module docstring) from the cells under ``out``;
    ``grid_of(dataset, estimator)`` gives the grid an estimator (the rows' ``estimator``) searches on a data
    set (grown there: :mod:`src.tuning.growth`), None for one without; ``only``: the estimators it names
    alone (the others' cells on disk are not read)."""
    fixed, other, folds = read_cells(out, track)
    if fixed is None:
        raise FileNotFoundError(f"no fixed-setting cells under {Path(out) / track / 'runs'}: the tuned "
                                "benchmark reads them as its default settings")
    if only is not None:
        fixed = fixed[fixed["estimator"].isin(only)]
        if fixed.empty:
            raise FileNotFoundError(f"no fixed-setting cells of {', '.join(only)} under {Path(out) / track / 'runs'}")
    tuned, searched = [], []
    for (estimator, dataset), rows in fixed.groupby(["estimator", "dataset"], sort=True):
        grid = grid_of(str(dataset), str(estimator))
        mine = (lambda frame: frame[(frame["estimator"] == estimator) & (frame["dataset"] == dataset)]
                if frame is not None else None)
        if grid is None or not grid.tuned:
            tuned.append(untuned(rows))
            if grid is not None and track in LABEL_TRACKS:  # its one setting, scored as every method is
                theirs = mine(folds)
                per = validated(theirs if takes_labels(grid.name) else rows, grid, trials)
                searched.append(searched_settings(rows, tuned[-1], grid, per))
            continue
        cells = pd.concat([rows, mine(other)], ignore_index=True) if other is not None else rows
        per = None
        if track in LABEL_TRACKS:
            theirs = mine(folds)
            per = validated(theirs if takes_labels(grid.name) else cells, grid, trials)
            chosen = select(cells, theirs, grid, trials, per)
        else:
            chosen = oracle(cells, grid)
        tuned.append(chosen)
        searched.append(searched_settings(cells, chosen, grid, per))
    return (pd.concat(tuned, ignore_index=True),
            pd.concat(searched, ignore_index=True) if searched else pd.DataFrame(columns=list(SEARCHED)))


def searched_settings(cells: pd.DataFrame, chosen: pd.DataFrame, grid: Grid, per: pd.DataFrame | None) \
        -> pd.DataFrame:
    """The searched-settings rows of one method (module docstring) over its grid's settings; ``per`` the
    settings' validation scores (:func:`src.tuning.selection.validated`), None in the unsupervised track."""
    cells = in_grid(with_settings(cells, grid), grid)
    table = cells[[*KEY, "estimator", "setting", *(c for c in CELL_COLUMNS if c in cells)]].copy()
    table["default"] = table["setting"] == setting_text(grid.defaults)
    if per is None:
        table["validation_acc"], table["n_validation"] = math.nan, 0
    else:
        table = table.merge(per, on=[*KEY, "setting"], how="left")
        table["n_validation"] = table["n_validation"].fillna(0).astype(int)
    picked = chosen[[*KEY, "setting"]].assign(chosen=True)
    table = table.merge(picked, on=[*KEY, "setting"], how="left")
    table["chosen"] = table["chosen"].fillna(False).astype(bool)
    for column in SEARCHED:
        if column not in table:
            table[column] = math.nan
    return table[list(SEARCHED)]


def with_grid(searched: pd.DataFrame) -> pd.DataFrame:
    """The searched settings of the methods with a grid to search (the rows of a method with nothing to tune
    left out: its setting is empty)."""
    return searched[searched["setting"].fillna("").astype(str) != ""]


def write(out: Path, track: str, tuned: pd.DataFrame, searched: pd.DataFrame) -> tuple[Path, Path]:
    """Write the track's two tables under ``out/tuned/`` (each file replaced whole)."""
    folder = Path(out) / TUNED_DIR
    folder.mkdir(parents=True, exist_ok=True)
    paths = folder / f"{track}.csv", folder / f"{track}_settings.csv"
    write_atomic(paths[0], tuned.to_csv(index=False))
    write_atomic(paths[1], searched.to_csv(index=False))
    return paths


def read(out: Path, track: str) -> tuple[pd.DataFrame, pd.DataFrame | None] | None:
    """The track's two tables as :func:`write` wrote them, or None; the searched settings None where only the
    tuned rows are on disk (a folder laid out from the shipped cells: :func:`src.reproduction.shipped.unpack`)."""
    folder = Path(out) / TUNED_DIR
    paths = folder / f"{track}.csv", folder / f"{track}_settings.csv"
    if not paths[0].is_file():
        return None
    return pd.read_csv(paths[0], low_memory=False), (pd.read_csv(paths[1]) if paths[1].is_file() else None)

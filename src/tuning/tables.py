"""The tuned benchmark's tables, assembled from the cells on disk (:mod:`src.tuning.homes` says where).

Per track, two tables:

* the **tuned rows** (``tuned/<track>.csv``): one per (data set, method, k, trial), the method's cell at the
  setting the rule chose (:mod:`src.tuning.selection`; in the unsupervised track the oracle's), with
  ``setting``, ``selection``, ``validation_acc`` and ``n_validation``; a method with nothing to tune keeps
  its one cell;
* the **searched settings** (``tuned/<track>_settings.csv``): one per (data set, method, k, trial,
  setting) of a tuned method, the setting's scores on the test labels (``acc``, ``nmi``, every label told
  as the track fits it) and on the samples that judge it (``validation_acc``, ``n_validation``), and
  whether it was chosen: what the parameter figures and the expected best accuracy read.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from ..files import write_atomic
from ..reproduction.contenders import LABEL_TRACKS
from ..reproduction.shipped import load_track
from .grids import Grid, setting_text
from .selection import FOLDS, KEY, Trials, oracle, select, takes_labels, untuned, validated, with_settings

TUNED_DIR = "tuned"
#: The columns of the searched-settings table.
SEARCHED = (*KEY, "setting", "default", "acc", "nmi", "validation_acc", "n_validation", "chosen")


def read_cells(out: Path, track: str) -> tuple[pd.DataFrame | None, pd.DataFrame | None, pd.DataFrame | None]:
    """The track's fixed-setting rows, its other settings' rows and its folds' rows (a ``fold`` column),
    each None when none is on disk."""
    fixed = load_track(Path(out) / track / "runs")
    other = load_track(Path(out) / TUNED_DIR / track / "runs")
    folds = [frame.assign(fold=fold) for fold in range(FOLDS)
             if (frame := load_track(Path(out) / TUNED_DIR / track / "folds" / str(fold))) is not None]
    return fixed, other, (pd.concat(folds, ignore_index=True) if folds else None)


def tuned_track(out: Path, track: str, grids: dict[str, Grid], trials: Trials) \
        -> tuple[pd.DataFrame, pd.DataFrame]:
    """The tuned rows and the searched settings of ``track`` (module docstring) from the cells under ``out``;
    ``grids`` maps an estimator (the rows' ``estimator``) to its grid."""
    fixed, other, folds = read_cells(out, track)
    if fixed is None:
        raise FileNotFoundError(f"no fixed-setting cells under {Path(out) / track / 'runs'}: the tuned "
                                "benchmark reads them as its default settings")
    tuned, searched = [], []
    for estimator, rows in fixed.groupby("estimator", sort=True):
        grid = grids.get(str(estimator))
        if grid is None or not grid.tuned:
            tuned.append(untuned(rows))
            continue
        cells = pd.concat([rows, other[other["estimator"] == estimator]] if other is not None else [rows],
                          ignore_index=True)
        cells = cells[cells["dataset"].isin(rows["dataset"].unique())]
        per = None
        if track in LABEL_TRACKS:
            theirs = folds[folds["estimator"] == estimator] if folds is not None else None
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
    """The searched-settings rows of one method (module docstring); ``per`` the settings' validation scores
    (:func:`src.tuning.selection.validated`), None in the unsupervised track."""
    cells = with_settings(cells, grid)
    table = cells[[*KEY, "setting", "acc", "nmi"]].copy()
    table["default"] = table["setting"] == setting_text(grid.defaults)
    if per is None:
        table["validation_acc"], table["n_validation"] = math.nan, 0
    else:
        table = table.merge(per, on=[*KEY, "setting"], how="left")
        table["n_validation"] = table["n_validation"].fillna(0).astype(int)
    picked = chosen[[*KEY, "setting"]].assign(chosen=True)
    table = table.merge(picked, on=[*KEY, "setting"], how="left")
    table["chosen"] = table["chosen"].fillna(False).astype(bool)
    return table[list(SEARCHED)]


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

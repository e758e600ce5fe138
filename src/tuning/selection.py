"""The rule that chooses a method's setting per trial, on the labels the method may see, in one place.

Per (data set, method, k, trial) of a track, among the settings of the method's grid
(:func:`src.tuning.grids.settings`), each fitted on the trial:

* **a method that takes no labels, in a label track**, is fitted once per setting, without labels (the
  cell the unsupervised track computes: one clustering serves every track). Each setting's clustering is
  scored on the trial's labelled samples, whose classes the track gives; the best scores chooses.
* **a method that takes labels** is cross-validated over the trial's labelled samples: they are dealt into
  :data:`FOLDS` folds (stratified by class, :func:`src.protocol.trials.fold_of`); per fold it is fitted
  with the other folds' labels and scored on the fold's samples, which it was not told; a setting's score is
  the mean over the folds. The chosen setting's cell with every label, as the track fits it, is the result.
* **ties** (two settings or more at the best score) keep the default, and so does a trial with fewer
  than :data:`MIN_VALIDATION` samples to score (in any fold), where the accuracy takes too few values to
  separate settings: the selection says which (:data:`REASONS`).
* **the unsupervised track** gives no label, so nothing is chosen: the default stands. Beside it the
  **oracle** (:func:`oracle`) chooses, per trial, the setting with the best accuracy on every sample, the
  test labels: a ceiling of what tuning could buy, never a result.

The score is the clustering accuracy (AC, the best one-to-one map of clusters to classes) on the scored
samples alone, as :func:`src.protocol.metrics.accuracy` computes it on any subset. The chosen setting
depends on nothing but the labels the track gives (tested: changing the classes of the unlabelled samples
leaves every choice as it is).

The rows here are a track's rows (:func:`src.reproduction.shipped.load_track`): ``method`` the
short name, ``params`` the parameters as JSON, ``partition`` the clustering. A row's trial is rebuilt from
its data set's classes, its seed and its label scheme (:func:`src.protocol.trials.make_trial`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

from .. import methods
from ..methods.core.validation import UNLABELLED
from ..protocol.metrics import accuracy
from ..protocol.partition import decode
from ..protocol.trials import make_trial
from .grids import Grid, setting_of, setting_text, settings

#: Folds of the cross-validation of a method that takes labels: two, the fewest that are cross-validation,
#: so each fold scores as many samples as can be (half the labelled ones) and a trial costs two fits a setting.
FOLDS = 2
#: The fewest samples a score may read: below five the accuracy takes at most five values and ties decide.
MIN_VALIDATION = 5
#: What chose each tuned row's setting (its ``selection`` column).
REASONS = {
    "labelled": "best on the trial's labelled samples",
    "cross-validated": "best over the folds of the trial's labelled samples",
    "tie": "a tie at the best score: the default kept",
    "too few": f"fewer than {MIN_VALIDATION} samples to score: the default kept",
    "oracle": "best on the test labels (every sample): the oracle, a ceiling, not a result",
    "nothing to tune": "the method has no parameter to tune",
}
#: A row's label scheme is read from these columns (``protocol_labels_<key>``).
LABEL_KEYS = ("mode", "fraction", "per_class", "folds", "fold")


def label_scheme(row: Mapping) -> dict:
    """The label scheme a row's trial was drawn with, from its ``protocol_labels_*`` columns."""
    scheme = {}
    for key in LABEL_KEYS:
        value = row.get(f"protocol_labels_{key}")
        if value is not None and not (isinstance(value, float) and math.isnan(value)):
            scheme[key] = int(value) if key in ("per_class", "folds", "fold") else value
    return scheme


class Trials:
    """The trials of rows, rebuilt once each: ``classes(dataset)`` gives a data set's classes (n_samples,).
    A clustering's scores on a trial's samples are kept too (:meth:`score`), so the tables of a run in rounds
    score each cell once (:func:`src.tuning.grow` keeps one instance per track across its rounds)."""

    def __init__(self, classes: Callable[[str], np.ndarray]):
        self._classes, self._y, self._trials, self._scores = classes, {}, {}, {}

    def of(self, dataset: str, k: int, trial: int, seed: int, scheme: Mapping):
        key = (dataset, int(k), int(trial), int(seed), tuple(sorted(scheme.items())))
        if key not in self._trials:
            if dataset not in self._y:
                self._y[dataset] = np.asarray(self._classes(dataset))
            self._trials[key] = make_trial(self._y[dataset], dataset, int(k), int(trial), int(seed), scheme)
        return self._trials[key]

    def score(self, how: Callable[[Mapping, "Trials"], object], row: Mapping):
        """``how(row, self)`` (:func:`validation`, :func:`fold_scores`), computed once per row's trial, label
        scheme and partition."""
        key = (how.__name__, row["dataset"], int(row["k"]), int(row["trial"]), int(row["seed"]),
               tuple(sorted(label_scheme(row).items())), row["partition"])
        if key not in self._scores:
            self._scores[key] = how(row, self)
        return self._scores[key]


def validation(row: Mapping, trials: Trials) -> tuple[float, int]:
    """The row's score on the samples that judge it, and how many there are: for a fold's cell, the fold's
    labelled samples, which the method was not told; for any other cell, the trial's labelled samples (the
    rule applies it to methods that take no labels). NaN and 0 where the trial labels none."""
    scheme = label_scheme(row)
    if scheme.get("mode", "none") == "none":
        return math.nan, 0
    told = trials.of(row["dataset"], row["k"], row["trial"], row["seed"], scheme)
    if "folds" in scheme:
        full = trials.of(row["dataset"], row["k"], row["trial"], row["seed"],
                         {key: value for key, value in scheme.items() if key not in ("folds", "fold")})
        samples = (full.y_partial != UNLABELLED) & (told.y_partial == UNLABELLED)
    else:
        full, samples = told, told.y_partial != UNLABELLED
    n = int(samples.sum())
    if n == 0:
        return math.nan, 0
    return float(accuracy(full.y_true[samples], decode(row["partition"])[samples])), n


def fold_scores(row: Mapping, trials: Trials) -> list[float]:
    """A clustering's score on each fold's samples (the folds a label method is cross-validated on) and how
    many there are, as ``[acc_0, n_0, acc_1, n_1, ...]``: for a method that takes no labels, the scores a
    choice among every method reads on the same held-out samples as a label method's (not the rule's own,
    which reads every labelled sample). NaN and 0 where the trial labels none."""
    scheme = label_scheme(row)
    if scheme.get("mode", "none") == "none":
        return [math.nan, 0] * FOLDS
    full = trials.of(row["dataset"], row["k"], row["trial"], row["seed"], scheme)
    predicted = decode(row["partition"])
    out = []
    for fold in range(FOLDS):
        told = trials.of(row["dataset"], row["k"], row["trial"], row["seed"], {**scheme, "folds": FOLDS, "fold": fold})
        samples = (full.y_partial != UNLABELLED) & (told.y_partial == UNLABELLED)
        n = int(samples.sum())
        out += [float(accuracy(full.y_true[samples], predicted[samples])) if n else math.nan, n]
    return out


KEY = ["dataset", "method", "k", "trial"]


def takes_labels(estimator: str) -> bool:
    """Whether the estimator (registry name or import path) is told the labelled samples."""
    return bool(getattr(methods.estimator_class(estimator), "needs_labels", False))


#: The per-fold columns of a label method's scores: ``validation_acc_fold<f>`` and ``n_validation_fold<f>``.
FOLD_COLUMNS = tuple(f"{name}_fold{fold}" for fold in range(FOLDS) for name in ("validation_acc", "n_validation"))


def validated(judged: pd.DataFrame | None, grid: Grid, trials: Trials) -> pd.DataFrame:
    """Per (data set, method, k, trial, setting) of the rows that judge a setting (a label method's fold
    cells, another method's cells), its score (``validation_acc``: the mean over the folds) and the fewest
    samples a score read (``n_validation``), and each fold's (:data:`FOLD_COLUMNS`: a label method's fold
    cells, or a method without labels scored on each fold's samples, :func:`fold_scores`); empty when no row
    judges (a label method without folds)."""
    if judged is None or judged.empty:
        return pd.DataFrame(columns=[*KEY, "setting", "validation_acc", "n_validation"])
    judged = with_settings(judged, grid).reset_index(drop=True)
    records = judged.to_dict("records")
    scored = pd.DataFrame([trials.score(validation, row) for row in records], columns=["acc", "n"])
    judged = judged.assign(validation_acc=scored["acc"], n_validation=scored["n"])
    per = judged.groupby([*KEY, "setting"]).agg(validation_acc=("validation_acc", "mean"),
                                                 n_validation=("n_validation", "min")).reset_index()
    if "fold" not in judged:  # a method without labels: its clustering on each fold's samples too
        folds = pd.DataFrame([trials.score(fold_scores, row) for row in records], columns=list(FOLD_COLUMNS))
        return per.merge(pd.concat([judged[[*KEY, "setting"]], folds], axis=1).drop_duplicates([*KEY, "setting"]),
                         on=[*KEY, "setting"], how="left")
    folds = judged.pivot_table(index=[*KEY, "setting"], columns="fold", values=["validation_acc", "n_validation"],
                               aggfunc="first")
    folds.columns = [f"{name}_fold{int(fold)}" for name, fold in folds.columns]
    return per.merge(folds.reset_index(), on=[*KEY, "setting"], how="left")


def choose(per: pd.DataFrame, default: str, score: str = "validation_acc") -> pd.DataFrame:
    """The rule's choice per (data set, method, k, trial) from its settings' scores alone: ``per`` holds one
    row per setting (``setting``, the ``score`` column, ``n_validation``); returns one row per trial, in
    order, with the chosen ``setting`` and ``selection`` (None where the score chose; "tie" or "too few"
    where the default stands: a tie at the best score, a missing score, or a trial whose fewest samples scored
    are fewer than :data:`MIN_VALIDATION`). What the run chooses
    from its cells, and what the shipped settings file (:mod:`src.tuning.tables`) re-derives without them."""
    if per.empty:
        return pd.DataFrame(columns=[*KEY, "setting", "selection"])
    per = per.reset_index(drop=True)
    values = per[score].astype(float)
    top = (values - values.groupby([per[c] for c in KEY]).transform("max")).abs() <= 1e-12  # NaN: not at the top
    counts = per["n_validation"] if score == "validation_acc" else pd.Series(MIN_VALIDATION, index=per.index)
    trials = per[KEY].assign(top=top, missing=values.isna(), n=counts).groupby(KEY, sort=True) \
        .agg(top=("top", "sum"), missing=("missing", "any"), n=("n", "min")).reset_index()
    best = per.loc[top, [*KEY, "setting"]].drop_duplicates(KEY)
    out = trials.merge(best, on=KEY, how="left")
    why = np.where(out["missing"] | (out["n"] < MIN_VALIDATION), "too few", np.where(out["top"] > 1, "tie", ""))
    out["selection"] = pd.Series(why, index=out.index, dtype=object).replace("", None)
    out["setting"] = out["setting"].where(out["selection"].isna(), default)
    return out[[*KEY, "setting", "selection"]]


def with_settings(rows: pd.DataFrame, grid: Grid) -> pd.DataFrame:
    """``rows`` of one method with their setting's text (``setting``) read from ``params``."""
    return rows.assign(setting=rows["params"].map(lambda text: setting_of(text, grid)))


def in_grid(rows: pd.DataFrame, grid: Grid) -> pd.DataFrame:
    """The rows (with ``setting``) whose setting the grid searches: cells of another grid's settings (a grid
    grown elsewhere, an earlier run's) stay out of the choice."""
    return rows[rows["setting"].isin({setting_text(found) for found in settings(grid)})]


def picked_cells(cells: pd.DataFrame, picked: pd.DataFrame, default: str) -> pd.DataFrame:
    """Per trial of ``cells`` (with ``setting``), its first cell at the setting ``picked`` chose
    (:func:`choose`), with ``selection``; a trial without a choice, or whose chosen cell is missing, keeps the
    default's cell ("too few")."""
    cells = cells.reset_index(drop=True)
    plan = cells[KEY].drop_duplicates().merge(picked, on=KEY, how="left").sort_values(KEY, kind="stable")
    found = pd.MultiIndex.from_frame(cells[[*KEY, "setting"]])
    missing = ~pd.MultiIndex.from_frame(plan[[*KEY, "setting"]].astype({"setting": object})).isin(found)
    plan.loc[missing, ["setting", "selection"]] = [default, "too few"]
    first = cells.drop_duplicates([*KEY, "setting"])
    return plan[[*KEY, "setting", "selection"]].merge(first, on=[*KEY, "setting"], how="inner", sort=False)


def select(cells: pd.DataFrame, folds: pd.DataFrame | None, grid: Grid, trials: Trials,
           per: pd.DataFrame | None = None) -> pd.DataFrame:
    """The tuned rows of one method in a label track: per (data set, k, trial), its cell at the setting the
    rule chooses among the grid's (module docstring, :func:`choose`), with ``setting``, ``default_setting``,
    ``selection`` (a key of :data:`REASONS`), ``validation_acc`` (the chosen setting's score, NaN when none was
    read) and ``n_validation``.

    ``cells`` holds the method's cells of the track, one per setting and trial (every label told, as the
    track fits them); ``folds`` its fold cells (a ``fold`` column), for a method that takes labels, else None;
    ``per``, when given, the settings' scores :func:`validated` computed from them.
    """
    cells = in_grid(with_settings(cells, grid), grid)
    default = setting_text(grid.defaults)
    cross = takes_labels(str(cells["estimator"].iloc[0]))
    per = in_grid(validated(folds if cross else cells, grid, trials) if per is None else per, grid)
    chosen = picked_cells(cells, choose(per, default), default)
    scores = per[[*KEY, "setting", "validation_acc", "n_validation"]].drop_duplicates([*KEY, "setting"])
    chosen = chosen.merge(scores, on=[*KEY, "setting"], how="left")
    chosen["n_validation"] = chosen["n_validation"].fillna(0).astype(int)
    chosen["selection"] = chosen["selection"].where(chosen["selection"].map(lambda why: isinstance(why, str)),
                                                    "cross-validated" if cross else "labelled")
    return ordered(chosen, cells.columns, default)


def ordered(chosen: pd.DataFrame, columns, default: str) -> pd.DataFrame:
    """The tuned rows with ``default_setting``, in a cell's column order then the selection's."""
    chosen = chosen.assign(default_setting=default)
    return chosen[[*columns, "default_setting", "selection", "validation_acc", "n_validation"]]


def oracle(cells: pd.DataFrame, grid: Grid) -> pd.DataFrame:
    """The oracle rows of one method in the unsupervised track: per trial, its cell at the setting of the
    grid with the best accuracy on every sample (ties keep the default). A ceiling, named oracle wherever it
    appears."""
    cells = in_grid(with_settings(cells, grid), grid)
    default = setting_text(grid.defaults)
    chosen = picked_cells(cells, choose(cells[[*KEY, "setting", "acc"]], default, score="acc"), default)
    chosen["selection"] = chosen["selection"].where(chosen["selection"].map(lambda why: isinstance(why, str)),
                                                    "oracle")
    chosen["validation_acc"] = chosen["acc"]
    chosen["n_validation"] = (chosen["n_samples"].fillna(0).astype(int) if "n_samples" in chosen else 0)
    return ordered(chosen, cells.columns, default)


def untuned(cells: pd.DataFrame) -> pd.DataFrame:
    """The rows of a method with nothing to tune, as tuned rows: its one setting, said so."""
    return cells.assign(setting="", default_setting="", selection="nothing to tune", validation_acc=math.nan,
                        n_validation=0)

"""The benchmark's choice entrants by the rule of :mod:`.rule`, recomputed from the shipped files alone.

Per trial of a label track (a data set, k and trial), from the fold fits (:mod:`.fold_fits`):

* **the candidates** are every (method, setting) of the settings file with each of its readouts
  (:func:`src.choice.readouts.readouts_of`), the references among them; ``Choice (label-free)`` keeps the
  clusters of the methods that take no labels (COBS's setting: the labels only choose and name the clusters);
* **the score** of a candidate is, per known sample of the trial, whether its class came back right from the
  fit told the other fold's labels only (:func:`correct`), the same measure for every kind of candidate;
* **the prior** is the shipped fixed-setting cells' order by the classes given back (:func:`.prior.order`)
  over the track's *other* data sets (leave one data set out), at each method's default setting;
* **the rule** (:func:`.rule.choose`) keeps the prior's candidate unless a one-sided Wilcoxon test over the
  known samples, Bonferroni-corrected over the candidates, finds another better (its p by the normal
  approximation with scipy's tie correction: the permutation test that ``python -m src.cluster`` runs on one
  file would take hours over the benchmark's trials).

The chosen candidate's fit told every label gives the entrant's numbers: AC on every sample and the classes
given back to the unknown ones (:func:`test_scores`). Where the tuned run fitted no folds (a k at which a fold
cannot hold :data:`~src.tuning.selection.MIN_VALIDATION` samples), the rule has no evidence and the prior's
candidate stands, scored by its shipped fixed-setting cell. Beside each entrant the **oracle** of the same
pool (the candidate with the best classes given back on the test labels) prices the regret.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..methods.core.validation import UNLABELLED
from ..protocol.metrics import accuracy
from ..protocol.partition import class_of_clusters
from ..protocol.trials import make_trial
from ..tuning.selection import FOLDS, takes_labels
from . import prior as prior_module
from . import rule
from .fold_fits import ALL, classes_of, scheme_of
from .readouts import OWN, candidate_name, readouts_of

#: The entrants and whether their pool is label-free only.
ENTRANTS = {"Choice": False, "Choice (label-free)": True}
#: The shipped cells' columns of each readout's AC and classes given back (a fixed-setting cell's).
CELL_COLUMNS = {"clusters": ("acc", "given_unlabelled"), OWN: ("acc", "given_unlabelled"),
                "nearest_labelled": ("acc_nearest_labelled", "given_nearest_labelled"),
                "spread_labelled": ("acc_spread_labelled", "given_spread_labelled")}


def classes_by(row, readout: str, y_told: np.ndarray) -> np.ndarray:
    """The class of every sample (n_samples,) a fold-fit row gives by ``readout``, from ``y_told`` alone: its
    clusters mapped by the told labels (a reference's own classes map to themselves), or a classifier's."""
    if readout in ("clusters", OWN):
        clusters = classes_of(row["partition"])
        return class_of_clusters(clusters, y_told)[clusters]
    return classes_of(row[readout])


@dataclass(frozen=True)
class Candidate:
    """One candidate of a trial: a method at a setting, with a readout."""

    method: str
    estimator: str
    setting: str
    readout: str

    @property
    def name(self) -> str:
        return candidate_name(self.method, "clusters" if self.readout == OWN else self.readout)


def candidates_of(rows: pd.DataFrame, label_free: bool) -> list[Candidate]:
    """The candidates of one trial's fold-fit rows, in the rows' order of methods and settings."""
    found = []
    for (method, estimator, setting), _ in rows.groupby(["method", "estimator", "setting"], sort=True):
        if label_free and takes_labels(estimator):
            continue
        readouts = ("clusters",) if label_free and readouts_of(estimator) != (OWN,) else readouts_of(estimator)
        if label_free and readouts == (OWN,):
            continue  # a reference is no label-free method
        found += [Candidate(method, estimator, setting, r) for r in readouts]
    return found


def correct(rows: pd.DataFrame, candidates: Sequence[Candidate], full, folds: Sequence) -> np.ndarray:
    """Candidates x known samples of the trial (``full``): 1 where the candidate's fit told the other fold's
    labels gives the sample its right class, 0 where not, NaN where its fold fit is missing. ``folds``: the
    trial told each fold's complement (``src.choice.fold_fits.scheme_of``)."""
    known = np.flatnonzero(full.y_partial != UNLABELLED)
    where = {key: row for key, row in zip(zip(rows["estimator"], rows["setting"], rows["fold"]),
                                          rows.to_dict("records"))}
    out = np.full((len(candidates), known.size), np.nan)
    for fold, told in enumerate(folds):
        held = told.y_partial[known] == UNLABELLED
        for i, c in enumerate(candidates):
            row = where.get((c.estimator, c.setting, fold))
            if row is not None:
                out[i, held] = classes_by(row, c.readout, told.y_partial)[known[held]] == full.y_true[known[held]]
    return out


def test_scores(rows: pd.DataFrame, candidate: Candidate, full) -> tuple[float, float]:
    """A candidate's AC on every sample and its classes given back to the unknown ones, from its fit told
    every label (NaN, NaN where that fit is missing)."""
    found = rows[(rows["estimator"] == candidate.estimator) & (rows["setting"] == candidate.setting)
                 & (rows["fold"] == ALL)]
    if found.empty:
        return np.nan, np.nan
    row = found.iloc[0]
    given = classes_by(row, candidate.readout, full.y_partial)
    assigned = classes_of(row["partition"]) if candidate.readout in ("clusters", OWN) else given
    free = full.y_partial == UNLABELLED
    return float(accuracy(full.y_true, assigned)), float(np.mean(given[free] == full.y_true[free]))


def prior_order(cells: pd.DataFrame, track: str, dataset: str, label_free: bool) -> list[str]:
    """The prior's candidate names for ``dataset``: :func:`.prior.order` of the track's shipped cells on the
    other data sets (for the label-free entrant: the clusters of methods that take no labels)."""
    others = cells[(cells["track"] == track) & (cells["dataset"] != dataset)]
    if label_free:
        free = {e: not takes_labels(e) and readouts_of(e) != (OWN,) for e in others["estimator"].unique()}
        others = others[others["estimator"].map(free)][[c for c in others if c not in
                                                        ("given_nearest_labelled", "given_spread_labelled")]]
    return prior_module.order(others)


def defaults(settings: pd.DataFrame) -> dict[str, str]:
    """Each estimator's default setting text in the settings file."""
    rows = settings[settings["default"].astype(str).str.lower() == "true"]
    return rows.groupby("estimator")["setting"].first().fillna("").astype(str).to_dict()


def choose_trials(fits: pd.DataFrame, cells: pd.DataFrame, settings: pd.DataFrame, y: np.ndarray, specs: dict,
                  alphas: Sequence[float] = (rule.ALPHA,), entrant: str = "Choice") -> pd.DataFrame:
    """The entrant's row for every trial of the label tracks of ``cells`` (the shipped cells, every data set:
    the prior reads the others) on the data set of ``fits`` (its fold fits, :func:`src.choice.fold_fits.load`),
    at each level of ``alphas`` (an ``alpha`` column): what was chosen, why, its test scores, and the oracle's
    classes given back beside it. ``specs``: each track's settings (:func:`src.choice.fold_fits.schemes`); ``y``: the data
    set's classes. The candidates are scored once a trial, whatever the number of levels."""
    label_free = ENTRANTS[entrant]
    dataset = str(fits["dataset"].iloc[0])
    default_of = defaults(settings)
    out = []
    for track, spec in specs.items():
        names = prior_order(cells, track, dataset, label_free)
        blocks = cells[(cells["track"] == track) & (cells["dataset"] == dataset)]
        by_trial = {key: rows for key, rows in fits[fits["track"] == track].groupby(["k", "trial"])}
        for (k, number), cell_rows in blocks.groupby(["k", "trial"], sort=True):
            rows = by_trial.get((k, number))
            if rows is None:  # no folds at this k: the prior's candidate at its fixed setting
                found = prior_row(cell_rows, names, track, dataset, k, number)
                out += [{**found, "alpha": alpha} for alpha in alphas]
                continue
            full = make_trial(y, dataset, int(k), int(number), spec.seed, scheme_of(spec, ALL))
            folds = [make_trial(y, dataset, int(k), int(number), spec.seed, scheme_of(spec, f)) for f in range(FOLDS)]
            candidates = candidates_of(rows, label_free)
            right = correct(rows, candidates, full, folds)
            position = {c.name: i for i, c in enumerate(candidates) if c.setting == default_of.get(c.estimator, "")}
            order = [position[n] for n in names if n in position]
            tests = [test_scores(rows, c, full) for c in candidates]
            best = int(np.nanargmax([g for _, g in tests]))
            for alpha in alphas:
                picked = rule.choose(right, order, alpha, method="approx")
                chosen = candidates[picked.index]
                acc, given = tests[picked.index]
                out.append({"track": track, "dataset": dataset, "k": int(k), "trial": int(number),
                            "chosen": chosen.name, "chosen_method": chosen.method, "setting": chosen.setting,
                            "readout": chosen.readout, "selection": picked.why,
                            "prior": candidates[picked.start].name, "acc": acc, "given": given,
                            "estimate": float(np.nanmean(right[picked.index])),
                            "oracle": candidates[best].name, "oracle_given": tests[best][1],
                            "n_candidates": len(candidates), "n_known": right.shape[1], "alpha": alpha})
    return pd.DataFrame(out)


def prior_row(cell_rows: pd.DataFrame, names: Sequence[str], track: str, dataset: str, k: int, number: int) -> dict:
    """The entrant's row of a trial without folds: the prior's first candidate, scored by its shipped cell."""
    for name in names:
        for _, row in cell_rows.iterrows():
            for readout, (acc, given) in CELL_COLUMNS.items():
                if readout == OWN or candidate_name(row["method"], readout) != name or pd.isna(row.get(given)):
                    continue
                return {"track": track, "dataset": dataset, "k": int(k), "trial": int(number), "chosen": name,
                        "chosen_method": row["method"], "setting": "", "readout": readout,
                        "selection": "no folds: prior", "prior": name, "acc": float(row[acc]),
                        "given": float(row[given]), "estimate": np.nan, "oracle": "", "oracle_given": np.nan,
                        "n_candidates": 0, "n_known": 0}
    raise ValueError(f"{track} {dataset} k={k} trial {number}: no shipped cell of the prior's candidates")

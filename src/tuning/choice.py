"""The choice among every method of the family, per trial, on the trial's labelled samples only.

:mod:`.selection` chooses one method's setting; this module chooses the method too. Per trial of a label
track (a data set, k and trial: the same classes, labels and starts for every method):

* **the candidates** are every (method, setting) of the track's settings table (:mod:`src.tuning.tables`): each tuned
  method at every setting of its grid as it grew, each method with nothing to tune at its one setting;
* **the score** of a candidate is its mean AC over the :data:`~.selection.FOLDS` folds of the trial's labelled
  samples, each fold's samples scored apart (``validation_acc_fold<f>``): a method that takes labels fitted
  without that fold's labels, a method that takes none (it saw no label) its one clustering, scored on the
  same samples. One measure on the same samples for every candidate, which is what makes a label method and a
  label-free one comparable (Pourrajabi et al. 2014 cross-validate semi-supervised clusterings over the
  given labels; Van Craenendonck and Blockeel 2017, COBS, choose among unsupervised ones with them). A
  candidate without a score (its folds were not fitted, or failed) is no candidate;
* **the choice** is the candidate with the best score. Where the fold samples are too few to score
  (fewer than :data:`~.selection.MIN_VALIDATION` in a fold, as for one method's setting), the **prior**
  chooses: its first method at the setting that method's own rule chose ("too few: prior"). Where several
  candidates share the best score, the prior breaks the tie among them: the tied candidate of the method the
  prior places first, at its own rule's setting if that one is tied, else its default if tied, else its
  first tied setting in the table ("tie: prior"). No paper gives this order; a tie is kept among the
  candidates the labels cannot separate, rather than returning to a method the labels scored lower;
* **the prior** is an order of methods that reads no test label of the data at hand: inside the benchmark,
  the track's tuned ranking over the other data sets (:func:`leave_one_out`, leave one data set out);
  on a person's file, the shipped benchmark's at the nearest label rate.

Two entrants of the benchmark come out of it (:data:`ENTRANTS`): the choice among every method, and the choice
among the methods that take no labels (COBS's setting: the labels only choose). Beside each, the **oracle**
(:func:`oracle`): the candidate of the same pool with the best test AC, a ceiling, for the regret.

The choice depends on the labelled samples alone (tested: changing the classes of the unlabelled samples
leaves it as it is).

References
----------
M. Pourrajabi, D. Moulavi, R. J. G. B. Campello, A. Zimek, J. Sander, R. Goebel, "Model selection for
semi-supervised clustering", EDBT 2014, pp. 331-342.

T. Van Craenendonck, H. Blockeel, "Constraint-based clustering selection", Machine Learning 106(9-10),
pp. 1497-1521, 2017.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from ..reproduction.shipped import reference_estimator
from .selection import FOLD_COLUMNS, FOLDS, MIN_VALIDATION, takes_labels

#: A trial: every method saw the same classes, labels and starts.
TRIAL = ["dataset", "k", "trial"]
#: The choice's entrants of the benchmark: their method name, and whether the pool is label-free only.
ENTRANTS = {"Choice": False, "Choice (label-free)": True}
#: The oracle's name beside an entrant's: the best candidate of its pool on the test labels.
ORACLE = "{entrant} oracle"
#: Why each choice was made (the rows' ``selection``).
REASONS = {
    "held-out": "the best mean AC over the folds of the trial's labelled samples",
    "tie: prior": "several candidates at the best score: the one of the method the prior places first",
    "too few: prior": f"fewer than {MIN_VALIDATION} samples in a fold: the prior's first method at its own "
                      "rule's setting",
    "oracle": "the best AC on the test labels: a ceiling, not a result",
}
#: The columns an entrant's row adds to a tuned row: the method chosen (its short name and registry name); its
#: ``setting``, ``selection``, ``validation_acc`` (the score) and ``n_validation`` are a tuned row's own.
CHOSEN = ("chosen_method", "chosen_estimator")
#: The settings table's columns that are no tuned row's (an entrant's row leaves them out).
SETTINGS_ONLY = ("default", "chosen", "score", "n_scored", *FOLD_COLUMNS)


def scored(searched: pd.DataFrame) -> pd.DataFrame:
    """The candidates of a settings table with their ``score`` (the mean AC over the folds, NaN where a fold
    has none) and ``n_scored`` (the fewest samples a fold scored)."""
    accs = [f"validation_acc_fold{fold}" for fold in range(FOLDS)]
    counts = [f"n_validation_fold{fold}" for fold in range(FOLDS)]
    out = searched.reset_index(drop=True).copy()
    out["score"] = out[accs].astype(float).mean(axis=1, skipna=False)
    out["n_scored"] = out[counts].astype(float).min(axis=1).fillna(0).astype(int)
    return out


def pool(searched: pd.DataFrame, label_free: bool) -> pd.DataFrame:
    """The candidates of an entrant: every family method's rows, or only those of methods that take no labels.
    A reference (:mod:`src.methods.references`) is no candidate: the shipped entrants were chosen among the
    family, and the choice is set against the references, not among them, until a rule that scores every
    candidate by the classes it gives back lets them in."""
    family = searched[~searched["estimator"].map(reference_estimator)]
    if not label_free:
        return family
    free = {name: not takes_labels(name) for name in family["estimator"].unique()}
    return family[family["estimator"].map(free)]


def _placed(order: Sequence[str]) -> Callable[[str], tuple]:
    """A sort key that puts the methods of ``order`` first, in order, then the rest by name."""
    where = {method: i for i, method in enumerate(order)}
    return lambda method: (where.get(method, len(where)), method)


def _own(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows of one method ordered as a tie is broken within it: its own rule's setting, its default, the rest."""
    rank = np.where(rows["chosen"].fillna(False).astype(bool), 0, np.where(rows["default"].fillna(False).astype(bool),
                                                                              1, 2))
    return rows.assign(_rank=rank).sort_values("_rank", kind="stable").drop(columns="_rank")


def choose_trial(rows: pd.DataFrame, order: Sequence[str]) -> tuple[pd.Series, str] | None:
    """The chosen candidate of one trial's rows (with ``score``, ``n_scored``) and why, the prior ``order``
    breaking ties and choosing where too few samples score (module docstring); None without a candidate."""
    key = _placed(order)
    candidates = rows[rows["score"].notna()]
    if candidates.empty or candidates["n_scored"].min() < MIN_VALIDATION:
        if rows.empty:
            return None
        first = min(rows["method"].unique(), key=key)
        return _own(rows[rows["method"] == first]).iloc[0], "too few: prior"
    best = candidates["score"].max()
    top = candidates[(candidates["score"] - best).abs() <= 1e-12]
    if len(top) == 1:
        return top.iloc[0], "held-out"
    first = min(top["method"].unique(), key=key)
    return _own(top[top["method"] == first]).iloc[0], "tie: prior"


def choose(searched: pd.DataFrame, prior: Callable[[str], Sequence[str]], entrant: str = "Choice") -> pd.DataFrame:
    """The entrant's rows of one label track: per trial of the settings table ``searched`` (:mod:`src.tuning.tables`),
    the chosen candidate's row as a tuned row named ``entrant`` (a key of :data:`ENTRANTS`;
    :func:`entrant_row`). ``prior(dataset)`` gives the methods best first, read without the data set's test
    labels (:func:`leave_one_out`)."""
    rows = scored(pool(searched, ENTRANTS[entrant]))
    out = []
    orders = {}
    for key, found in rows.groupby(TRIAL, sort=True):
        dataset = key[0]
        if dataset not in orders:
            orders[dataset] = list(prior(dataset))
        picked = choose_trial(found, orders[dataset])
        if picked is None:
            continue
        row, why = picked
        out.append(entrant_row(row, entrant, why))
    return pd.DataFrame(out)


def entrant_row(row: pd.Series, entrant: str, why: str) -> dict:
    """A candidate's row (with ``score``, ``n_scored``) as a tuned row of the entrant: its cell's scores and
    setting, the entrant's name as its method, the method chosen (:data:`CHOSEN`), why, and its score as
    ``validation_acc`` and ``n_validation``."""
    found = {key: value for key, value in row.items() if key not in SETTINGS_ONLY}
    found.update(method=entrant, estimator=entrant, chosen_method=row["method"], chosen_estimator=row["estimator"],
                 selection=why, validation_acc=row["score"], n_validation=int(row["n_scored"]))
    return found


def oracle(searched: pd.DataFrame, entrant: str = "Choice") -> pd.DataFrame:
    """The oracle of an entrant's pool: per trial, the candidate with the best test AC (the first at a tie in
    the table's order), named :data:`ORACLE`. A ceiling for the regret, never a result."""
    rows = scored(pool(searched, ENTRANTS[entrant]))
    rows = rows[rows["acc"].notna()]
    best = rows.loc[rows.groupby(TRIAL, sort=True)["acc"].idxmax()]
    return pd.DataFrame([entrant_row(row, ORACLE.format(entrant=entrant), "oracle") for _, row in best.iterrows()])


def leave_one_out(tuned: pd.DataFrame, order_of: Callable[[pd.DataFrame], Sequence[str]]) \
        -> Callable[[str], list[str]]:
    """The benchmark's prior for a data set: ``order_of`` (the pairwise tests' order,
    :func:`src.presentation.ranking.ac_order`) over the track's tuned rows of every other data set, so no
    test label of the data set at hand is read; the rows of the data set alone where it is the only one."""
    def prior(dataset: str) -> list[str]:
        others = tuned[tuned["dataset"] != dataset]
        return list(order_of(others if not others.empty else tuned))
    return prior


def regret(chosen: pd.DataFrame, ceiling: pd.DataFrame, metric: str = "acc") -> pd.DataFrame:
    """Per trial, the entrant's ``metric`` against its oracle's (``ceiling``): ``regret`` = oracle - choice,
    never negative."""
    both = chosen[[*TRIAL, metric]].merge(ceiling[[*TRIAL, metric]], on=TRIAL, suffixes=("", "_oracle"))
    return both.assign(regret=both[f"{metric}_oracle"] - both[metric])


def picks(chosen: pd.DataFrame) -> pd.DataFrame:
    """How often the entrant chose each method, per data set: ``dataset``, ``chosen_method``, ``n``, ``share``."""
    counts = chosen.groupby(["dataset", "chosen_method"]).size().rename("n").reset_index()
    counts["share"] = counts["n"] / counts.groupby("dataset")["n"].transform("sum")
    return counts.sort_values(["dataset", "n"], ascending=[True, False], ignore_index=True)


def entrants(searched: pd.DataFrame, prior: Callable[[str], Sequence[str]]) -> dict[str, tuple[pd.DataFrame,
                                                                                            pd.DataFrame]]:
    """Each entrant's rows and its oracle's (:data:`ENTRANTS`) of one label track."""
    return {entrant: (choose(searched, prior, entrant), oracle(searched, entrant)) for entrant in ENTRANTS}


def entrant_rows(tuned: pd.DataFrame, searched: pd.DataFrame, order_of: Callable[[pd.DataFrame], Sequence[str]]) \
        -> pd.DataFrame:
    """Both entrants' rows of one label track, as tuned rows: chosen from the settings table ``searched``
    alone, the prior the track's tuned family rows ``tuned`` on the other data sets (:func:`leave_one_out`,
    ``order_of`` the pairwise tests' order). What :func:`src.tuning.grow` adds to the track's tuned rows."""
    family = tuned[~tuned["method"].isin(ENTRANTS) & ~tuned["estimator"].map(reference_estimator)]
    prior = leave_one_out(family, order_of)
    found = [choose(searched, prior, entrant) for entrant in ENTRANTS]
    found = [rows for rows in found if not rows.empty]
    return pd.concat(found, ignore_index=True) if found else pd.DataFrame(columns=[*TRIAL, "method", *CHOSEN,
                                                                                  "selection"])


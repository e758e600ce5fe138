"""Every published number of a paper beside ours, with the noise-aware verdict of :mod:`src.presentation.verdicts`.

One row per number a paper prints or quotes and we have data for:

* a **per-k cell** of a printed table (``tables.csv``: mean and standard deviation over the paper's trials,
  ``trials`` of ``published.yaml``, 10 in the LCF paper: "ran the test ten times", l.366);
* an **average** over k, printed in a table (its per-k cells give the paper's side: all of its trials pooled)
  or alone (FNMF's Tables 2-3, Cai's demo: no deviation printed, so ours stands for both sides);
* a **quoted gain** of one method over another (percentage points on the average over k): ours is the mean
  of the paired (k, trial) differences averaged over k, with their standard deviation and count for both
  sides.

Averages use all of their trials on both sides: the standard error of the mean of the per-k means
(:func:`src.presentation.verdicts.pooled_over_k`, :func:`src.presentation.verdicts.pooled_trials`). :func:`judge` adjusts the
zero-difference p-values of all rows together with Holm's method and gives each row its verdict, beside the
old 5-point rule (for gains, the old paired Wilcoxon verdict of :func:`paired_gain` and :func:`gain_verdict`,
which a paper's report uses for its claims too). :func:`table` flattens judged rows into the columns of
``scorecard.csv`` (every interval and p-value as a number of its own), which the figures of the verdicts draw.

A row's ``key`` (data set and the number's name) is the same under every reading of a paper
(:mod:`src.explain`), so that a reading's effect on a number can be read off by key; ``metric``, ``method``,
``k`` (per-k cells) and ``baseline`` (quoted gains) say which number of the paper's tables or text it is,
so that a figure can group and label the rows as the paper does without parsing their names.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from scipy.stats import wilcoxon

from .verdicts import (ALPHA, TOO_FEW_TRIALS, compare, holm, old_verdict, pooled_over_k, pooled_trials, too_few_trials,
                       verdict)

METRIC = {"acc": "AC", "nmi": "NMI"}
KINDS = ("per-k cell", "average", "quoted gain")


def paired_gain(frame: pd.DataFrame, dataset: str, method: str, baseline: str, metric: str):
    """Our gain (points, on the average over k) and the one-sided Wilcoxon p-value over paired cells.

    Also returns the paired ``differences`` (fractions, indexed by (k, trial)), for tests of their own.
    """
    rows = frame[frame["dataset"] == dataset]
    if baseline == "best other":
        averages = rows.groupby(["method", "k"])[metric].mean().groupby("method").mean().drop(method, errors="ignore")
        if averages.empty:
            return None
        baseline = averages.idxmax()
    pivot = rows.pivot_table(index=["k", "trial"], columns="method", values=metric)
    if method not in pivot or baseline not in pivot:
        return None
    pair = pivot[[method, baseline]].dropna()
    gain = 100 * (pair[method].groupby("k").mean().mean() - pair[baseline].groupby("k").mean().mean())
    differences = pair[method] - pair[baseline]
    if len(pair) < 2:  # one pair: no test (the gain's row says it needs at least two trials)
        p = math.nan
    else:
        p = wilcoxon(differences, alternative="greater").pvalue if np.any(differences != 0) else 1.0
    return {"baseline": baseline, "gain": gain, "p": float(p), "n_pairs": len(pair), "differences": differences}


def tested_gain(result) -> bool:
    """True for a :func:`paired_gain` that was run and tested (two pairs or more)."""
    return result is not None and not math.isnan(result["p"])


def gain_verdict(result) -> str:
    """The old verdict on a gain: reproduced when ours is positive and its Holm-adjusted p-value (``p_holm``,
    set by the caller over its family of tests) is below ALPHA."""
    if result is None:
        return "not run"
    if math.isnan(result["p"]):
        return TOO_FEW_TRIALS
    if result["gain"] > 0 and result["p_holm"] < ALPHA:
        return "reproduced"
    if result["gain"] > 0:
        return "same direction, not significant"
    return "not reproduced"


def _is_average(k) -> bool:
    return str(k).startswith("Avg")


def _trials_by_k(frame: pd.DataFrame, dataset: str, method: str, metric: str) -> dict[int, np.ndarray]:
    """Our per-trial values (points) of one method on one data set, per k."""
    rows = frame[(frame["dataset"] == dataset) & (frame["method"] == method)]
    return {int(k): 100 * group[metric].to_numpy(dtype=float) for k, group in rows.groupby("k")}


def _our_side(values_by_k) -> tuple[float, float, int] | None:
    """Our (mean, standard deviation, trials) of a number from its per-trial values per k, None without any.

    With a k of a single trial the mean of the per-k means is still ours to show, but its noise is unknown:
    the standard deviation is NaN and the count the smallest per k, which :func:`_row` reads as too few to
    compare (verdict :data:`src.presentation.verdicts.TOO_FEW_TRIALS`).
    """
    values_by_k = [np.asarray(values, dtype=float).ravel() for values in values_by_k]
    if not values_by_k:
        return None
    if too_few_trials(values_by_k):
        return float(np.mean([values.mean() for values in values_by_k])), math.nan, min(map(len, values_by_k))
    return pooled_trials(values_by_k)


def _row(paper: str, dataset: str, kind: str, name: str, paper_side: tuple, ours_side: tuple | None, **extra) -> dict:
    """A number's row: the paper's (mean, std, n) and ours, compared when both are there."""
    row = {"paper": paper, "dataset": dataset, "kind": kind, "number": name, "key": f"{dataset}: {name}",
           "metric": None, "method": None, "k": None, "baseline": None,
           "paper value": paper_side[0], "paper std": paper_side[1], "paper n": paper_side[2],
           "ours": None, "ours std": None, "ours n": None, "comparison": None, **extra}
    if ours_side is None:
        return row
    row.update({"ours": ours_side[0], "ours std": ours_side[1], "ours n": ours_side[2]})
    if ours_side[2] < 2:  # a mean without a deviation: shown, not compared
        return row
    row["comparison"] = compare(ours_side[0], ours_side[1], ours_side[2], *paper_side)
    return row


def table_numbers(name: str, frame: pd.DataFrame, published: dict, tables: pd.DataFrame | None) -> list[dict]:
    """Rows of the printed tables (per-k cells and their Avg rows) and of the printed averages."""
    names = published.get("method_names", {})
    frame = frame.assign(method=frame["method"].replace(names))
    trials = published.get("trials")
    rows = []
    if tables is not None:
        tables = tables.assign(method=tables["method"].replace(names))
        for (dataset, metric, method), block in tables.groupby(["dataset", "metric", "method"], sort=False):
            ours = _trials_by_k(frame, dataset, method, metric)
            per_k = block[~block["k"].map(_is_average)]
            for _, cell in per_k.iterrows():
                values = ours.get(int(cell["k"]))
                side = None if values is None else _our_side([values])
                rows.append(_row(name, dataset, "per-k cell", f"{method} {METRIC[metric]}, table, k = {cell['k']}",
                                 (float(cell["mean"]), float(cell["std"]), trials), side, metric=METRIC[metric],
                                 method=method, k=int(cell["k"])))
            if block["k"].map(_is_average).any() and not per_k.empty:
                paper_side = pooled_over_k(per_k["mean"].astype(float), per_k["std"].astype(float),
                                           [trials] * len(per_k))
                printed = float(block[block["k"].map(_is_average)]["mean"].iloc[0])
                wanted = [ours.get(int(k)) for k in per_k["k"]]
                side = None if any(v is None for v in wanted) else _our_side(wanted)
                rows.append(_row(name, dataset, "average", f"{method} {METRIC[metric]}, table average over k",
                                 (printed, paper_side[1], paper_side[2]), side, metric=METRIC[metric], method=method))
    for entry in published.get("published_averages", []):
        dataset, metric = entry["dataset"], entry["metric"]
        for method, value in entry.items():
            if method in ("dataset", "metric"):
                continue
            ours = _trials_by_k(frame, dataset, method, metric)
            side = _our_side(ours.values())
            rows.append(_row(name, dataset, "average", f"{method} {METRIC[metric]}, average over k",
                             (float(value), None, None), side, metric=METRIC[metric], method=method))
    return rows


def gain_numbers(name: str, frame: pd.DataFrame, published: dict) -> list[dict]:
    """Rows of the gains the paper's text quotes, each on our paired (k, trial) differences."""
    rows = []
    for claim in published.get("claims", []):
        dataset, metric = claim["dataset"], claim["metric"]
        result = paired_gain(frame, dataset, claim["method"], claim["baseline"], metric)
        side = None if result is None else \
            _our_side(100 * group.to_numpy() for _, group in result["differences"].groupby(level="k"))
        label = (f"{claim['method']} over {claim['baseline']}, {METRIC[metric]} gain ({claim['source']})")
        rows.append(_row(name, dataset, "quoted gain", label, (float(claim["gain"]), None, None), side,
                         metric=METRIC[metric], method=claim["method"], baseline=claim["baseline"], wilcoxon=result))
    return rows


def numbers(name: str, frame: pd.DataFrame, published: dict, tables: pd.DataFrame | None) -> list[dict]:
    """Every published number of paper ``name`` with ours beside it (not yet judged: :func:`judge`).

    ``frame`` holds the rows of the paper's tables (tuned families already stood in by their label-free
    value, :func:`src.presentation.paper_report.choose_tuned`).
    """
    return table_numbers(name, frame, published, tables) + gain_numbers(name, frame, published)


def judge(rows: list[dict]) -> list[dict]:
    """Give every row its verdict: Holm over all rows compared, then agrees / differs / can't tell.

    Adds ``difference``, ``p_holm``, ``verdict`` and ``old verdict`` (the 5-point rule; for gains the
    paired one-sided Wilcoxon test, Holm-adjusted over the gains) to each row, in place; returns ``rows``.
    """
    compared = [row for row in rows if row["comparison"] is not None]
    for row, adjusted in zip(compared, holm([row["comparison"].p_zero for row in compared])):
        row["p_holm"] = adjusted
    tested = [row["wilcoxon"] for row in rows if tested_gain(row.get("wilcoxon"))]
    for result, adjusted in zip(tested, holm([result["p"] for result in tested])):
        result["p_holm"] = adjusted
    for row in rows:
        comparison = row["comparison"]
        if comparison is None and row["ours"] is not None:  # a k with one trial: the gap, but no verdict
            row.update({"difference": row["ours"] - row["paper value"], "p_holm": None, "verdict": TOO_FEW_TRIALS,
                        "old verdict": TOO_FEW_TRIALS})
            continue
        if comparison is None:
            row.update({"difference": None, "p_holm": None, "verdict": "not run", "old verdict": "not run"})
            continue
        row["difference"] = comparison.difference
        row["verdict"] = verdict(comparison, row["p_holm"])
        row["old verdict"] = gain_verdict(row["wilcoxon"]) if row["kind"] == "quoted gain" \
            else old_verdict(comparison.difference)
    return rows


def counts(rows: list[dict], column: str = "verdict") -> dict[str, dict[str, int]]:
    """Verdict counts per kind of number: {kind: {verdict: count}}."""
    out = {}
    for kind in KINDS:
        chosen = [row[column] for row in rows if row["kind"] == kind]
        if chosen:
            out[kind] = dict(pd.Series(chosen).value_counts().sort_index())
    return out


def interval(row: dict, level: str = "ci90") -> str:
    """A row's confidence interval of the difference as text, or n/a."""
    comparison = row.get("comparison")
    if comparison is None:
        return "n/a"
    lo, hi = getattr(comparison, level)
    if math.isnan(lo):
        return "n/a"
    return f"[{lo:+.2f}, {hi:+.2f}]"


#: The columns :func:`table` gives each comparison, after ``difference``: the intervals of ours - paper, the
#: standard error and degrees of freedom behind them, and the two p-values of the verdict.
COMPARISON_COLUMNS = ("ci90 low", "ci90 high", "ci95 low", "ci95 high", "se", "df", "p zero", "p equivalent", "sides")


#: The columns of :func:`table` without any row (a paper with no published number we have data for).
EMPTY_COLUMNS = ("paper", "dataset", "kind", "number", "key", "metric", "method", "k", "baseline", "paper value",
                 "paper std", "paper n", "ours", "ours std", "ours n", "difference", *COMPARISON_COLUMNS, "p_holm",
                 "verdict", "old verdict", "wilcoxon p", "wilcoxon p (Holm)")


def comparison_columns(comparison) -> dict:
    """A :class:`src.presentation.verdicts.Comparison` as the numeric columns of :data:`COMPARISON_COLUMNS`
    (NaN, and no ``sides``, for a number not compared)."""
    if comparison is None:
        return {name: (None if name == "sides" else math.nan) for name in COMPARISON_COLUMNS}
    return {"ci90 low": comparison.ci90[0], "ci90 high": comparison.ci90[1], "ci95 low": comparison.ci95[0],
            "ci95 high": comparison.ci95[1], "se": comparison.se, "df": comparison.df, "p zero": comparison.p_zero,
            "p equivalent": comparison.p_equivalent, "sides": comparison.sides}


def table(rows: list[dict]) -> pd.DataFrame:
    """Judged rows (:func:`judge`) as a flat table, one row per number, for a CSV file and the figures.

    Each :class:`src.presentation.verdicts.Comparison` becomes the numeric columns of :data:`COMPARISON_COLUMNS`,
    placed after ``difference``, so that a reader of the CSV file (or a figure) gets every interval and p-value
    as a number rather than as text; a quoted gain's paired Wilcoxon test, behind its old verdict, becomes
    ``wilcoxon p`` and ``wilcoxon p (Holm)``. Every other key of a row is kept as it is.
    """
    records = []
    for row in rows:
        record = {}
        for key, value in row.items():
            if key in ("comparison", "wilcoxon"):
                continue
            record[key] = value
            if key == "difference":
                record.update(comparison_columns(row.get("comparison")))
        test = row.get("wilcoxon")
        record["wilcoxon p"] = test["p"] if test else math.nan
        record["wilcoxon p (Holm)"] = test.get("p_holm", math.nan) if test else math.nan
        records.append(record)
    return pd.DataFrame(records) if records else pd.DataFrame(columns=EMPTY_COLUMNS)

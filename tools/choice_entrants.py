"""Measure the benchmark's choice entrants by the new rule from their shipped file.

Usage::

    python -m src.benchmark --choice-entrants   # first: papers/benchmark/choice_entrants.csv.gz
    python -m tools.choice_entrants

Prints, per entrant and label track: its mean AC and classes given back over the (data set, k) blocks beside
the best single candidates at their fixed settings (the shipped cells), the one-sided Wilcoxon test over the
blocks of each single candidate against the entrant (Holm), the old entrant's mean AC, the levels chosen leave
one data set out, the picks and the regret against the oracle.
"""

from __future__ import annotations

import argparse
import logging
import sys

import numpy as np
import pandas as pd
from scipy import stats

from src.choice import entrants, fold_fits
from src.choice.readouts import candidate_name
from src.reproduction import shipped


blocks = entrants.blocks


def singles(cells: pd.DataFrame) -> pd.DataFrame:
    """Every single candidate at its fixed setting, per trial: ``name``, ``acc``, ``given``."""
    out = []
    for readout, (acc, given) in entrants.CELL_COLUMNS.items():
        if readout == "own":
            continue
        rows = cells.dropna(subset=[given])
        out.append(pd.DataFrame({"track": rows["track"], "dataset": rows["dataset"], "k": rows["k"],
                                 "trial": rows["trial"], "name": [candidate_name(m, readout) for m in rows["method"]],
                                 "acc": rows[acc], "given": rows[given]}))
    return pd.concat(out, ignore_index=True)


def holm(pvalues: pd.Series) -> pd.Series:
    """Holm's adjusted p values."""
    order = pvalues.sort_values()
    m = len(order)
    adjusted = np.maximum.accumulate([(m - i) * p for i, p in enumerate(order)])
    return pd.Series(np.minimum(adjusted, 1.0), index=order.index).reindex(pvalues.index)


def summary(chosen: pd.DataFrame, cells: pd.DataFrame, tuned: pd.DataFrame | None, entrant: str, how: str) -> None:
    single = singles(cells)
    single = single.merge(chosen[["track", "dataset", "k", "trial"]], on=["track", "dataset", "k", "trial"])
    for track, mine in chosen.groupby("track"):
        print(f"\n### {entrant} ({how}), {track} ({', '.join(sorted(mine['dataset'].unique()))}; {len(mine)} trials)")
        acc, given = blocks(mine, "acc"), blocks(mine, "given_unlabelled")
        theirs = single[single["track"] == track]
        table = []
        for name, rows in theirs.groupby("name"):
            a, g = blocks(rows, "acc").reindex(acc.index), blocks(rows, "given").reindex(given.index)
            p = {}
            for label, ours, other in (("acc", acc, a), ("given", given, g)):
                diff = (other - ours).dropna()
                p[label] = (stats.wilcoxon(diff, alternative="greater").pvalue
                            if (diff != 0).any() else 1.0)
            table.append({"name": name, "acc": a.mean(), "given": g.mean(), "p_acc": p["acc"], "p_given": p["given"]})
        table = pd.DataFrame(table)
        table["holm_acc"], table["holm_given"] = holm(table["p_acc"]), holm(table["p_given"])
        print(f"the rule's {entrant}: AC {100 * acc.mean():.1f}, classes given back {100 * given.mean():.1f}")
        if tuned is not None:
            old = tuned[(tuned["track"] == track) & (tuned["method"] == entrant)
                        & tuned["dataset"].isin(mine["dataset"].unique())]
            print(f"the shipped {entrant} (held-out AC): AC {100 * blocks(old, 'acc').mean():.1f}")
        for column in ("acc", "given"):
            top = table.sort_values(column, ascending=False).head(4)
            print(f"best singles by {column}: " + "; ".join(
                f"{r['name']} {100 * r[column]:.1f} (Holm p {r['holm_' + column]:.2g})" for _, r in top.iterrows()))
        beaten = table[(table["holm_acc"] < 0.05) | (table["holm_given"] < 0.05)]
        print("singles better by a test (Holm 0.05): " + (", ".join(beaten["name"]) if len(beaten) else "none"))
        print("levels: " + "; ".join(f"{d} {a:g}" for d, a in mine.groupby("dataset")["alpha"].first().items()))
        print("picks: " + "; ".join(f"{n} {c}" for n, c in mine["chosen"].value_counts().head(6).items()))
        print("why: " + "; ".join(f"{n} {c}" for n, c in mine["selection"].value_counts().items()))
        scored = mine.dropna(subset=["oracle_given"])
        print(f"regret against the oracle (classes given back, trials with folds): "
              f"{100 * (scored['oracle_given'] - scored['given_unlabelled']).mean():.1f}; estimate - truth "
              f"{100 * (scored['validation_acc'] - scored['given_unlabelled']).mean():+.1f}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    rows = entrants.load()
    if rows is None:
        print("no entrants ship: run python -m src.benchmark --choice-entrants first")
        return 1
    cells = shipped.load()
    cells = cells[cells["track"].isin(fold_fits.LABEL_TRACKS)]
    tuned = shipped.load_tuned()
    for entrant in entrants.ENTRANTS:
        summary(rows[rows["method"] == entrant], cells, tuned, entrant, "level chosen leave one data set out")
    return 0


if __name__ == "__main__":
    sys.exit(main())

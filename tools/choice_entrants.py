"""Measure the benchmark's choice entrants by the new rule from their shipped file.

Usage::

    python -m src.benchmark --choice-entrants   # first: papers/benchmark/choice_entrants.csv.gz
    python -m tools.choice_entrants

Prints, per entrant and label track: its mean AC and classes given back over the (data set, k) blocks beside
the best single candidates at their fixed settings (the shipped cells), the one-sided Wilcoxon test over the
blocks of each single candidate against the entrant (Holm), the rule chosen leave one data set out (the prior's
order and the level), the picks and the regret against the oracle.
"""

from __future__ import annotations

import argparse
import logging
import sys

from src.choice import entrants, fold_fits
from src.presentation.choice_report import beside_singles
from src.reproduction import shipped

blocks = entrants.blocks


def summary(chosen, cells, entrant: str, how: str) -> None:
    """Print one entrant's figures per label track (the module docstring)."""
    for track, mine in chosen.groupby("track"):
        print(f"\n### {entrant} ({how}), {track} ({', '.join(sorted(mine['dataset'].unique()))}; {len(mine)} trials)")
        acc, given = blocks(mine, "acc"), blocks(mine, "given_unlabelled")
        table = beside_singles(mine, cells[cells["track"] == track])
        print(f"the rule's {entrant}: AC {100 * acc.mean():.1f}, classes given back {100 * given.mean():.1f}")
        for column in ("acc", "given_unlabelled"):
            top = table.sort_values(column, ascending=False).head(4)
            print(f"best singles by {column}: " + "; ".join(
                f"{r['name']} {100 * r[column]:.1f} (Holm p {r['holm_' + column]:.2g})" for _, r in top.iterrows()))
        beaten = table[(table["holm_acc"] < 0.05) | (table["holm_given_unlabelled"] < 0.05)]
        print(f"singles better by a test (Holm 0.05): {len(beaten)} of {len(table)}"
              + (f" ({', '.join(beaten['name'].head(5))}{', ...' if len(beaten) > 5 else ''})" if len(beaten) else ""))
        rules = mine.groupby("dataset")[["prior_how", "alpha"]].first()
        print("rule (prior, level): " + "; ".join(f"{d} {r.prior_how} {r.alpha:g}" for d, r in rules.iterrows()))
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
    for entrant in entrants.ENTRANTS:
        summary(rows[rows["method"] == entrant], cells, entrant, "the rule chosen leave one data set out")
    return 0


if __name__ == "__main__":
    sys.exit(main())

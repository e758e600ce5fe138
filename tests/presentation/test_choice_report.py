"""The report's part on the choice among every method (src/presentation/choice_report.py): the entrants beside the
best single method, the regret against the oracle from the settings table, the picks, and COBS's claim decided by
the track's tests."""

import numpy as np
import pandas as pd
import pytest

from src.presentation import choice_report
from src.presentation.ranking import ac_order, ranking_over
from src.tuning import choice

# (method, registry name, its test AC, its held-out score): SDA takes labels, GNMF and KMeans do not
METHODS = [("SDA", "sda", 0.9, 0.8), ("GNMF", "gnmf", 0.6, 0.7), ("KMeans", "kmeans", 0.5, 0.5)]


def tables(rng=np.random.default_rng(0)):
    """A label track's tuned rows and settings table over 2 data sets, k = 2..9, 4 trials: SDA best on the test
    labels and on the held-out samples, GNMF second, KMeans last."""
    tuned, searched = [], []
    for dataset in ("a", "b"):
        for k in range(2, 10):
            for trial in range(4):
                for method, estimator, acc, held in METHODS:
                    noise = rng.normal(0, 0.01)
                    row = {"dataset": dataset, "method": method, "estimator": estimator, "k": k, "trial": trial,
                           "acc": acc + noise, "setting": "", "selection": "nothing to tune"}
                    tuned.append(row)
                    searched.append({**row, "default": True, "chosen": True, "validation_acc_fold0": held + noise,
                                     "validation_acc_fold1": held + noise, "n_validation_fold0": 6,
                                     "n_validation_fold1": 6})
    tuned, searched = pd.DataFrame(tuned), pd.DataFrame(searched)
    return pd.concat([tuned, choice.entrant_rows(tuned, searched, ac_order)], ignore_index=True), searched


def test_the_section_sets_the_entrants_beside_the_best_method_with_regret_picks_and_cobs():
    rows, searched = tables()
    ranking = ranking_over(rows, "acc")
    assert set(choice.ENTRANTS) <= set(ranking.methods)  # ranked with the family, in the same blocks
    lines = choice_report.section({"labels30": (rows, searched)}, {"labels30": ranking}, {"labels30": "At 30%"})
    text = "\n".join(lines)
    assert "## The family chooses itself" in text and "### At 30%" in text
    assert "best single method: SDA" in text
    # the choice picks SDA every time, which is also the oracle: no regret; the label-free one picks GNMF
    choice_row = next(line for line in lines if line.startswith("| Choice |"))
    assert "| 0.0 [0.0, 0.0], 16 |" in choice_row and choice_row.endswith("| 64 / 0 / 0 |")
    assert "| a | SDA 100% | GNMF 100% |" in text
    # COBS's claim: the label-free choice (GNMF's AC) against SDA, the one label method, which beats it
    cobs = next(line for line in lines if line.startswith("**COBS's claim**"))
    assert "**Contradicted**" in cobs and "SDA" in cobs


def test_the_regret_is_the_oracles_ac_less_the_choices_over_the_blocks():
    chosen = pd.DataFrame({"dataset": "a", "k": [2, 2, 3, 3], "trial": [0, 1, 0, 1], "acc": [0.5, 0.6, 0.7, 0.7]})
    ceiling = chosen.assign(acc=[0.7, 0.6, 0.9, 0.8])
    regret, low, high, blocks = choice_report.block_regret(chosen, ceiling)
    assert blocks == 2 and regret == pytest.approx(100 * np.mean([0.1, 0.15]))
    assert low < regret < high


def test_no_section_without_the_entrants_or_the_settings_table():
    rows, searched = tables()
    family = rows[~rows["method"].isin(choice.ENTRANTS)]
    assert choice_report.section({"labels30": (family, searched)}, {}, {}) == []
    assert choice_report.section({"labels30": (rows, None)}, {}, {}) == []


def test_a_persons_entrants_break_ties_by_the_shipped_order_never_by_their_own_test_labels(monkeypatch):
    # on the person's file GNMF and SDA tie on the held-out samples, and GNMF is far better on the test labels
    searched = pd.DataFrame([{"dataset": "mine", "method": method, "estimator": estimator, "k": 3, "trial": trial,
                              "acc": acc, "setting": "", "default": True, "chosen": True,
                              "validation_acc_fold0": 0.7, "validation_acc_fold1": 0.7, "n_validation_fold0": 6,
                              "n_validation_fold1": 6}
                             for trial in range(4) for method, estimator, acc in (("SDA", "sda", 0.4),
                                                                                   ("GNMF", "gnmf", 0.9))])
    rows = searched[["dataset", "method", "estimator", "k", "trial", "acc", "setting"]].assign(selection="")
    shipped_rows, _ = tables()  # the benchmark ships SDA first
    monkeypatch.setattr(choice_report, "shipped_family_rows",
                        lambda track: shipped_rows[~shipped_rows["method"].isin(choice.ENTRANTS)])
    found = choice_report.with_entrants("labels30", rows, searched)
    mine = found[found["method"] == "Choice"]
    assert mine["chosen_method"].tolist() == ["SDA"] * 4 and set(mine["selection"]) == {"tie: prior"}
    # the unsupervised track has no entrants, and a table that holds them already is left as it is
    assert choice_report.with_entrants("unsupervised", rows, searched) is rows
    assert choice_report.with_entrants("labels30", found, searched) is found

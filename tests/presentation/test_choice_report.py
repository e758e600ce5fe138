"""The report's part on the choice among every candidate (src/presentation/choice_report.py): the shipped entrants
put among a track's tuned rows, set beside every single candidate with the tests, the regret against the oracle,
the picks and levels, and COBS's claim decided by the track's tests."""

import numpy as np
import pandas as pd
import pytest

from src.choice.entrants import ENTRANTS, NO_FOLDS
from src.presentation import choice_report
from src.presentation.ranking import ranking_over

# (method, registry name, test AC, classes given back by its clusters, by a nearest labelled neighbour)
METHODS = [("SDA", "sda", 0.9, 0.80, 0.88), ("GNMF", "gnmf", 0.6, 0.55, 0.70), ("KMeans", "kmeans", 0.5, 0.45, 0.60)]
KS, TRIALS = range(2, 10), range(4)


def fixture(rng=np.random.default_rng(0)):
    """A label track over 2 data sets: the tuned family rows, the fixed-setting cells with their readouts, and
    both entrants' rows: Choice picks SDA + nearest labelled (one trial of each block without folds), Choice
    (label-free) GNMF's clusters; the oracle is SDA + nearest labelled."""
    tuned, cells, chosen = [], [], []
    for dataset in ("a", "b"):
        for k in KS:
            for trial in TRIALS:
                key = {"track": "labels30", "dataset": dataset, "k": k, "trial": trial}
                for method, estimator, acc, given, nearest in METHODS:
                    noise = rng.normal(0, 0.01)
                    tuned.append({**key, "method": method, "estimator": estimator, "acc": acc + noise,
                                  "setting": "", "selection": "nothing to tune"})
                    cells.append({**key, "method": method, "estimator": estimator, "acc": acc + noise,
                                  "given_unlabelled": given + noise, "acc_nearest_labelled": nearest + noise,
                                  "given_nearest_labelled": nearest + noise, "acc_spread_labelled": np.nan,
                                  "given_spread_labelled": np.nan})
                oracle = {"oracle": "SDA + nearest labelled", "oracle_given": 0.91}
                chosen.append({**key, "method": "Choice", "estimator": "Choice", "acc": 0.92, "nmi": 0.7,
                               "given_unlabelled": 0.90 - 0.001 * trial, "chosen": "SDA + nearest labelled",
                               "selection": NO_FOLDS if trial == 0 else "prior", "alpha": 0.05, "prior_how": "mean",
                               **oracle})
                chosen.append({**key, "method": "Choice (label-free)", "estimator": "Choice (label-free)",
                               "acc": 0.6, "nmi": 0.4, "given_unlabelled": 0.55 + 0.001 * trial, "chosen": "GNMF",
                               "selection": "evidence", "alpha": 1.0, "prior_how": "regret", **oracle})
    return pd.DataFrame(tuned), pd.DataFrame(cells), pd.DataFrame(chosen)


def test_the_shipped_entrants_take_the_place_of_older_ones_on_the_tracks_data_sets():
    tuned, _, chosen = fixture()
    rows = tuned[tuned["dataset"] == "a"].drop(columns="track")
    stale = rows.head(3).assign(method="Choice")
    found = choice_report.with_entrants("labels30", pd.concat([rows, stale]), chosen)
    assert set(found.loc[found["method"].isin(ENTRANTS), "dataset"]) == {"a"}
    assert (found["method"] == "Choice").sum() == len(KS) * len(TRIALS)  # the stale rows are gone
    assert "track" not in found or found["track"].isna().all()
    assert not choice_report.with_entrants("unsupervised", rows, chosen)["method"].isin(ENTRANTS).any()


def test_the_section_sets_the_entrants_beside_every_single_candidate_with_the_tests():
    tuned, cells, chosen = fixture()
    rows = pd.concat([tuned, chosen], ignore_index=True).drop(columns="track")
    ranking = ranking_over(rows, "acc")
    assert set(ENTRANTS) <= set(ranking.methods)  # ranked with the family, in the same blocks
    lines = choice_report.section({"labels30": (rows, None)}, {"labels30": ranking}, {"labels30": "At 30%"}, cells)
    text = "\n".join(lines)
    assert lines[0] == "## The family chooses itself" and "### At 30%" in lines
    choice_line = next(line for line in lines if line.startswith("| Choice |"))
    free_line = next(line for line in lines if line.startswith("| Choice (label-free) |"))
    # Choice gives back more than the best single: no test finds a single better
    assert "| 0 of 6 |" in choice_line and "SDA + nearest labelled 88" in choice_line
    # the label-free choice of GNMF's clusters: SDA's clusters and every nearest labelled readout are better
    assert "| 4 of 6 |" in free_line
    assert choice_line.endswith("| 48 / 0 / 16 |")  # prior / evidence / no folds
    assert free_line.endswith("| 0 / 64 / 0 |")
    assert "| a | mean, 0.05: SDA + nearest labelled 100% | regret, 1: GNMF 100% |" in text
    assert "COBS's claim" in text


def test_the_singles_tests_find_a_better_candidate_and_not_an_equal_one():
    _, cells, chosen = fixture()
    mine = chosen[chosen["method"] == "Choice (label-free)"]
    table = choice_report.beside_singles(mine, cells).set_index("name")
    assert table.loc["SDA + nearest labelled", "holm_given_unlabelled"] < 0.05
    assert table.loc["GNMF", "holm_given_unlabelled"] > 0.05  # the same candidate, within noise
    assert table.loc["KMeans", "p_given_unlabelled"] == pytest.approx(1.0, abs=0.01)


def test_the_regret_is_the_oracles_classes_given_back_less_the_choices_over_the_blocks():
    _, _, chosen = fixture()
    mine = chosen[chosen["method"] == "Choice"]
    regret, low, high, blocks = choice_report.block_regret(mine)
    assert blocks == 2 * len(KS)
    assert regret == pytest.approx(100 * (0.01 + 0.001 * np.mean(TRIALS)))
    assert low <= regret <= high


def test_where_the_entrants_cover_some_data_sets_they_are_ranked_with_the_family_on_those():
    tuned, cells, chosen = fixture()
    rows = pd.concat([tuned, chosen[chosen["dataset"] == "a"]], ignore_index=True).drop(columns="track")
    whole = ranking_over(rows, "acc")
    assert whole is None or not set(ENTRANTS) & set(whole.methods)  # b's blocks lack them
    lines = choice_report.section({"labels30": (rows, None)}, {"labels30": whole}, {}, cells)
    assert any(line.startswith("The entrants' fold fits ship for 1 of the track's 2 data sets (a)") for line in lines)
    choice_line = next(line for line in lines if line.startswith("| Choice |"))
    assert choice_line.split(" | ")[3] != "-"  # a standing, from the ranking on data set a


def test_no_section_without_entrants():
    tuned, cells, _ = fixture()
    assert choice_report.section({"labels30": (tuned.drop(columns="track"), None)}, {}, {}, cells) == []


def test_the_rule_of_a_persons_file_is_said_where_it_ships(tmp_path):
    path = tmp_path / "rule.csv"
    assert choice_report.person_rule_lines(path) == []
    pd.DataFrame({"entrant": ["Choice"], "prior_how": ["regret"], "alpha": [0.2],
                  "chosen_on": ["orl yale"]}).to_csv(path, index=False)
    line = choice_report.person_rule_lines(path)[0]
    assert "all 2 of them (orl, yale)" in line and "(regret), at level 0.2" in line

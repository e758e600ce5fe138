"""The choice among every method (src/tuning/choice.py): the best held-out score over the folds; the prior breaks
ties and chooses where too few samples score; the label-free pool; the oracle and the regret; the unlabelled
samples' classes change nothing."""

import numpy as np
import pandas as pd
import pytest
from test_selection import SEED, Y, HiddenChanged, rows_for, three_settings

from src.protocol.trials import make_trial
from src.tuning import choice, selection
from src.tuning.grids import Grid
from src.tuning.tables import searched_settings

GNMF = Grid("gnmf", "GNMF", {"alpha": 10.0}, {"alpha": (1.0, 10.0, 100.0)})
KMEANS = Grid("kmeans", "KMeans", {}, {})


def candidate(method, estimator, setting, folds, acc, trial=0, chosen=False, default=False, n=6):
    """One row of a settings table: a candidate's fold scores and test AC."""
    row = {"dataset": "toy", "method": method, "estimator": estimator, "k": 4, "trial": trial, "setting": setting,
           "default": default, "chosen": chosen, "acc": acc}
    for fold, score in enumerate(folds):
        row[f"validation_acc_fold{fold}"], row[f"n_validation_fold{fold}"] = score, n
    return row


def table(*rows):
    return pd.DataFrame(list(rows))


def test_the_best_mean_over_the_folds_is_chosen_whatever_the_method():
    searched = table(candidate("GNMF", "gnmf", "alpha=1.0", [0.9, 0.7], 0.6),
                     candidate("GNMF", "gnmf", "alpha=10.0", [0.6, 0.6], 0.9, default=True, chosen=True),
                     candidate("CNMF", "cnmf", np.nan, [0.85, 0.85], 0.7, default=True, chosen=True))
    found = choice.choose(searched, lambda dataset: ["GNMF", "CNMF"])
    assert found[["chosen_method", "selection"]].values.tolist() == [["CNMF", "held-out"]]
    assert found["method"].tolist() == ["Choice"] and found["acc"].tolist() == [0.7]  # the candidate's test AC
    assert found["validation_acc"].tolist() == [0.85] and found["n_validation"].tolist() == [6]


def test_the_prior_breaks_a_tie_among_the_tied_only_and_within_a_method_keeps_its_own_choice():
    searched = table(candidate("GNMF", "gnmf", "alpha=1.0", [0.8, 0.8], 0.6),
                     candidate("GNMF", "gnmf", "alpha=10.0", [0.8, 0.8], 0.7, default=True),
                     candidate("GNMF", "gnmf", "alpha=100.0", [0.8, 0.8], 0.5, chosen=True),
                     candidate("CNMF", "cnmf", np.nan, [0.8, 0.8], 0.9, default=True, chosen=True),
                     candidate("SDA", "sda", "alpha=1.0", [0.5, 0.5], 0.9, default=True, chosen=True))
    found = choice.choose(searched, lambda dataset: ["SDA", "GNMF", "CNMF"])  # SDA first, but not tied
    assert found[["chosen_method", "setting", "selection"]].values.tolist() == \
        [["GNMF", "alpha=100.0", "tie: prior"]]
    found = choice.choose(searched, lambda dataset: ["CNMF", "GNMF"])
    assert found["chosen_method"].tolist() == ["CNMF"]


def test_too_few_samples_to_score_leave_the_choice_to_the_prior_at_its_own_rules_setting():
    searched = table(candidate("GNMF", "gnmf", "alpha=1.0", [1.0, 1.0], 0.6, n=2),
                     candidate("GNMF", "gnmf", "alpha=10.0", [0.5, 0.5], 0.7, default=True, chosen=True, n=2),
                     candidate("CNMF", "cnmf", np.nan, [np.nan, np.nan], 0.9, default=True, chosen=True, n=0))
    found = choice.choose(searched, lambda dataset: ["GNMF", "CNMF"])
    assert found[["chosen_method", "setting", "selection"]].values.tolist() == \
        [["GNMF", "alpha=10.0", "too few: prior"]]


def test_a_candidate_without_a_score_is_no_candidate_and_costs_the_choice_nothing():
    searched = table(candidate("GNMF", "gnmf", "alpha=10.0", [0.6, 0.7], 0.7, default=True, chosen=True),
                     candidate("CNMF", "cnmf", np.nan, [np.nan, 0.99], 0.9, default=True, chosen=True))  # a failed fold
    found = choice.choose(searched, lambda dataset: ["CNMF", "GNMF"])
    assert found[["chosen_method", "selection"]].values.tolist() == [["GNMF", "held-out"]]


def test_the_label_free_pool_leaves_the_label_methods_out_and_the_oracle_is_its_ceiling():
    searched = table(candidate("GNMF", "gnmf", "alpha=1.0", [0.7, 0.7], 0.6),
                     candidate("GNMF", "gnmf", "alpha=10.0", [0.6, 0.6], 0.8, default=True, chosen=True),
                     candidate("CNMF", "cnmf", np.nan, [0.9, 0.9], 0.95, default=True, chosen=True))
    found = choice.entrants(searched, lambda dataset: ["CNMF", "GNMF"])
    assert found["Choice"][0]["chosen_method"].tolist() == ["CNMF"]
    free, ceiling = found["Choice (label-free)"]
    assert free[["chosen_method", "setting"]].values.tolist() == [["GNMF", "alpha=1.0"]]
    assert ceiling[["method", "setting", "acc"]].values.tolist() == \
        [["Choice (label-free) oracle", "alpha=10.0", 0.8]]
    regret = choice.regret(free, ceiling)
    assert regret["regret"].tolist() == pytest.approx([0.2])
    assert choice.picks(free)[["chosen_method", "n", "share"]].values.tolist() == [["GNMF", 1, 1.0]]


def test_a_reference_is_never_a_candidate_nor_the_oracle():
    """The references are what the choice is set against: the best scored candidate is a family method's."""
    searched = table(candidate("kNN", "knn", "n_neighbors=1", [0.95, 0.95], 0.99, default=True, chosen=True),
                     candidate("GNMF", "gnmf", "alpha=10.0", [0.6, 0.6], 0.8, default=True, chosen=True),
                     candidate("CNMF", "cnmf", np.nan, [0.7, 0.7], 0.7, default=True, chosen=True))
    found = choice.entrants(searched, lambda dataset: ["kNN", "CNMF", "GNMF"])
    chosen, ceiling = found["Choice"]
    assert chosen["chosen_method"].tolist() == ["CNMF"] and ceiling["acc"].tolist() == [0.8]
    assert found["Choice (label-free)"][0]["chosen_method"].tolist() == ["GNMF"]


def test_the_leave_one_out_prior_reads_only_the_other_data_sets():
    tuned = pd.DataFrame({"dataset": ["a", "a", "b", "b"], "method": ["X", "Y", "X", "Y"], "acc": [0.9, 0.1, 0.1, 0.9]})
    seen = []
    prior = choice.leave_one_out(tuned, lambda rows: seen.append(set(rows["dataset"])) or ["X"])
    assert prior("a") == ["X"] and seen == [{"b"}]


def settings_of(trials, n_trials=10):
    """GNMF's three settings (the labelled samples favour alpha = 1, the test labels 100) and a KMeans that is
    wrong on one labelled sample only (the test labels' favourite), as the settings table holds them."""
    scheme = {"mode": "fraction", "fraction": 0.3}
    gnmf, kmeans = [], []
    for t in range(n_trials):
        trial = make_trial(Y, "toy", 4, t, SEED, scheme)
        gnmf.append(rows_for(three_settings(trial), trial=t))
        spoiled = trial.y_true.copy()
        labelled = np.flatnonzero(trial.y_partial >= 0)
        spoiled[labelled[:1]] = (spoiled[labelled[:1]] + 1) % 4
        kmeans.append(rows_for({10.0: spoiled}, trial=t, estimator="kmeans").assign(method="KMeans", params="{}"))
    out = []
    for cells, grid in ((pd.concat(gnmf, ignore_index=True), GNMF), (pd.concat(kmeans, ignore_index=True), KMEANS)):
        per = selection.validated(cells, grid, trials)
        chosen = selection.select(cells, None, grid, trials, per) if grid.tuned else selection.untuned(cells)
        out.append(searched_settings(cells, chosen, grid, per))
    return pd.concat(out, ignore_index=True)


@pytest.mark.parametrize("trials", [selection.Trials, HiddenChanged])
def test_the_classes_of_the_unlabelled_samples_leave_the_choice_as_it_is(trials):
    """Every trial's choice is GNMF at alpha = 1, the labelled samples' favourite, whatever the unlabelled samples'
    classes; the oracle, which reads them, picks otherwise."""
    searched = settings_of(trials(lambda name: Y))
    assert searched.groupby("method")["setting"].nunique().to_dict() == {"GNMF": 3, "KMeans": 1}
    found = choice.choose(searched, lambda dataset: ["KMeans", "GNMF"])
    assert len(found) == 10 and set(found["chosen_method"]) == {"GNMF"}
    assert set(found["setting"]) == {"alpha=1.0"} and set(found["selection"]) == {"held-out"}
    assert set(choice.oracle(searched)["chosen_method"]) == {"KMeans"}

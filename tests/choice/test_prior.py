"""The prior of a person's file (src/choice/prior.py): the shipped benchmark's candidates by their classes given
back at the nearest label rate, a reference first where the means are equal."""

import numpy as np
import pandas as pd
import pytest

from src.choice import prior


def cells(rows):
    """Shipped-like cells: (method, estimator, data set, k, given_unlabelled, given_nearest_labelled)."""
    return pd.DataFrame(rows, columns=["method", "estimator", "dataset", "k", "given_unlabelled",
                                       "given_nearest_labelled"])


def test_candidates_are_ordered_by_their_mean_over_the_blocks_each_block_the_mean_of_its_trials():
    found = prior.order(cells([
        ("SDA", "sda", "yale", 5, 0.50, 0.90), ("SDA", "sda", "yale", 5, 0.50, 0.70),  # block mean 0.80
        ("SDA", "sda", "orl", 5, 0.60, 0.80),
        ("kNN", "knn", "yale", 5, 0.85, np.nan), ("kNN", "knn", "orl", 5, 0.70, np.nan),
        ("KMeans", "kmeans", "yale", 5, 0.30, 0.85), ("KMeans", "kmeans", "orl", 5, 0.30, 0.70),
    ]))
    assert found == ["SDA + nearest labelled", "kNN", "KMeans + nearest labelled", "SDA", "KMeans"]


def test_by_regret_the_candidate_never_far_behind_comes_first_and_one_a_data_set_lacks_last():
    rows = cells([
        ("SDA", "sda", "yale", 5, 0.50, 0.80), ("SDA", "sda", "orl", 5, 0.50, 0.70),
        ("SDA", "sda", "coil20", 5, 0.50, 0.80),  # nearest labelled: mean 0.767, never more than 0.19 behind
        ("kNN", "knn", "yale", 5, 0.99, np.nan), ("kNN", "knn", "orl", 5, 0.72, np.nan),
        ("kNN", "knn", "coil20", 5, 0.60, np.nan),  # mean 0.770, 0.20 behind on COIL20
        ("NTF", "ntf", "yale", 5, 0.999, np.nan),  # best where it runs, but ORL and COIL20 lack it
    ])
    assert prior.order(rows, "mean")[:3] == ["NTF", "kNN", "SDA + nearest labelled"]
    assert prior.order(rows, "regret") == ["SDA + nearest labelled", "kNN", "SDA", "NTF"]
    with pytest.raises(ValueError, match="one of mean, regret"):
        prior.order(rows, "median")


def test_the_nearest_label_track_is_the_one_whose_share_of_labels_is_nearest():
    assert prior.nearest_track(0.12) == "labels10" and prior.nearest_track(0.27) == "labels30"


def test_the_shipped_prior_names_candidates_the_choice_has():
    names = prior.shipped_prior(0.3)
    assert names is not None and len(names) == len(set(names)) > 20
    assert any(name in ("LabelSpreading", "kNN") for name in names)


def test_the_rule_of_a_persons_file_is_the_shipped_one_else_the_first_readings(tmp_path):
    path = tmp_path / "rule.csv"
    assert prior.shipped_rule(path) == prior.DEFAULT_RULE == ("mean", 0.05)
    pd.DataFrame({"entrant": ["Choice", "Choice (label-free)"], "prior_how": ["regret", "mean"],
                  "alpha": [0.2, 1.0]}).to_csv(path, index=False)
    assert prior.shipped_rule(path) == ("regret", 0.2)
    assert prior.shipped_rule(path, "Choice (label-free)") == ("mean", 1.0)
    pd.DataFrame({"entrant": ["Choice"], "prior_how": ["median"], "alpha": [0.2]}).to_csv(path, index=False)
    with pytest.raises(ValueError, match="expected one of mean, regret"):
        prior.shipped_rule(path)


def test_the_shipped_rule_is_one_the_choice_knows():
    how, level = prior.shipped_rule()
    assert how in prior.HOWS and 0 < level <= 1

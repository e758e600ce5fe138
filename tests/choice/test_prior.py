"""The prior of a person's file (src/choice/prior.py): the shipped benchmark's candidates by their classes given
back at the nearest label rate, a reference first where the means are equal."""

import numpy as np
import pandas as pd

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


def test_the_nearest_label_track_is_the_one_whose_share_of_labels_is_nearest():
    assert prior.nearest_track(0.12) == "labels10" and prior.nearest_track(0.27) == "labels30"


def test_the_shipped_prior_names_candidates_the_choice_has():
    names = prior.shipped_prior(0.3)
    assert names is not None and len(names) == len(set(names)) > 20
    assert any(name in ("LabelSpreading", "kNN") for name in names)

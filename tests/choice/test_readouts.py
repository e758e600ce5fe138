"""The readouts of a fit (src/choice/readouts.py), each on a representation whose answer is known: the classes
come from the told labels alone, a told sample keeps its class, and each says how sure it is."""

import numpy as np
import pytest

from src.choice import readouts
from src.choice.readouts import Fitted
from src.methods import make


def test_clusters_take_the_class_of_their_told_samples_and_the_share_that_carries_it_is_the_confidence():
    clusters = np.array([0, 0, 0, 0, 1, 1, 1, 2, 2])
    told = np.array([1, 1, 0, -1, 0, -1, -1, -1, -1])  # cluster 0 told 1, 1, 0; cluster 1 told 0; cluster 2 none
    given, sure = readouts.classes("clusters", Fitted(clusters=clusters), told, 3)
    assert given.tolist() == [1, 1, 0, 1, 0, 0, 0, -1, -1]  # a told sample keeps its own class
    assert sure[[0, 1, 2]].tolist() == [1, 1, 1] and sure[3] == pytest.approx(2 / 3) and sure[5] == 1
    assert sure[7] == 0  # a cluster with no told sample gives no class


def test_a_nearest_labelled_neighbour_in_the_representation_gives_the_nearest_told_samples_class():
    representation = np.array([[0.0, 1], [0.1, 1], [5, 0], [5.2, 0.1], [0.05, 0.9]])
    told = np.array([0, -1, 1, -1, -1])
    given, sure = readouts.classes("nearest_labelled", Fitted(representation=representation), told, 2)
    assert given.tolist() == [0, 0, 1, 1, 0] and (sure == 1).all()  # one neighbour: all or nothing


def test_label_spreading_on_the_representation_follows_its_graph():
    rng = np.random.default_rng(0)
    representation = np.vstack([rng.normal(0, 0.1, (10, 2)), rng.normal(5, 0.1, (10, 2))])
    told = np.full(20, -1)
    told[[0, 10]] = [0, 1]
    given, sure = readouts.classes("spread_labelled", Fitted(representation=representation), told, 2)
    assert given.tolist() == [0] * 10 + [1] * 10 and ((sure > 0.5) & (sure <= 1)).all()


def test_a_references_own_classes_are_its_predictions_with_the_classifiers_probability():
    X = np.array([[0.0, 1], [0.1, 1], [0.2, 0.9], [5, 0], [5.2, 0.1], [5.1, 0.2]])
    told = np.array([0, 0, -1, 1, -1, 1])
    model = make("knn", n_components=2, n_neighbors=2).fit(X, told)
    given, sure = readouts.classes(readouts.OWN, Fitted(representation=X, model=model), told, 2)
    assert given.tolist() == [0, 0, 0, 1, 1, 1] and sure.tolist() == [1.0] * 6  # both neighbours agree


def test_each_kind_of_estimator_has_its_readouts():
    assert readouts.readouts_of("label_spreading") == (readouts.OWN,)
    assert readouts.readouts_of("copkmeans") == ("clusters",)
    assert readouts.readouts_of("sda") == ("clusters", "nearest_labelled", "spread_labelled")
    assert readouts.candidate_name("SDA", "nearest_labelled") == "SDA + nearest labelled"
    assert readouts.candidate_name("kNN", readouts.OWN) == "kNN"

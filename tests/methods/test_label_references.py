"""src.methods.references: the label tracks' references are scikit-learn's own classifiers, kept thin."""

from pathlib import Path

import numpy as np
import pytest
import yaml
from sklearn.neighbors import KNeighborsClassifier
from sklearn.semi_supervised import LabelSpreading

from src import methods
from src.errors import ConfigError
from src.methods.references import LabelSpreadingReference, NearestNeighbourReference, is_reference
from src.protocol import partition
from src.protocol.cell import clusters_directly, run_cell
from src.protocol.trials import make_trial
from src.running.settings import MethodSpec, freeze, protocol_spec

Y = np.repeat(np.arange(6), 10)  # 6 classes of 10 samples
PROTOCOL = {**yaml.safe_load((Path(__file__).resolve().parents[2] / "conf" / "protocol" / "unsupervised.yaml")
                             .read_text()), "labels": {"mode": "fraction", "fraction": 0.2}, "readouts": []}


def trial_and_data(k=4, trial=0, fraction=0.2):
    """Six overlapping blobs in 30 dimensions and a trial of k of them, ``fraction`` of each class labelled."""
    rng = np.random.default_rng(trial)
    X = (rng.random((6, 30)) * 3)[Y] + 0.8 * rng.random((Y.size, 30))
    return X, make_trial(Y, "toy", k, trial, 0, {"mode": "fraction", "fraction": fraction})


def cell_partition(name, X, trial, **params):
    method = MethodSpec(name, name, freeze(params))
    return run_cell(X, method, trial, protocol_spec(PROTOCOL, "toy")).chosen.partition


@pytest.mark.parametrize("trial_number", [0, 1, 2])
def test_label_spreadings_cell_is_scikit_learns_own_transduction(trial_number):
    X, trial = trial_and_data(trial=trial_number)
    got = cell_partition("label_spreading", X, trial)
    expected = LabelSpreading(kernel="knn", n_neighbors=7, alpha=0.2, max_iter=30) \
        .fit(X[trial.index], trial.y_partial).transduction_
    free = trial.y_partial == -1
    np.testing.assert_array_equal(got[free], expected[free])
    np.testing.assert_array_equal(got[~free], trial.y_partial[~free])  # the known samples keep their class


@pytest.mark.parametrize("n_neighbors", [1, 3])
def test_the_nearest_neighbours_cell_is_scikit_learns_classifier_on_the_labelled_samples(n_neighbors):
    X, trial = trial_and_data(k=5, trial=1)
    got = cell_partition("knn", X, trial, n_neighbors=n_neighbors)
    Xt, known = X[trial.index], trial.y_partial != -1
    expected = KNeighborsClassifier(n_neighbors=n_neighbors, weights="distance") \
        .fit(Xt[known], trial.y_partial[known]).predict(Xt)
    np.testing.assert_array_equal(got[~known], expected[~known])
    np.testing.assert_array_equal(got[known], trial.y_partial[known])


def test_a_references_stored_partition_maps_back_to_its_own_classes():
    """The map by the labelled samples gives each predicted class itself, so the classes given back read from
    the stored (renumbered) partition are the reference's own predictions."""
    X, trial = trial_and_data(k=6, trial=2)
    got = cell_partition("label_spreading", X, trial)
    stored = partition.decode(partition.encode(got))
    mapped = partition.class_of_clusters(stored, trial.y_partial)[stored]
    np.testing.assert_array_equal(mapped, got)
    free = trial.y_partial == -1
    assert partition.given_back(trial, stored) == pytest.approx(np.mean(got[free] == trial.y_true[free]))


def test_the_references_are_a_kind_of_their_own_in_the_registry():
    for name, cls in (("label_spreading", LabelSpreadingReference), ("knn", NearestNeighbourReference)):
        assert methods.REGISTRY[name] is cls and is_reference(cls) and cls.needs_labels and clusters_directly(cls)
    assert not any(is_reference(methods.REGISTRY[name]) for name in ("sda", "cnmf", "kmeans", "copkmeans"))


def test_a_neighbour_count_past_what_there_is_is_cut_and_a_grown_float_is_an_integer():
    X, trial = trial_and_data(k=3, trial=0, fraction=0.1)  # one labelled sample a class
    Xt = X[trial.index]
    many = NearestNeighbourReference(n_components=3, n_neighbors=81).fit(Xt, trial.y_partial)
    assert many.classifier_.n_neighbors == 3
    grown = LabelSpreadingReference(n_components=3, n_neighbors=14.0).fit(Xt, trial.y_partial)
    assert grown.classifier_.n_neighbors == 14 and isinstance(grown.classifier_.n_neighbors, int)


@pytest.mark.parametrize("cls, params, match", [
    (LabelSpreadingReference, {"alpha": 1.0}, r"alpha=1\.0 must be a number in \(0, 1\)"),
    (LabelSpreadingReference, {"n_neighbors": 2.5}, r"n_neighbors=2\.5 must be a positive integer"),
    (NearestNeighbourReference, {"weights": "gaussian"}, r"weights='gaussian'"),
])
def test_a_bad_setting_is_one_line_naming_it(cls, params, match):
    X, trial = trial_and_data()
    with pytest.raises(ConfigError, match=match):
        cls(**params).fit(X[trial.index], trial.y_partial)


def test_a_reference_refuses_a_fit_without_a_known_label():
    with pytest.raises(ConfigError, match="needs labelled samples"):
        NearestNeighbourReference().fit(np.ones((4, 2)), np.full(4, -1))


def test_predict_classes_new_samples_as_the_fitted_classifier():
    X, trial = trial_and_data()
    model = NearestNeighbourReference(n_components=4).fit(X[trial.index], trial.y_partial)
    np.testing.assert_array_equal(model.predict(X[:5]), model.classifier_.predict(X[:5]))

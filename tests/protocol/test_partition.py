"""src.protocol.partition: a cell's partition kept compactly, and each track's scores read from it."""

import numpy as np
import pytest

from src.protocol import partition
from src.protocol.cell import run_cell
from src.protocol.trials import make_trial
from src.running.results import result_row, with_trial
from src.running.settings import MethodSpec, freeze

from test_cell import noisy_blobs, spec


@pytest.mark.parametrize("labels", [[3, 3, 7, 1, 7, 3], list(range(70)) * 2, [5], []])
def test_a_partition_comes_back_as_the_same_partition_renumbered_by_first_appearance(labels):
    text = partition.encode(labels)
    back = partition.decode(text)
    assert back.tolist() == partition.renumbered(labels).tolist()
    assert len(back) == len(labels)
    if labels:
        first = {}
        assert back.tolist() == [first.setdefault(label, len(first)) for label in labels]
        assert len(text) == len(labels) or partition.SEPARATOR in text  # one character a sample up to 62 clusters


def test_every_score_of_a_partition_read_back_is_that_of_the_assignment():
    rng = np.random.default_rng(0)
    truth, predicted = rng.integers(0, 4, 50), rng.integers(10, 15, 50)
    assert partition.scores(truth, partition.decode(partition.encode(predicted))) == pytest.approx(
        partition.scores(truth, predicted))


def test_the_unlabelled_samples_are_scored_apart_only_when_all_are_scored_and_some_are_labelled():
    y = np.repeat(np.arange(4), 10)
    labelled = make_trial(y, "toy", 3, 0, 0, {"mode": "fraction", "fraction": 0.3})
    unlabelled = make_trial(y, "toy", 3, 0, 0, {"mode": "none"})
    predicted = labelled.y_true.copy()
    predicted[:4] = (predicted[:4] + 1) % 3
    columns = partition.place_columns(labelled, predicted, "all")
    assert set(columns) == {"acc_unlabelled", "nmi_unlabelled", "ari_unlabelled", "given_unlabelled", "n_samples",
                            "n_labelled"}
    free = labelled.y_partial == -1
    assert columns["acc_unlabelled"] == pytest.approx(np.mean(predicted[free] == labelled.y_true[free]))
    assert columns["n_labelled"] == labelled.n_labelled == 9
    assert set(partition.place_columns(unlabelled, predicted, "all")) == {"n_samples", "n_labelled"}
    # the classes given back read the unlabelled samples whatever the row's own scores read
    assert set(partition.place_columns(labelled, predicted, "unlabelled")) == {"given_unlabelled", "n_samples",
                                                                               "n_labelled"}


def test_a_clustering_shared_by_two_label_schemes_gives_each_the_row_it_would_compute():
    """NMF reads no label: its cell under 10% labelled, scored for the 30% trial, is the 30% cell's row."""
    y = np.repeat(np.arange(6), 10)
    X = noisy_blobs(y)
    method = MethodSpec("nmf", "NMF", freeze({"max_iter": 30, "stopping": "fixed"}))
    few, many = ({"mode": "fraction", "fraction": fraction} for fraction in (0.1, 0.3))
    trial_few, trial_many = (make_trial(y, "toy", 3, 1, 0, labels) for labels in (few, many))
    np.testing.assert_array_equal(trial_few.index, trial_many.index)  # the same samples and seeds
    cell = run_cell(X, method, trial_few, spec(labels=few))
    shared = result_row("toy", method, 0, cell, trial=trial_many)
    own = result_row("toy", method, 0, run_cell(X, method, trial_many, spec(labels=many)))
    rebased = with_trial(result_row("toy", method, 0, cell), trial_many, "all")
    timing = {"fit_seconds", "kmeans_seconds"}
    for row in (shared, rebased):
        assert list(row) == list(own)
        for key in set(own) - timing:
            if isinstance(own[key], float):
                assert row[key] == pytest.approx(own[key], rel=1e-9, abs=1e-12, nan_ok=True), key
            else:
                assert row[key] == own[key], key
    assert shared["n_labelled"] == trial_many.n_labelled != trial_few.n_labelled


def test_a_row_without_a_partition_cannot_be_scored_for_another_trial():
    y = np.repeat(np.arange(4), 10)
    with pytest.raises(ValueError, match="no partition"):
        with_trial({"acc": 0.5, "n_samples": 20}, make_trial(y, "toy", 2, 0, 0, {"mode": "none"}), "all")


def test_a_partition_in_a_csv_file_reads_back_as_text(tmp_path):
    import pandas as pd
    partitions = [partition.encode(labels) for labels in ([0, 0, 1, 0], [4, 4, 4], list(range(70)))]
    pd.DataFrame({"partition": partitions}).to_csv(tmp_path / "cells.csv", index=False)
    assert pd.read_csv(tmp_path / "cells.csv")["partition"].tolist() == partitions


def constructed_trial(y_true, y_partial):
    """A trial of the given classes and partial labels (the seeds do not matter to a score)."""
    from src.protocol.trials import Trial
    y_true = np.asarray(y_true)
    return Trial(k=int(y_true.max()) + 1, trial=0, index=np.arange(y_true.size), y_true=y_true,
                 y_partial=np.asarray(y_partial), init_seed=0, kmeans_seed=0)


def test_the_classes_given_back_map_each_cluster_by_the_labelled_samples_alone():
    """Three classes; the clusters are the classes renamed (c -> 2, 0, 1) with two mistakes among the unknown
    samples. The map read from the labelled samples is that renaming, whatever the unknown samples say."""
    y_true = np.array([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2])
    y_partial = np.array([0, -1, -1, -1, 1, -1, -1, -1, 2, -1, -1, -1])
    name = {0: 2, 1: 0, 2: 1}
    clusters = np.array([name[c] for c in y_true])
    clusters[[2, 6]] = [name[1], name[2]]  # two unknown samples in the wrong cluster
    trial = constructed_trial(y_true, y_partial)
    free = y_partial == -1
    back = {v: c for c, v in name.items()}
    independent = np.mean([back[c] == t for c, t in zip(clusters[free], y_true[free])])
    assert independent == pytest.approx(7 / 9)
    assert partition.given_back(trial, clusters) == pytest.approx(independent)
    # the best map of the unknown samples themselves could not do better here, but a map they chose would
    # move with them: the score does not read them
    wrong = clusters.copy()
    wrong[free] = name[0]
    assert partition.given_back(trial, wrong) == pytest.approx(np.mean(y_true[free] == 0))


def test_a_cluster_left_by_the_map_takes_its_most_frequent_known_class_and_one_without_any_is_wrong():
    y_true = np.array([0, 0, 0, 1, 1, 1, 0, 1])
    y_partial = np.array([0, 0, -1, 1, -1, -1, 0, -1])
    clusters = np.array([0, 2, 2, 1, 1, 3, 0, 1])  # cluster 2 holds a known 0 after cluster 0 took class 0
    mapped = partition.class_of_clusters(clusters, y_partial)
    assert mapped[0] == 0 and mapped[1] == 1 and mapped[2] == 0 and mapped[3] == -1
    trial = constructed_trial(y_true, y_partial)
    # unknown samples 2, 4, 5, 7: cluster 2 -> 0 right, cluster 1 -> 1 right, cluster 3 -> none wrong, 1 right
    assert partition.given_back(trial, clusters) == pytest.approx(3 / 4)


def test_the_classes_given_back_are_a_label_tracks_column_only():
    y = np.repeat(np.arange(3), 4)
    row = partition.place_columns(constructed_trial(y, np.where(np.arange(12) % 4 == 0, y, -1)), y, "all")
    assert row["given_unlabelled"] == 1.0
    assert "given_unlabelled" not in partition.place_columns(constructed_trial(y, np.full(12, -1)), y, "all")

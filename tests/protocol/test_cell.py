"""The protocol: paired trials, label schemes, validation, one cell end to end on synthetic data."""

import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from sklearn.metrics import adjusted_rand_score

from src import methods
from src.errors import ConfigError
from src.protocol.cell import run_cell
from src.protocol.clustering import best_kmeans
from src.protocol.trials import label_counts, make_trial
from src.running.results import result_row
from src.running.settings import MethodSpec, check_protocol_on, freeze, protocol_spec

from helpers import AT_THE_CAP

DEFAULTS = yaml.safe_load((Path(__file__).resolve().parents[2] / "conf" / "protocol" / "unsupervised.yaml").read_text())
PROTOCOL = {
    "ks": [2, 3],
    "n_trials": 2,
    "labels": {"mode": "fraction", "fraction": 0.3, "per_class": 2},
    "rank_offset": 0,
    "kmeans_restarts": 5,
    "kmeans_metric": "euclidean",
    "kmeans_init": "random",
    "readouts": [],
}


def spec(**changes):
    """The protocol of these tests (conf/protocol/unsupervised.yaml with PROTOCOL and ``changes`` on top)."""
    return protocol_spec({**DEFAULTS, **PROTOCOL, **changes}, "toy")


def check_protocol(changes, n_classes, min_class_size):
    """The checks of a protocol before and after the data (6 classes of 10 samples, say)."""
    check_protocol_on(spec(**changes), [min_class_size] * n_classes)


def cell_row(X, method: dict, trial, **changes) -> dict:
    """The row of one cell of ``method`` (a dict as in conf/method/) under the protocol ``spec(**changes)``."""
    method = MethodSpec(method["name"], method["label"], freeze(method["params"]))
    return result_row("toy", method, 0, run_cell(X, method, trial, spec(**changes)))


@pytest.fixture
def y():
    return np.repeat(np.arange(6), 10)  # 6 classes of 10 samples


def test_trial_depends_only_on_seed_dataset_k_trial(y):
    a = make_trial(y, "yale", 3, 1, 0, PROTOCOL["labels"])
    b = make_trial(y, "yale", 3, 1, 0, PROTOCOL["labels"])
    for field in ("index", "y_true", "y_partial"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    assert (a.init_seed, a.kmeans_seed) == (b.init_seed, b.kmeans_seed)
    others = [make_trial(y, "yale", 3, 2, 0, PROTOCOL["labels"]), make_trial(y, "orl", 3, 1, 0, PROTOCOL["labels"]),
              make_trial(y, "yale", 3, 1, 1, PROTOCOL["labels"])]
    assert all(o.init_seed != a.init_seed for o in others)


def test_trial_takes_all_samples_of_k_classes_renumbered(y):
    trial = make_trial(y, "x", 4, 0, 3, PROTOCOL["labels"])
    assert trial.index.size == 40
    assert len(np.unique(y[trial.index])) == 4
    assert set(trial.y_true) == {0, 1, 2, 3}
    # renumbering keeps the class order: y_true is monotone in the original label
    assert np.all(np.diff(trial.y_true) >= 0)


def test_labelled_points_follow_the_scheme(y):
    trial = make_trial(y, "x", 3, 0, 0, PROTOCOL["labels"])
    labelled = trial.y_partial >= 0
    np.testing.assert_array_equal(trial.y_partial[labelled], trial.y_true[labelled])
    assert np.bincount(trial.y_partial[labelled]).tolist() == [3, 3, 3]  # floor(0.3 * 10)
    per_class = make_trial(y, "x", 3, 0, 0, {"mode": "per_class", "per_class": 2})
    assert np.bincount(per_class.y_partial[per_class.y_partial >= 0]).tolist() == [2, 2, 2]
    none = make_trial(y, "x", 3, 0, 0, {"mode": "none"})
    assert np.all(none.y_partial == -1)


def test_fraction_gives_at_least_one_label_per_class():
    assert label_counts(np.array([10, 3, 72]), {"mode": "fraction", "fraction": 0.1}).tolist() == [1, 1, 7]


@pytest.mark.parametrize(
    "change, match",
    [
        ({"ks": [1, 2]}, "protocol.ks contains 1"),
        ({"ks": [7]}, r"protocol.ks contains 7; each k must be an integer in \[2, 6\]"),
        ({"ks": []}, "protocol.ks is empty"),
        ({"n_trials": 0}, "protocol.n_trials=0"),
        ({"kmeans_restarts": -3}, "protocol.kmeans_restarts=-3"),
        ({"rank_offset": -1}, "protocol.rank_offset=-1"),
        ({"labels": {"mode": "fraction", "fraction": 0.0}}, "protocol.labels.fraction=0.0"),
        ({"labels": {"mode": "fraction", "fraction": 1.5}}, "protocol.labels.fraction=1.5"),
        ({"labels": {"mode": "some"}}, "protocol.labels.mode='some'"),
        ({"score_on": "train"}, "protocol.score_on='train'"),
        ({"labels": {"mode": "per_class", "per_class": 11}}, "protocol.labels.per_class=11"),
    ],
)
def test_bad_protocol_values_name_the_parameter(change, match):
    with pytest.raises(ConfigError, match=match):
        check_protocol(change, n_classes=6, min_class_size=10)


@pytest.mark.filterwarnings(AT_THE_CAP)  # 100 iterations (n_iter == 100): the cell's row is checked
def test_run_cell_on_separable_data(y):
    rng = np.random.default_rng(0)
    centers = rng.random((6, 20)) * 5
    X = centers[y] + 0.05 * rng.random((60, 20))
    trial = make_trial(y, "toy", 3, 0, 0, PROTOCOL["labels"])
    method = {"name": "nmf", "label": "NMF", "params": {"max_iter": 100}}
    row = cell_row(X, method, trial)
    assert row["acc"] == 1.0 and row["nmi"] == pytest.approx(1.0)
    assert row["n_iter"] == 100 and row["rank"] == 3 and row["n_labelled"] == 9
    again = cell_row(X, method, trial)
    assert again["acc"] == row["acc"] and again["objective"] == row["objective"]


def test_score_on_unlabelled_ignores_the_labelled_samples(y):
    X = np.random.default_rng(0).random((60, 8))
    trial = make_trial(y, "toy", 3, 0, 0, PROTOCOL["labels"])
    method = {"name": "kmeans", "label": "KMeans", "params": {}}
    everything = cell_row(X, method, trial)
    unlabelled = cell_row(X, method, trial, score_on="unlabelled")
    assert everything["acc"] != unlabelled["acc"]


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
def test_best_kmeans_keeps_the_lowest_objective(metric):
    rng = np.random.default_rng(1)
    Z = rng.random((80, 5))
    labels, best = best_kmeans(Z, 4, 20, metric, seed=3)
    singles = [best_kmeans(Z, 4, 1, metric, seed=s)[1] for s in range(20)]
    assert best <= np.mean(singles)
    # the objective reported is that of the labels returned
    if metric == "cosine":
        Z = Z / np.linalg.norm(Z, axis=1, keepdims=True)
    centroids = np.array([Z[labels == c].mean(axis=0) for c in range(4)])
    if metric == "euclidean":
        assert best == pytest.approx(((Z - centroids[labels]) ** 2).sum(), rel=1e-6)
    else:
        centroids /= np.linalg.norm(centroids, axis=1, keepdims=True)
        assert best == pytest.approx((1 - (Z * centroids[labels]).sum(axis=1)).sum(), rel=1e-6)
    labels_a, _ = best_kmeans(Z, 4, 10, metric, seed=3)
    labels_b, _ = best_kmeans(Z, 4, 10, metric, seed=3)
    np.testing.assert_array_equal(labels_a, labels_b)


def test_cosine_kmeans_groups_by_direction():
    rng = np.random.default_rng(2)
    directions = np.eye(3)
    y = np.repeat(np.arange(3), 20)
    Z = directions[y] * rng.uniform(0.1, 10, size=(60, 1)) + 0.01 * rng.random((60, 3))  # scale varies a lot
    labels, objective = best_kmeans(Z, 3, 5, "cosine", seed=0)
    from src.protocol.metrics import accuracy

    assert accuracy(y, labels) == 1.0 and objective < 0.01


def test_bad_kmeans_options():
    with pytest.raises(ConfigError, match="protocol.kmeans_metric='manhattan'"):
        best_kmeans(np.ones((4, 2)), 2, 1, "manhattan", 0)


@pytest.mark.filterwarnings(AT_THE_CAP)  # 20 iterations: the choice of sub-run is checked
def test_subruns_report_the_chosen_one_and_record_both_choices(y):
    X = np.random.default_rng(3).random((60, 8))
    trial = make_trial(y, "toy", 3, 0, 0, {"mode": "none"})
    method = {"name": "nmf", "label": "NMF", "params": {"max_iter": 20}}
    single = cell_row(X, method, trial)
    several = cell_row(X, method, trial, subruns=4)
    oracle = cell_row(X, method, trial, subruns=4, subrun_choice="accuracy")
    assert several["objective"] <= single["objective"]  # sub-run 0 is the single run
    assert oracle["acc"] == several["acc_by_accuracy"] >= max(single["acc"], several["acc"])
    assert several["acc"] == several["acc_by_objective"] and several["subruns"] == 4 and "subruns" not in single
    with pytest.raises(ConfigError, match="protocol.subrun_choice='best'"):
        check_protocol({"subrun_choice": "best"}, 6, 10)


def test_high_dimensional_kmeans_uses_elkan_with_lloyds_result(monkeypatch):
    """Above ELKAN_ABOVE_DIMS columns the Euclidean KMeans runs Elkan's exact variant: same partition."""
    from sklearn.cluster import KMeans

    import src.protocol.clustering as clustering

    rng = np.random.default_rng(5)
    centres = 3.0 * rng.random((4, 150))
    Z = centres[rng.integers(0, 4, 200)] + rng.normal(size=(200, 150))
    used = []
    original_fit = KMeans.fit

    def spy(self, *args, **kwargs):
        used.append(self.algorithm)
        return original_fit(self, *args, **kwargs)

    monkeypatch.setattr(KMeans, "fit", spy)
    labels_elkan, objective_elkan = best_kmeans(Z, 4, 5, "euclidean", seed=2)
    monkeypatch.setattr(clustering, "ELKAN_ABOVE_DIMS", 10**6)
    monkeypatch.setattr(clustering, "STACKED_UP_TO", 0)  # scikit-learn's Lloyd, not the stacked one
    labels_lloyd, objective_lloyd = best_kmeans(Z, 4, 5, "euclidean", seed=2)
    assert used == ["elkan", "lloyd"]
    # The same partition, up to the names of the clusters: the two variants round differently, and restarts
    # that reach one partition under permuted labels tie to ~1e-15, so either may be the one kept.
    assert adjusted_rand_score(labels_elkan, labels_lloyd) == 1.0
    assert objective_elkan == pytest.approx(objective_lloyd, rel=1e-10)


def noisy_blobs(y, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.random((6, 30)) * 3
    return centers[y] + 0.8 * rng.random((y.size, 30))


def test_readouts_leave_the_primary_numbers_alone(y):
    X = noisy_blobs(y)
    trial = make_trial(y, "toy", 5, 0, 0, PROTOCOL["labels"])
    method = {"name": "nmf", "label": "NMF", "params": {"max_iter": 50, "stopping": "fixed"}}
    without = cell_row(X, method, trial, readouts=[])
    readouts = ["argmax", "kmeans_once", "kmeans_best10"]
    with_all = cell_row(X, method, trial, readouts=readouts)
    assert with_all["acc"] == without["acc"] and with_all["nmi"] == without["nmi"]
    assert with_all["objective"] == without["objective"]
    assert not any(key.startswith(("acc_", "nmi_")) for key in without if not key.endswith("_unlabelled"))
    for name in readouts:
        assert 0 <= with_all[f"acc_{name}"] <= 1 and 0 <= with_all[f"nmi_{name}"] <= 1


def test_the_unlabelled_scores_leave_out_exactly_the_labelled_samples(y):
    from src.methods.core.validation import UNLABELLED
    from src.protocol.metrics import accuracy, nmi
    X = noisy_blobs(y, seed=2)
    trial = make_trial(y, "toy", 4, 0, 0, PROTOCOL["labels"])
    labelled = trial.y_partial != UNLABELLED
    assert 0 < labelled.sum() < len(labelled)
    params = {"max_iter": 40, "stopping": "fixed"}
    row = cell_row(X, {"name": "cnmf", "label": "CNMF", "params": params}, trial, assign="argmax", readouts=[])
    V = methods.make("cnmf", n_components=4, random_state=trial.init_seed, **params).fit_transform(
        X[trial.index], trial.y_partial)
    predicted = V.argmax(axis=1)
    free = [i for i in range(len(predicted)) if trial.y_partial[i] == UNLABELLED]  # by hand, index by index
    assert row["acc"] == pytest.approx(accuracy(trial.y_true, predicted))
    assert row["acc_unlabelled"] == pytest.approx(accuracy(trial.y_true[free], predicted[free]))
    assert row["nmi_unlabelled"] == pytest.approx(nmi(trial.y_true[free], predicted[free]))
    unsupervised = make_trial(y, "toy", 4, 0, 0, {"mode": "none"})
    assert "acc_unlabelled" not in cell_row(X, {"name": "nmf", "label": "NMF", "params": params}, unsupervised,
                                            readouts=[])


def test_argmax_assigns_each_sample_its_largest_coefficient(y):
    from src.protocol.metrics import accuracy, nmi
    from src.protocol.cell import largest_coefficient
    X = noisy_blobs(y, seed=1)
    trial = make_trial(y, "toy", 4, 1, 0, PROTOCOL["labels"])
    params = {"max_iter": 40, "stopping": "fixed"}
    method = {"name": "nmf", "label": "NMF", "params": params}
    row = cell_row(X, method, trial, assign="argmax", readouts=["argmax"])
    V = methods.make("nmf", n_components=4, random_state=trial.init_seed, **params).fit_transform(X[trial.index])
    labels = np.array([max(range(4), key=lambda j: V[i, j]) for i in range(V.shape[0])])  # by hand
    assert np.array_equal(largest_coefficient(V, 4), labels)
    assert row["acc"] == pytest.approx(accuracy(trial.y_true, labels))
    assert row["nmi"] == pytest.approx(nmi(trial.y_true, labels))
    assert row["acc_argmax"] == row["acc"] and np.isnan(row["kmeans_objective"])


def test_argmax_does_not_apply_to_raw_features_or_mixed_signs(y):
    from src.protocol.cell import largest_coefficient
    assert largest_coefficient(np.array([[1.0, -2.0], [0.5, 3.0]]), 2) is None
    assert largest_coefficient(np.array([[1.0, 2.0, 0.0], [0.5, 3.0, 1.0]]), 2) is None  # not of the rank
    X = noisy_blobs(y)  # nonnegative features: still no argmax readout for the KMeans baseline
    trial = make_trial(y, "toy", 3, 0, 0, PROTOCOL["labels"])
    row = cell_row(X, {"name": "kmeans", "label": "KMeans", "params": {}}, trial, assign="argmax",
                   readouts=["argmax", "kmeans_once"])
    assert np.isnan(row["acc_argmax"]) and not np.isnan(row["acc_kmeans_once"])
    assert not np.isnan(row["kmeans_objective"])  # argmax asked for, KMeans kept


@pytest.mark.parametrize("change, match", [({"assign": "largest"}, "protocol.assign='largest'"),
                                           ({"readouts": ["median"]}, "protocol.readouts"),
                                           ({"readouts": "argmax"}, "protocol.readouts")])
def test_bad_assignment_options_name_the_parameter(change, match):
    with pytest.raises(ConfigError, match=match):
        check_protocol(change, n_classes=6, min_class_size=10)


class Bare:
    """An estimator with nothing but a representation: no n_iter_, objective_history_ or converged_."""

    def __init__(self, n_components=2, random_state=None):
        self.n_components, self.random_state = n_components, random_state

    def get_params(self, deep=True):
        return {"n_components": self.n_components, "random_state": self.random_state}

    def fit_transform(self, X, y=None):
        return np.asarray(X)[:, : self.n_components]


@pytest.mark.parametrize("name", ["bare", "kmeans", "sda", "copkmeans"])
def test_the_protocol_reads_only_what_an_estimator_has(name, y, monkeypatch):
    """Iterations, objective and convergence are read where the estimator has them: an estimator without
    them gives n_iter 0, objective NaN and converged None (the values the baselines have always recorded)."""
    monkeypatch.setitem(methods.REGISTRY, "bare", Bare)
    X = noisy_blobs(y)
    trial = make_trial(y, "toy", 3, 0, 0, PROTOCOL["labels"])
    row = cell_row(X, {"name": name, "label": name, "params": {}}, trial)
    assert math.isnan(row["objective"]) and row["converged"] is None and 0 <= row["acc"] <= 1
    if name != "copkmeans":  # COP-KMeans counts the assignment steps of its kept run
        assert row["n_iter"] == 0
    else:
        assert row["n_iter"] >= 1 and math.isnan(row["kmeans_objective"])


def test_a_cells_row_has_its_columns_in_one_order(y):
    """result_row names every column: the cell's, then (for a run) the settings, params and identity."""
    from src.running.results import RunIdentity
    X = noisy_blobs(y)
    trial = make_trial(y, "toy", 2, 0, 0, PROTOCOL["labels"])
    method = MethodSpec("nmf", "NMF", freeze({"max_iter": 5, "stopping": "fixed"}))
    cell = run_cell(X, method, trial, spec(readouts=["argmax"]))
    assert list(result_row("toy", method, 0, cell)) == [
        "dataset", "method", "estimator", "k", "trial", "seed", "acc", "nmi", "ari", "rank", "n_iter", "converged",
        "objective", "kmeans_objective", "fit_seconds", "kmeans_seconds", "acc_argmax", "nmi_argmax",
        "given_argmax", "acc_unlabelled", "nmi_unlabelled", "ari_unlabelled", "given_unlabelled", "n_samples",
        "n_labelled", "partition"]
    settings = {"dataset": {"name": "toy", "preprocess": "none"}, "method": method.as_dict(),
                "protocol": {"labels": {"mode": "none"}, "rank_offset": 0}, "seed": 0}
    row = result_row("toy", method, 0, cell, RunIdentity(settings, "abc", "def"), 12.5)
    assert list(row)[26:] == ["dataset_preprocess", "param_max_iter", "param_stopping", "protocol_labels_mode",
                              "protocol_rank_offset", "params", "config_hash", "code_fingerprint", "peak_rss_mb"]
    assert row["params"] == '{"max_iter": 5, "stopping": "fixed"}' and row["peak_rss_mb"] == 12.5


def test_a_fits_output_that_no_step_can_read_is_refused_on_one_line():
    from src.protocol.cell import check_output
    with pytest.raises(ValueError, match=r"^fit_transform returned shape \(4, 2\), not \(5, n_components\)$"):
        check_output(np.ones((4, 2)), 5, direct=False)  # the numbers meant, no placeholder
    with pytest.raises(ValueError, match=r"^fit_predict returned shape \(5, 2\), not \(5,\)$"):
        check_output(np.ones((5, 2)), 5, direct=True)
    check_output(np.ones((5, 2)), 5, direct=False)
    check_output(np.arange(5), 5, direct=True)
    for output, direct, message in ((np.ones((4, 2)), False, "shape"), (np.ones(5), False, "shape"),
                                    (np.ones((5, 2)), True, "shape"), (np.full((5, 2), np.nan), False, "10 NaN"),
                                    (np.array([1.0, np.inf, 0, 0, 1]), True, "1 NaN or infinite")):
        with pytest.raises(ValueError, match=message):
            check_output(output, 5, direct)


def test_a_class_clusters_directly_when_it_says_so_or_gives_only_a_clustering():
    from src import methods
    from src.protocol.cell import clusters_directly
    assert clusters_directly(methods.COPKMeans) and not clusters_directly(methods.NMF)
    direct = {name for name, cls in methods.REGISTRY.items() if clusters_directly(cls)}
    assert direct == {"copkmeans", "label_spreading", "knn"}  # the references' classes are their partition

    class OnlyPredicts:
        def fit_predict(self, X, y=None):
            return np.zeros(len(X), dtype=int)

    assert clusters_directly(OnlyPredicts)


class Fixed:
    """An estimator whose representation is given: the readouts by the labels read a known space."""

    representation = None

    def __init__(self, n_components=2, random_state=None):
        self.n_components, self.random_state = n_components, random_state

    def get_params(self, deep=True):
        return {"n_components": self.n_components, "random_state": self.random_state}

    def fit_transform(self, X, y=None):
        return np.array(Fixed.representation, dtype=float)


def test_the_readouts_by_the_labels_classify_in_the_representation(monkeypatch):
    """On a line where class 0 is labelled at 0 and class 1 at 10, the nearest labelled neighbour gives the
    samples below 5 class 0 and the others class 1, whatever the samples themselves are; label spreading on
    two far groups gives each group its label."""
    from src.protocol.trials import Trial
    positions = np.array([0.0, 1.0, 2.0, 4.9, 5.2, 10.0, 9.0, 8.0, 3.0, 7.0])
    y_true = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, 1])  # 3.0 and 7.0 are class 1
    y_partial = np.array([0, -1, -1, -1, -1, 1, -1, -1, -1, -1])
    Fixed.representation = positions[:, None]
    monkeypatch.setitem(methods.REGISTRY, "fixed", Fixed)
    trial = Trial(k=2, trial=0, index=np.arange(10), y_true=y_true, y_partial=y_partial, init_seed=0, kmeans_seed=0)
    X = np.random.default_rng(0).random((10, 3))  # not what the readouts read
    row = cell_row(X, {"name": "fixed", "label": "Fixed", "params": {}}, trial,
                   readouts=["nearest_labelled", "spread_labelled"], labels={"mode": "fraction", "fraction": 0.1})
    nearest = (positions >= 5).astype(int)
    free = y_partial == -1
    assert row["given_nearest_labelled"] == pytest.approx(np.mean(nearest[free] == y_true[free]))
    assert row["given_nearest_labelled"] == pytest.approx(7 / 8)  # 3.0 is class 1, nearer class 0's 0.0
    from src.protocol.metrics import accuracy
    assert row["acc_nearest_labelled"] == pytest.approx(accuracy(y_true, nearest))
    Fixed.representation = np.r_[np.zeros(5), np.full(5, 100.0)][:, None] + np.arange(10)[:, None] * 0.01
    spread = cell_row(X, {"name": "fixed", "label": "Fixed", "params": {}}, trial,
                      readouts=["spread_labelled"], labels={"mode": "fraction", "fraction": 0.1})
    assert spread["given_spread_labelled"] == pytest.approx(np.mean(y_true[free] == np.repeat([0, 1], 5)[free]))


def test_a_readout_by_the_labels_does_not_apply_without_a_label(y):
    X = noisy_blobs(y)
    trial = make_trial(y, "toy", 3, 0, 0, {"mode": "none"})
    row = cell_row(X, {"name": "kmeans", "label": "KMeans", "params": {}}, trial, readouts=["nearest_labelled"],
                   labels={"mode": "none"})
    assert math.isnan(row["acc_nearest_labelled"]) and "given_nearest_labelled" not in row


def test_the_nearest_labelled_readout_of_the_samples_is_the_nearest_neighbour_reference(y):
    """KMeans's representation is the samples: its readout by the nearest labelled neighbour is the knn
    reference's own cell."""
    X = noisy_blobs(y)
    trial = make_trial(y, "toy", 4, 1, 0, PROTOCOL["labels"])
    readout = cell_row(X, {"name": "kmeans", "label": "KMeans", "params": {}}, trial, readouts=["nearest_labelled"])
    reference = cell_row(X, {"name": "knn", "label": "kNN", "params": {}}, trial)
    assert readout["given_nearest_labelled"] == reference["given_unlabelled"]
    assert readout["acc_nearest_labelled"] == reference["acc"]


def test_a_shared_cell_is_read_out_by_each_runs_own_labels(monkeypatch):
    """One fit of a method that takes no labels serves every label track: a run whose trial labels other
    samples reads the representation out by its own labels, as a cell computed for it would, and keeps the
    label-free readouts of the fit; a run that names no readout by the labels gets none."""
    from src.protocol.cell import readouts_for
    from src.protocol.trials import Trial
    positions = np.array([0.0, 1.0, 2.0, 4.9, 5.2, 10.0, 9.0, 8.0, 3.0, 7.0])
    y_true = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, 1])
    Fixed.representation = positions[:, None]
    monkeypatch.setitem(methods.REGISTRY, "fixed", Fixed)
    method = MethodSpec("fixed", "Fixed", freeze({}))

    def trial(y_partial):
        return Trial(k=2, trial=0, index=np.arange(10), y_true=y_true, y_partial=np.array(y_partial),
                     init_seed=0, kmeans_seed=0)

    ends = trial([0, -1, -1, -1, -1, 1, -1, -1, -1, -1])  # labelled at 0 and 10
    middle = trial([-1, -1, -1, 0, -1, 1, -1, -1, -1, -1])  # labelled at 4.9 and 10
    protocol = spec(readouts=["kmeans_once", "nearest_labelled"], labels={"mode": "fraction", "fraction": 0.1})
    shared = run_cell(np.zeros((10, 3)), method, ends, protocol)
    own = run_cell(np.zeros((10, 3)), method, middle, protocol)
    read = readouts_for(shared, middle, ["kmeans_once", "nearest_labelled"], "all")
    assert read["nearest_labelled"] == pytest.approx(own.chosen.readouts["nearest_labelled"])
    assert read["nearest_labelled"]["given"] == pytest.approx(5 / 8)  # 3.0, 5.2 and 7.0 are nearer 4.9
    assert shared.chosen.readouts["nearest_labelled"]["given"] == pytest.approx(7 / 8)
    assert read["kmeans_once"] == shared.chosen.readouts["kmeans_once"]
    assert readouts_for(shared, middle, ["kmeans_once"], "all").keys() == {"kmeans_once"}

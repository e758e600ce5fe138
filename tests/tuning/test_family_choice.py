"""The choice as a scikit-learn estimator (src/tuning/estimator.py): labels back for every sample, the
candidates' scores as GridSearchCV gives them, a failing candidate costing only itself, bad labels refused."""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from src.tuning.estimator import FamilyChoice, class_of_clusters, mapped_accuracy

#: scikit-learn's checks that fit a clusterer on X alone: the choice needs the known labels (y required).
WITHOUT_Y = {"check_fit_score_takes_y": "fits on X and y: the known labels choose",
             "check_clustering": "fits on X and y: the known labels choose"}

METHODS = ["kmeans", "nmf", "gnmf", "cnmf", "sda"]
GRIDS = {"gnmf": {"alpha": [1.0, 100.0]}, "sda": {"alpha": [0.1, 1.0], "beta": [0.1]}}


def blobs(noise=0.4, seed=0, n=12, known=0.4):
    """Three classes of ``n`` non-negative samples in 8 features, a share ``known`` of their labels told."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(3), n)
    X = np.abs(rng.random((3, 8))[y] * 3 + rng.normal(0, noise, (3 * n, 8)))
    told = np.where(rng.random(y.size) < known, y, -1)
    for c in range(3):  # at least two known a class
        told[np.flatnonzero(y == c)[:2]] = c
    return X, y, told


def test_every_sample_gets_a_class_back_in_the_labels_own_values():
    X, y, told = blobs()
    named = np.where(told >= 0, 10 * told, -1)  # classes 0, 10, 20
    found = FamilyChoice(methods=METHODS, grids=GRIDS, kmeans_restarts=2).fit(X, named)
    assert set(found.labels_) <= {0, 10, 20} and (found.labels_ == 10 * y).mean() >= 0.9
    assert list(found.classes_) == [0, 10, 20] and found.clusters_.shape == y.shape
    assert found.best_method_ in METHODS and found.selection_ in ("held-out", "tie: prior", "too few: prior")


def test_the_candidates_scores_are_laid_out_as_grid_search_gives_them():
    X, y, told = blobs()
    found = FamilyChoice(methods=METHODS, grids=GRIDS, n_repeats=2, kmeans_restarts=2).fit(X, told)
    results = found.cv_results_
    assert [p["method"] for p in results["params"]] == ["kmeans", "nmf", "gnmf", "gnmf", "cnmf", "sda", "sda"]
    splits = np.column_stack([results[f"split{i}_test_score"] for i in range(4)])  # 2 folds x 2 deals
    assert np.allclose(splits.mean(axis=1), results["mean_test_score"])
    assert results["rank_test_score"].min() == 1 and results["mean_test_score"][found.best_index_] == found.best_score_
    assert found.best_score_ == np.nanmax(results["mean_test_score"])
    assert (results["n_scored"] >= 2).all()


def test_the_same_seed_gives_the_same_choice_and_labels():
    X, y, told = blobs(noise=1.0)
    first, second = (FamilyChoice(methods=METHODS, grids=GRIDS, kmeans_restarts=2, random_state=3).fit(X, told)
                     for _ in range(2))
    assert first.best_index_ == second.best_index_ and (first.labels_ == second.labels_).all()
    assert np.array_equal(first.cv_results_["mean_test_score"], second.cv_results_["mean_test_score"],
                          equal_nan=True)


def test_a_candidates_scores_do_not_depend_on_the_other_candidates():
    """Every candidate of a fold starts from the same seeds, as every method of a benchmark trial does."""
    X, y, told = blobs(noise=1.0)
    alone = FamilyChoice(methods=["gnmf"], grids=GRIDS, kmeans_restarts=2, n_repeats=2).fit(X, told)
    beside = FamilyChoice(methods=["kmeans", "gnmf"], grids=GRIDS, kmeans_restarts=2, n_repeats=2).fit(X, told)
    assert np.array_equal(alone.cv_results_["mean_test_score"], beside.cv_results_["mean_test_score"][1:])
    assert np.array_equal(alone.cv_results_["split3_test_score"], beside.cv_results_["split3_test_score"][1:])


def test_the_fits_run_deal_by_deal_and_fold_by_fold_every_candidate_in_each_in_a_drawn_order():
    """The fits done at any moment are a fair sample of the candidates, so the pace so far prices the rest."""
    choice = FamilyChoice(methods=METHODS, grids=GRIDS, n_repeats=2, random_state=0)
    found = choice.candidates()
    tasks = choice._tasks(found)
    first = [c for c, deal, fold in tasks[:len(found)]]
    assert sorted(first) == list(range(len(found))) and first != sorted(first)  # every candidate once, shuffled
    assert [(deal, fold or 0) for _, deal, fold in tasks] == sorted((deal, fold or 0) for _, deal, fold in tasks)
    assert sorted(tasks, key=lambda t: (t[0], t[1], -1 if t[2] is None else t[2])) == \
        [(c, deal, fold) for c in range(len(found)) for deal in range(2)
         for fold in ([0, 1] if found[c][1] in ("cnmf", "sda") else [None])]  # every fit once
    assert choice.fits() == [found[c][1] for c, _, _ in tasks]


def test_fits_run_at_once_over_processes():
    X, y, told = blobs()
    one = FamilyChoice(methods=METHODS, grids=GRIDS, kmeans_restarts=2).fit(X, told)
    two = FamilyChoice(methods=METHODS, grids=GRIDS, kmeans_restarts=2, n_jobs=2).fit(X, told)
    assert len(two.cv_results_["params"]) == len(one.cv_results_["params"]) and two.best_method_ in METHODS
    assert (two.labels_ == y).mean() >= 0.9


def test_a_candidate_that_fails_costs_its_own_score_never_the_choice():
    X, y, told = blobs()
    found = FamilyChoice(methods=["kmeans", "gnmf"], grids={"gnmf": {"alpha": [-1.0, 100.0]}},
                         kmeans_restarts=2).fit(X, told)
    failed = [i for i, p in enumerate(found.cv_results_["params"]) if p.get("alpha") == -1.0]
    assert np.isnan(found.cv_results_["mean_test_score"][failed]).all()
    assert found.cv_results_["rank_test_score"][failed].min() == 3 and found.best_params_.get("alpha") != -1.0


@pytest.mark.parametrize("labels, says", [
    (lambda told: np.full_like(told, -1), "no label is known"),
    (lambda told: np.where(told == 0, 0, -1), "a single class is known"),
    (lambda told: told + 0.5, "must be integers"),
    (lambda told: told.astype(str), "must be integers"),
])
def test_labels_that_cannot_choose_are_refused_on_one_line(labels, says):
    X, y, told = blobs()
    with pytest.raises(ValueError, match=says) as info:
        FamilyChoice(methods=["kmeans"], kmeans_restarts=2).fit(X, labels(told))
    assert "\n" not in str(info.value)


def test_clusters_map_to_classes_one_to_one_on_the_known_samples_and_the_rest_by_majority():
    clusters = np.array([0, 0, 1, 1, 2, 2, 3])
    told = np.array([1, -1, 0, 0, 0, -1, -1])
    assert class_of_clusters(clusters, told).tolist() == [1, 0, 0, -1]  # cluster 2 left by the map: its majority


@parametrize_with_checks([FamilyChoice(methods=["kmeans", "nmf"], kmeans_restarts=2)],
                         expected_failed_checks=lambda estimator: WITHOUT_Y)
def test_scikit_learns_estimator_checks_that_apply(estimator, check):
    check(estimator)


def test_the_classed_score_maps_the_clusters_by_the_other_folds_labels_never_the_held_ones():
    """The estimate the report gives: a held-out sample classed as labels_ classes an unknown one."""
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2])
    clusters = np.array([0, 0, 0, 1, 1, 1, 1, 0, 2, 2, 2, 2])  # one sample of class 0 and of class 1 swapped
    held = np.zeros(y.size, dtype=bool)
    held[[0, 3, 4, 7, 8]] = True  # the two swapped samples, a right one of each of classes 0 and 1, one of 2
    # told: cluster 0 holds class 0 twice, cluster 1 class 1 twice, cluster 2 class 2: the held 3 and 7 are wrong
    assert mapped_accuracy(clusters, y, held) == pytest.approx(3 / 5)
    # hold out every sample of class 2 and cluster 2 has no told sample: its held samples cannot be classed
    # right, where the best map for the held samples themselves would class them all right
    assert mapped_accuracy(clusters, y, held | (y == 2)) == pytest.approx(2 / 8)


def test_cv_results_give_each_split_the_classed_score_beside_the_held_out_ac():
    X, y, told = blobs()
    found = FamilyChoice(methods=["kmeans", "sda"], grids=GRIDS, kmeans_restarts=2).fit(X, told)
    results = found.cv_results_
    classed = np.column_stack([results[f"split{i}_classed_score"] for i in range(2)])
    assert np.allclose(classed.mean(axis=1), results["mean_classed_score"])
    assert ((classed >= 0) & (classed <= 1)).all() and results["mean_classed_score"][found.best_index_] >= 0.8

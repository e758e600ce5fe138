"""The choice as a scikit-learn estimator (src/choice/estimator.py): every candidate a method, a setting and a
readout, scored by the classes it gives back to held-out known samples; labels back for every sample with
their confidence; the candidates' scores as GridSearchCV gives them; a failing candidate costing only itself;
bad labels refused."""

import warnings

import numpy as np
import pytest
from sklearn.neighbors import KNeighborsClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

from src.choice import estimator, prior, rule
from src.choice.estimator import FEW_A_CLASS, FamilyChoice, fit_once, fit_task
from src.choice.readouts import readouts_of

#: scikit-learn's checks that fit a clusterer on X alone: the choice needs the known labels (y required).
WITHOUT_Y = {"check_fit_score_takes_y": "fits on X and y: the known labels choose",
             "check_clustering": "fits on X and y: the known labels choose"}

METHODS = ["kmeans", "nmf", "gnmf", "cnmf", "sda", "label_spreading"]
GRIDS = {"gnmf": {"alpha": [1.0, 100.0]}, "sda": {"alpha": [0.1, 1.0], "beta": [0.1]},
         "label_spreading": {"n_neighbors": [7], "alpha": [0.2]}}


def blobs(noise=0.4, seed=0, n=12, known=0.4):
    """Three classes of ``n`` non-negative samples in 8 features, a share ``known`` of their labels told."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(3), n)
    X = np.abs(rng.random((3, 8))[y] * 3 + rng.normal(0, noise, (3 * n, 8)))
    told = np.where(rng.random(y.size) < known, y, -1)
    for c in range(3):  # at least two known a class
        told[np.flatnonzero(y == c)[:2]] = c
    return X, y, told


def test_every_sample_gets_a_class_back_in_the_labels_own_values_with_its_confidence():
    X, y, told = blobs()
    named = np.where(told >= 0, 10 * told, -1)  # classes 0, 10, 20
    found = FamilyChoice(methods=METHODS, grids=GRIDS, kmeans_restarts=2).fit(X, named)
    assert set(found.labels_) <= {0, 10, 20} and (found.labels_ == 10 * y).mean() >= 0.9
    assert list(found.classes_) == [0, 10, 20] and found.clusters_.shape == y.shape
    assert (found.labels_[told >= 0] == named[told >= 0]).all() and (found.confidence_[told >= 0] == 1).all()
    assert ((found.confidence_ >= 0) & (found.confidence_ <= 1)).all()
    assert found.best_method_ in METHODS and found.selection_ in rule.REASONS


def test_the_candidates_are_each_setting_with_each_readout_and_the_references_at_theirs():
    choice = FamilyChoice(methods=["copkmeans", "sda", "label_spreading"], grids=GRIDS)
    found = choice.candidates()
    assert [(c.name, c.readout) for c in found][:4] == [("copkmeans", "clusters"), ("sda", "clusters"),
                                                         ("sda", "nearest_labelled"), ("sda", "spread_labelled")]
    assert len(found) == 1 + 2 * 3 + 1  # SDA's two settings (one axis at a time), three readouts each
    assert {c.fit for c in found if c.name == "sda" and c.default} == {1}  # one fit, three readouts


def test_the_candidates_scores_are_laid_out_as_grid_search_gives_them():
    X, y, told = blobs()
    found = FamilyChoice(methods=METHODS, grids=GRIDS, n_folds=2, n_repeats=2, kmeans_restarts=2).fit(X, told)
    results = found.cv_results_
    assert [p["method"] for p in results["params"]][:4] == ["kmeans", "kmeans", "kmeans", "nmf"]
    splits = np.column_stack([results[f"split{i}_test_score"] for i in range(4)])  # 2 folds x 2 deals
    assert np.allclose(splits.mean(axis=1), results["mean_test_score"])
    acs = np.column_stack([results[f"split{i}_ac_score"] for i in range(4)])
    assert np.allclose(acs.mean(axis=1), results["mean_ac_score"])
    assert (acs >= splits - 1e-12).all()  # the held-out AC maps by the held labels themselves: never lower
    assert results["rank_test_score"].min() == 1 and results["mean_test_score"][found.best_index_] == found.best_score_
    assert (results["n_scored"] >= 2).all() and np.isnan(results["p_vs_prior"][found.prior_index_])


@pytest.mark.parametrize("name, fold", [("knn", 0), ("sda", 1), ("kmeans", None)])
def test_a_held_out_samples_class_is_made_from_the_other_folds_labels_only(name, fold):
    """Change every label of the held-out fold and each readout gives every sample the same class: the score
    depends on the held-out labels only through whether the classes given are right."""
    X, y, told = blobs(noise=1.0)
    deal = np.where(told >= 0, np.arange(told.size) % 2, -1)
    changed = np.where(deal == (fold or 0), (told + 1) % 3, told)
    params = FamilyChoice().base_params(name)
    found = [fit_task(X, name, params, labels, deal, fold, 2, readouts_of(name), 3, np.random.SeedSequence(0), 2)[0]
             for labels in (told, changed)]
    held = fold or 0
    for readout in readouts_of(name):
        assert np.array_equal(found[0][held][readout], found[1][held][readout])


@pytest.mark.parametrize("name, fold", [("knn", 0), ("sda", 2), ("kmeans", None)])
def test_a_fit_told_one_folds_labels_only_sees_no_other_folds_label(name, fold):
    """The estimate's second label count: change every label outside the told fold and each readout gives
    every sample the same class."""
    X, y, told = blobs(noise=1.0)
    deal = np.where(told >= 0, np.arange(told.size) % 3, -1)
    own = fold or 0
    changed = np.where((deal >= 0) & (deal != own), (told + 1) % 3, told)
    params = FamilyChoice().base_params(name)
    found = [fit_task(X, name, params, labels, deal, fold, 3, readouts_of(name), 3, np.random.SeedSequence(0), 2,
                      only=True)[0] for labels in (told, changed)]
    for readout in readouts_of(name):
        assert np.array_equal(found[0][own][readout], found[1][own][readout])


def test_the_choice_starts_from_the_priors_candidate_and_stays_there_without_evidence():
    X, y, told = blobs(noise=1.0)
    found = FamilyChoice(methods=METHODS, grids=GRIDS, kmeans_restarts=2, prior=["CNMF + nearest labelled"]).fit(X, told)
    start = found.candidates()[found.prior_index_]
    assert (start.name, start.readout, start.default) == ("cnmf", "nearest_labelled", True)
    if found.selection_ == "prior":
        assert found.best_index_ == found.prior_index_
    else:  # moved: on evidence, past the Bonferroni level
        passed = found.cv_results_["p_vs_prior"][found.best_index_]
        assert passed * (len(found.candidates()) - 1) <= found.alpha_


def test_the_rules_level_and_the_priors_order_are_the_shipped_benchmarks_unless_told(monkeypatch):
    X, y, told = blobs()
    monkeypatch.setattr(prior, "shipped_rule", lambda: ("regret", 0.2))
    asked = []
    monkeypatch.setattr(prior, "shipped_prior", lambda share, how: asked.append(how) or ["KMeans"])
    found = FamilyChoice(methods=["kmeans", "knn"], kmeans_restarts=2).fit(X, told)
    assert (found.alpha_, found.prior_how_, asked) == (0.2, "regret", ["regret"])
    found = FamilyChoice(methods=["kmeans", "knn"], kmeans_restarts=2, alpha=0.01, prior=["kNN"]).fit(X, told)
    assert (found.alpha_, found.prior_how_, asked) == (0.01, None, ["regret"])


@pytest.mark.parametrize("alpha", [0, 1.5, "high", True, float("nan")])
def test_a_level_the_rule_cannot_run_at_is_refused_on_one_line(alpha):
    X, y, told = blobs()
    with pytest.raises(ValueError, match="must be 'shipped' or a number in"):
        FamilyChoice(methods=["kmeans"], alpha=alpha).fit(X, told)


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
    assert np.array_equal(alone.cv_results_["mean_test_score"], beside.cv_results_["mean_test_score"][3:])
    assert np.array_equal(alone.cv_results_["split3_test_score"], beside.cv_results_["split3_test_score"][3:])


def test_the_fits_run_in_rounds_one_of_each_method_the_dearest_first():
    """Every method has run once by the end of the first round, so the time left paces each by its own."""
    choice = FamilyChoice(methods=METHODS, grids=GRIDS, n_folds=2, n_repeats=2, random_state=0)
    setups = choice._setups(choice.candidates())
    prices = {"kmeans": 1.0, "nmf": 5.0, "gnmf": 9.0, "cnmf": 7.0, "sda": 2.0, "label_spreading": 0.5}
    tasks = choice._tasks(setups, 2, 2, prices)
    every = [(f, deal, fold) for f in range(len(setups)) for deal in range(2)
             for fold in ([0, 1] if setups[f][0] in ("cnmf", "sda", "label_spreading") else [None])]
    assert sorted(tasks, key=str) == sorted(every, key=str)  # every fit once
    names = [setups[f][0] for f, _, _ in tasks]
    assert names[:len(METHODS)] == sorted(METHODS, key=lambda name: -prices[name])  # the first round
    for name in METHODS:  # a method's k-th fit runs in the k-th round: after every method's (k-1)-th
        rounds = [sum(n == name for n in names[:i]) for i, n in enumerate(names) if n == name]
        assert rounds == list(range(names.count(name)))
    assert tasks == choice._tasks(setups, 2, 2, prices)  # the same seed, the same order
    own = [t for t in tasks if setups[t[0]][0] == "gnmf"]
    other = FamilyChoice(methods=METHODS, grids=GRIDS, n_folds=2, n_repeats=2, random_state=1)
    assert own != [t for t in other._tasks(setups, 2, 2, prices) if setups[t[0]][0] == "gnmf"]  # drawn
    assert [setups[f][0] for f, _, _ in choice._tasks(setups, 2, 2)][:len(METHODS)] == METHODS  # unpriced
    assert choice.fits() == [setups[f][0] for f, _, _ in choice._tasks(setups, 2, 2)]


def test_no_result_depends_on_the_order_the_prices_give():
    X, y, told = blobs()

    class Priced(list):
        prices = {"kmeans": 9.0, "nmf": 1.0, "gnmf": 3.0, "cnmf": 2.0, "sda": 8.0, "label_spreading": 7.0}

        def __call__(self, name, seconds=None):
            self.append(name)

    progress = Priced()
    priced = FamilyChoice(methods=METHODS, grids=GRIDS, kmeans_restarts=2).fit(X, told, progress=progress)
    plain = FamilyChoice(methods=METHODS, grids=GRIDS, kmeans_restarts=2).fit(X, told)
    assert progress[:len(METHODS)] == sorted(METHODS, key=lambda name: -Priced.prices[name])
    assert np.array_equal(priced.cv_results_["mean_test_score"], plain.cv_results_["mean_test_score"],
                          equal_nan=True)
    assert np.array_equal(priced.labels_, plain.labels_)


def test_the_fits_forecast_for_the_estimate_are_the_priors_candidate_and_its_first_reference():
    X, y, told = blobs()
    choice = FamilyChoice(methods=METHODS, grids=GRIDS, prior=["GNMF", "LabelSpreading"], estimate_folds=3,
                          estimate_repeats=2)
    names = choice.fits(told)
    assert names[:len(choice.fits())] == choice.fits()
    # 2 deals; 3 folds each; at two label counts (told all folds' labels but one, one fold's only)
    assert sorted(names[len(choice.fits()):]) == ["gnmf"] * 4 + ["label_spreading"] * 12
    two = FamilyChoice(methods=METHODS, grids=GRIDS, prior=["GNMF", "LabelSpreading"], estimate_folds=2)
    assert sorted(two.fits(told)[len(two.fits()):]) == ["gnmf"] * 2 + ["label_spreading"] * 4  # one count


def test_the_folds_that_choose_are_the_benchmarks_and_the_estimate_is_dealt_afresh():
    """The rule runs on the evidence its level was chosen on (the benchmark's two folds, dealt once); the
    estimate is the chosen candidate's and the best reference's share right on deals of their own, here checked
    against scikit-learn's one-neighbour classifier fitted on each split's other folds."""
    from sklearn.neighbors import KNeighborsClassifier

    from src.tuning.selection import FOLDS
    assert (FamilyChoice().n_folds, FamilyChoice().n_repeats) == (FOLDS, 1)
    X, y, told = blobs(noise=1.5, n=20)
    found = FamilyChoice(methods=["kmeans", "knn"], grids={"knn": {"n_neighbors": [1]}}, kmeans_restarts=2,
                         prior=["kNN"], estimate_folds=3, estimate_repeats=2).fit(X, told)
    reference = found.reference_index_
    assert found.candidates()[reference].name == "knn" and set(found.estimates_) == {found.best_index_, reference}
    shares, few, many_right, few_right = [], [], np.zeros(y.size), np.zeros(y.size)
    for deal in range(2):
        folds = found._deal(told, 3, (4, deal))
        for fold in range(3):
            train, held = (told >= 0) & (folds != fold), folds == fold
            given = KNeighborsClassifier(1).fit(X[train], told[train]).predict(X[held])
            shares.append(np.mean(given == told[held]))
            many_right[held] += given == told[held]
            train, held = folds == fold, (folds >= 0) & (folds != fold)  # the second count: the fold's own only
            given = KNeighborsClassifier(1).fit(X[train], told[train]).predict(X[held])
            few.append(np.mean(given == told[held]))
            few_right[held] += given == told[held]
    assert np.allclose(found.estimates_[reference], shares) and np.allclose(found.few_estimates_[reference], few)
    scored = told >= 0
    step = np.log(3 / 2) / np.log(2)  # the line straight in log(labels) through 1/3 and 2/3 of them, read at all
    line = (1 + step) * many_right[scored] / 2 - step * few_right[scored] / 4
    assert found.estimate_intervals_[reference][0] == pytest.approx(np.clip(line.mean(), 0, 1))
    share, low, high = found.estimate_intervals_[found.best_index_]
    assert found.estimate_ == share and 0 <= low <= share <= high <= 1
    chose = [found.cv_results_[f"split{i}_test_score"][reference] for i in range(FOLDS)]
    assert not np.allclose(np.mean(chose), np.mean(shares))  # another deal, another score


def test_below_three_estimate_folds_the_estimate_is_the_held_out_share():
    X, y, told = blobs(noise=1.5, n=20)
    found = FamilyChoice(methods=["knn"], grids={"knn": {"n_neighbors": [1]}}, estimate_folds=2,
                         estimate_repeats=1).fit(X, told)
    assert found.estimate_stages() == (False,) and found.few_estimates_ == {}
    folds = found._deal(told, 2, (4, 0))
    sizes = [int((folds == fold).sum()) for fold in range(2)]
    held_out = np.dot(found.estimates_[found.best_index_], sizes) / sum(sizes)  # every known sample once
    assert found.estimate_ == pytest.approx(held_out)


def test_fits_run_at_once_over_processes():
    X, y, told = blobs()
    one = FamilyChoice(methods=METHODS, grids=GRIDS, kmeans_restarts=2).fit(X, told)
    two = FamilyChoice(methods=METHODS, grids=GRIDS, kmeans_restarts=2, n_jobs=2).fit(X, told)
    assert np.array_equal(two.cv_results_["mean_test_score"], one.cv_results_["mean_test_score"], equal_nan=True)
    assert (two.labels_ == y).mean() >= 0.9


def test_a_candidate_that_fails_costs_its_own_score_never_the_choice():
    X, y, told = blobs()
    found = FamilyChoice(methods=["kmeans", "gnmf"], grids={"gnmf": {"alpha": [-1.0, 100.0]}},
                         kmeans_restarts=2).fit(X, told)
    failed = [i for i, p in enumerate(found.cv_results_["params"]) if p.get("alpha") == -1.0]
    assert len(failed) == 3 and np.isnan(found.cv_results_["mean_test_score"][failed]).all()
    assert found.cv_results_["rank_test_score"][failed].min() > 3 and found.best_params_.get("alpha") != -1.0


def few_a_class():
    """Two known samples of each of 24 classes (and one unknown): a fold's fit is told one a class."""
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(24), 3)
    X = np.abs(rng.random((24, 6))[y] + rng.normal(0, 0.1, (y.size, 6)))
    return X, np.where(np.arange(y.size) % 3 < 2, y, -1)


def test_what_a_fit_warns_is_counted_never_printed(recwarn, monkeypatch):
    """A method that warns in every fit: the choice counts it in ``warnings_`` and shows nothing."""
    def warning_fit(*args):
        warnings.warn("a method's own warning", UserWarning)
        return fit_once(*args)

    monkeypatch.setattr(estimator, "fit_once", warning_fit)
    X, told = few_a_class()
    found = FamilyChoice(methods=["knn"], grids={"knn": {"n_neighbors": [1]}}, n_folds=2, n_repeats=1).fit(X, told)
    assert not recwarn.list
    # the two fits that choose and the estimate's twelve (3 folds x 2 deals at two label counts); the final
    # fit's are said by the scoring fits'
    assert found.warnings_ == ["knn: UserWarning in 14 of 14 fits: a method's own warning"]


def test_the_folds_few_labels_a_class_are_no_warning(recwarn):
    """A fold's classifier told one known sample of each of 24 classes has more classes than half its samples,
    which scikit-learn takes for a regression target; the labels were checked to be classes, so the choice
    does not count it (``FEW_A_CLASS``), while the test still sees that scikit-learn raises it."""
    X, told = few_a_class()
    found = FamilyChoice(methods=["knn"], grids={"knn": {"n_neighbors": [1]}}, n_folds=2, n_repeats=1).fit(X, told)
    assert not recwarn.list and found.warnings_ == []
    with pytest.warns(UserWarning, match=FEW_A_CLASS):
        KNeighborsClassifier(n_neighbors=1).fit(X[told >= 0][::2], told[told >= 0][::2])


@pytest.mark.parametrize("params, says", [({"n_folds": 1}, "n_folds=1"), ({"n_repeats": 0}, "n_repeats=0"),
                                           ({"n_folds": 2.5}, "n_folds=2.5"), ({"estimate_folds": 1},
                                                                               "estimate_folds=1"),
                                           ({"estimate_repeats": 0}, "estimate_repeats=0")])
def test_folds_and_deals_that_cannot_score_are_refused_on_one_line(params, says):
    X, y, told = blobs()
    with pytest.raises(ValueError, match=says):
        FamilyChoice(methods=["kmeans"], **params).fit(X, told)


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


@parametrize_with_checks([FamilyChoice(methods=["kmeans", "knn"], kmeans_restarts=2)],
                         expected_failed_checks=lambda estimator: WITHOUT_Y)
def test_scikit_learns_estimator_checks_that_apply(estimator, check):
    check(estimator)

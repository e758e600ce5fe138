"""The report of python -m src.cluster (src/presentation/cluster_report.py): one row a method, the estimate's
interval, the best reference beside the choice, and the rule's course in words."""

import numpy as np

from src.choice.estimator import Candidate
from src.presentation import cluster_report
from src.presentation.figures import pyplot


def found_and_results():
    """Four candidates of three methods: SDA's clusters and nearest labelled, LabelSpreading, KMeans failed."""
    found = [Candidate("SDA", "sda", {"alpha": 0.1}, True, "clusters", 0),
             Candidate("SDA", "sda", {"alpha": 0.1}, True, "nearest_labelled", 0),
             Candidate("LabelSpreading", "label_spreading", {}, True, "own", 1),
             Candidate("KMeans", "kmeans", {}, True, "clusters", 2)]
    splits = np.array([[0.4, 0.5], [0.6, 0.7], [0.5, 0.6], [np.nan, np.nan]])
    results = {"mean_test_score": np.array([0.45, 0.65, 0.55, np.nan]),
               "mean_ac_score": np.array([0.6, 0.7, 0.6, np.nan]), "p_vs_prior": np.array([1.0, np.nan, 0.4, np.nan]),
               "split0_test_score": splits[:, 0], "split1_test_score": splits[:, 1]}
    return found, results


#: The estimates (share, low, high) of the chosen candidates and the reference, on deals of their own, of 40
#: samples.
ESTIMATES = {1: (0.65, 0.5, 0.78), 2: (0.55, 0.4, 0.69), 0: (0.45, 0.3, 0.6)}
N_SCORED = 40


def test_one_row_a_method_its_best_candidate_first_and_a_failed_method_last():
    found, results = found_and_results()
    assert cluster_report.best_of_each(found, results, chosen=1) == [1, 2, 3]
    assert cluster_report.best_of_each(found, results, chosen=0) == [2, 0, 3]  # the chosen stands for its method


def test_the_answer_sets_the_best_reference_beside_the_choice_and_says_the_rule_kept_the_prior():
    found, results = found_and_results()
    lines = cluster_report.answer(found, results, 1, 1, "prior", ESTIMATES, N_SCORED)
    assert lines[0].startswith("**Use SDA + nearest labelled (alpha=0.1).**") and "65.0% [50.0, 78.0]" in lines[0]
    assert "your 40 known samples scored" in lines[0] and "learning curve" in lines[0]
    assert lines[2].startswith("On the same splits, LabelSpreading on your labels alone: 55.0% [40.0, 69.0]")
    assert lines[4].startswith("The rule kept the prior's candidate, SDA + nearest labelled (alpha=0.1): none of "
                               "the 2 others gave back more right classes by more than the noise of choosing")
    assert lines[4].count("the prior's candidate") == 1 and "at 0.05 / 2" in lines[4]
    assert "at 0.2 / 2" in cluster_report.answer(found, results, 1, 1, "prior", ESTIMATES, N_SCORED, level=0.2)[4]


def test_an_estimate_whose_fit_failed_says_so():
    found, results = found_and_results()
    lines = cluster_report.answer(found, results, 1, 1, "prior", {**ESTIMATES, 2: (np.nan,) * 3}, N_SCORED)
    assert lines[2].endswith("on your labels alone: none (a fit of its failed).")


def test_when_a_reference_wins_the_report_says_so_plainly():
    found, results = found_and_results()
    lines = cluster_report.answer(found, results, 2, 1, "evidence", ESTIMATES, N_SCORED)
    assert lines[2].startswith("A reference wins: LabelSpreading on your labels alone")
    assert "moved" in lines[4]


def test_a_prior_whose_first_candidates_failed_is_not_said_to_be_kept():
    found, results = found_and_results()
    lines = cluster_report.answer(found, results, 1, 1, "prior failed", ESTIMATES, N_SCORED)
    assert lines[4].startswith("The prior's first candidates failed; the rule took the first of its order with a "
                               "score, SDA + nearest labelled (alpha=0.1): none of the 2 others")
    assert "kept" not in lines[4]


def test_the_figure_says_the_prior_in_blue_only_where_the_choice_moved_from_it():
    found, results = found_and_results()
    kept = cluster_report.figure(found, results, 1, 1, N_SCORED)
    moved = cluster_report.figure(found, results, 2, 1, N_SCORED)
    assert kept.axes[0].get_title().endswith("red: the choice, the prior's candidate")
    assert moved.axes[0].get_title().endswith("red: the choice, blue: the prior's candidate")
    assert [t.get_text() for t in moved.axes[0].get_yticklabels()] == ["SDA + nearest labelled (alpha=0.1)",
                                                                       "LabelSpreading", "KMeans"]
    for fig in (kept, moved):
        pyplot().close(fig)

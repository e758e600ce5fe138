"""The report of python -m src.cluster (src/presentation/cluster_report.py): the estimate's interval, the candidates
no test separates from the choice, and the benchmark's regret of the same rule at the nearest label rate."""

import numpy as np
from test_choice_report import tables

from src.presentation import cluster_report


def test_the_benchmarks_regret_at_the_nearest_label_rate_is_said_once_the_settings_ship(monkeypatch):
    rows, searched = tables()
    family = rows[~rows["method"].isin(["Choice", "Choice (label-free)"])]
    monkeypatch.setattr(cluster_report, "shipped_family_rows", lambda track: family)
    monkeypatch.setattr(cluster_report.shipped, "load_settings", lambda: None)
    assert "does not ship yet" in cluster_report.shipped_regret(0.25)
    monkeypatch.setattr(cluster_report.shipped, "load_settings", lambda: searched.assign(track="labels30"))
    said = cluster_report.shipped_regret(0.25)
    assert said.startswith("On the benchmark at the nearest label rate (labels30)") and "0.0 AC points" in said


def test_a_candidate_is_separated_from_the_choice_only_by_a_test_over_the_paired_splits():
    rng = np.random.default_rng(0)
    best = 0.8 + rng.normal(0, 0.01, 12)
    splits = np.vstack([best, best - 0.3, best + rng.normal(0, 0.01, 12), np.full(12, np.nan)])
    assert cluster_report.not_separated(splits, 0) == [2]  # a failed candidate (NaN) is no candidate
    low, high = cluster_report.interval(best)
    assert low < best.mean() < high
    assert cluster_report.interval(np.full(4, 0.5)) == (0.5, 0.5)


def test_the_other_reading_names_the_candidate_whose_classes_given_back_score_best():
    labels = ["NMF", "SDA(alpha=1)", "KMeans"]
    results = {"mean_classed_score": np.array([0.24, 0.39, 0.39]), "rank_test_score": np.array([1, 3, 2])}
    said = cluster_report.by_classes(results, 0, labels)
    # SDA and KMeans tie on the classes given back: the better held-out AC rank (KMeans) breaks it
    assert "would pick KMeans (39.0% against 24.0% for NMF)" in said
    results["mean_classed_score"] = np.array([0.5, 0.39, np.nan])
    assert "picks NMF too" in cluster_report.by_classes(results, 0, labels)
    results["mean_classed_score"] = np.full(3, np.nan)
    assert "could be scored" in cluster_report.by_classes(results, 0, labels)

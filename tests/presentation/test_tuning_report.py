"""The tuned part of the family's report (src/presentation/tuning_report.py): the expected best accuracy of Dodge et
al. against a brute-force count, the tuning gains against a paired computation, and the figures drawn."""

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from src.presentation import tuning_report


def test_expected_best_matches_every_draw_of_n_settings_with_replacement():
    rng = np.random.default_rng(3)
    rows = []
    for trial in range(3):
        for i, acc in enumerate(rng.uniform(0.3, 0.9, 4)):
            rows.append({"dataset": "d", "method": "M", "k": 2, "trial": trial, "setting": f"a={i}", "acc": acc})
    searched = pd.DataFrame(rows)
    curve = tuning_report.expected_best(searched).set_index("n")["expected"]
    for n in range(1, 5):
        per_trial = []
        for _, group in searched.groupby("trial"):
            scores = group["acc"].to_numpy()
            draws = [max(scores[list(pick)]) for pick in itertools.product(range(4), repeat=n)]
            per_trial.append(np.mean(draws))
        assert curve[n] == pytest.approx(100 * np.mean(per_trial), rel=1e-12)
    assert curve.is_monotonic_increasing


def test_gains_are_the_paired_block_means_with_a_t_interval():
    rng = np.random.default_rng(4)
    fixed = pd.DataFrame([{"dataset": d, "method": "M", "k": k, "trial": t, "acc": rng.uniform(0.4, 0.6)}
                          for d in ("a", "b") for k in (2, 3) for t in range(3)])
    tuned = fixed.assign(acc=fixed["acc"] + rng.uniform(0.0, 0.05, len(fixed)), setting="x", selection="labelled")
    table = tuning_report.gains(fixed, tuned).iloc[0]
    blocks = 100 * (tuned.groupby(["dataset", "k"])["acc"].mean() - fixed.groupby(["dataset", "k"])["acc"].mean())
    assert table["gain"] == pytest.approx(blocks.mean())
    half = stats.t.ppf(0.975, len(blocks) - 1) * blocks.std(ddof=1) / np.sqrt(len(blocks))
    assert (table["low"], table["high"]) == pytest.approx((blocks.mean() - half, blocks.mean() + half))

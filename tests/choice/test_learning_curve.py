"""src/choice/learning_curve.py: the estimate read off the line through two label counts, and its interval."""

import numpy as np
import pytest
from scipy import stats

from src.choice import learning_curve


@pytest.mark.parametrize("n_folds", [3, 4, 5, 10])
def test_a_curve_straight_in_the_log_of_the_labels_is_read_exactly_at_all_of_them(n_folds):
    """Shares on a curve a + b log(labels), at 1/F and (F-1)/F of the labels, extrapolate to its value at all."""
    a, b = 0.7, 0.12
    curve = lambda told: a + b * np.log(told)  # noqa: E731 - the curve, at a share of the labels told
    many, few = np.full(5, curve((n_folds - 1) / n_folds)), np.full(5, curve(1 / n_folds))
    assert learning_curve.extrapolated(many, few, n_folds) == pytest.approx(np.full(5, a))


def test_the_slope_at_three_folds_and_none_below():
    assert learning_curve.slope(3) == pytest.approx(np.log(1.5) / np.log(2))
    assert learning_curve.slope(2) == 0.0 and learning_curve.FEWEST_FOLDS == 3
    assert learning_curve.extrapolated([0.5, 1.0], [0.2, 0.0], 2) == pytest.approx([0.5, 1.0])  # no second count


def test_a_curve_that_gains_from_labels_raises_the_estimate_and_a_flat_one_keeps_it():
    many, few = np.array([1.0, 0.5, 0.0, 1.0]), np.array([0.5, 0.5, 0.0, 1.0])
    scores = learning_curve.extrapolated(many, few, 3)
    assert scores[0] > many[0] and np.allclose(scores[1:], many[1:])


def test_the_interval_holds_the_estimate_and_is_never_narrower_than_wilsons():
    rng = np.random.default_rng(0)
    for _ in range(20):
        n = int(rng.integers(5, 200))
        many, few = rng.integers(0, 3, n) / 2, rng.integers(0, 5, n) / 4
        share, low, high = learning_curve.estimate(learning_curve.extrapolated(many, few, 3))
        wilson = stats.binomtest(int(round(share * n)), n).proportion_ci(method="wilson")
        assert 0.0 <= low <= share <= high <= 1.0
        assert low <= wilson.low + 1e-12 and high >= wilson.high - 1e-12


def test_samples_that_all_score_alike_keep_wilsons_interval_and_a_share_is_clipped_to_one():
    share, low, high = learning_curve.estimate(np.full(40, 1.2))
    assert share == 1.0 == high and 0.9 < low < 1.0
    assert np.isnan(learning_curve.estimate(np.array([0.5, np.nan]))).all()
    assert np.isnan(learning_curve.estimate(np.array([]))).all()


def test_the_normal_interval_widens_with_the_scores_spread():
    """Scores of the same mean, one set spread wide: its interval is the wider (the normal one, past Wilson's)."""
    narrow = learning_curve.estimate(np.full(50, 0.5))
    wide = learning_curve.estimate(np.tile([-0.6, 1.6], 25))
    assert wide[0] == pytest.approx(narrow[0]) and wide[2] - wide[1] > narrow[2] - narrow[1]


def test_the_interval_is_wilsons_for_a_share_of_the_samples_scored():
    """Against Wilson's formula written out: (p + z^2/2n +- z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)."""
    z, n, p = 1.959963984540054, 45, 20 / 45
    centre, half = p + z ** 2 / (2 * n), z * np.sqrt(p * (1 - p) / n + z ** 2 / (4 * n ** 2))
    low, high = learning_curve.wilson(p, n)
    assert np.allclose([low, high], [(centre - half) / (1 + z ** 2 / n), (centre + half) / (1 + z ** 2 / n)])
    assert 0 < learning_curve.wilson(1.0, 10)[0] < 1 == learning_curve.wilson(1.0, 10)[1]
    wide = learning_curve.wilson(p, 9 * n)
    assert wide[1] - wide[0] < (high - low) / 2  # nine times the samples: a third the width, near enough
    assert np.isnan(learning_curve.wilson(np.nan, 10)).all() and np.isnan(learning_curve.wilson(0.5, 0)).all()

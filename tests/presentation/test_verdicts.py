"""src.presentation.verdicts: Welch comparison of our mean with the paper's, TOST equivalence, Holm, pooling over k."""

import math

import numpy as np
import pytest
from scipy import stats

from src.presentation import verdicts
from src.presentation.verdicts import compare, holm, old_verdict, pooled_over_k, pooled_trials, verdict


def judged(*args, p_adjusted=None, **kwargs):
    """compare() then verdict(), with the unadjusted p-value unless an adjusted one is given."""
    comparison = compare(*args, **kwargs)
    return comparison, verdict(comparison, comparison.p_zero if p_adjusted is None else p_adjusted)


def test_constants():
    assert verdicts.MARGIN == 5.0
    assert verdicts.ALPHA == 0.05


def test_equal_means_small_noise_agree():
    comparison, result = judged(70.0, 3.0, 10, 70.0, 3.0, 10)
    assert result == "agrees"
    assert comparison.difference == 0.0
    assert comparison.sides == "both printed"
    assert -5 < comparison.ci90[0] < 0 < comparison.ci90[1] < 5


def test_clear_gap_differs():
    comparison, result = judged(60.0, 2.0, 10, 75.0, 2.0, 10)
    assert result == "differs"
    assert comparison.difference == pytest.approx(-15.0)
    assert comparison.difference < 0
    assert comparison.p_zero < 1e-10
    assert comparison.ci95[1] < 0


def test_noisy_tie_cant_tell():
    comparison, result = judged(70.0, 15.0, 10, 72.0, 15.0, 10)
    assert result == "can't tell"
    assert comparison.ci90[0] < -5 and comparison.ci90[1] > 5
    assert comparison.p_zero > 0.05


def test_agrees_takes_precedence_over_a_significant_gap():
    comparison, result = judged(71.0, 0.1, 10, 70.0, 0.1, 10)
    assert comparison.p_zero < 1e-6
    assert verdict(comparison, p_zero_adjusted=1e-6) == "agrees"
    assert result == "agrees"


def test_welch_matches_scipy_and_intervals_are_symmetric():
    ours, ours_std, ours_n, paper, paper_std, paper_n = 68.3, 4.1, 20, 71.2, 6.5, 10
    comparison = compare(ours, ours_std, ours_n, paper, paper_std, paper_n)
    reference = stats.ttest_ind_from_stats(ours, ours_std, ours_n, paper, paper_std, paper_n, equal_var=False)
    assert comparison.p_zero == pytest.approx(reference.pvalue, rel=1e-9)
    assert comparison.difference / comparison.se == pytest.approx(reference.statistic, rel=1e-9)
    assert comparison.se == pytest.approx(math.sqrt(ours_std ** 2 / ours_n + paper_std ** 2 / paper_n))
    v1, v2 = ours_std ** 2 / ours_n, paper_std ** 2 / paper_n
    assert comparison.df == pytest.approx((v1 + v2) ** 2 / (v1 ** 2 / (ours_n - 1) + v2 ** 2 / (paper_n - 1)))
    assert min(ours_n, paper_n) - 1 <= comparison.df <= ours_n + paper_n - 2
    for (lo, hi), quantile in ((comparison.ci90, 0.95), (comparison.ci95, 0.975)):
        assert (lo + hi) / 2 == pytest.approx(comparison.difference)
        assert hi - lo == pytest.approx(2 * stats.t.ppf(quantile, comparison.df) * comparison.se)
    assert comparison.ci95[0] < comparison.ci90[0] < comparison.difference < comparison.ci90[1] < comparison.ci95[1]


@pytest.mark.parametrize("difference, std, n", [
    (0.0, 3.0, 10), (3.0, 1.0, 10), (-4.0, 0.5, 30), (4.5, 3.0, 10), (-2.0, 8.0, 5), (6.0, 0.5, 10),
    (-7.0, 1.0, 10), (4.0, 2.5, 8)])
def test_tost_p_value_agrees_with_the_90_percent_interval(difference, std, n):
    comparison = compare(70.0 + difference, std, n, 70.0, std, n)
    inside = -5 < comparison.ci90[0] and comparison.ci90[1] < 5
    assert inside == (comparison.p_equivalent < 0.05)
    assert (verdict(comparison, 1.0) == "agrees") == inside


def test_tost_cases_go_both_ways():
    assert compare(72.0, 1.0, 10, 70.0, 1.0, 10).p_equivalent < 0.05
    assert compare(72.0, 10.0, 10, 70.0, 10.0, 10).p_equivalent > 0.05
    assert compare(76.0, 1.0, 10, 70.0, 1.0, 10).p_equivalent > 0.5


def test_tost_p_value_is_the_larger_one_sided_p():
    comparison = compare(73.0, 2.0, 10, 70.0, 3.0, 12)
    t_lower = (comparison.difference + 5) / comparison.se
    t_upper = (comparison.difference - 5) / comparison.se
    expected = max(stats.t.sf(t_lower, comparison.df), stats.t.cdf(t_upper, comparison.df))
    assert comparison.p_equivalent == pytest.approx(expected)


def test_margin_argument_changes_the_equivalence():
    assert compare(72.0, 1.0, 10, 70.0, 1.0, 10, margin=1.0).p_equivalent > 0.5
    comparison = compare(72.0, 1.0, 10, 70.0, 1.0, 10)
    assert verdict(comparison, 1.0, margin=1.0) == "can't tell"
    assert verdict(comparison, 1e-4, margin=1.0) == "differs"


def test_verdict_alpha_sets_the_interval_level():
    comparison = compare(73.0, 3.0, 10, 70.0, 3.0, 10)
    assert comparison.ci90[1] > 5  # not equivalent at alpha = 0.05 ...
    assert verdict(comparison, 1.0) == "can't tell"
    lo, hi = comparison.difference + np.array([-1, 1]) * stats.t.ppf(0.75, comparison.df) * comparison.se
    assert -5 < lo and hi < 5  # ... but the 50% interval (alpha = 0.25) is inside
    assert verdict(comparison, 1.0, alpha=0.25) == "agrees"


def test_nan_adjusted_p_is_never_significant():
    comparison = compare(60.0, 2.0, 10, 75.0, 2.0, 10)
    assert verdict(comparison, math.nan) == "can't tell"


@pytest.mark.parametrize("missing", [None, math.nan])
def test_missing_paper_std_uses_ours_for_both(missing):
    comparison = compare(70.0, 4.0, 10, 72.0, missing)
    assert comparison.sides == "ours for both"
    assert comparison.se == pytest.approx(4.0 * math.sqrt(2 / 10))
    assert comparison.df == pytest.approx(18.0)


def test_missing_paper_std_keeps_the_papers_n():
    comparison = compare(70.0, 4.0, 10, 72.0, None, 20)
    assert comparison.sides == "ours for both"
    assert comparison.se == pytest.approx(4.0 * math.sqrt(1 / 10 + 1 / 20))


def test_missing_paper_n_is_ours():
    assert compare(70.0, 4.0, 10, 72.0, 3.0).se == pytest.approx(math.sqrt(16 / 10 + 9 / 10))
    assert compare(70.0, 4.0, 10, 72.0, 3.0, math.nan).se == pytest.approx(math.sqrt(16 / 10 + 9 / 10))


def test_exact_difference_when_both_std_are_zero():
    small = compare(72.0, 0.0, 10, 70.0, 0.0, 10)
    assert small.se == 0
    assert small.p_zero == 0.0 and small.p_equivalent == 0.0
    assert small.ci90 == (2.0, 2.0) and small.ci95 == (2.0, 2.0)
    assert verdict(small, small.p_zero) == "agrees"

    large = compare(63.0, 0.0, 10, 70.0, 0.0, 10)
    assert large.p_zero == 0.0 and large.p_equivalent == 1.0
    assert large.ci90 == (-7.0, -7.0)
    assert verdict(large, large.p_zero) == "differs"

    same = compare(70.0, 0.0, 10, 70.0, None)
    assert same.p_zero == 1.0 and same.p_equivalent == 0.0
    assert verdict(same, same.p_zero) == "agrees"

    at_margin = compare(75.0, 0.0, 10, 70.0, 0.0, 10)
    assert at_margin.p_equivalent == 1.0
    assert verdict(at_margin, at_margin.p_zero) == "differs"


def test_one_zero_std_is_not_degenerate():
    comparison = compare(72.0, 0.0, 10, 70.0, 3.0, 10)
    assert comparison.se == pytest.approx(3.0 / math.sqrt(10))
    assert comparison.df == pytest.approx(9.0)


@pytest.mark.parametrize("kwargs", [
    dict(ours_n=1), dict(paper_n=1), dict(ours_n=0), dict(ours_n=1, paper_std=None)])
def test_fewer_than_two_trials_raise(kwargs):
    arguments = dict(ours_mean=70.0, ours_std=3.0, ours_n=10, paper_mean=72.0, paper_std=3.0, paper_n=10)
    arguments.update(kwargs)
    with pytest.raises(ValueError, match="at least 2") as error:
        compare(**arguments)
    assert "\n" not in str(error.value)


def test_bad_std_raises():
    with pytest.raises(ValueError, match="standard deviation"):
        compare(70.0, -1.0, 10, 72.0, 3.0, 10)
    with pytest.raises(ValueError, match="standard deviation"):
        compare(70.0, math.nan, 10, 72.0, 3.0, 10)


def test_comparison_is_frozen():
    comparison = compare(70.0, 3.0, 10, 70.0, 3.0, 10)
    with pytest.raises(AttributeError):
        comparison.ours = 1.0


def test_holm_hand_computed():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])


def test_holm_order_monotone_and_capped():
    pvalues = [0.5, 0.001, 0.2, 0.02, 0.9]
    adjusted = holm(pvalues)
    assert len(adjusted) == len(pvalues)
    assert all(a >= p for a, p in zip(adjusted, pvalues))
    assert all(a <= 1.0 for a in adjusted)
    ranked = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    assert [adjusted[i] for i in ranked] == sorted(adjusted)
    assert adjusted[1] == pytest.approx(0.005)
    assert adjusted[0] == 1.0 and adjusted[4] == 1.0
    assert holm([0.6, 0.7]) == [1.0, 1.0]
    assert holm([]) == []
    assert holm([0.03]) == pytest.approx([0.03])


def test_old_verdict():
    assert old_verdict(5.0) == "agrees"
    assert old_verdict(-4.9) == "agrees"
    assert old_verdict(-5.1) == "differs"
    assert old_verdict(2.0, tolerance=1.0) == "differs"


def test_pooled_over_k_with_equal_counts_is_the_rms_of_the_per_k_deviations():
    mean, std, n = pooled_over_k([70.0, 60.0], [3.0, 4.0], [10, 10])
    assert mean == pytest.approx(65.0) and n == 20
    assert std == pytest.approx(math.sqrt((9 + 16) / 2))


def test_pooled_over_k_ignores_the_spread_between_k():
    """k is fixed by design: accuracy falling with k is no noise of the average."""
    _, same, _ = pooled_over_k([70.0, 70.0], [3.0, 3.0], [10, 10])
    _, spread, _ = pooled_over_k([90.0, 50.0], [3.0, 3.0], [10, 10])
    assert spread == pytest.approx(same)


@pytest.mark.parametrize("sizes", [(10, 10, 10), (5, 12, 8)])
def test_pooled_standard_error_is_that_of_the_mean_of_per_k_means(sizes):
    rng = np.random.default_rng(0)
    values = [rng.normal(loc, scale, size) for loc, scale, size in zip((60.0, 70.0, 75.0), (2.0, 5.0, 3.0), sizes)]
    means = [v.mean() for v in values]
    stds = [v.std(ddof=1) for v in values]
    mean, std, n = pooled_over_k(means, stds, [len(v) for v in values])
    assert n == sum(sizes) and mean == pytest.approx(np.mean(means))
    independent = math.sqrt(sum(v.var(ddof=1) / len(v) for v in values)) / 3  # var of the mean of 3 means
    assert std / math.sqrt(n) == pytest.approx(independent)
    assert pooled_trials(values) == pytest.approx((mean, std, n))


def test_pooled_inputs_are_checked():
    with pytest.raises(ValueError):
        pooled_over_k([70.0], [3.0], [1])
    with pytest.raises(ValueError):
        pooled_over_k([70.0, 71.0], [3.0], [10, 10])
    with pytest.raises(ValueError):
        pooled_trials([])
    with pytest.raises(ValueError):
        pooled_trials([[70.0, 71.0], [70.0]])


def test_pooled_sides_feed_compare():
    rng = np.random.default_rng(1)
    ours = [rng.normal(70.0, 2.0, 10) for _ in range(3)]
    paper = pooled_over_k([69.0, 70.0, 71.0], [2.0, 2.0, 2.0], [10, 10, 10])
    _, ours_std, ours_n = pooled_trials(ours)
    comparison = compare(*pooled_trials(ours), *paper)
    assert ours_n == paper[2] == 30
    assert comparison.se == pytest.approx(math.sqrt(ours_std ** 2 / 30 + paper[1] ** 2 / 30))
    assert comparison.df > 30
    assert verdict(comparison, comparison.p_zero) == "agrees"


def test_the_noise_reason_separates_wide_intervals_from_gaps_near_the_margin():
    from src.presentation.verdicts import best_case_half_width, compare, noise_reason
    wide = compare(60, 15, 10, 60, 15, 10)  # an exact match, but +-11.6 points of noise
    assert best_case_half_width(wide) > 5 and "even an exact match" in noise_reason(wide)
    near = compare(64, 2, 10, 60, 2, 10)  # +4 +- 1.6: past the margin, not shown different from zero here
    assert best_case_half_width(near) < 5 and "near the margin" in noise_reason(near)

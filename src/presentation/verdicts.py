"""Noise-aware verdicts: does our mean agree with a published mean, differ from it, or can we not tell?

A published number is a mean over the paper's trials (in percent points), often printed with its standard
deviation over those trials; ours is a mean over our trials. A fixed "within 5 points" rule ignores how noisy
both means are: it calls two noisy numbers equal by luck and two precise numbers different by a trivial gap.
The rule here asks two questions of the difference ``d = ours - paper``, using Welch's t (unequal variances,
Welch-Satterthwaite degrees of freedom) with both standard deviations and both trial counts:

1. Equivalence (TOST): is ``d`` within ``MARGIN`` points? The two one-sided tests at level ``ALPHA`` reject
   both "d <= -MARGIN" and "d >= +MARGIN" exactly when the ``1 - 2*ALPHA`` (90%) confidence interval of ``d``
   lies inside ``(-MARGIN, +MARGIN)``. If so, the verdict is **agrees**; this takes precedence, since a
   precisely measured small gap is still a reproduction.
2. Otherwise, difference: does the two-sided Welch test reject ``d = 0`` at ``ALPHA`` after Holm's
   adjustment over the whole scorecard? If so, **differs**.
3. Otherwise **can't tell**: the trials are too noisy to call it either way.

When the paper prints no deviation, our standard deviation stands in for both sides (and our trial count for
the paper's when it gives none); ``Comparison.sides`` records which case applied.

References: Welch 1947; Schuirmann 1987 (TOST); Holm 1979.
"""

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..running.progress import counted

MARGIN = 5.0
"""Equivalence margin in points: a gap smaller than this counts as the same result."""

ALPHA = 0.05
"""Significance level of both the equivalence (TOST) and the difference test."""

TOO_FEW_TRIALS = "needs at least two trials"
"""The verdict of a number whose side of ours has a k with a single trial: a mean, but no deviation, so no
interval and no test (a quick run with ``protocol.n_trials=1``)."""

NO_VERDICT = ("not run", TOO_FEW_TRIALS)
"""The verdicts that are no verdict: a number we have no run for, and one with too few trials to judge."""


@dataclass(frozen=True)
class Comparison:
    """Our mean beside the paper's, with the Welch statistics of their difference.

    Attributes
    ----------
    ours, paper : float
        The two means, in points.
    difference : float
        ``ours - paper``; negative when we fall short of the paper.
    se : float
        Standard error of the difference, ``sqrt(s_ours**2 / n_ours + s_paper**2 / n_paper)``.
    df : float
        Welch-Satterthwaite degrees of freedom; NaN when ``se == 0`` (undefined and unused then).
    ci90, ci95 : tuple of float
        ``(lo, hi)`` confidence intervals of the difference; ``ci90`` is the TOST interval at ``ALPHA = 0.05``.
    p_zero : float
        Two-sided Welch p-value of a zero difference (unadjusted; adjust over the scorecard with :func:`holm`).
    p_equivalent : float
        TOST p-value: the larger of the two one-sided p-values against ``-margin`` and ``+margin``.
    sides : str
        Where the deviations came from: ``"both printed"`` or ``"ours for both"``.
    """

    ours: float
    paper: float
    difference: float
    se: float
    df: float
    ci90: tuple[float, float]
    ci95: tuple[float, float]
    p_zero: float
    p_equivalent: float
    sides: str


def _count(n, side: str) -> int:
    """A trial count as an int of at least 2, since a sample standard deviation needs two trials."""
    if n is None or (isinstance(n, float) and math.isnan(n)):
        raise ValueError(f"{side} trial count is missing")
    if float(n) != int(n):
        raise ValueError(f"{side} trial count must be a whole number, got {n}")
    if int(n) < 2:
        raise ValueError(f"{side} trial count must be at least 2 for a standard deviation, got {n}")
    return int(n)


def _std(std, side: str) -> float:
    """A standard deviation as a finite non-negative float."""
    std = float(std)
    if not math.isfinite(std) or std < 0:
        raise ValueError(f"{side} standard deviation must be finite and non-negative, got {std}")
    return std


def _missing(value) -> bool:
    """True for None or NaN, how a table leaves out a number."""
    return value is None or (isinstance(value, (float, np.floating)) and math.isnan(value))


def _interval(difference: float, se: float, df: float, level: float) -> tuple[float, float]:
    """Two-sided ``level`` confidence interval of the difference; the point itself when ``se == 0``.

    One function serves :func:`compare` and :func:`verdict`, so the interval the verdict checks is computed
    exactly as the one stored in the :class:`Comparison`.
    """
    if se == 0:
        return (difference, difference)
    half = float(stats.t.ppf(0.5 + level / 2, df)) * se
    return (difference - half, difference + half)


def compare(ours_mean: float, ours_std: float, ours_n: int, paper_mean: float, paper_std: float | None = None,
            paper_n: int | None = None, margin: float = MARGIN) -> Comparison:
    """Welch's comparison of our mean with the paper's, for the verdict.

    Parameters
    ----------
    ours_mean, ours_std, ours_n : float, float, int
        Our mean, sample standard deviation (``ddof=1``) and number of trials.
    paper_mean : float
        The published mean.
    paper_std : float, optional
        The published standard deviation over the paper's trials. None or NaN when not printed: then our
        standard deviation stands in for both sides, the best guess of the trial-to-trial noise of the same
        method on the same data.
    paper_n : int, optional
        The paper's number of trials; None or NaN means "as many as ours".
    margin : float
        Equivalence margin in points for ``p_equivalent``.

    Returns
    -------
    Comparison
        The difference ``ours - paper`` with its standard error, Welch degrees of freedom, 90% and 95%
        intervals, two-sided p-value of zero and TOST p-value of equivalence within ``margin``.

    Raises
    ------
    ValueError
        When a side has fewer than two trials, or a standard deviation is negative or not finite.

    Notes
    -----
    When both standard deviations are zero the difference is known exactly: ``p_zero`` is 0 for a nonzero
    difference (else 1), both intervals collapse to the point, and ``p_equivalent`` is 0 when
    ``|difference| < margin`` (else 1).
    """
    n1 = _count(ours_n, "our")
    s1 = _std(ours_std, "our")
    if _missing(paper_std):
        s2, sides = s1, "ours for both"
    else:
        s2, sides = _std(paper_std, "the paper's"), "both printed"
    n2 = n1 if _missing(paper_n) else _count(paper_n, "the paper's")
    ours, paper = float(ours_mean), float(paper_mean)
    difference = ours - paper
    v1, v2 = s1 * s1 / n1, s2 * s2 / n2
    se = math.sqrt(v1 + v2)
    if se == 0:
        df = math.nan
        p_zero = 0.0 if difference != 0 else 1.0
        p_equivalent = 0.0 if abs(difference) < margin else 1.0
    else:
        df = (v1 + v2) ** 2 / (v1 * v1 / (n1 - 1) + v2 * v2 / (n2 - 1))
        p_zero = float(2 * stats.t.sf(abs(difference) / se, df))
        p_above_lower = float(stats.t.sf((difference + margin) / se, df))  # H0: difference <= -margin
        p_below_upper = float(stats.t.cdf((difference - margin) / se, df))  # H0: difference >= +margin
        p_equivalent = max(p_above_lower, p_below_upper)
    return Comparison(ours=ours, paper=paper, difference=difference, se=se, df=df,
                      ci90=_interval(difference, se, df, 0.90), ci95=_interval(difference, se, df, 0.95),
                      p_zero=p_zero, p_equivalent=p_equivalent, sides=sides)


def verdict(comparison: Comparison, p_zero_adjusted: float, alpha: float = ALPHA, margin: float = MARGIN) -> str:
    """The verdict on one comparison: "agrees", "differs" or "can't tell".

    Parameters
    ----------
    comparison : Comparison
        From :func:`compare`.
    p_zero_adjusted : float
        ``comparison.p_zero`` after Holm's adjustment over every comparison of the scorecard, so that the
        chance of any false "differs" stays below ``alpha``. NaN never counts as significant.
    alpha : float
        Level of both tests.
    margin : float
        Equivalence margin in points.

    Returns
    -------
    str
        ``"agrees"`` when the ``1 - 2*alpha`` interval of the difference (``ci90`` at the default alpha) lies
        inside ``(-margin, +margin)``, the TOST at level ``alpha``; it takes precedence, because a small but
        precisely measured gap is still a reproduction. Else ``"differs"`` when ``p_zero_adjusted < alpha``.
        Else ``"can't tell"``: too noisy to call either way.
    """
    lo, hi = _interval(comparison.difference, comparison.se, comparison.df, 1 - 2 * alpha)  # ci90 at 0.05
    if -margin < lo and hi < margin:
        return "agrees"
    if p_zero_adjusted < alpha:
        return "differs"
    return "can't tell"


def best_case_half_width(comparison: Comparison, alpha: float = ALPHA) -> float:
    """Half the width of the ``1 - 2*alpha`` (90%) interval of the difference: the noise of the two means.

    The interval is centred on the difference, so "agrees" needs ``|difference| + half width < margin``. When
    the half width alone reaches the margin, no difference, not even zero, could be called "agrees" with these
    trials: the verdict "can't tell" then says how noisy the trials are, not how far the numbers are apart.
    """
    lo, hi = _interval(comparison.difference, comparison.se, comparison.df, 1 - 2 * alpha)
    return (hi - lo) / 2


def noise_reason(comparison: Comparison, alpha: float = ALPHA, margin: float = MARGIN) -> str:
    """Why a comparison is "can't tell", in words: the trials' noise, or a gap near the margin."""
    half = best_case_half_width(comparison, alpha)
    where = ("deviations printed by the paper and ours" if comparison.sides == "both printed"
             else "our trials' deviation for both sides")
    if half >= margin:
        return (f"the noise: with these trials ({where}) the 90% interval is +-{half:.1f} points around the "
                f"difference, wider than +-{margin:.0f}, so even an exact match could not be called equal; "
                f"the difference of {comparison.difference:+.1f} is within that noise")
    return (f"a gap near the margin: {comparison.difference:+.1f} points +-{half:.1f} (90%) reaches past "
            f"+-{margin:.0f} but is not shown to differ from zero")


def holm(pvalues) -> list[float]:
    """Holm's step-down adjusted p-values, in the given order.

    Parameters
    ----------
    pvalues : sequence of float
        The unadjusted p-values of one family of tests (e.g. every ``p_zero`` of a scorecard).

    Returns
    -------
    list of float
        The i-th smallest p-value is multiplied by ``m - i + 1`` (``m`` tests), made non-decreasing along the
        sorted order and capped at 1; rejecting where the adjusted value is below alpha controls the
        family-wise error rate at alpha without assuming independence.
    """
    p = np.asarray(list(pvalues), dtype=float)
    m = len(p)
    if m == 0:
        return []
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return [float(value) for value in adjusted]


def old_verdict(difference: float, tolerance: float = 5.0) -> str:
    """The previous rule, kept for comparison: "agrees" if ``|difference| <= tolerance``, else "differs"."""
    return "agrees" if abs(difference) <= tolerance else "differs"


def pooled_over_k(means, stds, ns) -> tuple[float, float, int]:
    """Mean, effective standard deviation and count of an average over k of per-k cells, using every trial.

    The k of a table are fixed by design, not drawn at random, so the noise of an average of per-k means is
    that of each per-k mean, averaged: the standard error is ``sqrt(sum(s_k**2 / n_k)) / K`` (a stratified
    mean), whatever the spread between the per-k means (accuracy falls with k by design, which is no noise).
    To feed :func:`compare`, which takes a standard deviation and a count, the average is described by
    ``N = sum(n_k)`` trials and the standard deviation ``se * sqrt(N)``, which gives back that standard error;
    with equal n per k it is the root mean square of the per-k deviations.

    Parameters
    ----------
    means, stds : sequence of float
        The per-k means and standard deviations (``ddof=1``, as MATLAB's ``std``).
    ns : sequence of int
        The number of trials behind each per-k cell (at least 2 each).

    Returns
    -------
    mean : float
        The mean of the per-k means, the number the paper prints as the average.
    std : float
        The effective standard deviation ``se * sqrt(N)``.
    n : int
        ``N = sum(ns)``.
    """
    means = np.asarray(means, dtype=float)
    stds = np.asarray(stds, dtype=float)
    ns = np.asarray(ns, dtype=float)
    if not (means.ndim == 1 and means.shape == stds.shape == ns.shape and len(means) > 0):
        raise ValueError(f"need equally long non-empty means, stds and ns, got {means.shape}, {stds.shape}, "
                         f"{ns.shape}")
    if np.any(ns < 2) or np.any(ns != np.round(ns)):
        raise ValueError(f"trial counts must be whole numbers of at least 2, got {ns.tolist()}")
    total = int(ns.sum())
    se = math.sqrt(float(np.sum(stds ** 2 / ns))) / len(means)
    return float(means.mean()), se * math.sqrt(total), total


def too_few_trials(values_by_k) -> bool:
    """True when some k has fewer than two trials: :func:`pooled_trials` cannot describe its noise."""
    return any(np.asarray(values).size < 2 for values in values_by_k)


def pooled_trials(values_by_k) -> tuple[float, float, int]:
    """Our side of :func:`pooled_over_k`, from the per-trial values of each k.

    Parameters
    ----------
    values_by_k : sequence of array_like
        One array of per-trial values per k, each with at least 2 values.

    Returns
    -------
    mean, std, n : float, float, int
        As :func:`pooled_over_k` with each k's mean, standard deviation (``ddof=1``) and count.
    """
    arrays = [np.asarray(values, dtype=float).ravel() for values in values_by_k]
    if not arrays or any(len(values) < 2 for values in arrays):
        raise ValueError("need at least one k, each with at least two trials")
    return pooled_over_k([v.mean() for v in arrays], [v.std(ddof=1) for v in arrays], [len(v) for v in arrays])


def single_trial_note(frame) -> str | None:
    """The sentence a report (and its run's log) opens with when some k was run with fewer than two trials.

    Parameters
    ----------
    frame : pandas.DataFrame
        Per-trial results with columns ``dataset``, ``method`` and ``k``.

    Returns
    -------
    str or None
        None when every (data set, method, k) has two trials or more; else what the report can say and what
        it cannot: its means, but for those numbers no interval, verdict or test (:data:`TOO_FEW_TRIALS`).
    """
    if frame is None or len(frame) == 0:
        return None
    per_k = frame.groupby(["dataset", "method", "k"]).size()
    single = int((per_k < 2).sum())
    if single == 0:
        return None
    every = "every" if single == len(per_k) else f"{single} of the {len(per_k)}"
    return (f"{every[0].upper() + every[1:]} (data set, method, k) of this run has a single trial (as with "
            f"protocol.n_trials=1): its numbers are means without a deviation, and every verdict, interval and "
            f"test that rests on them {TOO_FEW_TRIALS} (said in its place).")


def single_trial_notes(frames) -> dict[str, list[str]]:
    """:func:`single_trial_note` of several runs (name -> per-trial results), each note with the names it
    holds for, so that a report says it once for all the papers or tracks it concerns."""
    said = {}
    for name, frame in frames.items():
        note = single_trial_note(frame)
        if note:
            said.setdefault(note, []).append(name)
    return said


def trials_per_k(n: int) -> str:
    """"1 trial per k", "10 trials per k"."""
    return f"{counted(int(n), 'trial')} per k"


def t_interval(values, level: float = 0.95) -> tuple[float, float]:
    """Student's t interval of the mean of ``values`` (the finite ones); the mean twice where they are fewer
    than two or do not vary, NaN twice where there are none."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if values.size < 2 or values.std() == 0:
        mean = float(values.mean()) if values.size else math.nan
        return mean, mean
    low, high = stats.ttest_1samp(values, 0.0).confidence_interval(level)
    return float(low), float(high)


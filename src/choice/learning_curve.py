"""The estimate's correction for the labels its folds withhold: a learning curve through two label counts.

A fold's fit of the estimate is told the labels of the other folds only, (F - 1) / F of them at F folds, while
the final fit, whose classes a person receives, is told them all. A share right measured so leans low, the more
so the fewer labels a class has (on Yale with 3 known a class, SDA read out by a nearest labelled neighbour
gives back 55.0% of the unknown samples' classes told all three, 41.5% told two: ``python -m
tools.estimate_folds``). The estimate therefore scores each candidate at a second label count too, on the same
deals: each fold's fit told that fold's labels alone (1 / F of them) and scored on the other folds' known
samples. Through the two points it draws the line that is straight in the logarithm of the labels told, the
usual shape of a classifier's learning curve at a few labels a class, and reads it at all of them:

    estimate = s_many + slope (s_many - s_few),   slope = log(F / (F - 1)) / log(F - 1)

(0.585 at F = 3, the default). No paper gives this step; the form was fixed before it was measured, and checked
on files of the benchmark's data sets other than Yale, the data set of the targets, with ``python -m
tools.estimate_folds``, which also reads the two shares as a power law of the error (the measured table and
how far to trust the estimate are in ``docs/cluster.md``). The line is read per known sample, so that its
interval keeps the pairing of the two counts on the same samples.

References
----------
C. Perlich, F. Provost, J. S. Simonoff, "Tree induction vs. logistic regression: a learning-curve analysis",
Journal of Machine Learning Research 4, pp. 211-255, 2003.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

#: The fewest estimate folds with two label counts to draw the line through (at two, both are one half).
FEWEST_FOLDS = 3


def slope(n_folds: int) -> float:
    """How far the line through the shares at 1 / F and (F - 1) / F of the labels goes on to all of them, in
    units of their difference (0 below :data:`FEWEST_FOLDS`, where there is no second count)."""
    if n_folds < FEWEST_FOLDS:
        return 0.0
    return float(np.log(n_folds / (n_folds - 1)) / np.log(n_folds - 1))


def extrapolated(many: np.ndarray, few: np.ndarray, n_folds: int) -> np.ndarray:
    """Each known sample's score read off the line at every label: ``many`` (n_scored,) its share of deals
    classed right when held out, ``few`` (n_scored,) its share right scored by fits told one other fold's labels
    only. A sample's score may leave [0, 1]; their mean is the estimate (:func:`estimate`)."""
    step = slope(n_folds)
    return (1.0 + step) * np.asarray(many, dtype=float) - step * np.asarray(few, dtype=float)


def wilson(share: float, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson's interval of a share right of ``n`` samples (the nearest count; scipy's
    :meth:`~scipy.stats._result_classes.BinomTestResult.proportion_ci`), NaN twice for a missing share or no
    sample: the least spread a share of ``n`` samples can have."""
    if not np.isfinite(share) or n < 1:
        return np.nan, np.nan
    found = stats.binomtest(int(round(share * n)), n).proportion_ci(confidence_level=level, method="wilson")
    return float(found.low), float(found.high)


def estimate(scores: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    """The estimate from the samples' extrapolated ``scores`` (n_scored,; :func:`extrapolated`) and its
    ``level`` interval, each clipped to [0, 1]: the wider, at each end, of the normal interval of the scores'
    mean and Wilson's for a share of that many samples (:func:`wilson`, which keeps an interval where every
    sample scores alike). NaN three times where a score is missing."""
    scores = np.asarray(scores, dtype=float)
    if scores.size == 0 or not np.isfinite(scores).all():
        return np.nan, np.nan, np.nan
    mean = float(np.clip(scores.mean(), 0.0, 1.0))
    half = stats.norm.ppf(0.5 + level / 2) * (scores.std(ddof=1) / np.sqrt(scores.size) if scores.size > 1 else 1)
    least_low, least_high = wilson(mean, scores.size, level)
    low, high = min(mean - half, least_low), max(mean + half, least_high)
    return mean, float(np.clip(low, 0.0, mean)), float(np.clip(high, mean, 1.0))

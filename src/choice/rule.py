"""The rule that chooses among the candidates on the known labels, and cannot lose to its prior by noise.

Every candidate (a method at a setting, with a readout: :mod:`.readouts`) is scored by the classes it gives
back: per held-out known sample, whether its class is right when the fit was told only the other folds'
labels, averaged over the deals of the folds (``correct``, candidates x samples). A candidate's score is the
share right over every fold of every deal.

The best of a hundred noisy scores wins by chance (Cawley and Talbot 2010), and a score read on a few dozen
samples is noisy. So the rule starts from **the prior's candidate**, the first the prior names (on a person's
file: the shipped benchmark's best at the nearest label rate, :func:`src.choice.prior.shipped_prior`), and moves
away from it only on evidence larger than the selection's own noise:

* each other candidate is set against the prior's on the same held-out samples, by a one-sided Wilcoxon
  signed-rank test of the per-sample differences (zeros dropped, as Wilcoxon's own);
* the test's level is the rule's level (:data:`ALPHA` unless told; on a person's file the one the benchmark
  chose, :func:`src.choice.prior.shipped_rule`) divided by the number of candidates set against it
  (Bonferroni: the chance that any of them passes by noise alone stays at most that level);
* among the candidates that pass, the best score wins (a tie: the one the prior places first); none passes,
  the prior's candidate stays (``"prior"``). A prior's candidate without a score (it failed) gives way to the
  prior's next.

No paper of the family chooses among methods; the test, the level and the correction are ours, and the
manual (``docs/cluster.md``) gives them. A test over samples, not over splits: each known sample is held out
once a deal, so its rights over the deals are one paired observation, and the splits' few scores could not
reach any level after the correction.

References
----------
G. C. Cawley and N. L. C. Talbot, "On over-fitting in model selection and subsequent selection bias in
performance evaluation", Journal of Machine Learning Research 11, pp. 2079-2107, 2010.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

#: The chance that noise alone moves the choice away from the prior's candidate, at most.
ALPHA = 0.05
#: Why a candidate was chosen (the estimator's ``selection_``).
REASONS = {
    "prior": "the prior's candidate: no other gives back more right classes by more than the noise of choosing",
    "evidence": "gives back more right classes than the prior's candidate on the same held-out samples (a "
                "one-sided Wilcoxon signed-rank test at the rule's level over the candidates set against it, "
                "Bonferroni)",
    "prior failed": "the prior's first candidates failed: the first of its order with a score",
}


def p_better(correct: np.ndarray, other: int, first: int, method: str = "auto") -> float:
    """The one-sided Wilcoxon p that candidate ``other`` gives back more right classes than ``first``, over
    the samples both scored (rows of ``correct``, candidates x samples, NaN where a candidate failed); 1 where
    it is not ahead or they never differ. ``method``: scipy's (``"auto"``: with ties among a few samples, a
    permutation test; ``"approx"``: the normal approximation with its tie correction, which the benchmark's
    entrants use for their ten thousand trials)."""
    both = np.isfinite(correct[other]) & np.isfinite(correct[first])
    diff = correct[other, both] - correct[first, both]
    if not (diff != 0).any() or diff.mean() <= 0:
        return 1.0
    return float(stats.wilcoxon(diff, alternative="greater", method=method).pvalue)


@dataclass(frozen=True)
class Choice:
    """What the rule chose: the candidate's row, why (a key of :data:`REASONS`), the prior's candidate it
    started from, and each candidate's p against that one (NaN for the prior's own and a failed one)."""

    index: int
    why: str
    start: int
    pvalues: np.ndarray


def start_of(correct: np.ndarray, order: Sequence[int]) -> tuple[int, str]:
    """The prior's candidate among the rows of ``correct`` (its first in ``order`` with a score; the rows
    ``order`` leaves out come after it, in row order) and why (``"prior"``, or ``"prior failed"`` where the
    prior's first has no score)."""
    scored = np.isfinite(correct).any(axis=1)
    if not scored.any():
        raise ValueError("no candidate could be scored: every one failed")
    ranked = [*dict.fromkeys([*order, *range(correct.shape[0])])]
    start = next(i for i in ranked if scored[i])
    return start, "prior" if start == ranked[0] else "prior failed"


def pvalues_against(correct: np.ndarray, start: int, method: str = "auto") -> np.ndarray:
    """Each scored candidate's p (:func:`p_better`) against the prior's ``start``; NaN for ``start`` itself
    and for a candidate without a score."""
    scored = np.isfinite(correct).any(axis=1)
    pvalues = np.full(correct.shape[0], np.nan)
    for i in np.flatnonzero(scored):
        if i != start:
            pvalues[i] = p_better(correct, int(i), start, method)
    return pvalues


def decide(correct: np.ndarray, start: int, why: str, pvalues: np.ndarray, alpha: float = ALPHA,
           order: Sequence[int] = ()) -> Choice:
    """The rule's choice from the prior's ``start`` (and ``why`` it is the start) and the p of every other
    candidate against it (:func:`pvalues_against`): the best score among those whose p passes ``alpha``
    divided by their number (Bonferroni), at a tie the one ``order`` places first, else the first row; the
    prior's candidate where none passes."""
    others = np.flatnonzero(np.isfinite(pvalues))
    passed = [int(i) for i in others if pvalues[i] * len(others) <= alpha]
    if not passed:
        return Choice(start, why, start, pvalues)
    score = np.nanmean(correct, axis=1)
    best = max(score[i] for i in passed)
    ranked = [*dict.fromkeys([*order, *range(correct.shape[0])])]
    return Choice(next(i for i in ranked if i in passed and score[i] == best), "evidence", start, pvalues)


def choose(correct: np.ndarray, order: Sequence[int], alpha: float = ALPHA, method: str = "auto") -> Choice:
    """The rule's choice among the rows of ``correct`` (candidates x samples: the share of deals in which each
    held-out sample's class came back right, NaN for a candidate that failed). ``order`` gives the rows the
    prior places first, first: its first with a score is the prior's candidate; a row it leaves out comes after
    it, in row order. ``method``: the test's p (:func:`p_better`)."""
    start, why = start_of(correct, order)
    return decide(correct, start, why, pvalues_against(correct, start, method), alpha, order)

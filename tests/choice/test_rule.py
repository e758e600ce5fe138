"""The rule of the choice (src/choice/rule.py): it keeps the prior's candidate unless another gives back more
right classes by more than the noise of choosing, with the candidates' multiplicity counted."""

import numpy as np
import pytest
from scipy import stats

from src.choice import rule


def rights(rng, shares, n=60):
    """Per candidate, each held-out sample right (1) or wrong (0), drawn at the candidate's share."""
    return np.vstack([(rng.random(n) < share).astype(float) for share in shares])


def test_without_evidence_the_prior_candidate_stays_even_where_another_scores_higher():
    correct = np.array([[1, 0, 1, 0, 1, 0, 1, 0], [1, 1, 1, 0, 1, 0, 1, 0]], dtype=float)  # one sample apart
    chosen = rule.choose(correct, [0])
    assert (chosen.index, chosen.why, chosen.start) == (0, "prior", 0)
    assert correct[1].mean() > correct[0].mean() and chosen.pvalues[1] > rule.ALPHA


def test_a_candidate_far_better_on_the_same_samples_is_chosen_and_the_best_of_those_that_pass():
    prior = np.zeros(40)
    better, best = np.r_[np.ones(30), np.zeros(10)], np.r_[np.ones(36), np.zeros(4)]
    chosen = rule.choose(np.vstack([prior, better, best]), [0])
    assert (chosen.index, chosen.why, chosen.start) == (2, "evidence", 0)


def test_the_p_is_the_one_sided_wilcoxon_of_the_per_sample_differences():
    rng = np.random.default_rng(0)
    correct = rights(rng, [0.4, 0.7])
    diff = correct[1] - correct[0]
    assert rule.p_better(correct, 1, 0) == pytest.approx(stats.wilcoxon(diff, alternative="greater").pvalue)
    assert rule.p_better(correct, 0, 1) == 1.0  # behind: no test of being ahead


def test_the_level_is_divided_among_the_candidates_set_against_the_prior():
    """A candidate that would pass alone does not when many others are set against the prior too."""
    diff_wins = np.r_[np.ones(6), np.zeros(34)]  # six samples right where the prior's are wrong, no loss
    prior, other = np.zeros(40), diff_wins
    alone = rule.choose(np.vstack([prior, other]), [0])
    assert alone.index == 1 and alone.pvalues[1] <= rule.ALPHA
    many = rule.choose(np.vstack([prior, other, *[prior] * 30]), [0])
    assert many.index == 0 and many.why == "prior" and many.pvalues[1] * 31 > rule.ALPHA


def test_a_failed_prior_candidate_gives_way_to_the_next_in_the_prior_order():
    correct = np.vstack([np.full(10, np.nan), np.full(10, 0.5), np.full(10, 0.5)])
    chosen = rule.choose(correct, [0, 2, 1])
    assert (chosen.index, chosen.why, chosen.start) == (2, "prior failed", 2)
    with pytest.raises(ValueError, match="every one failed"):
        rule.choose(np.full((2, 3), np.nan), [0])


def test_a_tie_among_the_candidates_that_pass_goes_to_the_one_the_prior_places_first():
    prior, strong = np.zeros(40), np.r_[np.ones(30), np.zeros(10)]
    chosen = rule.choose(np.vstack([prior, strong, strong]), [0, 2, 1])
    assert chosen.index == 2 and chosen.why == "evidence"


def test_noise_alone_seldom_moves_the_choice():
    """Forty candidates as good as the prior's: the rule moves in at most about ALPHA of the files."""
    rng = np.random.default_rng(1)
    moved = sum(rule.choose(rights(rng, [0.5] * 41), [0]).why == "evidence" for _ in range(200))
    assert moved <= 200 * 2 * rule.ALPHA

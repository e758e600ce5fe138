"""The Bayesian comparison of the first method against each other (src/presentation/bayesian.py): the
probabilities follow the data, sum to one, come back the same for the same seed, and reach the report."""

import numpy as np
import pandas as pd

from src.presentation import bayesian
from src.presentation.ranking import rank_methods


def blocks(values: dict[str, float], n: int = 30, noise: float = 0.002, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({m: v + rng.uniform(-noise, noise, n) for m, v in values.items()})


def test_a_method_far_ahead_is_better_one_level_with_it_equivalent():
    ranking = rank_methods(blocks({"A": 0.80, "B": 0.70, "C": 0.8005}))
    found = bayesian.compare(ranking, first="A").set_index("method")
    assert np.allclose(found[list(bayesian.OUTCOMES)].sum(axis=1), 1.0)
    assert found.loc["B", "better"] > 0.99 and found.loc["C", "equivalent"] > 0.95
    assert abs(found.loc["B", "difference"] - 0.10) < 0.002  # the mean of A minus B over the blocks
    reverse = bayesian.compare(ranking, first="B").set_index("method")
    assert reverse.loc["A", "worse"] > 0.99


def test_the_same_blocks_and_seed_give_the_same_probabilities():
    ranking = rank_methods(blocks({"A": 0.80, "B": 0.795, "C": 0.70}, noise=0.02))
    first, second = bayesian.compare(ranking), bayesian.compare(ranking)
    pd.testing.assert_frame_equal(first, second)
    assert list(first["method"]) == [m for m in ranking.order if m != ranking.leaders[0]]


def test_the_section_draws_one_figure_and_names_the_decided_comparisons(tmp_path):
    ranking = rank_methods(blocks({"A": 0.80, "B": 0.70, "C": 0.60}))
    lines = bayesian.section({"toy, fixed": ranking, "none": None}, tmp_path)
    assert (tmp_path / "bayesian.png").stat().st_size > 1000
    text = "\n".join(lines)
    assert "- toy, fixed: A is better by more than 1 point against 2 of the 2 other methods; open against 0." in text
    assert "| A against | mean difference (points) |" in text and "<details>" in text
    assert bayesian.section({}, tmp_path) == []

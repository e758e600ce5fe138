"""tools/fit_orders.py: the replay of the choice's fits on simulated processes, and its orders."""

import numpy as np
import pytest

from tools import fit_orders


def test_each_fit_goes_to_the_first_process_free_and_a_stage_waits_for_the_one_before():
    stages = [[("a", 4.0), ("b", 1.0), ("c", 1.0), ("d", 3.0)], [("e", 1.0)]]
    found = fit_orders.ends(stages, workers=2)
    # a on one process (0-4); b (0-1), c (1-2), d (2-5) on the other; e once d has ended
    assert found == [(1.0, "b", 1.0), (2.0, "c", 1.0), (4.0, "a", 4.0), (5.0, "d", 3.0), (6.0, "e", 1.0)]
    assert fit_orders.ends(stages, workers=1)[-1][0] == pytest.approx(10.0)  # one process: the sum


def test_the_rounds_run_one_fit_of_every_method_a_round_the_dearest_first():
    fits = [("sda", 1.0)] * 3 + [("gnmf", 2.0)] * 2 + [("nmf", 3.0)]
    prices = {"sda": 1.0, "gnmf": 5.0, "nmf": 2.0}
    rounds = [name for name, _ in fit_orders.ordered(fits, "rounds", prices, seed=0)]
    assert rounds == ["gnmf", "nmf", "sda", "gnmf", "sda", "sda"]
    drawn = [fit_orders.ordered(fits, "drawn", prices, seed) for seed in range(5)]
    assert all(sorted(order) == sorted(fits) for order in drawn) and len({tuple(o) for o in drawn}) > 1


def test_fits_all_alike_are_forecast_well_and_a_dear_one_late_is_forecast_short():
    alike = [[("a", 1.0)] * 40]
    assert np.allclose(fit_orders.replay(alike, {"a": 1.0}, workers=1), 0.0, atol=1e-9)
    # two processes in step: at the fits ending second of a pair nothing is under way, and the time left,
    # which counts one fit under way, is short by 1 / (1 + fits done) at most
    assert all(-0.25 <= error < 0 for error in fit_orders.replay(alike, {"a": 1.0}, workers=2))
    late = [[("a", 1.0)] * 39 + [("a", 40.0)]]  # the last fit takes as long as all the others
    assert all(error < -0.3 for error in fit_orders.replay(late, {"a": 1.0}, workers=1))


def test_the_summary_gives_each_order_its_share_within_and_its_median():
    errors = {"drawn": np.array([[0.1, 0.5, -0.3], [0.3, 0.0, 0.0]]), "rounds": np.zeros((2, 3))}
    lines = fit_orders.summary(errors)
    assert lines[2] == "| drawn | 50% | 50% | 50% | +20% / +25% / -15% |"
    assert lines[3] == "| rounds | 100% | 100% | 100% | +0% / +0% / +0% |"

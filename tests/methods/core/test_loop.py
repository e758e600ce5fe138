"""src.methods.core.loop: Deng Cai's multi-start protocol and stopping rule, and the estimators' use of it."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from src import methods
from src.methods.core.loop import Handoff, Stopping, per_start, solve


def cais_loop(values_after, tol, max_iter):
    """Cai's ``while maxErr > error`` loop, written out on a given objective sequence.

    ``values_after[t]`` is the objective after t updates of the kept start (t = 0: where tracking begins);
    returns the number of updates after which his loop stops, or None if it would not stop by ``max_iter``.
    """
    mean_fit = 10 * values_after[0]
    for t in range(1, max_iter + 1):
        mean_fit = 0.1 * mean_fit + 0.9 * values_after[t]
        if not (mean_fit - values_after[t]) / mean_fit > tol:
            return t
    return None


def geometric(starts, rate, floor):
    """A toy method whose factor x moves towards ``floor`` geometrically; the objective is x itself.

    One start per value of ``starts``: the factor is a stack (s, 1, 1), updated in place as the loop needs.
    """
    def update(factors):
        x = factors["x"]
        x[...] = floor + (x - floor) * rate

    def objective(factors):
        return factors["x"][:, 0, 0].copy()

    return {"x": np.array(starts, dtype=float).reshape(-1, 1, 1)}, update, objective


def test_one_start_stops_where_cais_rule_first_holds():
    factors, update, objective = geometric([10.0], 0.97, 1.0)
    values = [1.0 + 9.0 * 0.97 ** t for t in range(3000)]
    solution = solve(factors, update, objective, Stopping("reference", max_iter=2000, tol=1e-5))
    expected = cais_loop(values, 1e-5, 2000)
    assert expected is not None and solution.n_iter == expected and solution.converged is True
    np.testing.assert_allclose(solution.history, values[: expected + 1], rtol=1e-12)


def test_the_cap_stops_and_reports_not_converged():
    factors, update, objective = geometric([10.0], 0.999, 1.0)
    solution = solve(factors, update, objective, Stopping("reference", max_iter=50, tol=1e-9))
    assert solution.n_iter == 50 and solution.converged is False and len(solution.history) == 51


def test_the_lowest_start_after_min_iter_goes_on_and_iterations_are_counted_like_cais():
    begin = (5.0, 3.0, 3.0, 4.0)  # starts 1 and 2 tie: the first of them is kept
    factors, update, objective = geometric(begin, 0.9, 1.0)
    passes = []
    solution = solve(factors, update, objective, Stopping("reference", max_iter=10_000, min_iter=7, tol=1e-6),
                     callback=passes.append)
    after = [1.0 + (s - 1.0) * 0.9 ** 7 for s in begin]
    np.testing.assert_allclose(solution.start_objectives, after, rtol=1e-12)
    assert solution.best_start == 1
    values = [1.0 + 2.0 * 0.9 ** (7 + t) for t in range(2000)]
    continued = cais_loop(values, 1e-6, 10_000 - 7)
    assert solution.n_iter == 7 + continued and solution.history[0] == pytest.approx(after[1], rel=1e-12)
    assert solution.factors["x"].shape == (1, 1)
    assert solution.factors["x"][0, 0] == pytest.approx(solution.history[-1], rel=1e-12)
    # the callback saw every update: 7 of the four starts together, then each of the kept start's
    assert [(p.phase, p.n_starts) for p in passes[:8]] == [("select", 4)] * 7 + [("iterate", 1)]
    assert len(passes) == solution.n_iter and passes[-1].objective == solution.history[-1]


def test_a_kept_start_that_ends_no_lower_is_replaced_by_the_chosen_factors():
    state = {"updates": 0}

    def update(factors):  # decreases during the selection, then rises: Cai keeps the chosen factors
        state["updates"] += 1
        factors["x"] *= 0.5 if state["updates"] <= 3 else 1.5

    def objective(factors):
        return factors["x"][:, 0, 0].copy()

    factors = {"x": np.array([8.0, 4.0]).reshape(2, 1, 1)}
    solution = solve(factors, update, objective, Stopping("reference", max_iter=100, min_iter=3, tol=1e-5))
    assert solution.best_start == 1 and solution.n_iter == 3
    np.testing.assert_allclose(solution.factors["x"], [[0.5]])  # 4.0 after 3 halvings, not the risen value
    np.testing.assert_allclose(solution.history, [0.5])


def test_fixed_runs_exactly_max_iter_and_records_every_iteration():
    factors, update, objective = geometric([10.0], 0.5, 1.0)
    solution = solve(factors, update, objective, Stopping("fixed", max_iter=25, tol=0.1))
    assert solution.n_iter == 25 and len(solution.history) == 25 and solution.converged is None


def test_rules_for_one_start_run_each_start_of_a_stack_alone():
    seen = []

    def update(factors):  # one start's (1 x 1) factor
        seen.append(factors["x"].shape)
        factors["x"] *= 0.5

    def objective(factors):
        return float(factors["x"][0, 0])

    stacked_update, stacked_objective = per_start(update, objective)
    factors = {"x": np.array([8.0, 4.0, 2.0]).reshape(3, 1, 1)}
    stacked_update(factors)
    np.testing.assert_allclose(stacked_objective(factors), [4.0, 2.0, 1.0])
    assert seen == [(1, 1)] * 3


def test_a_handoff_is_given_only_for_the_same_arrays():
    handoff = Handoff()
    U, V = np.ones((2, 2)), np.ones((3, 2))
    handoff.keep("product", U, V)
    assert handoff.take(U, V) == "product" and handoff.take(U, V) is None  # once
    handoff.keep("product", U, V)
    assert handoff.take(U.copy(), V) is None  # equal values are not the same factors


# -- the estimators -----------------------------------------------------------------------------------

def test_estimator_defaults_are_the_reference_codes():
    for name in methods.NAMES:
        params = methods.REGISTRY[name]().get_params()
        if "stopping" not in params:
            continue
        assert params["stopping"] == "reference" and params["n_starts"] == 10 and params["tol"] == 1e-5
        assert params["min_iter"] == (10 if name in ("nmf_kl", "cnmf_kl") else 30), name
        if "normalize_init" in params:
            assert params["normalize_init"] is True, name


def test_multi_start_keeps_the_lowest_start_and_continues_it_exactly(rng):
    X = rng.random((30, 12))
    starts = [{"U": rng.random((12, 3)), "V": rng.random((30, 3))} for _ in range(4)]
    fit = methods.make("nmf", n_components=3, init=starts, min_iter=8, max_iter=3000).fit(X)
    assert fit.converged_ and fit.best_start_ == int(np.argmin(fit.start_objectives_))
    for index, start in enumerate(starts):  # each start alone, 8 iterations: the objectives of the selection
        alone = methods.make("nmf", n_components=3, init=start, stopping="fixed", n_starts=1, max_iter=8).fit(X)
        assert alone.objective_history_[-1] == pytest.approx(fit.start_objectives_[index], rel=1e-12)
    single = methods.make("nmf", n_components=3, init=starts[fit.best_start_], stopping="fixed", n_starts=1,
                          max_iter=fit.n_iter_).fit(X)
    for name in ("U", "V"):
        np.testing.assert_allclose(fit.factors_[name], single.factors_[name], rtol=1e-10)
    history = fit.objective_history_
    assert history[-1] <= history[0] and np.all(np.diff(history) <= 1e-9 * history[0])


def test_random_start_zero_does_not_depend_on_the_number_of_starts(rng):
    X = rng.random((20, 10))
    one = methods.make("nmf", n_components=2, random_state=5, n_starts=1, stopping="fixed", max_iter=3).fit(X)
    many = methods.make("nmf", n_components=2, random_state=5, n_starts=4, min_iter=3, stopping="fixed",
                        max_iter=3).fit(X)
    assert many.start_objectives_[0] == pytest.approx(one.objective_history_[-1], rel=1e-12)


def test_reaching_the_cap_warns_and_records_not_converged(rng):
    X = rng.random((20, 10))
    with pytest.warns(ConvergenceWarning, match="max_iter=35"):
        fit = methods.make("cf", n_components=3, random_state=0, max_iter=35, tol=0.0).fit(X)
    assert fit.converged_ is False and fit.n_iter_ == 35
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        assert methods.make("cf", n_components=3, random_state=0).fit(X).converged_ is True


def test_kl_embedding_uses_the_l2_norms_of_u_as_gnmf_kl(rng):
    X = rng.random((15, 8))
    fit = methods.make("nmf_kl", n_components=2, random_state=0, n_starts=2).fit(X)
    expected = fit.factors_["V"] * np.linalg.norm(fit.factors_["U"], axis=0)
    np.testing.assert_allclose(fit.embedding_, expected, rtol=1e-12)


@pytest.mark.parametrize("params, message", [({"n_starts": 0}, "n_starts=0"), ({"min_iter": -1}, "min_iter=-1"),
                                             ({"stopping": "never"}, "stopping='never'"), ({"init": []}, "init")])
def test_bad_solver_settings_are_one_line_errors(params, message, rng):
    with pytest.raises(ValueError, match=message):
        methods.make("nmf", **params).fit(rng.random((6, 4)))

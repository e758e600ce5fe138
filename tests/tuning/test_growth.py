"""How a tuned grid grows (src/tuning/growth.py): past an edge where the rule's own choices pile, by the parameter's
step, up to its bound; never by the oracle or the test labels."""

import pandas as pd
import pytest
from test_selection import SEED, Y, HiddenChanged, rows_for, three_settings

from src.protocol.trials import make_trial
from src.tuning import growth, selection
from src.tuning.grids import Grid, settings

GNMF = Grid("gnmf", "GNMF", {"alpha": 10.0}, {"alpha": (1.0, 10.0, 100.0)}, {"alpha": 10.0},
            {"alpha": (0.01, 1000.0)})
PCGNMF = Grid("pcgnmf", "PCGNMF", {"alpha": 100.0, "beta": 100.0},
              {"alpha": (10.0, 100.0, 1000.0), "beta": (10.0, 100.0, 1000.0)}, {"alpha": 10.0, "beta": 10.0},
              {"alpha": (1.0, 100000.0), "beta": (10.0, 10000.0)})


def choices(rows: list[tuple[str, str]], dataset="yale", estimator="gnmf") -> pd.DataFrame:
    """Tuned rows of one data set and method: (setting, selection) per trial."""
    return pd.DataFrame([{"dataset": dataset, "estimator": estimator, "setting": s, "selection": why, "trial": i}
                         for i, (s, why) in enumerate(rows)])


def test_the_next_value_is_one_step_past_the_edge_within_the_bound():
    assert growth.next_value(GNMF, "alpha", "low") == 0.1 and growth.next_value(GNMF, "alpha", "high") == 1000.0
    assert growth.next_value(GNMF.with_values({"alpha": (0.01, 1.0)}), "alpha", "low") is None  # 0.001 < bound
    fnmf = Grid("fnmf", "FNMF", {"farness": 0.01}, {"farness": (0.001, 0.003, 0.01, 0.03)}, {"farness": 3.0},
                {"farness": (0.0003, 0.3)})
    assert growth.next_value(fnmf, "farness", "high") == 0.09  # three significant digits: no 0.09000000000000001
    assert growth.next_value(fnmf, "farness", "low") == 0.000333
    assert growth.next_value(PCGNMF, "beta", "low") is None  # the bound is the grid's own edge: it never grows down


def test_a_pile_is_most_of_the_rules_own_choices_and_at_least_ten():
    piled = [("alpha=1.0", None)] * 6 + [("alpha=10.0", None)] * 4
    assert growth.edge_shares(choices([(s, "labelled") for s, _ in piled]), GNMF) == {"alpha": (10, 0.6, 0.0)}
    # ties and too few samples are no choice of the rule's: they neither count nor dilute
    padded = [(s, "labelled") for s, _ in piled] + [("alpha=10.0", "tie")] * 20 + [("alpha=10.0", "too few")] * 5
    assert growth.edge_shares(choices(padded), GNMF) == {"alpha": (10, 0.6, 0.0)}
    assert growth.piled(10, 0.6) and not growth.piled(10, 0.5) and not growth.piled(9, 1.0)


def test_a_grid_grows_where_the_choices_pile_and_again_until_they_stop_or_reach_the_bound():
    grown = growth.Growth({"gnmf": GNMF}, ("labels10", "unsupervised"))
    low = choices([("alpha=1.0", "labelled")] * 8 + [("alpha=10.0", "labelled")] * 4)
    assert grown.step({"labels10": low}) == [("labels10", "yale", "gnmf", "alpha", 0.1)]
    assert grown.grid("labels10", "yale", "gnmf").values == {"alpha": (0.1, 1.0, 10.0, 100.0)}
    assert grown.grid("labels10", "orl", "gnmf").values == GNMF.values  # each data set its own grid
    lower = choices([("alpha=0.1", "labelled")] * 8 + [("alpha=1.0", "labelled")] * 4)
    assert grown.step({"labels10": lower}) == [("labels10", "yale", "gnmf", "alpha", 0.01)]
    lowest = choices([("alpha=0.01", "labelled")] * 12)
    assert grown.step({"labels10": lowest}) == []  # 0.001 passes the bound: the grid stops there
    assert grown.added() == [("labels10", "yale", "gnmf", "alpha", 0.01), ("labels10", "yale", "gnmf", "alpha", 0.1)]
    first = {"labels10": low}
    edges = grown.edges(first, {"labels10": lowest})
    row = edges.iloc[0]
    assert (row["n_before"], row["low_before"], row["low"], row["still_piles"], row["stops"]) == \
        (12, 8 / 12, 1.0, "low", "bound")
    assert growth.text_values(row["grown_to"]) == [0.01, 0.1] and row["declared"] == "1 10 100"
    # the unsupervised track searches the label tracks' grown grids (cells computed anyway) and steers none
    assert grown.grid("unsupervised", "yale", "gnmf").values == {"alpha": (0.01, 0.1, 1.0, 10.0, 100.0)}
    oracle = choices([("alpha=100.0", "oracle")] * 12)
    assert grown.step({"unsupervised": oracle}) == []


def test_two_parameters_grow_each_on_its_own_axis():
    grown = growth.Growth({"pcgnmf": PCGNMF}, ("labels30",))
    rows = choices([("alpha=1000.0,beta=100.0", "cross-validated")] * 7
                   + [("alpha=100.0,beta=10.0", "cross-validated")] * 5, estimator="pcgnmf")
    assert grown.step({"labels30": rows}) == [("labels30", "yale", "pcgnmf", "alpha", 10000.0)]
    grid = grown.grid("labels30", "yale", "pcgnmf")
    assert {"alpha": 10000.0, "beta": 100.0} in settings(grid)  # the grown value at the other's default
    assert len(settings(grid)) == 1 + 3 + 2
    at_beta_edge = choices([("alpha=100.0,beta=10.0", "cross-validated")] * 12, estimator="pcgnmf")
    assert grown.step({"labels30": at_beta_edge}) == []  # beta's bound is its lowest value: it stops there


@pytest.mark.parametrize("trials", [selection.Trials, HiddenChanged])
def test_the_classes_of_the_unlabelled_samples_leave_every_grid_as_it_is(trials):
    """Ten trials whose labelled samples favour alpha = 1 (the low edge) and whose test labels favour 100:
    the grid grows below 1 whatever the unlabelled samples' classes are, and never above."""
    cells = pd.concat([rows_for(three_settings(make_trial(Y, "toy", 4, t, SEED, {"mode": "fraction",
                                                                                    "fraction": 0.3})), trial=t)
                       for t in range(10)], ignore_index=True)
    chosen = selection.select(cells, None, GNMF, trials(lambda name: Y))
    assert set(chosen["setting"]) == {"alpha=1.0"}
    grown = growth.Growth({"gnmf": GNMF}, ("labels30",))
    assert grown.step({"labels30": chosen}) == [("labels30", "toy", "gnmf", "alpha", 0.1)]
    # the oracle, which reads the test labels, would have chosen alpha = 100: it steers nothing
    assert set(selection.oracle(cells, GNMF)["setting"]) == {"alpha=100.0"}


def test_a_growth_rule_is_declared_for_every_tuned_parameter_of_the_family():
    from src.tuning.homes import family_grids

    for name, grid in family_grids(["labels10", "labels30", "unsupervised"]).items():
        for param, values in grid.values.items():
            low, high = grid.bounds[param]
            assert grid.steps[param] > 1 and low <= min(values) and max(values) <= high, (name, param)


def test_the_settings_table_alone_re_derives_the_runs_choices_and_growth():
    """What ``make results`` ships (the searched settings, :mod:`src.tuning.tables`) replayed by the rule's own
    code (:func:`src.tuning.growth.replay`) gives the tuned rows the run chose and the grids it grew."""
    from src.tuning.tables import searched_settings

    scheme = {"mode": "fraction", "fraction": 0.3}
    cells = pd.concat([rows_for(three_settings(make_trial(Y, "toy", 4, t, SEED, scheme)), trial=t)
                       for t in range(12)], ignore_index=True)
    trials = selection.Trials(lambda name: Y)
    per = selection.validated(cells, GNMF, trials)
    chosen = selection.select(cells, None, GNMF, trials, per)
    searched = searched_settings(cells, chosen, GNMF, per)
    assert searched["chosen"].sum() == 12 and set(searched["setting"]) == {"alpha=1.0", "alpha=10.0", "alpha=100.0"}
    run = growth.Growth({"gnmf": GNMF}, ("labels30",))
    run.step({"labels30": chosen})
    replayed, first, last = growth.replay({"labels30": searched}, {"gnmf": GNMF}, ["labels30"])
    assert replayed.grown == run.grown == {("labels30", "toy", "gnmf"): {"alpha": (0.1, 1.0, 10.0, 100.0)}}
    mine = last["labels30"].merge(chosen, on=["dataset", "method", "k", "trial"], suffixes=("", "_run"))
    assert len(mine) == 12 and (mine["setting"] == mine["setting_run"]).all()
    assert (mine["selection"] == mine["selection_run"]).all()


def test_a_parameter_of_whole_numbers_grows_in_whole_numbers_or_not_at_all():
    from src.tuning.growth import next_value

    def neighbours(values, step, bounds=(1.0, 81.0)):
        return Grid("knn", "kNN", {"n_neighbors": values[0]}, {"n_neighbors": values}, {"n_neighbors": step},
                    {"n_neighbors": bounds}, frozenset({"n_neighbors"}))

    grown = next_value(neighbours((1, 3, 9), 3.0), "n_neighbors", "high")
    assert grown == 27 and isinstance(grown, int)
    assert next_value(neighbours((1, 3, 9), 3.0), "n_neighbors", "low") is None  # 1/3 rounds below the bound
    assert next_value(neighbours((3, 7, 15), 2.0), "n_neighbors", "low") == 2  # 1.5, the nearest whole number
    assert next_value(neighbours((1, 2), 1.2), "n_neighbors", "low") is None  # 0.83 rounds to the edge
    assert next_value(neighbours((27, 81), 3.0), "n_neighbors", "high") is None  # past the bound
    plain = Grid("gnmf", "GNMF", {"alpha": 100}, {"alpha": (1, 10, 100)}, {"alpha": 10.0}, {"alpha": (0.01, 1e4)})
    assert next_value(plain, "alpha", "low") == 0.1  # a weight keeps its fractions


def test_a_grow_rule_that_says_integer_holds_whole_numbers_only(tmp_path, monkeypatch):
    from src.errors import ConfigError
    from src.tuning import grids

    assert grids.family_grid("knn").integers == frozenset({"n_neighbors"})
    (tmp_path / "method").mkdir()
    (tmp_path / "method" / "toy.yaml").write_text(
        "name: toy\nparams: {n: 2.5}\ntune: {n: [2.5, 5]}\ngrow: {n: {step: 2, bounds: [1, 10], integer: true}}\n")
    monkeypatch.setattr(grids, "CONF_DIR", tmp_path)
    with pytest.raises(ConfigError, match="no whole number"):
        grids.family_grid("toy")

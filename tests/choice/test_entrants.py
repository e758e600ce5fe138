"""The benchmark's choice entrants (src.choice.entrants): the rule chosen on the other data sets alone, the
shipped entrants recomputed from the shipped files, and one line for a missing file."""

import logging

import numpy as np
import pandas as pd
import pytest

from src.choice import entrants, fold_fits, prior, rule
from src.reproduction import shipped


def rows_at(dataset: str, given_by_level: dict[float, float]) -> pd.DataFrame:
    """Rows of :func:`src.choice.entrants.choose_trials`' shape on one data set: two blocks of two trials each,
    every trial at each level giving back that level's share."""
    return pd.DataFrame([{"track": "labels30", "dataset": dataset, "k": k, "trial": n, "alpha": level,
                          "given_unlabelled": given, "chosen": f"at {level:g}"}
                         for level, given in given_by_level.items() for k in (2, 3) for n in (0, 1)])


def test_the_variant_is_the_best_on_the_rows_it_reads_and_at_a_tie_the_first_reading_then_the_rules_level():
    def at(given):
        return rows_at("a", {0.05: given})
    assert entrants.chosen_variant({("mean", 0.05): at(0.5), ("regret", 0.05): at(0.6)}) == ("regret", 0.05)
    assert entrants.chosen_variant({("mean", 0.05): at(0.6), ("regret", 0.05): at(0.6)}) == ("mean", 0.05)
    assert entrants.chosen_variant({("mean", 0.001): at(0.6), ("mean", 0.05): at(0.6), ("mean", 1.0): at(0.6)}) \
        == ("mean", rule.ALPHA)
    assert entrants.chosen_variant({("mean", 0.001): at(0.6), ("mean", 1.0): at(0.6)}) == ("mean", 0.001)


def test_each_data_sets_rule_is_chosen_on_the_other_data_sets_with_their_priors_blind_to_it(monkeypatch):
    """Data set a does best under the regret prior on its own trials, b and c under the mean: a's entrant runs
    under the mean, chosen on b and c, b's and c's under the regret, where a's trials outweigh the other one's.
    Every trial of another data set is scored under a prior that reads neither it nor the data set at hand."""
    own = {"a": {"mean": 0.5, "regret": 0.9}, "b": {"mean": 0.8, "regret": 0.6}, "c": {"mean": 0.7, "regret": 0.65}}
    seen = []
    monkeypatch.setattr(entrants, "schemes", lambda tracks, dataset: {})
    monkeypatch.setattr(entrants, "score_trials", lambda fits, cells, settings, y, specs, entrant: [
        entrants.Scored("labels30", str(fits["dataset"].iloc[0]), k, 0) for k in (2, 3)])
    monkeypatch.setattr(entrants, "prior_order", lambda cells, track, excluded, label_free, how: [how, *excluded])

    def pick(trial, names, level):
        how, *excluded = names
        seen.append((trial.dataset, set(excluded)))
        return {"track": trial.track, "dataset": trial.dataset, "k": trial.k, "trial": trial.trial,
                "alpha": level, "given_unlabelled": own[trial.dataset][how]}
    monkeypatch.setattr(entrants, "pick", pick)
    fits = pd.DataFrame({"dataset": ["a", "b", "c"], "code_fingerprint": "f"})
    found, rules = entrants.compute(fits, pd.DataFrame(), pd.DataFrame(), lambda dataset: np.zeros(1), (0.05,))
    how = found[found["method"] == "Choice"].groupby("dataset")["prior_how"].first()
    assert how.to_dict() == {"a": "mean", "b": "regret", "c": "regret"}
    where = found[found["method"] == "Choice"].groupby("dataset")["level_chosen_on"].first()
    assert where["a"] == "b c" and where["b"] == "a c"
    assert all(dataset in excluded for dataset, excluded in seen)
    assert {frozenset(excluded) for _, excluded in seen} >= {frozenset({"a", "b"}), frozenset({"a"})}
    assert set(found["method"]) == set(entrants.ENTRANTS) and (found["code_fingerprint"] == "f").all()
    # a person's file is none of the data sets: its rule is chosen on all three, each under a prior blind to it
    # (means 0.667 by the mean, 0.717 by the regret)
    mine = rules.set_index("entrant").loc["Choice"]
    assert (mine["prior_how"], mine["alpha"], mine["chosen_on"]) == ("regret", 0.05, "a b c")
    assert set(rules["entrant"]) == set(entrants.ENTRANTS) and (rules["code_fingerprint"] == "f").all()
    assert {frozenset({"a"}), frozenset({"b"}), frozenset({"c"})} <= {frozenset(e) for _, e in seen}


def test_the_command_writes_the_entrants_and_the_rule_of_a_persons_file(monkeypatch, tmp_path):
    rows = pd.DataFrame({"dataset": ["yale"], "method": ["Choice"]})
    rules = pd.DataFrame({"entrant": ["Choice"], "prior_how": ["regret"], "alpha": [0.2], "chosen_on": ["yale"],
                          "code_fingerprint": ["f"]})
    monkeypatch.setattr(fold_fits, "load", lambda: pd.DataFrame())
    monkeypatch.setattr(shipped, "load_settings", lambda: pd.DataFrame())
    monkeypatch.setattr(shipped, "load", lambda: pd.DataFrame({"track": []}))
    monkeypatch.setattr(entrants, "compute", lambda *args: (rows, rules))
    assert entrants.run(tmp_path / "entrants.csv.gz", rule_path=tmp_path / "rule.csv") == 0
    assert prior.shipped_rule(tmp_path / "rule.csv") == ("regret", 0.2)
    (tmp_path / "a file").write_text("")
    monkeypatch.setattr(entrants, "compute", lambda *args: pytest.fail("computed before its folder was checked"))
    assert entrants.run(tmp_path / "again.csv.gz", rule_path=tmp_path / "a file" / "rule.csv") == 2
    assert not (tmp_path / "again.csv.gz").exists()


def test_the_command_without_fold_fits_says_so_in_one_line(monkeypatch, tmp_path, caplog):
    monkeypatch.setattr(fold_fits, "load", lambda: None)
    with caplog.at_level(logging.ERROR):
        assert entrants.run(tmp_path / "entrants.csv.gz") == 2
    assert len(caplog.records) == 1 and "--fold-fits" in caplog.records[0].getMessage()
    assert not (tmp_path / "entrants.csv.gz").exists()


@pytest.mark.integration
def test_the_shipped_entrants_on_yale_are_recomputed_from_the_shipped_files_alone():
    """Yale's rows of the shipped entrants file, chosen again from the shipped fold fits, cells and settings
    under the rule shipped with them: the same candidate, for the same reason, with the same scores."""
    shipped_rows = entrants.load()
    assert shipped_rows is not None, f"{entrants.FILE} does not ship: python -m src.benchmark --choice-entrants"
    mine = shipped_rows[(shipped_rows["dataset"] == "yale") & (shipped_rows["method"] == "Choice")]
    fits = fold_fits.load(["yale"])
    assert fits is not None and (mine["code_fingerprint"] == fits["code_fingerprint"].iloc[0]).all()
    cells = shipped.load()
    cells = cells[cells["track"].isin(fold_fits.LABEL_TRACKS)]
    level, how = float(mine["alpha"].iloc[0]), str(mine["prior_how"].iloc[0])
    again = entrants.choose_trials(fits, cells, shipped.load_settings(), entrants.dataset_classes("yale"),
                                   fold_fits.schemes(fold_fits.LABEL_TRACKS, "yale"), (level,), how=how)
    both = mine.merge(again, on=["track", "dataset", "k", "trial"], suffixes=("", "_again"))
    assert len(both) == len(mine) == len(again)
    assert (both["chosen"] == both["chosen_again"]).all() and (both["selection"] == both["selection_again"]).all()
    np.testing.assert_allclose(both["given_unlabelled"], both["given_unlabelled_again"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(both["acc"], both["acc_again"], rtol=0, atol=1e-9)

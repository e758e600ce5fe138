"""The benchmark's choice entrants (src.choice.entrants): the level chosen on the other data sets alone, the
shipped entrants recomputed from the shipped files, and one line for a missing file."""

import logging

import numpy as np
import pandas as pd
import pytest

from src.choice import entrants, fold_fits, rule
from src.reproduction import shipped


def rows_at(dataset: str, given_by_level: dict[float, float]) -> pd.DataFrame:
    """Rows of :func:`src.choice.entrants.choose_trials`' shape on one data set: two blocks of two trials each,
    every trial at each level giving back that level's share."""
    return pd.DataFrame([{"track": "labels30", "dataset": dataset, "k": k, "trial": n, "alpha": level,
                          "given_unlabelled": given, "chosen": f"at {level:g}"}
                         for level, given in given_by_level.items() for k in (2, 3) for n in (0, 1)])


def test_the_level_is_the_best_on_the_rows_it_reads_and_at_a_tie_the_rules_then_the_smallest():
    levels = (0.001, 0.05, 1.0)
    assert entrants.chosen_level(rows_at("a", {0.001: 0.5, 0.05: 0.6, 1.0: 0.7}), levels) == 1.0
    assert entrants.chosen_level(rows_at("a", {0.001: 0.7, 0.05: 0.7, 1.0: 0.7}), levels) == rule.ALPHA
    assert entrants.chosen_level(rows_at("a", {0.001: 0.7, 0.05: 0.6, 1.0: 0.7}), levels) == 0.001


def test_each_data_sets_level_is_chosen_on_the_other_data_sets_alone(monkeypatch):
    """Data set a does best at level 1 on its own rows, b and c at 0.05: a's entrant runs at 0.05, chosen on b
    and c, while b's and c's run at 1, where a's rows outweigh the other one's."""
    own = {"a": {0.05: 0.5, 1.0: 0.9}, "b": {0.05: 0.8, 1.0: 0.6}, "c": {0.05: 0.7, 1.0: 0.65}}
    monkeypatch.setattr(entrants, "schemes", lambda tracks, dataset: {})
    monkeypatch.setattr(entrants, "choose_trials", lambda fits, cells, settings, y, specs, levels, entrant:
                        rows_at(str(fits["dataset"].iloc[0]), own[str(fits["dataset"].iloc[0])]))
    fits = pd.DataFrame({"dataset": ["a", "b", "c"], "code_fingerprint": "f"})
    found = entrants.compute(fits, pd.DataFrame(), pd.DataFrame(), lambda dataset: np.zeros(1), (0.05, 1.0))
    level = found[found["method"] == "Choice"].groupby("dataset")["alpha"].first()
    assert level.to_dict() == {"a": 0.05, "b": 1.0, "c": 1.0}
    where = found[found["method"] == "Choice"].groupby("dataset")["level_chosen_on"].first()
    assert where["a"] == "b c" and where["b"] == "a c"
    assert set(found["method"]) == set(entrants.ENTRANTS) and (found["code_fingerprint"] == "f").all()


def test_the_command_without_fold_fits_says_so_in_one_line(monkeypatch, tmp_path, caplog):
    monkeypatch.setattr(fold_fits, "load", lambda: None)
    with caplog.at_level(logging.ERROR):
        assert entrants.run(tmp_path / "entrants.csv.gz") == 2
    assert len(caplog.records) == 1 and "--fold-fits" in caplog.records[0].getMessage()
    assert not (tmp_path / "entrants.csv.gz").exists()


@pytest.mark.integration
def test_the_shipped_entrants_on_yale_are_recomputed_from_the_shipped_files_alone():
    """Yale's rows of the shipped entrants file, chosen again from the shipped fold fits, cells and settings at
    the level shipped with them: the same candidate, for the same reason, with the same scores."""
    shipped_rows = entrants.load()
    assert shipped_rows is not None, f"{entrants.FILE} does not ship: python -m src.benchmark --choice-entrants"
    mine = shipped_rows[(shipped_rows["dataset"] == "yale") & (shipped_rows["method"] == "Choice")]
    fits = fold_fits.load(["yale"])
    assert fits is not None and (mine["code_fingerprint"] == fits["code_fingerprint"].iloc[0]).all()
    cells = shipped.load()
    cells = cells[cells["track"].isin(fold_fits.LABEL_TRACKS)]
    level = float(mine["alpha"].iloc[0])
    again = entrants.choose_trials(fits, cells, shipped.load_settings(), entrants.dataset_classes("yale"),
                                   fold_fits.schemes(fold_fits.LABEL_TRACKS, "yale"), (level,))
    both = mine.merge(again, on=["track", "dataset", "k", "trial"], suffixes=("", "_again"))
    assert len(both) == len(mine) == len(again)
    assert (both["chosen"] == both["chosen_again"]).all() and (both["selection"] == both["selection_again"]).all()
    np.testing.assert_allclose(both["given_unlabelled"], both["given_unlabelled_again"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(both["acc"], both["acc_again"], rtol=0, atol=1e-9)

"""src.running.cell_warnings: what a method warns while a cell runs, kept with the row and counted per method."""

import json
import warnings

import pandas as pd
from sklearn.exceptions import ConvergenceWarning

from src.running import cell_warnings


def test_every_warning_is_caught_counted_per_category_with_its_first_message_and_none_shown(capsys):
    with cell_warnings.caught() as records:
        for i in range(3):
            warnings.warn(f"stopped at {i}", ConvergenceWarning)
        warnings.warn("a library's note", UserWarning)
    assert capsys.readouterr().err == ""
    assert json.loads(cell_warnings.recorded(records)) == [
        {"category": "ConvergenceWarning", "message": "stopped at 0", "count": 3},
        {"category": "UserWarning", "message": "a library's note", "count": 1}]
    assert cell_warnings.recorded([]) == "" and cell_warnings.read("") == [] and cell_warnings.read(float("nan")) == []


def test_the_filters_are_restored_after_the_catch():
    before = list(warnings.filters)
    with cell_warnings.caught():
        warnings.warn("inside", UserWarning)
    assert warnings.filters == before


def test_one_line_per_method_category_and_message_with_its_count_of_cells():
    said = json.dumps([{"category": "ConvergenceWarning", "message": "Maximum number of iterations 300 reached. "
                        "Increase it to improve convergence.", "count": 2}])
    rows = pd.DataFrame({"method": ["MyNMF"] * 4 + ["NMF"] * 2, "warnings": [said, said, said, "", "", ""]})
    assert cell_warnings.lines(rows) == ["MyNMF: ConvergenceWarning in 3 of 4 cells: Maximum number of iterations "
                                         "300 reached. Increase it to improve convergence."]
    assert cell_warnings.lines(rows.assign(warnings="")) == [] and cell_warnings.lines(rows[["method"]]) == []


def test_a_cell_shared_by_several_jobs_is_counted_once():
    row = {"dataset": "yale", "method": "NMF", "k": 2, "trial": 0, "seed": 0, "partition": "aab", "objective": 1.5,
           "n_iter": 9, "warnings": ""}
    rows = pd.DataFrame([row, {**row, "config_hash": "other track"}, {**row, "trial": 1}])
    assert len(cell_warnings.distinct(rows)) == 2

"""src.presentation.convergence: which cells stopped at their iteration cap, which warned, per method."""

import json

import pandas as pd

from src.presentation import convergence

MODULE = "fixtures.outside.estimators"
WARNED = json.dumps([{"category": "ConvergenceWarning", "message": "not met", "count": 1}])


def cells():
    return pd.DataFrame([
        # the family: converged_ says it; None (fixed iterations) never counts, whatever n_iter
        {"method": "NMF", "estimator": "nmf", "converged": False, "n_iter": 500, "warnings": WARNED},
        {"method": "NMF", "estimator": "nmf", "converged": True, "n_iter": 40, "warnings": ""},
        {"method": "GNMF", "estimator": "gnmf", "converged": None, "n_iter": 100, "param_max_iter": 100,
         "warnings": ""},
        # outside, no converged_: at cap when n_iter reaches max_iter, the row's or the class's default (3)
        {"method": "Capped", "estimator": f"{MODULE}:Capped", "converged": None, "n_iter": 3, "warnings": WARNED},
        {"method": "Capped", "estimator": f"{MODULE}:Capped", "converged": None, "n_iter": 2, "warnings": ""},
        {"method": "Plain", "estimator": f"{MODULE}:PlainNMF", "converged": None, "n_iter": 50,
         "param_max_iter": 50, "warnings": ""},
    ])


def test_a_cell_at_its_cap_is_one_said_not_converged_or_an_outside_one_at_max_iter():
    assert convergence.at_cap(cells()).tolist() == [True, False, False, True, False, True]
    assert convergence.default_max_iter(f"{MODULE}:Capped") == 3 and convergence.default_max_iter("kmeans") != 0


def test_the_table_counts_per_method_and_names_each_warning_with_its_cells():
    table = convergence.table(cells()).set_index("method")
    assert table.loc["NMF"].tolist() == [2, 1, 1, "ConvergenceWarning (1)"]
    assert table.loc["GNMF"].tolist() == [1, 0, 0, ""] and table.loc["Plain", "at cap"] == 1
    assert convergence.mostly_capped(cells(), "Plain") == (1, 1) and convergence.mostly_capped(cells(), "NMF") is None


def test_the_section_says_it_in_a_sentence_and_a_table_folded_when_long():
    text = "\n".join(convergence.section(cells()))
    assert "Of 4 methods, 3 had cells that stopped at their iteration cap" in text and "2 warned" in text
    assert "| NMF | 2 | 1 | 1 | ConvergenceWarning (1) |" in text and "<details>" not in text
    assert "- NMF: ConvergenceWarning in 1 of 2 cells: not met" in text  # the closing line, as a note
    many = pd.concat([cells().assign(method=f"M{i}") for i in range(convergence.FOLD + 1)], ignore_index=True)
    assert "<details><summary>Per method</summary>" in "\n".join(convergence.section(many))
    quiet = cells().iloc[[1, 2]]
    assert "Every cell of the 2 methods converged where its method reports it, and none warned." in \
        "\n".join(convergence.section(quiet))

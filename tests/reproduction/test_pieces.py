"""A run done in pieces (src/reproduction/runner.py: pieces.json) and a tuned run's rounds as one record
(src/running/pool/schedule.py: combined): the whole's cost is the sum of its pieces, and the rounds' forecast is
judged on the whole run's clock."""

import pandas as pd
import pytest

from src.reproduction import runner
from src.running.pool import schedule


def test_pieces_add_up_and_a_command_that_computed_nothing_is_no_piece(tmp_path):
    assert runner.pieces(tmp_path) == []
    runner.add_piece(tmp_path, "python -m src.benchmark --tune --datasets yale orl", 2100,
                     {"computed": 30000, "copied": 0, "reused": 0, "workers": 2})
    runner.add_piece(tmp_path, "python -m src.benchmark --tune", 60, {"computed": 0, "reused": 30000})
    found = runner.add_piece(tmp_path, "python -m src.benchmark --tune --datasets coil20", 4000,
                             {"computed": 20000, "copied": 0, "reused": 0, "workers": 2})
    assert [p["command"] for p in found] == ["python -m src.benchmark --tune --datasets yale orl",
                                             "python -m src.benchmark --tune --datasets coil20"]
    assert sum(p["wall_seconds"] for p in runner.pieces(tmp_path)) == 6100


def test_the_rounds_are_one_record_on_one_clock():
    first = pd.DataFrame({"paper": ["a"] * 3})
    second = pd.DataFrame({"paper": ["b"]})
    # round one: 300 cells in 100 s, its forecast at 10 s says 90 s left (it knows nothing of round two)
    one = {"jobs": 3, "cells": 300, "computed": 300, "cpu_seconds": 200.0, "wall_seconds": 100.0, "workers": 2,
           "forecast": [[10.0, 0.1, 0.1, 90.0], [50.0, 0.5, 0.5, 50.0]]}
    two = {"jobs": 1, "cells": 100, "computed": 100, "cpu_seconds": 60.0, "wall_seconds": 30.0, "workers": 2,
           "forecast": [[3.0, 0.1, 0.1, 27.0]]}
    table, summary = schedule.combined([(0.0, first, one), (120.0, second, two)])
    assert len(table) == 4 and summary["computed"] == 400 and summary["jobs"] == 4
    assert summary["wall_seconds"] == 150.0  # 120 s to the second round's start, 30 s of it
    assert summary["forecast"][2] == [123.0, pytest.approx((300 + 10) / 400), pytest.approx((200 + 6) / 260), 27.0]
    at_ten = summary["forecast_errors_by_time"][0]  # 10% of 150 s: the first sample at 15 s or later (50 s)
    assert at_ten["elapsed"] == 50.0 and at_ten["forecast"] == 50.0 and at_ten["actual"] == 100.0
    assert at_ten["error"] == pytest.approx(-0.5)
    assert [r["start"] for r in summary["rounds"]] == [0.0, 120.0]

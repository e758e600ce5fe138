"""tools/cluster_targets.py: the time left each run recorded, read back against the target."""

import numpy as np
import pandas as pd
import pytest

from tools import cluster_targets


def recorded(at, lines):
    """A run's ``provenance.json`` ``time_left``: errors (shares) at 10 / 25 / 50% of the fits, and of its lines."""
    return {"forecast_errors": [{"cells": share, "error": error} for share, error in zip((0.1, 0.25, 0.5), at)],
            "forecast_errors_by_time": [], "lines": [{"error": error} for error in lines]}


def test_a_runs_time_left_is_read_in_points_at_each_share_of_the_fits_and_over_its_lines():
    row = cluster_targets.time_left_errors(recorded((0.4, -0.1, 0.02), (0.2, -0.3, 0.05)))
    assert row["left_at_10"] == pytest.approx(40) and row["left_at_50"] == pytest.approx(2)
    assert row["lines"] == 3 and row["lines_low"] == pytest.approx(-30) and row["lines_high"] == pytest.approx(20)
    quiet = cluster_targets.time_left_errors(recorded((0.4,), ()))  # ended before its first line was due
    assert quiet["lines"] == 0 and np.isnan(quiet["lines_low"]) and np.isnan(quiet["left_at_25"])


def test_the_summary_counts_the_files_whose_every_line_was_within_the_target():
    rows = [cluster_targets.time_left_errors(recorded((0.3, 0.1, 0.0), lines))
            for lines in ((0.2, -0.1), (0.26,), ())]
    line = cluster_targets.time_left_summary(pd.DataFrame(rows))
    assert "on the 3 progress lines read before the end (2 of 3 files" in line
    assert "-10% to +26%" in line and "within 25% on every line of 1 of 2 files" in line
    assert "10%: +30% to +30%" in line
    none = cluster_targets.time_left_summary(pd.DataFrame(rows[2:]))
    assert "no file's run said a time left before its end" in none

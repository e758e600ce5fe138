"""The pool's order (expected times), SLURM batches of cells, and the schedule's record."""

import json
import math

import pandas as pd
import pytest

from src.pool import schedule
from src.pool.workers import batches


def test_a_recorded_time_is_expected_before_the_model(tmp_path):
    stale = tmp_path / "a.json"
    stale.write_text(json.dumps({"fit_seconds": 2.5, "kmeans_seconds": 0.5, "config_hash": "old"}))
    assert schedule.recorded_seconds([tmp_path / "missing.json", stale]) == 3.0
    assert schedule.recorded_seconds([tmp_path / "missing.json"]) is None
    modelled = schedule.model_seconds(100, 1024, 5, 1)
    assert modelled > 0
    assert schedule.model_seconds(200, 1024, 5, 1) == pytest.approx(2 * modelled)  # bigger cells first
    assert schedule.model_seconds(100, 1024, 5, 10) == pytest.approx(10 * modelled)  # ten sub-runs, ten fits


def test_modelled_cells_are_put_in_seconds_by_the_recorded_ones():
    # two recorded cells take 10x and 30x their model (median 30, the upper middle), one has no record
    assert schedule.expected_seconds([1.0, 3.0, None], [0.1, 0.1, 0.2]) == pytest.approx([1.0, 3.0, 6.0])
    assert schedule.expected_seconds([None, None], [0.1, 0.2]) == [0.1, 0.2]  # nothing recorded: the model


def test_batches_hold_about_the_same_work_and_every_cell_once():
    items = list(range(40))
    seconds = {i: float(40 - i) for i in items}  # longest first, 820 s in all
    groups = batches(items, seconds.get, seconds=100.0)
    assert len(groups) == math.ceil(820 / 100)
    assert sorted(i for group in groups for i in group) == items
    loads = [sum(seconds[i] for i in group) for group in groups]
    assert max(loads) - min(loads) <= max(seconds.values())  # greedy least-loaded: within one cell
    assert batches(items[:3], seconds.get, seconds=1e6) == [items[:3]]  # little work: one task
    assert len(batches(items[:3], seconds.get, seconds=1e-3)) == 3  # never more tasks than cells


def test_the_record_reads_back(tmp_path):
    rows = [{"paper": "toy", "sweep": 0, "job": "toy/runs/yale_NMF", "k": 2, "trial": 0, "seconds": 1.5,
             "status": "computed"}]
    schedule.write_record(tmp_path, rows, {"wall_seconds": 3.0, "workers": 2})
    table, summary = schedule.cell_table(tmp_path)
    assert list(table.columns) == list(schedule.COLUMNS) and len(table) == 1
    assert table.loc[0, "seconds"] == 1.5 and pd.isna(table.loc[0, "cpu_seconds"])
    assert summary == {"wall_seconds": 3.0, "workers": 2}
    assert schedule.cell_table(tmp_path / "nothing") is None
    assert schedule.utilisation(110.0, 200.0, 2) == 1.1

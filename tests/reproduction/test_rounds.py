"""A tuned run's rounds (src/reproduction/rounds.py): each sweep composed once, a later round priced by the
rows of the rounds before it (their homes are the pool's sources), and one record of every round on one clock."""

from argparse import Namespace

import pytest

from src.reproduction import rounds as rounds_module
from src.reproduction.homes import Paper
from src.reproduction.runner import Writers
from src.running.pool import schedule


def fake_pool(calls: list, cells_per_sweep: int = 10):
    """A pool that records what it was given and writes a record of its cells, as run_pool does."""

    def run_pool(homes, overrides, workers, out, dry_run=False, sources=(), job_report=None, unit="", later=0.0):
        calls.append({"homes": homes, "sources": list(sources), "later": later})
        sweeps = [sweep for home in homes for sweep in home.sweeps]
        summary = {"jobs": len(sweeps), "cells": cells_per_sweep * len(sweeps),
                   "computed": cells_per_sweep * len(sweeps), "cpu_seconds": 2.0 * len(sweeps),
                   "wall_seconds": 1.0, "workers": 2, "forecast": []}
        if not dry_run:
            schedule.write_record(out, [{"paper": home.name} for home in homes for _ in home.sweeps], summary)
        return summary

    return run_pool


def test_later_rounds_compose_only_new_sweeps_and_are_priced_by_the_earlier_rounds(tmp_path, monkeypatch):
    calls: list = []
    monkeypatch.setattr(rounds_module, "run_pool", fake_pool(calls))
    fixed = Paper("labels10", tmp_path, sweeps=(("method=nmf",),), group="benchmark")
    other = Paper("labels30", tmp_path, sweeps=(("method=gnmf",),), group="benchmark")
    grid = Paper("tuned", tmp_path, sweeps=(("method=gnmf", "method.params.alpha=1"),))
    grown = Paper("tuned", tmp_path, sweeps=(("method=gnmf", "method.params.alpha=1"),
                                             ("method=gnmf", "method.params.alpha=0.1")))
    options = Namespace(overrides=[], workers=2, dry_run=False)
    compute = rounds_module.Rounds([fixed], options, tmp_path, Writers(None, None, None), sources=[other])
    compute([grid], 1, later=50.0)
    compute([grown], 2)

    first, second = calls
    assert [h.name for h in first["homes"]] == ["labels10", "tuned"] and first["later"] == 50.0
    assert first["sources"] == [other]
    # round 2: the fixed settings are not run again, the sweep of round 1 not composed again
    assert [h.sweeps for h in second["homes"]] == [(("method=gnmf", "method.params.alpha=0.1"),)]
    assert [h.name for h in second["sources"]] == ["labels30", "labels10", "tuned"]  # round 1's rows price it
    record = schedule.cell_table(tmp_path)[1]
    assert record["computed"] == 30 and [r["computed"] for r in record["rounds"]] == [20, 10]
    assert compute.summary()["computed"] == 30


def test_a_dry_run_records_nothing(tmp_path, monkeypatch):
    calls: list = []
    monkeypatch.setattr(rounds_module, "run_pool", fake_pool(calls))
    grid = Paper("tuned", tmp_path, sweeps=(("method=gnmf",),))
    compute = rounds_module.Rounds([], Namespace(overrides=[], workers=2, dry_run=True), tmp_path,
                                   Writers(None, None, None))
    compute([grid])
    assert len(calls) == 1 and compute.summary() is None
    assert schedule.cell_table(tmp_path) is None


def test_a_stopped_round_keeps_the_cells_its_pool_recorded(tmp_path, monkeypatch):
    calls: list = []
    pool = fake_pool(calls)

    def stopped(homes, *args, **options):
        pool(homes, *args, **options)
        raise KeyboardInterrupt

    monkeypatch.setattr(rounds_module, "run_pool", pool)
    compute = rounds_module.Rounds([], Namespace(overrides=[], workers=2, dry_run=False), tmp_path,
                                   Writers(None, None, None))
    compute([Paper("tuned", tmp_path, sweeps=(("method=gnmf",),))], 1)
    monkeypatch.setattr(rounds_module, "run_pool", stopped)
    with pytest.raises(KeyboardInterrupt):
        compute([Paper("tuned", tmp_path, sweeps=(("method=gnmf",), ("method=sda",)))], 2)
    assert compute.summary()["computed"] == 20  # round 1's 10 and the stopped round's 10

    def stopped_before_it_started(*args, **options):
        raise KeyboardInterrupt

    monkeypatch.setattr(rounds_module, "run_pool", stopped_before_it_started)
    with pytest.raises(KeyboardInterrupt):
        compute([Paper("tuned", tmp_path, sweeps=(("method=nmf",),))], 3)
    assert compute.summary()["computed"] == 20  # no record of its own: nothing counted twice

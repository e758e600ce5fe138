"""The order of the pool and the record of a reproduction's schedule.

Longest first. A pool of workers finishes soonest when its longest cells start first (longest processing
time first: the wall time is at most the work divided by the workers plus one cell). A cell's expected time
(:func:`expected_seconds`) is the time its row on disk recorded, when an earlier run left one (a stale row,
computed under other code, still says how long the cell takes), else a size model: the data it factorizes
(samples x features x rank, times the sub-runs), which orders cells of one method well and different
methods only roughly. The model's unit is put into seconds by the cells that have both (:func:`calibrate`),
so that recorded and modelled cells sort together.

The record. Each reproduction writes, into ``outputs/reproduce/``, ``schedule.csv`` (one row per cell of the
selected papers: :data:`COLUMNS`) and ``schedule.json`` (the papers, workers, cores, wall
and CPU time, cells computed, shared and reused), replaced by the next reproduction. ``make bench`` reads
them back with :func:`cell_table` (``tools/bench/reproduction.py``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from ..files import write_atomic
from ..results import load_cell

SCHEDULE, SUMMARY = "schedule.csv", "schedule.json"
#: The columns of ``schedule.csv``: the cell, its job and sweep, its costs and when and where it ran.
#: ``kmeans_runs`` counts the KMeans runs a sub-run makes (restarts and readouts). ``status`` is computed,
#: shared (computed once for another job: ``shared_with``), reused (on disk before), failed or not run;
#: ``seconds`` is the row's fit and KMeans time, ``cpu_seconds`` the worker's CPU time for the cell,
#: ``start``/``end`` seconds since the pool started.
COLUMNS = ("paper", "sweep", "job", "dataset", "method", "estimator", "params", "k", "trial", "rank", "n_samples",
           "n_features", "subruns", "kmeans_runs", "n_iter", "seconds", "status", "shared_with", "cpu_seconds",
           "expected_seconds", "start", "end", "worker")


def model_seconds(n_samples: float, n_features: int, rank: int, subruns: int) -> float:
    """A cell's relative cost when nothing was recorded: samples x features x rank x sub-runs (unit: 1e9)."""
    return n_samples * n_features * rank * subruns / 1e9


def recorded_seconds(paths: list[Path]) -> float | None:
    """The fit and KMeans seconds of a row an earlier run left at one of ``paths`` (whatever its settings or
    code), or None."""
    for path in paths:
        row = load_cell(path) if Path(path).is_file() else None
        if row and isinstance(row.get("fit_seconds"), (int, float)):
            return float(row["fit_seconds"]) + float(row.get("kmeans_seconds") or 0.0)
    return None


def expected_seconds(recorded: list[float | None], models: list[float]) -> list[float]:
    """Each cell's expected seconds: its recorded time, else its model (:func:`model_seconds`) in seconds
    (:func:`calibrate` over the cells that have both)."""
    scale = calibrate([(seconds, model) for seconds, model in zip(recorded, models) if seconds is not None])
    return [seconds if seconds is not None else model * scale for seconds, model in zip(recorded, models)]


def calibrate(recorded: list[tuple[float, float]]) -> float:
    """Seconds per model unit: the median ratio of recorded seconds to :func:`model_seconds` over the
    ``(recorded, model)`` pairs of cells that have both; 1.0 when there are none."""
    ratios = sorted(seconds / model for seconds, model in recorded if model > 0 and seconds > 0)
    return ratios[len(ratios) // 2] if ratios else 1.0


def write_record(folder: Path, rows: list[dict], summary: dict) -> None:
    """Write ``schedule.csv`` (``rows``, in :data:`COLUMNS`) and ``schedule.json`` (``summary``) into ``folder``."""
    frame = pd.DataFrame(rows).reindex(columns=list(COLUMNS))
    write_atomic(Path(folder) / SCHEDULE, frame.to_csv(index=False))
    write_atomic(Path(folder) / SUMMARY, json.dumps(summary, indent=2, default=str) + "\n")


def cell_table(folder: Path) -> tuple[pd.DataFrame, dict] | None:
    """The last reproduction's cells (``schedule.csv``: :data:`COLUMNS`) and summary (``schedule.json``) in
    ``folder``, or None if it holds none. Shared cells carry the time of the cell they copy."""
    try:
        table = pd.read_csv(Path(folder) / SCHEDULE)
        summary = json.loads((Path(folder) / SUMMARY).read_text())
    except (OSError, ValueError, pd.errors.EmptyDataError):
        return None
    return table, summary


def utilisation(wall: float, work: float, cores: int) -> float:
    """Wall time over the ideal (work / cores): 1.0 when every core was busy all the time."""
    return wall / (work / cores) if work > 0 and cores > 0 else math.nan

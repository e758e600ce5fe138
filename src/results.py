"""Tidy result rows: one JSON file per finished cell, merged into ``results.csv``.

Every (dataset, method, k, trial) cell is written atomically (to a temporary file in the same directory,
then renamed) as soon as it finishes, so a killed run loses at most the cell it was on and a re-run skips
the cells already on disk. ``results.csv`` is rebuilt from the cell files, also atomically.
"""

import json
import logging
import os
import re
import tempfile
from pathlib import Path

import pandas as pd

logger = logging.getLogger(__name__)

CELL_DIR = "cells"
RESULTS = "results.csv"
COLUMNS = ("dataset", "method", "k", "trial")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", str(text))


def cell_path(out_dir: Path, dataset: str, method: str, k: int, trial: int) -> Path:
    """Where the row of one cell is stored under ``out_dir``."""
    return Path(out_dir) / CELL_DIR / f"{_slug(dataset)}__{_slug(method)}__k{k:02d}__t{trial:02d}.json"


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see either the old file or the complete new one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save_cell(path: Path, row: dict) -> None:
    """Store one cell's row (keys in the row's own order, so a row read back has the columns of a fresh one)."""
    write_atomic(path, json.dumps(row))


def load_cell(path: Path) -> dict | None:
    """The row stored at ``path``, or None if there is none or it cannot be read (then it is recomputed)."""
    try:
        row = json.loads(Path(path).read_text())
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # e.g. a file truncated by a copy or a full disk
        logger.warning("%s is unreadable (%s); recomputing it", Path(path).name, exc)
        return None
    if not isinstance(row, dict):
        logger.warning("%s does not hold a result row; recomputing it", Path(path).name)
        return None
    return row


def sort_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows in (dataset, method, k, trial) order."""
    return frame.sort_values(list(COLUMNS), kind="stable").reset_index(drop=True)


def write_results(out_dir: Path, rows: list[dict]) -> pd.DataFrame:
    """Write ``results.csv`` from the given rows, atomically; returns them as a sorted frame."""
    frame = sort_rows(pd.DataFrame(rows))
    write_atomic(Path(out_dir) / RESULTS, frame.to_csv(index=False))
    return frame


def find_results(paths) -> list[Path]:
    """The ``results.csv`` files at or below the given paths (files or directories)."""
    files = []
    for path in map(Path, paths):
        files.extend([path] if path.is_file() else sorted(path.rglob(RESULTS)))
    if not files:
        raise FileNotFoundError(f"no {RESULTS} found under {', '.join(map(str, paths))}")
    return files


def read_results(files) -> pd.DataFrame:
    """Concatenate the given ``results.csv`` files, one row per (dataset, method, k, trial)."""
    frame = pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
    return sort_rows(frame.drop_duplicates(subset=list(COLUMNS), keep="last"))

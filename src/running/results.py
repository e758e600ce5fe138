"""Tidy result rows: one JSON file per finished cell, merged into ``results.csv``.

:func:`result_row` makes a cell's row and is the one place that names a row's columns and orders them.
Every (dataset, method, k, trial) cell is written atomically (to a temporary file in the same directory,
then renamed) as soon as it finishes, so a killed run loses at most the cell it was on and a re-run skips
the cells already on disk. ``results.csv`` is rebuilt from the cell files, also atomically.

A row carries the settings it was computed under as columns (``dataset_*``, ``param_*``, ``protocol_*``,
``seed``), their hash ``config_hash`` and the ``code_fingerprint`` of the code
(:func:`src.running.provenance.code_fingerprint`). :func:`read_results` merges files only where these agree for
each (dataset, method label): the same label computed under two settings is refused, never mixed.
"""

import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..files import write_atomic

logger = logging.getLogger(__name__)

CELL_DIR = "cells"
RESULTS = "results.csv"
COLUMNS = ("dataset", "method", "k", "trial")
#: Columns that identify how a row was computed; rows of one label must agree on them to be merged.
IDENTITY = ("config_hash", "code_fingerprint")


@dataclass(frozen=True)
class RunIdentity:
    """How a run's cells are computed, as every row of the run records it.

    ``settings`` are the cell settings (:meth:`src.running.settings.RunSpec.cell_settings`, plain dicts),
    ``config_hash`` their hash and ``code_fingerprint`` that of the code (:func:`src.running.provenance.code_fingerprint`).
    """

    settings: Mapping
    config_hash: str
    code_fingerprint: str


def result_row(dataset: str, method, seed: int, cell, run: RunIdentity | None = None,
               peak_rss_mb: float | None = None) -> dict:
    """The row of one finished cell: its columns, in the order ``cells/*.json`` and ``results.csv`` keep.

    Parameters
    ----------
    dataset : str
        The data set's name (column ``dataset``).
    method : src.running.settings.MethodSpec
        Its label is the column ``method``, its registry name ``estimator``.
    seed : int
        The run's seed.
    cell : src.protocol.cell.Cell
        The cell's trial and fits. The reported fit gives the scores (``acc_unlabelled`` and
        ``nmi_unlabelled`` too, when it scored all samples of a trial with labelled ones) and costs, the times are summed over
        the sub-runs; with more than one sub-run the columns ``subruns``, ``acc_by_objective``,
        ``nmi_by_objective``, ``acc_by_accuracy`` and ``nmi_by_accuracy`` record both choices.
    run : RunIdentity, optional
        When given, the run's settings as flat columns (:func:`setting_columns`), the method's parameters
        as JSON (``params``), ``config_hash``, ``code_fingerprint`` and ``peak_rss_mb`` follow.
    peak_rss_mb : float, optional
        The process's peak resident memory so far, in MB (with ``run``).
    """
    chosen, trial = cell.chosen, cell.trial
    row = {
        "dataset": dataset,
        "method": method.label,
        "estimator": method.name,
        "k": trial.k,
        "trial": trial.trial,
        "seed": seed,
        "acc": chosen.acc,
        "nmi": chosen.nmi,
        "rank": chosen.rank,
        "n_iter": chosen.n_iter,
        "converged": chosen.converged,
        "objective": chosen.objective,
        "kmeans_objective": chosen.kmeans_objective,
        "fit_seconds": sum(fit.fit_seconds for fit in cell.fits),
        "kmeans_seconds": sum(fit.kmeans_seconds for fit in cell.fits),
    }
    for name, (acc, nmi) in chosen.readouts.items():
        row[f"acc_{name}"] = acc
        row[f"nmi_{name}"] = nmi
    if chosen.unlabelled is not None:
        row["acc_unlabelled"], row["nmi_unlabelled"] = chosen.unlabelled
    row["n_samples"] = trial.n_samples
    row["n_labelled"] = trial.n_labelled
    if len(cell.fits) > 1:
        row.update(subruns=len(cell.fits), acc_by_objective=cell.by_objective.acc,
                   nmi_by_objective=cell.by_objective.nmi, acc_by_accuracy=cell.by_accuracy.acc,
                   nmi_by_accuracy=cell.by_accuracy.nmi)
    if run is not None:
        row.update(run_columns(run, peak_rss_mb))
    return row


def run_columns(run: RunIdentity, peak_rss_mb: float | None) -> dict:
    """The columns a row takes from its run, in order: the settings' columns (:func:`setting_columns`), the
    method's parameters as JSON (``params``), ``config_hash``, ``code_fingerprint`` and ``peak_rss_mb``."""
    return {**setting_columns(run.settings), "params": json.dumps(run.settings["method"]["params"], sort_keys=True),
            "config_hash": run.config_hash, "code_fingerprint": run.code_fingerprint, "peak_rss_mb": peak_rss_mb}


def rebase_row(row: Mapping, source: RunIdentity, dataset: str, method, target: RunIdentity) -> dict:
    """The row of a cell computed under ``source``, as the run ``target`` would have written it.

    The cell's own columns (scores, costs, the trial's sizes) are kept; the data set's name and the method's
    label are ``target``'s (``method`` is a :class:`src.running.settings.MethodSpec`), and so are the settings'
    columns, ``params``, ``config_hash`` and ``code_fingerprint``. Only meaningful when both runs compute
    the cell alike (:func:`src.running.pool.jobs.sharing_key`).
    """
    own = set(run_columns(source, None))
    out = {key: value for key, value in row.items() if key not in own}
    out.update(dataset=dataset, method=method.label)
    out.update(run_columns(target, row.get("peak_rss_mb")))
    return out


class MixedResultsError(ValueError):
    """Rows of one (dataset, method label) computed under different settings or code."""


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", str(text))


def cell_path(out_dir: Path, dataset: str, method: str, k: int, trial: int) -> Path:
    """Where the row of one cell is stored under ``out_dir``."""
    return Path(out_dir) / CELL_DIR / f"{_slug(dataset)}__{_slug(method)}__k{k:02d}__t{trial:02d}.json"


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
    """Concatenate the given ``results.csv`` files, one row per (dataset, method, k, trial).

    The same cell found in several files (e.g. a run directory and a merged copy) is kept once. Raises
    :class:`MixedResultsError` naming two conflicting files when rows of one (dataset, method label)
    differ in ``config_hash`` or ``code_fingerprint``: give the runs different labels, or report them
    separately.
    """
    frames = [pd.read_csv(f).assign(_source=str(f)) for f in files]
    frame = pd.concat(frames, ignore_index=True)
    identity = frame.reindex(columns=list(IDENTITY)).astype(object).fillna("unrecorded").astype(str)
    identity = identity.agg(" ".join, axis=1)
    for (dataset, method), ids in identity.groupby([frame["dataset"], frame["method"]]):
        distinct = ids.drop_duplicates()
        if len(distinct) > 1:
            first, second = (frame.loc[distinct.index[i], "_source"] for i in (0, 1))
            where = f"{first} and {second}" if first != second else f"{first} (two settings in one file)"
            raise MixedResultsError(
                f"{dataset}/{method} was computed under different settings or code (config_hash/code_fingerprint "
                f"{distinct.iloc[0]} vs {distinct.iloc[1]}) in {where}: give the runs different method labels "
                f"or report them separately")
    frame = frame.drop(columns="_source")
    return sort_rows(frame.drop_duplicates(subset=list(COLUMNS), keep="last"))


def setting_columns(settings: dict) -> dict:
    """The settings of a cell (see :meth:`src.running.settings.RunSpec.cell_settings`) as flat scalar columns.

    ``dataset_<key>`` for the data set config (its name is the ``dataset`` column), ``param_<key>`` for
    the method's parameters, ``protocol_<key>`` (``protocol_labels_<key>``) for the protocol's.
    """
    columns = {}

    def put(prefix, mapping):
        for key, value in mapping.items():
            if isinstance(value, dict):
                put(f"{prefix}{key}_", value)
            else:
                columns[f"{prefix}{key}"] = json.dumps(value) if isinstance(value, (list, tuple)) else value

    put("dataset_", {key: value for key, value in settings["dataset"].items() if key != "name"})
    put("param_", settings["method"]["params"])
    put("protocol_", settings["protocol"])
    return columns

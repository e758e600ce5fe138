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
from ..protocol.cell import readouts_for
from ..protocol.partition import decode, encode, place_columns
from .cell_warnings import COLUMN as WARNINGS

logger = logging.getLogger(__name__)

#: The column of a row that keeps its cell's partition (:func:`src.protocol.partition.encode`).
PARTITION = "partition"
#: The columns of a row that depend on which of its trial's samples are labelled, beside its own scores.
PLACE_COLUMNS = ("acc_unlabelled", "nmi_unlabelled", "ari_unlabelled", "given_unlabelled", "n_samples", "n_labelled")
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
               peak_rss_mb: float | None = None, trial=None, warned: str | None = None) -> dict:
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
        The cell's trial and fits. The reported fit gives the scores (AC, NMI, ARI) and costs, the times
        are summed over the sub-runs; with more than one sub-run the columns ``subruns``, ``acc_by_objective``,
        ``nmi_by_objective``, ``acc_by_accuracy`` and ``nmi_by_accuracy`` record both choices. Its partition
        is kept as ``partition`` (:func:`src.protocol.partition.encode`).
    run : RunIdentity, optional
        When given, the run's settings as flat columns (:func:`setting_columns`), the method's parameters
        as JSON (``params``), ``config_hash``, ``code_fingerprint`` and ``peak_rss_mb`` follow.
    peak_rss_mb : float, optional
        The process's peak resident memory so far, in MB (with ``run``).
    trial : src.protocol.trials.Trial, optional
        The trial of the row's own run, when the cell was computed for another run that shares its
        clustering (the same samples and seeds, other labelled samples: an unsupervised method in a label
        track); its sizes and the scores of its unlabelled samples (``acc_unlabelled``, ``nmi_unlabelled``,
        ``ari_unlabelled``, when all samples are scored and the trial has labelled ones) are read from the
        partition (:func:`src.protocol.partition.place_columns`), and its readouts by the labels from the
        representation (:func:`src.protocol.cell.readouts_for`, the readouts that ``run``'s protocol names).
        Default: the cell's own.
    warned : str, optional
        What the cell warned while it ran (:func:`src.running.cell_warnings.recorded`), the column
        ``warnings`` ("" for nothing); no such column when not given.
    """
    chosen, trial = cell.chosen, trial or cell.trial
    row = {
        "dataset": dataset,
        "method": method.label,
        "estimator": method.name,
        "k": trial.k,
        "trial": trial.trial,
        "seed": seed,
        "acc": chosen.acc,
        "nmi": chosen.nmi,
        "ari": chosen.ari,
        "rank": chosen.rank,
        "n_iter": chosen.n_iter,
        "converged": chosen.converged,
        "objective": chosen.objective,
        "kmeans_objective": chosen.kmeans_objective,
        "fit_seconds": sum(fit.fit_seconds for fit in cell.fits),
        "kmeans_seconds": sum(fit.kmeans_seconds for fit in cell.fits),
    }
    protocol = run.settings.get("protocol", {}) if run is not None else {}
    readouts = readouts_for(cell, trial, protocol["readouts"], protocol["score_on"]) if "readouts" in protocol \
        else chosen.readouts
    for name, values in readouts.items():
        row.update({f"{score}_{name}": value for score, value in values.items()})
    row.update(place_columns(trial, chosen.partition, cell.score_on))
    if len(cell.fits) > 1:
        row.update(subruns=len(cell.fits), acc_by_objective=cell.by_objective.acc,
                   nmi_by_objective=cell.by_objective.nmi, acc_by_accuracy=cell.by_accuracy.acc,
                   nmi_by_accuracy=cell.by_accuracy.nmi)
    row[PARTITION] = encode(chosen.partition)
    if warned is not None:
        row[WARNINGS] = warned
    if run is not None:
        row.update(run_columns(run, peak_rss_mb))
    return row


def run_columns(run: RunIdentity, peak_rss_mb: float | None) -> dict:
    """The columns a row takes from its run, in order: the settings' columns (:func:`setting_columns`), the
    method's parameters as JSON (``params``), ``config_hash``, ``code_fingerprint`` and ``peak_rss_mb``."""
    return {**setting_columns(run.settings), "params": json.dumps(run.settings["method"]["params"], sort_keys=True),
            "config_hash": run.config_hash, "code_fingerprint": run.code_fingerprint, "peak_rss_mb": peak_rss_mb}


def rebase_row(row: Mapping, source: RunIdentity, dataset: str, method, target: RunIdentity, trial=None) -> dict:
    """The row of a cell computed under ``source``, as the run ``target`` would have written it.

    The cell's own columns (scores, costs, partition) are kept; the data set's name and the method's label
    are ``target``'s (``method`` is a :class:`src.running.settings.MethodSpec`), and so are the settings'
    columns, ``params``, ``config_hash`` and ``code_fingerprint``; with ``trial``, the target's own trial of
    the cell, the columns of its labelled samples are read from the partition (:func:`with_trial`). Only
    meaningful when both runs compute the clustering alike (:func:`src.running.pool.jobs.sharing_key`).
    """
    own = set(run_columns(source, None))
    out = {key: value for key, value in row.items() if key not in own}
    if trial is not None:
        out = with_trial(out, trial, target.settings["protocol"]["score_on"])
    out.update(dataset=dataset, method=method.label)
    out.update(run_columns(target, row.get("peak_rss_mb")))
    return out


def with_trial(row: Mapping, trial, score_on: str) -> dict:
    """``row`` with the columns that depend on which samples its trial labels (its unlabelled samples'
    scores and its sizes: :func:`src.protocol.partition.place_columns`) read from its ``partition`` for
    ``trial``, in the place a fresh row has them."""
    if PARTITION not in row:
        raise ValueError("the row keeps no partition to score another trial's samples from")
    fresh = place_columns(trial, decode(row[PARTITION]), score_on)
    out = {}
    for key, value in row.items():
        if key == "n_samples":
            out.update(fresh)
        elif key not in PLACE_COLUMNS:
            out[key] = value
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


#: The files :func:`read_file` read, by path: (modification time, size) and the frame.
_READ: dict[str, tuple[tuple[int, int], pd.DataFrame]] = {}


def read_file(path) -> pd.DataFrame:
    """One ``results.csv`` as a frame, read again only when its modification time or size changed (a run in
    rounds reads its earlier rounds' cells once); a copy, the caller's own."""
    stat = Path(path).stat()
    stamp = (stat.st_mtime_ns, stat.st_size)
    found = _READ.get(str(path))
    if found is None or found[0] != stamp:
        found = _READ[str(path)] = stamp, pd.read_csv(path)
    return found[1].copy()


def read_results(files) -> pd.DataFrame:
    """Concatenate the given ``results.csv`` files, one row per (dataset, method, k, trial).

    The same cell found in several files (e.g. a run directory and a merged copy) is kept once. Raises
    :class:`MixedResultsError` naming two conflicting files when rows of one (dataset, method label)
    differ in ``config_hash`` or ``code_fingerprint``: give the runs different labels, or report them
    separately.
    """
    frames = []
    for path in files:
        frames.append(read_file(path))
        frames[-1]["_source"] = str(path)
    frame = pd.concat(frames, ignore_index=True)
    identity = frame.reindex(columns=list(IDENTITY)).astype(object).fillna("unrecorded").astype(str)
    identity = identity.iloc[:, 0].str.cat([identity[column] for column in identity.columns[1:]], sep=" ")
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

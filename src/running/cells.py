"""The cell loop of one run: check its settings, load its data, reuse the cells on disk, compute the others,
write its results.

A run is one (data set, method) pair under one protocol. :func:`open_run` checks it and loads its data
(:func:`src.running.settings.prepare`) and reads which of its (k, trial) cells are on disk with the same
settings and code (:func:`stored_rows`); :func:`begin_run` writes its ``config.yaml`` and first
``provenance.json``; :func:`compute_cell` computes one cell; :func:`end_run` writes ``results.csv``, hands it
to the report writer it is given (the run's table and figure) and completes the provenance.
:func:`run_experiment` is the whole loop for one run, as ``python -m src.run`` runs it; the pool
(:mod:`src.running.pool`) uses the same steps for many runs at once.

This room does not know how a report is written: the entry points hand the writer down
(:func:`src.presentation.report.write_reports`, a ``ReportWriter``); without one a run writes
``results.csv`` only.
"""

import logging
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from omegaconf import DictConfig, OmegaConf
from threadpoolctl import threadpool_limits

from . import cell_warnings, provenance
from .cell_warnings import caught, recorded
from .. import methods
from ..data import pin_user_file
from ..files import locked, write_atomic
from .progress import RunProgress, counted
from ..protocol.cell import run_cell
from ..protocol.trials import make_trial
from .results import CELL_DIR, RESULTS, RunIdentity, cell_path, load_cell, result_row, save_cell, write_results
from .settings import Prepared, RunSpec, config_fingerprint, prepare, run_spec

logger = logging.getLogger(__name__)

LOCK = ".lock"

# What writes a run's report beside its results.csv: called with the run's rows (the frame just written to
# results.csv) and its directory, as src.presentation.report.write_reports takes them.
ReportWriter = Callable[[pd.DataFrame, Path], object]


def stale_reason(row: dict, identity: RunIdentity) -> str | None:
    """Why a cell read from disk cannot be reused, or None if it can."""
    if row.get("config_hash") != identity.config_hash:
        return "computed under other settings"
    if row.get("code_fingerprint") != identity.code_fingerprint:
        return "computed by other code (a source file or a numerical package changed)"
    return None


def stored_rows(paths: dict, identity: RunIdentity, out_dir: Path, dry_run: bool) -> dict:
    """The rows on disk that the cells at ``paths`` can reuse (None for a cell to compute), with one warning
    per reason a stored row cannot be reused."""
    stored, stale = {}, {}
    for cell, path in paths.items():
        row = load_cell(path)
        reason = stale_reason(row, identity) if row is not None else None
        if reason:
            stale.setdefault(reason, []).append(path.name)
            row = None
        stored[cell] = row
    for reason, names in stale.items():
        logger.warning("%d finished cell(s) in %s were %s; %s them (first: %s)", len(names), out_dir / CELL_DIR,
                       reason, "a run would recompute" if dry_run else "recomputing", names[0])
    return stored


def peak_rss_mb() -> float:
    """The process's peak resident memory so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@dataclass(frozen=True)
class OpenRun:
    """A checked run before any cell is computed: its spec, loaded data, identity, and each (k, trial) cell's
    file and stored row (None for a cell to compute)."""

    spec: RunSpec
    prepared: Prepared
    identity: RunIdentity
    out_dir: Path
    paths: dict
    stored: dict

    @property
    def cells(self) -> list[tuple[int, int]]:
        """Every (k, trial) cell of the run, in table order."""
        return list(self.paths)

    @property
    def todo(self) -> list[tuple[int, int]]:
        """The cells to compute: those without a reusable row on disk."""
        return [cell for cell, row in self.stored.items() if row is None]


def run_identity(spec: RunSpec) -> RunIdentity:
    """How the cells of ``spec`` are computed: its cell settings, their hash and the code's fingerprint (for an
    estimator outside the repository, with the source file of its class: an edited method is recomputed)."""
    settings = spec.cell_settings()
    fingerprint = provenance.code_fingerprint()
    if spec.method.name not in methods.REGISTRY:
        fingerprint = provenance.with_source(fingerprint, methods.estimator_class(spec.method.name))
    return RunIdentity(settings, config_fingerprint(settings), fingerprint)


def cell_paths(spec: RunSpec, out_dir: Path) -> dict:
    """Each (k, trial) cell of ``spec`` and the file of its row under ``out_dir``, in table order."""
    return {(k, t): cell_path(out_dir, spec.dataset.name, spec.method.label, k, t)
            for k in spec.protocol.ks for t in range(spec.protocol.n_trials)}


def run_cells(spec: RunSpec, out_dir: Path, dry_run: bool = False) -> tuple[RunIdentity, dict, dict]:
    """A run's identity, each (k, trial) cell's file in ``out_dir`` and its reusable row on disk (None for a
    cell to compute), from its settings alone (no data loaded); one warning per reason a stored row cannot
    be reused."""
    identity, paths = run_identity(spec), cell_paths(spec, out_dir)
    return identity, paths, stored_rows(paths, identity, out_dir, dry_run)


def open_run(spec: RunSpec, out_dir: Path, load=None) -> OpenRun:
    """Check a run's settings, load its data (``load`` as :func:`src.running.settings.prepare` takes it) and read
    which of its cells are on disk already (:func:`run_cells`)."""
    run = prepare(spec, load=load)
    identity, paths, stored = run_cells(spec, out_dir, spec.dry_run)
    return OpenRun(spec, run, identity, Path(out_dir), paths, stored)


def begin_run(opened: OpenRun, plain: dict, overrides=(), started: str | None = None, extra: dict | None = None) \
        -> dict:
    """Write the run's ``config.yaml`` (``plain``: its resolved config, with the method's parameters as the
    estimator gets them) and the first ``provenance.json`` (``extra`` added to its record); returns the
    provenance record."""
    method = opened.spec.method
    write_atomic(opened.out_dir / "config.yaml", OmegaConf.to_yaml({**plain, "method": method.as_dict()}))
    record = provenance.collect(started or provenance.now(), overrides=overrides, extra=extra,
                                data_files=opened.prepared.dataset.files)
    provenance.write(opened.out_dir, record)
    return record


def trial_of(identity: RunIdentity, dataset, k: int, trial_number: int, seed: int):
    """The (k, trial) trial of the run ``identity`` describes (its label scheme) on its loaded ``dataset``:
    what the run's row of a cell shared with another run is scored on (:func:`src.running.results.result_row`)."""
    return make_trial(dataset.y, dataset.name, k, trial_number, seed, identity.settings["protocol"]["labels"])


def compute_cell(spec: RunSpec, dataset, k: int, trial_number: int):
    """One (k, trial) cell of the run ``spec`` on its loaded ``dataset``: the trial, then its fits
    (:func:`src.protocol.cell.run_cell`)."""
    trial = make_trial(dataset.y, dataset.name, k, trial_number, spec.seed, spec.protocol.labels)
    return run_cell(dataset.X, spec.method, trial, spec.protocol, dataset.image_shape)


def end_run(opened: OpenRun, rows: list[dict], record: dict, report: ReportWriter | None = None) -> Path:
    """Write ``results.csv`` and, with a ``report`` writer, the report beside it (the entry points pass
    :func:`src.presentation.report.write_reports`: the tables and figure), both under the directory's lock
    (runs sharing a directory take turns); complete ``provenance.json``; returns results.csv. Without a
    ``report`` writer (library use, tests) only ``results.csv`` is written."""
    with locked(opened.out_dir / LOCK):
        frame = write_results(opened.out_dir, rows)
        if report is not None:
            report(frame, opened.out_dir)
    todo = len(opened.todo)
    provenance.write(opened.out_dir, {**record, "ended": provenance.now(), "cells": len(opened.paths),
                                      "cells_computed": todo, "cells_reused": len(opened.paths) - todo})
    return opened.out_dir / RESULTS


def run_experiment(cfg: DictConfig, out_dir: Path, overrides=(), progress_level: int = logging.INFO,
                   report: ReportWriter | None = None) -> Path | None:
    """Run every (k, trial) cell of ``cfg`` and write the results into ``out_dir``, with the report that
    ``report`` writes beside them (:func:`end_run`; ``python -m src.run`` passes the tables and figure of
    :func:`src.presentation.report.write_reports`, without one only ``results.csv`` is written); returns
    results.csv (None for a dry run, which writes nothing).

    The settings are checked and the data loaded first (:func:`open_run`), under the run's BLAS thread
    limit as all that follows. Cells already on disk with the same settings and code are reused; others
    are recomputed, with one line per reason. ``provenance.json`` records what produced the directory
    (written at the start and completed at the end). Progress is logged at ``progress_level`` as a line
    per k (:class:`src.running.progress.RunProgress`; a sweep job passes DEBUG: its sweep logs one line per job),
    each cell at DEBUG.
    """
    started = provenance.now()
    cfg = pin_user_file(cfg)  # a user's own data file: recorded (config, results, fingerprint) by path and sha256
    plain = OmegaConf.to_container(cfg, resolve=True)
    spec = run_spec(plain)
    with threadpool_limits(limits=spec.blas_threads):
        opened = open_run(spec, out_dir)
        dataset, method, protocol = opened.prepared.dataset, spec.method, spec.protocol
        cells, todo = opened.cells, opened.todo
        if spec.dry_run:
            logger.info("dry run of %s/%s: %s (k = %s; %s each), %d already done in %s, %d to "
                        "compute; no cell computed, no result written", dataset.name, method.label,
                        counted(len(cells), "cell"), ", ".join(map(str, protocol.ks)),
                        counted(protocol.n_trials, "trial"), len(cells) - len(todo), out_dir / CELL_DIR, len(todo))
            return None
        record = begin_run(opened, plain, overrides, started)
        rows, start = [], time.perf_counter()
        progress = RunProgress(f"{dataset.name}/{method.label}", cells, todo, progress_level)
        for number, (k, trial_number) in enumerate(cells, 1):
            row = opened.stored[k, trial_number]
            if row is None:
                with caught() as records:  # what the method says goes into the row, not the terminal
                    cell = compute_cell(spec, dataset, k, trial_number)
                row = result_row(dataset.name, method, spec.seed, cell, opened.identity, peak_rss_mb(),
                                 warned=recorded(records))
                save_cell(opened.paths[k, trial_number], row)
                status = f"acc={row['acc']:.3f} nmi={row['nmi']:.3f} fit {row['fit_seconds']:.2f}s"
            else:
                status = "already done, skipped"
            rows.append(row)
            logger.debug("[%s/%s] cell %d/%d k=%d trial=%d: %s (elapsed %.0fs)", dataset.name, method.label,
                         number, len(cells), k, trial_number, status, time.perf_counter() - start)
            progress.update(k, trial_number, row)
        end_run(opened, rows, record, report)
    for line in cell_warnings.lines(pd.DataFrame(rows)):
        logger.warning("%s", line)
    logger.log(progress_level, "wrote %s%s", out_dir / RESULTS,
               "" if report is None else " and the table and figure beside it")
    return out_dir / RESULTS

"""Run the clustering protocol for one (dataset, method) pair; Hydra's entry point.

Usage::

    python -m src.run method=nmf dataset=yale
    python -m src.run -m method=kmeans,nmf,nmf_kl dataset=orl,yale      # parallel multirun (joblib)
    python -m src.run -m method=nmf,gnmf dataset=yale solver=fixed      # every method at fixed iterations
    python -m src.run -m experiment=cnmf                                # a paper's settings (conf/experiment/)
    python -m src.run -m experiment=cnmf dry_run=true                   # check, fetch the data, count the cells
    repro-mf method=nmf dataset=yale        # the same, as the installed command (tab completion: -sc install=bash)
    repro-mf --version                      # the release, e.g. "repro-mf 0.2.0"

Writes into Hydra's output directory: ``cells/`` (one row per finished cell), ``results.csv``,
``config.yaml`` (the composed config, resolved: the method's parameters as the estimator gets them, the
solver's settings among them for an iterative method, and the ``solver`` they came from),
``provenance.json`` (:mod:`src.provenance`: code, environment, data, command) and the table and figure of
:mod:`src.presentation.report`. Every setting is checked before anything is computed, with one line naming a
bad one (:mod:`src.settings`); the command line is checked before Hydra starts (:mod:`src.command_line`); a
multirun checks every job first (:mod:`src.sweep`). ``dry_run=true`` stops after the checks and the data:
it logs how many cells the run has and how many are already done, computes no cell and writes no result
(Hydra still makes the run directory with its own ``.hydra/`` and log).
"""

import logging
import os
import resource
import shlex
import sys
import time
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf
from threadpoolctl import threadpool_limits

from . import DISTRIBUTION, __version__, provenance, resolvers, sweep
from .command_line import (check_group_choices, check_output_dir, check_override_grammar, with_experiment_group,
                           with_label_protocol)
from .config_dir import CONF_DIR
from .data import pin_user_file
from .errors import ConfigError, UserError
from .files import locked, write_atomic
from .presentation.report import write_reports
from .progress import RunProgress
from .protocol.cell import run_cell
from .protocol.trials import make_trial
from .results import CELL_DIR, RESULTS, RunIdentity, cell_path, load_cell, result_row, save_cell, write_results
from .settings import Prepared, RunSpec, config_fingerprint, prepare, run_spec

logger = logging.getLogger(__name__)

LOCK = ".lock"


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
    """How the cells of ``spec`` are computed: its cell settings, their hash and the code's fingerprint."""
    settings = spec.cell_settings()
    return RunIdentity(settings, config_fingerprint(settings), provenance.code_fingerprint())


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
    """Check a run's settings, load its data (``load`` as :func:`src.settings.prepare` takes it) and read
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


def compute_cell(spec: RunSpec, dataset, k: int, trial_number: int):
    """One (k, trial) cell of the run ``spec`` on its loaded ``dataset``: the trial, then its fits
    (:func:`src.protocol.cell.run_cell`)."""
    trial = make_trial(dataset.y, dataset.name, k, trial_number, spec.seed, spec.protocol.labels)
    return run_cell(dataset.X, spec.method, trial, spec.protocol, dataset.image_shape)


def end_run(opened: OpenRun, rows: list[dict], record: dict) -> Path:
    """Write ``results.csv`` with the tables and figure beside it (under the directory's lock: runs sharing
    a directory take turns) and complete ``provenance.json``; returns results.csv."""
    with locked(opened.out_dir / LOCK):
        write_reports(write_results(opened.out_dir, rows), opened.out_dir)
    todo = len(opened.todo)
    provenance.write(opened.out_dir, {**record, "ended": provenance.now(), "cells": len(opened.paths),
                                      "cells_computed": todo, "cells_reused": len(opened.paths) - todo})
    return opened.out_dir / RESULTS


def run_experiment(cfg: DictConfig, out_dir: Path, overrides=(), progress_level: int = logging.INFO) -> Path | None:
    """Run every (k, trial) cell of ``cfg`` and write the results into ``out_dir``; returns results.csv
    (None for a dry run, which writes nothing).

    The settings are checked and the data loaded first (:func:`open_run`), under the run's BLAS thread
    limit as all that follows. Cells already on disk with the same settings and code are reused; others
    are recomputed, with one line per reason. ``provenance.json`` records what produced the directory
    (written at the start and completed at the end). Progress is logged at ``progress_level`` as a line
    per k (:class:`src.progress.RunProgress`; a sweep job passes DEBUG: its sweep logs one line per job),
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
            logger.info("dry run of %s/%s: %d cells (k = %s; %d trials each), %d already done in %s, %d to "
                        "compute; no cell computed, no result written", dataset.name, method.label, len(cells),
                        ", ".join(map(str, protocol.ks)), protocol.n_trials, len(cells) - len(todo),
                        out_dir / CELL_DIR, len(todo))
            return None
        record = begin_run(opened, plain, overrides, started)
        rows, start = [], time.perf_counter()
        progress = RunProgress(f"{dataset.name}/{method.label}", cells, todo, progress_level)
        for number, (k, trial_number) in enumerate(cells, 1):
            row = opened.stored[k, trial_number]
            if row is None:
                cell = compute_cell(spec, dataset, k, trial_number)
                row = result_row(dataset.name, method, spec.seed, cell, opened.identity, peak_rss_mb())
                save_cell(opened.paths[k, trial_number], row)
                status = f"acc={row['acc']:.3f} nmi={row['nmi']:.3f} fit {row['fit_seconds']:.2f}s"
            else:
                status = "already done, skipped"
            rows.append(row)
            logger.debug("[%s/%s] cell %d/%d k=%d trial=%d: %s (elapsed %.0fs)", dataset.name, method.label,
                         number, len(cells), k, trial_number, status, time.perf_counter() - start)
            progress.update(k, trial_number, row)
        end_run(opened, rows, record)
    logger.log(progress_level, "wrote %s and the table and figure beside it", out_dir / RESULTS)
    return out_dir / RESULTS


# The configs' resolvers, before Hydra composes: at import, so that a multirun's worker processes, which import
# this module to run their jobs, resolve them too.
resolvers.register()


@hydra.main(config_path=str(CONF_DIR), config_name="config", version_base="1.3")
def main(cfg: DictConfig) -> None:
    """One run, or one job of a multirun, on the config Hydra composed: :func:`run_experiment` into Hydra's
    output directory; a user's mistake ends it with one line and exit status 2, a failed write with status 1."""
    hydra_cfg = HydraConfig.get()
    out_dir = Path(hydra_cfg.runtime.output_dir)
    overrides = list(hydra_cfg.overrides.task)
    multirun = hydra_cfg.mode == RunMode.MULTIRUN  # a failed sweep job is recorded; the others go on
    try:
        with sweep.job(Path(hydra_cfg.sweep.dir), hydra_cfg.job.num, overrides, out_dir, cfg) if multirun \
                else nullcontext() as end:  # a sweep job: one line at its end, with the sweep's job counter
            written = run_experiment(cfg, out_dir, overrides, logging.DEBUG if multirun else logging.INFO)
            if written is None and end is not None:
                end.outcome = "dry run: no cell computed, no result written"
    except UserError as exc:  # a single run: one line, exit status 2
        logger.error("%s", exc)
        sys.exit(2)
    except OSError as exc:  # a full disk, a directory that cannot be made: one line, no half-written file
        where = f" {exc.filename}" if exc.filename else ""
        logger.error("could not write%s: %s", where, exc.strerror or exc)
        sys.exit(1)


def cli(command: tuple[str, ...] = ("repro-mf",)) -> None:
    """The command line (``python -m src.run`` or the console script ``repro-mf``): ``--version`` prints the
    release and exits (Hydra has no such flag); otherwise the overrides are checked first
    (:mod:`src.command_line`: one line on a bad one, exit status 2; the deprecated ``+paper/<name>=experiment``
    read as ``experiment=<name>``), then Hydra runs :func:`main`.
    ``command`` is how the program was called, recorded with the arguments in ``provenance.json``."""
    typed = sys.argv[1:]
    if "--version" in typed:  # answered before Hydra, which would read it as an unknown flag
        print(f"{DISTRIBUTION} {__version__}")
        sys.exit(0)
    logging.basicConfig(format="[%(levelname)s] %(message)s")
    current = with_experiment_group(typed)  # +paper/<name>=experiment, deprecated: experiment=<name>
    try:
        check_override_grammar(current)
        check_group_choices(current)
        check_output_dir(current)
    except ConfigError as exc:
        logger.error("%s", exc)
        sys.exit(2)
    overrides, protocol = with_label_protocol(current)
    if protocol is not None:
        logger.warning("the label-constrained method runs under protocol=%s, the labelling of its paper "
                       "(pick another with protocol=...)", protocol)
    sys.argv[1:] = overrides
    os.environ.setdefault(provenance.COMMAND_ENV, shlex.join([*command, *typed]))
    main()


if __name__ == "__main__":
    cli(("python", "-m", f"{__package__}.run"))  # src.run in a checkout, repro_mf.run installed

"""Multiruns that fail well and tell how far they are; run directory names a shell takes as they are.

:class:`SweepGuard` is a Hydra callback (``hydra.callbacks.sweep_guard`` in ``conf/config.yaml``):

* before the launcher starts anything, it expands the sweep as Hydra's basic sweeper does (the sweeper's
  ``params`` and the command line's overrides), composes every job's config and runs the same checks as a
  single run (:func:`src.run.prepare`: settings, data set, method, labels). If any job is invalid, each is
  listed on one line and the multirun exits with status 2 before any job starts;
* a job that fails while it runs is recorded by :func:`job_failures` (its error on one line in its log)
  and the other jobs go on; at the end the sweep lists the failed jobs and exits with status 1.

Progress a person can follow (a line per cell, and in a sweep a line per k, are DEBUG; shown with
``'hydra.verbose=[__main__,src.run,src.sweep]'``; every cell's row is in ``cells/`` anyway):

* a multirun logs one line per finished job, ``[12/40] orl NMF done in 35 s (mean AC 0.620 NMI 0.710 over
  90 cells, 90 computed); 4 min so far, about 9 min left``. The counter works across the launcher's worker processes:
  :meth:`SweepGuard.on_multirun_start` writes the number of jobs and the start time into
  ``<sweep dir>/.progress/`` and each job, at its end, adds a marker there (:func:`job`). The time left is
  the time since the launch per job that computed something, times the jobs still to run; jobs that only
  reused stored cells (a resumed sweep) count as done but not in that rate, and markers of an earlier
  launch into the same directory are removed at the start;
* a single run logs a line per k (:class:`RunProgress`): cells done of all, AC and NMI at that k, time so
  far and left; a k that takes long also gets a line every 30 s.

Run and sweep directories are named with :func:`safe_name` (``${safe_name:${method.label}}`` in the
configs): ``FNMF(farness=0.001)`` becomes ``FNMF-farness=0.001``. The labels in tables stay as they are.
Directories of an earlier sweep named with the raw labels are renamed when a sweep into the same directory
starts (:func:`rename_old_run_dirs`), so that it resumes from their cells.
"""

from __future__ import annotations

import csv
import json
import logging
import math
import re
import sys
import time
import unicodedata
from contextlib import contextmanager
from pathlib import Path

from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException
from hydra.experimental.callback import Callback
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from omegaconf import DictConfig, OmegaConf, open_dict
from omegaconf.errors import OmegaConfBaseException

from .errors import UserError, one_line
from .files import locked, write_atomic

logger = logging.getLogger(__name__)

FAILED_DIR = ".failed_jobs"
PROGRESS_DIR = ".progress"
LAUNCH = "launch.json"
INVALID_EXIT, FAILED_EXIT = 2, 1
#: The name under which :func:`safe_name` is an OmegaConf resolver: ``${safe_name:${method.label}}``.
RESOLVER = "safe_name"
UNSAFE = re.compile(r"[^A-Za-z0-9._=,+-]+")


def safe_name(label) -> str:
    """``label`` as a file name that a shell takes without quoting (letters, digits and ``._=,+-``).

    Accents are dropped (``é`` -> ``e``); every run of other characters (spaces, brackets, quotes, slashes,
    other alphabets) becomes one ``-``; a leading ``-.=+,`` (an option, a hidden file, zsh's ``=command``)
    and a trailing ``-`` are removed. ``FNMF(farness=0.001)`` -> ``FNMF-farness=0.001``,
    ``PCGNMF(alpha=1,beta=10)`` -> ``PCGNMF-alpha=1,beta=10``. A label with nothing left gives ``unnamed``.
    """
    text = "".join(c for c in unicodedata.normalize("NFKD", str(label)) if not unicodedata.combining(c))
    return UNSAFE.sub("-", text).lstrip("-.=+,").rstrip("-") or "unnamed"


def register_resolver() -> None:
    """Make ``${safe_name:...}`` and ``${package:}`` (the package's own name, ``src`` in a checkout and
    ``repro_mf`` installed, for the callback's ``_target_``) available to the configs (once; importing this
    module does it)."""
    if not OmegaConf.has_resolver(RESOLVER):
        OmegaConf.register_new_resolver(RESOLVER, safe_name)
    if not OmegaConf.has_resolver("package"):
        OmegaConf.register_new_resolver("package", lambda: __name__.partition(".")[0])


register_resolver()  # src.run imports this module before Hydra composes a config, in every process


def duration(seconds: float) -> str:
    """A duration as a person says it: ``35 s``, ``6 min``, ``2 h 05 min``."""
    seconds = max(0.0, float(seconds))
    if seconds < 59.5:
        return f"{seconds:.0f} s"
    if seconds < 3570:
        return f"{seconds / 60:.0f} min"
    hours, minutes = divmod(int(round(seconds / 60)), 60)
    return f"{hours} h {minutes:02d} min"


def time_left(elapsed: float, done: float, left: float) -> str:
    """``about 6 min left`` from the time taken for ``done`` units of work and the ``left`` still to do."""
    if left <= 0:
        return f"{duration(elapsed)} in all"
    if done <= 0:
        return f"{duration(elapsed)} so far, time left not known yet"
    return f"{duration(elapsed)} so far, about {duration(elapsed / done * left)} left"


class RunProgress:
    """The progress lines of one run's cells: one when the last trial of a k is done, and one at least
    every ``every`` seconds while a k runs, each with the cells done of all and the time left.

    The time left assumes that a cell costs in proportion to its k (a trial of k classes has about k times
    the samples of one class); cells reused from disk cost nothing.

    Parameters
    ----------
    name : str
        What runs, e.g. ``yale/NMF``.
    cells : list of (int, int)
        The (k, trial) cells in the order they run.
    todo : set of (int, int)
        The cells that are computed (the others are reused).
    level : int
        The logging level of the lines (a sweep job logs them at DEBUG: its sweep logs one line per job).
    """

    def __init__(self, name: str, cells, todo, level: int = logging.INFO, every: float = 30.0):
        self.name, self.cells, self.todo, self.level, self.every = name, list(cells), set(todo), level, every
        self.last_of_k = {k: trial for k, trial in self.cells}
        self.work_left = float(sum(k for k, _ in self.todo))
        self.work_done = 0.0
        self.done = self.reused = 0
        self.scores: dict[int, list[tuple[float, float]]] = {}
        self.start = self.last_line = time.monotonic()

    def update(self, k: int, trial: int, row: dict) -> None:
        """Count the cell (k, trial), whose row is ``row``, and log a line if one is due."""
        self.done += 1
        if (k, trial) in self.todo:
            self.work_done += k
            self.work_left -= k
        else:
            self.reused += 1
        self.scores.setdefault(k, []).append((row.get("acc", math.nan), row.get("nmi", math.nan)))
        now = time.monotonic()
        finished_k = self.last_of_k[k] == trial
        if not finished_k and now - self.last_line < self.every:
            return
        self.last_line = now
        head = f"[{self.name}] k={k} done" if finished_k else f"[{self.name}] k={k} running"
        scores = ""
        if finished_k:
            acc, nmi = (sum(s[i] for s in self.scores[k]) / len(self.scores[k]) for i in (0, 1))
            scores = f", AC {acc:.3f} NMI {nmi:.3f} at k={k}"
        logger.log(self.level, "%s: %d/%d cells%s%s; %s", head, self.done, len(self.cells),
                   f" ({self.reused} reused)" if self.reused else "", scores,
                   time_left(now - self.start, self.work_done, self.work_left))


def sweep_jobs(config: DictConfig) -> list[list[str]]:
    """The override lists of the jobs a basic sweep of ``config`` launches, in launch order."""
    params = [f"{key}={value}" for key, value in (config.hydra.sweeper.get("params") or {}).items()]
    arguments = params + list(OmegaConf.to_container(config.hydra.overrides.task, resolve=False))
    parsed = OverridesParser.create().parse_overrides(arguments)
    return [list(job) for batch in BasicSweeper.split_arguments(parsed, None) for job in batch]


def job_config(config: DictConfig, overrides: list[str]) -> dict:
    """The resolved config (without Hydra's own node) that one job of the sweep ``config`` runs with."""
    loader = GlobalHydra.instance().config_loader()
    composed = loader.load_sweep_config(config, list(overrides))
    with open_dict(composed):
        del composed["hydra"]
    return OmegaConf.to_container(composed, resolve=True)


def invalid_jobs(config: DictConfig) -> tuple[int, list[str]]:
    """Check every job of the sweep; returns the number of jobs and one line per invalid job."""
    from .data import load_dataset  # late: src.run imports this module
    from .run import prepare

    cache = {}

    def load_once(dataset, data_dir, mirror, seed):  # each data set is loaded once for all its jobs
        key = json.dumps([dataset, str(data_dir), str(mirror), seed], sort_keys=True, default=str)
        if key not in cache:
            cache[key] = load_dataset(dataset, data_dir, mirror, seed)
        return cache[key]

    jobs, problems = sweep_jobs(config), []
    for number, overrides in enumerate(jobs):
        try:
            prepare(job_config(config, overrides), load=load_once)
        except (UserError, HydraException, OmegaConfBaseException, KeyError, TypeError, ValueError) as exc:
            problems.append(f"job {number} ({' '.join(overrides) or 'defaults'}): {one_line(exc)}")
    return len(jobs), problems


def failures_dir(sweep_dir) -> Path:
    return Path(sweep_dir) / FAILED_DIR


@contextmanager
def job_failures(sweep_dir, job_number: int, overrides: list[str]):
    """Record an exception of one sweep job (for the sweep's summary) instead of letting it escape.

    A user error is logged on one line; any other error with its traceback, in the job's log.
    """
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - every failure is recorded, the other jobs go on
        if isinstance(exc, UserError):
            logger.error("%s", exc)
        else:
            logger.exception("job %d failed", job_number)
        record = {"job": job_number, "overrides": overrides, "error": one_line(exc)}
        write_atomic(failures_dir(sweep_dir) / f"{job_number}.json", json.dumps(record))


def progress_dir(sweep_dir) -> Path:
    return Path(sweep_dir) / PROGRESS_DIR


def start_progress(sweep_dir, n_jobs: int) -> None:
    """Record a launch's number of jobs and start time in ``<sweep_dir>/.progress/``; forget the jobs an
    earlier launch into the same directory finished (so a resumed sweep counts only its own)."""
    folder = progress_dir(sweep_dir)
    with locked(folder / ".lock"):
        for stale in folder.glob("job_*.json"):
            stale.unlink()
        write_atomic(folder / LAUNCH, json.dumps({"jobs": n_jobs, "started": time.time()}))


def read_json(path: Path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def run_outcome(out_dir, dataset: str, label: str) -> tuple[str, bool]:
    """What a finished run in ``out_dir`` gives, on a few words, and whether it computed any cell.

    Read from its ``results.csv`` (the rows of ``dataset`` and ``label``) and ``provenance.json``:
    ``mean AC 0.620 NMI 0.710 over 90 cells, 90 computed``.
    """
    record = read_json(Path(out_dir) / "provenance.json") or {}
    computed = record.get("cells_computed")
    scores = []
    try:
        with open(Path(out_dir) / "results.csv", newline="") as handle:
            for row in csv.DictReader(handle):
                if row.get("dataset") == dataset and row.get("method") == label:
                    scores.append((float(row["acc"]), float(row["nmi"])))
    except (OSError, KeyError, ValueError):
        scores = []
    parts = []
    if scores:
        acc, nmi = (sum(s[i] for s in scores) / len(scores) for i in (0, 1))
        parts.append(f"mean AC {acc:.3f} NMI {nmi:.3f} over {len(scores)} cells")
    if computed is not None:
        parts.append("all reused" if computed == 0 else f"{computed} computed")
    return ", ".join(parts) or "no results read", computed != 0


def finish_job(sweep_dir, job_number: int, what: str, seconds: float, outcome: str, computed: bool,
               failed: bool = False) -> None:
    """Mark job ``job_number`` as finished in this launch and log its line with the sweep's counter.

    ``[12/40] orl NMF done in 35 s (outcome); 4 min so far, about 9 min left``: jobs finished of all
    (markers in ``.progress/``, counted under a lock so that two jobs ending together get different
    numbers) and the time since the launch per job that computed something, times the jobs left.
    """
    folder = progress_dir(sweep_dir)
    marker = {"job": job_number, "seconds": seconds, "computed": computed, "failed": failed}
    with locked(folder / ".lock"):
        write_atomic(folder / f"job_{job_number}.json", json.dumps(marker))
        markers = [m for m in map(read_json, folder.glob("job_*.json")) if isinstance(m, dict)]
    launch = read_json(folder / LAUNCH) or {}
    state = "failed after" if failed else "done in"
    if not isinstance(launch.get("jobs"), int) or not isinstance(launch.get("started"), (int, float)):
        logger.info("job %d: %s %s %s (%s)", job_number, what, state, duration(seconds), outcome)
        return
    total, done = launch["jobs"], len(markers)
    busy = sum(bool(m.get("computed")) for m in markers)
    logger.info("[%d/%d] %s %s %s (%s); %s", done, total, what, state, duration(seconds), outcome,
                time_left(time.time() - launch["started"], busy, total - done))


@contextmanager
def job(sweep_dir, job_number: int, overrides: list[str], out_dir, cfg: DictConfig):
    """One job of a multirun: its failure is recorded (:func:`job_failures`) and its end is logged on one
    line with the sweep's counter (:func:`finish_job`)."""
    started, failed = time.monotonic(), True
    try:
        dataset, label = str(cfg.dataset.name), str(cfg.method.label)
    except OmegaConfBaseException:  # a config this broken fails in the job itself, and is recorded there
        dataset, label = "?", "?"
    with job_failures(sweep_dir, job_number, overrides):
        yield
        failed = False
    outcome, computed = ("see the error above", False) if failed else run_outcome(out_dir, dataset, label)
    finish_job(sweep_dir, job_number, f"{dataset} {label}", time.monotonic() - started, outcome, computed, failed)


def rename_old_run_dirs(sweep_dir) -> None:
    """Give run directories of ``sweep_dir`` named by raw labels (``orl_FNMF(farness=0.001)``, before
    :func:`safe_name`) their shell-safe names, so that a resumed sweep finds their cells.

    Only directories holding ``cells/`` are renamed, and only where the new name is free; otherwise the
    old directory is left as it is (its cells are then computed again in the new one) and a warning says so.
    """
    sweep_dir = Path(sweep_dir)
    if not sweep_dir.is_dir():
        return
    for old in sorted(sweep_dir.iterdir()):
        new = sweep_dir / safe_name(old.name)
        if new == old or not old.is_dir() or not (old / "cells").is_dir():
            continue
        if new.exists():
            logger.warning("%s and %s both exist; the cells of the first are not reused", old, new.name)
            continue
        try:
            old.rename(new)
        except OSError as exc:
            logger.warning("could not rename %s to %s (%s); its cells are not reused", old, new.name, one_line(exc))
            continue
        logger.info("renamed %s to %s (run directories now have shell-safe names)", old, new.name)


class SweepGuard(Callback):
    """Hydra callback: validate every job before a multirun starts and start its job counter; summarize
    failed jobs at its end."""

    def on_multirun_start(self, config: DictConfig, **kwargs) -> None:
        n_jobs, problems = invalid_jobs(config)
        if problems:
            logger.error("%d of %d jobs of this sweep are invalid; no job was started:", len(problems), n_jobs)
            for line in problems:
                logger.error("  %s", line)
            sys.exit(INVALID_EXIT)
        logger.info("checked the %d jobs of this sweep: all valid", n_jobs)
        records = failures_dir(config.hydra.sweep.dir)
        for stale in records.glob("*.json"):  # from an earlier sweep into the same directory
            stale.unlink()
        rename_old_run_dirs(config.hydra.sweep.dir)
        start_progress(config.hydra.sweep.dir, n_jobs)

    def on_multirun_end(self, config: DictConfig, **kwargs) -> None:
        launch = read_json(progress_dir(config.hydra.sweep.dir) / LAUNCH) or {}
        if isinstance(launch.get("started"), (int, float)):
            logger.info("the sweep's %s jobs ended after %s", launch.get("jobs", "?"),
                        duration(time.time() - launch["started"]))
        records = sorted(failures_dir(config.hydra.sweep.dir).glob("*.json"), key=lambda p: int(p.stem))
        if not records:
            return
        failed = [json.loads(path.read_text()) for path in records]
        logger.error("%d job(s) of this sweep failed (the others finished):", len(failed))
        for record in failed:
            logger.error("  job %d (%s): %s", record["job"], " ".join(record["overrides"]), record["error"])
        sys.exit(FAILED_EXIT)

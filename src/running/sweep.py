"""Multiruns that fail well; run directory names a shell takes as they are.

:class:`SweepGuard` is a Hydra callback (``hydra.callbacks.sweep_guard`` in ``conf/config.yaml``):

* before the launcher starts anything, it expands the sweep as Hydra's basic sweeper does (the sweeper's
  ``params`` and the command line's overrides), composes every job's config and runs the same checks as a
  single run (:func:`src.running.settings.prepare`: settings, method, labels, data set). If any job is invalid, each
  is listed on one line and the multirun exits with status 2 before any job starts; otherwise it starts the
  sweep's job counter (:mod:`src.running.progress`);
* a job that fails while it runs is recorded by :func:`job_failures` (its error on one line in its log)
  and the other jobs go on; at the end the sweep lists the failed jobs and exits with status 1.

Each job ends with one line and the sweep's counter (:func:`job`, :func:`src.running.progress.finish_job`).

Run and sweep directories are named with :func:`src.resolvers.safe_name` (``${safe_name:${method.label}}``
in the configs): ``FNMF(farness=0.001)`` becomes ``FNMF-farness=0.001``. The labels in tables stay as they are.
"""

from __future__ import annotations

import itertools
import json
import logging
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException
from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf, open_dict
from omegaconf.errors import OmegaConfBaseException

from ..data import load_dataset
from ..errors import UserError, one_line
from ..files import write_atomic
from .progress import duration, finish_job, run_outcome, since_launch, start_progress
from .settings import prepare, run_spec

logger = logging.getLogger(__name__)

FAILED_DIR = ".failed_jobs"
INVALID_EXIT, FAILED_EXIT = 2, 1
def sweep_jobs(config: DictConfig, parse=None) -> list[list[str]]:
    """The override lists of the jobs a basic sweep of ``config`` launches, in launch order.

    The sweeper's ``params`` come first, then the command line's overrides, as Hydra's basic sweeper takes
    them. Each key is one axis: a sweep (``a,b``, ``choice(a,b)``, ``range(1,4)``, ``glob(...)``) gives one
    override per value, in the order the sweep yields them, any other override a single one; a key given
    again keeps its first place and takes its last value. The jobs are the cartesian product of the axes,
    the last axis varying fastest. Built from Hydra's public override parser (``parse``, a function of a
    list of override lines: by default the parser's, or a :class:`src.running.pool.jobs.Composer`'s, which
    parses each line once), it gives the jobs and their numbers the launcher gives, so that a job that fails the checks is named as the sweep would number it
    (a ``shuffle()`` sweep draws a new order each time it is read: there only the numbers may differ).

    Raises
    ------
    HydraException
        An override sweeps an interval (``interval(0,1)``), which a basic sweep cannot enumerate.
    """
    params = [f"{key}={value}" for key, value in (config.hydra.sweeper.get("params") or {}).items()]
    arguments = params + list(OmegaConf.to_container(config.hydra.overrides.task, resolve=False))
    if parse is None:
        running = GlobalHydra.instance()
        loader = running.config_loader() if running.is_initialized() else None  # glob() lists a group's options
        parse = OverridesParser.create(config_loader=loader).parse_overrides
    axes: dict[str, list[str]] = {}
    for override in parse(arguments):
        key = override.get_key_element()
        if not override.is_sweep_override():
            axes[key] = [f"{key}={override.get_value_element_as_str()}"]
        elif override.is_discrete_sweep():
            axes[key] = [f"{key}={value}" for value in override.sweep_string_iterator()]
        else:
            kind = override.value_type.name.lower().replace("_", " ")
            raise HydraException(f"{override.input_line}: a basic sweep enumerates a,b, choice(), range() and glob(), "
                                 f"not an {kind}")
    return [list(job) for job in itertools.product(*axes.values())]


def job_config(config: DictConfig, overrides: list[str]) -> dict:
    """The resolved config (without Hydra's own node) that one job of the sweep ``config`` runs with."""
    loader = GlobalHydra.instance().config_loader()
    composed = loader.load_sweep_config(config, list(overrides))
    with open_dict(composed):
        del composed["hydra"]
    return OmegaConf.to_container(composed, resolve=True)


def invalid_jobs(config: DictConfig) -> tuple[int, list[str]]:
    """Check every job of the sweep; returns the number of jobs and one line per invalid job."""
    cache = {}

    def load_once(dataset, data_dir, mirror, seed):  # each data set is loaded once for all its jobs
        key = json.dumps([dataset, str(data_dir), str(mirror), seed], sort_keys=True, default=str)
        if key not in cache:
            cache[key] = load_dataset(dataset, data_dir, mirror, seed)
        return cache[key]

    jobs, problems = sweep_jobs(config), []
    for number, overrides in enumerate(jobs):
        try:
            prepare(run_spec(job_config(config, overrides)), load=load_once)
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


@dataclass
class JobEnd:
    """What the line at a job's end says when the job has no results to read it from (a dry run sets it)."""

    outcome: str | None = None


@contextmanager
def job(sweep_dir, job_number: int, overrides: list[str], out_dir, cfg: DictConfig):
    """One job of a multirun: its failure is recorded (:func:`job_failures`) and its end is logged on one
    line with the sweep's counter (:func:`src.running.progress.finish_job`), saying what its results give (or what
    the :class:`JobEnd` it yields was told)."""
    started, failed, end = time.monotonic(), True, JobEnd()
    try:
        dataset, label = str(cfg.dataset.name), str(cfg.method.label)
    except OmegaConfBaseException:  # a config this broken fails in the job itself, and is recorded there
        dataset, label = "?", "?"
    with job_failures(sweep_dir, job_number, overrides):
        yield end
        failed = False
    if failed:
        outcome, computed = "see the error above", False
    elif end.outcome is not None:
        outcome, computed = end.outcome, False
    else:
        outcome, computed = run_outcome(out_dir, dataset, label)
    finish_job(sweep_dir, job_number, f"{dataset} {label}", time.monotonic() - started, outcome, computed, failed)


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
        start_progress(config.hydra.sweep.dir, n_jobs)

    def on_multirun_end(self, config: DictConfig, **kwargs) -> None:
        launch = since_launch(config.hydra.sweep.dir)
        if launch is not None:
            logger.info("the sweep's %s jobs ended after %s", launch[0], duration(launch[1]))
        records = sorted(failures_dir(config.hydra.sweep.dir).glob("*.json"), key=lambda p: int(p.stem))
        if not records:
            return
        failed = [json.loads(path.read_text()) for path in records]
        logger.error("%d job(s) of this sweep failed (the others finished):", len(failed))
        for record in failed:
            logger.error("  job %d (%s): %s", record["job"], " ".join(record["overrides"]), record["error"])
        sys.exit(FAILED_EXIT)

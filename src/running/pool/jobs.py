"""A reproduction's jobs and cells: papers' sweeps expanded as Hydra's multirun expands them, and the cells
that two jobs share.

A paper's sweep (``papers/<paper>/reproduce.yaml``) is a list of overrides added to its experiment; Hydra
composes it for a multirun (:func:`src.running.sweep.sweep_jobs` lists its jobs, as the basic sweeper launches
them) and each job's config as the launcher would (:func:`expand`). A :class:`Job` keeps what the job's run
directory gets: its overrides, its resolved config, its spec and its output directory, the same
``hydra.sweep.dir`` / ``hydra.sweep.subdir`` a multirun gives it.

Cells computed once. Two jobs ask for the same cell when everything its clustering depends on is equal
(:func:`sharing_key`): the data set, the method's name and parameters, the seed, (k, trial), and every
protocol setting the method reads. The trial's classes, samples and seeds never depend on the label scheme
(:mod:`src.protocol.trials`), so the label scheme enters the key only where it changes the clustering or
the scores a row reports (:func:`reads_labels`): for a method that takes labels (``needs_labels``), and for a
protocol that scores the unlabelled samples only (``score_on: unlabelled``). An unsupervised method's cell
is therefore one cell for the unsupervised track and both label tracks; each job's row reads the scores of
its own unlabelled samples from the cell's partition (:func:`src.running.results.result_row`). The method's
label only names the row. Such a cell is computed once and its row written into each job's directory, under
that job's settings (:class:`Task`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from hydra import initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import OmegaConf, open_dict

from ... import methods, resolvers
from ...config_dir import CONF_DIR
from ..settings import RunSpec, run_spec
from ..sweep import sweep_jobs


@dataclass(frozen=True)
class Job:
    """One job of a paper's sweep: a (dataset, method) run directory of 90-odd cells.

    ``number`` is its number in the sweep (``hydra.job.num``), ``overrides`` the job's overrides as Hydra
    records them, ``config`` its resolved config without Hydra's node (what ``config.yaml`` records),
    ``launcher`` the resolved ``hydra.launcher`` node.
    """

    paper: str
    sweep: int
    number: int
    overrides: tuple[str, ...]
    out_dir: Path
    config: dict
    launcher: dict
    spec: RunSpec

    @property
    def name(self) -> str:
        """The job as a person reads it: ``cnmf orl NMF``."""
        return f"{self.paper} {self.spec.dataset.name} {self.spec.method.label}"


def expand(sweeps: Iterable[tuple[str, int, list[str]]]) -> list[Job]:
    """The jobs of the given sweeps, each ``(paper, sweep index, overrides)``, in sweep then launch order.

    Composed with Hydra's config loader in multirun mode (a sweep's overrides may sweep values), each job
    from its sweep's config as a launcher composes it; the settings are read (:func:`src.running.settings.run_spec`:
    one line naming a bad one) but no data set is loaded.
    """
    jobs = []
    resolvers.register()
    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            loader = GlobalHydra.instance().config_loader()
            for paper, sweep, overrides in sweeps:
                master = loader.load_configuration("config", list(overrides), run_mode=RunMode.MULTIRUN)
                for number, job_overrides in enumerate(sweep_jobs(master)):
                    config = loader.load_sweep_config(master, list(job_overrides))
                    with open_dict(config):
                        config.hydra.job.num = number
                    HydraConfig.instance().set_config(config)  # ${hydra:...} in the job's config
                    out_dir = Path(config.hydra.sweep.dir) / str(config.hydra.sweep.subdir)
                    launcher = OmegaConf.to_container(config.hydra.launcher, resolve=True)
                    task = tuple(config.hydra.overrides.task)
                    with open_dict(config):
                        del config["hydra"]
                    plain = OmegaConf.to_container(config, resolve=True)
                    jobs.append(Job(paper, sweep, number, task, out_dir, plain, launcher, run_spec(plain)))
    finally:
        GlobalHydra.instance().clear()
    return jobs


def reads_labels(spec: RunSpec) -> bool:
    """Whether a cell of ``spec`` depends on the protocol's label scheme beyond what its partition gives:
    the method takes labels, or the row's own scores read the unlabelled samples only (``score_on:
    unlabelled``, which also decides the sub-run an accuracy choice keeps). Scoring all samples, a row's
    unlabelled samples' scores come from the shared partition."""
    return bool(getattr(methods.estimator_class(spec.method.name), "needs_labels", False)) \
        or (spec.protocol.labels["mode"] != "none" and spec.protocol.score_on == "unlabelled")


def sharing_key(spec: RunSpec, k: int, trial: int) -> str:
    """What decides the numbers of cell (k, trial) of ``spec``, hashed: equal keys, equal cells (see the
    module docstring). The code is the same for every job of one reproduction."""
    settings = spec.cell_settings()
    settings["method"].pop("label")
    if not reads_labels(spec):
        settings["protocol"].pop("labels")
    text = json.dumps([settings, k, trial], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def setting_key(spec: RunSpec) -> str:
    """Every setting of ``spec``'s cells but their (k, trial), the seed and the method's label, hashed: the
    cells a sweep computes alike, whose cost the first ones measured tell (:class:`.schedule.Forecast`)."""
    settings = spec.cell_settings()
    settings["method"].pop("label")
    settings.pop("seed")
    return hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Place:
    """Where one computed cell's row goes: a job (its index in the plan's job list) and its (k, trial)."""

    job: int
    k: int
    trial: int


@dataclass
class Task:
    """One cell to compute and the places its row goes: the first is the job that computes it, the others
    the jobs that share it. ``expected_seconds`` orders the pool (longest first)."""

    key: str
    places: list[Place]
    expected_seconds: float = 0.0
    measured: bool = False  # expected_seconds is a time measured for the cell, not the size model
    groups: tuple = ()  # the groups whose ratios the forecast reads for it (.schedule.group_chain)


def tasks_of(jobs: list[Job], todo: list[list[tuple[int, int]]]) -> list[Task]:
    """The tasks that compute the cells ``todo[i]`` of each job ``jobs[i]``, one per distinct cell (the
    places of shared cells gathered), in job order."""
    tasks: dict[str, Task] = {}
    for index, (job, cells) in enumerate(zip(jobs, todo)):
        for k, trial in cells:
            key = sharing_key(job.spec, k, trial)
            tasks.setdefault(key, Task(key, [])).places.append(Place(index, k, trial))
    return list(tasks.values())

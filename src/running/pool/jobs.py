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
its own unlabelled samples from the cell's partition, and its readouts by the labels from the cell's
representation (:func:`src.running.results.result_row`, :func:`src.protocol.cell.readouts_for`). The method's
label only names the row. Such a cell is computed once and its row written into each job's directory, under
that job's settings (:class:`Task`).
"""

from __future__ import annotations

import copy
import hashlib
import json
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from hydra import initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.core.hydra_config import HydraConfig
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.types import RunMode
from hydra.errors import ConfigCompositionException, HydraException
from omegaconf import DictConfig, OmegaConf, open_dict
from omegaconf.errors import ConfigAttributeError, ConfigKeyError, OmegaConfBaseException

from ... import methods, resolvers
from ...config_dir import CONF_DIR
from ...protocol.cell import LABEL_READOUTS
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


#: The override that adds config directories: composed with the groups, as Hydra reads it before them.
SEARCH_PATH = "hydra.searchpath"


class Composer:
    """Hydra's composition of a sweep's or a job's config, its defaults tree composed once per choice of
    config groups.

    Hydra composes a config in two steps: the defaults tree of the group choices (``experiment=``,
    ``dataset=``, ``method=``; a sweep over them is left out, the jobs make it), then the value overrides
    (``method.params.alpha=10.0``, ``++protocol.labels.fold=1``, ``hydra.sweep.dir=...``) applied to the
    result in order. The first step is nearly all of the cost, and a tuned benchmark's thousand jobs share a
    few hundred choices of groups, so a :class:`Composer` has Hydra compose each choice once
    (``load_configuration``) and applies each job's value overrides to a copy by Hydra's rules
    (:func:`apply_overrides`), recording the overrides as Hydra does (``hydra.overrides``,
    ``hydra.job.override_dirname``). Hydra stays the one source of every setting, and the config is the one
    Hydra composes whole (tested: ``tests/running/pool/test_pool_jobs.py``). An override splits as Hydra's
    defaults list splits it: a group's choice (not a mapping) composes, a sweep is the jobs', any other
    applies; the search path composes with the groups. A sweep's own config (the sweeper's parameters) is
    the composition of its groups in run mode, which differs from Hydra's multirun composition only where a
    group is left to choose (``???``): there the multirun composition is used.
    """

    def __init__(self, loader):
        self.loader = loader
        self.parser = OverridesParser.create(config_loader=loader)  # glob() lists a group's options
        self.bases: dict = {}
        self.groups: dict[str, bool] = {}
        self.lines: dict[str, object] = {}
        self.hydra_readers: dict = {}

    def parse(self, overrides: list[str]) -> list:
        """The overrides parsed by Hydra's parser, each distinct line once."""
        for line in overrides:
            if line not in self.lines:
                self.lines[line] = self.parser.parse_overrides(overrides=[line])[0]
        return [self.lines[line] for line in overrides]

    def is_group(self, override) -> bool:
        """Whether ``override`` chooses a config group (a mapping given to a group is a value override)."""
        key = override.key_or_group
        if key not in self.groups:
            parent, _, name = key.rpartition("/")
            self.groups[key] = name in self.loader.list_groups(parent)
        return self.groups[key] and not isinstance(override.value(), dict)

    def base_key(self, overrides: list[str], run_mode: RunMode) -> tuple:
        """The choice of groups among ``overrides`` (and the mode): what :meth:`base` composes once."""
        parsed = self.parse(list(overrides))
        return run_mode, tuple(o.input_line for o in parsed if not o.is_sweep_override()
                               and (self.is_group(o) or o.key_or_group == SEARCH_PATH))

    def base(self, parsed, run_mode: RunMode):
        """The config of the group choices among ``parsed``, composed once."""
        key = self.base_key([o.input_line for o in parsed], run_mode)
        if key not in self.bases:
            self.bases[key] = self.loader.load_configuration("config", list(key[1]), run_mode=run_mode)
        return self.bases[key]

    def jobs(self, overrides: list[str]) -> tuple[list[list[str]], DictConfig]:
        """The job overrides of the sweep ``overrides`` (:func:`src.running.sweep.sweep_jobs` of the sweep's
        config) and the config whose resolver cache the jobs copy."""
        parsed = self.parse(list(overrides))
        self.loader.validate_sweep_overrides_legal(overrides=list(parsed), run_mode=RunMode.MULTIRUN,
                                                   from_shell=True)
        try:
            base = self.base(parsed, RunMode.RUN)
        except (HydraException, OmegaConfBaseException):  # a group left to choose: multirun composes it
            base = self.base(parsed, RunMode.MULTIRUN)
        if any(o.key_or_group.startswith("hydra.sweeper") for o in self.applied(parsed)):
            master = self.applied_to(base, parsed)
        else:
            master = OmegaConf.create({"hydra": {
                "sweeper": {"params": OmegaConf.to_container(base.hydra.sweeper.params)
                            if base.hydra.sweeper.get("params") is not None else None},
                "overrides": {"task": [o.input_line for o in parsed if not o.is_hydra_override()],
                              "hydra": [o.input_line for o in parsed if o.is_hydra_override()]}}})
        return sweep_jobs(master, self.parse), base

    def reads_hydra(self, overrides: list[str], run_mode: RunMode = RunMode.RUN) -> bool:
        """Whether the config of ``overrides`` interpolates Hydra's node outside it (``${hydra:...}``), which
        resolves only once Hydra holds the config: read once per choice of groups, and in the overrides."""
        key = self.base_key(overrides, run_mode)
        if key not in self.hydra_readers:
            base = self.base(self.parse(list(overrides)), run_mode)
            text = OmegaConf.to_yaml(OmegaConf.masked_copy(base, [name for name in base if name != "hydra"]))
            self.hydra_readers[key] = "${hydra:" in text
        return self.hydra_readers[key] or any("${hydra:" in line for line in overrides)

    def applied(self, parsed) -> list:
        """The overrides among ``parsed`` that Hydra applies to the composed config: no sweep, no group."""
        return [o for o in parsed if not o.is_sweep_override() and not self.is_group(o)]

    def applied_to(self, base, parsed):
        """A copy of ``base`` with the value overrides among ``parsed`` applied and every override recorded."""
        config = copy.deepcopy(base)
        apply_overrides(config, self.applied(parsed))
        task = [o for o in parsed if not o.is_hydra_override()]
        with open_dict(config.hydra):
            config.hydra.overrides.hydra = [o.input_line for o in parsed if o.is_hydra_override()]
            config.hydra.overrides.task = [o.input_line for o in task]
            dirname = config.hydra.job.config.override_dirname
            config.hydra.job.override_dirname = override_dirname(task, dirname.exclude_keys, dirname.item_sep,
                                                                 dirname.kv_sep)
        return config

    def __call__(self, overrides: list[str], run_mode: RunMode):
        """The config Hydra's ``load_configuration("config", overrides, run_mode)`` gives."""
        parsed = self.parse(list(overrides))
        return self.applied_to(self.base(parsed, run_mode), parsed)


def apply_overrides(config: DictConfig, overrides: list) -> None:
    """Apply parsed value overrides to a composed ``config`` in order, by Hydra's rules: ``~key`` deletes
    (``~key=value`` only where the value is that), ``+key=value`` adds a key that is not there (a mapping or
    list merges), ``++key=value`` adds or sets, ``key=value`` sets a key that is there (a mapping merges)."""
    for override in overrides:
        key, value = override.key_or_group, override.value()
        try:
            if override.is_delete():
                found = OmegaConf.select(config, key, throw_on_missing=False)
                if found is None or (value is not None and value != found):
                    raise ConfigCompositionException(f"Could not delete {override.input_line}: "
                                                     f"{key} is {found!r}")
                parent, _, name = key.rpartition(".")
                with open_dict(config):
                    del (OmegaConf.select(config, parent) if parent else config)[name]
            elif override.is_add():
                if OmegaConf.select(config, key, throw_on_missing=False) is not None \
                        and not isinstance(value, (dict, list)):
                    raise ConfigCompositionException(f"Could not append {override.input_line}: {key} is already "
                                                     f"set (use ++{override.input_line[1:]} to set it)")
                OmegaConf.update(config, key, value, merge=True, force_add=True)
            elif override.is_force_add():
                OmegaConf.update(config, key, value, merge=True, force_add=True)
            else:
                try:
                    OmegaConf.update(config, key, value, merge=True)
                except (ConfigAttributeError, ConfigKeyError) as exc:
                    raise ConfigCompositionException(f"Could not override '{key}'. To append to your config use "
                                                     f"+{override.input_line}") from exc
        except OmegaConfBaseException as exc:
            raise ConfigCompositionException(f"Error merging override {override.input_line}") from exc


def override_dirname(overrides: list, exclude_keys, item_sep: str, kv_sep: str) -> str:
    """``hydra.job.override_dirname`` as Hydra writes it: the task overrides but the excluded keys, sorted,
    joined by ``item_sep``, each ``=`` written ``kv_sep``."""
    lines = sorted(o.input_line for o in overrides if o.key_or_group not in exclude_keys)
    return item_sep.join(lines).replace("=", kv_sep)


#: The fewest jobs a composing process takes: a shorter plan composes in one process.
JOBS_PER_PROCESS = 100
#: What composing a choice of groups costs against applying one job's overrides to it (measured: about 70 ms
#: against 12 ms), which :func:`split` balances.
BASE_COST = 6


@contextmanager
def composing():
    """A :class:`Composer` over ``conf/``, Hydra initialized for it and cleared after."""
    resolvers.register()
    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            yield Composer(GlobalHydra.instance().config_loader())
    finally:
        GlobalHydra.instance().clear()


def expand(sweeps: Iterable[tuple[str, int, list[str]]], processes: int | None = None) -> list[Job]:
    """The jobs of the given sweeps, each ``(paper, sweep index, overrides)``, in sweep then launch order.

    Composed as Hydra composes them in multirun mode (a sweep's overrides may sweep values): each sweep's
    config, then each job's from its sweep's as a launcher composes it (``load_sweep_config``: the sweep's
    Hydra overrides, then the job's), through a :class:`Composer`; the settings are read
    (:func:`src.running.settings.run_spec`: one line naming a bad one) but no data set is loaded. A long plan
    (a tuned benchmark's thousand jobs) composes its jobs in ``processes`` forked processes (default: the
    usable cores), each job's choice of groups in one of them (:func:`split`).
    """
    sweeps = [(paper, sweep, list(overrides)) for paper, sweep, overrides in sweeps]
    with composing() as compose:
        # the sweeps' own configs, then their jobs', each step over the processes (one when the plan is short)
        keys = [compose.base_key(overrides, RunMode.RUN) for _, _, overrides in sweeps]
        launched = in_parts(compose, launch_part, sweeps, keys, processes, len(sweeps) * 20)
        planned = [(paper, sweep, number, hydra_overrides + list(job), cache)
                   for (paper, sweep, _), (hydra_overrides, jobs, cache) in zip(sweeps, launched)
                   for number, job in enumerate(jobs)]
        keys = [compose.base_key(item[3], RunMode.RUN) for item in planned]
        return in_parts(compose, compose_part, planned, keys, processes, len(planned))


def in_parts(compose: Composer, work, items: list, keys: list, processes: int | None, size: int) -> list:
    """``work(part)`` of ``items`` in order, in forked processes (:func:`split` by ``keys``, each its
    choice of groups) that start from ``compose``, where ``size`` (jobs) is worth :data:`JOBS_PER_PROCESS` a
    process and the system forks; else here."""
    global _FORKED
    processes = min(processes or resolvers.usable_cores(), size // JOBS_PER_PROCESS, len(items))
    _FORKED = compose
    try:
        if processes < 2 or "fork" not in multiprocessing.get_all_start_methods():
            return work(items)
        parts = split(keys, processes)
        with ProcessPoolExecutor(len(parts), mp_context=multiprocessing.get_context("fork")) as pool:
            done = list(pool.map(work, [[items[i] for i in part] for part in parts]))
    finally:
        _FORKED = None
    found: list = [None] * len(items)
    for part, results in zip(parts, done):
        for index, result in zip(part, results):
            found[index] = result
    return found


def split(keys: list, parts: int) -> list[list[int]]:
    """The indices of ``keys`` (each job's choice of groups) dealt into ``parts`` lists of about equal cost
    (:data:`BASE_COST` a distinct key, 1 a job), every job of a key in one list, each list in order."""
    counts: dict = {}
    for key in keys:
        counts[key] = counts.get(key, 0) + 1
    load, home = [0.0] * parts, {}
    for key in sorted(counts, key=lambda k: (-counts[k], str(k))):
        home[key] = min(range(parts), key=lambda p: load[p])
        load[home[key]] += BASE_COST + counts[key]
    return [part for part in ([i for i, key in enumerate(keys) if home[key] == p] for p in range(parts)) if part]


#: The composer a process forked by :func:`in_parts` inherits (the one of this process while it works).
_FORKED: Composer | None = None


def launch_part(sweeps: list) -> list[tuple]:
    """Per sweep ``(paper, index, overrides)`` of ``sweeps``: its Hydra overrides, its jobs' overrides and the
    resolver cache its jobs copy (:meth:`Composer.jobs`)."""
    out = []
    for _, _, overrides in sweeps:
        jobs, master = _FORKED.jobs(overrides)
        hydra_overrides = [o.input_line for o in _FORKED.parse(overrides) if o.is_hydra_override()]
        out.append((hydra_overrides, jobs, OmegaConf.get_cache(master)))
    return out


def compose_part(planned: list) -> list[Job]:
    """The jobs of ``planned`` composed with the composer this process has (:func:`compose_jobs`)."""
    return compose_jobs(planned, _FORKED)


def compose_jobs(planned: list, compose: Composer) -> list[Job]:
    """Each planned job ``(paper, sweep, number, overrides, the sweep's resolver cache)`` composed."""
    jobs = []
    for paper, sweep, number, overrides, cache in planned:
        config = compose(overrides, RunMode.RUN)
        OmegaConf.set_cache(config, copy.deepcopy(cache))  # as load_sweep_config copies the sweep's
        with open_dict(config):
            config.hydra.job.num = number
        if compose.reads_hydra(overrides):
            HydraConfig.instance().set_config(config)  # ${hydra:...} in the job's config
        out_dir = Path(config.hydra.sweep.dir) / str(config.hydra.sweep.subdir)
        launcher = OmegaConf.to_container(config.hydra.launcher, resolve=True)
        task = tuple(config.hydra.overrides.task)
        with open_dict(config):
            del config["hydra"]
        plain = OmegaConf.to_container(config, resolve=True)
        jobs.append(Job(paper, sweep, number, task, out_dir, plain, launcher, run_spec(plain)))
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
    return sharing_keys(spec, [(k, trial)])[0]


def sharing_keys(spec: RunSpec, cells) -> list[str]:
    """:func:`sharing_key` of each ``(k, trial)`` of ``cells``, the settings read once: the hash of
    ``[settings, k, trial]`` as JSON."""
    settings = spec.cell_settings()
    settings["method"].pop("label")
    if not reads_labels(spec):
        settings["protocol"].pop("labels")
    # each run reads a shared cell out by its own labels (src.protocol.cell.readouts_for)
    settings["protocol"]["readouts"] = [name for name in settings["protocol"]["readouts"] if name not in LABEL_READOUTS]
    text = json.dumps(settings, sort_keys=True, default=str)
    return [hashlib.sha256(f"[{text}, {json.dumps(k, default=str)}, {json.dumps(trial, default=str)}]".encode())
            .hexdigest() for k, trial in cells]


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
        for (k, trial), key in zip(cells, sharing_keys(job.spec, cells)):
            tasks.setdefault(key, Task(key, [])).places.append(Place(index, k, trial))
    return list(tasks.values())

"""Sweeps on a SLURM cluster that fail well: every task waited for, a dead one one line among the failed jobs.

``hydra/launcher=submitit_slurm`` (``conf/hydra/launcher/submitit_slurm.yaml``) runs a multirun through
:class:`SlurmLauncher`: hydra-submitit-launcher's launcher, which submits the sweep's jobs as one SLURM job
array, with its wait replaced by :func:`wait_for`. The plugin's wait stopped the whole command at the first task
that ended without a result (cancelled, over its time limit, killed for its memory), with submitit's
``UncompletedJobError`` traceback while the other tasks ran on, and without SLURM accounting it never noticed
such a task at all (submitit reads task states from ``sacct`` only) and waited for ever. Here:

* every task is waited for; one that ends without a result becomes one line in the sweep's list of failed jobs
  (``<sweep dir>/.failed_jobs/<job>.json``, listed by :class:`src.running.sweep.SweepGuard` at the end, exit status
  1), e.g. ``job 3 (dataset=yale method=nmf): SLURM task 1234_3 ended without a result (state CANCELLED)``,
  and the other jobs' results are kept (a re-run computes only the missing cells);
* the states come from ``sacct`` where the cluster keeps accounting, else from ``squeue``
  (:class:`SlurmQueue`): a task that has left the queue without a result is dead after a grace period, even
  when nothing can say why (``not in squeue any more; no accounting to say why: ...``). Nothing hangs.

:func:`wait_for` is the wait alone, for any submitit jobs on SLURM (e.g. batches of cells submitted as array tasks by
another module). :class:`SlurmSetup`, the Hydra callback that the launcher's config adds, checks before a
sweep starts that the SLURM commands are there, and lets Hydra find the launcher (below).

Hydra instantiates a launcher only when its ``_target_`` names a class in the ``hydra_plugins`` namespace
package that Hydra has registered; this package is not one (it installs as ``repro_mf``, or runs as ``src`` in
a checkout). :func:`register_launcher` registers :class:`SlurmLauncher` under :data:`PLUGIN_TARGET`, the
``_target_`` of the launcher's config; :class:`SlurmSetup` calls it when Hydra creates the callbacks, before
the launcher.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from hydra.core.plugins import Plugins
from hydra.core.singleton import Singleton
from hydra.core.utils import JobReturn, JobStatus, filter_overrides
from hydra.experimental.callback import Callback
from hydra.plugins.launcher import Launcher
from hydra_plugins.hydra_submitit_launcher.config import BaseQueueConf
from hydra_plugins.hydra_submitit_launcher.submitit_launcher import SlurmLauncher as SubmititSlurmLauncher
from omegaconf import DictConfig
from submitit import AutoExecutor
from submitit.core.utils import FailedJobError, FailedSubmissionError

from ..errors import one_line
from ..files import write_atomic
from .progress import finish_job
from .sweep import INVALID_EXIT, failures_dir

logger = logging.getLogger(__name__)

#: The ``_target_`` of ``conf/hydra/launcher/submitit_slurm.yaml``: the name :func:`register_launcher` gives
#: :class:`SlurmLauncher` among Hydra's plugins (Hydra takes launchers from the ``hydra_plugins`` namespace only).
PLUGIN_TARGET = "hydra_plugins.repro_mf.SlurmLauncher"
#: Seconds between two looks at the tasks (their result files, then ``sacct`` or ``squeue``).
POLL_SECONDS = 10.0
#: Seconds a task may stay ended (a final state, or gone from the queue) without its result file before it
#: counts as dead: the file may reach a shared file system late (submitit itself waits 15 s for it).
GRACE_SECONDS = 30.0
#: The commands a sweep needs on the submitting machine: sbatch submits, squeue follows the tasks, srun runs
#: each task (submitit refuses to start without it).
NEEDED_COMMANDS = ("sbatch", "squeue", "srun")
#: SLURM states in which a task has ended (``sacct``'s and ``squeue``'s names); any other state, or one not
#: known here, is waited on. A preempted task that SLURM requeues leaves PREEMPTED within the grace period.
ENDED_STATES = frozenset({"BOOT_FAIL", "CANCELLED", "COMPLETED", "DEADLINE", "FAILED", "NODE_FAIL",
                          "OUT_OF_MEMORY", "PREEMPTED", "REVOKED", "TIMEOUT"})
GONE_WITHOUT_ACCOUNTING = "not in squeue any more; no accounting to say why: cancelled, time limit or out of memory"
GONE_WITH_ACCOUNTING = "not in squeue any more, nor in sacct"
#: Hydra's warning that ``conf/hydra/launcher/submitit_slurm.yaml`` extends the plugin's config of the same name
#: (its "automatic schema matching", deprecated but the only way to extend that config under its own name).
SCHEMA_WARNING = r"\s*'hydra/launcher/submitit_slurm' is validated against ConfigStore schema with the same name"
#: An array task's id as sacct and squeue print it: ``1234_5``, or ``1234_[5-7,9%2]`` for tasks not started yet.
TASK_ID = re.compile(r"^(?P<array>\d+)_\[(?P<ranges>[\d,\-]+)(?:%\d+)?\]$")

#: What slurmstepd writes into a task's log when it ends the task, in the order they are looked for (a task
#: killed for its memory is also reported CANCELLED, one killed at its time limit CANCELLED ... DUE TO TIME LIMIT),
#: each with what it says and the SLURM state that says as much (then the log adds nothing to the state).
KILL_MESSAGES = (
    (re.compile(r"exceeded (job |step )?memory limit|oom[-_ ]kill|out of memory", re.IGNORECASE),
     "out of memory (over its mem_gb)", "OUT_OF_MEMORY"),
    (re.compile(r"CANCELLED AT \S+ DUE TO TIME LIMIT"), "time limit (timeout_min)", "TIMEOUT"),
    (re.compile(r"CANCELLED AT \S+ DUE TO PREEMPTION"), "preempted", "PREEMPTED"),
    (re.compile(r"CANCELLED AT \S+ DUE TO NODE FAIL"), "node failure", "NODE_FAIL"),
    (re.compile(r"\*\*\* (JOB|STEP) \S+ ON \S+ CANCELLED AT"), "cancelled", "CANCELLED"),
)
#: How much of the end of a task's log is read for :data:`KILL_MESSAGES`.
LOG_TAIL_BYTES = 16384

Runner = Callable[..., subprocess.CompletedProcess]


class Ended(NamedTuple):
    """How one job ended: its ``result`` (what the submitted function returned), or a ``failure`` line."""

    job: Any
    result: Any = None
    failure: str | None = None


def _expand(task_id: str) -> list[str]:
    """``1234_[5-7,9%2]`` -> ``1234_5 1234_6 1234_7 1234_9``; any other id as it is."""
    match = TASK_ID.match(task_id)
    if match is None:
        return [task_id]
    ids = []
    for part in match["ranges"].split(","):
        first, _, last = part.partition("-")
        ids += [f"{match['array']}_{index}" for index in range(int(first), int(last or first) + 1)]
    return ids


def parse_states(text: str) -> dict[str, str]:
    """Task id -> state from ``sacct``'s or ``squeue``'s ``id|state`` lines; ``CANCELLED by 0`` -> ``CANCELLED``.
    Job steps (``1234_5.batch``) and lines without both fields are skipped."""
    states = {}
    for line in text.splitlines():
        task_id, _, state = line.strip().partition("|")
        if not task_id or not state.strip() or "." in task_id:
            continue
        for one in _expand(task_id):
            states[one] = state.split()[0].upper()
    return states


class SlurmQueue:
    """What became of SLURM tasks, asked of ``sacct`` where the cluster keeps accounting, else of ``squeue``.

    :meth:`ended` is the question :func:`wait_for` asks at each poll.

    Parameters
    ----------
    run : callable, optional
        Runs a command (``subprocess.run``'s signature); tests pass a fake.
    """

    def __init__(self, run: Runner = subprocess.run) -> None:
        self.run = run
        #: Whether ``sacct`` answered at the last poll (None before the first).
        self.accounting: bool | None = None
        self._squeue_failing = False

    def _command(self, command: list[str]) -> subprocess.CompletedProcess | None:
        try:
            return self.run(command, capture_output=True, text=True, timeout=60, check=False)
        except (OSError, subprocess.SubprocessError):  # not installed, not executable, hanging
            return None

    def sacct(self, arrays: Sequence[str]) -> dict[str, str] | None:
        """Task id -> state of the tasks of ``arrays`` (job ids) from ``sacct``, or None when sacct does not
        answer (no accounting: ``Slurm accounting storage is disabled``; not installed; an error)."""
        done = self._command(["sacct", "--noheader", "--parsable2", "--allocations", "--format=JobID,State",
                              "--jobs", ",".join(arrays)])
        if done is None or done.returncode != 0:
            return None
        return parse_states(done.stdout)

    def squeue(self, arrays: Sequence[str]) -> dict[str, str] | None:
        """Task id -> state of the tasks of ``arrays`` that ``squeue`` still shows, ended ones included while
        slurmctld keeps them (``MinJobAge``, 300 s by default); None when squeue does not answer. Arrays that
        have all left the queue make squeue say ``Invalid job id specified``: an empty answer."""
        done = self._command(["squeue", "--noheader", "--array", "--states=all", "--format=%i|%T",
                              "--jobs", ",".join(arrays)])
        if done is None:
            return None
        if done.returncode != 0:
            return {} if "invalid job id" in (done.stderr or "").lower() else None
        return parse_states(done.stdout)

    def ended(self, task_ids: Sequence[str]) -> dict[str, str]:
        """The tasks among ``task_ids`` (``1234_5``) that have ended, each with why: ``state CANCELLED``, or
        that it has left the queue and nothing says how. A task still pending or running, or one the cluster
        could not be asked about (squeue failing), is left out: it is waited for."""
        wanted = list(dict.fromkeys(str(task_id) for task_id in task_ids))
        if not wanted:
            return {}
        accounted = self.sacct(sorted({task_id.split("_")[0] for task_id in wanted}))
        self.accounting = accounted is not None
        states = {task_id: accounted[task_id] for task_id in wanted if accounted and task_id in accounted}
        reasons = {task_id: f"state {state}" for task_id, state in states.items() if state in ENDED_STATES}
        unknown = [task_id for task_id in wanted if task_id not in states]  # no accounting, or not in it yet
        if not unknown:
            return reasons
        queued = self.squeue(sorted({task_id.split("_")[0] for task_id in unknown}))
        if queued is None:
            if not self._squeue_failing:
                logger.warning("squeue does not answer; waiting for the SLURM tasks' results all the same")
            self._squeue_failing = True
            return reasons
        if self._squeue_failing:
            logger.info("squeue answers again")
        self._squeue_failing = False
        for task_id in unknown:
            state = queued.get(task_id)
            if state is None:
                reasons[task_id] = GONE_WITH_ACCOUNTING if self.accounting else GONE_WITHOUT_ACCOUNTING
            elif state in ENDED_STATES:
                reasons[task_id] = f"state {state}"
        return reasons


def _has_result(job) -> bool:
    return Path(job.paths.result_pickle).exists()


def kill_message(job) -> tuple[str, str] | None:
    """Why slurmstepd ended the task of ``job``, as the end of its log says, and the state that says as much
    (:data:`KILL_MESSAGES`); None when the log says nothing of it (or there is no log)."""
    for name in ("stderr", "stdout"):
        try:
            with open(getattr(job.paths, name), "rb") as log:
                log.seek(0, os.SEEK_END)
                log.seek(max(0, log.tell() - LOG_TAIL_BYTES))
                tail = log.read().decode(errors="replace")
        except (OSError, AttributeError, TypeError):
            continue
        for pattern, why, state in KILL_MESSAGES:
            if pattern.search(tail):
                return why, state
    return None


def dead_line(job, reason: str) -> str:
    """The failure line of a task that ended without a result: the cluster's ``reason`` (``state CANCELLED``,
    or that it left the queue), with what slurmstepd wrote into its log where that says more (``state FAILED;
    its log says: out of memory (over its mem_gb)``, ``not in squeue any more; its log says: cancelled``)."""
    said = kill_message(job)
    if said is not None and reason != f"state {said[1]}":
        reason = f"{reason.partition(';')[0]}; its log says: {said[0]}"
    return f"SLURM task {job.job_id} ended without a result ({reason})"


def _error_line(exc: BaseException) -> str:
    """The last line of the traceback inside submitit's ``FailedJobError`` (the task's own exception), else
    the exception on one line."""
    lines = [line.strip() for line in str(exc).splitlines()]
    rules = [number for number, line in enumerate(lines) if line and set(line) == {"-"}]
    if len(rules) >= 2:
        trace = [line for line in lines[rules[0] + 1:rules[1]] if line]
        if trace:
            return one_line(RuntimeError(trace[-1]))[len("RuntimeError: "):]
    return one_line(exc)


def _read(job) -> Ended:
    """The ended job's result, or a failure line when the task raised (its exception, its log)."""
    try:
        return Ended(job, job.result())
    except Exception as exc:  # noqa: BLE001 - the task's exception, or an unreadable result file
        return Ended(job, failure=f"SLURM task {job.job_id} failed: {_error_line(exc)} (log: {job.paths.stderr})")


def wait_for(jobs: Sequence[Any], poll_seconds: float = POLL_SECONDS, grace_seconds: float = GRACE_SECONDS,
             queue: Callable[[Sequence[str]], Mapping[str, str]] | None = None,
             on_end: Callable[[int, Ended], None] | None = None,
             sleep: Callable[[float], None] = time.sleep,
             clock: Callable[[], float] = time.monotonic) -> list[Ended]:
    """Wait until every one of ``jobs`` has ended, and say how each did; never stops at the first failure.

    A job has ended when its result file exists (then its result is read, or its exception becomes the
    failure line: ``SLURM task 1234_5 failed: ValueError: ... (log: ...)``), or when the cluster has said for
    ``grace_seconds`` that its task ended and the file is still missing: it died without a result (scancel,
    time limit, out of memory, node failure), ``SLURM task 1234_5 ended without a result (state CANCELLED)``,
    with what SLURM wrote into the task's log where that says more (:func:`dead_line`: ``state FAILED; its
    log says: out of memory (over its mem_gb)``). Without SLURM accounting (``sacct`` not working) a task that
    has left ``squeue`` without a result is dead in the same way, so the wait always ends.

    Parameters
    ----------
    jobs : sequence of submitit jobs
        One task each, as ``Executor.submit`` and ``Executor.map_array`` return them: used are ``job_id``
        (``1234_5``), ``paths.result_pickle``, ``paths.stderr`` and ``result()``.
    poll_seconds : float
        Seconds between two looks at the result files and the cluster (after the first few, 1, 2, 4, ...
        seconds apart).
    grace_seconds : float
        Seconds an ended task may lack its result file before it counts as dead.
    queue : callable, optional
        Task ids -> {task id: why it ended} for the tasks that have ended (:meth:`SlurmQueue.ended`, the
        default); tests pass a fake, and jobs of another submitit executor one that knows them
        (``lambda ids: {}`` waits for the result files alone).
    on_end : callable, optional
        Called as ``on_end(index, ended)`` as soon as ``jobs[index]`` has ended (e.g. to record a failure at
        once).
    sleep, clock : callable, optional
        ``time.sleep`` and ``time.monotonic``; tests pass fakes.

    Returns
    -------
    list of Ended
        In the order of ``jobs``: ``Ended(job, result, None)`` for a job that returned, ``Ended(job, None,
        failure line)`` for one that failed or died.
    """
    if queue is None:
        queue = SlurmQueue().ended
    ends: dict[int, Ended] = {}
    ended_since: dict[int, float] = {}
    delay = min(1.0, poll_seconds)  # short first waits for short jobs, doubling up to poll_seconds

    def finish(index: int, end: Ended) -> None:
        ends[index] = end
        ended_since.pop(index, None)
        if on_end is not None:
            on_end(index, end)

    while len(ends) < len(jobs):
        for index, job in enumerate(jobs):
            if index not in ends and _has_result(job):
                finish(index, _read(job))
        waiting = [index for index in range(len(jobs)) if index not in ends]
        if not waiting:
            break
        reasons = queue([str(jobs[index].job_id) for index in waiting])
        now = clock()
        for index in waiting:
            job = jobs[index]
            reason = reasons.get(str(job.job_id))
            if reason is None:  # pending or running again (requeued), or the cluster could not say
                ended_since.pop(index, None)
                continue
            since = ended_since.setdefault(index, now)
            if now - since >= grace_seconds:
                finish(index, _read(job) if _has_result(job) else Ended(job, failure=dead_line(job, reason)))
        if len(ends) < len(jobs):
            sleep(delay)
            delay = min(2 * delay, poll_seconds)
    return [ends[index] for index in range(len(jobs))]


def record_failure(sweep_dir, job_number: int, overrides: Sequence[str], error: str) -> None:
    """Add job ``job_number`` to the sweep's list of failed jobs (``<sweep dir>/.failed_jobs/``, the list that
    :class:`src.running.sweep.SweepGuard` prints at the end), unless the job recorded its own failure."""
    path = failures_dir(sweep_dir) / f"{job_number}.json"
    if not path.exists():
        write_atomic(path, json.dumps({"job": job_number, "overrides": list(overrides), "error": error}))


def quiet_schema_warning() -> None:
    """Silence :data:`SCHEMA_WARNING` in this process from now on: the extension is intended (Hydra repeats the
    warning at each composition of a job's config; the first compositions, before any code of ours runs, still
    show it)."""
    warnings.filterwarnings("ignore", message=SCHEMA_WARNING, category=UserWarning)


class SlurmLauncher(SubmititSlurmLauncher):
    """hydra-submitit-launcher's SLURM launcher that waits for every task and fails well (module docstring).

    The jobs are submitted as the plugin submits them (one job array; each task runs the plugin's
    ``__call__``, and can be requeued through its ``checkpoint``), with the same parameters (the plugin's
    config keys). Then :func:`wait_for` waits for all of them: a task that failed or died is recorded as a
    failed job of the sweep (:func:`record_failure`, and a line with the sweep's job counter), the others'
    results are returned. A job array that ``sbatch`` refuses stops the sweep with one line, exit status 2.
    """

    poll_seconds = POLL_SECONDS
    grace_seconds = GRACE_SECONDS
    #: What :func:`wait_for` asks about ended tasks (None: :class:`SlurmQueue`); tests set a fake.
    queue: Callable[[Sequence[str]], Mapping[str, str]] | None = None

    def __call__(self, *args, **kwargs) -> JobReturn:
        """One task, on its node: the plugin's (its job's config composed, the job run), in a task log without
        Hydra's warning about our launcher config."""
        quiet_schema_warning()
        return super().__call__(*args, **kwargs)

    def _executor(self):
        """A submitit executor for SLURM with this launcher's parameters: the plugin's generic keys
        (``timeout_min``, ``mem_gb``, ``cpus_per_task``, ...) as submitit names them, the others prefixed
        ``slurm_``."""
        generic = {field.name for field in dataclasses.fields(BaseQueueConf)}
        settings = dict(self.params)
        folder = settings.pop("submitit_folder")
        timeouts = settings.pop("max_num_timeout", 0)
        executor = AutoExecutor(folder=folder, cluster="slurm", slurm_max_num_timeout=timeouts)
        executor.update_parameters(**{key if key in generic else f"slurm_{key}": value
                                      for key, value in settings.items()})
        return executor

    def _describe(self, overrides: Sequence[str]) -> str:
        """``yale NMF`` for the sweep's counter line, from the job's config (its overrides if that fails)."""
        try:
            config = self.hydra_context.config_loader.load_sweep_config(self.config, list(overrides))
            return f"{config.dataset.name} {config.method.label}"
        except Exception:  # noqa: BLE001 - only a label for a line
            return " ".join(filter_overrides(overrides)) or "defaults"

    def submit(self, job_overrides: Sequence[Sequence[str]], numbers: Sequence[int]) -> list:
        """Submit the jobs numbered ``numbers`` (their ``job_overrides``) as one SLURM job array; returns
        submitit's jobs. A job array that sbatch refuses ends the command with one line, exit status 2."""
        sweep_dir = Path(str(self.config.hydra.sweep.dir))
        sweep_dir.mkdir(parents=True, exist_ok=True)
        if "mode" in self.config.hydra.sweep:
            os.chmod(sweep_dir, int(str(self.config.hydra.sweep.mode), 8))
        logger.info("submitting %d job(s) to SLURM as one job array; sweep directory %s", len(numbers), sweep_dir)
        for number, overrides in zip(numbers, job_overrides):
            logger.info("\t#%d : %s", number, " ".join(filter_overrides(overrides)))
        n, state = len(numbers), Singleton.get_state()  # each task's copy of Hydra's state, as the plugin's
        arguments = ([list(overrides) for overrides in job_overrides], ["hydra.sweep.dir"] * n, list(numbers),
                     [f"job_id_for_{number}" for number in numbers], [state] * n)
        try:
            return self._executor().map_array(self, *arguments)
        except (FailedJobError, FailedSubmissionError, OSError) as exc:  # sbatch's error, or no sbatch
            said = [line.strip().removeprefix("sbatch: error: ") for line in str(exc).splitlines() if line.strip()]
            logger.error("sbatch refused the sweep's job array, nothing was submitted: %s",
                         "; ".join(said) or one_line(exc))
            sys.exit(INVALID_EXIT)

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[JobReturn]:
        """Submit the jobs as one SLURM job array, wait for all of them, and return the results of those that
        ended well; each of the others is in the sweep's list of failed jobs."""
        numbers = [initial_job_idx + offset for offset in range(len(job_overrides))]
        jobs = self.submit(job_overrides, numbers)
        sweep_dir, started = Path(str(self.config.hydra.sweep.dir)), time.monotonic()
        array = str(jobs[0].job_id).split("_")[0]
        logger.info("submitted SLURM job array %s; waiting for its %d task(s)", array, len(jobs))

        def on_end(index: int, end: Ended) -> None:
            number, overrides = numbers[index], list(job_overrides[index])
            failure = end.failure
            if failure is None and isinstance(end.result, JobReturn) and end.result.status != JobStatus.COMPLETED:
                try:  # the job's own exception, which run_job caught in the task (it raises it again here)
                    end.result.return_value
                    failure = f"SLURM task {end.job.job_id} failed: status {end.result.status.name}"
                except Exception as exc:  # noqa: BLE001 - whatever the job raised
                    failure = f"SLURM task {end.job.job_id} failed: {one_line(exc)}"
            if failure is None:
                recorded = (failures_dir(sweep_dir) / f"{number}.json").exists()
                logger.info("job %d ended: SLURM task %s returned%s", number, end.job.job_id,
                            "; the job failed (listed at the end)" if recorded else "")
                return
            record_failure(sweep_dir, number, overrides, failure)
            finish_job(sweep_dir, number, self._describe(overrides), time.monotonic() - started, failure,
                       computed=False, failed=True)

        try:
            ends = wait_for(jobs, self.poll_seconds, self.grace_seconds, queue=self.queue, on_end=on_end)
        except KeyboardInterrupt:
            logger.error("interrupted: the tasks of SLURM job array %s go on (scancel %s stops them); running the "
                         "same command again reuses their finished cells", array, array)
            raise
        return [end.result for end in ends if end.failure is None and isinstance(end.result, JobReturn)
                and end.result.status == JobStatus.COMPLETED]


def register_launcher() -> None:
    """Register :class:`SlurmLauncher` with Hydra under :data:`PLUGIN_TARGET` (once).

    Hydra creates a launcher only from a class registered under a name in the ``hydra_plugins`` namespace; the
    registry (``Plugins.class_name_to_class``) is where its plugin scan puts them, and where this puts ours.
    """
    plugins = Plugins.instance()
    plugins.class_name_to_class[PLUGIN_TARGET] = SlurmLauncher
    known = plugins.plugin_type_to_subclass_list[Launcher]
    if SlurmLauncher not in known:
        known.append(SlurmLauncher)


def missing_commands(which: Callable[[str], str | None] = shutil.which) -> list[str]:
    """The commands of :data:`NEEDED_COMMANDS` that are not on the ``PATH``."""
    return [command for command in NEEDED_COMMANDS if which(command) is None]


class SlurmSetup(Callback):
    """Hydra callback of ``hydra/launcher=submitit_slurm`` (``conf/hydra/callbacks/slurm.yaml``): registers
    :class:`SlurmLauncher` when Hydra creates it (before the launcher), and before a sweep starts checks the
    SLURM commands (one line and exit status 2 if one is missing) and says how dead tasks will be noticed."""

    def __init__(self) -> None:
        register_launcher()
        quiet_schema_warning()

    def on_multirun_start(self, config: DictConfig, **kwargs) -> None:
        missing = missing_commands()
        if missing:
            logger.error("hydra/launcher=submitit_slurm needs SLURM's %s on the PATH: %s not found (run the sweep "
                         "on a machine that submits to the cluster)", ", ".join(NEEDED_COMMANDS), ", ".join(missing))
            sys.exit(INVALID_EXIT)
        queue = SlurmQueue()
        if queue.sacct(["1"]) is None:
            logger.info("SLURM accounting does not answer (sacct): a task that leaves the queue without a result "
                        "counts as dead after %.0f s, with its state while squeue still shows it", GRACE_SECONDS)

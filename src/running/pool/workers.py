"""What a worker does with a cell, and the two kinds of workers: processes on this machine, SLURM array tasks.

A worker gets a :class:`Work` (a cell's run spec, (k, trial), and the rows to write), loads the data set
once per process, computes the cell under the run's BLAS thread limit (:func:`src.running.cells.compute_cell`),
catching what the method warns (:mod:`src.running.cell_warnings`: recorded in the rows, never printed), and
writes its row into each job that asked for it, under that job's settings, atomically, as soon as the cell
is done: a killed worker loses at most the cell it was on. It answers with a :class:`Done` (times,
costs, or the error on one line), never with an exception, so one failed cell does not stop the others; a
cell given a time limit (``Work.time_limit``, for code from outside the repository) that runs past it
fails on one line, and its worker goes on with the next cell.

* :func:`run_local` spreads the cells over a pool of worker processes on this machine, in the order
  given (longest first), one cell at a time per worker.
* :func:`run_slurm` gathers the cells into batches of about :data:`BATCH_SECONDS` of expected work and
  submits them as one SLURM array through submitit (:mod:`src.running.slurm`), with the resources of the
  ``hydra.launcher`` node; a task that dies without an answer fails the cells of its batch that have no
  row on disk, on one line, and the others are waited for.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import multiprocessing
import os
import queue
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import submitit
from threadpoolctl import threadpool_limits

from .. import slurm
from ...data import load_dataset
from ...errors import one_line
from ..results import RunIdentity, result_row, save_cell
from ..cells import compute_cell, peak_rss_mb, trial_of
from ..cell_warnings import caught, recorded
from ..progress import counted
from ..settings import MethodSpec, RunSpec, thaw

logger = logging.getLogger(__name__)

#: The expected work of one SLURM array task: long enough that a task's start (seconds) is a small share,
#: short enough that a dead task loses little and that many cores find work.
BATCH_SECONDS = 300.0


@dataclass(frozen=True)
class Row:
    """One row a computed cell writes: its file and the job's settings it is recorded under."""

    path: Path
    dataset: str
    method: MethodSpec
    seed: int
    identity: RunIdentity


@dataclass(frozen=True)
class Work:
    """One cell for a worker: ``task`` (its index in the plan), the run spec it is computed under, (k,
    trial), and the rows it writes."""

    task: int
    spec: RunSpec
    k: int
    trial: int
    rows: tuple[Row, ...]
    time_limit: float | None = None  #: seconds after which the cell is stopped (None: no limit)


@dataclass(frozen=True)
class Done:
    """A worker's answer for one cell: ``error`` is None when its rows are written, else one line.

    ``seconds`` is the cell's fit and KMeans time as its row records it, ``cpu_seconds`` the worker's CPU
    time for the whole cell (data loading on first use included), ``start``/``end`` wall-clock epochs.
    """

    task: int
    error: str | None
    seconds: float = math.nan
    cpu_seconds: float = math.nan
    start: float = math.nan
    end: float = math.nan
    worker: str = ""
    n_iter: int = 0
    rank: int = 0
    n_samples: int = 0


class CellTimeLimit(Exception):
    """A cell ran past its time limit (:func:`time_limit`)."""


@contextlib.contextmanager
def time_limit(seconds: float | None):
    """Stop the code inside after ``seconds`` of wall time with :class:`CellTimeLimit` (None: no limit).

    A timer signal interrupts the worker's main thread wherever Python runs next, so a fit that loops or
    sleeps stops and the worker goes on with its next cell; a single call into compiled code that never
    returns to Python is not interrupted (it is stopped with the pool).
    """
    if not seconds:
        yield
        return

    def stop(signum, frame):
        raise CellTimeLimit(f"stopped after {seconds:g} s, the cell time limit (set it with --cell-timeout)")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


_DATA: dict[str, object] = {}  # the data sets this worker process has loaded, by their settings


def _dataset(spec: RunSpec):
    key = json.dumps([thaw(spec.dataset.config), str(spec.paths.data_dir), str(spec.paths.mirror), spec.seed],
                     sort_keys=True, default=str)
    if key not in _DATA:
        _DATA[key] = load_dataset(thaw(spec.dataset.config), spec.paths.data_dir, spec.paths.mirror, spec.seed)
    return _DATA[key]


def work(item: Work) -> Done:
    """Compute one cell and write its rows (see the module docstring); returns its :class:`Done`."""
    start, cpu = time.time(), time.process_time()
    worker = f"{os.uname().nodename}:{os.getpid()}"
    try:
        with threadpool_limits(limits=item.spec.blas_threads):
            dataset = _dataset(item.spec)
            with caught() as records, time_limit(item.time_limit):  # what the method says goes into its rows
                cell = compute_cell(item.spec, dataset, item.k, item.trial)
        rss, warned = peak_rss_mb(), recorded(records)
        rows = [result_row(row.dataset, row.method, row.seed, cell, row.identity, rss,  # each scored on its trial
                           trial_of(row.identity, dataset, item.k, item.trial, row.seed), warned)
                for row in item.rows]
        for row, values in zip(item.rows, rows):
            save_cell(row.path, values)
    except Exception as exc:  # noqa: BLE001 - the cell fails on one line, the other cells go on
        return Done(item.task, one_line(exc), start=start, end=time.time(),
                    worker=worker)
    first = rows[0]
    return Done(item.task, None, first["fit_seconds"] + first["kmeans_seconds"], time.process_time() - cpu,
                start, time.time(), worker, int(first["n_iter"]), int(first["rank"]), int(first["n_samples"]))


def work_batch(items: Sequence[Work]) -> list[Done]:
    """A SLURM array task: its cells one after another."""
    return [work(item) for item in items]


def run_local(items: Sequence[Work], workers: int) -> Iterator[Done]:
    """Compute ``items`` in a pool of ``workers`` processes, taken in the given order; yields each
    :class:`Done` as it comes. Closing the iterator (an error, an interrupt) stops the workers."""
    context = multiprocessing.get_context("spawn")  # a clean interpreter: no BLAS threads or locks inherited
    pool = context.Pool(processes=workers)
    try:
        yield from pool.imap_unordered(work, items, chunksize=1)
        pool.close()
        pool.join()
    finally:
        pool.terminate()


def batches(items: Sequence[Work], expected: Callable[[Work], float], seconds: float = BATCH_SECONDS) \
        -> list[list[Work]]:
    """``items`` (longest first) in batches of about ``seconds`` of expected work each: each item goes to
    the batch with the least work so far, among as many batches as the total work needs (at least one)."""
    total = sum(expected(item) for item in items)
    count = max(1, min(len(items), math.ceil(total / seconds)))
    loads, out = [0.0] * count, [[] for _ in range(count)]
    for item in items:
        least = loads.index(min(loads))
        out[least].append(item)
        loads[least] += expected(item)
    return [batch for batch in out if batch]


#: The ``hydra.launcher`` keys that submitit's executors take without the cluster's prefix.
GENERIC_KEYS = ("timeout_min", "cpus_per_task", "gpus_per_node", "tasks_per_node", "mem_gb", "nodes",
                "stderr_to_stdout")
#: Keys of the sweep launcher's node that are not a task's resources here (the folder is the reproduction's).
SWEEP_KEYS = ("_target_", "submitit_folder", "name", "max_num_timeout")


def slurm_executor(launcher: dict, folder: Path) -> submitit.AutoExecutor:
    """A submitit executor for SLURM with the task resources of a ``hydra.launcher`` node (submitit's SLURM
    launcher's keys: partition, time, memory, cores, ...), its files in ``folder``."""
    executor = submitit.AutoExecutor(folder=folder, cluster="slurm")
    params = {key if key in GENERIC_KEYS else f"slurm_{key}": value for key, value in launcher.items()
              if key not in SWEEP_KEYS and value is not None}
    executor.update_parameters(name="repro-mf-cells", **params)
    return executor


def run_slurm(items: Sequence[Work], launcher: dict, folder: Path, expected: Callable[[Work], float],
              poll_seconds: float = 10.0) -> Iterator[Done]:
    """Compute ``items`` as SLURM array tasks (see the module docstring); yields a :class:`Done` per cell as
    each task ends.

    ``launcher`` is the resolved ``hydra.launcher`` node (partition, time, memory, cores of a task),
    ``folder`` where submitit keeps the tasks' files and logs. A task that dies answers nothing
    (:func:`src.running.slurm.wait_for` says so on one line, without hanging where the cluster keeps no accounting):
    each of its cells fails with that line, and the pool keeps those whose rows reached the disk first.
    """
    groups = batches(items, expected, BATCH_SECONDS)
    jobs = slurm_executor(launcher, folder).map_array(work_batch, groups)
    logger.info("submitted %s as SLURM array %s: %s of about %.0f min of work each (logs in %s)",
                counted(len(items), "cell"), str(jobs[0].job_id).split("_")[0] if jobs else "-",
                counted(len(jobs), "task"), BATCH_SECONDS / 60, folder)
    ended: queue.Queue = queue.Queue()

    def wait() -> None:  # in a thread: each task's end as it comes; an error in the waiting ends the wait too
        try:
            slurm.wait_for(jobs, poll_seconds, on_end=lambda index, end: ended.put((index, end)))
        except Exception as exc:  # noqa: BLE001 - handed to the pool, which stops with it
            ended.put((None, exc))

    threading.Thread(target=wait, daemon=True).start()
    left = set(range(len(jobs)))
    try:
        while left:
            index, end = ended.get()
            if index is None:
                raise end
            left.discard(index)
            if end.failure is None:
                yield from end.result
            else:
                yield from (Done(item.task, end.failure) for item in groups[index])
    finally:
        for index in left:  # the pool stopped early (an error, an interrupt): its tasks stop too
            jobs[index].cancel(check=False)

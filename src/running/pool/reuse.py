"""Cells another command computed already: copied into the jobs that ask for them, not recomputed.

``make benchmark`` asks for many cells ``make reproduce-all`` has on disk: the same data set, method,
parameters, seed, (k, trial) and every protocol setting the cell reads, which is what
:func:`.jobs.sharing_key` hashes. A cell of a *source* job (a paper's job of the reproduction) is copied into
a job of the pool when the keys are equal and the source's row is valid for the source's own settings and
today's code (:func:`src.running.cells.stale_reason`: the same code fingerprint); a row computed by other code is
never copied. The copy is the source's row under the target job's name and settings, its unlabelled samples'
scores read from the cell's partition for the target's own trial (:func:`src.running.results.rebase_row`: an
unsupervised method's clustering serves every label scheme), so the target's ``results.csv`` reads it like one
of its own, and a re-run of the target finds it on disk.
"""

from __future__ import annotations

from pathlib import Path

from ..results import RunIdentity, load_cell, rebase_row, save_cell
from ..cells import OpenRun, cell_paths, run_identity, stale_reason, trial_of
from ...protocol.cell import LABEL_READOUTS
from .jobs import Job, sharing_keys


def wanted_keys(jobs: list[Job], todo: list[list[tuple[int, int]]]) -> dict[str, list[tuple[int, int, int]]]:
    """The cells still to compute, by sharing key: each key's places as ``(job index, k, trial)``."""
    wanted: dict[str, list[tuple[int, int, int]]] = {}
    for index, (job, cells) in enumerate(zip(jobs, todo)):
        for (k, trial), key in zip(cells, sharing_keys(job.spec, cells)):
            wanted.setdefault(key, []).append((index, k, trial))
    return wanted


def source_rows(sources: list[Job], keys) -> dict[str, tuple[dict, Job, RunIdentity]]:
    """The valid rows on disk of the ``sources`` whose sharing key is among ``keys``: key -> (row, its job,
    the job's identity)."""
    found: dict[str, tuple[dict, Job, RunIdentity]] = {}
    for job in sources:
        identity = None
        paths = cell_paths(job.spec, job.out_dir)
        for ((k, trial), path), key in zip(paths.items(), sharing_keys(job.spec, list(paths))):
            if key not in keys or key in found or not path.is_file():
                continue
            identity = identity or run_identity(job.spec)
            row = load_cell(path)
            if row is not None and stale_reason(row, identity) is None:
                found[key] = (row, job, identity)
    return found


def copy_cells(jobs: list[Job], opened: list[OpenRun], sources: list[Job]) -> dict[tuple[int, int, int], Path]:
    """Copy into the ``opened`` runs of ``jobs`` every cell still to compute that a source job has on disk
    (see the module docstring); each copied row is written to its cell's file and set as the run's stored
    row. Returns the copied places, ``(job index, k, trial)``, with the source's run directory."""
    wanted = wanted_keys(jobs, [run.todo for run in opened])
    copied = {}
    for key, (row, source, identity) in source_rows(sources, wanted).items():
        for index, k, trial in wanted[key]:
            run = opened[index]
            dataset, spec = run.prepared.dataset, jobs[index].spec
            if any(name in LABEL_READOUTS for name in spec.protocol.readouts):
                continue  # read out by its labels from the representation, which no row on disk keeps
            rebased = rebase_row(row, identity, dataset.name, spec.method, run.identity,
                                 trial_of(run.identity, dataset, k, trial, spec.seed))
            save_cell(run.paths[k, trial], rebased)
            run.stored[k, trial] = rebased
            copied[index, k, trial] = source.out_dir
    return copied

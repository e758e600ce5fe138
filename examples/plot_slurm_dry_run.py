"""
A reproduction on SLURM, dry run: the array tasks it would submit
=================================================================

With ``hydra/launcher=submitit_slurm`` a reproduction sends its cells to SLURM as one job array, in tasks
of about five minutes of expected work each (the manual's page "More than one machine"). Its dry run,

.. code-block:: bash

    python -m src.reproduce lcf --dry-run --overrides hydra/launcher=submitit_slurm hydra.launcher.partition=cpu

composes every job of the paper with the launcher's settings, checks them and counts the cells to compute;
it submits nothing and needs no SLURM. This example does the same through the Python API for the LCF
paper, then packs the cells into array tasks as the launcher does, and draws the tasks.
"""

# %%
# The jobs, composed with the SLURM launcher
# ------------------------------------------
# A fresh output folder, so that no cell counts as done. Nothing here needs SLURM: its commands sbatch,
# squeue and srun are needed only to submit.
import tempfile

import matplotlib.pyplot as plt
import numpy as np

from src.running import slurm
from src.data.named import load_named
from src.running.pool import dry_run_summary, plan_jobs, schedule
from src.running.pool.jobs import tasks_of
from src.running.pool.workers import BATCH_SECONDS, batches
from src.reproduction import homes as papers
from src.running.cells import compute_cell, run_cells

slurm.quiet_schema_warning()  # Hydra's notice that the launcher extends the plugin's
lcf = papers.load("lcf")
overrides = ["hydra/launcher=submitit_slurm", "hydra.launcher.partition=cpu",
             f"paths.output_dir={tempfile.mkdtemp()}"]
jobs = plan_jobs([lcf], overrides)
print(dry_run_summary([lcf], jobs))
launcher = jobs[0].launcher
resources = ("partition", "cpus_per_task", "mem_gb", "timeout_min", "array_parallelism")
print({key: launcher[key] for key in resources})
print("SLURM commands missing on this machine:", slurm.missing_commands() or "none")

# %%
# Expected work, then array tasks
# -------------------------------
# The pool expects a cell to take the seconds its row recorded in an earlier run, and scales a size model
# (samples x features x rank) for the others by the cells that have both (``src.running.pool.schedule``). Here one
# cell per method, on Yale at k = 4, is computed first and stands for an earlier run. A cell that two
# jobs share is computed once (``tasks_of``).
stored = [run_cells(job.spec, job.out_dir)[2] for job in jobs]  # cell -> row or None
todo = [[cell for cell, row in rows.items() if row is None] for rows in stored]
tasks = tasks_of(jobs, todo)
data = {name: load_named(name) for name in {job.spec.dataset.name for job in jobs}}
models, recorded, names = [], [], []
for task in tasks:
    place = task.places[0]
    spec = jobs[place.job].spec
    dataset = data[spec.dataset.name]
    n, m = dataset.X.shape
    rank = place.k + spec.protocol.rank_offset
    models.append(schedule.model_seconds(n * place.k / dataset.n_classes, m, rank,
                                         spec.protocol.subruns))
    first = spec.dataset.name == "yale" and place.k == 4 and place.trial == 0
    if first and spec.method.name not in names:
        fit = compute_cell(spec, dataset, place.k, place.trial).chosen
        recorded.append(fit.fit_seconds + fit.kmeans_seconds)
        names.append(spec.method.name)
    else:
        recorded.append(None)
expected = np.array(schedule.expected_seconds(recorded, models))
fresh = schedule.expected_seconds([None] * len(tasks), models)
order = np.argsort(-expected, kind="stable")  # longest first, as the pool hands out
array = batches(list(order), expected.__getitem__, BATCH_SECONDS)
unrecorded = batches(list(order), fresh.__getitem__, BATCH_SECONDS)
print(f"{len(tasks)} cells to compute, {expected.sum():.0f} s of expected work: "
      f"{len(array)} array task(s) (with nothing recorded: {len(unrecorded)})")

# %%
# Left, every cell's expected seconds in the order the pool hands them out (longest first); right, each
# array task's expected seconds, split by method, against the five minutes the launcher aims at.
# ``hydra.launcher.timeout_min`` (here the default, 120 minutes) must leave room above a task's work.
# The model knows sizes, not methods: the cells of one data set and k all expect the same time, whatever
# the method. The count in brackets above packs the same cells with nothing recorded, as on a fresh clone:
# the size model's unit is then taken as a second (``schedule.calibrate`` returns 1.0).
method_of = np.array([jobs[task.places[0].job].spec.method.name for task in tasks])
methods = sorted(set(method_of))
fig, (cells, packed) = plt.subplots(1, 2, figsize=(10, 4), width_ratios=(2, 1))
for name in methods:
    rank = np.flatnonzero(method_of[order] == name)
    cells.scatter(rank, expected[order][rank], s=4, label=name)
    loads = [sum(expected[i] for i in batch if method_of[i] == name) for batch in array]
    below = [sum(expected[i] for i in batch if method_of[i] < name) for batch in array]
    packed.bar(range(len(array)), loads, bottom=below, label=name)
cells.set(yscale="log", xlabel="cell, longest first", ylabel="expected seconds",
          title=f"{len(tasks)} cells of the LCF paper")
cells.legend(markerscale=3, fontsize="small")
packed.axhline(BATCH_SECONDS, color="grey", linestyle="--")
packed.set(xticks=range(len(array)), xlabel="array task", ylabel="expected seconds",
           title=f"{len(array)} SLURM array task(s)")
fig.tight_layout()
plt.show()

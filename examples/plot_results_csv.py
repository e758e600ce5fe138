"""
Reading a run's results.csv: accuracy against k, as the papers draw it
======================================================================

Every run writes ``results.csv`` into its directory: one row per (data set, method, k, trial), with the
scores (``acc``, ``nmi``, fractions), the costs and the settings the row was computed under. After
``make reproduce-cnmf`` they are ``outputs/reproduce/cnmf/runs/<dataset>_<method>/results.csv``; a sweep
of your own puts them in ``outputs/multirun/<date>/<job>/results.csv``. The files of a reproduction are
not there when this page is built, so the example first runs a tiny sweep of the CNMF paper's experiment
into a temporary folder, then reads its files as you would read those of a reproduction.
"""

# %%
# A tiny sweep of the CNMF paper's experiment
# -------------------------------------------
# The paper's settings (``experiment=cnmf``: 10% labelled faces, rank k, KMeans best of 20) on Yale
# only, NMF and CNMF, k = 2, 3, 4 and 3 trials each (the paper: k = 2..10, 10 trials), one job at a time.
# The same command in a shell, from the checkout::
#
#     python -m src.run -m experiment=cnmf dataset=yale method=nmf,cnmf \
#         'protocol.ks=[2,3,4]' protocol.n_trials=3 hydra.sweep.dir=/tmp/runs hydra.launcher.n_jobs=1
import subprocess
import sys
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from src.config_dir import CHECKOUT

runs = Path(tempfile.mkdtemp()) / "runs"
command = [sys.executable, "-m", "src.run", "-m", "experiment=cnmf",
           "dataset=yale", "method=nmf,cnmf", "protocol.ks=[2,3,4]",
           "protocol.n_trials=3", f"hydra.sweep.dir={runs}", "hydra.launcher.n_jobs=1"]
finished = subprocess.run(command, cwd=CHECKOUT, capture_output=True, text=True)
if finished.returncode != 0:
    raise RuntimeError(f"the sweep failed:\n{finished.stderr[-3000:]}")
files = sorted(runs.glob("*/results.csv"))
print(*(path.relative_to(runs).as_posix() for path in files), sep="\n")

# %%
# Read the rows with pandas
# -------------------------
# One file per job (``yale_NMF``, ``yale_CNMF``, named as in a reproduction); concatenated, they are one
# tidy table.
results = pd.concat(pd.read_csv(path) for path in files)
columns = ["dataset", "method", "k", "trial", "n_labelled", "acc", "nmi", "n_iter"]
print(results[columns].to_string(index=False))

# %%
# Accuracy against k
# ------------------
# The mean over the trials of each k with a band of one standard deviation, in percent, as in the
# paper's figures (``python -m src.presentation.report <sweep dir>`` draws the same figure and the tables).
summary = results.groupby(["method", "k"])["acc"].agg(["mean", "std"]).mul(100)
summary = summary.reset_index()
fig, ax = plt.subplots(figsize=(5.5, 4))
for (method, rows), marker in zip(summary.groupby("method"), "os"):
    ax.plot(rows["k"], rows["mean"], marker=marker, label=method)
    low, high = rows["mean"] - rows["std"], rows["mean"] + rows["std"]
    ax.fill_between(rows["k"], low.clip(0, 100), high.clip(0, 100), alpha=0.2)
ax.set(xticks=sorted(summary["k"].unique()), xlabel="number of classes k",
       ylabel="AC (%)", title="Yale, CNMF paper's protocol, 3 trials per k")
ax.legend()
fig.tight_layout()
plt.show()

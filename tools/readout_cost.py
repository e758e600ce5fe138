"""What the readouts by the labels would cost at the tuned settings (issue 69, item 4).

Usage::

    python -m tools.readout_cost [--trials 3] [--seed 0]

``make benchmark`` reads every label-track representation out by the labelled samples (a nearest labelled
neighbour in it and label spreading on it: :data:`src.protocol.cell.LABEL_READOUTS`) at the fixed settings;
the tuned runs leave them out (:data:`src.tuning.homes.TUNED_READOUTS`). This times both readouts on each data
set's own trials at every k (a representation of the cell's shape, n samples x k, seeded) and multiplies the
mean per cell by the tuned cells of the shipped settings file that have a representation (every searched
setting's cell, and for a label method its two folds' cells). It prints one line per (track, data set) and the
total. The readouts' cost depends on the representation's shape, not on its values, so a seeded one stands in
for a fit.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time

import numpy as np
import pandas as pd
from omegaconf import OmegaConf

from src.config_dir import CONF_DIR
from src.methods import estimator_class
from src.protocol.cell import LABEL_READOUTS, clusters_directly, readout_labels
from src.protocol.trials import make_trial
from src.reproduction.shipped import SETTINGS_FILE
from src.data import load_dataset
from src.tuning.selection import FOLDS, takes_labels
from src.tuning.homes import experiment

logger = logging.getLogger("tools.readout_cost")


def cell_seconds(X, y, name: str, labels: dict, trials: int, seed: int) -> float:
    """Mean seconds of both readouts of one cell on data set ``name``, over k = 2..10 and ``trials`` trials."""
    rng = np.random.default_rng(seed)
    spent = []
    for k in range(2, 11):
        for trial in range(trials):
            cell = make_trial(y, name, k, trial, seed, labels)
            representation = rng.random((len(cell.index), k))
            start = time.perf_counter()
            for readout in LABEL_READOUTS:
                readout_labels(readout, representation, None, cell, None)
            spent.append(time.perf_counter() - start)
    return float(np.mean(spent))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.readout_cost", description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=3, help="trials timed per k (default 3)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="[%(levelname)s] %(message)s")
    searched = pd.read_csv(SETTINGS_FILE, usecols=["track", "dataset", "estimator"])
    represented = {e: not clusters_directly(estimator_class(e)) for e in searched["estimator"].unique()}
    rows = searched[searched["track"] != "unsupervised"]
    rows = rows[rows["estimator"].map(represented)]
    mirror = os.environ.get("REPRO_DATA_MIRROR")
    total = 0.0
    for track, by_track in rows.groupby("track"):
        labels = experiment(track)["protocol"]["labels"]
        for dataset, here in by_track.groupby("dataset"):
            config = OmegaConf.to_container(OmegaConf.load(CONF_DIR / "dataset" / f"{dataset}.yaml"), resolve=False)
            config["preprocess"] = "unit_norm"
            data = load_dataset(config, "data", mirror, args.seed)
            per_cell = cell_seconds(data.X, data.y, dataset, labels, args.trials, args.seed)
            cells = len(here) + FOLDS * int(here["estimator"].map(takes_labels).sum())
            total += per_cell * cells
            logger.info("%s %s: %.1f ms a cell x %d tuned cells = %.0f s", track, dataset, 1000 * per_cell, cells,
                        per_cell * cells)
    logger.info("both readouts at every tuned setting and fold of the label tracks: %.0f s of work (%.1f h)", total,
                total / 3600)
    return 0


if __name__ == "__main__":
    sys.exit(main())

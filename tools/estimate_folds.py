"""How the held-out estimate of ``python -m src.cluster`` leans with the folds, on the Yale files of its targets.

Usage::

    python -m tools.estimate_folds [--draws 5] [--method sda] [--readout nearest_labelled]

On each Yale file of :mod:`tools.cluster_targets` (3 known labels a class, draw d from seed d), one candidate
(the shipped prior's, SDA read out by a nearest labelled neighbour, at its default setting) is scored four ways
against the withheld truth (the share of the unknown samples given their right class by its fit told every
known label):

* ``two_of_three``: the same, its fit told two of the three known labels of every class (one dropped at
  random), so the truth a fold's fit could at best reach;
* ``folds_2``: the share right of the held-out known samples over the choosing folds (2, dealt once);
* ``folds_3x2``: the same over the estimate's folds (3, dealt twice);
* ``leave_one_out``: each known sample held out alone, every other label told.

Every fold is dealt as :class:`src.choice.estimator.FamilyChoice` deals its own (stratified by class,
:func:`src.protocol.trials.fold_of`). Prints a row a file and the means.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd

from src.choice.estimator import FamilyChoice, fit_once, fit_task
from src.choice.readouts import classes
from src.data.named import load_named
from src.methods.core.validation import UNLABELLED
from tools.cluster_targets import FILES, draw


def held_out_share(X, y_told, name, params, deals, n_folds, readout, k, seed, restarts) -> float:
    """The share of held-out known samples classed right over every fold of ``deals`` (each known sample's
    fold), each fit told the other folds' labels only (:func:`src.choice.estimator.fit_task`), with ``restarts``
    KMeans runs."""
    right, held_out = 0, 0
    for d, deal in enumerate(deals):
        for fold in range(n_folds):
            got, *_ = fit_task(X, name, params, y_told, deal, fold, n_folds, (readout,), k,
                              np.random.SeedSequence([seed, d, fold]), restarts)
            held = deal == fold
            right += int((got[fold][readout][held] == y_told[held]).sum())
            held_out += int(held.sum())
    return right / held_out


def one_file(X, y, seed: int, name: str, readout: str) -> dict:
    """The four scores and the truth of one drawn file (the module docstring), in percent."""
    told = draw(y, FILES["yale"]["per_class"], seed)
    choice = FamilyChoice(random_state=seed)
    params = {**choice.base_params(name), **dict(choice.grid(name).defaults)}
    k, unknown = choice.clusters_for(told), told < 0
    rng = np.random.default_rng(seed)

    def truth(labels):
        fitted = fit_once(X, name, params, labels, k, np.random.SeedSequence([seed, 99]),
                          choice.kmeans_restarts)
        return 100 * float(np.mean(classes(readout, fitted, labels, k)[0][unknown] == y[unknown]))

    fewer = told.copy()
    for c in np.unique(told[told >= 0]):
        fewer[rng.choice(np.flatnonzero(told == c))] = UNLABELLED
    known = np.flatnonzero(told >= 0)
    alone = np.full_like(told, -1)
    alone[known] = np.arange(known.size)

    def share(deals, n_folds):
        return 100 * held_out_share(X, told, name, params, deals, n_folds, readout, k, seed, choice.kmeans_restarts)

    return {"draw": seed, "truth": truth(told), "two_of_three": truth(fewer),
            "folds_2": share([choice._deal(told, 2, (0, 0))], 2),
            "folds_3x2": share([choice._deal(told, 3, (4, d)) for d in range(2)], 3),
            "leave_one_out": share([alone], known.size)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.estimate_folds", description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=5, help="Yale files (draws), default 5")
    parser.add_argument("--method", default="sda", help="the candidate's method (registry name), default sda")
    parser.add_argument("--readout", default="nearest_labelled", help="its readout, default nearest_labelled")
    args = parser.parse_args(argv)
    data = load_named("yale")  # at unit norm, as the command reads a file
    table = pd.DataFrame([one_file(data.X, data.y, seed, args.method, args.readout) for seed in range(args.draws)])
    print(table.round(1).to_string(index=False))
    print("mean  " + "  ".join(f"{column} {table[column].mean():.1f}" for column in table.columns[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How the held-out estimate of ``python -m src.cluster`` leans with the folds, on files drawn from a data set.

Usage::

    python -m tools.estimate_folds [--data yale] [--per-class 3] [--draws 5] [--method sda]
                                   [--readout nearest_labelled]

On each file of ``--per-class`` known labels a class drawn from a data set (draw d from seed d, as
:mod:`tools.cluster_targets` draws them; Yale with 3 by default, the targets' files), one candidate (by default
the shipped prior's, SDA read out by a nearest labelled neighbour, at its default setting) is scored against the
withheld truth (the share of the unknown samples given their right class by its fit told every known label):

* ``one_fewer``: the same, its fit told all the known labels of every class but one (dropped at random), so
  the truth a fold's fit could at best reach;
* ``folds_2``: the share right of the held-out known samples over the choosing folds (2, dealt once);
* ``folds_3x2``: the same over the estimate's folds (3, dealt twice);
* ``few_3x2``: on the same deals, each fit told one fold's labels only, its share right on the other folds;
* ``extrapolated``: the report's estimate, read off the learning curve through the last two at every label
  (:mod:`src.choice.learning_curve`);
* ``power_law``: another reading of the same two shares, the error falling as a power of the labels told
  (100 - e (e / e_few) ** slope, e the held-out error, e_few the other's; bounded by 100, where the line is
  not);
* ``leave_one_out``: each known sample held out alone, every other label told.

Every fold is dealt as :class:`src.choice.estimator.FamilyChoice` deals its own (stratified by class,
:func:`src.protocol.trials.fold_of`). Prints a row a file and the means.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd

from src.choice import learning_curve
from src.choice.estimator import FamilyChoice, fit_once, fit_task, scored_by
from src.choice.readouts import classes
from src.data.named import load_named
from src.methods.core.validation import UNLABELLED
from tools.cluster_targets import FILES, draw


def held_out(X, y_told, name, params, deals, n_folds, readout, k, seed, restarts, only=False):
    """Each known sample's count of folds of ``deals`` (each known sample's fold) that classed it right, and of
    folds that scored it: each fit told the other folds' labels, or ``only`` its own fold's and scored on the
    others (:func:`src.choice.estimator.fit_task`), with ``restarts`` KMeans runs."""
    right, scored = np.zeros(y_told.size), np.zeros(y_told.size)
    for d, deal in enumerate(deals):
        for fold in range(n_folds):
            got, *_ = fit_task(X, name, params, y_told, deal, fold, n_folds, (readout,), k,
                              np.random.SeedSequence([seed, d, fold, int(only)]), restarts, only)
            held = scored_by(deal, fold, only)
            right += held & (got[fold][readout] == y_told)
            scored += held
    return right, scored


def one_file(X, y, seed: int, name: str, readout: str, per_class: int = FILES["yale"]["per_class"]) -> dict:
    """The scores and the truth of one drawn file (the module docstring), in percent."""
    told = draw(y, per_class, seed)
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

    def counts(deals, n_folds, only=False):
        return held_out(X, told, name, params, deals, n_folds, readout, k, seed, choice.kmeans_restarts, only)

    def share(right, scored):
        return 100 * right.sum() / scored.sum()

    estimate_deals = [choice._deal(told, 3, (4, d)) for d in range(2)]
    many, few = counts(estimate_deals, 3), counts(estimate_deals, 3, only=True)
    scored = many[1] > 0
    error, few_error = 100 - share(*many), 100 - share(*few)
    line = learning_curve.extrapolated(many[0][scored] / many[1][scored], few[0][scored] / few[1][scored], 3)
    return {"draw": seed, "truth": truth(told), "one_fewer": truth(fewer),
            "folds_2": share(*counts([choice._deal(told, 2, (0, 0))], 2)), "folds_3x2": share(*many),
            "few_3x2": share(*few), "extrapolated": 100 * learning_curve.estimate(line)[0],
            "power_law": 100 - error * min(error / few_error, 1.0) ** learning_curve.slope(3) if few_error else 100.0,
            "leave_one_out": share(*counts([alone], known.size))}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.estimate_folds", description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="yale", help="the data set the files are drawn from "
                        "(src.data.named), default yale")
    parser.add_argument("--per-class", type=int, default=FILES["yale"]["per_class"],
                        help="known labels a class, default 3")
    parser.add_argument("--draws", type=int, default=5, help="files (draws), default 5")
    parser.add_argument("--method", default="sda", help="the candidate's method (registry name), default sda")
    parser.add_argument("--readout", default="nearest_labelled", help="its readout, default nearest_labelled")
    args = parser.parse_args(argv)
    data = load_named(args.data)  # at unit norm, as the command reads a file
    table = pd.DataFrame([one_file(data.X, data.y, seed, args.method, args.readout, args.per_class)
                          for seed in range(args.draws)])
    print(table.round(1).to_string(index=False))
    print("mean  " + "  ".join(f"{column} {table[column].mean():.1f}" for column in table.columns[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

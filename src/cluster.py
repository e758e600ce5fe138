"""Your partially labelled data, clustered: the family chooses a method and a setting on the labels you have.

Usage::

    python -m src.cluster mine.npz                     # labels -1 where unknown; writes outputs/cluster/mine/
    python -m src.cluster mine.csv --methods gnmf sda kmeans --repeats 5
    python -m src.cluster mine.mat --set dataset.y_key=labels --out results/mine
    python -m src.cluster mine.npz --method mypkg.mymodule:MyNMF --grid beta=0.1,1,10   # yours among them

The file is read as ``python -m src.benchmark --dataset`` reads one (``.npz``, ``.mat``, ``.csv``; a sample
per row). Every family method at every setting of its grid, with its readouts, and the references are scored by
the classes they give back to held-out known samples; the rule (``src/choice/rule.py``) keeps the prior's
candidate unless another is better by more than the noise of choosing, and the chosen one classes every sample
(``labels.csv``). This module is the recipe: its arguments and one call, :func:`src.choice.your_data.cluster`.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

from .errors import UserError
from .presentation import cluster_report
from .choice import your_data
from .choice.estimator import family_methods


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0])
    parser.add_argument("file", help="your data: .npz, .mat or .csv, a sample per row, integer labels, -1 unknown")
    parser.add_argument("--methods", nargs="+", default=None, choices=family_methods(), metavar="METHOD",
                        help="the candidate methods (default every family method of a label track and the references)")
    parser.add_argument("--folds", type=int, default=2,
                        help="folds of the known labels that choose, stratified by class (default 2, the "
                             "benchmark's, on which the rule's level was chosen)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="deals of the folds that choose, each from its own seed (default 1, the benchmark's)")
    parser.add_argument("--alpha", type=float, default=None,
                        help="the rule's level, in (0, 1] (default: the one the shipped benchmark chose)")
    parser.add_argument("--seed", type=int, default=0, help="the seed every deal and fit is drawn from")
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)),
                        help="fits run at once (default: the cores available); the result does not depend on it")
    parser.add_argument("--set", nargs="+", default=[], metavar="dataset.KEY=VALUE",
                        help="how the file is read (dataset.X_key, dataset.y_key, dataset.label_column, ...)")
    parser.add_argument("--out", default=None, help="the folder to write (default outputs/cluster/<file stem>)")
    parser.add_argument("--dry-run", action="store_true",
                        help="read and check the file, count and price the fits; fit and write nothing")
    outside = parser.add_argument_group("an estimator of yours among the candidates")
    outside.add_argument("--method", nargs="+", default=[], metavar="METHOD",
                         help="outside estimators: package.module:Class or path/to/file.py:Class, through the "
                              "benchmark's gate")
    outside.add_argument("--param", nargs="+", default=[], metavar="NAME=VALUE",
                         help="their constructor parameters (values read as YAML)")
    outside.add_argument("--grid", nargs="+", default=[], metavar="NAME=V1,V2,...",
                         help="their grid: each parameter's values, searched as the family's")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="[%(levelname)s] %(message)s")
    try:
        folder = your_data.cluster(args, cluster_report.write)
    except UserError as exc:
        logging.getLogger(__name__).error("%s", " ".join(str(exc).split()))
        return 2
    if folder is not None:
        logging.getLogger(__name__).info("wrote %s", folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How soon the time left of ``python -m src.cluster`` holds, by the order its fits run in.

Usage::

    python -m tools.fit_orders [--dataset yale] [--orders 200] [--workers 2] [--seed 0]

The targets' first file of the data set (:func:`tools.cluster_targets.draw`, draw 0: Yale with 3 known labels a
class, COIL20 with 14) is chosen on once, as the command chooses, and the seconds of every scoring fit are kept
with its method and stage (the fits that choose, then the estimate's). Those fits are then replayed on
``--workers`` simulated processes: each fit goes to the first process free, and the estimate's start when the
choosing ones have all ended. The replay runs ``--orders`` times in each of two orders:

* ``drawn``: each stage's fits in one order drawn at random (the command's order before the rounds);
* ``rounds``: the order :meth:`src.choice.estimator.FamilyChoice._tasks` gives them, one fit of every method a
  round, the dearest priced first, each method's own fits in a drawn order.

Each replay's time left is the command's own (:class:`src.choice.your_data.FitProgress` on the replay's clock),
told the estimate's fits from the start, as the forecast of them is when the choice keeps its prior. Printed:
for each order, the share of the replays whose time left was within 25% of the time that remained, and the
median error, at 10%, 25% and 50% of the fits. A replay leaves out what a run adds: the processes' overhead
and a fit's seconds changing with the fits beside it.
"""

from __future__ import annotations

import argparse
import logging
import sys

import numpy as np

from src.choice import your_data
from src.choice.estimator import FamilyChoice
from src.data.named import load_named
from src.running.pool.schedule import SHARES, forecast_errors

from .bench.reproduction import list_ends
from .cluster_targets import FILES, TIME_WITHIN, draw

logger = logging.getLogger("tools.fit_orders")


class Recorded(your_data.FitProgress):
    """The command's progress, keeping each fit's method and seconds by stage (a stage ends at ``expect``)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.stages: list[list[tuple[str, float]]] = [[]]

    def expect(self, names):
        self.stages.append([])
        super().expect(names)

    def __call__(self, name, seconds=None):
        self.stages[-1].append((name, self.prices[name] if seconds is None else seconds))
        super().__call__(name, seconds)


def record(dataset: str, workers: int) -> tuple[list[list[tuple[str, float]]], dict[str, float]]:
    """Choose on the targets' draw 0 of ``dataset`` on ``workers`` processes; returns each stage's fits as
    (method, seconds) in the order they ended, and the methods' prices (:func:`src.choice.your_data.priced`)."""
    data = load_named(dataset)  # at unit norm, as the command reads a file
    told = draw(data.y, FILES[dataset]["per_class"], 0)
    mine = your_data.YourData(f"{dataset}_draw0", data.X, told, data.files)
    _, progress = your_data.fit_with_progress(mine, FamilyChoice(n_jobs=workers), Recorded)
    return progress.stages, progress.prices


def ordered(fits: list[tuple[str, float]], how: str, prices: dict[str, float], seed: int) -> list[tuple[str, float]]:
    """One stage's ``fits`` in the order ``how`` (``"drawn"`` or ``"rounds"``, the module docstring), drawn
    from ``seed``."""
    if how == "drawn":
        return [fits[i] for i in np.random.default_rng(seed).permutation(len(fits))]
    setups = [(name, {}, ()) for name, _ in fits]  # a fit of its own each: one task each, in the rounds' order
    return [fits[f] for f, _, _ in FamilyChoice(random_state=seed)._tasks(setups, 1, 1, prices)]


def ends(stages: list[list[tuple[str, float]]], workers: int) -> list[tuple[float, str, float]]:
    """When each fit of ``stages`` (each in the order its fits start) ends on ``workers`` processes, each fit
    to the first one free (:func:`tools.bench.reproduction.list_ends`) and a stage's fits after the stage before
    has ended: (end, method, seconds), by end."""
    found, begin = [], 0.0
    for stage in stages:
        finish = list_ends([seconds for _, seconds in stage], workers, begin)
        found += sorted(((end, name, seconds) for end, (name, seconds) in zip(finish, stage)), key=lambda item: item[0])
        begin = max([begin, *finish])
    return found


def replay(stages, prices: dict[str, float], workers: int) -> list[float]:
    """The time left's error (its forecast over the time that remained, less 1) at each share
    :data:`src.running.pool.schedule.SHARES` of the fits, for ``stages`` run on ``workers`` simulated processes
    (:func:`ends`)."""
    now = [0.0]
    progress = your_data.FitProgress(dict(prices), [name for stage in stages for name, _ in stage], workers,
                                     clock=lambda: now[0])
    for end, name, seconds in ends(stages, workers):
        now[0] = end
        progress(name, seconds)
    return [error["error"] for error in forecast_errors(progress.samples, now[0])]


def summary(errors: dict[str, np.ndarray]) -> list[str]:
    """A markdown table: each order's share of replays within :data:`tools.cluster_targets.TIME_WITHIN`, and
    median error, at each share."""
    lines = ["| order | " + " | ".join(f"within {100 * TIME_WITHIN:g}% at {100 * a:.0f}% of the fits" for a in SHARES)
             + " | median error at " + " / ".join(f"{100 * a:.0f}" for a in SHARES) + "% |",
             "|---|" + "---|" * (len(SHARES) + 1)]
    for how, found in errors.items():
        within = " | ".join(f"{100 * share:.0f}%" for share in (np.abs(found) <= TIME_WITHIN).mean(axis=0))
        median = " / ".join(f"{100 * value:+.0f}%" for value in np.median(found, axis=0))
        lines.append(f"| {how} | {within} | {median} |")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.fit_orders", description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", choices=sorted(FILES), default="yale", help="the targets' file, default yale")
    parser.add_argument("--orders", type=int, default=200, help="replays of each order, default 200")
    parser.add_argument("--workers", type=int, default=2, help="processes, in the run and the replays")
    parser.add_argument("--seed", type=int, default=0, help="the replays' orders are drawn from it")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="[orders %(asctime)s] %(message)s", datefmt="%H:%M:%S")
    stages, prices = record(args.dataset, args.workers)
    logger.info("recorded %s fits (%.0f s of work); replaying each order %d times on %d processes",
                " + ".join(str(len(stage)) for stage in stages), sum(s for stage in stages for _, s in stage),
                args.orders, args.workers)
    logging.getLogger(your_data.__name__).setLevel(logging.WARNING)  # a replay's own progress lines
    seeds = np.random.SeedSequence(args.seed).generate_state(args.orders)
    errors = {how: np.array([replay([ordered(stage, how, prices, int(seed)) for stage in stages], prices,
                                    args.workers) for seed in seeds]) for how in ("drawn", "rounds")}
    print("\n".join(summary(errors)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

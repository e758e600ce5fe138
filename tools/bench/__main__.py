"""Command line of the benchmark (what ``make bench`` and ``make bench-quick`` run).

Usage::

    python -m tools.bench                                  # every target, full sizes (about 30 min on 2 cores)
    python -m tools.bench --quick                          # tiny sizes, few iterations: checks the code (~1 min)
    python -m tools.bench --methods nmf nmf_kl --datasets yale coil20 --out /tmp/bench
    python -m tools.bench --quick --reproduction /elsewhere/outputs/reproduce   # report on another reproduction
    python -m tools.bench --record-only --reproduction outputs/benchmark   # item 1's section alone, on any run's
                                                                          # schedule.csv (no data, no fits)

Writes ``bench.md``, ``bench.csv`` and ``provenance.json`` into ``--out``. Exits 0 when the report was
written, whatever the verdicts; 2 with one line for a bad argument or missing data.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

from src.running import provenance
from src.reproduction import homes as papers
from src.errors import ConfigError, UserError
from . import data as bench_data
from . import report
from .facts import select
from .suite import DATASETS, FULL, QUICK, Bench, cores, describe

logger = logging.getLogger("tools.bench")


def split(values) -> list[str]:
    """Names given as separate arguments and/or comma-separated."""
    return [name for value in values or () for name in value.split(",") if name]


def check_datasets(names: list[str], plan) -> list[str]:
    """The data sets to load, in the report's order (the plan's when none are given)."""
    for name in names:
        if name not in DATASETS:
            raise ConfigError(f"dataset {name!r} is not one of {', '.join(DATASETS)}")
    return [name for name in DATASETS if name in names] if names else list(plan.datasets)


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m tools.bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes and few iterations: checks the code")
    parser.add_argument("--out", type=Path, default=None,
                        help="output folder (default outputs/bench, outputs/bench/quick with --quick)")
    parser.add_argument("--methods", nargs="+", metavar="NAME", help="registered method names (default: all)")
    parser.add_argument("--datasets", nargs="+", metavar="NAME",
                        help=f"data sets from {', '.join(DATASETS)} (default: all; --quick: "
                             f"{', '.join(QUICK.datasets)})")
    parser.add_argument("--cap-factor", type=float, default=None,
                        help=f"stop a fit of item 4 past this many times its limit (default {FULL.cap_factor:g})")
    parser.add_argument("--reproduction", type=Path, default=papers.OUTPUTS, metavar="DIR",
                        help="the outputs of the last make reproduce-all, which item 1 reports on "
                             f"(default {papers.OUTPUTS})")
    parser.add_argument("--record-only", action="store_true",
                        help="only where the run in --reproduction spent its time (work, arithmetic bound, "
                             "schedules), from its schedule.csv: any pool run (make benchmark, --tune) as well; "
                             "no data loaded, nothing fitted")
    return parser


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="[bench %(asctime)s] %(message)s", datefmt="%H:%M:%S")
    plan = QUICK if args.quick else FULL
    if args.cap_factor is not None:
        plan = dataclasses.replace(plan, cap_factor=args.cap_factor)
    out = args.out or Path("outputs") / "bench" / ("quick" if args.quick else "")
    try:
        if plan.cap_factor < 1:
            raise ConfigError(f"--cap-factor={plan.cap_factor} must be at least 1")
        names = select(split(args.methods))
        datasets = [] if args.record_only else check_datasets(split(args.datasets), plan)  # a record needs no data
    except UserError as exc:
        logger.error("%s", exc)
        return 2
    started, clock, load_before = provenance.now(), time.perf_counter(), os.getloadavg()
    try:
        logger.info("loading %s", ", ".join(datasets) or "no data set")
        loaded = {name: bench_data.load(name, plan.sizes.get(name), plan.seed) for name in datasets}
    except UserError as exc:  # missing data, bad mirror: one line, as the other entry points
        logger.error("%s", exc)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".work_", dir=out))
    try:
        bench = Bench(plan, names, loaded, work, outputs=args.reproduction)
        rows = bench.record_only() if args.record_only else bench.run()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    minutes = (time.perf_counter() - clock) / 60
    load_after = os.getloadavg()
    header = {
        "mode": "the run's record only (item 1's section)" if args.record_only else
                "quick (tiny sizes, few iterations)" if plan.quick else "full",
        "run": f"{started} to {provenance.now()} ({minutes:.1f} min)",
        "machine": f"{platform.node()}, {cores()} cores available; load average (1/5/15 min) before "
                   f"{'/'.join(f'{v:.2f}' for v in load_before)}, after {'/'.join(f'{v:.2f}' for v in load_after)} "
                   "(above the number of cores: other work shared the machine, the times are inflated)",
        "threads": f"1 (threadpoolctl.threadpool_limits(1)) and all {cores()} cores; one measurement at a time",
        "methods": ", ".join(names),
        "data sets": ", ".join(data.title for data in loaded.values()),
        "rank": f"k = {plan.rank}; seed {plan.seed}",
        "reproduction": f"`{args.reproduction}`",
        "command": f"`{provenance.command_line()}`",
    }
    record = provenance.collect(started, provenance.now(), extra={"bench": {"plan": describe(plan), **header}})
    markdown, table = report.write(out, rows, header, record)
    logger.info("wrote %s and %s", markdown, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())

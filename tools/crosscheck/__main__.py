"""``python -m tools.crosscheck``: run Deng Cai's reference code in GNU Octave and compare it with ours.

Options: ``--write-fixtures`` (also write tests/fixtures/crosscheck/), ``--out DIR`` (default
outputs/crosscheck), ``--data-dir DIR`` (default data), ``--only NAME`` (repeatable; a case name or part of
it). Exit status: 0 all pairs agree, 1 some pair disagrees, 2 Octave missing or a fetch/data error.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path

from threadpoolctl import threadpool_limits

from src.errors import UserError
from src.files import write_atomic

from . import fixtures
from .cases import Row, all_cases, build_inputs, compare, our_outputs
from .reference import COMMIT, fetch_reference
from .runner import OctaveMissing, octave_executable, run_case

logger = logging.getLogger("tools.crosscheck")


def table(rows: list[Row]) -> str:
    """The comparison as a Markdown table."""
    lines = ["| pair | compared | largest difference | tolerance | result |", "| --- | --- | --- | --- | --- |"]
    for row in rows:
        lines.append(f"| {row.case} | {row.what} | {row.difference:.3g} | {row.tolerance:.0e} | {row.result} |")
    return "\n".join(lines)


def known_differences(rows: list[Row]) -> str:
    """The explanations of the known differences, one bullet each."""
    notes = dict.fromkeys(f"- {row.case} ({row.result}): {row.known or row.note}."
                          for row in rows if row.known or row.note)
    return ("\n\nKnown differences:\n\n" + "\n".join(notes)) if notes else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.crosscheck", description=__doc__.splitlines()[0])
    parser.add_argument("--write-fixtures", action="store_true", help="write tests/fixtures/crosscheck/")
    parser.add_argument("--out", default="outputs/crosscheck", help="directory of crosscheck.md")
    parser.add_argument("--data-dir", default="data", help="project data directory (cache)")
    parser.add_argument("--only", action="append", default=[], help="run only cases whose name contains this")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="[%(levelname)s] %(message)s")
    try:
        octave_executable()
    except OctaveMissing as exc:
        print(f"crosscheck: {exc}", file=sys.stderr)
        return 2
    try:
        reference_root = fetch_reference(args.data_dir)
    except UserError as exc:
        print(f"crosscheck: {exc}", file=sys.stderr)
        return 2
    cases = [c for c in all_cases() if not args.only or any(part in c.name for part in args.only)]
    rows: list[Row] = []
    stored = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="crosscheck-") as tmp, threadpool_limits(1):
        for case in cases:
            try:
                inputs = build_inputs(case, args.data_dir)
                reference = run_case(case, inputs, reference_root, Path(tmp))
            except UserError as exc:
                print(f"crosscheck: {exc}", file=sys.stderr)
                return 2
            ours = our_outputs(case, inputs)
            case_rows = compare(case, ours, reference)
            rows.extend(case_rows)
            for row in case_rows:
                logger.info("%-32s %-48s %.3g %s", row.case, row.what, row.difference, row.result)
            if case.kind == "metrics":
                reference["labels"] = inputs.labels
            stored.append((case, inputs.digest(), reference))
    text = table(rows) + known_differences(rows)
    print(text)
    failed = [row for row in rows if row.result == "FAIL"]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = (f"# Cross-check against Deng Cai's reference code\n\n"
              f"ZJULearning/MatlabFunc at `{COMMIT}`, run in GNU Octave; ours from the same initial factors "
              f"and data (`python -m tools.crosscheck`, {time.perf_counter() - started:.0f} s). Difference: "
              f"max |ours - reference| / max |reference| (AC, NMI: absolute; iterations, chosen start: "
              f"equal or not).\n\n{text}\n\n"
              f"{len(rows) - len(failed)} of {len(rows)} comparisons within tolerance or known.\n")
    write_atomic(out / "crosscheck.md", report)
    print(f"wrote {out / 'crosscheck.md'}")
    if args.write_fixtures:
        if args.only:
            print("crosscheck: --write-fixtures needs every case (no --only)", file=sys.stderr)
            return 2
        for path in fixtures.write(stored):
            print(f"wrote {path} ({path.stat().st_size} bytes)")
    if failed:
        print(f"crosscheck: {len(failed)} of {len(rows)} comparisons outside tolerance", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

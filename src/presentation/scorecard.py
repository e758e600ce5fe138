"""The scorecard over the papers: every published number we have data for, ours beside it, with a verdict.

Usage::

    python -m src.presentation.scorecard [--outputs outputs/reproduce]      # the last step of make reproduce-all

Reads each paper's merged ``results.csv`` (written by :mod:`src.presentation.paper_report`) and its published numbers
(``papers/<paper>/``), never recomputes a table, and writes ``<outputs>/README.md`` with one row per
published number (:mod:`src.presentation.published`): the LCF paper's Tables IV-V cell by cell and their averages, the
FNMF paper's Tables 2-3, Deng Cai's COIL20 demo (the ``cai`` home, a sweep like every other), and the
CNMF, CCF and LCF papers' quoted gains. The tables use the label-free choices of the paper reports
(:func:`src.presentation.paper_report.choose_tuned`).

Each row gives ours and the paper's mean, the difference with its 90% and 95% intervals, the noise-aware
verdict of :mod:`src.presentation.verdicts` (agrees: the 90% interval inside +-5 points; differs: Welch's test of a zero
difference, Holm-adjusted over every number of the scorecard, p < 0.05; can't tell: neither), the old
5-point verdict beside it, and a cause for every number that differs or can't tell: the causes recorded in
the paper's ``published.yaml``, then what the paper's readings did to it (:mod:`src.explain`, read from
``outputs/explain/<paper>/readings.csv`` when ``make explain-<paper>`` has run): each reading tried, its
effect, and which readings (with their labels) bring the number to "agrees". A number that can't tell says
why in words (:func:`src.presentation.verdicts.noise_reason`): mostly the noise, when the 90% interval is wider
than the margin even around a difference of zero. "unknown" remains only for a number that differs where no
reading was run or none changed the verdict.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

import pandas as pd
import yaml

from ..running import provenance
from ..reproduction import homes as papers
from . import published as numbers_of
from ..errors import ConfigError
from ..files import write_atomic
from .paper_report import choose_tuned
from .verdicts import ALPHA, MARGIN, noise_reason

logger = logging.getLogger(__name__)

#: Where ``make explain-<paper>`` writes, beside ``outputs/reproduce``.
EXPLAIN = Path("outputs") / "explain"
READINGS = "readings.csv"


def recorded_cause(published: dict, dataset: str, number: str) -> str | None:
    """The cause recorded in the paper's ``causes`` for a number's data set and method, if any."""
    method = number.split(" ")[0]
    for entry in published.get("causes", []):
        if entry.get("dataset") in (dataset, "*") and entry.get("method") in (method, "*"):
            return f"{entry['cause']} (verified by {entry['verified_by']})" if entry.get("verified_by") \
                else f"{entry['cause']} (not verified)"
    return None


def reading_effects(explain_dir: Path, paper: str) -> pd.DataFrame | None:
    """The paper's readings' effects on its numbers (``readings.csv`` of :mod:`src.explain`), if it ran."""
    path = Path(explain_dir) / paper / READINGS
    return pd.read_csv(path) if path.is_file() else None


def cause_text(row: dict, published: dict, effects: pd.DataFrame | None) -> str:
    """The cause column of a number that differs or can't tell (see the module docstring)."""
    parts = []
    recorded = recorded_cause(published, row["dataset"], row["number"])
    if recorded:
        parts.append(recorded)
    noisy = row["verdict"] == "can't tell" and row.get("comparison") is not None
    if noisy:
        parts.append(noise_reason(row["comparison"]))
    tried = None if effects is None else effects[(effects["key"] == row["key"]) & (effects["verdict"] != "not run")]
    if tried is None or tried.empty:
        parts.append(f"{'readings' if noisy else 'unknown'} (no reading run: make explain-{row['paper']})")
        return "; ".join(parts)
    moved = tried[tried["verdict"] != row["verdict"]]
    fixes = tried[tried["verdict"] == "agrees"]
    touching = tried[pd.to_numeric(tried["effect"], errors="coerce").abs() >= 0.005]
    listed = ", ".join(f"{r['reading']} ({r['label']}) {r['effect']:+.2f} -> {r['verdict']}"
                       for _, r in touching.iterrows())
    if not fixes.empty:
        parts.append("agrees under: " + ", ".join(f"{r['reading']} ({r['label']})" for _, r in fixes.iterrows()))
    elif moved.empty and not noisy:
        parts.append("unknown (no reading changes its verdict)")
    untouched = len(tried) - len(touching)
    parts.append(f"readings tried: {listed or 'none moves it'}"
                 + (f" ({untouched} other(s) leave it unchanged)" if untouched and listed else ""))
    return "; ".join(parts)


def cause_kind(cause: str) -> str:
    """The cause of a number in one word group, for the scorecard's counts: "a reading brings it back",
    "noise", "near the margin", "unknown", "readings move it", or "" for a number that agrees."""
    if not cause:
        return ""
    for marker, kind in (("agrees under:", "a reading brings it back"), ("the noise:", "noise"),
                         ("a gap near the margin", "near the margin"), ("unknown", "unknown")):
        if marker in cause:
            return kind
    return "readings move it"


def fmt(value, signed: bool = False) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "n/a"
    return f"{value:+.2f}" if signed else f"{value:.2f}"


def counts_lines(rows: list[dict]) -> list[str]:
    """The verdict counts per kind of number, beside the old 5-point counts."""
    new, old = numbers_of.counts(rows), numbers_of.counts(rows, "old verdict")
    lines = ["| kind of number | numbers | agrees | differs | can't tell | not run | old rule |", "|---" * 7 + "|"]
    cant = "can't tell"
    for kind, tally in new.items():
        before = ", ".join(f"{v} {n}" for v, n in old[kind].items())
        lines.append(f"| {kind} | {sum(tally.values())} | {tally.get('agrees', 0)} | {tally.get('differs', 0)} | "
                     f"{tally.get(cant, 0)} | {tally.get('not run', 0)} | {before} |")
    return lines


RULE = (f"**Verdicts.** For each number, d = ours - paper with its 90% and 95% confidence intervals (Welch: both "
        "standard deviations and both trial counts where the paper prints them; where it prints none, our "
        "trials' deviation for both sides). **agrees**: the 90% interval lies inside +-{m:.0f} points (an "
        "equivalence test, TOST at {a}; it takes precedence). **differs**: Welch's test of d = 0, Holm-adjusted "
        "over all {{n}} numbers of this scorecard, has p < {a}. **can't tell**: neither; the noise of the trials "
        "is too large to say. An average over k uses all of its trials: its standard error is that of the mean of "
        "the per-k means (k is fixed by design, so the fall of accuracy with k is no noise). The old rule (within "
        "{m:.0f} points; for quoted gains a one-sided paired Wilcoxon test, Holm-adjusted) is kept beside it."
        ).format(m=MARGIN, a=ALPHA)


def build(outputs: Path = papers.OUTPUTS, home: Path = papers.HOME, explain: Path = EXPLAIN) -> Path:
    """Write ``outputs/README.md`` from the papers' merged results; returns its path."""
    started = provenance.now()
    rows, read, published_of, effects = [], [], {}, {}
    for name in papers.names(home):
        paper = papers.load(name, home)
        merged = Path(outputs) / name / "results.csv"
        if not merged.is_file():
            logger.warning("%s has no %s (run make reproduce-%s); its numbers are left out", name, merged, name)
            continue
        published = yaml.safe_load(paper.published.read_text())
        frame, _ = choose_tuned(pd.read_csv(merged), published.get("families", {}))
        tables = pd.read_csv(paper.tables) if paper.tables.is_file() else None
        rows += numbers_of.numbers(name, frame, published, tables)
        published_of[name], effects[name] = published, reading_effects(explain, name)
        read.append(merged)
    numbers_of.judge(rows)
    for row in rows:
        row["cause"] = "" if row["verdict"] in ("agrees", "not run") else \
            cause_text(row, published_of[row["paper"]], effects[row["paper"]])
    for row in rows:
        row["cause kind"] = cause_kind(row["cause"])
    kinds = pd.Series([row["cause kind"] for row in rows if row["cause kind"]]).value_counts()
    compared = sum(row["comparison"] is not None for row in rows)
    lines = ["# Scorecard: every published number we have data for, beside ours", "",
             f"Built by `{provenance.command_line()}` from {len(read)} papers' merged results "
             f"({', '.join(str(p) for p in read)}); tables use label-free choices only (tuned families stand by "
             "the paper's or the reference code's value; sub-runs are the reference multi-start by objective).",
             "", RULE.format(n=compared), "", *counts_lines(rows), "",
             "The cause of a number that differs or can't tell names each reading of its paper that was run "
             "(`make explain-<paper>`, labels: text, reference-code, alternative, oracle), its effect on ours "
             "and its verdict; a reading never replaces the primary number. A number that can't tell says "
             "why: most often the noise (its 90% interval is wider than +-5 points even around a difference of "
             "zero, so no test with these trials could call it equal); \"unknown\" stays only where a "
             "difference is real and no reading moves it.", "",
             "Causes of the numbers that differ or can't tell: "
             + (", ".join(f"{kind} {count}" for kind, count in kinds.items()) or "none") + ".", ""]
    for kind in numbers_of.KINDS:
        chosen = [row for row in rows if row["kind"] == kind]
        if not chosen:
            continue
        lines += [f"## {kind[0].upper() + kind[1:]}s", "",
                  "| paper | data set | number | paper | ours | difference | 90% interval | 95% interval | "
                  "p (Holm) | verdict | old rule | cause |", "|---" * 12 + "|"]
        for r in chosen:
            p = "n/a" if r["p_holm"] is None else f"{r['p_holm']:.2g}"
            lines.append(f"| {r['paper']} | {r['dataset']} | {r['number']} | {fmt(r['paper value'])} | "
                         f"{fmt(r['ours'])} | {fmt(r['difference'], signed=True)} | {numbers_of.interval(r)} | "
                         f"{numbers_of.interval(r, 'ci95')} | {p} | {r['verdict']} | {r['old verdict']} | "
                         f"{r['cause']} |")
        lines.append("")
    runs = [provenance.read(p.parent / provenance.FILE) for p in read]
    record = provenance.collect(started, provenance.now(), extra={"sources": [str(p) for p in read]})
    lines += provenance.markdown(record, [r for r in runs if r is not None])
    path = Path(outputs) / "README.md"
    write_atomic(path, "\n".join(lines) + "\n")
    table = pd.DataFrame([{key: value for key, value in row.items() if key not in ("comparison", "wilcoxon")}
                          for row in rows])
    write_atomic(Path(outputs) / "scorecard.csv", table.to_csv(index=False))
    provenance.write(Path(outputs), {**record, "runs": [r for r in runs if r is not None]})
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0])
    parser.add_argument("--outputs", default=str(papers.OUTPUTS), help="the reproduce outputs directory")
    parser.add_argument("--explain", default=str(EXPLAIN), help="the explain outputs directory (readings' effects)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="[%(levelname)s] %(message)s")
    try:
        logger.info("wrote %s", build(Path(args.outputs), explain=Path(args.explain)))
    except ConfigError as exc:
        logger.error("%s", exc)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

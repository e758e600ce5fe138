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
5-point verdict beside it, and for every number that differs or can't tell its cause in a few words
(:func:`cause_text`: the readings that bring it to "agrees", the noise, the cause recorded in the paper's
``published.yaml``, a gap near the margin, the reading that moves it furthest, or "unknown"), read from what the
paper's readings did to it (:mod:`src.explain`, ``outputs/explain/<paper>/readings.csv`` when ``make
explain-<paper>`` has run). The full reasoning (:func:`cause_detail`: each reading tried, its effect and
verdict, and why a number can't tell, :func:`src.presentation.verdicts.noise_reason`) is folded under each table.

Beside the page, ``<outputs>/scorecard.csv`` holds one row per number with every interval and p-value as a
numeric column (:func:`src.presentation.published.table`), the short cause, its kind, the full reasoning
(``cause detail``), the readings that bring it back (``brought back by``) and, per reading run on it, its
label, effect and verdict (``reading:<name> label``, ``reading:<name> effect``, ``reading:<name> verdict``).
The figures of the verdicts (``src.presentation.verdict_figures``) are drawn from the same rows: every
published number against ours (``<outputs>/published_vs_ours.png``, at the top of the page and on the front
page) and each paper's forest plot (``<outputs>/<paper>/forest.png``, and ``outputs/explain/<paper>/forest.png``
with the readings that bring a number back), so that the figures a paper's reports show carry the verdicts of
the scorecard once it is built.
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
import textwrap
from pathlib import Path

import pandas as pd
import yaml

from ..running import provenance
from ..reproduction import homes as papers
from . import published as numbers_of
from ..errors import ConfigError
from ..files import write_atomic
from .paper_report import judged_numbers
from .verdict_figures import (FOREST, FRONT, VERDICTS, forest_title, plot_forest, plot_published_vs_ours,
                              published_vs_ours_alt, readings_text)
from .verdicts import (ALPHA, MARGIN, NO_VERDICT, TOO_FEW_TRIALS, best_case_half_width, noise_reason,
                       single_trial_notes)

logger = logging.getLogger(__name__)

#: Where ``make explain-<paper>`` writes, beside ``outputs/reproduce``.
EXPLAIN = Path("outputs") / "explain"
READINGS = "readings.csv"


def recorded_cause(published: dict, dataset: str, number: str) -> str | None:
    """The cause recorded in the paper's ``causes`` for a number's data set and method, if any."""
    entry = recorded_entry(published, dataset, number)
    if entry is None:
        return None
    return f"{entry['cause']} (verified by {entry['verified_by']})" if entry.get("verified_by") \
        else f"{entry['cause']} (not verified)"


def recorded_entry(published: dict, dataset: str, number: str) -> dict | None:
    """The entry of the paper's ``causes`` that covers a number's data set and method, if any."""
    method = number.split(" ")[0]
    for entry in published.get("causes", []):
        if entry.get("dataset") in (dataset, "*") and entry.get("method") in (method, "*"):
            return entry
    return None


def reading_effects(explain_dir: Path, paper: str) -> pd.DataFrame | None:
    """The paper's readings' effects on its numbers (``readings.csv`` of :mod:`src.explain`), if it ran."""
    path = Path(explain_dir) / paper / READINGS
    return pd.read_csv(path) if path.is_file() else None


def readings_tried(row: dict, effects: pd.DataFrame | None) -> pd.DataFrame:
    """The readings run on one number (``readings.csv`` rows of its key, "not run" left out)."""
    if effects is None:
        return pd.DataFrame(columns=["key", "reading", "label", "effect", "verdict"])
    return effects[(effects["key"] == row["key"]) & (effects["verdict"] != "not run")]


def readings_back(row: dict, effects: pd.DataFrame | None) -> pd.DataFrame:
    """The readings under which a number that does not agree agrees (none for a number that agrees)."""
    tried = readings_tried(row, effects)
    return tried[tried["verdict"] == "agrees"] if row["verdict"] != "agrees" else tried.iloc[:0]


def cause_detail(row: dict, published: dict, effects: pd.DataFrame | None) -> str:
    """The full reasoning behind a number that differs or can't tell, in words: the cause recorded in the
    paper's ``published.yaml``, why it can't tell (the noise, or a gap near the margin), which readings bring
    it to "agrees", and every reading tried with its effect and verdict. ``scorecard.csv`` keeps it in its
    ``cause detail`` column and the scorecard page folds it under each table; :func:`cause_text` says it in a
    few words."""
    parts = []
    recorded = recorded_cause(published, row["dataset"], row["number"])
    if recorded:
        parts.append(recorded)
    noisy = row["verdict"] == "can't tell" and row.get("comparison") is not None
    if noisy:
        parts.append(noise_reason(row["comparison"]))
    tried = readings_tried(row, effects)
    if tried.empty:
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


#: The longest cause in the scorecard's table; the rest of the reasoning is in :func:`cause_detail`.
SHORT_CAUSE = 100
#: The kinds of cause (:func:`cause_kind`), each with the start of its short text (:func:`cause_text`).
KIND_STARTS = (("noise:", "noise"), ("known:", "known cause"), ("near the margin:", "near the margin"),
               ("readings move it:", "readings move it"), ("unknown", "unknown"))
BACK = "a reading brings it back"


def _brought_back(back: pd.DataFrame) -> str:
    """The short cause of a number that a reading brings back: the label-free readings first."""
    free = back[back["label"] != "oracle"]
    if free.empty:
        return "only an oracle brings it back: " + readings_text(back, SHORT_CAUSE - 31)
    verb = "brings" if free["reading"].nunique() == 1 else "bring"
    return f"{readings_text(free, SHORT_CAUSE - 16)} {verb} it back"


def cause_text(row: dict, published: dict, effects: pd.DataFrame | None) -> str:
    """The cause of a number that differs or can't tell in a few words (at most about :data:`SHORT_CAUSE`
    characters), for the scorecard's table; the full reasoning is :func:`cause_detail`.

    The first that applies: the readings that bring it to "agrees" ("argmax (alternative) brings it back",
    "only an oracle brings it back: ..."); the noise of a number that can't tell ("noise: 90% interval
    +-9.8"); the cause recorded in the paper's ``published.yaml`` ("known: ..."); a gap near the margin
    ("near the margin: +5.3 +-4.0"); the reading that moves its verdict furthest ("readings move it:
    tight_stopping -3.1 (to can't tell)"); else "unknown", saying whether any reading was run.
    """
    tried = readings_tried(row, effects)
    back = readings_back(row, effects)
    if not back.empty:
        return _brought_back(back)
    comparison = row.get("comparison")
    half = None if comparison is None else best_case_half_width(comparison)
    if row["verdict"] == "can't tell" and half is not None and half >= MARGIN:
        return f"noise: 90% interval +-{half:.1f}"
    entry = recorded_entry(published, row["dataset"], row["number"])
    if entry:
        clause = re.split(r"[:;,(]", entry["cause"])[0].strip()
        verified = " (verified)" if entry.get("verified_by") else ""
        clause = textwrap.shorten(clause, SHORT_CAUSE - len("known: ") - len(verified), placeholder="...")
        return f"known: {clause}{verified}"
    if row["verdict"] == "can't tell" and half is not None:
        return f"near the margin: {comparison.difference:+.1f} +-{half:.1f}"
    moved = tried[tried["verdict"] != row["verdict"]]
    if not moved.empty:
        size = pd.to_numeric(moved["effect"], errors="coerce").abs()
        top = moved.loc[size.idxmax()] if size.notna().any() else moved.iloc[0]
        return f"readings move it: {top['reading']} {float(top['effect']):+.1f} (to {top['verdict']})"
    if tried.empty:
        return f"unknown: no reading run (make explain-{row['paper']})"
    return "unknown: no reading changes its verdict"


def cause_kind(cause: str) -> str:
    """The kind of a short cause (:func:`cause_text`), for the scorecard's counts: "a reading brings it back",
    "noise", "known cause", "near the margin", "readings move it", "unknown", or "" for a number that agrees."""
    if not cause:
        return ""
    for start, kind in KIND_STARTS:
        if cause.startswith(start):
            return kind
    return BACK if "it back" in cause else "unknown"


def reading_columns(row: dict, effects: pd.DataFrame | None) -> dict:
    """Each reading run on a number as three columns of ``scorecard.csv``: ``reading:<name> label``,
    ``reading:<name> effect`` (on ours, points) and ``reading:<name> verdict``."""
    columns = {}
    for _, reading in readings_tried(row, effects).iterrows():
        name = f"reading:{reading['reading']}"
        columns.update({f"{name} label": reading["label"],
                        f"{name} effect": pd.to_numeric(reading["effect"], errors="coerce"),
                        f"{name} verdict": reading["verdict"]})
    return columns


def explain_row(row: dict, published: dict, effects: pd.DataFrame | None) -> None:
    """Give a judged row its causes, in place: ``cause`` (a few words), ``cause kind``, ``cause detail`` (the
    full reasoning), ``recorded cause``, ``brought back by`` (the readings under which it agrees, "name
    (label)" joined by "; "), ``readings tried`` (how many were run on it) and the reading columns
    (:func:`reading_columns`). A number that agrees or was not run has no cause."""
    explained = row["verdict"] not in ("agrees", *NO_VERDICT)
    back = readings_back(row, effects)
    row["cause"] = cause_text(row, published, effects) if explained else ""
    row["cause kind"] = cause_kind(row["cause"])
    row["cause detail"] = cause_detail(row, published, effects) if explained else ""
    row["recorded cause"] = recorded_cause(published, row["dataset"], row["number"]) or ""
    row["brought back by"] = "; ".join(f"{r['reading']} ({r['label']})" for _, r in back.iterrows())
    row["readings tried"] = len(readings_tried(row, effects))
    row.update(reading_columns(row, effects))


def fmt(value, signed: bool = False) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "n/a"
    return f"{value:+.2f}" if signed else f"{value:.2f}"


def counts_lines(rows: list[dict]) -> list[str]:
    """The verdict counts per kind of number, beside the old 5-point counts."""
    new, old = numbers_of.counts(rows), numbers_of.counts(rows, "old verdict")
    few = any(TOO_FEW_TRIALS in tally for tally in new.values())
    lines = ["| kind of number | numbers | agrees | differs | can't tell | not run |"
             + (f" {TOO_FEW_TRIALS} |" if few else "") + " old rule |", "|---" * (8 if few else 7) + "|"]
    cant = "can't tell"
    for kind, tally in new.items():
        before = ", ".join(f"{v} {n}" for v, n in old[kind].items())
        lines.append(f"| {kind} | {sum(tally.values())} | {tally.get('agrees', 0)} | {tally.get('differs', 0)} | "
                     f"{tally.get(cant, 0)} | {tally.get('not run', 0)} |"
                     + (f" {tally.get(TOO_FEW_TRIALS, 0)} |" if few else "") + f" {before} |")
    return lines


RULE = ("**Verdicts.** For each number, d = ours - paper with its 90% and 95% confidence intervals (Welch: both "
        "standard deviations and both trial counts where the paper prints them; where it prints none, our "
        "trials' deviation for both sides). **agrees**: the 90% interval lies inside +-{m:.0f} points (an "
        "equivalence test, TOST at {a}; it takes precedence). **differs**: Welch's test of d = 0, Holm-adjusted "
        "over all {{n}} numbers of this scorecard, has p < {a}. **can't tell**: neither; the noise of the trials "
        "is too large to say. An average over k uses all of its trials: its standard error is that of the mean of "
        "the per-k means (k is fixed by design, so the fall of accuracy with k is no noise). The old rule (within "
        "{m:.0f} points; for quoted gains a one-sided paired Wilcoxon test, Holm-adjusted) is kept beside it."
        ).format(m=MARGIN, a=ALPHA)


def merged_results(outputs: Path, home: Path) -> dict[str, Path]:
    """Each paper's merged ``results.csv`` in ``outputs`` (a paper without one is left out, with a warning)."""
    found = {}
    for name in papers.names(home):
        merged = Path(outputs) / name / "results.csv"
        if merged.is_file():
            found[name] = merged
        else:
            logger.warning("%s has no %s (run make reproduce-%s); its numbers are left out", name, merged, name)
    return found


def number_lines(rows: list[dict]) -> list[str]:
    """One table per kind of number, with the short causes, each followed by the full reasoning folded."""
    lines = []
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
        explained = [r for r in chosen if r["cause detail"]]
        if explained:
            lines += ["", f"<details><summary>Why, number by number: the full cause of the {len(explained)} "
                          f"{kind}s that differ or can't tell (the noise, every reading tried, its effect and "
                          "verdict)</summary>", ""]
            lines += [f"- **{r['paper']}, {r['key']}** ({r['verdict']}): {r['cause detail']}" for r in explained]
            lines += ["", "</details>"]
        lines.append("")
    return lines


def draw_figures(table: pd.DataFrame, outputs: Path, explain: Path, effects: dict) -> Path:
    """The scorecard's figures, from its table (:func:`src.presentation.published.table`): every published number against ours (``outputs``/
    ``published_vs_ours.png``) and each paper's forest plot (``outputs/<paper>/forest.png``; with the readings
    that bring a number back, ``explain/<paper>/forest.png`` when the paper's readings have run). Returns the
    path of the first."""
    front = Path(outputs) / FRONT
    plot_published_vs_ours(table, front)
    compared = int(table["verdict"].isin(VERDICTS).sum())
    for paper, mine in table.groupby("paper", sort=False):
        title = forest_title(paper, compared)
        plot_forest(mine, Path(outputs) / paper / FOREST, title=title)
        if effects.get(paper) is not None:
            plot_forest(mine, Path(explain) / paper / FOREST, effects[paper], title)
    return front


def build(outputs: Path = papers.OUTPUTS, home: Path = papers.HOME, explain: Path = EXPLAIN) -> Path:
    """Write ``outputs/README.md`` and ``outputs/scorecard.csv`` from the papers' merged results, and the
    figures of the verdicts (:func:`draw_figures`); returns the README's path."""
    started = provenance.now()
    read = merged_results(outputs, home)
    rows = judged_numbers(read, home)
    published_of = {name: yaml.safe_load(papers.load(name, home).published.read_text()) for name in read}
    effects = {name: reading_effects(explain, name) for name in read}
    for row in rows:
        explain_row(row, published_of[row["paper"]], effects[row["paper"]])
    table = numbers_of.table(rows)
    front = draw_figures(table, outputs, explain, effects)
    kinds = pd.Series([row["cause kind"] for row in rows if row["cause kind"]]).value_counts()
    notes = []  # the papers run with one trial: their numbers, but no verdict
    for note, names in single_trial_notes({name: pd.read_csv(path) for name, path in read.items()}).items():
        logger.warning("scorecard: %s: %s", ", ".join(names), note)
        notes += [f"**{', '.join(names)}: {note}**", ""]
    lines = ["# Scorecard: every published number we have data for, beside ours", "", *notes,
             f"![{published_vs_ours_alt(table)}]({front.name})", "", *counts_lines(rows), "",
             "Causes of the numbers that differ or can't tell: "
             + (", ".join(f"{kind} {count}" for kind, count in kinds.items()) or "none") + ".", "",
             f"Built by `{provenance.command_line()}` from {len(read)} papers' merged results "
             f"({', '.join(str(p) for p in read.values())}); tables use label-free choices only (tuned families "
             "stand by the paper's or the reference code's value; sub-runs are the reference multi-start by "
             "objective).", "", RULE.format(n=int(table["verdict"].isin(VERDICTS).sum())), "",
             "The cause of a number that differs or can't tell says in a few words why: the readings of its paper "
             "(`make explain-<paper>`, labels: text, reference-code, alternative, oracle) that bring it to "
             "\"agrees\" (a reading never replaces the primary number), the noise (its 90% interval is wider "
             "than +-5 points even around a difference of zero, so no test with these trials could call it "
             "equal), a cause the paper's home records, a gap near the margin, or the reading that moves it "
             "furthest; \"unknown\" stays only where a difference is real and no reading moves it. The full "
             "reasoning of each number is folded under its table, and `scorecard.csv` beside this page holds every interval, "
             "p-value and reading's effect as columns.", ""]
    lines += number_lines(rows)
    runs = [provenance.read(p.parent / provenance.FILE) for p in read.values()]
    record = provenance.collect(started, provenance.now(), extra={"sources": [str(p) for p in read.values()]})
    lines += provenance.markdown(record, [r for r in runs if r is not None])
    path = Path(outputs) / "README.md"
    write_atomic(path, "\n".join(lines) + "\n")
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

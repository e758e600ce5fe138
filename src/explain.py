"""Explain a paper's numbers: run each of its readings and measure what it does to every published number.

Usage::

    python -m src.explain PAPER [PAPER ...]      # what `make explain-<paper>` runs (after make reproduce-<paper>)
    python -m src.explain all                    # every paper with readings, then the scorecard again
    python -m src.explain lcf --dry-run          # print the sweeps only

A paper's *readings* (``papers/<paper>/readings.yaml``) are the defensible choices where its text is
silent or ambiguous, each with its source and a label: ``text`` (the paper says so), ``reference-code``
(Deng Cai's code does so), ``alternative`` (an equally defensible reading of a silent text) or ``oracle``
(uses the test labels; a diagnostic, never a result). The primary reading, the one in the paper's tables
and the scorecard, was fixed by text and reference code before any number was seen and stays; a reading
that brings a table back is a finding to report, not a setting to adopt.

A reading is computed in one of four ways, all on the primary run's trials (same seed, so the same
classes, labels and initial factors: every comparison is paired):

* ``readout``: another cluster assignment of the primary fits (``acc_<readout>``, ``nmi_<readout>``,
  recorded by every cell, :data:`src.protocol.cell.READOUTS`); methods without that readout keep their numbers;
* ``family_value``: a tuned family stood in by another value of the grid that already ran;
* ``oracle_per_k``: per data set and k, the grid value of a family with the best mean accuracy;
* ``sweeps``: new fits, each sweep a list of Hydra overrides added to the paper's experiment, written to
  ``outputs/explain/<paper>/<reading>/runs`` (resumable like every sweep); their rows replace the primary
  rows of the same data set, method, k and trial, or add new ones (other k).

For each reading the paper's numbers are compared with the published ones as the scorecard does
(:mod:`src.presentation.published`); Holm's adjustment runs over the paper's numbers under that reading, and the primary
run is judged the same way here so that the two are comparable. Writes ``outputs/explain/<paper>/report.md``
and ``readings.csv`` (one row per number and reading: the effect on ours and the verdict), which the
scorecard's cause column reads, and ``wall_seconds.txt``. ``all`` rebuilds the scorecard at the end.
"""

from __future__ import annotations

import argparse
import json
import logging
import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import yaml

from . import provenance
from .presentation import papers, published as numbers_of, scorecard
from .errors import ConfigError, UserError
from .files import write_atomic
from .presentation.paper_report import choose_tuned, family_spec
from .presentation.papers import Paper
from .protocol.cell import READOUTS
from .reproduce import WALL
from .steps import ONE_WORKER, StepFailed, python_module, run_steps
from .sweep import usable_cores
from .results import MixedResultsError, find_results, read_results
from .presentation.scorecard import fmt
from .presentation.verdicts import MARGIN

logger = logging.getLogger(__name__)

FILE = "readings.yaml"
OUTPUTS = Path("outputs") / "explain"
LABELS = ("text", "reference-code", "alternative", "oracle")
HOW = ("readout", "family_value", "oracle_per_k", "sweeps")
KEYS = ("question", "label", "source", "quote", "note", *HOW)
SHORT = {"agrees": "A", "differs": "D", "can't tell": "?", "not run": "-"}
CELL_KEY = ["dataset", "method", "k", "trial"]


@dataclass(frozen=True)
class Reading:
    """One reading of a paper, as declared in its ``readings.yaml`` (see the module docstring)."""

    name: str
    question: str
    label: str
    source: str
    quote: str | None = None
    note: str | None = None
    readout: str | None = None
    family_value: dict | None = None
    oracle_per_k: dict | None = None
    sweeps: tuple[tuple[str, ...], ...] = field(default_factory=tuple)

    def how(self) -> str:
        """How the reading is computed, in words."""
        parts = []
        if self.readout:
            parts.append(f"readout {self.readout} of the primary fits")
        if self.family_value:
            parts.append(f"{self.family_value['family']} at {self.family_value['value']} (grid already run)")
        if self.sweeps:
            parts.append(f"{len(self.sweeps)} sweep(s) of new fits: "
                         + "; ".join(" ".join(sweep) for sweep in self.sweeps))
        if self.oracle_per_k:
            parts.append(f"{self.oracle_per_k['family']}'s {self.oracle_per_k['param']} chosen per k by mean "
                         "accuracy")
        return ", then ".join(parts)


def load_readings(paper: Paper) -> tuple[str, list[Reading]]:
    """The primary reading's description and the readings of ``paper``; one-line ConfigError on a bad file."""
    path = paper.home / FILE
    if not path.is_file():
        return "", []
    try:
        spec = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {' '.join(str(exc).split())}") from None
    readings = []
    for name, entry in (spec.get("readings") or {}).items():
        where = f"{path}: reading {name}"
        if not isinstance(entry, dict) or set(entry) - set(KEYS):
            raise ConfigError(f"{where} must be a mapping with keys among {', '.join(KEYS)}")
        if entry.get("label") not in LABELS:
            raise ConfigError(f"{where}: label={entry.get('label')!r} is not one of {', '.join(LABELS)}")
        if not entry.get("source") or not entry.get("question"):
            raise ConfigError(f"{where} needs a question and a source")
        if not any(entry.get(how) for how in HOW):
            raise ConfigError(f"{where} says neither of {', '.join(HOW)}: nothing to compute")
        if entry.get("readout") and entry["readout"] not in READOUTS:
            raise ConfigError(f"{where}: readout={entry['readout']!r} is not one of {', '.join(READOUTS)}")
        if entry.get("oracle_per_k") and entry["label"] != "oracle":
            raise ConfigError(f"{where} chooses on the test labels (oracle_per_k) but is labelled {entry['label']!r}")
        sweeps = entry.get("sweeps") or []
        if not isinstance(sweeps, list) or not all(isinstance(s, list) and s for s in sweeps):
            raise ConfigError(f"{where}: sweeps must be a list of non-empty lists of Hydra overrides")
        readings.append(Reading(name=name, question=entry["question"], label=entry["label"], source=entry["source"],
                                quote=entry.get("quote"), note=entry.get("note"), readout=entry.get("readout"),
                                family_value=entry.get("family_value"), oracle_per_k=entry.get("oracle_per_k"),
                                sweeps=tuple(tuple(str(o) for o in sweep) for sweep in sweeps)))
    return spec.get("primary", ""), readings


DONE = "sweeps_done.json"


class NotRun(UserError):
    """A reading whose sweeps have not all finished (no ``sweeps_done.json`` for its current sweeps)."""


def runs_dir(out: Path, reading: Reading) -> Path:
    return Path(out) / reading.name / "runs"


def mark_done(out: Path, reading: Reading, seconds: float) -> None:
    """Record that every sweep of ``reading`` finished: the sweeps themselves (a changed list is not done) and
    the wall seconds of this run of them (cells reused from an earlier run cost nothing)."""
    record = {"sweeps": [list(sweep) for sweep in reading.sweeps], "seconds": round(seconds, 1)}
    write_atomic(Path(out) / reading.name / DONE, json.dumps(record) + "\n")


def done_record(out: Path, reading: Reading) -> dict | None:
    """The record of :func:`mark_done` if it is there and for the reading's current sweeps, else None."""
    path = Path(out) / reading.name / DONE
    if not path.is_file():
        return None
    record = json.loads(path.read_text())
    return record if record.get("sweeps") == [list(sweep) for sweep in reading.sweeps] else None


def sweep_commands(paper: Paper, reading: Reading, out: Path) -> list[list[str]]:
    """The processes that fit a reading's sweeps: the paper's experiment, the sweep's overrides and a directory
    of its own (``runs/<i>``: two sweeps of one reading may run at the same time, each counting its own jobs)."""
    directory = runs_dir(out, reading)
    return [python_module("run", "-m", paper.experiment, *sweep, f"hydra.sweep.dir={directory / str(i)}")
            for i, sweep in enumerate(reading.sweeps, 1)]


def primary_frame(paper: Paper, outputs: Path) -> pd.DataFrame:
    """The primary run's merged rows (``outputs/reproduce/<paper>/results.csv``); one line if missing."""
    merged = paper.out(outputs) / "results.csv"
    if not merged.is_file():
        raise UserError(f"{merged} does not exist: run make reproduce-{paper.name} first (the readings are paired "
                        "with its trials)")
    return pd.read_csv(merged)


def with_readout(frame: pd.DataFrame, readout: str) -> pd.DataFrame:
    """The rows scored by another assignment of the same fits; rows without that readout keep their own."""
    out = frame.copy()
    for metric in ("acc", "nmi"):
        column = f"{metric}_{readout}"
        if column in out:
            values = pd.to_numeric(out[column], errors="coerce")
            out[metric] = values.where(values.notna(), out[metric])
    return out


def with_sweeps(frame: pd.DataFrame, reading: Reading, out: Path, published: dict) -> pd.DataFrame:
    """The primary rows with the reading's own fits in place of (or beside) the matching cells."""
    directory = runs_dir(out, reading)
    if done_record(out, reading) is None:
        raise NotRun(f"reading {reading.name} has no finished sweeps under {directory}")
    fitted = read_results(find_results([directory]))
    if published.get("estimators"):
        fitted = fitted[fitted["estimator"].isin(published["estimators"])]
    fitted = fitted.drop(columns=["_source"], errors="ignore")
    kept = frame.set_index(CELL_KEY)
    replaced = fitted.set_index(CELL_KEY)
    combined = pd.concat([kept[~kept.index.isin(replaced.index)], replaced])
    return combined.reset_index()


def oracle_per_k(raw: pd.DataFrame, table: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """``table`` with the family's rows replaced, per data set and k, by the grid value of best mean accuracy."""
    family, estimator = spec["family"], spec["estimator"]
    grid = raw[raw["estimator"] == estimator]
    if grid.empty:
        return table
    best = grid.groupby(["dataset", "k", "method"])["acc"].mean().reset_index()
    best = best.loc[best.groupby(["dataset", "k"])["acc"].idxmax(), ["dataset", "k", "method"]]
    chosen = grid.merge(best, on=["dataset", "k", "method"]).assign(method=family)
    return pd.concat([table[table["method"] != family], chosen], ignore_index=True)


def reading_table(primary: pd.DataFrame, reading: Reading | None, out: Path, published: dict) -> pd.DataFrame:
    """The rows of the paper's tables under ``reading`` (None: the primary reading)."""
    families = dict(published.get("families", {}))
    raw = primary
    if reading is not None:
        if reading.sweeps:
            raw = with_sweeps(raw, reading, out, published)
        if reading.readout:
            raw = with_readout(raw, reading.readout)
        if reading.family_value:
            name = reading.family_value["family"]
            families[name] = {**family_spec(families[name]), "value": reading.family_value["value"]}
    table, _ = choose_tuned(raw, families)
    if reading is not None and reading.oracle_per_k:
        table = oracle_per_k(raw, table, reading.oracle_per_k)
    return table


def judged(name: str, table: pd.DataFrame, published: dict, tables: pd.DataFrame | None) -> dict[str, dict]:
    """The paper's numbers under one reading, judged (Holm over the paper's numbers), by key."""
    return {row["key"]: row for row in numbers_of.judge(numbers_of.numbers(name, table, published, tables))}


def effect_rows(paper: str, reading: Reading, primary: dict[str, dict], under: dict[str, dict]) -> list[dict]:
    """One row per number: what the reading does to ours and to the verdict."""
    rows = []
    for key, base in primary.items():
        row = under.get(key, {})
        ours = row.get("ours")
        rows.append({
            "paper": paper, "key": key, "dataset": base["dataset"], "kind": base["kind"], "number": base["number"],
            "reading": reading.name, "label": reading.label, "question": reading.question,
            "paper value": base["paper value"], "primary": base["ours"], "ours": ours,
            "effect": None if ours is None or base["ours"] is None else ours - base["ours"],
            "difference": row.get("difference"), "p_holm": row.get("p_holm"),
            "ci90": numbers_of.interval(row) if row else "n/a",
            "primary verdict": base["verdict"], "verdict": row.get("verdict", "not run")})
    return rows


def tally(verdicts) -> dict[str, int]:
    return {v: int(n) for v, n in pd.Series(list(verdicts), dtype=object).value_counts().items()}


def report_lines(paper: Paper, published: dict, primary_text: str, readings: list[Reading],
                 primary: dict[str, dict], effects: pd.DataFrame, seconds: dict[str, float | None]) -> list[str]:
    """The Markdown of ``report.md`` (see the module docstring)."""
    base = tally(row["verdict"] for row in primary.values())
    cant = "can't tell"
    lines = [f"# What comes back of the {paper.name.upper()} paper's numbers, and why the others don't", "",
             f"Paper: {published['paper']}", "",
             f"Built by `{provenance.command_line()}`. Every number below comes from our runs: the primary run of "
             f"`make reproduce-{paper.name}` and, for each reading, the fits or assignments named in its row, on "
             "the same trials (paired).", "",
             f"**The primary reading** (the one in the paper's tables and the scorecard): {primary_text}", "",
             "**A reading** is another defensible choice where the paper is silent or ambiguous. Labels: *text* (the "
             "paper says so), *reference-code* (Deng Cai's code does so), *alternative* (an equally defensible "
             "reading of a silent text), *oracle* (chooses on the test labels: a diagnostic, never a result). A "
             "reading never replaces a primary number.", "",
             "**Verdicts** as in the scorecard (`outputs/reproduce/README.md`): *agrees* when the 90% interval of "
             "ours - paper lies inside +-5 points (TOST), *differs* when Welch's test of a zero difference has "
             "Holm-adjusted p < 0.05, *can't tell* otherwise. Holm's adjustment runs here over this paper's "
             f"{len(primary)} numbers under each reading (the primary run too), so verdicts can differ slightly "
             "from the scorecard's, which adjusts over every paper.", "",
             "## Summary", "",
             f"Primary: {len(primary)} numbers: " + ", ".join(f"{v} {n}" for v, n in sorted(base.items())) + ". "
             "A reading's sweeps report the wall time of their last run (cells reused from an earlier run cost "
             "nothing).", "",
             "| reading | question | label | computed from | agrees | differs | can't tell | brought to agrees | "
             "moved off agrees | mean effect (points) | wall s of its sweeps (last run) |", "|---" * 11 + "|"]
    for reading in readings:
        rows = effects[effects["reading"] == reading.name]
        counts = tally(rows["verdict"])
        up = int(((rows["verdict"] == "agrees") & (rows["primary verdict"] != "agrees")).sum())
        down = int(((rows["verdict"] != "agrees") & (rows["primary verdict"] == "agrees")).sum())
        effect = pd.to_numeric(rows["effect"], errors="coerce")
        spent = seconds.get(reading.name)
        wall = "none (no new fit)" if reading.name not in seconds else "-" if spent is None else f"{spent:.0f}"
        if (rows["verdict"] == "not run").all():
            lines.append(f"| {reading.name} | {reading.question} | {reading.label} | {reading.how()} | "
                         f"not run | | | | | | {wall} |")
            continue
        lines.append(f"| {reading.name} | {reading.question} | {reading.label} | {reading.how()} | "
                     f"{counts.get('agrees', 0)} | {counts.get('differs', 0)} | {counts.get(cant, 0)} | "
                     f"{up} | {down} | {fmt(effect.mean(), signed=True)} | {wall} |")
    lines += ["", "## Which numbers come back, which don't, and what we know about why", ""]
    for kind in numbers_of.KINDS:
        keys = [key for key, row in primary.items() if row["kind"] == kind]
        if not keys:
            continue
        agree = [k for k in keys if primary[k]["verdict"] == "agrees"]
        lines += [f"### {kind[0].upper() + kind[1:]}s: {len(agree)} of {len(keys)} agree under the primary reading",
                  ""]
        compared = [primary[k]["comparison"] for k in keys if primary[k]["comparison"] is not None]
        narrow = sum((c.ci90[1] - c.ci90[0]) / 2 < MARGIN for c in compared)
        if narrow < len(compared):
            lines += [f"Only {narrow} of these {len(compared)} numbers could agree at all: the others' 90% "
                      f"interval is wider than +-{MARGIN:.0f} points even where ours equals the paper's (the "
                      "deviations over the trials are too large for the trial counts), so at best they can't "
                      "tell.", ""]
        rest = [k for k in keys if primary[k]["verdict"] not in ("agrees", "not run")]
        fixed: dict[str, list[str]] = {}
        unmoved = []
        for key in rest:
            rows = effects[(effects["key"] == key) & (effects["verdict"] == "agrees")]
            if rows.empty:
                unmoved.append(key)
            for _, r in rows.iterrows():
                fixed.setdefault(f"{r['reading']} ({r['label']})", []).append(key)
        for name, keys_fixed in sorted(fixed.items(), key=lambda item: -len(item[1])):
            lines.append(f"- **{name}** brings {len(keys_fixed)} of the {len(rest)} numbers that do not agree to "
                         f"*agrees*: " + "; ".join(keys_fixed[:12]) + (" ..." if len(keys_fixed) > 12 else ""))
        if rest:
            lines.append(f"- No reading brings {len(unmoved)} of the {len(rest)} to *agrees*"
                         + (": " + "; ".join(unmoved[:20]) + (" ..." if len(unmoved) > 20 else "") if unmoved else "")
                         + ".")
        lines.append("")
    rest = [key for key, row in primary.items() if row["verdict"] not in ("agrees", "not run")]
    if rest:
        lines += ["## The closest reading for each number that does not agree", "",
                  "For each number the primary run does not reproduce: the label-free reading (text, reference-code "
                  "or alternative) and the oracle whose ours lies closest to the paper's, with its difference and "
                  "verdict.", "",
                  "| number | paper | primary | closest label-free reading | closest oracle |", "|---" * 5 + "|"]
        ran = effects[effects["verdict"] != "not run"].assign(gap=lambda f: pd.to_numeric(f["difference"]).abs())
        for key in rest:
            row, cells = primary[key], []
            for oracle in (False, True):
                options = ran[(ran["key"] == key) & ((ran["label"] == "oracle") == oracle)]
                if options.empty:
                    cells.append("none run")
                    continue
                best = options.loc[options["gap"].idxmin()]
                cells.append(f"{best['reading']}: {fmt(best['ours'])} ({fmt(best['difference'], signed=True)}) "
                             f"{best['verdict']}")
            lines.append(f"| {key} | {fmt(row['paper value'])} | {fmt(row['ours'])} "
                         f"({fmt(row['difference'], signed=True)}) {row['verdict']} | {cells[0]} | {cells[1]} |")
        lines.append("")
    lines += ["## Every number under every reading", "",
              "Each cell: ours (ours - paper) and the verdict: A agrees, D differs, ? can't tell, - not run.", "",
              "| number | paper | primary | " + " | ".join(r.name for r in readings) + " |",
              "|---" * (3 + len(readings)) + "|"]
    by_key = {key: group.set_index("reading") for key, group in effects.groupby("key", sort=False)}
    for key, row in primary.items():
        cells = [f"{fmt(row['ours'])} ({fmt(row['difference'], signed=True)}) {SHORT[row['verdict']]}"]
        for reading in readings:
            r = by_key[key].loc[reading.name] if key in by_key and reading.name in by_key[key].index else None
            cells.append("n/a" if r is None or pd.isna(r["ours"]) else
                         f"{fmt(r['ours'])} ({fmt(r['difference'], signed=True)}) {SHORT.get(r['verdict'], '-')}")
        lines.append(f"| {key} | {fmt(row['paper value'])} | " + " | ".join(cells) + " |")
    lines += ["", "## The readings", ""]
    for reading in readings:
        lines += [f"### {reading.name} ({reading.label}): {reading.question}", "", f"- Source: {reading.source}"]
        if reading.quote:
            lines.append(f"- The text: \"{reading.quote}\"")
        if reading.note:
            lines.append(f"- Note: {reading.note}")
        lines += [f"- Computed from: {reading.how()}", ""]
    return lines


def explain_paper(paper: Paper, outputs: Path, out_root: Path) -> Path | None:
    """Compare every reading of ``paper`` with the primary run; write its report and ``readings.csv``."""
    primary_text, readings = load_readings(paper)
    if not readings:
        logger.info("%s declares no readings (%s); nothing to explain", paper.name, paper.home / FILE)
        return None
    published = yaml.safe_load(paper.published.read_text())
    tables = pd.read_csv(paper.tables) if paper.tables.is_file() else None
    out = Path(out_root) / paper.name
    raw = primary_frame(paper, outputs)
    primary = judged(paper.name, reading_table(raw, None, out, published), published, tables)
    if not any(row["comparison"] is not None for row in primary.values()):
        logger.info("%s has no published number we have data for; nothing to explain", paper.name)
        return None
    rows = []
    for reading in readings:
        try:
            under = judged(paper.name, reading_table(raw, reading, out, published), published, tables)
        except NotRun as exc:
            logger.warning("%s: %s; reported as not run (make explain-%s runs it)", paper.name, exc, paper.name)
            under = {}
        except MixedResultsError as exc:
            raise UserError(f"{paper.name}/{reading.name}: {exc}") from None
        rows += effect_rows(paper.name, reading, primary, under)
    effects = pd.DataFrame(rows)
    write_atomic(out / scorecard.READINGS, effects.to_csv(index=False))
    seconds = {r.name: (done_record(out, r) or {}).get("seconds") for r in readings if r.sweeps}
    started = provenance.now()
    lines = report_lines(paper, published, primary_text, readings, primary, effects, seconds)
    record = provenance.collect(started, provenance.now(), extra={"readings": [r.name for r in readings]})
    lines += ["", *provenance.markdown(record, [])]
    path = out / "report.md"
    write_atomic(path, "\n".join(lines) + "\n")
    provenance.write(out, record)
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0])
    parser.add_argument("papers", nargs="+", metavar="PAPER", help="paper names, or 'all'")
    parser.add_argument("--outputs", default=str(papers.OUTPUTS), help="the reproduce outputs (primary runs)")
    parser.add_argument("--out", default=str(OUTPUTS), help="where the readings' runs and reports go")
    parser.add_argument("--readings", nargs="+", metavar="NAME", help="only these readings' sweeps (all reported)")
    parser.add_argument("--sweeps-at-once", type=int, default=None, metavar="N",
                        help="sweeps running at the same time, one worker each (default: the cores)")
    parser.add_argument("--report-only", action="store_true", help="run no sweep; report from what exists")
    parser.add_argument("--dry-run", action="store_true", help="print the sweeps, run nothing")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="[%(levelname)s] %(message)s")
    everything = args.papers == ["all"]
    out_root, outputs = Path(args.out), Path(args.outputs)
    try:
        if "all" in args.papers and not everything:
            raise UserError("'all' cannot be combined with paper names")
        chosen = [papers.load(name, papers.HOME) for name in (papers.names(papers.HOME) if everything else args.papers)]
        plans = {paper.name: load_readings(paper)[1] for paper in chosen}
        at_once = args.sweeps_at_once or usable_cores()
        if at_once < 1:
            raise UserError(f"--sweeps-at-once={at_once} must be at least 1")
        steps, owners = [], []
        for paper in chosen:
            for reading in plans[paper.name]:
                if args.readings and reading.name not in args.readings:
                    continue
                for i, command in enumerate(sweep_commands(paper, reading, out_root / paper.name)):
                    steps.append((f"{paper.name}/{reading.name}: sweep {i + 1} of {len(reading.sweeps)}", command))
                    owners.append((paper.name, reading.name))
        if args.dry_run:
            for what, command in steps:
                print(f"# {what}\n{shlex.join(['python', *command[1:]])}")
            return 0
        if not args.report_only:
            for paper in chosen:
                if plans[paper.name]:
                    primary_frame(paper, outputs)  # the primary run must exist before any reading is fitted
    except UserError as exc:
        logger.error("%s", exc)
        return 2
    started = time.time()
    seconds: dict[str, dict[str, float]] = {}  # wall seconds of each reading's sweeps in this run
    try:
        if not args.report_only and steps:
            one_worker = [ONE_WORKER] if at_once > 1 else []
            spent_each = run_steps([(what, [*command, *one_worker], None) for what, command in steps], at_once)
            for (paper_name, reading_name), spent in zip(owners, spent_each):
                per_paper = seconds.setdefault(paper_name, {})
                per_paper[reading_name] = per_paper.get(reading_name, 0.0) + spent
            for paper in chosen:
                for reading in plans[paper.name]:
                    if reading.sweeps and (paper.name, reading.name) in owners:
                        mark_done(out_root / paper.name, reading, seconds[paper.name][reading.name])
        for paper in chosen:
            report = explain_paper(paper, outputs, out_root)
            if report is not None:
                logger.info("%s: wrote %s", paper.name, report)
                if not args.report_only:
                    write_atomic(out_root / paper.name / WALL, f"{int(round(time.time() - started))}\n")
    except (StepFailed, UserError) as exc:
        logger.error("%s", exc)
        return getattr(exc, "status", 2)
    if everything:
        if not args.report_only:
            write_atomic(out_root / "all" / WALL, f"{int(round(time.time() - started))}\n")
        logger.info("wrote %s", scorecard.build(outputs, explain=out_root))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Explain a paper's numbers: run each of its readings and measure what it does to every published number.

Usage::

    python -m src.explain PAPER [PAPER ...]      # what `make explain-<paper>` runs (after make reproduce-<paper>)
    python -m src.explain all                    # every paper with readings, then the scorecard again
    python -m src.explain lcf --dry-run          # the readings' sweeps, jobs and cells to compute
    python -m src.explain cnmf --overrides hydra/launcher=submitit_slurm hydra.launcher.partition=cpu

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
  ``outputs/explain/<paper>/<reading>/runs/<i>``; their rows replace the primary rows of the same data set,
  method, k and trial, or add new ones (other k).

The sweeps of every selected paper's readings run as one pool (:func:`src.pool.run_pool`, as a
reproduction's: longest first, one progress line, resumable cell by cell, SLURM through ``--overrides``). A
reading's cell that equals a cell of the paper's primary run (same data, trial, settings and code:
:func:`src.pool.jobs.sharing_key`) is copied from ``outputs/reproduce/``, and a cell that two readings
share is computed once. When a paper's sweeps are all in, its readings are marked done and its report is
written; papers whose readings fit nothing new are reported after the pool.

For each reading the paper's numbers are compared with the published ones as the scorecard does
(:mod:`src.presentation.published`); Holm's adjustment runs over the paper's numbers under that reading, and the primary
run is judged the same way here so that the two are comparable. Writes ``outputs/explain/<paper>/report.md``
and ``readings.csv`` (one row per number and reading: the effect on ours and the verdict), which the
scorecard's cause column reads, and ``wall_seconds.txt``. ``all`` rebuilds the scorecard at the end.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import shlex
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import yaml

from . import provenance
from .checks import one_of
from .command_line import add_pool_arguments, check_pool_arguments, with_experiment_group
from .presentation import papers, published as numbers_of, scorecard
from .errors import ConfigError, StepFailed, UserError
from .files import write_atomic
from .pool import PoolFailed, run_pool
from .presentation.paper_report import choose_tuned, family_spec
from .presentation.papers import Paper
from .protocol.cell import READOUTS
from .reproduce import WALL, terminate
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
        one_of(LABELS).check(f"{where}: label", entry.get("label"))
        if not entry.get("source") or not entry.get("question"):
            raise ConfigError(f"{where} needs a question and a source")
        if not any(entry.get(how) for how in HOW):
            raise ConfigError(f"{where} says neither of {', '.join(HOW)}: nothing to compute")
        if entry.get("readout"):
            one_of(READOUTS).check(f"{where}: readout", entry["readout"])
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


def mark_done(out: Path, reading: Reading) -> None:
    """Record that every sweep of ``reading`` finished: the sweeps themselves (a changed list is not done)."""
    record = {"sweeps": [list(sweep) for sweep in reading.sweeps]}
    write_atomic(Path(out) / reading.name / DONE, json.dumps(record) + "\n")


def done_record(out: Path, reading: Reading) -> dict | None:
    """The record of :func:`mark_done` if it is there and for the reading's current sweeps, else None."""
    path = Path(out) / reading.name / DONE
    if not path.is_file():
        return None
    record = json.loads(path.read_text())
    return record if record.get("sweeps") == [list(sweep) for sweep in reading.sweeps] else None


def sweep_overrides(reading: Reading, out: Path) -> list[list[str]]:
    """A reading's sweeps as the pool runs them, after the paper's experiment: the sweep's overrides and a
    directory of its own (``runs/<i>``)."""
    directory = runs_dir(out, reading)
    return [[*sweep, f"hydra.sweep.dir={directory / str(i)}"] for i, sweep in enumerate(reading.sweeps, 1)]


def readings_home(paper: Paper, readings: list[Reading], out: Path) -> Paper | None:
    """The sweeps of ``paper``'s ``readings`` as one home for the pool (the paper's experiment, each sweep in
    its reading's directory under ``out``), or None when none of them fits anything new."""
    sweeps = tuple(tuple(sweep) for reading in readings for sweep in sweep_overrides(reading, out))
    return dataclasses.replace(paper, sweeps=sweeps, depends_on=()) if sweeps else None


def reading_work(out: Path, reading: Reading) -> float | None:
    """The seconds of fit and KMeans of a finished reading's cells, as their rows recorded them (whichever run
    computed them), or None when its sweeps have not finished."""
    if done_record(out, reading) is None:
        return None
    files = find_results([runs_dir(out, reading)])
    if not files:
        return None
    frame = read_results(files)
    return float(frame["fit_seconds"].sum() + frame.get("kmeans_seconds", pd.Series(0.0)).sum())


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
    """The Markdown of ``report.md`` (see the module docstring): its header and summary table, which numbers
    come back, the closest reading of each that does not, every number under every reading, the readings."""
    base = tally(row["verdict"] for row in primary.values())
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
             "A reading that fits anything new reports the work of its cells (their fit and KMeans seconds, "
             "whichever run computed them).", "",
             "| reading | question | label | computed from | agrees | differs | can't tell | brought to agrees | "
             "moved off agrees | mean effect (points) | work of its cells (s) |", "|---" * 11 + "|"]
    lines += summary_rows(readings, effects, seconds)
    lines += come_back_lines(primary, effects)
    lines += closest_lines(primary, effects)
    lines += every_number_lines(primary, readings, effects)
    lines += readings_lines(readings)
    return lines


def summary_rows(readings: list[Reading], effects: pd.DataFrame, seconds: dict[str, float | None]) -> list[str]:
    """One row of the summary table per reading: its verdicts, the numbers it moves, its effect and cost."""
    cant, lines = "can't tell", []
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
    return lines


def come_back_lines(primary: dict[str, dict], effects: pd.DataFrame) -> list[str]:
    """Per kind of number: how many agree, how many could, and which readings bring the others back."""
    lines = ["", "## Which numbers come back, which don't, and what we know about why", ""]
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
    return lines


def closest_lines(primary: dict[str, dict], effects: pd.DataFrame) -> list[str]:
    """For each number that does not agree: the closest label-free reading and the closest oracle."""
    lines = []
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
    return lines


def every_number_lines(primary: dict[str, dict], readings: list[Reading], effects: pd.DataFrame) -> list[str]:
    """The table of every number under every reading."""
    lines = ["## Every number under every reading", "",
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
    return lines


def readings_lines(readings: list[Reading]) -> list[str]:
    """Each reading's question, source, quote, note and what it is computed from."""
    lines = ["", "## The readings", ""]
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
    seconds = {r.name: reading_work(out, r) for r in readings if r.sweeps}
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
    parser.add_argument("--report-only", action="store_true", help="run no sweep; report from what exists")
    add_pool_arguments(parser)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="[%(levelname)s] %(message)s")
    args.overrides = with_experiment_group(args.overrides)  # +paper/<name>=experiment, deprecated
    everything = args.papers == ["all"]
    out_root, outputs = Path(args.out), Path(args.outputs)
    try:
        if "all" in args.papers and not everything:
            raise UserError("'all' cannot be combined with paper names")
        check_pool_arguments(args)
        chosen = [papers.load(name, papers.HOME) for name in (papers.names(papers.HOME) if everything else args.papers)]
        plans = {paper.name: [r for r in load_readings(paper)[1] if not args.readings or r.name in args.readings]
                 for paper in chosen}
        homes = [home for home in (readings_home(paper, plans[paper.name], out_root / paper.name) for paper in chosen)
                 if home is not None]
        if args.dry_run:
            for home in homes:
                for sweep in home.sweep_overrides():
                    print(f"# {home.name}\n{shlex.join(['python', '-m', 'src.run', '-m', *sweep, *args.overrides])}")
        elif not args.report_only:
            for paper in chosen:
                if plans[paper.name]:
                    primary_frame(paper, outputs)  # the primary run must exist before any reading is fitted
    except UserError as exc:
        logger.error("%s", exc)
        return 2
    started = time.time()
    signal.signal(signal.SIGTERM, terminate)  # a killed run stops its workers too
    try:
        if homes and (args.dry_run or not args.report_only):
            fit_readings(homes, plans, out_root, args, chosen)
        if args.dry_run:
            return 0
        for paper in chosen:
            report = explain_paper(paper, outputs, out_root)
            if report is not None:
                logger.info("%s: wrote %s", paper.name, report)
                if not args.report_only:
                    write_atomic(out_root / paper.name / WALL, f"{int(round(time.time() - started))}\n")
    except (StepFailed, UserError) as exc:
        logger.error("%s", exc)
        return getattr(exc, "status", 2)
    except KeyboardInterrupt:
        logger.error("interrupted: the cells in progress are lost, the others are on disk; run the same command "
                     "again to resume")
        return 130
    if everything:
        if not args.report_only:
            write_atomic(out_root / "all" / WALL, f"{int(round(time.time() - started))}\n")
        logger.info("wrote %s", scorecard.build(outputs, explain=out_root))
    return 0


def fit_readings(homes: list[Paper], plans: dict[str, list[Reading]], out_root: Path, args, chosen: list[Paper]) -> None:
    """Every sweep of the readings in ``homes`` in one pool, the primary runs of ``chosen`` as the source of
    equal cells; a paper's readings are marked done when its sweeps are all in. A failed cell is a one-line
    :class:`~src.errors.StepFailed` after the other jobs finished."""
    def sweeps_done(home: Paper) -> None:
        for reading in plans[home.name]:
            if reading.sweeps:
                mark_done(out_root / home.name, reading)

    try:
        run_pool(homes, list(args.overrides), args.workers, out_root, None if args.dry_run else sweeps_done,
                 args.dry_run, sources=chosen)
    except PoolFailed as exc:
        raise exc.as_step() from None


if __name__ == "__main__":
    sys.exit(main())

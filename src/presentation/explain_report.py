"""The explain report of a paper: what each of its readings does to every published number.

For each reading (:mod:`src.reproduction.readings`) the paper's numbers are computed on the primary run's
trials (another readout of the same fits, another value of a grid that ran, an oracle's choice per k, or
the rows of the reading's own sweeps in place of the primary rows) and compared with the published ones as
the scorecard does (:mod:`src.presentation.published`); Holm's adjustment runs over the paper's numbers
under that reading, and the primary run is judged the same way here so that the two are comparable.
:func:`explain_paper` writes ``outputs/explain/<paper>/report.md`` and ``readings.csv`` (one row per number
and reading: the effect on ours and the verdict), which the scorecard's cause column reads, and
``forest.png``: the paper's forest plot with the scorecard's verdicts (Holm over every paper reproduced) and an
arrow to ours under each reading that brings a number to *agrees* (``src.presentation.verdict_figures``). The
report gives per reading a table of what it brings back (the numbers it moves onto *agrees* and off it, with
the effect); its long lists of numbers and the table of every number under every reading are folded
(``<details>``), so that the page reads as a summary first.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd
import yaml

from . import published as numbers_of, scorecard
from ..errors import UserError
from ..files import write_atomic
from ..reproduction.homes import Paper
from ..reproduction.readings import FILE, NotRun, Reading, done_record, load_readings, reading_work, runs_dir
from ..running import provenance
from ..running.results import MixedResultsError, find_results, read_results
from .paper_report import choose_tuned, draw_forest, family_spec, without_references
from .scorecard import fmt
from .verdict_figures import FOREST
from .verdicts import MARGIN, TOO_FEW_TRIALS

logger = logging.getLogger(__name__)

OUTPUTS = Path("outputs") / "explain"
SHORT = {"agrees": "A", "differs": "D", "can't tell": "?", "not run": "-", TOO_FEW_TRIALS: "1"}
CELL_KEY = ["dataset", "method", "k", "trial"]


def primary_frame(paper: Paper, outputs: Path) -> pd.DataFrame:
    """The primary run's merged rows (``outputs/reproduce/<paper>/results.csv``), the references' left out
    (:func:`src.presentation.paper_report.without_references`: no reading judges them); one line if missing."""
    merged = paper.out(outputs) / "results.csv"
    if not merged.is_file():
        raise UserError(f"{merged} does not exist: run make reproduce-{paper.name} first (the readings are paired "
                        "with its trials)")
    return without_references(pd.read_csv(merged))


def with_readout(frame: pd.DataFrame, readout: str) -> pd.DataFrame:
    """The rows scored by another assignment of the same fits; rows without that readout keep their own."""
    out = frame.copy()
    for metric in ("acc", "nmi"):
        column = f"{metric}_{readout}"
        if column in out:
            values = pd.to_numeric(out[column], errors="coerce")
            out[metric] = values.where(values.notna(), out[metric])
    return out


def fitted_results(out: Path, reading: Reading) -> list[Path] | None:
    """The ``results.csv`` files of the reading's own fits, or None while its sweeps have not finished (or were
    run with other sweeps than it declares now)."""
    if not reading.sweeps or done_record(out, reading) is None:
        return None
    return find_results([runs_dir(out, reading)])


def with_sweeps(frame: pd.DataFrame, reading: Reading, out: Path, published: dict) -> pd.DataFrame:
    """The primary rows with the reading's own fits in place of (or beside) the matching cells."""
    files = fitted_results(out, reading)
    if files is None:
        raise NotRun(f"reading {reading.name} has no finished sweeps under {runs_dir(out, reading)}")
    fitted = without_references(read_results(files))  # a reading reads the paper's methods alone
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
                 primary: dict[str, dict], effects: pd.DataFrame, seconds: dict[str, float | None],
                 forest: list[str] = ()) -> list[str]:
    """The Markdown of ``report.md`` (see the module docstring): its header, the forest plot, the summary table
    (``forest``: the lines that show it, none when it was not drawn), what each reading brings back, which
    numbers come back, the closest reading of each that does not, every number under every reading (folded),
    the readings."""
    base = tally(row["verdict"] for row in primary.values())
    lines = [f"# What comes back of the {paper.name.upper()} paper's numbers, and why the others don't", "",
             f"Paper: {published['paper']}", "", *(forest[:-1] if forest else []), "",
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
    lines += brought_back_lines(primary, readings, effects)
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


def brought_back_lines(primary: dict[str, dict], readings: list[Reading], effects: pd.DataFrame) -> list[str]:
    """Per reading, the numbers it moves onto *agrees* and off it, each with its effect, folded in a table
    under a line that counts them; the readings that move no number either way are named together."""
    lines = ["", "## What each reading brings back", "",
             "A number is brought back when it does not agree under the primary reading and agrees under the "
             "reading; it is moved off when the reverse holds. Effect: ours under the reading - ours under the "
             "primary reading, in points.", ""]
    still = []
    for reading in readings:
        rows = effects[effects["reading"] == reading.name]
        onto = rows[(rows["verdict"] == "agrees") & (rows["primary verdict"] != "agrees")]
        off = rows[(rows["verdict"] != "agrees") & (rows["verdict"] != "not run") & (rows["primary verdict"] == "agrees")]
        if onto.empty and off.empty:
            still.append(f"{reading.name} ({reading.label})")
            continue
        lines += [f"<details><summary><b>{reading.name}</b> ({reading.label}): brings {len(onto)} to <i>agrees</i>, "
                  f"moves {len(off)} off it</summary>", "",
                  "| number | moved | paper | primary: ours (ours - paper) | under the reading | effect |",
                  "|---" * 6 + "|"]
        for moved, chosen in (("onto agrees", onto), ("off agrees", off)):
            for _, r in chosen.iterrows():
                base = primary[r["key"]]
                lines.append(f"| {r['key']} | {moved} | {fmt(r['paper value'])} | {fmt(base['ours'])} "
                             f"({fmt(base['difference'], signed=True)}) {base['verdict']} | {fmt(r['ours'])} "
                             f"({fmt(r['difference'], signed=True)}) {r['verdict']} | "
                             f"{fmt(r['effect'], signed=True)} |")
        lines += ["", "</details>", ""]
    if still:
        lines += [f"No number moves onto or off *agrees* under {', '.join(still)}.", ""]
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
                         "*agrees*.")
        if rest:
            lines.append(f"- No reading brings {len(unmoved)} of the {len(rest)} to *agrees*.")
        if fixed or unmoved:
            lines += ["", "<details><summary>The numbers, reading by reading</summary>", ""]
            lines += [f"- **{name}**: " + "; ".join(keys_fixed)
                      for name, keys_fixed in sorted(fixed.items(), key=lambda item: -len(item[1]))]
            lines += ["- **no reading**: " + "; ".join(unmoved)] if unmoved else []
            lines += ["", "</details>"]
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
                  f"<details><summary>The closest readings of the {len(rest)} numbers that do not agree</summary>",
                  "", "| number | paper | primary | closest label-free reading | closest oracle |", "|---" * 5 + "|"]
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
        lines += ["", "</details>", ""]
    return lines


def every_number_lines(primary: dict[str, dict], readings: list[Reading], effects: pd.DataFrame) -> list[str]:
    """The table of every number under every reading."""
    lines = ["## Every number under every reading", "",
              "Each cell: ours (ours - paper) and the verdict: A agrees, D differs, ? can't tell, - not run, 1 one "
              "trial (no verdict).", "",
              f"<details><summary>The table: {len(primary)} numbers under the primary reading and "
              f"{len(readings)} others</summary>", "",
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
    return lines + ["", "</details>"]


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
    forest = draw_forest(paper.name, paper.out(outputs) / "results.csv", outputs, paper.home.parent, out / FOREST,
                         effects)
    lines = report_lines(paper, published, primary_text, readings, primary, effects, seconds, forest)
    record = provenance.collect(started, provenance.now(), extra={"readings": [r.name for r in readings]})
    runs = runs_read(paper, outputs, out, readings)
    lines += ["", *provenance.markdown(record, runs)]
    path = out / "report.md"
    write_atomic(path, "\n".join(lines) + "\n")
    provenance.write(out, {**record, "runs": runs})
    return path


def runs_read(paper: Paper, outputs: Path, out: Path, readings: list[Reading]) -> list[dict]:
    """The records of the runs behind the report: the primary run's (as its paper report lists them in its
    ``provenance.json``) and those of the fits of every finished reading (their own ``provenance.json``)."""
    primary = provenance.read(paper.out(outputs) / provenance.FILE) or {}
    fitted = [file for reading in readings for file in fitted_results(out, reading) or []]
    return [*primary.get("runs", []), *(r for r in provenance.of_results(fitted) if r is not None)]

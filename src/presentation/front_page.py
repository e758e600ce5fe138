"""The front page's results table and the published snapshot of the last reproduction.

Usage::

    python -m src.presentation.front_page      # what `make results` runs, after make reproduce-all (and explain-all)

Reads what the last reproduction left in ``outputs/reproduce/`` (the scorecard ``scorecard.csv``, the
schedule ``schedule.csv`` / ``schedule.json``, ``all/wall_seconds.txt``, each paper's ``report.md`` and
``provenance.json``) and

1. copies the reports, their figures and the scorecard into ``docs/results/`` (the same layout), the pages the
   documentation site shows and the README links to, so that a reader sees the last reproduction without
   running it, the readings' reports of ``make explain-all`` (``outputs/explain/<paper>/report.md`` into
   ``docs/results/explain/``), and each cell's cost (``cell_costs.csv``), from which a fresh clone's pool expects its cells'
   times (:func:`src.running.pool.schedule.write_costs`);
2. draws every published number of the scorecard against ours (``docs/results/published_vs_ours.png``,
   ``src.presentation.verdict_figures``) from ``scorecard.csv``, the same rows as the table, and writes
   its alternative text from them, in numbers (:func:`front_figure`);
3. rewrites the part of ``README.md`` between ``<!-- results:start -->`` and ``<!-- results:end -->``: that
   figure with its caption, then one row
   per paper (and Cai's demo) with the command, the cell work it took and the cores, its published numbers
   compared with the verdicts, a finding in one sentence and a link to its report, and a line stamping the
   table with the commit, machine and date of the reproduction that produced it; and, when ``make benchmark``
   has run (``outputs/benchmark/``), a row for the family benchmark: its cost and each track's leaders; and the
   part of the docs' first page (``docs/index.md``) between the same markers: the figure and its caption;
4. writes the family benchmark's cells, when ``make benchmark`` has run, into the shipped file
   ``papers/benchmark/family_cells.csv.gz`` (:mod:`src.reproduction.shipped`), against which an outside method
   is ranked.

Without a reproduction, a finished family benchmark is published alone (:func:`publish_benchmark`): its report
and figures in ``docs/results/benchmark/``, its cells' costs, and its row of the README's table; the papers'
rows and their snapshot stay as the last reproduction left them.

No number of the table is typed by hand: each comes from those files, and the finding is composed from the
scorecard's verdicts and the readings that bring a number back (:func:`finding`, from the columns ``brought
back by`` and ``readings tried`` of ``scorecard.csv``). Running it twice on the same outputs writes the same text.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import shutil
import sys
from pathlib import Path

import pandas as pd
import yaml

from ..running import provenance
from ..errors import UserError
from ..files import write_atomic
from ..running.pool import schedule
from ..running.pool.schedule import write_costs
from . import benchmark_report, references_report, tuning_report
from ..tuning import tables
from ..tuning.homes import track_datasets
from ..reproduction import homes as papers
from ..reproduction import runner, shipped
from .verdict_figures import FOREST, FRONT, plot_published_vs_ours, published_vs_ours_alt
from .ranking import disagreements
from .verdicts import NO_VERDICT, TOO_FEW_TRIALS

logger = logging.getLogger(__name__)

#: The markers around the results table in README.md.
START, END = "<!-- results:start -->", "<!-- results:end -->"
#: Where the snapshot of the last reproduction goes, relative to the checkout.
SNAPSHOT = Path("docs") / "results"
#: The docs' first page, which shows the front figure between the same markers.
INDEX = Path("docs") / "index.md"
#: Row order of the table; a paper home not listed comes after them.
ORDER = ("cnmf", "ccf", "lcf", "fnmf", "pcgnmf", "cai")
NAMES = {"cnmf": "CNMF (TPAMI 2012)", "ccf": "CCF (TCYB 2014)", "lcf": "LCF (TNNLS 2014)",
         "fnmf": "FNMF (ICIP 2014)", "pcgnmf": "PCGNMF (NPL 2015)", "cai": "Cai's GNMF demo"}
COSTS = schedule.PUBLISHED_COSTS.name
AGREE_UNDER = re.compile(r"agrees under: ([^;]+)")


def minutes(seconds: float) -> str:
    """A time as the front page gives it: seconds under a minute, minutes under two hours, else hours and
    minutes."""
    if seconds < 60:
        return f"{seconds:.0f} s"
    whole = round(seconds / 60)
    return f"{whole} min" if whole < 120 else f"{whole // 60} h {whole % 60} min"


def readings_back(row) -> list[tuple[str, str]]:
    """The readings ``(name, label)`` under which a number of the scorecard agrees: its ``brought back by``
    column ("name (label); ..."), or, in a scorecard written before that column existed, the "agrees under:"
    of its cause."""
    if "brought back by" in row:
        listed = row["brought back by"]
        listed = listed if isinstance(listed, str) else ""
    else:
        match = AGREE_UNDER.search(str(row.get("cause", "")))
        listed = match.group(1) if match else ""
    return [(m.group(1), m.group(2)) for m in re.finditer(r"(\S+) \(([^)]+)\)", listed)]


def readings_not_run(row) -> bool:
    """Whether no reading was run on a number: its ``readings tried`` column is 0 (an older scorecard: its
    cause says "no reading run")."""
    if "readings tried" in row and not pd.isna(row["readings tried"]):
        return int(row["readings tried"]) == 0
    return "no reading run" in str(row.get("cause", ""))


def status(row: pd.Series) -> str:
    """What became of one published number, in a few words."""
    if row["verdict"] == "agrees":
        return "comes back"
    if row["verdict"] == "not run":
        return "was not run"
    if row["verdict"] == TOO_FEW_TRIALS:
        return f"has one trial, no verdict (ours {row['ours']:.1f} against {row['paper value']:.1f})"
    back = readings_back(row)
    if back:
        label_free = [name for name, label in back if label != "oracle"]
        if label_free:
            return f"comes back under {' or '.join(label_free[:2])} ({dict(back)[label_free[0]]})"
        return f"is reached only by an oracle ({back[0][0]})"
    gap = f"ours {row['ours']:.1f} against {row['paper value']:.1f}"
    if row["verdict"] == "can't tell":
        return f"can't be told from the paper's within the noise ({gap})"
    if readings_not_run(row):
        return f"differs ({gap}; its readings not run yet)"
    return f"stays off under every reading ({gap})"


def own_methods(paper: str, home: Path) -> list[str]:
    """The paper's own methods, as its ``published.yaml`` names them (``directions: methods``)."""
    path = home / paper / "published.yaml"
    published = yaml.safe_load(path.read_text()) if path.is_file() else {}
    return list((published or {}).get("directions", {}).get("methods", []))


def finding(paper: str, rows: pd.DataFrame, home: Path) -> str:
    """One sentence from the scorecard: what became of the paper's headline numbers.

    The headline numbers are the AC averages over k of the paper's own methods, per data set; a paper that
    prints no table but quotes gains is judged by its quoted AC gains; a demo without own methods by every AC
    number. A paper with no published number we have data for says so.
    """
    if rows.empty:
        return "No published number survives to compare (the paper's tables are lost); its report checks the ordering it claims."
    own = own_methods(paper, home)
    mine = rows[rows["number"].map(lambda n: not own or str(n).split(" ")[0] in own)]
    for kind in ("average", "quoted gain", "per-k cell"):
        chosen = mine[(mine["kind"] == kind) & mine["number"].str.contains(" AC")]
        if not chosen.empty:
            break
    else:
        chosen = rows
    parts = []
    for dataset, group in chosen.groupby("dataset", sort=False):
        if kind == "quoted gain":
            back = int((group["verdict"] == "agrees").sum())
            under = {}
            for _, row in group.iterrows():
                for name, label in readings_back(row):
                    under[name] = label
            free = [f"{name} ({label})" for name, label in under.items() if label != "oracle"]
            oracle = [name for name, label in under.items() if label == "oracle"]
            said = f"on {dataset} {back} of {len(group)} quoted AC gains come back"
            if free:
                said += f" ({' or '.join(free[:2])} brings some back)"
            elif oracle:
                said += f" (only an oracle, {oracle[0]}, brings some back)"
            parts.append(said)
            continue
        statuses = [status(row) for _, row in group.iterrows()]
        names = [str(row["number"]).split(",")[0].replace(" AC", "") for _, row in group.iterrows()]
        if len(set(statuses)) == 1 and len(names) > 1:
            parts.append(f"on {dataset} {', '.join(names[:-1])} and {names[-1]} all {statuses[0].replace('comes', 'come')}")
        else:
            parts.append(f"on {dataset} " + "; ".join(f"{n} {st}" for n, st in zip(names, statuses)))
    if kind == "quoted gain" and all(" 0 of " in part and "(" not in part for part in parts):
        sets = ", ".join(chosen["dataset"].drop_duplicates())
        if all(readings_not_run(row) for _, row in chosen.iterrows()):
            return f"None of its {len(chosen)} quoted AC gains ({sets}) comes back; its readings have not run yet."
        return f"None of its {len(chosen)} quoted AC gains ({sets}) comes back under any reading."
    sentence = "; ".join(parts)
    return sentence[0].upper() + sentence[1:] + "."


def commit_of(record: dict) -> str:
    """A provenance record's commit, short, and whether the checkout had uncommitted changes."""
    git = record.get("git", {})
    return str(git.get("commit", "unknown"))[:7] + (" with uncommitted changes" if git.get("dirty") else "")


def stamp(outputs: Path) -> str:
    """The commit, machine and date of the runs in ``outputs`` (their ``provenance.json``: the code that
    computed the cells), and the commit that wrote the reports, if it differs."""
    runs = [r for r in map(provenance.read, sorted(outputs.glob(f"*/runs/*/{provenance.FILE}"))) if r is not None]
    if not runs:
        return "an unrecorded commit"
    first, commits = runs[0], {commit_of(r) for r in runs}
    machine = f"{first.get('machine', '?')} {first.get('hostname', '?')}, {first.get('cores_available', '?')} cores"
    ended = max(str(r.get("ended") or r.get("started") or "") for r in runs)
    text = f"cells computed at commit {', '.join(sorted(commits))} on {machine}, finished {ended}"
    report = provenance.read(outputs / provenance.FILE)
    if report is not None and commit_of(report) not in commits:
        text += f"; reports written at commit {commit_of(report)}"
    return text


def table(outputs: Path, home: Path, link: Path = SNAPSHOT) -> list[str]:
    """The README's results table (Markdown lines) from the reproduction in ``outputs``."""
    recorded, score_path = schedule.cell_table(outputs), outputs / "scorecard.csv"
    if recorded is None or not score_path.is_file():
        raise UserError(f"{outputs} holds no finished reproduction (scorecard.csv, schedule.csv and "
                        "schedule.json): run make reproduce-all first")
    cells, summary = recorded
    scores = pd.read_csv(score_path)
    cores = summary.get("workers") or summary.get("cores")
    names = papers.names(home)
    ordered = [n for n in ORDER if n in names] + [n for n in names if n not in ORDER]
    lines = ["| paper | command | cell work (/ " + f"{cores} cores) | published numbers | "
             "agrees / differs / can't tell | finding | report |", "|---" * 7 + "|"]
    for name in ordered:
        if not (outputs / name / "report.md").is_file():
            continue
        mine = scores[scores["paper"] == name]
        work = float(cells.loc[(cells["paper"] == name) & cells["status"].isin(["computed", "shared", "reused"]),
                               "seconds"].sum())
        compared = mine[~mine["verdict"].isin(NO_VERDICT)]
        tally = " / ".join(str(int((compared["verdict"] == v).sum())) for v in ("agrees", "differs", "can't tell"))
        lines.append(f"| {NAMES.get(name, name.upper())} | `make reproduce-{name}` | {minutes(work)} "
                     f"(~{minutes(work / cores)}) | {len(compared)} | {tally if len(compared) else '-'} | "
                     f"{finding(name, compared, home)} | [report]({link.as_posix()}/{name}/report.md) |")
    wall = outputs / "all" / "wall_seconds.txt"
    total = float(wall.read_text()) if wall.is_file() else float(summary.get("wall_seconds", 0))
    compared = scores[~scores["verdict"].isin(NO_VERDICT)]
    tally = " / ".join(str(int((compared["verdict"] == v).sum())) for v in ("agrees", "differs", "can't tell"))
    lines.append(f"| **all of them** | `make reproduce-all` | **{minutes(total)} wall** on {cores} cores "
                 f"({summary.get('computed', 0):,} cells computed) | {len(compared)} | {tally} | "
                 f"[scorecard]({link.as_posix()}/README.md): every number with its interval and cause | "
                 f"[scorecard]({link.as_posix()}/README.md) |")
    row = benchmark_row(outputs.parent / "benchmark", link)
    if row:
        lines.append(row)
    lines += ["", f"<sub>Written by `make results` from the last reproduction: {stamp(outputs)}. Cell work is the "
                  "fit and KMeans seconds of a paper's cells; shared cells count in each paper.</sub>"]
    return lines


def benchmark_row(folder: Path, link: Path = SNAPSHOT) -> str | None:
    """The table's row of the family benchmark in ``folder`` (``make benchmark``, or ``--tune`` when its tuned
    tables are there), or None when it has not run: its wall time and cells, and per track its first group by
    the pairwise AC tests (every sample scored; :attr:`.ranking.Ranking.leaders`) at fixed settings and with
    every method tuned alike, and where the mean ranks disagree with those tests. A folder laid out from the
    shipped cells (:func:`src.reproduction.shipped.unpack`) has no schedule: its row says where its cells come
    from instead of a cost."""
    recorded = schedule.cell_table(folder)
    source = shipped.unpacked(folder)
    if (recorded is None and source is None) or not (folder / "report.md").is_file():
        return None
    found, command = [], "make benchmark"
    for track in papers.names(benchmark_report.HOME):
        frame = benchmark_report.load_track(folder / track / "runs")
        ranking = None if frame is None else benchmark_report.ranking_over(frame, "acc")
        if ranking is None:
            continue
        line = f"{benchmark_report.TITLES.get(track, track).lower()}: {first_words(ranking)}"
        tuned = tuning_report.read(folder, [track]).get(track)
        if tuned is not None and not (folder / shipped.TUNED_UNPACKED).is_file():  # else the shipped tuned cells
            command = "python -m src.benchmark --tune"
        if tuned is not None and track != "unsupervised":
            best = benchmark_report.ranking_over(tuning_report.tuned_frame(tuned[0], frame), "acc")
            if best is not None and first_words(best) == first_words(ranking):
                line += " at fixed settings and with every method tuned alike"
            elif best is not None:
                line += f" at fixed settings, {first_words(best)} with every method tuned alike"
        against = references_report.in_words(frame, ranking)
        found.append(f"{line} ({against})" if against else line)
    answer = (f"By the pairwise AC tests (Wilcoxon-Holm), {'; '.join(found)}. | "
              f"[report]({link.as_posix()}/benchmark/report.md) |")
    if recorded is None:
        return (f"| **the family** | `{command}` | cells shipped in `papers/benchmark/` (their run's cost: "
                f"[performance](docs/performance.md)) | - | - | {answer}")
    cells, summary = recorded
    parts = runner.pieces(folder)
    if len(parts) > 1:  # a run in pieces: the sum of every piece, each named, never one piece's time
        total = sum(float(part["wall_seconds"]) for part in parts)
        computed = sum(int(part["computed"]) for part in parts)
        copied = sum(int(part["copied"]) for part in parts)
        earlier = int(parts[0]["reused"]) - int(parts[0]["copied"])
        named = "; ".join(f"`{part['command'].replace('python -m src.benchmark ', '')}` "
                          f"{minutes(float(part['wall_seconds']))}{' (stopped)' if part.get('stopped') else ''}"
                          for part in parts)
        since = f", {earlier:,} on disk before its first piece" if earlier else ""
        return (f"| **the family** | `{command}` | **{minutes(total)} wall** on {parts[-1].get('workers') or 'SLURM'} "
                f"cores, the sum of its {len(parts)} pieces ({named}; {computed:,} cells computed, {copied:,} "
                f"copied from the reproduction{since}) | - | - | {answer}")
    wall = folder / "wall_seconds.txt"
    total = float(wall.read_text()) if wall.is_file() else float(summary.get("wall_seconds", 0))
    # cells on disk before the run (reused, the copies from the reproduction aside): its wall time is not a fresh
    # clone's
    earlier = summary.get("reused", 0) - summary.get("copied", 0)
    since = f", {earlier:,} on disk from an earlier run" if earlier else ""
    return (f"| **the family** | `{command}` | **{minutes(total)} wall** on {summary.get('workers') or 'SLURM'} "
            f"cores ({summary.get('computed', 0):,} cells computed, {summary.get('copied', 0):,} copied from the "
            f"reproduction{since}) | - | - | {answer}")


def first_words(ranking) -> str:
    """A ranking's first group in a few words, and the pair on which its mean ranks disagree with its tests."""
    leaders = list(ranking.leaders)
    text = (f"{leaders[0]} first, better than every other" if len(leaders) == 1 and
            len(ranking.beats(leaders[0])) == len(ranking.methods) - 1 else
            f"{leaders[0]} first, beaten by none" if len(leaders) == 1 else
            f"first group {', '.join(leaders)} (beaten by none)")
    pairs = [(a, b) for a, b in disagreements(ranking) if a == ranking.methods[0]]
    if pairs:
        a, b = pairs[0]
        text += f" ({a} has the best mean rank, but {b} beats it)"
    return text


def front_figure(scores: pd.DataFrame, target: Path) -> str | None:
    """Draw every published number of the scorecard against ours (``target/published_vs_ours.png``,
    ``src.presentation.verdict_figures.figure_published_vs_ours``) and return its alternative text, in
    numbers; None, and no figure, when the scorecard predates the interval columns (rebuild it with
    ``python -m src.presentation.scorecard``)."""
    if not {"ci90 low", "ci90 high"} <= set(scores.columns):
        logger.warning("the scorecard has no ci90 columns (written by an older version): no figure of every "
                       "published number; rebuild it with python -m src.presentation.scorecard")
        return None
    plot_published_vs_ours(scores, Path(target) / FRONT)
    return published_vs_ours_alt(scores)


#: What the front figure shows, under it on the front page and in the docs.
CAPTION = ("Every published number against ours: the paper's value across, ours up, our 90% interval as a bar. "
           "A number agrees when its bar stays inside the grey band of +-5 points around the diagonal. Colour and "
           "fill give the verdict (full: agrees, half: differs, hollow: can't tell), the shape the paper. Quoted "
           "gains are differences between two methods, not levels, so they have a panel of their own.")


def figure_lines(alt: str | None, image: str, scorecard: str | None = None) -> list[str]:
    """The Markdown of the front figure at the relative path ``image``, with ``alt`` as its alternative text
    and the caption; a sentence saying how to draw it when there is none (``alt`` None). ``scorecard``, a
    link to the scorecard, ends the caption."""
    if alt is None:
        return ["The figure of every published number against ours appears here once `make results` has "
                "published a reproduction whose scorecard has intervals.", ""]
    where = f" Every number, with its interval and cause: {scorecard}." if scorecard else ""
    return [f"![{alt}]({image})", "", f"<sub>{CAPTION}{where}</sub>", ""]


def split_at_markers(text: str, name: str = "README.md") -> tuple[str, list[str], str]:
    """``text`` (of the file ``name``) as what comes before :data:`START`, the lines between the markers, and
    what comes after :data:`END`."""
    if START not in text or END not in text:
        raise UserError(f"{name} has no {START} ... {END} markers for the results table")
    head, rest = text.split(START, 1)
    body, tail = rest.split(END, 1)
    return head, body.removeprefix("\n").removesuffix("\n").split("\n"), tail


def replace_between(text: str, lines: list[str], name: str = "README.md") -> str:
    """``text`` (of the file ``name``) with the part between :data:`START` and :data:`END` replaced by
    ``lines``."""
    head, _, tail = split_at_markers(text, name)
    return head + START + "\n" + "\n".join(lines) + "\n" + END + tail


def benchmark_files(benchmark: Path) -> list[Path]:
    """The files of the family benchmark in ``benchmark`` that are published: its report and its figures."""
    return [p for p in [benchmark / "report.md", *sorted(benchmark.glob("*.png"))] if p.is_file()]


def snapshot(outputs: Path, target: Path) -> list[Path]:
    """Copy the reports, their figures and the scorecard (with its figure) of ``outputs`` into ``target`` (same
    layout; the runs stay behind), with the readings' reports and forest plots (``explain/``) and the family
    benchmark's report and figures (``benchmark/``) beside ``outputs``. Files of an earlier snapshot that this
    one lacks are removed."""
    wanted = [outputs / "README.md", outputs / "scorecard.csv"] + [p for p in outputs.glob("*/report.md")]
    wanted += [p for p in [*outputs.glob("*.png"), *outputs.glob("*/*.png")]]  # the scorecard's and the reports'
    explain = outputs.parent / "explain"  # make explain-all's reports and forest plots, beside the reproduction's
    readings = [p for p in [*explain.glob("*/report.md"), *explain.glob(f"*/{FOREST}")]]
    benchmark = outputs.parent / "benchmark"  # make benchmark's report and figures, beside it too
    ranked = benchmark_files(benchmark)
    copied = []
    if target.exists():
        shutil.rmtree(target)
    if (outputs / schedule.SCHEDULE).is_file():  # what each cell took: a fresh clone's expected times
        others = [outputs.parent / folder / schedule.SCHEDULE for folder in ("explain", "benchmark")]  # theirs too
        tables = [pd.read_csv(path) for path in (outputs / schedule.SCHEDULE, *others) if path.is_file()]
        write_costs(pd.concat(tables, ignore_index=True), target / COSTS)
        copied.append(target / COSTS)
    for path in wanted + readings + ranked:
        if path.is_file():
            destination = target / (path.relative_to(outputs) if path in wanted
                                    else Path("explain") / path.relative_to(explain) if path in readings
                                    else Path("benchmark") / path.relative_to(benchmark))
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, destination)
            copied.append(destination)
    return copied


def write_index(index: Path, alt: str | None, target: Path) -> None:
    """Rewrite the front figure's part of the docs' first page (between :data:`START` and :data:`END`), with
    the image's path relative to the page; a page without the markers is left alone, with a warning."""
    if not index.is_file() or START not in index.read_text():
        logger.warning("%s has no %s ... %s markers: the docs' first page shows no front figure", index, START, END)
        return
    image = os.path.relpath(target / FRONT, index.parent)
    scorecard = "{doc}`the scorecard <_generated/papers/scorecard>`"
    write_atomic(index, replace_between(index.read_text(), figure_lines(alt, Path(image).as_posix(), scorecard),
                                        index.name))


def ship_family_cells(benchmark: Path, target: Path) -> Path | None:
    """Rewrite the family's shipped cells (:mod:`src.reproduction.shipped`) when ``make benchmark`` left every
    track's runs in ``benchmark``, and the tuned ones when ``--tune`` left its tables there (not when they were
    laid out from the shipped tuned cells, :func:`src.reproduction.shipped.tuned_beside`); None (and the shipped
    file kept) otherwise."""
    tracks = papers.names(benchmark_report.HOME)
    if not all((benchmark / track / "runs").is_dir() for track in tracks):
        logger.info("no complete benchmark in %s: the family's shipped cells %s are kept", benchmark, target)
        return None
    if shipped.unpacked(benchmark) is not None:
        logger.info("%s was laid out from the shipped cells: %s is kept as it is", benchmark, target)
        return None
    missing = [f"{track}/{dataset}" for track in tracks for dataset in track_datasets(track)
               if not any((benchmark / track / "runs").glob(f"{dataset}_*/results.csv"))]
    if missing:  # a piece of a run (--datasets): the shipped cells stay whole
        logger.info("the benchmark in %s lacks %s: the family's shipped cells %s are kept", benchmark,
                    ", ".join(missing), target)
        return None
    written = shipped.refresh(benchmark, tracks, target)
    if (benchmark / shipped.TUNED_UNPACKED).is_file():  # its tuned tables are the shipped ones, laid out
        logger.info("the tuned tables in %s were laid out from the shipped tuned cells: those are kept", benchmark)
    elif all(tables.read(benchmark, track) is not None for track in tracks):
        family = shipped.load(written)
        digests = dict(zip(family["dataset"], family["data_sha256"]))
        found = tuning_report.read(benchmark, tracks)  # with the choice's entrants
        tuned = shipped.collect_tuned({track: rows for track, (rows, _) in found.items()}, digests)
        logger.info("%s tuned family cells -> %s", f"{len(tuned):,}", shipped.TUNED_FILE)
        shipped.write(tuned, target.parent / shipped.TUNED_FILE.name)
        searched = {track: tables.read(benchmark, track)[1] for track in tracks}
        if all(rows is not None for rows in searched.values()):
            settings = shipped.collect_settings(searched)
            logger.info("%s tuned settings' scores -> %s", f"{len(settings):,}", shipped.SETTINGS_FILE)
            shipped.write(settings, target.parent / shipped.SETTINGS_FILE.name)
    return written


#: The first cell of the README table's row of the family benchmark (:func:`benchmark_row`).
FAMILY_ROW = "| **the family** |"


def with_benchmark_row(text: str, row: str, name: str = "README.md") -> str:
    """``text`` (of the file ``name``) with its family benchmark row replaced by ``row``, or, when the table has
    none, ``row`` put after the row of ``make reproduce-all``."""
    lines = split_at_markers(text, name)[1]
    at = [i for i, line in enumerate(lines) if line.startswith(FAMILY_ROW)]
    if at:
        lines[at[0]] = row
    else:
        after = [i for i, line in enumerate(lines) if line.startswith("| **all of them** |")]
        if not after:
            raise UserError(f"{name}'s results table has no row of make reproduce-all to put the family's after")
        lines.insert(after[0] + 1, row)
    return replace_between(text, lines, name)


def publish_benchmark(benchmark: Path, target: Path, readme: Path) -> list[Path]:
    """Publish the family benchmark in ``benchmark`` alone, when no reproduction is at hand: its report and
    figures replace ``target/benchmark/``, its cells' costs replace theirs in ``target``'s cost table (the
    others kept), and its row replaces the family's row of ``readme``'s table (the papers' rows kept). The
    benchmark and the reproduction are separate runs, so each can be published without running the other."""
    row = benchmark_row(benchmark, target)
    if row is None:
        logger.info("%s holds no benchmark report: the snapshot and %s are kept", benchmark, readme)
        return []
    folder = target / "benchmark"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    copied = []
    for path in benchmark_files(benchmark):
        shutil.copyfile(path, folder / path.name)
        copied.append(folder / path.name)
    if (benchmark / schedule.SCHEDULE).is_file():
        copied.append(merge_costs(pd.read_csv(benchmark / schedule.SCHEDULE), target / COSTS))
    write_atomic(readme, with_benchmark_row(readme.read_text(), row, readme.name))
    return copied


def merge_costs(cells: pd.DataFrame, path: Path) -> Path:
    """The cost table at ``path`` with the costs of the schedule rows ``cells``
    (:func:`src.running.pool.schedule.costs_of`) in place of its rows of the same (job, k), the other rows kept."""
    fresh = schedule.costs_of(cells)
    try:
        kept = pd.read_csv(path)
    except (OSError, pd.errors.EmptyDataError):
        kept = fresh.iloc[:0]
    keys = set(zip(fresh["job"], fresh["k"]))
    kept = kept[[key not in keys for key in zip(kept["job"], kept["k"])]]
    merged = pd.concat([kept, fresh], ignore_index=True).sort_values(["job", "k"], kind="stable")
    write_atomic(path, merged.to_csv(index=False))
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0])
    parser.add_argument("--outputs", default=str(papers.OUTPUTS), help="the reproduction's outputs directory")
    parser.add_argument("--readme", default="README.md", help="the README whose results table is rewritten")
    parser.add_argument("--index", default=str(INDEX), help="the docs' first page, whose figure is rewritten")
    parser.add_argument("--snapshot", default=str(SNAPSHOT), help="where the reports are copied")
    parser.add_argument("--shipped", default=str(shipped.FILE), help="where the family's cells are written")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="[%(levelname)s] %(message)s")
    try:
        outputs, readme = Path(args.outputs), Path(args.readme)
        benchmark = outputs.parent / "benchmark"
        written = ship_family_cells(benchmark, Path(args.shipped))
        finished = written is not None or shipped.unpacked(benchmark) is not None  # a run's, or the shipped cells'
        if finished and schedule.cell_table(outputs) is None:
            published = publish_benchmark(benchmark, Path(args.snapshot), readme)
            logger.info("published %d files of the benchmark (%s); %s holds no finished reproduction, so the papers' "
                        "rows of the README's table and their part of %s are kept (run make reproduce-all first to "
                        "rewrite them)", len(published), f"its cells written to {written}" if written else
                        "laid out from the shipped cells", outputs, args.snapshot)
            return 0
        target = Path(args.snapshot)
        lines = table(outputs, papers.HOME, target)
        copied = snapshot(outputs, target)
        alt = front_figure(pd.read_csv(outputs / "scorecard.csv"), target)
        scorecard = f"[the scorecard]({target.as_posix()}/README.md)"
        figure = figure_lines(alt, f"{target.as_posix()}/{FRONT}", scorecard)
        write_atomic(readme, replace_between(readme.read_text(), figure + lines))
        write_index(Path(args.index), alt, target)
    except (UserError, OSError) as exc:
        logger.error("%s", exc)
        return 2
    logger.info("wrote the results table of %s and %d files into %s", readme, len(copied), args.snapshot)
    return 0


if __name__ == "__main__":
    sys.exit(main())

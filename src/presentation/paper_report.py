"""A paper's reproduction report: its tables from our runs, beside every number its text gives.

Usage::

    python -m src.presentation.paper_report PAPER [--runs DIR] [--datasets NAME ...] [--out DIR]

Reads every ``results.csv`` under ``outputs/reproduce/PAPER/runs`` and the runs of the papers it depends on
(never recomputes) and the published claims in ``papers/PAPER/published.yaml`` (and ``tables.csv``), as
the paper's home says (:mod:`src.reproduction.homes`), and writes into ``outputs/reproduce/PAPER/``: the merged
``results.csv``; per data set the paper's table (Markdown, LaTeX, CSV) and the AC/NMI-vs-k figure; the full
grid of every tuned baseline (``table_<dataset>_grid.*``); ``forest.png``, every published number of the paper
against ours with the scorecard's verdicts (:func:`forest_section`); ``report.md``, which ends with the
provenance of the report and of the runs it read; and ``provenance.json``. Rows of one method label computed under
different settings or code stop the report with one line naming two of the files.

Tuned baselines (GNMF, SemiGNMF: "parameters set to give the best result"): every grid value is run and
kept; in the paper's table a family is represented by the value the paper's text or the reference code gives
(``families`` in the paper's ``published.yaml``), a label-free choice. The value an oracle tuned on the test
labels would pick is named beside it as an extra, never used in a table or claim.

Claims are tested on the paired trials: for each (k, trial) cell both methods saw the same classes, labels
and initialization, so the 90 differences are paired; a one-sided Wilcoxon signed-rank test asks whether
the method beats the baseline. All p-values of a report are adjusted together with Holm's method; a claim
counts as reproduced when our gain is positive and its adjusted p < 0.05.

The references of the label tracks (:mod:`src.methods.references`: a classifier of the labelled samples, which
none of the papers compared with) may run on the same trials (a sweep of the paper's ``reproduce.yaml``). Their
rows are set apart before anything else reads the runs (:func:`split_references`): they enter no table, figure,
claim, verdict or ranking, nor the merged ``results.csv`` the scorecard and the readings read, and are kept in
``references.csv`` beside it. One section of their own (:func:`references_section`) sets them beside the
paper's method, as an extra.
"""

import argparse
import logging
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from ..running.settings import REFERENCE, method_kind
from ..reproduction import homes as papers
from ..running import provenance
from . import convergence, published as numbers_of
from .published import gain_verdict as verdict, paired_gain, tested_gain
from .report import describe_protocol, method_order, write_reports
from ..errors import ConfigError
from ..files import write_atomic
from ..running.results import MixedResultsError, find_results, read_results
from .ranking import ranking_section
from .tables import paper_table, to_csv, to_latex, to_markdown
from .verdict_figures import FOREST, VERDICTS, forest_alt, forest_title, plot_forest
from .verdicts import TOO_FEW_TRIALS, holm, single_trial_note

logger = logging.getLogger(__name__)

METRIC_NAMES = {"acc": "AC", "nmi": "NMI"}
#: Where a report keeps the references' rows, beside the merged ``results.csv`` of the paper's methods.
REFERENCES_FILE = "references.csv"
#: The heading of :func:`references_section`.
REFERENCES_HEADING = ("## Beside the paper: what a person with the same labels would use instead "
                      "(an extra, not in the paper)")


def split_references(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows of the paper's methods and those of the references (:func:`src.running.settings.method_kind`), apart.

    The paper compared with no classifier: a reference's row must enter none of its tables, claims or
    rankings, and a baseline read as "best other" must never be one, so every reader of a paper's rows takes
    the first part only. Each part keeps the columns it fills: a column only the other part fills (the
    references' parameters, the paper's methods' readouts) goes with that part, so that the paper's rows have
    the columns they had without the references.
    """
    references = [name for name in frame["estimator"].unique() if method_kind(name) == REFERENCE]
    reference = frame["estimator"].isin(references)
    ours, theirs = frame[~reference], frame[reference]

    def filled_by_the_other(rows, other):
        return [c for c in frame if len(rows) and rows[c].isna().all() and other[c].notna().any()]

    return ours.drop(columns=filled_by_the_other(ours, theirs)), theirs.drop(columns=filled_by_the_other(theirs, ours))


def without_references(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of the paper's methods alone (:func:`split_references`)."""
    return split_references(frame)[0]


def family_spec(spec) -> dict:
    """A ``families`` entry as ``{estimator, param, value}`` (a bare estimator name: its only variant)."""
    return {"estimator": spec} if isinstance(spec, str) else dict(spec)


def choose_tuned(frame: pd.DataFrame, families: dict) -> tuple[pd.DataFrame, list[dict]]:
    """Stand each tuned family's grid by its label-free representative, per data set.

    The representative is the grid value the paper's text or the reference code gives (``param`` =
    ``value`` in ``families``), never one chosen by the test labels. Returns the rows of the paper's table
    (the representative relabelled with the family name) and one record per (data set, family) with the
    representative, the variant an oracle would pick (best average accuracy; a labelled extra, not in any
    table) and the averages of all variants.
    """
    specs = {family: family_spec(spec) for family, spec in families.items()}
    estimators = {spec["estimator"] for spec in specs.values()}
    chosen, kept = [], []
    for (dataset, rows) in frame.groupby("dataset"):
        for family, spec in specs.items():
            grid = rows[rows["estimator"] == spec["estimator"]]
            if grid.empty:
                continue
            averages = grid.groupby(["method", "k"])["acc"].mean().groupby("method").mean()
            if "param" in spec:
                column = f"param_{spec['param']}"
                if column not in grid:
                    raise ConfigError(f"{dataset}/{family}: the results have no column {column} (computed before "
                                      "parameters were recorded); recompute them")
                representative = grid[np.isclose(pd.to_numeric(grid[column]), float(spec["value"]))]
                if representative.empty:
                    raise ConfigError(f"{dataset}/{family}: no run with {spec['param']}={spec['value']} "
                                      f"(the family's label-free value) among {', '.join(sorted(averages.index))}")
            else:
                representative = grid
            labels = representative["method"].unique()
            if len(labels) != 1:
                raise ConfigError(f"{dataset}/{family}: {len(labels)} variants ({', '.join(sorted(labels))}) and no "
                                  "label-free value to choose one (set param and value in the paper's families)")
            chosen.append({"dataset": dataset, "family": family, "chosen": labels[0], "oracle": averages.idxmax(),
                           "grid": ", ".join(f"{m}: {100 * v:.2f}" for m, v in averages.sort_index().items())})
            kept.append(representative.assign(method=family))
        kept.append(rows[~rows["estimator"].isin(estimators)])
    return pd.concat(kept, ignore_index=True), chosen


def paper_numbers(name: str, merged: Path, home: Path = papers.HOME) -> list[dict]:
    """Every published number of paper ``name`` with ours beside it, from its merged ``results.csv`` (not yet
    judged), as the scorecard reads it: the tables' rows with the tuned families stood by their label-free
    value (:func:`choose_tuned`), and no reference's (:func:`without_references`)."""
    paper = papers.load(name, home)
    published = yaml.safe_load(paper.published.read_text())
    frame, _ = choose_tuned(without_references(pd.read_csv(merged)), published.get("families", {}))
    tables = pd.read_csv(paper.tables) if paper.tables.is_file() else None
    return numbers_of.numbers(name, frame, published, tables)


def judged_numbers(merged: dict[str, Path], home: Path = papers.HOME) -> list[dict]:
    """The scorecard's rows: every published number of the papers in ``merged`` (name -> merged
    ``results.csv``) with ours beside it, judged together (:func:`src.presentation.published.judge`: Holm's
    adjustment over all of them)."""
    rows = []
    for name, path in merged.items():
        rows += paper_numbers(name, path, home)
    return numbers_of.judge(rows)


def scorecard_rows(paper: str, merged: Path, outputs: Path, home: Path = papers.HOME) -> tuple[pd.DataFrame, int]:
    """The rows of ``paper`` (merged results at ``merged``) as the scorecard over ``outputs`` judges them now,
    flat (:func:`src.presentation.published.table`), and how many numbers Holm's adjustment ran over.

    The other papers are read from ``outputs/<name>/results.csv`` where it exists, as the scorecard reads them,
    so that a paper's report shows the scorecard's verdicts before the scorecard itself is built (a single
    ``make reproduce-<paper>`` does not build it). Another paper whose results cannot be read is left out of
    the adjustment with a warning, rather than stopping this paper's report.
    """
    rows = paper_numbers(paper, merged, home)
    for name in papers.names(home):
        other = Path(outputs) / name / "results.csv"
        if name == paper or not other.is_file():
            continue
        try:
            rows += paper_numbers(name, other, home)
        except (ConfigError, OSError, KeyError, ValueError) as exc:
            logger.warning("%s: left out of the verdicts' Holm adjustment in %s's report (%s)", name, paper, exc)
    numbers_of.judge(rows)
    table = numbers_of.table(rows)
    return table[table["paper"] == paper], int(table["verdict"].isin(VERDICTS).sum())


def forest_lines(rows: pd.DataFrame, effects: pd.DataFrame | None = None) -> list[str]:
    """The Markdown that shows a paper's forest plot (``forest.png`` beside the report): its caption and the
    image with its alternative text in numbers. Neither says how many numbers Holm's adjustment ran over, which
    the scorecard may change when it redraws the figure later; the figure's title does."""
    readings = "" if effects is None else (
        " An arrow goes from ours to ours under each reading that brings a number that does not agree to *agrees*; "
        "the readings are named on the right, with their labels (an oracle's arrow is dotted).")
    return ["Each row is one number the paper prints or quotes, grouped as its tables are: ours - the paper's "
            "(marker) with its 90% interval (bar). A number *agrees* when its bar lies inside the grey band of "
            "+-5 points. The verdicts are the scorecard's, Holm-adjusted over every number of the papers "
            "reproduced when the figure was drawn (its title says how many); the scorecard redraws it when it is "
            "built (`make reproduce-all`, `make explain-all`)." + readings, "",
            f"![{forest_alt(rows, effects)}]({FOREST})", ""]


def draw_forest(paper: str, merged: Path, outputs: Path, home: Path, path: Path,
                effects: pd.DataFrame | None = None) -> list[str]:
    """Draw the paper's forest plot at ``path`` (with the readings' ``effects`` that bring a number back, if
    given), with the scorecard's verdicts over the papers reproduced in ``outputs`` (:func:`scorecard_rows`;
    ``merged`` is the paper's ``results.csv``), and return the lines that show it (:func:`forest_lines`);
    none, and no figure, when no number was compared."""
    rows, compared = scorecard_rows(paper, merged, outputs, home)
    if not plot_forest(rows, path, effects, forest_title(paper, compared)):
        return []
    return forest_lines(rows, effects)


def forest_section(paper: str, out: Path, home: Path = papers.HOME) -> list[str]:
    """The report's section that shows the paper's forest plot (``out/forest.png``: :func:`draw_forest`)."""
    lines = draw_forest(paper, out / "results.csv", out.parent, home, out / FOREST)
    if not lines:
        rows, _ = scorecard_rows(paper, out / "results.csv", out.parent, home)
        waiting = int((rows["verdict"] == TOO_FEW_TRIALS).sum())
        if not waiting:
            return []
        lines = [f"No forest plot: none of the {waiting} published numbers we have means for can be judged, each "
                 f"{TOO_FEW_TRIALS} per k. Their gaps are in the tables below.", ""]
    return ["## Every published number against ours", "", *lines]


def claims_section(frame: pd.DataFrame, published: dict) -> list[str]:
    """The paper's quoted gains and the direction of its main claims, each a paired one-sided test.

    All the report's p-values form one family, adjusted with Holm's method; verdicts use the adjusted ones.
    """
    claims = [(claim, paired_gain(frame, claim["dataset"], claim["method"], claim["baseline"], claim["metric"]))
              for claim in published.get("claims", [])]
    directions = published.get("directions") or {}
    cells = [((dataset, method, baseline), [paired_gain(frame, dataset, method, baseline, m) for m in ("acc", "nmi")])
             for dataset in directions.get("datasets", []) for method in directions.get("methods", [])
             for baseline in directions.get("baselines", [])]
    results = [r for _, r in claims] + [r for _, pair in cells for r in pair]
    tested = [r for r in results if tested_gain(r)]
    for result, adjusted in zip(tested, holm([r["p"] for r in tested])):
        result["p_holm"] = adjusted
    lines = ["## The paper's quoted gains, beside ours", "",
             "Gains are percentage points on the average over k. p: one-sided Wilcoxon signed-rank test over "
             f"the paired (k, trial) cells; p (Holm): adjusted with Holm's method over all {len(tested)} tests "
             "of this report, which the verdicts use.", "",
             "| data set | claim | metric | paper | ours | p | p (Holm) | pairs | verdict | source |",
             "|---" * 10 + "|"]
    for claim, result in claims:
        ours = f"{result['gain']:+.2f} (vs {result['baseline']})" if result else "n/a"
        p = f"{result['p']:.3g} | {result['p_holm']:.3g}" if tested_gain(result) else \
            f"{verdict(result)} | {verdict(result)}" if result else "n/a | n/a"
        lines.append(f"| {claim['dataset']} | {claim['method']} over {claim['baseline']} | "
                     f"{METRIC_NAMES[claim['metric']]} | +{claim['gain']} | {ours} | {p} | "
                     f"{result['n_pairs'] if result else 0} | {verdict(result)} | {claim['source']} |")
    if cells:
        lines += ["", "## Direction of the main claims", "",
                  "| data set | method | baseline | AC gain | p (Holm) | NMI gain | p (Holm) | verdict (AC / NMI) |",
                  "|---" * 8 + "|"]
        for (dataset, method, baseline), pair in cells:
            text = " | ".join(f"{r['gain']:+.2f} | {r['p_holm']:.3g}" if tested_gain(r) else
                              f"{r['gain']:+.2f} | {verdict(r)}" if r else "n/a | n/a" for r in pair)
            lines.append(f"| {dataset} | {method} | {baseline} | {text} | {' / '.join(verdict(r) for r in pair)} |")
    return lines


def beside_means(rows: pd.DataFrame, order: list[str]) -> pd.DataFrame:
    """AC, NMI and the classes given back (``given_unlabelled``, where the rows have it) of each method of
    ``order``, in percent, on the (k, trial) cells of one data set that all of them have.

    Each is the mean over k of the per-k means, the papers' average over k (:func:`.published.paired_gain`'s
    too). One row per method, indexed by it; ``cells`` counts the shared cells.
    """
    rows = rows[rows["method"].isin(order)]
    cells = rows.groupby(["k", "trial"])["method"].nunique()
    shared = cells.index[cells == len(order)]
    rows = rows.set_index(["k", "trial"]).loc[shared].reset_index()
    columns = [c for c in ("acc", "nmi", "given_unlabelled") if c in rows]
    means = rows.groupby(["method", "k"])[columns].mean().groupby("method").mean() * 100
    return means.reindex(order).assign(cells=len(shared))


def beside_tests(rows: pd.DataFrame, own: str, best: str) -> dict[str, tuple]:
    """The paper's method ``own`` against the reference ``best`` on one data set's rows, per metric: the paired
    one-sided Wilcoxon tests of :func:`.published.paired_gain` both ways, (own above best, best above own)."""
    return {metric: (paired_gain(rows, rows["dataset"].iloc[0], own, best, metric),
                     paired_gain(rows, rows["dataset"].iloc[0], best, own, metric)) for metric in METRIC_NAMES}


def beside_verdict(above, below) -> str:
    """Whether the paper's method is better than, worse than or not separated from a reference, from the two
    one-sided tests of :func:`beside_tests` (Holm-adjusted): one that :func:`.published.gain_verdict` calls
    reproduced separates them. Read before the reference's name: "better than LabelSpreading"."""
    if not tested_gain(above):
        return "not tested (too few trials) against"
    if verdict(above) == "reproduced":
        return "better than"
    if verdict(below) == "reproduced":
        return "worse than"
    return "not separated from"


def beside_sentence(dataset: str, protocol: str, own: str, best: str, tests: dict[str, tuple] | None) -> str:
    """The section's sentence on one data set, built from its tests (:func:`beside_tests`, Holm-adjusted; None
    when the paper's method has no rows there)."""
    if tests is None:
        return f"- **{dataset}** ({protocol}): {own} has no rows here, nothing to set beside the references."
    parts = []
    for i, (metric, (above, below)) in enumerate(tests.items()):
        against = f"{best}, the best reference," if i == 0 else "it"
        numbers = ""
        if tested_gain(above):
            p = above["p_holm"] if above["gain"] > 0 else below["p_holm"]
            numbers = f" ({above['gain']:+.2f} points, p (Holm) = {p:.3g}, {above['n_pairs']} pairs)"
        parts.append(f"{beside_verdict(above, below)} {against} in {METRIC_NAMES[metric]}{numbers}")
    return f"- **{dataset}** ({protocol}): {own} is {' and '.join(parts)}."


def references_section(table_rows: pd.DataFrame, references: pd.DataFrame, published: dict) -> list[str]:
    """The paper's own method beside the references on the same trials, an extra the paper does not have.

    ``table_rows`` are the rows of the paper's tables (:func:`choose_tuned`), ``references`` the references'
    rows of the same runs (:func:`split_references`); the paper's own method is the first of its
    ``directions: methods``. Per data set, the means of :func:`beside_means` and, against the reference of
    best AC there, the paired tests of :func:`beside_tests`, Holm-adjusted over this section's tests alone (the
    report's claims keep their own adjustment), each data set's reading in one sentence
    (:func:`beside_sentence`). None without references' rows or an own method.
    """
    own = ((published.get("directions") or {}).get("methods") or [None])[0]
    if references.empty or own is None:
        return []
    names = sorted(references["method"].unique())
    blocks = []
    for dataset, refs in references.groupby("dataset"):
        rows = pd.concat([table_rows[(table_rows["dataset"] == dataset) & (table_rows["method"] == own)], refs])
        present, here = own in set(rows["method"]), sorted(refs["method"].unique())
        means = beside_means(rows, [own, *here] if present else here)
        best = means.loc[here, "acc"].idxmax() if means.loc[here, "acc"].notna().any() else here[0]
        blocks.append((dataset, describe_protocol(refs), means, best, beside_tests(rows, own, best) if present
                       else None))
    tested = [r for *_, tests in blocks for pair in (tests or {}).values() for r in pair if tested_gain(r)]
    for result, adjusted in zip(tested, holm([r["p"] for r in tested])):
        result["p_holm"] = adjusted
    given = "given_unlabelled" in references
    lines = [REFERENCES_HEADING, "",
             f"**An extra, not in the paper: the paper did not compare {own} with a classifier.** A person with "
             f"the same labelled samples could classify the unlabelled ones instead of clustering: the references "
             f"({', '.join(names)}; `src/methods/references.py`) do, on the very trials of {own} (same classes, "
             "labelled samples and scoring, the paper's protocol). They enter no table, claim, verdict or ranking "
             f"of this report; their rows are in `{REFERENCES_FILE}`.", "",
             "Means in percent, over the (k, trial) cells every method of the data set has (average over k). AC "
             "and NMI are scored as the paper scores them (the labelled samples too, where it scores every sample)"
             + ("; the classes given back count the unlabelled samples alone: the share whose class is right when "
                "each cluster takes the class of its labelled samples" if given else "") + ". Tests: the paired "
             f"one-sided Wilcoxon signed-rank tests of the report's claims, both ways, of {own} against the "
             f"reference of best AC on the data set, Holm-adjusted over this section's {len(tested)} tests.", "",
             "| data set | method | AC | NMI |" + (" classes given back |" if given else "") + " cells |",
             "|---" * (5 + given) + "|"]
    for dataset, _, means, best, _ in blocks:
        for method, row in means.iterrows():
            label = method if method == own else f"{method} (reference{', best' if method == best else ''})"
            values = [row["acc"], row["nmi"], *([row.get("given_unlabelled", math.nan)] if given else [])]
            lines.append(f"| {dataset} | {label} | " + " | ".join("n/a" if pd.isna(v) else f"{v:.2f}" for v in values)
                         + f" | {int(row['cells'])} |")
    lines += ["", *[beside_sentence(dataset, protocol, own, best, tests)
                    for dataset, protocol, _, best, tests in blocks], ""]
    return lines


def published_tables_section(frame: pd.DataFrame, published_tables: pd.DataFrame, names: dict) -> list[str]:
    """Our mean per (k, method) beside the paper's printed table, cell by cell, with the differences."""
    lines = ["## Our numbers beside the paper's tables", "",
             "Each cell: ours / paper (ours - paper), mean in percent. The Avg rows are checked against a "
             "5-point tolerance.", ""]
    published_tables = published_tables.assign(method=published_tables["method"].replace(names))
    for dataset, paper in published_tables.groupby("dataset"):
        rows = frame[frame["dataset"] == dataset]
        if rows.empty:
            continue
        for metric, block in paper.groupby("metric"):
            ours = rows.groupby(["k", "method"])[metric].mean().unstack("method") * 100
            ours.loc["Avg"] = ours.mean()
            ours.index = ours.index.map(str)
            methods = [m for m in block["method"].unique()]
            lines += [f"**{dataset}, {METRIC_NAMES[metric]}**", "", "| k | " + " | ".join(methods) + " |",
                      "|---" * (len(methods) + 1) + "|"]
            for k, cells in block.groupby("k", sort=False):
                out = []
                for _, cell in cells.iterrows():
                    value = ours.get(cell["method"], pd.Series(dtype=float)).get(str(k).replace("Avg.", "Avg"))
                    out.append("n/a" if value is None or pd.isna(value) else
                               f"{value:.2f} / {cell['mean']:.2f} ({value - cell['mean']:+.2f})")
                lines.append(f"| {k} | " + " | ".join(out) + " |")
            avg = block[block["k"].astype(str).str.startswith("Avg")]
            within = [f"{c['method']}: {'yes' if abs(ours[c['method']]['Avg'] - c['mean']) <= 5 else 'no'}"
                      for _, c in avg.iterrows() if c["method"] in ours]
            lines += ["", "Avg within 5 points: " + ", ".join(within), ""]
    return lines


def averages_section(frame: pd.DataFrame, averages: list, names: dict) -> list[str]:
    """Our average over k beside the paper's printed averages (FNMF's Tables 2 and 3)."""
    methods = [key for key in averages[0] if key not in ("dataset", "metric")]
    lines = ["## Our averages beside the paper's", "", "Each cell: ours / paper (ours - paper), percent.", "",
             "| data set | metric | " + " | ".join(methods) + " |", "|---" * (len(methods) + 2) + "|"]
    renamed = frame.assign(method=frame["method"].replace(names))
    for entry in averages:
        rows = renamed[renamed["dataset"] == entry["dataset"]]
        metric = entry["metric"]
        ours = rows.groupby(["method", "k"])[metric].mean().groupby("method").mean() * 100
        cells = [f"{ours[m]:.2f} / {entry[m]:.2f} ({ours[m] - entry[m]:+.2f})" if m in ours else f"n/a / {entry[m]:.2f}"
                 for m in methods]
        lines.append(f"| {entry['dataset']} | {METRIC_NAMES[metric]} | " + " | ".join(cells) + " |")
    return lines + [""]


def subrun_section(frame: pd.DataFrame) -> list[str]:
    """Average AC and NMI when the sub-run is chosen by accuracy (oracle) and by objective (label-free)."""
    if "acc_by_objective" not in frame or frame["acc_by_objective"].isna().all():
        return []
    lines = ["## Sub-run choice: oracle (best accuracy) against label-free (lowest objective)", "",
             "| data set | method | AC oracle | AC by objective | NMI oracle | NMI by objective |", "|---" * 6 + "|"]
    for (dataset, method), rows in frame.dropna(subset=["acc_by_objective"]).groupby(["dataset", "method"]):
        avg = {c: 100 * rows.groupby("k")[c].mean().mean() for c in
               ("acc_by_accuracy", "acc_by_objective", "nmi_by_accuracy", "nmi_by_objective")}
        lines.append(f"| {dataset} | {method} | {avg['acc_by_accuracy']:.2f} | {avg['acc_by_objective']:.2f} | "
                     f"{avg['nmi_by_accuracy']:.2f} | {avg['nmi_by_objective']:.2f} |")
    return lines + [""]


def cost_section(frame: pd.DataFrame, out: Path) -> list[str]:
    lines = ["## Cost", ""]
    timing = out / "wall_seconds.txt"
    if timing.exists():
        record = provenance.read(out / provenance.FILE) or {}
        cores = f" on {record['cores_available']} cores" if record.get("cores_available") else ""
        lines.append(f"Wall time of the whole `make reproduce-{out.name}`: {float(timing.read_text()):.0f} s{cores}.")
    per_method = frame.groupby(["dataset", "method"])[["fit_seconds", "kmeans_seconds"]].sum()
    lines += ["", f"Summed compute: {per_method.values.sum():.0f} s of fitting and KMeans over all cells.", ""]
    if "peak_rss_mb" in frame:
        lines.append(f"Peak memory of any job process: {frame['peak_rss_mb'].max():.0f} MB.")
    lines += ["", "| data set | method | fit s (sum) | KMeans s (sum) |", "|---|---|---|---|"]
    for (dataset, method), row in per_method.iterrows():
        lines.append(f"| {dataset} | {method} | {row['fit_seconds']:.1f} | {row['kmeans_seconds']:.1f} |")
    return lines


def write_rows(frame: pd.DataFrame, published: dict, out: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The paper's rows and the references' (an extra, read by :func:`references_section` alone), written as
    ``out/results.csv`` and ``out/references.csv`` (an earlier build's references removed when none are left);
    with ``estimators`` in ``published``, the paper's methods only (runs shared with another paper)."""
    frame, references = split_references(frame)
    if published.get("estimators"):
        frame = frame[frame["estimator"].isin(published["estimators"])]
    write_atomic(out / "results.csv", frame.to_csv(index=False))
    if not references.empty:
        write_atomic(out / REFERENCES_FILE, references.to_csv(index=False))
    else:
        (out / REFERENCES_FILE).unlink(missing_ok=True)
    return frame, references


def write_grid_tables(frame: pd.DataFrame, published: dict, out: Path) -> None:
    """Every grid value of the tuned baselines per data set, as ``table_<dataset>_grid.{md,tex,csv}``."""
    for dataset, rows in frame.groupby("dataset"):
        tuned = rows[rows["estimator"].isin([family_spec(f)["estimator"]
                                              for f in published.get("families", {}).values()])]
        if not tuned.empty:
            table = paper_table(tuned, method_order(tuned))
            caption = f"Every grid value of the tuned baselines on {dataset}"
            write_atomic(out / f"table_{dataset}_grid.md", to_markdown(table, caption))
            write_atomic(out / f"table_{dataset}_grid.tex", to_latex(table, caption))
            write_atomic(out / f"table_{dataset}_grid.csv", to_csv(tuned, method_order(tuned)))


def build(paper: str, runs: list[Path], out: Path, datasets: list[str] | None = None,
          home: Path = papers.HOME) -> Path:
    """Write the paper's tables, figures and ``report.md`` into ``out``; returns the report's path.

    ``runs`` may name several sweep directories (e.g. another paper's runs under the same protocol,
    whose paired trials are identical); ``datasets`` keeps only those data sets. The published numbers are
    read from ``home/<paper>/``.
    """
    started = provenance.now()
    published = yaml.safe_load((home / paper / "published.yaml").read_text())
    files = find_results(runs)
    frame = read_results(files)
    if datasets:
        frame = frame[frame["dataset"].isin(datasets)]
    frame, references = write_rows(frame, published, out)
    table_rows, chosen = choose_tuned(frame, published.get("families", {}))
    write_reports(table_rows, out)
    write_grid_tables(frame, published, out)
    lines = [f"# Reproduction report: {paper.upper()}", "", f"Paper: {published['paper']}", "",
             f"Built by `python -m src.presentation.paper_report {paper}` from {len(frame)} result rows "
             f"({frame['dataset'].nunique()} data sets, {frame['method'].nunique()} method variants); "
             "every number below comes from those rows"
             + (f", but for the {len(references)} rows of the references in their own section" if len(references)
                else "") + ".", ""]
    note = single_trial_note(frame)
    if note:
        logger.warning("%s: %s", paper, note)
        lines += [f"**{note}**", ""]
    lines += forest_section(paper, out, home)  # the figure first: every published number against ours
    lines += ["## Our tables", ""]
    for dataset, rows in table_rows.groupby("dataset"):
        lines += [to_markdown(paper_table(rows, method_order(rows)), f"{dataset}"),
                  f"![{dataset}](figure_{dataset}.png)", ""]
    if chosen:
        lines += ["## Tuned baselines", "", "Each family is represented in the tables by the value the paper's "
                  "text or the reference code gives (label-free). The papers tuned these on the test labels "
                  "('set to give the best result'); the value such an oracle would pick is shown as an extra "
                  "and enters no table; every value is kept in `table_<dataset>_grid.*`.", "",
                  "| data set | family | in the tables | oracle's pick (extra) | average AC (%) of every grid value |",
                  "|---|---|---|---|---|"]
        lines += [f"| {c['dataset']} | {c['family']} | {c['chosen']} | {c['oracle']} | {c['grid']} |" for c in chosen]
        lines.append("")
    tables = home / paper / "tables.csv"
    if tables.exists():
        lines += published_tables_section(table_rows, pd.read_csv(tables), published.get("method_names", {}))
    if published.get("published_averages"):
        lines += averages_section(table_rows, published["published_averages"], published.get("method_names", {}))
    lines += subrun_section(frame)
    lines += claims_section(table_rows, published) + [""]
    lines += ranking_section(table_rows, published, out)
    lines += references_section(table_rows, references, published)
    lines += convergence.section(frame)
    lines += ["## Notes and known causes of differences", ""] + [f"- {note}" for note in published.get("notes", [])]
    extra = out / "extra.md"
    if extra.exists():
        lines += ["", extra.read_text()]
    lines += [""] + cost_section(frame, out)
    run_records = provenance.of_results(files)
    record = provenance.collect(started, provenance.now(), extra={"sources": [str(f) for f in files]})
    provenance.write(out, {**record, "runs": [r for r in run_records if r is not None]})
    lines += ["", *provenance.markdown(record, [r for r in run_records if r is not None])]
    if None in run_records:
        lines.append(f"{run_records.count(None)} of the {len(files)} results files have no {provenance.FILE} "
                     "(computed before provenance was recorded).")
    path = out / "report.md"
    write_atomic(path, "\n".join(lines) + "\n")
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0])
    parser.add_argument("paper", help="paper key: a directory papers/<paper>/")
    parser.add_argument("--runs", nargs="+", help="directories of the runs (default outputs/reproduce/<paper>/runs "
                        "and the runs of the papers it depends on)")
    parser.add_argument("--datasets", nargs="+",
                        help="keep only these data sets (default: the paper's report.datasets)")
    parser.add_argument("--out", help="output directory (default outputs/reproduce/<paper>)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="[%(levelname)s] %(message)s")
    try:
        paper = papers.load(args.paper)
    except ConfigError as exc:
        logger.error("%s", exc)
        return 2
    out = Path(args.out) if args.out else paper.out()
    runs = [Path(r) for r in args.runs] if args.runs else paper.runs(out)
    datasets = args.datasets or paper.report_datasets
    try:
        logger.info("wrote %s", build(args.paper, runs, out, datasets))
    except (FileNotFoundError, MixedResultsError) as exc:
        logger.error("%s", exc)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

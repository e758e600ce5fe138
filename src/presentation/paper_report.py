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
"""

import argparse
import logging
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from ..reproduction import homes as papers
from ..running import provenance
from . import convergence, published as numbers_of
from .published import gain_verdict as verdict, paired_gain, tested_gain
from .report import method_order, write_reports
from ..errors import ConfigError
from ..files import write_atomic
from ..running.results import MixedResultsError, find_results, read_results
from .ranking import ranking_section
from .tables import paper_table, to_csv, to_latex, to_markdown
from .verdict_figures import FOREST, VERDICTS, forest_alt, forest_title, plot_forest
from .verdicts import TOO_FEW_TRIALS, holm, single_trial_note

logger = logging.getLogger(__name__)

METRIC_NAMES = {"acc": "AC", "nmi": "NMI"}


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
    value (:func:`choose_tuned`)."""
    paper = papers.load(name, home)
    published = yaml.safe_load(paper.published.read_text())
    frame, _ = choose_tuned(pd.read_csv(merged), published.get("families", {}))
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
    if published.get("estimators"):  # the paper's methods only, when runs are shared with another paper
        frame = frame[frame["estimator"].isin(published["estimators"])]
    write_atomic(out / "results.csv", frame.to_csv(index=False))
    table_rows, chosen = choose_tuned(frame, published.get("families", {}))
    write_reports(table_rows, out)
    for dataset, rows in frame.groupby("dataset"):
        tuned = rows[rows["estimator"].isin([family_spec(f)["estimator"]
                                              for f in published.get("families", {}).values()])]
        if not tuned.empty:
            table = paper_table(tuned, method_order(tuned))
            caption = f"Every grid value of the tuned baselines on {dataset}"
            write_atomic(out / f"table_{dataset}_grid.md", to_markdown(table, caption))
            write_atomic(out / f"table_{dataset}_grid.tex", to_latex(table, caption))
            write_atomic(out / f"table_{dataset}_grid.csv", to_csv(tuned, method_order(tuned)))
    lines = [f"# Reproduction report: {paper.upper()}", "", f"Paper: {published['paper']}", "",
             f"Built by `python -m src.presentation.paper_report {paper}` from {len(frame)} result rows "
             f"({frame['dataset'].nunique()} data sets, {frame['method'].nunique()} method variants); "
             "every number below comes from those rows.", ""]
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

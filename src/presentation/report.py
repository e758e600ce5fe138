"""Rebuild tables and figures from any set of ``results.csv`` files; never recomputes a result.

Usage::

    python -m src.presentation.report DIR_OR_FILE [DIR_OR_FILE ...] [--out OUT_DIR]

Every ``results.csv`` at or below the given paths is read (a whole multirun directory works); for each
data set one table (Markdown, LaTeX, CSV) with one column per method and one AC/NMI-vs-k figure are
written to ``OUT_DIR`` (default: the first path if it is a directory), with ``provenance.json`` (what
built them and the provenance of every run read). Rows of one method label computed under different
settings or code are refused with one line naming two of the files (:func:`src.running.results.read_results`).
"""

import argparse
import logging
import sys
from pathlib import Path

import pandas as pd

from .. import methods
from ..running import provenance
from .figures import plot_metrics_vs_k
from ..files import atomic_path, write_atomic
from ..running.results import RESULTS, MixedResultsError, find_results, read_results
from .tables import paper_table, to_csv, to_latex, to_markdown

logger = logging.getLogger(__name__)


def method_order(frame: pd.DataFrame) -> list[str]:
    """Methods in registry order (baselines first, as the papers list them), then by label."""
    rank = {name: i for i, name in enumerate(methods.NAMES)}
    pairs = frame[["method", "estimator"]].drop_duplicates("method")
    pairs = pairs.assign(order=pairs["estimator"].map(rank).fillna(len(rank)))
    return list(pairs.sort_values(["order", "method"])["method"])


def _settings(rows: pd.DataFrame, column: str) -> list:
    """The distinct values of ``column`` in ``rows`` (none if the column is absent), NaN left out."""
    if column not in rows:
        return []
    return list(pd.unique(rows[column].dropna()))


def _labels(mode, rows: pd.DataFrame) -> str:
    if mode == "none":
        return "no labels"
    if mode == "fraction":
        fractions = _settings(rows[rows["protocol_labels_mode"] == mode], "protocol_labels_fraction")
        return " / ".join(f"{float(f):.0%}" for f in fractions) + " of each class labelled" if fractions \
            else "a fraction of each class labelled"
    if mode == "per_class":
        counts = _settings(rows[rows["protocol_labels_mode"] == mode], "protocol_labels_per_class")
        return " / ".join(f"{int(c)}" for c in counts) + " labelled per class" if counts \
            else "a number labelled per class"
    return f"labels: {mode}"


def describe_protocol(rows: pd.DataFrame) -> str:
    """One line naming the protocol of one data set's rows: trials per k and, when recorded, the labels,
    rank offset, KMeans metric and which samples are scored (settings that differ are joined by "/")."""
    trials = rows.groupby(["method", "k"])["trial"].nunique()
    n = f"{trials.min()}-{trials.max()}" if trials.min() != trials.max() else f"{trials.min()}"
    parts = [f"{n} trial{'s' if trials.max() > 1 else ''} per k"]
    modes = _settings(rows, "protocol_labels_mode")
    if modes:
        parts.append(" / ".join(_labels(mode, rows) for mode in modes))
    offsets = [int(o) for o in _settings(rows, "protocol_rank_offset")]
    if offsets and offsets != [0]:
        parts.append("rank " + " / ".join(f"k + {o}" if o else "k" for o in offsets))
    metrics = _settings(rows, "protocol_kmeans_metric")
    if metrics:
        parts.append("KMeans with " + " / ".join(map(str, metrics)) + " distance")
    scored = _settings(rows, "protocol_score_on")
    if scored and scored != ["all"]:
        parts.append("scored on " + " / ".join(f"{s} samples" for s in scored))
    return "; ".join(parts)


def write_reports(frame: pd.DataFrame, out_dir: Path) -> list[Path]:
    """Write one table (md, tex, csv) and one figure per data set of ``frame``; returns the paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for dataset, rows in frame.groupby("dataset", sort=True):
        order = method_order(rows)
        table = paper_table(rows, order)
        protocol = describe_protocol(rows)
        caption = f"Clustering results on {dataset}, mean ± std over trials in % ({protocol})"
        for suffix, text in (("md", to_markdown(table, caption)), ("tex", to_latex(table, caption)),
                             ("csv", to_csv(rows, order))):
            path = out_dir / f"table_{dataset}.{suffix}"
            write_atomic(path, text)
            written.append(path)
        figure = out_dir / f"figure_{dataset}.png"
        with atomic_path(figure, suffix=".png") as tmp:  # unique per writer
            plot_metrics_vs_k(rows, f"{dataset}: accuracy and NMI against k", tmp, order,
                              caption=f"Protocol: {protocol}. Line: mean over trials; band: ± one std.")
        written.append(figure)
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", help="results.csv files or directories holding them")
    parser.add_argument("--out", help="directory for the tables and figures (default: the first path)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="[%(levelname)s] %(message)s")
    out = Path(args.out) if args.out else Path(args.paths[0])
    if not out.is_dir() and not args.out:
        out = out.parent
    started = provenance.now()
    try:
        files = find_results(args.paths)
        frame = read_results(files)
    except (FileNotFoundError, MixedResultsError) as exc:
        logger.error("%s", exc)
        return 2
    merged = out / RESULTS
    if [f.resolve() for f in files] != [merged.resolve()]:  # several sources: keep their union beside the tables
        write_atomic(merged, frame.to_csv(index=False))
        logger.info("wrote %s (%d rows from %d files)", merged, len(frame), len(files))
    for path in write_reports(frame, out):
        logger.info("wrote %s", path)
    runs = [provenance.read(f.parent / provenance.FILE) for f in files]
    provenance.write(out, provenance.collect(started, provenance.now(), extra={
        "sources": [str(f) for f in files], "runs": [r for r in runs if r is not None]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

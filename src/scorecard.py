"""The scorecard over the papers: every published number we have data for, ours beside it.

Usage::

    python -m src.scorecard [--outputs outputs/reproduce]      # the last step of make reproduce-all

Reads each paper's merged ``results.csv`` (written by :mod:`src.paper_report`) and its published numbers
(``conf/paper/<paper>/``), never recomputes a table, and writes ``<outputs>/README.md`` with one row per
published number: the LCF paper's Tables IV-V cell by cell and their averages, the FNMF paper's Tables 2-3,
the CNMF and CCF papers' quoted gains (and LCF's), and Deng Cai's whole-COIL20 demo NMI. Each row gives
ours, the paper's, the difference, a verdict and a cause: one verified by an experiment (named) or
"unknown". The tables use the label-free choices of the paper reports (:func:`src.paper_report.choose_tuned`).

Verdicts: a table or average cell "agrees" when ours is within :data:`TOLERANCE` points of the paper's;
a quoted gain is "reproduced" when ours is positive and its one-sided paired Wilcoxon test, adjusted with
Holm's method over all the gains of the scorecard, has p < 0.05.

Cai's demo is the one number computed here: GNMF's demo on the whole of COIL20 (unit-norm samples, k = 20,
his ``maxIter = 100`` with 10 starts, KMeans best of 20, NMI), over :data:`DEMO_SEEDS` seeds; its rows are
kept in ``<outputs>/coil20_demo/results.csv`` and reused when present.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from . import papers, provenance
from .errors import ConfigError
from .files import write_atomic
from .paper_report import choose_tuned, holm, paired_gain, verdict

logger = logging.getLogger(__name__)

TOLERANCE = 5.0  # points (percent) within which a table cell counts as agreeing
DEMO_SEEDS = 10
#: Deng Cai's GNMF demo on COIL20 (his web page): NMI of KMeans on the samples, of NMF and of GNMF.
CAI_COIL20_NMI = {"KMeans": 73.86, "NMF": 74.36, "GNMF": 87.60}
METRIC = {"acc": "AC", "nmi": "NMI"}


def ours_at(frame: pd.DataFrame, dataset: str, method: str, metric: str, k) -> float | None:
    """Our mean (percent) at k, or over k (mean of the per-k means) when k is "Avg"."""
    rows = frame[(frame["dataset"] == dataset) & (frame["method"] == method)]
    if rows.empty:
        return None
    per_k = rows.groupby("k")[metric].mean() * 100
    if str(k).startswith("Avg"):
        return float(per_k.mean())
    return float(per_k[int(k)]) if int(k) in per_k.index else None


def cause_of(published: dict, dataset: str, method: str) -> str:
    """The cause recorded for a difference on (dataset, method) in the paper's ``causes``, else unknown."""
    for entry in published.get("causes", []):
        if entry.get("dataset") in (dataset, "*") and entry.get("method") in (method, "*"):
            return f"{entry['cause']} (verified by {entry['verified_by']})" if entry.get("verified_by") \
                else f"{entry['cause']} (not verified)"
    return "unknown"


def cell_rows(name: str, frame: pd.DataFrame, published: dict, tables: pd.DataFrame | None) -> list[dict]:
    """One row per number of the paper's printed tables and printed averages."""
    names = published.get("method_names", {})
    renamed = frame.assign(method=frame["method"].replace(names))
    rows = []
    entries = []
    if tables is not None:
        entries += [(r["dataset"], r["metric"], r["k"], names.get(r["method"], r["method"]), r["mean"],
                     f"table, k = {r['k']}") for _, r in tables.iterrows()]
    for entry in published.get("published_averages", []):
        entries += [(entry["dataset"], entry["metric"], "Avg", method, value, "average over k")
                    for method, value in entry.items() if method not in ("dataset", "metric")]
    for dataset, metric, k, method, paper_value, what in entries:
        ours = ours_at(renamed, dataset, method, metric, k)
        diff = None if ours is None else ours - paper_value
        verdict = "not run" if ours is None else ("agrees" if abs(diff) <= TOLERANCE else "differs")
        rows.append({"paper": name, "dataset": dataset, "number": f"{method} {METRIC[metric]}, {what}",
                     "paper value": paper_value, "ours": ours, "difference": diff, "verdict": verdict,
                     "cause": "" if verdict in ("agrees", "not run") else cause_of(published, dataset, method)})
    return rows


def claim_rows(name: str, frame: pd.DataFrame, published: dict) -> list[dict]:
    """One row per gain the paper's text quotes (tested later, with Holm over all of them)."""
    rows = []
    for claim in published.get("claims", []):
        result = paired_gain(frame, claim["dataset"], claim["method"], claim["baseline"], claim["metric"])
        rows.append({"paper": name, "dataset": claim["dataset"],
                     "number": f"{claim['method']} over {claim['baseline']}, {METRIC[claim['metric']]} gain "
                               f"({claim['source']})",
                     "paper value": float(claim["gain"]), "ours": None if result is None else result["gain"],
                     "result": result, "method": claim["method"], "published": published})
    return rows


def coil20_demo(out: Path, seeds: int = DEMO_SEEDS) -> pd.DataFrame:
    """Cai's GNMF demo on the whole of COIL20 (see the module docstring); rows cached in ``out``."""
    cached = out / "results.csv"
    code = provenance.code_fingerprint()
    if cached.is_file():
        frame = pd.read_csv(cached)
        if "code_fingerprint" in frame and (frame["code_fingerprint"] == code).all() and \
                frame["seed"].nunique() == seeds:
            return frame
        logger.warning("%s was computed by other code or seeds; recomputing it", cached)
    from . import methods
    from .clustering import best_kmeans
    from .data.named import load_named
    from .metrics import nmi

    coil = load_named("coil20")
    demo = {"stopping": "fixed", "max_iter": 100, "n_starts": 10, "min_iter": 30}  # his maxIter = 100
    settings = {"KMeans": ("kmeans", {}), "NMF": ("nmf", demo),
                "GNMF": ("gnmf", {**demo, "alpha": 100.0, "n_neighbors": 5, "weight": "binary"})}
    rows = []
    for seed in range(seeds):
        for label, (name, params) in settings.items():
            extra = {"random_state": seed} if name != "kmeans" else {}
            Z = methods.make(name, n_components=20, **params, **extra).fit_transform(coil.X)
            labels, _ = best_kmeans(Z, 20, 20, "euclidean", seed=seed)
            rows.append({"method": label, "seed": seed, "nmi": nmi(coil.y, labels), "code_fingerprint": code})
            logger.info("COIL20 demo, seed %d, %s: NMI %.4f", seed, label, rows[-1]["nmi"])
    frame = pd.DataFrame(rows)
    write_atomic(cached, frame.to_csv(index=False))
    provenance.write(out, provenance.collect(provenance.now(), provenance.now(), extra={"seeds": seeds}))
    return frame


def demo_rows(frame: pd.DataFrame) -> list[dict]:
    rows = []
    for method, value in CAI_COIL20_NMI.items():
        scores = frame[frame["method"] == method]["nmi"] * 100
        ours = float(scores.mean())
        diff = ours - value
        rows.append({"paper": "Cai's GNMF demo", "dataset": "coil20 (whole)",
                     "number": f"{method} NMI (mean ± std over {len(scores)} seeds: {ours:.2f} ± {scores.std():.2f})",
                     "paper value": value, "ours": ours, "difference": diff,
                     "verdict": "agrees" if abs(diff) <= TOLERANCE else "differs",
                     "cause": "" if abs(diff) <= TOLERANCE else "unknown"})
    return rows


def fmt(value, signed: bool = False) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "n/a"
    return f"{value:+.2f}" if signed else f"{value:.2f}"


def build(outputs: Path = papers.OUTPUTS, home: Path = papers.HOME, demo: bool = True) -> Path:
    """Write ``outputs/README.md`` from the papers' merged results; returns its path."""
    started = provenance.now()
    table, claims = [], []
    read = []
    for name in papers.names(home):
        paper = papers.load(name, home)
        merged = Path(outputs) / name / "results.csv"
        if not merged.is_file():
            logger.warning("%s has no %s (run make reproduce-%s); its numbers are left out", name, merged, name)
            continue
        published = yaml.safe_load(paper.published.read_text())
        frame, _ = choose_tuned(pd.read_csv(merged), published.get("families", {}))
        tables = pd.read_csv(paper.tables) if paper.tables.is_file() else None
        table += cell_rows(name, frame, published, tables)
        claims += claim_rows(name, frame, published)
        read.append(merged)
    tested = [c for c in claims if c["result"] is not None]
    for claim, adjusted in zip(tested, holm([c["result"]["p"] for c in tested])):
        claim["result"]["p_holm"] = adjusted
    for claim in claims:
        result = claim.pop("result")
        published = claim.pop("published")
        method = claim.pop("method")
        claim["difference"] = None if result is None else result["gain"] - claim["paper value"]
        claim["verdict"] = verdict(result) + ("" if result is None else f" (p Holm {result['p_holm']:.2g})")
        claim["cause"] = "" if verdict(result) in ("reproduced", "not run") else \
            cause_of(published, claim["dataset"], method)
    demo_part = demo_rows(coil20_demo(Path(outputs) / "coil20_demo")) if demo else []
    lines = ["# Scorecard: every published number we have data for, beside ours", "",
             f"Built by `{provenance.command_line()}` from {len(read)} papers' merged results "
             f"({', '.join(str(p) for p in read)}); tables use label-free choices only (tuned families stand by "
             "the paper's or the reference code's value; sub-runs are the reference multi-start by objective).",
             "", f"Table and average cells agree when within {TOLERANCE:.0f} points. Quoted gains are tested on "
             f"the paired (k, trial) cells with a one-sided Wilcoxon signed-rank test; the {len(tested)} tests "
             "are adjusted together with Holm's method (family-wise error rate 0.05).", ""]
    for title, rows in (("Published tables and averages", table), ("Quoted gains", claims),
                        ("Deng Cai's COIL20 demo", demo_part)):
        if not rows:
            continue
        verdicts = pd.Series([r["verdict"].split(" (")[0] for r in rows]).value_counts()
        lines += [f"## {title}", "", "Verdicts: " + ", ".join(f"{v} {n}" for v, n in verdicts.items()) + ".", "",
                  "| paper | data set | number | paper | ours | difference | verdict | cause |", "|---" * 8 + "|"]
        for r in rows:
            lines.append(f"| {r['paper']} | {r['dataset']} | {r['number']} | {fmt(r['paper value'])} | "
                         f"{fmt(r['ours'])} | {fmt(r['difference'], signed=True)} | {r['verdict']} | {r['cause']} |")
        lines.append("")
    runs = [provenance.read(p.parent / provenance.FILE) for p in read]
    record = provenance.collect(started, provenance.now(), extra={"sources": [str(p) for p in read]})
    lines += provenance.markdown(record, [r for r in runs if r is not None])
    path = Path(outputs) / "README.md"
    write_atomic(path, "\n".join(lines) + "\n")
    provenance.write(Path(outputs), {**record, "runs": [r for r in runs if r is not None]})
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m src.scorecard", description=__doc__.splitlines()[0])
    parser.add_argument("--outputs", default=str(papers.OUTPUTS), help="the reproduce outputs directory")
    parser.add_argument("--no-demo", action="store_true", help="leave out Cai's COIL20 demo (computed once)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="[%(levelname)s] %(message)s")
    try:
        logger.info("wrote %s", build(Path(args.outputs), demo=not args.no_demo))
    except ConfigError as exc:
        logger.error("%s", exc)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

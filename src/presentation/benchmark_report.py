"""The family benchmark's report: every method under one protocol, ranked, and the papers' claims tested.

Usage::

    python -m src.presentation.benchmark_report [--out outputs/benchmark]

Reads the runs of each track (``<out>/<track>/runs``, written by :mod:`src.benchmark`; the tracks are the
homes of ``papers/benchmark/``) and writes ``<out>/report.md`` with its figures. It opens with its answer,
one figure of the ranking per track, and when ``--tune`` has run, every method tuned alike beside the fixed
settings (:mod:`.tuning_report`); then, with how it was run and its cost last:

* per track and scoring (every sample, as the papers score; for a label track also the unlabelled samples
  alone, since a point whose class a method was told flatters it): mean AC and NMI per data set with each
  method's mean rank over the (data set, k) blocks and how many methods a Wilcoxon-Holm test finds it
  significantly better and worse than, the first group (the methods no test finds any other method
  better than) by name and where the mean ranks disagree with the tests, critical-difference diagrams over all blocks and per data set
  (:mod:`.ranking`), AC and NMI against k per data set (the first three methods there and each paper's own
  method in colour, the rest thin and grey), and a paragraph written from those numbers;
* for a label track, how far scoring the unlabelled samples alone moves the ranking (Kendall's tau between
  the two orders of mean ranks, the methods that move and how much each one's AC drops);
* each paper's headline claim, its method above every baseline, tested against the whole family of its
  track (:data:`CLAIMS`), on the paper's own data sets and on the others;
* a second opinion: another group's runs (``papers/benchmark/second_opinion.yaml``) beside ours, as context;
* the cost: cells computed, copied from the reproduction and reused, wall time and work (``schedule.json``).

A method is named by its label without parameters (``GNMF`` for ``GNMF(alpha=100.0)``): each runs at one
setting in a track, listed in the report's settings table.

References
----------
J. Demšar, "Statistical comparisons of classifiers over multiple data sets", JMLR 7, pp. 1-30, 2006.

A. Benavoli, G. Corani, F. Mangili, "Should we really use post-hoc tests based on mean-ranks?", JMLR 17(5),
pp. 1-10, 2016.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

import pandas as pd
import yaml
from scipy.stats import kendalltau

from ..running import provenance
from ..running.cell_warnings import distinct
from ..files import write_atomic
from ..running.pool import schedule
from ..running.progress import duration
from ..running.results import MixedResultsError, find_results, read_results
from ..reproduction import homes as papers
from ..reproduction.shipped import TUNED_UNPACKED, load_track, short_name, tuned_beside, unpack, unpacked
from . import bayesian, choice_report, convergence, references_report, tuning_report
from .figures import plot_metrics_vs_k
from .references_report import LABEL, LABEL_FREE, REFERENCE, of_kind
from .ranking import (ALPHA, CD_CAPTION, METRICS, Ranking, ac_order, answer_lines, cd_diagram, claim_verdict,
                      disagreements, format_p, join_names, ranking_lines, ranking_over, slug)
from .verdicts import single_trial_notes, trials_per_k

logger = logging.getLogger(__name__)

#: The homes of the benchmark's tracks (:data:`src.reproduction.homes.BENCHMARK_HOME`).
HOME = papers.BENCHMARK_HOME
#: Where ``make benchmark`` writes (:data:`src.reproduction.homes.BENCHMARK_OUTPUTS`).
OUTPUTS = papers.BENCHMARK_OUTPUTS
#: Another group's runs, shown beside the 30% track.
SECOND_OPINION = HOME / "second_opinion.yaml"
#: Each track's title.
TITLES = {"unsupervised": "Unsupervised track", "labels10": "Semi-supervised track, 10% labelled",
          "labels30": "Semi-supervised track, 30% labelled"}
#: Where each paper's claim is tested: the track of its protocol and the samples it scores (CCF scores the
#: unlabelled 70%).
CLAIMS = {"cnmf": ("labels10", "all"), "pcgnmf": ("labels10", "all"), "ccf": ("labels30", "unlabelled"),
          "lcf": ("unsupervised", "all"), "fnmf": ("unsupervised", "all")}
#: The columns each scoring reads, as (AC, NMI).
SCORINGS = {"all": ("acc", "nmi"), "unlabelled": ("acc_unlabelled", "nmi_unlabelled")}
SCORING_NAMES = {"all": "every sample", "unlabelled": "the unlabelled samples only"}
#: Each paper's own method (the first of ``directions.methods`` in its ``published.yaml``; the papers of
#: :data:`CLAIMS`), drawn in colour in the figures against k of every track that runs it.
PAPER_METHODS = ("CNMF", "PCGNMF", "CCF", "LCF", "FNMF")
#: How many of the first methods by mean AC rank on a data set its figure against k draws in colour.
LEADERS = 3


def scored(frame: pd.DataFrame, scoring: str) -> pd.DataFrame:
    """``frame`` with ``acc`` and ``nmi`` taken from the columns of ``scoring`` (:data:`SCORINGS`)."""
    acc, nmi = SCORINGS[scoring]
    out = frame.copy()
    out["acc"], out["nmi"] = frame[acc], frame[nmi]
    return out


def scorings_of(frame: pd.DataFrame) -> list[str]:
    """``["all"]``, and ``"unlabelled"`` when the rows score the unlabelled samples apart."""
    return ["all", "unlabelled"] if "acc_unlabelled" in frame and frame["acc_unlabelled"].notna().all() else ["all"]


def in_colour(rows: pd.DataFrame) -> dict[str, str]:
    """The methods a figure of one data set draws in colour, each with the name its legend shows: the first
    :data:`LEADERS` as the pairwise AC tests place them (:func:`.ranking.ac_order`) and every paper's own method (:data:`PAPER_METHODS`)
    that ``rows`` hold; in order of place, each legend name with its place (``GNMF (#1)``, ``CNMF (#7,
    paper)``)."""
    order = ac_order(rows)
    present = set(rows["method"])
    chosen = order[:LEADERS] + [m for m in order[LEADERS:] if m in PAPER_METHODS]
    chosen += [m for m in PAPER_METHODS if m in present and m not in order]  # unranked: placed last
    shown = {}
    for method in chosen:
        marks = ([f"#{order.index(method) + 1}"] if method in order else []) + \
            (["paper"] if method in PAPER_METHODS else [])
        shown[method] = f"{method} ({', '.join(marks)})"
    return shown


def k_figure(rows: pd.DataFrame, title: str, path: Path) -> None:
    """AC and NMI against k on one data set (every sample scored): the methods of :func:`in_colour` in colour
    with their mean ± std bands, the first :data:`LEADERS` thick, every other method a thin grey line (mean
    only, no legend entry)."""
    shown = in_colour(rows)
    rest = sorted(set(rows["method"]) - set(shown))
    plot_metrics_vs_k(rows.assign(method=rows["method"].map(lambda m: shown.get(m, m))), title, path,
                      methods=list(shown.values()), background=rest, thick=list(shown.values())[:LEADERS],
                      caption="scored on every sample; rank k, Euclidean KMeans best of 20, unit-norm samples; "
                      f"in colour the first {LEADERS} by the pairwise AC tests here (thick; #: place) and the papers' own "
                      f"methods, mean ± std over {trials_per_k(rows['trial'].nunique())}"
                      + (f"; thin grey: the other {len(rest)} methods (mean only)" if rest else ""))


def settings_table(frame: pd.DataFrame) -> list[str]:
    """One line per method: its label, estimator and parameters."""
    lines = ["| method | label | estimator | parameters |", "|---|---|---|---|"]
    for (method, label, estimator), rows in frame.groupby(["method", "label", "estimator"]):
        if "params" in rows:
            params = json.loads(rows["params"].iloc[0])
            text = ", ".join(f"{key}={value}" for key, value in sorted(params.items())) or "none"
        else:  # cells laid out from the shipped file, which keeps the parameters in the label only
            text = str(label).partition("(")[2].removesuffix(")") or "none"
        lines.append(f"| {method} | {label} | {estimator} | {text} |")
    return lines


def rank_table(rows: pd.DataFrame, metric: str, ranking: Ranking | None, *, bold=(), mark_best: bool = True) \
        -> list[str]:
    """The rows of a rank table: mean ``metric`` (%) per data set and method over every k and trial, each
    method's mean rank in ``ranking`` and how many of its other methods a Wilcoxon-Holm test finds it
    significantly better and worse than (:meth:`.ranking.Ranking.better`).

    The methods of ``ranking`` come first, as its pairwise tests place them (:attr:`.ranking.Ranking.order`:
    the first group first), then those it leaves out (not run on every
    data set; ``-`` in the last three columns) by mean. ``bold`` names methods set in bold (a contender
    report's contenders); ``mark_best`` sets the best value of each data set in bold. Each report writes its
    own caption under these lines.
    """
    datasets = sorted(rows["dataset"].unique())
    means = rows.groupby(["method", "dataset"])[metric].mean().unstack("dataset").reindex(columns=datasets) * 100
    ranked = list(ranking.order) if ranking is not None else []
    rest = means[~means.index.isin(ranked)].mean(axis=1).sort_values(ascending=False)
    top = means.idxmax() if mark_best else pd.Series(dtype=object)
    lines = [f"| method | {' | '.join(datasets)} | mean rank | better than | worse than |",
             "|---" * (len(datasets) + 4) + "|"]
    for method in ranked + list(rest.index):
        cells = []
        for dataset in datasets:
            value = means.loc[method, dataset]
            text = "-" if pd.isna(value) else f"{value:.1f}"
            cells.append(f"**{text}**" if mark_best and top.get(dataset) == method and text != "-" else text)
        if method in ranked:
            rank = f"{ranking.mean_ranks[method]:.2f}"
            better, worse = str(len(ranking.beats(method))), str(len(ranking.beaten_by(method)))
        else:
            rank = better = worse = "-"
        name = f"**{method}**" if method in bold else method
        lines.append(f"| {name} | {' | '.join(cells)} | {rank} | {better} | {worse} |")
    return lines


def means_table(frame: pd.DataFrame, metric: str, ranking: Ranking | None) -> list[str]:
    """Mean ``metric`` (%) per data set and method over every k and trial, with each method's mean rank over
    all (data set, k) blocks and how many methods it is significantly better and worse than (:func:`rank_table`),
    placed by the pairwise tests; under it the caption and the answer: the first group by name, and where the
    mean ranks disagree with the tests (:func:`.ranking.answer_lines`)."""
    name = METRICS[metric]
    lines = rank_table(frame, metric, ranking)
    others = f"of the other {len(ranking.methods) - 1} ranked methods, " if ranking is not None else ""
    lines += ["", f"Mean {name} (%) over k = {frame['k'].min()}..{frame['k'].max()} and the trials; bold: the best "
              "of a data set. Mean rank over the blocks of the ranking below (1 = best); better / worse than: "
              f"{others}how many a two-sided Wilcoxon signed-rank test, Holm-adjusted over all pairs "
              f"(alpha = {ALPHA:g}), finds it significantly better / worse than (the rest it is not separated "
              "from); rows placed by those tests (the first group, then better than less worse than, then the "
              "mean); "
              "'-': not run on every data set, so not ranked over all."]
    if ranking is not None:
        lines += ["", *answer_lines(ranking, name)]
    return lines


def takeaway(frame: pd.DataFrame, ranking: Ranking | None, track: str, scoring: str) -> str:
    """What a reader should take from one track and scoring, in sentences built from its numbers."""
    if ranking is None:
        return "Too few complete blocks to rank the methods."
    means = frame.groupby(["dataset", "method"])["acc"].mean().unstack("method") * 100
    winners = means.idxmax(axis=1)
    counts = winners.value_counts()
    f = ranking.friedman
    parts = [*answer_lines(ranking, "AC"), f"(Friedman p = {format_p(f.p_f)}, {ranking.n_blocks} (data set, k) "
             "blocks.)"]
    parts.append("The best mean AC per data set: " + "; ".join(
        f"{dataset} {winners[dataset]} ({means.loc[dataset, winners[dataset]]:.1f}%)" for dataset in means.index)
        + (f", so {counts.index[0]} wins {counts.iloc[0]} of {len(means)} data sets." if counts.iloc[0] > 1 else "."))
    last = ranking.order[-1]
    parts.append(f"{last} is placed last (worse than {len(ranking.beaten_by(last))} methods).")
    if track != "unsupervised":
        labelled, free = set(of_kind(frame, LABEL)), set(of_kind(frame, LABEL_FREE))
        top_label = next((m for m in ranking.order if m in labelled), None)
        top_free = next((m for m in ranking.order if m in free), None)
        if top_label and top_free:
            verdict = ("significantly better than" if ranking.better(top_label, top_free) else
                       "significantly worse than" if ranking.better(top_free, top_label) else
                       "not separated by the Wilcoxon-Holm test from")
            parts.append(f"Scored on {SCORING_NAMES[scoring]}, the best label method, {top_label}, is {verdict} the "
                         f"best label-free method, {top_free}.")
    return " ".join(parts)


def scoring_shift(frame: pd.DataFrame) -> list[str]:
    """How scoring the unlabelled samples alone moves a label track's ranking of AC."""
    both = {s: ranking_over(scored(frame, s), "acc") for s in ("all", "unlabelled")}
    if any(r is None for r in both.values()):
        return []
    common = [m for m in both["all"].methods if m in both["unlabelled"].mean_ranks]
    tau = kendalltau([both["all"].mean_ranks[m] for m in common], [both["unlabelled"].mean_ranks[m] for m in common])
    place = {s: {m: i + 1 for i, m in enumerate(r.methods)} for s, r in both.items()}
    moved = [f"{m} {place['all'][m]} -> {place['unlabelled'][m]}" for m in common
             if place["all"][m] != place["unlabelled"][m]]
    drop = ((frame["acc"] - frame["acc_unlabelled"]) * 100).groupby(frame["method"]).mean().sort_values(ascending=False)
    lines = ["#### How much scoring the unlabelled samples alone changes the ranking", "",
             f"Kendall's tau between the mean AC ranks of the two scorings: {tau.statistic:.2f} "
             f"({len(common)} methods). "
             + (f"Places that change (every sample -> unlabelled only): {'; '.join(moved)}." if moved else
                "No method changes place."), "",
             "Mean AC on every sample minus AC on the unlabelled samples alone, in points (the labelled points' "
             "flattery): " + ", ".join(f"{m} {value:+.1f}" for m, value in drop.items()) + ".", ""]
    return lines


def shared_note(frame: pd.DataFrame, unsupervised: pd.DataFrame | None) -> list[str]:
    """What a label track's label-free methods share: an unsupervised method's clustering does not depend on
    which samples are labelled, so the pool computes it once (:func:`src.running.pool.jobs.sharing_key`) and one
    cell serves this track and the unsupervised track; its scores on this track's unlabelled samples, read from
    the cell's partition, and its readouts by this track's labels are this track's own."""
    free = frame[frame["method"].isin(of_kind(frame, LABEL_FREE))]
    if free.empty:
        return []
    keys = ["dataset", "label", "k", "trial"]
    both = 0 if unsupervised is None else len(free.merge(unsupervised[keys], on=keys))
    return [f"The {free['method'].nunique()} label-free methods of this track take no labels: each of their "
            f"cells is one clustering with the unsupervised track's, computed once ({both:,} of their "
            f"{len(free):,} cells serve both tracks here); their scores on this track's unlabelled samples, read "
            "from the cell's kept partition, and their representation read out by this track's labelled samples "
            "are this track's own.", ""]


def track_section(track: str, frame: pd.DataFrame, out: Path, unsupervised: pd.DataFrame | None = None) \
        -> list[str]:
    """The section of one track: settings, then per scoring the tables, rankings, figures and takeaway."""
    datasets = sorted(frame["dataset"].unique())
    lines = [f"## {TITLES.get(track, track)}", "",
             f"{frame['method'].nunique()} methods on {len(datasets)} data sets ({', '.join(datasets)}), "
             f"k = {frame['k'].min()}..{frame['k'].max()}, {trials_per_k(frame['trial'].nunique())}, the same trials "
             f"for every method; {len(frame):,} cells from `{track}/runs`.", "",
             "<details><summary>Settings of each method</summary>", "", *settings_table(frame), "", "</details>", ""]
    if track != "unsupervised":
        lines += shared_note(frame, unsupervised)
    for dataset in datasets:
        k_figure(frame[frame["dataset"] == dataset], f"{TITLES.get(track, track)}: {dataset}",
                 out / f"{track}_figure_{slug(dataset)}.png")
    papers_here = [m for m in PAPER_METHODS if (frame["method"] == m).any()]
    lines += [f"AC and NMI against k per data set, every sample scored: in colour, with mean ± std bands, the "
              f"first {LEADERS} methods by the pairwise AC tests on that data set (thick lines; over its (k, trial) "
              "blocks, the legend gives each one's place, #1 best)"
              + (f" and each paper's own method ({', '.join(papers_here)}; marked 'paper')" if papers_here else "")
              + "; every other method a thin grey line.", ""]
    lines += [f"![AC and NMI against k, {d}]({track}_figure_{slug(d)}.png)" for d in datasets] + [""]
    for scoring in scorings_of(frame):
        rows = scored(frame, scoring)
        lines += [f"### {TITLES.get(track, track)}, scored on {SCORING_NAMES[scoring]}", ""]
        rankings = {metric: ranking_over(rows, metric) for metric in METRICS}
        for metric, name in METRICS.items():
            lines += [f"#### Mean {name}", "", *means_table(rows, metric, rankings[metric]), ""]
        lines += ["#### What to take from it", "", takeaway(rows, rankings["acc"], track, scoring), ""]
        for metric, name in METRICS.items():
            ranking = rankings[metric]
            if ranking is None:
                continue
            image = f"{track}_{scoring}_cd_all_{metric}.png"
            cd_diagram(ranking, out / image, f"{TITLES.get(track, track)}: {name}, {SCORING_NAMES[scoring]}")
            lines += [f"#### {name}, over all (data set, k) blocks", "",
                      *ranking_lines(ranking, name, image, None, "all data sets")]
        per_dataset, images = [], []
        for dataset in datasets:
            for metric, name in METRICS.items():
                ranking = ranking_over(rows, metric, [dataset])
                if ranking is None:
                    continue
                image = f"{track}_{scoring}_cd_{slug(dataset)}_{metric}.png"
                cd_diagram(ranking, out / image, f"{dataset}: {name}, {SCORING_NAMES[scoring]}")
                per_dataset.append(f"| {dataset} | {name} | {join_names(ranking.leaders)} | {ranking.methods[0]} | "
                                   f"{len(disagreements(ranking))} | {format_p(ranking.friedman.p_f)} |")
                images.append(f"![Critical-difference diagram: {dataset}, {name}]({image})")
        if per_dataset:
            lines += ["#### Per data set, over its (k, trial) blocks", "",
                      "| data set | metric | first group (no method better by a Wilcoxon-Holm test) | first by mean "
                      "rank | pairs where mean ranks and tests disagree | Friedman p |", "|---|---|---|---|---|---|",
                      *per_dataset, "", *images, "", CD_CAPTION, ""]
        if scoring == "unlabelled":
            lines += scoring_shift(frame)
    return lines


CLAIMS_INTRO = ("Each paper finds its method best against the baselines it chose. Here the claim is tested against "
                "every other method of the family in the track of the paper's protocol, on the data sets of the "
                "paper that the benchmark has and on the others (AC, Wilcoxon-Holm over all pairs of the ranking; "
                "over several data sets the blocks are (data set, k), on one data set (k, trial)), by the pairwise "
                "tests alone. **Holds**: the paper's method is significantly better than every other method; "
                "**contradicted**: some method is significantly better than it; **undecided** otherwise.")


def claim_rows(frames: dict[str, pd.DataFrame], home: Path = papers.HOME) -> list[dict]:
    """Each paper's headline claim (:data:`CLAIMS`) tested on the tracks' rows ``frames``: one dict per
    (paper, data sets: the paper's own, the others) with its track, scoring, methods, verdict and why
    (verdict "not run" when the track has no rows)."""
    found = []
    for paper, (track, scoring) in CLAIMS.items():
        frame = frames.get(track)
        published = yaml.safe_load((home / paper / "published.yaml").read_text())
        directions = published.get("directions") or {}
        claimed = [short_name(m) for m in directions.get("methods", [])]
        entry = {"paper": paper, "track": track, "scoring": scoring, "methods": claimed}
        if frame is None:
            found.append({**entry, "datasets": "-", "verdict": "not run", "why": "the track has no runs"})
            continue
        rows = scored(frame, scoring)
        references = of_kind(rows, REFERENCE)
        own = sorted(set(directions.get("datasets", [])) & set(rows["dataset"]))
        others = sorted(set(rows["dataset"]) - set(own))
        for label, datasets in (("the paper's: ", own), ("the others: ", others)):
            if not datasets:
                continue
            ranking = ranking_over(rows[~rows["method"].isin(references)], "acc", datasets)
            if ranking is None:
                continue
            check = claim_verdict(ranking, claimed, [m for m in ranking.methods if m not in claimed])
            against = claim_verdict(ranking_over(rows, "acc", datasets), claimed, references) if references else None
            found.append({**entry, "datasets": label + ", ".join(datasets), "verdict": check.verdict,
                          "why": check.sentence.split(": ", 1)[-1].replace("|", "/"),
                          "references": against.verdict if against else "-",
                          "why_references": against.sentence.split(": ", 1)[-1].replace("|", "/") if against else ""})
    return found


def claims_section(frames: dict[str, pd.DataFrame], home: Path = papers.HOME) -> list[str]:
    """Each paper's headline claim (its methods above every baseline it reports) against the whole family
    of its track (:data:`CLAIMS`), on the paper's own data sets and on the others, for AC."""
    rows = claim_rows(frames, home)
    against = any(row.get("references", "-") != "-" for row in rows)
    lines = ["## The papers' claims against the whole family", "", CLAIMS_INTRO
             + (" **Against the references** (not in any paper: the classifiers of the same labels, "
                "LabelSpreading and the nearest labelled neighbour): the same test of the paper's method against "
                "the references alone, in the ranking that holds them; the verdict against the family leaves "
                "them out." if against else ""), "",
             "| paper | track, scored on | paper's methods | data sets | verdict | why |"
             + (" against the references | why |" if against else ""),
             "|---|---|---|---|---|---|" + ("---|---|" if against else "")]
    for row in rows:
        where = row["track"] if row["verdict"] == "not run" else f"{row['track']}, {SCORING_NAMES[row['scoring']]}"
        lines.append(f"| {row['paper']} | {where} | {', '.join(row['methods'])} | {row['datasets']} | "
                     f"{row['verdict']} | {row['why']} |"
                     + (f" {row.get('references', '-')} | {row.get('why_references', '')} |" if against else ""))
    return lines + [""]


def second_opinion_section(frame: pd.DataFrame | None, path: Path = SECOND_OPINION) -> list[str]:
    """Another group's means (``second_opinion.yaml``) beside the 30% track's, scored as they scored."""
    if not path.is_file():
        return []
    opinion = yaml.safe_load(path.read_text())
    source = opinion["source"]
    lines = ["## A second opinion: another group's runs with 30% labelled", "",
             f"{source['citation']}; code and saved per-run results at {source['repository']} (commit "
             f"{source['commit'][:12]}). Their mean over 10 runs per k, averaged over k = 2..10, beside ours from "
             "the 30% track, each scored as they scored it (KMeans, NMF, GNMF on every sample, CNMF on the "
             "unlabelled ones). Context, never a target: their protocol differs, as listed under the table.", "",
             "| data set | method | their AC | our AC | their NMI | our NMI |", "|---|---|---|---|---|---|"]
    names = {"mnist": "mnist1000"}
    for entry in opinion["results"]:
        dataset, method = names.get(entry["dataset"], entry["dataset"]), entry["method"]
        ours_ac = ours_nmi = "-"
        if frame is not None:
            rows = frame[(frame["dataset"] == dataset) & (frame["method"] == method)]
            if not rows.empty:
                acc, nmi = SCORINGS["unlabelled" if method == "CNMF" else "all"]
                ours_ac, ours_nmi = f"{100 * rows[acc].mean():.1f}", f"{100 * rows[nmi].mean():.1f}"
        theirs_ac = sum(entry["ac"]) / len(entry["ac"])
        theirs_nmi = sum(entry["nmi"]) / len(entry["nmi"])
        lines.append(f"| {dataset} | {method} | {theirs_ac:.1f} | {ours_ac} | {theirs_nmi:.1f} | {ours_nmi} |")
    lines += ["", "How their runs differ from ours:", "", *[f"- {item}" for item in opinion["differences"]], ""]
    return lines


def cost_section(out: Path) -> list[str]:
    """What the benchmark took: cells computed, copied from the reproduction and reused, wall time, work."""
    record = schedule.cell_table(out)
    if record is None:
        return []
    table, summary = record
    status = table["status"].value_counts()
    copied = int(table["shared_with"].notna().sum() - status.get("shared", 0)) if "shared_with" in table else 0
    work = table.loc[table["status"] == "computed", "seconds"].sum()
    every = table.loc[table["status"].isin(["computed", "reused"]), "seconds"].sum()
    wall = out / "wall_seconds.txt"
    lines = ["## Cost", "",
             f"{len(table):,} cells: {status.get('computed', 0):,} computed, {status.get('shared', 0):,} shared "
             f"between tracks (computed once), {copied:,} copied from the reproduction's runs "
             f"(`make reproduce-all`: the same settings, trials and code) and "
             f"{status.get('reused', 0) - copied:,} on disk from an earlier benchmark run. "
             f"Work of the cells computed: {duration(work)} ({work:,.0f} s) on "
             f"{summary.get('workers') or 'SLURM'} worker(s)"
             + (f"; wall time of the last `make benchmark`: {duration(float(wall.read_text()))}" if wall.is_file()
                else "") + ". "
             f"Work of every cell, whichever run computed it (its row's fit and KMeans seconds): {duration(every)} "
             f"({every:,.0f} s).", ""]
    return lines


def distinct_cells(frames: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The tracks' cells with each cell that several tracks share counted once (an unsupervised method's
    clustering serves every track: :func:`shared_note`), as the command's closing lines count them
    (:func:`src.running.cell_warnings.distinct`)."""
    return distinct(pd.concat([frame.assign(track=track) for track, frame in frames.items()], ignore_index=True))


def protocol_span(frames: dict[str, pd.DataFrame]) -> str:
    """The k and trials the tracks' cells cover, in words: "2..10 with 10 trials per k", "2, 3 with 1 trial per k"."""
    rows = pd.concat([frame[["k", "trial"]] for frame in frames.values()])
    ks = sorted(rows["k"].unique())
    trials = rows.groupby("k")["trial"].nunique()
    count = (trials_per_k(trials.max()) if trials.min() == trials.max()
             else f"{trials.min()} to {trials.max()} trials per k")
    span = f"{ks[0]}..{ks[-1]}" if len(ks) > 2 and ks == list(range(ks[0], ks[-1] + 1)) else ", ".join(map(str, ks))
    return f"{span} with {count}"


def single_trial_lines(frames: dict[str, pd.DataFrame]) -> list[str]:
    """The report's note, one per track, where a track was run with a single trial per k (also logged): its
    means stand, its tests and intervals need at least two trials (:func:`.verdicts.single_trial_note`)."""
    lines = []
    for note, tracks in single_trial_notes(frames).items():
        logger.warning("%s: %s", ", ".join(tracks), note)
        lines += [f"**{'; '.join(TITLES.get(track, track) for track in tracks)}: {note}**", ""]
    return lines


def bayesian_rankings(answers: dict[str, tuple[Ranking, Ranking | None]]) -> dict[str, Ranking]:
    """The answer's rankings (:func:`.tuning_report.answer_rankings`) by the title of a panel of the Bayesian
    comparison: per track at the fixed settings and, where there, tuned (the oracle's in the unsupervised
    track)."""
    found = {}
    for track, (fixed, tuned) in answers.items():
        short = TITLES.get(track, track).removeprefix("Semi-supervised track, ")
        found[f"{short}, fixed"] = fixed
        if tuned is not None:
            found[f"{short}, {tuning_report.TUNED_NAMES.get(track, 'tuned')}"] = tuned
    return found


def untuned_sentence(ran: dict[str, pd.DataFrame], tuned: dict[str, tuple]) -> str:
    """The sentence naming the references of the fixed-setting runs whose tuned cells do not ship, which the
    tuned rankings leave out (:func:`src.reproduction.shipped.tuned_family`); empty when every one's ship."""
    missing = sorted({method for track, frame in ran.items() if track in tuned
                      for method in of_kind(frame, REFERENCE)
                      if not (tuned[track][0]["method"] == method).any()})
    if not missing:
        return ""
    what = "a reference without shipped tuned cells, is" if len(missing) == 1 else \
        "references without shipped tuned cells, are"
    return f" {', '.join(missing)}, {what} left out of the tuned rankings."


def build(out: Path = OUTPUTS, home: Path = HOME) -> Path:
    """Write ``report.md`` and its figures into ``out`` from the tracks' runs under it; returns its path."""
    started = provenance.now()
    out = Path(out)
    tracks = papers.names(home)
    frames = {track: load_track(out / track / "runs") for track in tracks}
    ran = {track: frame for track, frame in frames.items() if frame is not None}
    if not ran:
        raise FileNotFoundError(f"no results under {out}/<track>/runs: run `make benchmark` first")
    tuned = tuning_report.read(out, ran)
    lines = ["# The family benchmark: which method wins?", "",
             "Every method of the family on every data set it applies to, under one protocol and the same trials"
             + ("; then every method tuned alike on the labels it may see" if tuned else "")
             + ". The answer first; how it was run and what it cost at the end.", ""]
    lines += single_trial_lines(ran)
    answers = tuning_report.answer_rankings(ran, tuned, ranking_over)
    notes = {track: references_report.answer_lines(ran[track], *found) for track, found in answers.items()}
    lines += tuning_report.answer_section(out, answers, TITLES, notes)
    lines += bayesian.section(bayesian_rankings(answers), out)
    lines += references_report.section({t: f for t, f in ran.items() if t in answers},
                                       {track: found[0] for track, found in answers.items()}, TITLES)
    lines += tuning_report.tuned_section(out, ran, tuned, TITLES, claim_rows)
    lines += choice_report.section(tuned, {track: found[1] for track, found in answers.items()}, TITLES)
    for track, frame in ran.items():
        lines += track_section(track, frame, out, ran.get("unsupervised"))
    lines += claims_section(ran)
    lines += second_opinion_section(ran.get("labels30"))
    lines += convergence.section(distinct_cells(ran))
    lines += ["## How it was run", "",
              "Rank k, Euclidean KMeans best of 20 on the representation, samples at unit L2 norm, k = "
              f"{protocol_span(ran)}, the same trials (classes, labelled samples, starts) for every method. At the "
              "fixed settings each method runs at the setting its paper or Deng Cai's code states (`conf/method/`), "
              "fixed before any result was seen; nothing is tuned on the labels. Methods are ranked as in the "
              f"papers' reports (Demšar 2006; Wilcoxon-Holm, alpha = {ALPHA:g}, primary; Nemenyi beside it).", "",
              "Tracks: " + "; ".join(f"{TITLES.get(t, t)} ({'run' if t in ran else 'not run'})" for t in tracks)
              + ".", ""]
    lines += cost_section(out)
    beside = out / TUNED_UNPACKED
    if beside.is_file() and tuned:
        source = json.loads(beside.read_text())
        lines += ["## Where the tuned cells come from", "",
                  "The fixed-setting cells are this run's; the tuned sections read the tuned cells that ship with "
                  "the repository, laid out beside them (`python -m src.presentation.benchmark_report "
                  "--tuned-from-shipped`): " + "; ".join(f"`{Path(path).name}` (sha256 `{digest[:16]}`)"
                                                        for path, digest in source["files"].items())
                  + f", computed under code fingerprint {', '.join(source['code_fingerprints'])}."
                  + untuned_sentence(ran, tuned), ""]
    source = unpacked(out)
    if source is not None:
        lines += ["## Where the cells come from", "",
                  "Every cell of this report was laid out from the cells that ship with the repository "
                  "(`python -m src.presentation.benchmark_report --from-shipped`), with no fit: "
                  + "; ".join(f"`{Path(path).name}` (sha256 `{digest[:16]}`)" for path, digest in source["files"].items())
                  + f", computed under code fingerprint {', '.join(source['code_fingerprints'])}. What those "
                  "files do not hold is not reported: the cost of the run that computed them (see the "
                  "performance page of the manual) and each run's provenance.", ""]
    files = [f for track in ran for f in find_results([out / track / "runs"])]
    runs = [r for r in provenance.of_results(files) if r is not None]
    record = provenance.collect(started, provenance.now(), extra={"tracks": sorted(ran)})
    provenance.write(out, {**record, "runs": runs})
    lines += ["", *provenance.markdown(record, runs)]
    if len(runs) < len(files):
        lines.append(f"{len(files) - len(runs)} of the {len(files)} results files have no {provenance.FILE}.")
    path = out / "report.md"
    write_atomic(path, "\n".join(lines) + "\n")
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(OUTPUTS), help="the benchmark's folder (default outputs/benchmark)")
    parser.add_argument("--from-shipped", action="store_true",
                        help="first lay out the cells that ship with the repository (papers/benchmark/*_cells.csv.gz) "
                        "as the benchmark's folder, replacing it, then write the report from them (no fit)")
    parser.add_argument("--tuned-from-shipped", action="store_true",
                        help="first lay out the shipped tuned cells beside the fixed-setting cells a run left in "
                        "--out (papers/benchmark/tuned_*.csv.gz), then write the report with its tuned sections")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="[%(levelname)s] %(message)s")
    try:
        if args.from_shipped:
            logger.info("laid out the shipped cells in %s", unpack(Path(args.out)))
        elif args.tuned_from_shipped:
            logger.info("laid out the shipped tuned cells beside the runs: %s", tuned_beside(Path(args.out)))
        logger.info("wrote %s", build(Path(args.out)))
    except (FileNotFoundError, MixedResultsError, ValueError) as exc:
        logger.error("%s", exc)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

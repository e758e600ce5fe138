"""The report of a contender run: methods from outside the repository ranked against the family's cells.

A researcher runs an estimator of their own (a *contender*) on the cells of the family benchmark and wants to
know where it stands. This module writes that answer from the cells of every track, the family's and the
contenders' together, with the procedure of the family's own report (:mod:`.benchmark_report`, :mod:`.ranking`):
methods ranked within each (data set, k) block, the ranks averaged, every pair tested with a Wilcoxon
signed-rank test and Holm's correction. The report (:func:`build`) holds

1. an opening per contender built from those numbers: in each track and scoring its place by the pairwise
   tests (:attr:`.ranking.Ranking.order`) and mean AC rank,
   the family methods it is significantly better and worse than, how many no test separates it from, and how
   it fares against its *twin* (the family method it extends), when given;
2. the notes of the run (e.g. a data set left out);
3. per track and scoring, a rank table (mean AC per data set, mean rank, how many methods each one is
   significantly better and worse than) and critical-difference diagrams with the contenders highlighted;
4. per track and data set, AC and NMI against k: the contenders, the family's best method there and the
   twins in colour, every other method as a thin grey line;
5. the cost: cells computed and reused, wall time, and the contenders' seconds per cell against the family's.

Without contenders the run is "your data against the family": every family method on a data set of the
user's, and the report says, per track and scoring, which method to use: the first group, the methods no
Wilcoxon-Holm test finds any other method better than (:attr:`.ranking.Ranking.leaders`), and where the mean
ranks disagree with those tests.

References
----------
J. Demšar, "Statistical comparisons of classifiers over multiple data sets", Journal of Machine Learning
Research 7, pp. 1-30, 2006.

A. Benavoli, G. Corani, F. Mangili, "Should we really use post-hoc tests based on mean-ranks?", Journal of
Machine Learning Research 17(5), pp. 1-10, 2016.
"""

from __future__ import annotations

import logging
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..files import write_atomic
from ..running.progress import counted as plural, duration
from .benchmark_report import (LEADERS, SCORING_NAMES, TITLES, ac_order, rank_table, ranking_over, scored,
                               distinct_cells, scorings_of, settings_table, single_trial_lines)
from . import convergence, tuning_report
from .figures import plot_metrics_vs_k
from .ranking import ALPHA, CD_CAPTION, METRICS, Ranking, cd_diagram, disagreement_sentence, format_p, join_names, slug
from .verdicts import trials_per_k

logger = logging.getLogger(__name__)

#: The columns every track's frame must have.
COLUMNS = ("dataset", "method", "label", "estimator", "k", "trial", "acc", "nmi", "fit_seconds", "kmeans_seconds")
#: How many method names a sentence lists before "and N more".
NAMED = 5
#: The width the report's prose is wrapped to.
WIDTH = 118


# --- words -----------------------------------------------------------------------------------------------------

def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``, ``11th``, ``21st``: a place as a reader says it."""
    n = int(n)
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def name_some(names, limit: int = NAMED) -> str:
    """``a, b and c``; beyond ``limit`` names the first ``limit`` and ``and N more``, so that a sentence
    about twenty methods stays readable (the full lists are in the report's folded details)."""
    names = list(names)
    if len(names) <= limit:
        return join_names(names)
    return f"{', '.join(names[:limit])} and {len(names) - limit} more"


def wrapped(text: str, indent: str = "") -> list[str]:
    """``text`` as lines of at most :data:`WIDTH` characters, continuation lines indented by ``indent`` (a
    Markdown list item stays one item); words, names and links are never broken."""
    return textwrap.wrap(text, WIDTH, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)


def blocks_name(ranking: Ranking, rows: pd.DataFrame) -> str:
    """What the blocks of a ranking over ``rows`` are (:func:`.ranking.ranking_over`): (data set, k)
    over several data sets, (k, trial) within one."""
    datasets = sorted(rows["dataset"].unique())
    if len(datasets) == 1:
        return f"{ranking.n_blocks} (k, trial) blocks of {datasets[0]}"
    return f"{ranking.n_blocks} (data set, k) blocks"


def k_range(rows: pd.DataFrame) -> str:
    """``2..10``, or ``2`` when the rows have one k."""
    low, high = rows["k"].min(), rows["k"].max()
    return f"{low}" if low == high else f"{low}..{high}"


def seconds_text(value: float) -> str:
    """Seconds with three significant digits (``0.0123``, ``4.50``, ``1,234``); ``-`` when unknown."""
    if pd.isna(value):
        return "-"
    return f"{value:,.0f}" if value >= 99.5 else f"{value:#.3g}"


# --- where a method stands -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Standing:
    """Where one method stands in a ranking, against the methods of the family (:func:`standing`).

    Attributes
    ----------
    method : str
        The method.
    mean_rank : float
        Its mean rank (1 = best).
    place, of : int
        Its place by the pairwise tests (:attr:`.ranking.Ranking.order`) among the ``of`` methods of the
        ranking.
    better, worse, tied : list of str
        The family methods it is significantly better than, significantly worse than, and not separated from
        (Holm-adjusted Wilcoxon p >= alpha), each best mean rank first.
    """

    method: str
    mean_rank: float
    place: int
    of: int
    better: list
    worse: list
    tied: list


def standing(ranking: Ranking, method: str, family) -> Standing:
    """Where ``method`` stands in ``ranking`` against the methods of ``family`` that the ranking holds.

    Parameters
    ----------
    ranking : Ranking
        From :func:`.ranking.ranking_over`; must hold ``method``.
    method : str
        The method placed (a contender, or a family method).
    family : collection of str
        The methods it is compared with; ``method`` itself and methods outside the ranking are skipped.

    Returns
    -------
    Standing
        Its mean rank and place, and the family methods the Wilcoxon-Holm tests put below it, above it, or
        do not separate from it (:meth:`.ranking.Ranking.better`).
    """
    family = set(family)
    others = [m for m in ranking.methods if m in family and m != method]
    return Standing(method=method, mean_rank=float(ranking.mean_ranks[method]),
                    place=ranking.order.index(method) + 1, of=len(ranking.order),
                    better=[m for m in others if ranking.better(method, m)],
                    worse=[m for m in others if ranking.better(m, method)],
                    tied=[m for m in others if ranking.wilcoxon_holm.loc[method, m] >= ranking.alpha])


def twin_clause(ranking: Ranking, method: str, twin: str | None) -> str:
    """How ``method`` fares against ``twin`` (the family method it extends): significantly better, worse or
    not separated, with the Holm-adjusted p; empty when there is no twin in the ranking."""
    if not twin or twin not in ranking.mean_ranks or twin == method:
        return ""
    p = format_p(ranking.wilcoxon_holm.loc[method, twin])
    verdict = ("significantly better" if ranking.better(method, twin) else
               "significantly worse" if ranking.better(twin, method) else "not separated")
    return f"; against its twin {twin}: {verdict} (Holm p = {p})"


def where(track: str, scoring: str) -> str:
    """``Unsupervised track (every sample)``: a track and scoring as a sentence's subject."""
    return f"{TITLES.get(track, track)} ({SCORING_NAMES[scoring]})"


# --- the opening -----------------------------------------------------------------------------------------------

#: Every ranking of a report: (track, scoring) -> {metric: the ranking over all blocks, None if too few}.
_Rankings = dict[tuple[str, str], dict[str, Ranking | None]]


def rank_all(frames: dict[str, pd.DataFrame]) -> _Rankings:
    """Every ranking of the report, computed once: per track, scoring and metric, over all blocks."""
    return {(track, scoring): {metric: ranking_over(scored(frame, scoring), metric) for metric in METRICS}
            for track, frame in frames.items() for scoring in scorings_of(frame)}


def contender_ranking(rows: pd.DataFrame, ranking: Ranking | None, contender: str) \
        -> tuple[Ranking | None, list[str]]:
    """The AC ranking that holds ``contender``: the one over all blocks, or, when the contender did not run on
    every data set (so that it is left out of that one), the ranking over the data sets it ran on; with
    those data sets in the second case, else an empty list."""
    if ranking is not None and contender in ranking.mean_ranks:
        return ranking, []
    datasets = sorted(rows.loc[rows["method"] == contender, "dataset"].unique())
    if not datasets:
        return None, []
    partial = ranking_over(rows, "acc", datasets)
    return (partial, datasets) if partial is not None and contender in partial.mean_ranks else (None, datasets)


def contender_sentence(rows: pd.DataFrame, ranking: Ranking | None, contender: str, contenders,
                       twin: str | None, place: str) -> tuple[str, Standing | None]:
    """One sentence of a contender's opening: its standing in one track and scoring (``place``, e.g.
    ``Unsupervised track (every sample)``), and the :class:`Standing` it was built from (None if unranked)."""
    if not (rows["method"] == contender).any():
        return f"{place}: not run.", None  # (the opening says it once per track, not per scoring)
    ranking, datasets = contender_ranking(rows, ranking, contender)
    if ranking is None:
        return f"{place}: too few complete blocks to rank it.", None
    family = set(rows["method"]) - set(contenders)
    found = standing(ranking, contender, family)
    scope = (f" over the {'data set' if len(datasets) == 1 else plural(len(datasets), 'data set')} it ran on "
             f"({', '.join(datasets)})" if datasets else "")
    better = name_some(found.better) if found.better else "no family method"
    worse = name_some(found.worse) if found.worse else "none"
    tied = plural(len(found.tied), "family method") + (f" ({join_names(found.tied)})" if 0 < len(found.tied) <= 3
                                                       else "")
    return (f"{place}: {ordinal(found.place)} of {found.of} by the pairwise tests{scope} (mean AC rank "
            f"{found.mean_rank:.2f}); "
            f"significantly better than {better}, worse than {worse}; not separated from {tied}"
            + twin_clause(ranking, contender, twin) + "."), found


def capped_warning(cells: pd.DataFrame, contender: str) -> list[str]:
    """A line for a contender whose cells mostly stopped at their iteration cap: how many, and what to change
    (:func:`.convergence.mostly_capped`); none otherwise."""
    found = convergence.mostly_capped(cells, contender)
    if found is None:
        return []
    capped, total = found
    mine = cells[cells["method"] == contender]
    cap = pd.to_numeric(mine.get("param_max_iter", pd.Series(dtype=float)), errors="coerce").max()
    if pd.isna(cap):
        cap = convergence.default_max_iter(str(mine["estimator"].iloc[0]))
    now = f"max_iter={cap:g}" if not pd.isna(cap) else "its max_iter"
    return [*wrapped(f"**{contender}: {capped:,} of its {total:,} cells stopped at the iteration cap ({now}) "
                     "rather than converging**, so its ranks describe a method stopped early; run it again with a "
                     "larger cap, `--param max_iter=...` (the Convergence section below lists every method)."), ""]


def contender_summary(frames: dict[str, pd.DataFrame], rankings: _Rankings, contenders: list[str],
                      twins: dict[str, str]) -> list[str]:
    """The report's opening: per contender, one item per track and scoring (:func:`contender_sentence`), how
    to read them, then every verdict in full, folded."""
    lines, details = [], []
    cells = distinct_cells(frames)  # for the capped-cells line of each contender
    for contender in contenders:
        twin = twins.get(contender)
        sentences, present = [], False
        for (track, scoring), ranked in rankings.items():
            rows = scored(frames[track], scoring)
            if not (rows["method"] == contender).any():
                if scoring == "all":  # once per track
                    sentences.append(f"{TITLES.get(track, track)}: not run.")
                continue
            present = True
            sentence, found = contender_sentence(rows, ranked["acc"], contender, contenders, twin,
                                                 where(track, scoring))
            sentences.append(sentence)
            if found is not None:
                details.append(f"- {contender}, {where(track, scoring)}: better than "
                               f"{join_names(found.better) if found.better else 'none'}; not separated from "
                               f"{join_names(found.tied) if found.tied else 'none'}; worse than "
                               f"{join_names(found.worse) if found.worse else 'none'}.")
        if not present:
            logger.warning("contender %s has no cells in any track", contender)
            lines += [f"**{contender}**: no cells in any track.", ""]
            continue
        lines += [f"**{contender}**" + (f" (extends {twin})" if twin else "") + ", in each track and scoring:", "",
                  *[line for sentence in sentences for line in wrapped(f"- {sentence}", "  ")], ""]
        lines += capped_warning(cells, contender)
    lines += [*wrapped("Two-sided Wilcoxon signed-rank tests of every pair of methods over the (data set, k) "
                       "blocks of each track (each block the mean over its trials), Holm-adjusted over all pairs "
                       f"of a ranking (alpha = {ALPHA:g}); \"better\" and \"worse\" name the family methods a "
                       "test separates from the contender, and the place counts them (the methods no other beats "
                       "first, then better than less worse than, then the mean AC). The mean AC rank (1 = best) stands "
                       "beside it; it depends on the whole pool."), ""]
    if details:
        lines += ["<details><summary>Every verdict in full</summary>", ""]
        lines += [line for item in details for line in wrapped(item, "  ")] + ["", "</details>", ""]
    return lines


def choice_sentence(rows: pd.DataFrame, ranking: Ranking | None, place: str) -> str:
    """Your-data mode: which method to use in one track and scoring, the first group by the pairwise tests
    (:attr:`.ranking.Ranking.leaders`), and where the mean ranks disagree with them."""
    if ranking is None:
        return f"{place}: too few complete blocks to rank the methods."
    leaders = ranking.leaders
    first = leaders[0]
    found = standing(ranking, first, ranking.methods)
    if ranking.friedman.p_f >= ALPHA:  # Friedman's test finds no difference: no method to recommend
        return (f"{place}: no method stands out (Friedman p = {format_p(ranking.friedman.p_f)} over "
                f"{blocks_name(ranking, rows)}); {first} beats the most methods in the pairwise tests "
                f"({len(found.better)}), by too little to choose it.")
    text = (f"{place}: use **{first}** (no Wilcoxon-Holm test finds a method better than it; better than "
            f"{len(found.better)} of {found.of - 1} over {blocks_name(ranking, rows)}; Friedman p = "
            f"{format_p(ranking.friedman.p_f)})")
    if len(leaders) > 1:  # unbeaten methods are never separated from each other
        text += f"; no test separates it from {join_names(list(leaders[1:]))}, unbeaten too"
    found_disagreement = disagreement_sentence(ranking, "AC")
    return text + "." + (f" {found_disagreement}" if found_disagreement else "")


def choice_summary(frames: dict[str, pd.DataFrame], rankings: _Rankings) -> list[str]:
    """The report's opening without contenders: per track and scoring, the method to use."""
    datasets = sorted({d for frame in frames.values() for d in frame["dataset"].unique()})
    lines = [*wrapped(f"Which method to use on {join_names(datasets)}: per track and scoring the first group, "
                      "the methods that no two-sided Wilcoxon signed-rank test (Holm-adjusted over all pairs, "
                      f"alpha = {ALPHA:g}) finds any other method better than, the one that beats the most first. "
                      "The mean ranks decide nothing: they depend on the whole pool."), ""]
    for (track, scoring), ranked in rankings.items():
        lines += wrapped("- " + choice_sentence(scored(frames[track], scoring), ranked["acc"],
                                                where(track, scoring)), "  ")
    return lines + [""]


# --- the tracks ------------------------------------------------------------------------------------------------

def rank_caption(rows: pd.DataFrame, ranking: Ranking | None) -> list[str]:
    """The caption under a rank table of AC (:func:`.benchmark_report.rank_table`)."""
    blocks = blocks_name(ranking, rows) if ranking is not None else "no complete blocks"
    return wrapped(f"Mean AC (%) over k = {k_range(rows)} and the trials. Mean rank over {blocks} (1 = best); "
                   "better / worse than: how many methods a Wilcoxon-Holm test finds it significantly better / "
                   "worse than; rows placed by those tests (the first group, then better than less worse than, "
                   "then the mean); '-': not run on every data set, so not ranked over all.")


def scoring_part(track: str, scoring: str, frame: pd.DataFrame, ranked: dict, contenders, out: Path) -> list[str]:
    """One track and scoring: the rank table and the critical-difference diagrams of AC and NMI."""
    rows = scored(frame, scoring)
    lines = [f"### {TITLES.get(track, track)}, scored on {SCORING_NAMES[scoring]}", "",
             *rank_table(rows, "acc", ranked["acc"], bold=contenders, mark_best=False), "",
             *rank_caption(rows, ranked["acc"]), ""]
    images = []
    for metric, name in METRICS.items():
        ranking = ranked[metric]
        if ranking is None:
            continue
        image = f"{track}_{scoring}_cd_{metric}.png"
        cd_diagram(ranking, out / image, f"{TITLES.get(track, track)}: {name}, {SCORING_NAMES[scoring]}",
                   highlight=[m for m in contenders if m in ranking.mean_ranks])
        images.append(f"![Critical-difference diagram: {name}, {SCORING_NAMES[scoring]}]({image})")
    if images:
        lines += [*wrapped("Critical-difference diagrams over all blocks"
                           + (", the contenders in bold" if contenders else "") + ": a bar joins methods no "
                           "Wilcoxon-Holm test separates; CD: Nemenyi's critical difference, for reference."),
                  "", *images, "", *wrapped(CD_CAPTION), ""]
    return lines


def followed(rows: pd.DataFrame, contenders, twins: dict[str, str]) -> dict[str, str]:
    """The methods a figure of one data set draws in colour, each with the name its legend shows: the
    contenders, the family's best method there by mean AC and the contenders' twins; without contenders the
    first :data:`.benchmark_report.LEADERS` by the pairwise AC tests on the data set (by mean AC when too few
    blocks to rank; :func:`.ranking.ac_order`)."""
    methods = set(rows["method"])
    if not contenders:
        return {m: m for m in ac_order(rows)[:LEADERS]}
    shown = {c: c for c in contenders if c in methods}
    family = rows[~rows["method"].isin(contenders)]
    best = family.groupby("method")["acc"].mean().idxmax() if not family.empty else None
    roles: dict[str, list[str]] = {}
    if best is not None:
        roles.setdefault(best, []).append("best of the family here")
    for contender in shown:
        twin = twins.get(contender)
        if twin in methods and twin not in contenders:
            roles.setdefault(twin, []).append(f"twin of {contender}")
    shown.update({m: f"{m} ({'; '.join(what)})" for m, what in roles.items()})
    return shown


def k_figures(track: str, frame: pd.DataFrame, contenders, twins: dict[str, str], out: Path) -> list[str]:
    """Per data set of a track, AC and NMI against k (every sample scored): the followed methods
    (:func:`followed`) in colour with their mean ± std bands, the contenders thick, the rest thin and grey."""
    lines = [f"### {TITLES.get(track, track)}: AC and NMI against k", ""]
    images = []
    for dataset in sorted(frame["dataset"].unique()):
        rows = frame[frame["dataset"] == dataset]
        shown = followed(rows, contenders, twins)
        rest = sorted(set(rows["method"]) - set(shown))
        image = f"{track}_k_{slug(dataset)}.png"
        plot_metrics_vs_k(rows.assign(method=rows["method"].map(lambda m: shown.get(m, m))),
                          f"{TITLES.get(track, track)}: {dataset}", out / image, methods=list(shown.values()),
                          caption=f"every sample scored; mean ± std over {trials_per_k(rows['trial'].nunique())}"
                          + (f"; thin grey: the other {plural(len(rest), 'method')} (mean only)" if rest else ""),
                          background=rest, thick=[c for c in contenders if c in shown])
        images.append(f"![AC and NMI against k, {dataset}]({image})")
    what = ("the contenders (thick), the family's best method on the data set by mean AC and the contenders' "
            "twins" if contenders else f"the first {LEADERS} methods by the pairwise AC tests on the data set")
    return lines + [*wrapped(f"Mean over the trials, every sample scored: in colour {what}; every other method "
                             "as a thin grey line."), "", *images, ""]


def track_section(track: str, frame: pd.DataFrame, rankings: _Rankings, contenders, twins: dict[str, str],
                  out: Path) -> list[str]:
    """One track: what it holds, the contenders' settings, per scoring the rank table and diagrams, then the
    figures against k."""
    datasets = sorted(frame["dataset"].unique())
    present = [c for c in contenders if (frame["method"] == c).any()]
    lines = [f"## {TITLES.get(track, track)}", "",
             *wrapped(f"{plural(frame['method'].nunique(), 'method')} on {plural(len(datasets), 'data set')} "
                      f"({', '.join(datasets)}), "
                      f"k = {k_range(frame)}, {trials_per_k(frame['trial'].nunique())}; "
                      f"{len(frame):,} cells" + (f"; contenders in bold: {join_names(present)}." if present else
                                                 ".")), ""]
    if present:
        lines += ["<details><summary>Settings of the contenders</summary>", "",
                  *settings_table(frame[frame["method"].isin(present)]), "", "</details>", ""]
    for scoring in scorings_of(frame):
        lines += scoring_part(track, scoring, frame, rankings[(track, scoring)], contenders, out)
    return lines + k_figures(track, frame, contenders, twins, out)


# --- the cost --------------------------------------------------------------------------------------------------

def seconds_table(frames: dict[str, pd.DataFrame], contenders) -> list[str]:
    """Per data set, mean seconds per cell (fit + KMeans) of each contender against the family's median
    method and its slowest method (each method's mean over its cells of every track)."""
    every = pd.concat(frames.values(), ignore_index=True)
    every = every.assign(seconds=every[["fit_seconds", "kmeans_seconds"]].sum(axis=1, min_count=1))
    per_method = every.groupby(["dataset", "method"])["seconds"].mean()
    if per_method.isna().all():
        return []
    present = [c for c in contenders if (every["method"] == c).any()]
    lines = [f"| data set | {' | '.join(present + ['family: median method', 'family: slowest method'])} |",
             "|---" * (len(present) + 3) + "|"]
    for dataset in sorted(every["dataset"].unique()):
        times = per_method.loc[dataset]
        family = times.drop(index=[c for c in present if c in times.index]).dropna()
        median = family.median() if not family.empty else float("nan")
        cells = []
        for contender in present:
            value = times.get(contender, float("nan"))
            ratio = f" ({value / median:.2f} × median)" if not pd.isna(value) and median > 0 else ""
            cells.append(seconds_text(value) + ratio)
        slowest = f"{seconds_text(family.max())} ({family.idxmax()})" if not family.empty else "-"
        lines.append(f"| {dataset} | {' | '.join(cells + [seconds_text(median), slowest])} |")
    return lines + ["", *wrapped("Mean seconds per cell, fit plus KMeans, over every track. The family's shipped "
                                 "cells were timed on the machine that computed them, the cells of this run here: "
                                 "compare orders of magnitude rather than percent.")]


def cost_section(frames: dict[str, pd.DataFrame], contenders, cost: dict | None) -> list[str]:
    """What the run took (``cost``: cells computed and shipped, wall time, workers) and the seconds per cell
    (:func:`seconds_table`); empty when there is neither."""
    table = seconds_table(frames, contenders)
    if not cost and not table:
        return []
    lines = ["## Cost", ""]
    if cost:
        wall = cost.get("wall_seconds")
        lines += [*wrapped(f"{int(cost.get('cells_computed', 0)):,} cells computed by this run and "
                           f"{int(cost.get('cells_shipped', 0)):,} shipped family cells reused"
                           + (f"; wall time {duration(wall)} ({wall:,.0f} s)" if wall is not None else "")
                           + (f" on {cost['workers']} worker(s)" if cost.get("workers") else "") + "."), ""]
    return lines + table + [""]


# --- the report ------------------------------------------------------------------------------------------------

def check_frames(frames: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The tracks that have cells, each checked for the columns the report reads."""
    kept = {}
    for track, frame in frames.items():
        if frame is None or frame.empty:
            logger.warning("track %s has no cells; left out of the report", track)
            continue
        missing = [column for column in COLUMNS if column not in frame]
        if missing:
            raise ValueError(f"track {track}: the cells lack the columns {', '.join(missing)}")
        kept[track] = frame
    if not kept:
        raise ValueError("no track has cells to report")
    return kept


def build(out: Path, frames: dict[str, pd.DataFrame], contenders: list[str], *, title: str,
          twins: dict[str, str] | None = None, notes: list[str] = (), cost: dict | None = None,
          how: list[str] = (), tuned: dict | None = None) -> Path:
    """Write the report of a contender run, ``report.md`` with its PNG figures, into ``out``.

    Parameters
    ----------
    out : Path
        The report's folder, made if missing; the figures sit beside ``report.md`` (relative links).
    frames : dict of str to DataFrame
        Track name -> every cell of the track, family and contenders together: columns :data:`COLUMNS`
        (``method`` the short name, e.g. ``NMF`` or a contender's label), and ``acc_unlabelled``,
        ``nmi_unlabelled`` in a label track (then scored both ways, :func:`.benchmark_report.scorings_of`).
        The report follows the order of the tracks.
    contenders : list of str
        The methods under evaluation (values of ``method``). Empty: the run is "your data against the
        family" and the report says which method to use in each track.
    title : str
        The report's title.
    twins : dict of str to str, optional
        Contender -> the family method it extends, compared with it in the opening and drawn beside it.
    notes : sequence of str
        Lines listed under the opening (e.g. a data set left out, and why).
    cost : dict, optional
        ``cells_computed``, ``cells_shipped``, ``wall_seconds`` and ``workers`` of the run, for the cost
        section.
    how : sequence of str
        How each contender's parameters were set, one sentence each (tuned by ``--grid``, given with
        ``--param``, or its defaults); empty for "your data".
    tuned : dict, optional
        Track -> (the tuned rows of contenders and family, the contenders' searched settings), when the
        contenders were given a grid (:func:`.tuning_report.contender_section`); without contenders, the
        family tuned on the user's data (``--dataset --tune``) and its whole settings table. The choice among
        every method on a file is ``python -m src.cluster``'s (its folds are fitted there); the report says so.

    Returns
    -------
    Path
        ``out / "report.md"``.

    Raises
    ------
    ValueError
        When no track has cells, or a track lacks a column the report reads.

    References
    ----------
    Demšar (2006); Benavoli, Corani and Mangili (2016): see the module's references.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    frames = check_frames(frames)
    contenders, twins = list(contenders), dict(twins or {})
    rankings = rank_all(frames)
    lines = [f"# {title}", "", *single_trial_lines(frames)]
    lines += contender_summary(frames, rankings, contenders, twins) if contenders else choice_summary(frames,
                                                                                                      rankings)
    if notes:
        lines += ["Notes:", "", *[line for note in notes for line in wrapped(f"- {note}", "  ")], ""]
    if tuned and not contenders:
        how = [*how, "every family method: tuned on this file per trial by the benchmark's rule, on the labels it "
                     "may see, each grid grown where its choices pile at an edge (`src/tuning/`)"]
    if how:
        lines += tuning_report.contender_section(out, frames, tuned or {}, contenders, list(how), TITLES,
                                                 ranking_over)
    if tuned and not contenders:
        lines += ["To choose among every method and setting on this file with its labels, and get each sample's "
                  "class back: `python -m src.cluster` (the manual's `docs/cluster.md`).", ""]
    for track, frame in frames.items():
        lines += track_section(track, frame, rankings, contenders, twins, out)
    lines += convergence.section(distinct_cells(frames))
    lines += cost_section(frames, contenders, cost)
    path = out / "report.md"
    write_atomic(path, "\n".join(lines).rstrip("\n") + "\n")
    logger.debug("wrote %s", path)
    return path

"""The tuned benchmark in the family's report: does the ranking survive when every method is tuned alike?

Reads the tuned tables of each track (:mod:`src.tuning.tables`: ``<out>/tuned/<track>.csv`` and
``<track>_settings.csv``) beside the fixed-setting rows, and gives the report

* its opening (:func:`answer_section`): per track, the first group by the pairwise tests and one figure of each
  method's standing by them at the fixed settings and tuned (in the unsupervised track, the oracle's), and one
  figure of how each method's place moves from one to the other;
* the tuned part (:func:`tuned_section`): what tuning buys each method (tuned minus fixed AC, with its 95%
  interval over the (data set, k) blocks), the expected best AC against the number of settings tried
  (Dodge et al. 2019), each method's AC against its parameter per data set (the LCF paper's Fig. 4 for every
  method) with the default and the chosen values marked, and each paper's claim at fixed settings and tuned.

References
----------
Dodge, J., Gururangan, S., Card, D., Schwartz, R. and Smith, N. A. (2019). Show your work: improved reporting
of experimental results. EMNLP 2019, 2185-2194.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..choice.entrants import ENTRANTS
from ..errors import ConfigError
from ..tuning import EDGES_FILE, growth, grids, tables
from ..tuning.homes import family_grids
from ..tuning.selection import FOLDS, MIN_VALIDATION, REASONS
from . import choice_report
from .figures import pyplot, style
from .verdicts import t_interval
from .ranking import ALPHA, Ranking, answer_lines, join_names, slug

#: What the tuned rows are called per track: the rule's choice in a label track, the oracle in the other.
TUNED_NAMES = {"unsupervised": "oracle", "labels10": "tuned", "labels30": "tuned"}


def read(out: Path, tracks) -> dict[str, tuple[pd.DataFrame, pd.DataFrame | None]]:
    """The tuned tables of the tracks that have them, each label track's tuned rows with the choice's two
    entrants as they ship (:func:`.choice_report.with_entrants`, :mod:`src.choice.entrants`)."""
    found = {}
    for track in tracks:
        read_back = tables.read(out, track)
        if read_back is None:
            continue
        rows, searched = read_back
        found[track] = choice_report.with_entrants(track, rows), searched
    return found


def edge_table(out: Path, searched: dict[str, pd.DataFrame]) -> pd.DataFrame | None:
    """The edge table of the tuned run (:meth:`src.tuning.growth.Growth.edges`), re-derived from the searched
    settings (:func:`src.tuning.growth.replay`: the settings the run fitted, as it wrote or as they ship), else
    the one the run wrote (``tuned/edges.csv``); None without either."""
    label = {track: rows for track, rows in searched.items() if rows is not None and "estimator" in rows}
    if label:
        grown, first, last = growth.replay(label, family_grids(list(label)), list(label))
        return grown.edges(first, last)
    path = Path(out) / TUNED_DIR / EDGES_FILE
    return pd.read_csv(path) if path.is_file() else None


def edge_lines(edges: pd.DataFrame | None, titles: dict[str, str]) -> list[str]:
    """Where the grids stop the search: per method and parameter (over the data sets of each label track), the
    share of the rule's own choices at each edge of the declared grid and of the grown one, the values it
    grew to, and each grid whose choices still pile at an edge, with why."""
    if edges is None or edges.empty:
        return []
    lines = ["### Where the grids stop the search", "",
             f"A grid grows past an edge where more than {growth.PILE:.0%} of the rule's own choices (at least "
             f"{growth.MIN_CHOICES} trials of a data set and track chose by a score; ties and too few samples "
             "are no choice) sit at it, by the parameter's step, until they no longer pile or the next value "
             "passes the bound declared beside the grid (`conf/method/<method>.yaml`, `grow`; "
             "`src/tuning/growth.py`). Shares of the rule's own choices at the low / high edge, over the data "
             "sets of the track, before growth (the declared grid) and after, and of the trials moved off the "
             "default the share at either edge (blind to the edges, about two thirds of a four-value grid's "
             "moves would be):", "",
             "| track | method | parameter | declared | bounds | own choices at low / high: before | after | "
             "moves at an edge: before | after | grew to | still piled |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for (track, method, param), rows in edges.groupby(["track", "method", "parameter"], sort=True):
        def share(column_n, low, high):
            n = rows[column_n].sum()
            if n == 0:
                return "-"
            return f"{(rows[low] * rows[column_n]).sum() / n:.0%} / {(rows[high] * rows[column_n]).sum() / n:.0%}"
        grew = [f"{value:g} ({dataset})" for dataset, text in zip(rows["dataset"], rows["grown_to"])
                for value in growth.text_values(text)]
        piled = [f"{dataset} {side} ({'bound' if why == 'bound' else why})"
                 for dataset, sides, whys in zip(rows["dataset"], rows["still_piles"], rows["stops"])
                 if isinstance(sides, str) and sides for side, why in zip(sides.split(","), str(whys).split(","))]
        def moved(column_n, edge):
            n = rows[column_n].sum()
            return "-" if n == 0 else f"{(rows[edge] * rows[column_n]).sum() / n:.0%} of {n}"
        lines.append(f"| {titles.get(track, track)} | {method} | {param} | {rows['declared'].iloc[0]} | "
                     f"{rows['bounds'].iloc[0]} | {share('n_before', 'low_before', 'high_before')} | "
                     f"{share('n', 'low', 'high')} | {moved('moved_before', 'moved_edge_before')} | "
                     f"{moved('moved', 'moved_edge')} | {', '.join(grew) or '-'} | {', '.join(piled) or '-'} |")
    return [*lines, ""]


def grown_text(edges: pd.DataFrame | None, track: str) -> dict[str, str]:
    """Per method, the values its grids grew to in ``track`` (``alpha 0.1 (coil20), 0.01 (coil20)``)."""
    if edges is None or edges.empty:
        return {}
    found = {}
    for (method, param), rows in edges[edges["track"] == track].groupby(["method", "parameter"], sort=True):
        values = sorted({value for text in rows["grown_to"] for value in growth.text_values(text)})
        if values:
            where = {value: [d for d, text in zip(rows["dataset"], rows["grown_to"])
                             if value in growth.text_values(text)] for value in values}
            part = f"{param} " + ", ".join(f"{value:g} ({len(where[value])} of {len(rows)} data sets)"
                                           for value in values)
            found[method] = f"{found[method]}; {part}" if method in found else part
    return found


def tuned_frame(tuned: pd.DataFrame, fixed: pd.DataFrame) -> pd.DataFrame:
    """The tuned rows as a track's rows, on the data sets and methods of ``fixed`` and the choice's entrants
    (:data:`src.choice.entrants.ENTRANTS`, ranked with the family)."""
    methods = set(fixed["method"].unique()) | set(ENTRANTS)
    rows = tuned[tuned["dataset"].isin(fixed["dataset"].unique()) & tuned["method"].isin(methods)]
    return rows.reset_index(drop=True)


def net_wins(ranking: Ranking, method: str) -> int:
    """How many methods a Wilcoxon-Holm test finds ``method`` better than, less how many it finds better than
    ``method``: its standing by the pairwise tests alone."""
    return len(ranking.beats(method)) - len(ranking.beaten_by(method))


def rank_figure(title: str, fixed: Ranking, tuned: Ranking | None, tuned_name: str, path: Path) -> Path:
    """Each method's standing by the pairwise AC tests (:func:`net_wins`) at the fixed settings (open circle)
    and ``tuned_name`` (filled), in the tuned ranking's place order (:attr:`.ranking.Ranking.order`), its first
    group (no method better by a Wilcoxon-Holm test) in bold; without a tuned ranking, the fixed one alone."""
    plt = pyplot()
    lead = tuned if tuned is not None else fixed
    order = list(lead.order)
    fig, ax = plt.subplots(figsize=(6.4, 0.32 * len(order) + 1.5))
    y = np.arange(len(order))[::-1]
    first = set(lead.leaders)
    before = [net_wins(fixed, m) if m in fixed.mean_ranks else np.nan for m in order]
    ax.scatter(before, y, facecolors="none" if tuned is not None else "0.3", edgecolors="0.3",
               label="fixed settings", zorder=3)
    if tuned is not None:
        after = [net_wins(tuned, m) for m in order]
        ax.scatter(after, y, color="C0", label=tuned_name, zorder=4)
        for yi, b, a in zip(y, before, after):
            if not np.isnan(b):
                ax.plot([b, a], [yi, yi], color="0.75", zorder=2)
    ax.set_yticks(y, order)
    for label in ax.get_yticklabels():
        if label.get_text() in first:
            label.set_fontweight("bold")
    ax.axvline(0, color="0.6", lw=0.8)
    ax.set_xlabel("methods it beats minus methods that beat it\n(Wilcoxon-Holm, alpha = "
                  f"{ALPHA:g}; bold: the first group, beaten by none)", fontsize=9)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="best", fontsize=8)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def move_figure(moves: dict[str, tuple[Ranking, Ranking, str]], path: Path) -> Path:
    """Each method's place at the fixed settings (left) and tuned (right), one panel per track."""
    plt = pyplot()
    fig, axes = plt.subplots(1, len(moves), figsize=(max(4.6, 3.4 * len(moves)),
                                                     0.3 * max(len(r[1].methods) for r in moves.values()) + 1.4))
    axes = np.atleast_1d(axes)
    for ax, (title, (fixed, tuned, name)) in zip(axes, moves.items()):
        common = [m for m in tuned.order if m in fixed.order]
        before = {m: i + 1 for i, m in enumerate(m for m in fixed.order if m in common)}
        after = {m: i + 1 for i, m in enumerate(common)}
        for i, m in enumerate(common):
            moved = before[m] != after[m]
            ax.plot([0, 1], [before[m], after[m]], color=style(i)["color"] if moved else "0.7",
                    lw=1.6 if moved else 0.8)
            ax.text(-0.04, before[m], m, ha="right", va="center", fontsize=7)
            ax.text(1.04, after[m], m, ha="left", va="center", fontsize=7)
        ax.set_xlim(-0.6, 1.6)
        ax.set_ylim(len(common) + 0.5, 0.5)
        ax.set_xticks([0, 1], ["fixed", name])
        ax.set_yticks([])
        ax.set_title(title, fontsize=9)
        for side in ("top", "right", "left"):
            ax.spines[side].set_visible(False)
    fig.suptitle("Place by the pairwise AC tests (coloured: moved)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def gains(fixed: pd.DataFrame, tuned: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Per method: mean AC fixed and tuned (points), the gain and its ``level`` t-interval over the (data
    set, k) blocks (each block's mean over its trials), and how often each setting was chosen."""
    key = ["dataset", "k"]
    a = fixed.groupby(["method", *key])["acc"].mean()
    b = tuned.groupby(["method", *key])["acc"].mean()
    pairs = pd.concat({"fixed": a, "tuned": b}, axis=1).dropna()
    out = []
    for method, block in pairs.groupby(level="method"):
        diff = 100 * (block["tuned"] - block["fixed"])
        low, high = t_interval(diff, level)
        chosen = tuned[tuned["method"] == method]
        out.append({"method": method, "fixed": 100 * block["fixed"].mean(), "tuned": 100 * block["tuned"].mean(),
                    "gain": float(diff.mean()), "low": float(low), "high": float(high), "blocks": len(diff),
                    "moved": float((chosen["setting"] != chosen["default_setting"]).mean())
                    if "default_setting" in chosen else math.nan})
    return pd.DataFrame(out).sort_values("gain", ascending=False, ignore_index=True)


def expected_best(searched: pd.DataFrame) -> pd.DataFrame:
    """The expected best test AC over n settings drawn at random with replacement, per method and n = 1..N
    (Dodge et al. 2019): per trial, sum over the sorted scores a_(i) of a_(i) ((i/N)^n - ((i-1)/N)^n),
    then the mean over every (data set, k, trial)."""
    out = []
    for method, rows in searched.groupby("method"):
        per = rows.groupby(["dataset", "k", "trial"])["acc"].apply(lambda s: np.sort(s.to_numpy()))
        n_max = int(per.map(len).max())
        for n in range(1, n_max + 1):
            values = []
            for scores in per:
                size = len(scores)
                i = np.arange(1, size + 1)
                values.append(float(np.sum(scores * ((i / size) ** n - ((i - 1) / size) ** n))))
            out.append({"method": method, "n": n, "expected": 100 * float(np.mean(values))})
    return pd.DataFrame(out)


def expected_figure(curves: dict[str, pd.DataFrame], path: Path) -> Path:
    """The expected best AC against the number of settings tried, one panel per track."""
    plt = pyplot()
    names = sorted({m for curve in curves.values() for m in curve["method"].unique()})
    fig, axes = plt.subplots(1, len(curves), figsize=(max(6.0, 4.2 * len(curves)), 3.4), squeeze=False)
    handles = {}
    for ax, (title, curve) in zip(axes[0], curves.items()):
        for method, rows in curve.groupby("method"):
            st = style(names.index(method))  # one colour and marker per method in every panel
            handles[method], = ax.plot(rows["n"], rows["expected"], marker=st["marker"], color=st["color"],
                                       label=method, ms=4)
        ax.set_xlabel("settings tried (drawn at random)")
        ax.set_ylabel("expected best AC (%)")
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.set_title(title, fontsize=9)
        ax.grid(alpha=0.3)
    axes[0][-1].legend([handles[m] for m in names], names, fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.suptitle("Expected best test AC over n settings (Dodge et al. 2019)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def parameter_figure(method: str, searched: dict[str, pd.DataFrame], path: Path, declared=None) -> Path:
    """The method's mean test AC against each tuned parameter per data set (a panel each), a line per track
    and parameter (the others at their defaults); a dotted line at the default, each point's marker as large
    as the share of trials the rule chose it; with the ``declared`` grid (:class:`src.tuning.grids.Grid`), its
    edges as dashed lines and the range past its growth bounds shaded (:mod:`src.tuning.growth`)."""
    plt = pyplot()
    rows = pd.concat([s.assign(track=t) for t, s in searched.items()], ignore_index=True)
    rows = rows[rows["method"] == method]
    datasets = sorted(rows["dataset"].unique())
    fig, axes = plt.subplots(1, len(datasets), figsize=(max(5.5, 3.0 * len(datasets) + 1.6), 3.0), squeeze=False)
    default = grids.parse_setting(rows.loc[rows["default"].astype(bool), "setting"].iloc[0])
    linestyles = ["-", "--"]
    for ax, dataset in zip(axes[0], datasets):
        here = rows[rows["dataset"] == dataset]
        for j, (param, base) in enumerate(default.items()):
            for i, (track, by_track) in enumerate(here.groupby("track", sort=False)):
                settings = by_track.groupby("setting").agg(acc=("acc", "mean"), chosen=("chosen", "mean"))
                points = []
                for text, values in settings.iterrows():
                    parsed = grids.parse_setting(text)
                    if all(parsed[p] == default[p] for p in default if p != param):
                        points.append((parsed[param], 100 * values["acc"], values["chosen"]))
                points.sort()
                if not points:
                    continue
                x, y, share = zip(*points)
                color = style(i)["color"]
                ax.plot(x, y, linestyle=linestyles[j % 2], color=color,
                        label=f"{track} ({param})" if len(default) > 1 else track)
                ax.scatter(x, y, s=[12 + 120 * s for s in share], color=color, zorder=3)
            ax.axvline(base, color="0.5", linestyle=":", lw=1)
            if declared is not None and param in declared.values:
                for edge in (min(declared.values[param]), max(declared.values[param])):
                    ax.axvline(edge, color="0.35", linestyle="--", lw=0.8)
                low, high = declared.bounds[param]
                ax.axvspan(low / 10, low, color="0.85", lw=0, zorder=0)
                ax.axvspan(high, high * 10, color="0.85", lw=0, zorder=0)
        ax.set_xscale("log")
        ax.set_title(dataset, fontsize=9)
        ax.set_xlabel(", ".join(default))
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("mean AC (%)")
    axes[0][-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.suptitle(f"{method}: mean AC against {' and '.join(default)}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def declared_grid(searched: dict[str, pd.DataFrame], method: str):
    """The declared grid of the family method ``method`` (a short name) in the searched settings, or None
    (a contender, or a table without the ``estimator`` column)."""
    for rows in searched.values():
        found = rows.loc[rows["method"] == method, "estimator"] if "estimator" in rows else pd.Series(dtype=str)
        if not found.empty:
            try:
                return grids.family_grid(str(found.iloc[0]))
            except ConfigError:
                return None
    return None


def gain_table(table: pd.DataFrame, tuned_name: str, grown: dict[str, str] | None = None) -> list[str]:
    """The gains of :func:`gains` as a markdown table, largest first; ``grown`` (method -> text), where given,
    a column of the values each method's grids grew to (:func:`grown_text`)."""
    extra = grown is not None
    lines = [f"| method | AC fixed | AC {tuned_name} | gain (points) | 95% interval | (data set, k) blocks | "
             "trials moved off the default |" + (" grid grew to |" if extra else ""),
             "|---|---|---|---|---|---|---|" + ("---|" if extra else "")]
    for row in table.itertuples():
        moved = "-" if math.isnan(row.moved) else f"{100 * row.moved:.0f}%"
        lines.append(f"| {row.method} | {row.fixed:.1f} | {row.tuned:.1f} | {row.gain:+.1f} | "
                     f"[{row.low:+.1f}, {row.high:+.1f}] | {row.blocks} | {moved} |"
                     + (f" {grown.get(row.method, '-')} |" if extra else ""))
    return lines


def selection_counts(tuned: pd.DataFrame) -> list[str]:
    """How the tuned rows' settings were chosen, per reason, as one sentence."""
    counts = tuned.loc[(tuned["selection"] != "nothing to tune") & ~tuned["method"].isin(ENTRANTS),
                       "selection"].value_counts()
    if counts.empty:
        return []
    parts = [f"{n:,} {REASONS.get(reason, reason)}" for reason, n in counts.items()]
    return [f"Of {int(counts.sum()):,} trials of tuned methods: " + "; ".join(parts) + ".", ""]


def rule_lines() -> list[str]:
    """The selection rule in a few sentences (the whole of it: :mod:`src.tuning.selection`)."""
    return [f"**The rule** (`src/tuning/selection.py`). Per trial, each method's grid (`conf/method/`, `tune`) "
            "is searched on the labels the method may see, never on the test labels. A method that takes no "
            "labels is fitted once per setting and the setting whose clustering has the best AC on the "
            f"trial's labelled samples is chosen. A method that takes labels is cross-validated: the labelled "
            f"samples are dealt into {FOLDS} folds stratified by class; per fold it is fitted with the other "
            "fold's labels and scored on the fold's, which it was not told; the best mean over the folds "
            "chooses, and the chosen setting fitted with every label is its result. A tie at the best "
            f"score keeps the default, and so does a trial with fewer than {MIN_VALIDATION} samples to score "
            "(in a fold). The unsupervised track sees no label: its default stands, and its **oracle** (the "
            "best setting per trial on the test labels) is a ceiling, never a result.", ""]


def answer_rankings(fixed: dict[str, pd.DataFrame], tuned: dict[str, tuple[pd.DataFrame, pd.DataFrame]],
                    ranking_over) -> dict[str, tuple[Ranking, Ranking | None]]:
    """Per track, the AC rankings the answer reads (every sample scored): at the fixed settings and, where the
    tuned tables are there, tuned (the oracle's in the unsupervised track), else None; a track too small to
    rank is left out. ``ranking_over(frame, metric)`` ranks a track's rows."""
    found = {}
    for track, frame in fixed.items():
        fixed_ranking = ranking_over(frame, "acc")
        if fixed_ranking is not None:
            found[track] = (fixed_ranking, ranking_over(tuned_frame(tuned[track][0], frame), "acc")
                            if track in tuned else None)
    return found


def answer_section(out: Path, answers: dict[str, tuple[Ranking, Ranking | None]], titles: dict[str, str],
                   notes: dict[str, list[str]] | None = None) -> list[str]:
    """The report's opening: per track of ``answers`` (:func:`answer_rankings`), the first group by the
    pairwise tests at fixed settings and tuned, where the mean ranks disagree with them
    (:func:`.ranking.answer_lines`), the track's ``notes`` lines (a label track's references), one figure each,
    and the moves (one figure)."""
    notes = notes or {}
    lines = ["## The answer", "",
             "Per track, the **first group**: the methods that no two-sided Wilcoxon signed-rank test over the "
             f"(data set, k) blocks, Holm-adjusted over all pairs (alpha = {ALPHA:g}), finds any other method "
             "better than. Mean ranks decide nothing here: they depend on which other methods are in the pool "
             "(Benavoli, Corani and Mangili 2016), and where they order a pair against its test a sentence says "
             "so.", ""]
    moves = {}
    for track, (fixed_ranking, tuned_ranking) in answers.items():
        name = TUNED_NAMES.get(track, "tuned")
        image = f"answer_{slug(track)}.png"
        title = titles.get(track, track)
        if tuned_ranking is None:
            rank_figure(f"{title}: fixed settings", fixed_ranking, None, "", out / image)
            lines += [f"### {title}", "", " ".join(answer_lines(fixed_ranking, "AC", "At the fixed settings")),
                      "", *notes.get(track, []), "(`python -m src.benchmark --tune` adds every method tuned alike.)", "",
                      f"![{title}: standing by the pairwise tests]({image})", ""]
            continue
        rank_figure(f"{title}: fixed settings and {name}", fixed_ranking, tuned_ranking, name, out / image)
        moves[title] = (fixed_ranking, tuned_ranking, name)
        lead = ("With every method tuned by the rule" if name == "tuned" else
                "With each method at its oracle setting (a diagnostic: the test labels chose it)")
        lines += [f"### {title}", "", " ".join(answer_lines(fixed_ranking, "AC", "At the fixed settings")), "",
                  " ".join(answer_lines(tuned_ranking, "AC", lead)), "", *notes.get(track, []),
                  f"![{title}: standing by the pairwise tests, fixed and {name}]({image})", ""]
    if moves:
        move_figure(moves, out / "answer_moves.png")
        lines += ["### How the places move", "", "![Places at fixed settings and tuned](answer_moves.png)", ""]
    return lines


def tuned_section(out: Path, fixed: dict[str, pd.DataFrame], tuned: dict[str, tuple[pd.DataFrame, pd.DataFrame]],
                  titles: dict[str, str], claims) -> list[str]:
    """The tuned part: rule, gains, expected best AC, parameter figures, claims (module docstring);
    ``claims(frames)`` gives :func:`src.presentation.benchmark_report.claim_rows` of a set of tracks' rows."""
    if not tuned:
        return []
    lines = ["## Tuned alike", "", *rule_lines()]
    curves, searched_all, unscored = {}, {}, []
    edges = edge_table(out, {track: searched for track, (_, searched) in tuned.items() if track in fixed})
    for track, (rows, searched) in tuned.items():
        if track not in fixed:
            continue
        name = TUNED_NAMES.get(track, "tuned")
        frame = tuned_frame(rows, fixed[track])
        if searched is not None:
            searched = tables.with_grid(searched[searched["dataset"].isin(fixed[track]["dataset"].unique())])
        table = gains(fixed[track], frame)
        still = frame.loc[frame["selection"] == "nothing to tune", "method"].unique()
        lines += [f"### {titles.get(track, track)}: what tuning buys", "", *selection_counts(frame),
                  *gain_table(table[~table["method"].isin(still)], name,
                              grown_text(edges, track) if edges is not None and track in set(edges["track"])
                              else None), "",
                  f"Nothing to tune, so the same as at fixed settings: {join_names(sorted(still))}." if len(still)
                  else "", ""]
        if searched is not None and not searched.empty:
            curves[titles.get(track, track)] = expected_best(searched)
            searched_all[track] = searched
        elif searched is None:
            unscored.append(titles.get(track, track))
    lines += edge_lines(edges, titles)
    if curves:
        expected_figure(curves, out / "tuned_expected_best.png")
        lines += ["### Expected best AC against the settings tried", "",
                  "What tuning on the test labels with a budget of n settings would buy (Dodge et al. 2019): "
                  "per trial, the expected best test AC of n settings drawn at random from the grid, then the "
                  "mean over trials. A flat curve: the default is as good as any setting; a steep one: a "
                  "method whose rank rests on its setting.", "", "![Expected best AC](tuned_expected_best.png)", ""]
    if unscored:
        lines += [f"{join_names(unscored)}: each searched setting's scores are not on disk (the tuned rows were "
                  "laid out from the shipped cells, which hold the chosen settings only), so the expected best AC "
                  "and each method's AC against its parameter are not drawn for them.", ""]
    methods = sorted({m for s in searched_all.values() for m in s["method"].unique()})
    if methods:
        lines += ["### Each method against its parameter", ""]
        for method in methods:
            image = f"tuned_parameter_{slug(method)}.png"
            parameter_figure(method, searched_all, out / image, declared_grid(searched_all, method))
            lines.append(f"![{method} against its parameter]({image})")
        lines[lines.index("### Each method against its parameter") + 1:][:0] = [
            "Mean test AC per data set against each tuned parameter, the others at their defaults (the LCF "
            "paper's Fig. 4 for every method), a line per track; the dotted line marks the default, the dashed "
            "lines the edges of the declared grid, the shaded ranges lie past the bounds its growth may reach, "
            "and each point is as large as the share of trials where the rule chose that value.", ""]
        lines.append("")
    lines += claims_comparison(fixed, tuned, claims)
    return lines


def claims_comparison(fixed, tuned, claims) -> list[str]:
    """Each paper's claim at the fixed settings and with every method tuned, side by side."""
    tuned_frames = {t: tuned_frame(tuned[t][0], f) for t, f in fixed.items() if t in tuned}
    if not tuned_frames:
        return []
    before = {(r["paper"], r["datasets"]): r for r in claims(fixed)}
    lines = ["### The papers' claims, tuned", "",
             "Each paper's claim (its method first and significantly better than every other method of its "
             "track, AC) at the fixed settings and with every method tuned by the rule; in the unsupervised track "
             "(LCF, FNMF) with every method at its oracle setting, a diagnostic, since no label may choose there.",
             "", "| paper | track | data sets | fixed settings | tuned | why (tuned) |", "|---|---|---|---|---|---|"]
    for row in claims(tuned_frames):
        if row["verdict"] == "not run":
            continue
        old = before.get((row["paper"], row["datasets"]), {}).get("verdict", "-")
        change = "" if old == row["verdict"] else " (changed)"
        name = "oracle: " if TUNED_NAMES.get(row["track"]) == "oracle" else ""
        lines.append(f"| {row['paper']} | {row['track']} | {row['datasets']} | {old} | {name}**{row['verdict']}**"
                     f"{change} | {row['why']} |")
    return lines + [""]


def contender_section(out: Path, fixed: dict[str, pd.DataFrame], tuned: dict[str, tuple[pd.DataFrame, pd.DataFrame]],
                      contenders: list[str], how: list[str], titles: dict[str, str], ranking_over) -> list[str]:
    """A contender report's part on tuning: how each contender's parameters were set (``how``), and, for
    contenders given a grid, per track the ranking of the whole field tuned alike (``tuned``: track -> the
    tuned rows of contenders and family, and the contenders' searched settings) beside the fixed one, and each
    contender's AC against its parameter."""
    lines = ["## How each method's parameters were set", "", *[f"- {sentence}" for sentence in how], ""]
    if not tuned:
        return lines
    lines += [*rule_lines()]
    searched_all = {}
    for track, (rows, searched) in tuned.items():
        if track not in fixed:
            continue
        name = TUNED_NAMES.get(track, "tuned")
        fixed_ranking, tuned_ranking = ranking_over(fixed[track], "acc"), ranking_over(rows, "acc")
        title = titles.get(track, track)
        if fixed_ranking is None or tuned_ranking is None:
            continue
        image = f"tuned_{slug(track)}.png"
        rank_figure(f"{title}: fixed settings and {name}", fixed_ranking, tuned_ranking, name, out / image)
        places = [] if contenders else [f"{tuned_ranking.order[0]} is first {name}, #"
                                        f"{fixed_ranking.order.index(tuned_ranking.order[0]) + 1} at fixed settings"
                                        if tuned_ranking.order[0] in fixed_ranking.order else
                                        f"{tuned_ranking.order[0]} is first {name}"]
        for contender in contenders:
            if contender in tuned_ranking.order and contender in fixed_ranking.order:
                places.append(f"{contender} is #{tuned_ranking.order.index(contender) + 1} of "
                              f"{len(tuned_ranking.order)} {name} (#{fixed_ranking.order.index(contender) + 1} at "
                              "fixed settings), by the pairwise tests")
        lines += [f"### {title}, every method {name}", "", ("; ".join(places) + ".") if places else "",
                  "", *selection_counts(rows[rows["method"].isin(contenders)] if contenders else
                                        rows[~rows["method"].isin(ENTRANTS)]), f"![{title}]({image})", ""]
        searched_all[track] = searched
    for contender in contenders:
        if any((s["method"] == contender).any() for s in searched_all.values()):
            image = f"tuned_parameter_{slug(contender)}.png"
            parameter_figure(contender, {t: s for t, s in searched_all.items() if (s["method"] == contender).any()},
                             out / image)
            lines += [f"![{contender} against its parameter]({image})", ""]
    return lines

"""Figures of the verdicts: every published number against ours, and per paper a forest of the differences.

Both are drawn from the scorecard's rows as :func:`src.presentation.published.table` flattens them (the columns
of ``scorecard.csv``: ``paper value``, ``ours``, ``difference``, ``ci90 low`` and ``ci90 high`` of ours - paper,
``verdict``), so a figure shows exactly the numbers and verdicts of the tables beside it:

* :func:`figure_published_vs_ours`, the front page's figure: the paper's value across, ours up, our 90% interval
  as a vertical bar (the paper's value plus the interval of the difference), the diagonal and the band of +-5
  points around it. A number *agrees* exactly when its bar lies inside the band, so the figure shows the rule
  as well as the results. Quoted gains are differences between two methods (a few points), not levels (30 to
  100 points): on the same axes they would crowd into a corner near zero, and a gain of +5 against +10 would
  look as close as two table values 5 points apart at 80. They get a panel of their own, with the same
  diagonal, band and bars.
* :func:`figure_forest`, one per paper: each number's difference ours - paper with its 90% interval as a
  horizontal bar, zero marked and the +-5 band shaded, rows grouped as the paper's tables are (one panel per
  data set and metric: each method's per-k cells, then its average; then the data set's quoted gains). With
  the paper's readings (``readings.csv`` of :mod:`src.explain`), an arrow goes from our difference to the
  difference under each reading that brings a number that does not agree to *agrees*, and the readings are
  named, with their labels, beside the row. The panels of a paper with many numbers (the LCF paper's 244)
  stand in one column per data set, and the figure grows with the rows, so that every row keeps its height.

Colours come from Okabe and Ito's palette, which the common colour-vision deficiencies keep apart; the verdict
is also told by the markers' fill (full: agrees, half: differs, hollow: can't tell), so the figures read in
grey print too. Each paper has a marker shape of its own. The figures are matplotlib ``Figure`` objects,
without pyplot (no window, no global state), saved atomically (:func:`save`).
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Polygon
from matplotlib.transforms import blended_transform_factory

from ..files import atomic_path
from ..reproduction.readings import LABELS  # most to least authoritative: the order a row names readings in
from .verdicts import MARGIN

VERDICTS = ("agrees", "differs", "can't tell")
"""The verdicts drawn, in the order of the legends; a number not run is left out."""

STYLE = {
    "agrees": {"color": "#009E73", "fillstyle": "full"},     # Okabe-Ito bluish green, filled
    "differs": {"color": "#D55E00", "fillstyle": "left"},    # Okabe-Ito vermillion, half filled
    "can't tell": {"color": "#6E6E6E", "fillstyle": "none"},  # grey, hollow
}
"""Colour and fill of each verdict's markers and bars."""

SHAPES = {"cnmf": "o", "ccf": "s", "lcf": "^", "fnmf": "D", "pcgnmf": "v", "cai": "P"}
"""The marker of each paper; a paper not listed takes one of :data:`MORE_SHAPES`."""
MORE_SHAPES = ("X", "h", "p", "*", "<", ">")
"""The markers left for papers :data:`SHAPES` does not list."""

BAND_COLOR = "0.88"
READING_COLOR = STYLE["agrees"]["color"]
FOREST = "forest.png"
"""The file name of a paper's forest plot, beside its report."""
FRONT = "published_vs_ours.png"
"""The file name of the front page's figure, beside the scorecard."""
ROW_INCHES = 0.2
"""The height of one row of a forest plot."""
ONE_COLUMN_ROWS = 40
"""A forest plot with more rows than this puts each data set in a column of its own."""
DPI = 110
READINGS_CHARACTERS = 34
"""The longest text beside a forest's row; the readings that do not fit are counted ("+2 more")."""


def shape(paper: str) -> str:
    """The marker of ``paper`` (:data:`SHAPES`, else a stable choice among :data:`MORE_SHAPES`)."""
    return SHAPES.get(paper) or MORE_SHAPES[sum(map(ord, paper)) % len(MORE_SHAPES)]


def compared(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``table`` with a verdict to draw (not "not run") and a value on both sides."""
    keep = table["verdict"].isin(VERDICTS) & table["ours"].notna() & table["paper value"].notna()
    return table[keep]


def save(fig: Figure, path) -> Path:
    """Write ``fig`` as a PNG at ``path``, atomically (``src.files.atomic_path``); returns the path."""
    path = Path(path)
    with atomic_path(path, suffix=".png") as tmp:
        fig.savefig(tmp, dpi=DPI, format="png")
    return path


def counts(verdicts) -> str:
    """The verdicts counted in words, every verdict named, zeros too: "2 agree, 3 differ, 5 can't tell"."""
    tally = pd.Series(list(verdicts), dtype=object).value_counts()
    said = {"agrees": "agree", "differs": "differ", "can't tell": "can't tell"}
    return ", ".join(f"{int(tally.get(v, 0))} {said[v]}" for v in VERDICTS)


# --- every published number against ours ---------------------------------------------------------------------

def points(table: pd.DataFrame) -> pd.DataFrame:
    """What :func:`figure_published_vs_ours` draws, one row per compared number.

    Columns ``paper``, ``kind``, ``key``, ``verdict``, ``panel`` ("levels", or "gains" for quoted gains),
    ``x`` (the paper's value), ``y`` (ours) and ``low``, ``high``: our 90% bar, the paper's value plus the
    interval of ours - paper (NaN when the interval is not known).
    """
    rows = compared(table)
    x = rows["paper value"].astype(float)
    return pd.DataFrame({
        "paper": rows["paper"], "kind": rows["kind"], "key": rows["key"], "verdict": rows["verdict"],
        "panel": np.where(rows["kind"] == "quoted gain", "gains", "levels"),
        "x": x, "y": rows["ours"].astype(float),
        "low": x + pd.to_numeric(rows.get("ci90 low", np.nan), errors="coerce"),
        "high": x + pd.to_numeric(rows.get("ci90 high", np.nan), errors="coerce")}).reset_index(drop=True)


def _diagonal(ax, drawn: pd.DataFrame, pad: float, square: bool = True) -> None:
    """The diagonal ours = paper with the +-MARGIN band around it, over a square of data around the drawn values.

    With ``square``, one point across is one point up (equal aspect) and the panel is a square; without it
    (the quoted gains, a few points across and tens up) each axis spans its own values. The band and the
    diagonal are added without widening the limits (``add_artist``, ``axline``).
    """
    values = pd.concat([drawn["x"], drawn["y"], drawn["low"], drawn["high"]]).dropna()
    low, high = math.floor(values.min() - pad), math.ceil(values.max() + pad)
    if square:
        ax.set_xlim(low, high)
        ax.set_ylim(low, high)
        ax.set_aspect("equal", adjustable="box")
    else:
        across = drawn["x"].dropna()
        ax.set_xlim(math.floor(min(across.min(), 0) - pad), math.ceil(across.max() + pad))
        ax.set_ylim(low, high)
    far = 10 * (high - low + 1)  # past any limit the aspect may set
    band = Polygon([(low - far, low - far - MARGIN), (high + far, high + far - MARGIN),
                    (high + far, high + far + MARGIN), (low - far, low - far + MARGIN)],
                   closed=True, facecolor=BAND_COLOR, edgecolor="none", zorder=0)
    ax.add_artist(band)
    ax.axline((low, low), slope=1, color="0.35", linewidth=0.8, linestyle="--", zorder=1)
    ax.grid(alpha=0.25, linewidth=0.5)


def _scatter(ax, drawn: pd.DataFrame, large) -> None:
    """Bars and markers of ``drawn``: can't tell first, agrees last (on top); ``large`` marks the big ones."""
    for verdict in ("can't tell", "differs", "agrees"):
        mine = drawn[drawn["verdict"] == verdict]
        style = STYLE[verdict]
        ax.vlines(mine["x"], mine["low"], mine["high"], colors=style["color"],
                  alpha=0.35 if verdict == "can't tell" else 0.7, linewidth=0.9, zorder=2)
        for (paper, big), group in mine.groupby([mine["paper"], large[mine.index]], sort=False):
            ax.plot(group["x"], group["y"], linestyle="none", marker=shape(paper), markersize=7 if big else 4.2,
                    color=style["color"], fillstyle=style["fillstyle"], markeredgewidth=1.0 if big else 0.8,
                    zorder=3)


def _front_legends(ax, drawn: pd.DataFrame) -> None:
    """The legends of the front figure in the empty axes ``ax``: verdicts, papers, sizes and the band."""
    ax.axis("off")
    verdicts = [Line2D([], [], linestyle="none", marker="o", markersize=7, color=STYLE[v]["color"],
                       fillstyle=STYLE[v]["fillstyle"], label=f"{v} ({int((drawn['verdict'] == v).sum())})")
                for v in VERDICTS]
    first = ax.legend(handles=verdicts, title="verdict (numbers)", loc="upper left", bbox_to_anchor=(0, 1),
                      frameon=False)
    ax.add_artist(first)
    papers = [Line2D([], [], linestyle="none", marker=shape(p), markersize=7, color="0.2", fillstyle="none",
                     label=f"{p.upper()} ({n})") for p, n in drawn["paper"].value_counts(sort=False).items()]
    second = ax.legend(handles=papers, title="paper (numbers)", loc="upper right", bbox_to_anchor=(1, 1),
                       frameon=False, ncols=2)
    ax.add_artist(second)
    how = [Line2D([], [], linestyle="none", marker="o", markersize=7, color="0.2", label="average over k, gain"),
           Line2D([], [], linestyle="none", marker="o", markersize=4.2, color="0.2", label="per-k cell"),
           Line2D([], [], color="0.4", linewidth=0.9, label="our 90% interval"),
           Patch(color=BAND_COLOR, label=f"within +-{MARGIN:.0f} points of the paper"),
           Line2D([], [], color="0.35", linewidth=0.8, linestyle="--", label="ours = the paper's")]
    ax.legend(handles=how, loc="lower center", bbox_to_anchor=(0.5, 0), frameon=False, ncols=2)


def figure_published_vs_ours(table: pd.DataFrame) -> Figure:
    """Every published number of ``table`` against ours, as the module docstring says; returns the Figure.

    ``table`` holds the scorecard's rows (``scorecard.csv``, or :func:`src.presentation.published.table`);
    numbers not run are left out. The table values (per-k cells and averages over k) fill the upper panel,
    the quoted gains the one below; the legends, with the count of each verdict and paper, close the figure.
    One column, in large type: the figure stays readable when a phone shows it at the screen's width.
    """
    drawn = points(table)
    with matplotlib.rc_context({"font.size": 13}):
        fig = Figure(figsize=(8.5, 15.0), layout="constrained")
        grid = fig.add_gridspec(3, 1, height_ratios=[7.4, 3.6, 2.6])
        panels = {"levels": fig.add_subplot(grid[0]), "gains": fig.add_subplot(grid[1])}
        _draw_front(fig, grid, panels, drawn)
    return fig


def _draw_front(fig: Figure, grid, panels: dict, drawn: pd.DataFrame) -> None:
    """The panels, legends and title of :func:`figure_published_vs_ours`."""
    large = drawn["kind"] != "per-k cell"
    for name, ax in panels.items():
        mine = drawn[drawn["panel"] == name]
        if mine.empty:
            ax.axis("off")
            ax.text(0.5, 0.5, "no quoted gain compared" if name == "gains" else "no table value compared",
                    ha="center", va="center", transform=ax.transAxes, fontsize="small")
            continue
        _scatter(ax, mine, large)
        _diagonal(ax, mine, pad=2 if name == "levels" else 1, square=name == "levels")
        what = "table values (per-k cells and averages over k)" if name == "levels" else "quoted gains"
        ax.set_title(f"{len(mine)} {what}:\n{counts(mine['verdict'])}", fontsize="medium")
        unit = "points" if name == "levels" else "points of gain"
        ax.set_xlabel(f"the paper's number ({unit})")
        ax.set_ylabel(f"ours ({unit})")
    _front_legends(fig.add_subplot(grid[2]), drawn)
    fig.suptitle(f"{len(drawn)} published numbers against ours:\n{counts(drawn['verdict'])}", fontsize="large")


def plot_published_vs_ours(table: pd.DataFrame, path) -> pd.DataFrame:
    """:func:`figure_published_vs_ours` saved as a PNG at ``path``; returns the points drawn (:func:`points`)."""
    save(figure_published_vs_ours(table), path)
    return points(table)


def published_vs_ours_alt(table: pd.DataFrame) -> str:
    """The front figure's alternative text, in numbers: how many numbers, their verdicts overall and per
    paper, and where ours lies against the paper's in each panel (below, above, the median and the largest
    gap)."""
    drawn = points(table)
    if drawn.empty:
        return "No published number compared with ours yet."
    per_paper = "; ".join(f"{paper.upper()} {counts(group['verdict'])}"
                          for paper, group in drawn.groupby("paper", sort=False))
    text = (f"{len(drawn)} published numbers against ours: {counts(drawn['verdict'])} ({per_paper}).")
    for panel, what in (("levels", "table values"), ("gains", "quoted gains")):
        mine = drawn[drawn["panel"] == panel]
        if mine.empty:
            continue
        gap = mine["y"] - mine["x"]
        widest = mine.loc[gap.abs().idxmax()]
        text += (f" {len(mine)} {what}: ours below the paper's for {int((gap < 0).sum())}, above for "
                 f"{int((gap > 0).sum())}, median gap {gap.abs().median():.1f} points, the largest "
                 f"{widest['y'] - widest['x']:+.1f} ({widest['paper'].upper()}, {str(widest['key']).split(' (')[0]}).")
    return text


# --- a paper's forest plot -----------------------------------------------------------------------------------

def row_label(row) -> str:
    """A forest row's label: "LCF k=2", "LCF avg", "CNMF over NMF, AC" (the panel names the data set)."""
    method = row.get("method")
    if not isinstance(method, str) or not method:
        return str(row["number"]).split(" (")[0]
    if row["kind"] == "quoted gain":
        return f"{method} over {row.get('baseline')}, {row.get('metric')}"
    if row["kind"] == "per-k cell":
        return f"{method} k={int(row['k'])}"
    return f"{method} avg"


def forest_panels(rows: pd.DataFrame) -> list[tuple[str, str, pd.DataFrame]]:
    """``(data set, title, rows)`` per panel, grouped as the paper's tables: per data set (in the rows' order)
    one panel per metric of its table numbers (each method's per-k cells, then its average, as the rows
    come), then one of its quoted gains."""
    panels = []
    for dataset, mine in rows.groupby("dataset", sort=False):
        levels = mine[mine["kind"] != "quoted gain"]
        for metric, group in levels.groupby(levels["metric"].fillna(""), sort=False):
            every = "averages over k" if (group["kind"] == "average").all() else "tables"
            panels.append((dataset, f"{dataset}, {metric or 'numbers'} ({every})", group))
        gains = mine[mine["kind"] == "quoted gain"]
        if not gains.empty:
            panels.append((dataset, f"{dataset}, quoted gains", gains))
    return panels


def reading_marks(rows: pd.DataFrame, effects: pd.DataFrame | None) -> pd.DataFrame:
    """The readings that bring a number of ``rows`` that does not agree to *agrees*: one row per (number,
    reading) with ``key``, ``reading``, ``label`` and ``at``, the difference under the reading (ours - paper
    plus the reading's effect on ours)."""
    columns = ["key", "reading", "label", "at"]
    if effects is None or effects.empty:
        return pd.DataFrame(columns=columns)
    back = effects[(effects["verdict"] == "agrees") & pd.to_numeric(effects["effect"], errors="coerce").notna()]
    off = rows[rows["verdict"] != "agrees"].set_index("key")["difference"]
    back = back[back["key"].isin(off.index)]
    at = back["key"].map(off).astype(float) + pd.to_numeric(back["effect"]).astype(float)
    return back.assign(at=at)[columns].reset_index(drop=True)


def _limits(rows: pd.DataFrame, marks: pd.DataFrame) -> tuple[float, float]:
    """One x range for every panel of a paper: every bar, every reading's mark and the band."""
    values = pd.concat([pd.to_numeric(rows[c], errors="coerce") for c in ("ci90 low", "ci90 high", "difference")]
                       + [marks["at"], pd.Series([-MARGIN, MARGIN])]).dropna()
    low, high = float(values.min()), float(values.max())
    pad = 0.04 * (high - low)
    return low - pad, high + pad


def readings_text(marks: pd.DataFrame, characters: int = READINGS_CHARACTERS) -> str:
    """The readings that bring one row back, as its right-hand column names them: "argmax (alternative)",
    "eq41 (text), argmax (alternative)", "argmax (alternative) +2 more"; the label-free ones first, by label,
    as many as fit in about ``characters``."""
    rank = {label: i for i, label in enumerate(LABELS)}
    ordered = marks.assign(rank=marks["label"].map(rank).fillna(len(rank))).sort_values("rank", kind="stable")
    names = list(dict.fromkeys(f"{r['reading']} ({r['label']})" for _, r in ordered.iterrows()))
    text = names[0]
    for i, name in enumerate(names[1:], start=1):
        rest = len(names) - i - 1
        longer = f"{text}, {name}" + (f" +{rest} more" if rest else "")
        if len(longer) > characters:
            return f"{text} +{len(names) - i} more"
        text = f"{text}, {name}"
    return text


def _forest_panel(ax, title: str, group: pd.DataFrame, marks: pd.DataFrame, limits) -> None:
    """One panel: the +-MARGIN band, zero, each number's bar and marker, the readings' arrows and names."""
    y = np.arange(len(group))
    ax.axvspan(-MARGIN, MARGIN, color=BAND_COLOR, linewidth=0, zorder=0)
    ax.axvline(0, color="0.35", linewidth=0.8, zorder=1)
    methods = group["method"].fillna(group["number"]).to_numpy()
    for i in np.flatnonzero(methods[1:] != methods[:-1]):  # a thin line between two methods' rows
        ax.axhline(i + 0.5, color="0.8", linewidth=0.5, zorder=0)
    for i, (_, row) in enumerate(group.iterrows()):
        style = STYLE[row["verdict"]]
        big = row["kind"] != "per-k cell"
        ax.hlines(i, row["ci90 low"], row["ci90 high"], colors=style["color"], linewidth=1.6 if big else 1.1,
                  alpha=0.8, zorder=2)
        ax.plot([row["difference"]], [i], linestyle="none", marker=shape(row["paper"]), markersize=6 if big else 4.5,
                color=style["color"], fillstyle=style["fillstyle"], markeredgewidth=1.0, zorder=3)
        mine = marks[marks["key"] == row["key"]]
        for j, (_, mark) in enumerate(mine.iterrows()):
            oracle = mark["label"] == "oracle"
            above = i - 0.22 - 0.12 * min(j, 3)  # above the bar; a row's readings one over the other
            ax.annotate("", xy=(mark["at"], above), xytext=(row["difference"], above), zorder=4,
                        arrowprops={"arrowstyle": "-|>", "color": READING_COLOR, "linewidth": 0.9,
                                    "linestyle": ":" if oracle else "-", "shrinkA": 0, "shrinkB": 0,
                                    "mutation_scale": 7})
        if not mine.empty:
            ax.text(1.01, i, readings_text(mine), transform=blended_transform_factory(ax.transAxes, ax.transData),
                    fontsize=7, va="center", ha="left", color="0.15", clip_on=False)
    ax.set_yticks(y, [row_label(row) for _, row in group.iterrows()], fontsize=7.5)
    for tick, kind in zip(ax.get_yticklabels(), group["kind"]):
        if kind != "per-k cell":
            tick.set_fontweight("bold")
    ax.set_ylim(len(group) - 0.5, -0.7)
    ax.set_xlim(*limits)
    ax.tick_params(axis="x", labelsize=7.5)
    ax.grid(axis="x", alpha=0.25, linewidth=0.5)
    ax.set_title(f"{title}: {counts(group['verdict'])}", fontsize=8.5, loc="left")


def _forest_legend(fig: Figure, readings: bool) -> None:
    """The legend under a forest plot: the verdicts, the bar, the band and, with readings, their arrows."""
    handles = [Line2D([], [], linestyle="none", marker="o", markersize=6, color=STYLE[v]["color"],
                      fillstyle=STYLE[v]["fillstyle"], label=v) for v in VERDICTS]
    handles += [Line2D([], [], color="0.4", linewidth=1.4, label="90% interval of ours - paper"),
                Patch(color=BAND_COLOR, label=f"+-{MARGIN:.0f} points")]
    if readings:
        handles += [Line2D([], [], color=READING_COLOR, linewidth=0.9, marker=">", markersize=4,
                           label="a reading brings it to agrees (named on the right)"),
                    Line2D([], [], color=READING_COLOR, linewidth=0.9, linestyle=":", marker=">", markersize=4,
                           label="an oracle does (chooses on the test labels)")]
    columns = math.ceil(len(handles) / 2) if fig.get_figwidth() >= 9 else 2
    fig.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), columns), fontsize=7,
               frameon=False)


def figure_forest(rows: pd.DataFrame, effects: pd.DataFrame | None = None, title: str = "") -> Figure | None:
    """A paper's forest plot, as the module docstring says; None when none of ``rows`` was compared.

    Parameters
    ----------
    rows : DataFrame
        The paper's rows of the scorecard (:func:`src.presentation.published.table`), in the paper's order,
        with the scorecard's verdicts.
    effects : DataFrame, optional
        The paper's ``readings.csv`` (columns ``key``, ``reading``, ``label``, ``effect``, ``verdict``): the
        readings that bring a number to *agrees* are drawn beside it.
    title : str
        The figure's title.
    """
    rows = compared(rows)
    if rows.empty:
        return None
    marks = reading_marks(rows, effects)
    panels = forest_panels(rows)
    datasets = list(dict.fromkeys(dataset for dataset, _, _ in panels))
    columns = [datasets] if len(rows) <= ONE_COLUMN_ROWS else [[d] for d in datasets]
    stacks = [[p for p in panels if p[0] in column] for column in columns]
    heights = [[len(group) + 2.6 for _, _, group in stack] for stack in stacks]  # the title and the x axis
    tallest = max(sum(h) for h in heights)
    width = max(7.0, (5.0 if marks.empty else 5.6) * len(columns) + 0.6)
    fig = Figure(figsize=(width, tallest * ROW_INCHES + 1.3), layout="constrained")
    subfigures = fig.subfigures(1, len(columns), squeeze=False)[0]
    limits = _limits(rows, marks)
    for sub, stack, ratios in zip(subfigures, stacks, heights):
        spare = tallest - sum(ratios)  # an empty slot keeps the rows of a shorter column as high as the others
        axes = sub.subplots(len(stack) + (spare > 0.5), 1, squeeze=False,
                            height_ratios=ratios + ([spare] if spare > 0.5 else []))[:, 0]
        for ax, (_, panel_title, group) in zip(axes, stack):
            _forest_panel(ax, panel_title, group, marks, limits)
            ax.set_xlabel("ours - paper (points)", fontsize=7)
        if spare > 0.5:
            axes[-1].axis("off")
    _forest_legend(fig, not marks.empty)
    if title:
        fig.suptitle("\n".join(textwrap.wrap(title, int(width * 11))), fontsize=9.5)
    return fig


def forest_title(paper: str, compared: int) -> str:
    """A forest plot's title: the paper, and over how many numbers Holm's adjustment of its verdicts ran."""
    return (f"{paper.upper()}: ours - the paper's, with our 90% interval (verdicts Holm-adjusted over the "
            f"{compared} numbers of the scorecard)")


def plot_forest(rows: pd.DataFrame, path, effects: pd.DataFrame | None = None, title: str = "") -> bool:
    """:func:`figure_forest` saved as a PNG at ``path``; False, and a figure of an earlier run at ``path``
    removed, when no number was compared (no plot then, and no link to one)."""
    fig = figure_forest(rows, effects, title)
    if fig is None:
        Path(path).unlink(missing_ok=True)
        return False
    save(fig, path)
    return True


def forest_alt(rows: pd.DataFrame, effects: pd.DataFrame | None = None) -> str:
    """A forest plot's alternative text, in numbers: how many numbers on which data sets, how many agree, the
    range of the differences and, with readings, how many numbers a reading brings to *agrees*.

    The counts of *differs* and *can't tell* are left out on purpose: they depend on Holm's adjustment over
    every paper reproduced, which a report written before the scorecard does not yet know in full, while
    *agrees* (the 90% interval inside the band) depends on the number alone.
    """
    rows = compared(rows)
    if rows.empty:
        return "No published number compared with ours."
    difference = pd.to_numeric(rows["difference"])
    text = (f"{len(rows)} published numbers on {', '.join(dict.fromkeys(rows['dataset']))}, ours minus the "
            f"paper's with its 90% interval: {int((rows['verdict'] == 'agrees').sum())} agree (interval inside "
            f"+-{MARGIN:.0f} points); differences from {difference.min():+.1f} to {difference.max():+.1f} points, "
            f"median {difference.median():+.1f}.")
    marks = reading_marks(rows, effects)
    if not marks.empty:
        text += (f" Readings bring {marks['key'].nunique()} of the numbers that do not agree to agrees: "
                 + ", ".join(f"{name} ({n})" for name, n in marks["reading"].value_counts().items()) + ".")
    return text

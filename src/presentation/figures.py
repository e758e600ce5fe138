"""Figures laid out like the papers': accuracy and NMI against the number of classes k.

Each method has its own colour, marker and line style (so that the figure reads in grey print too), a line
through its mean over trials and a shaded band of mean ± sample std (ddof=1, as in the tables); the k axis
has integer ticks only, and a caption under the panels says under which protocol the numbers were computed.
"""

import sys
import textwrap

import pandas as pd

from .tables import METRICS

MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p"]
LINESTYLES = ["-", "--", "-.", ":"]


def pyplot():
    """matplotlib's pyplot, imported when the first figure is drawn: every command imports this module (a run
    writes its figure at the end), and the processes that draw nothing (a dry run, a pool's worker, a setting
    refused) do not pay the half second pyplot takes to import. A process that has not imported pyplot yet
    gets the Agg backend (files, no window); one that has (a notebook, the docs' gallery) keeps its own."""
    import matplotlib

    if "matplotlib.pyplot" not in sys.modules:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def style(i: int) -> dict:
    """Colour, marker and line style of the ``i``-th method (no two of the first 12 share a marker)."""
    colors = pyplot().get_cmap("tab10" if i < 10 else "tab20").colors
    return {"color": colors[i % len(colors)], "marker": MARKERS[i % len(MARKERS)],
            "linestyle": LINESTYLES[i % len(LINESTYLES)]}


def figure_metrics_vs_k(frame: pd.DataFrame, title: str, methods=None, caption: str | None = None, *,
                        background=(), thick=()):
    """Two panels (AC, NMI) against k, one line and mean ± std band per method; returns the Figure.

    ``methods`` sets the order (default: sorted labels); ``caption`` (e.g. the protocol: trials, labels) is
    printed under the panels.

    ``background`` names methods drawn behind the others as thin light-grey lines, with neither band, marker
    nor legend entry: context for the few methods a reader should follow, which twenty coloured overlapping
    bands would hide (a contender against the whole family). ``thick`` names methods drawn with a thicker
    line and larger markers (the contender itself). Both empty by default: every method alike, as before.
    """
    from matplotlib.ticker import MaxNLocator

    fig, axes = pyplot().subplots(1, 2, figsize=(10, 4.2), constrained_layout=True)
    order = list(methods) if methods is not None else None
    background = [m for m in background if order is None or m not in order]
    if order is None:
        order = sorted(set(frame["method"].unique()) - set(background))
    thick = set(thick)
    for ax, (metric, label) in zip(axes, METRICS.items()):
        grouped = frame.groupby(["k", "method"])[metric]
        mean = grouped.mean().unstack("method").reindex(columns=order + background) * 100
        std = grouped.std(ddof=1).unstack("method").reindex(columns=order).fillna(0.0) * 100
        ks = mean.index.to_numpy()
        for method in background:  # first, so that the methods followed are drawn over them
            present = mean[method].notna().to_numpy()
            if present.any():  # a leading underscore keeps the line out of the legend
                ax.plot(ks[present], mean[method].to_numpy()[present], label=f"_{method}", color="0.8",
                        linewidth=0.8, zorder=1)
        for i, method in enumerate(order):
            present = mean[method].notna().to_numpy()
            if not present.any():
                continue
            spec = style(i)
            x, m, s = ks[present], mean[method].to_numpy()[present], std[method].to_numpy()[present]
            ax.fill_between(x, (m - s).clip(0, 100), (m + s).clip(0, 100), color=spec["color"], alpha=0.15,
                            linewidth=0)
            size = {"markersize": 6.5, "linewidth": 2.8, "zorder": 2.5} if method in thick else \
                {"markersize": 5, "linewidth": 1.4}
            ax.plot(x, m, label=method, **size, **spec)
        if len(ks) <= 12:
            ax.set_xticks(ks)
        else:
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("number of classes k")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right upper", fontsize="small",
               title="mean ± std over trials", title_fontsize="small")
    fig.suptitle(title)
    if caption:
        fig.supxlabel("\n".join(textwrap.wrap(caption, 130)), fontsize="small")
    return fig


def plot_metrics_vs_k(frame: pd.DataFrame, title: str, path, methods=None, caption: str | None = None, *,
                      background=(), thick=()) -> None:
    """:func:`figure_metrics_vs_k` saved as PNG at ``path``."""
    fig = figure_metrics_vs_k(frame, title, methods, caption, background=background, thick=thick)
    try:
        fig.savefig(path, dpi=120, format="png")
    finally:
        pyplot().close(fig)

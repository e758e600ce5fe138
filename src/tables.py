"""The papers' table layout: rows k and "Avg", one column per method, an AC block and an NMI block.

Each cell is mean ± standard deviation over the trials, in percent. The standard deviation is the
sample one (ddof=1, MATLAB's ``std``). The Avg row is the mean over k of the per-k means ± the mean over k
of the per-k standard deviations, which is how the LCF paper's Tables IV and V are built (checked against
its KMeans column on Yale: 50.68 ± 7.57).
"""

import pandas as pd

METRICS = {"acc": "Accuracy (%)", "nmi": "Normalized mutual information (%)"}


def summarize(frame: pd.DataFrame, metric: str, methods=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-k mean and std (percent) of ``metric`` for one data set's rows, with an "Avg" row.

    Returns
    -------
    mean, std : DataFrame of shape (n_ks + 1, n_methods)
        Index k (as strings) then "Avg"; columns the methods, in ``methods`` order if given.
    """
    grouped = frame.groupby(["k", "method"])[metric]
    mean = grouped.mean().unstack("method") * 100
    std = grouped.std(ddof=1).unstack("method").fillna(0.0) * 100
    if methods is not None:
        mean, std = mean.reindex(columns=methods), std.reindex(columns=methods)
    mean.loc["Avg"] = mean.mean()
    std.loc["Avg"] = std.mean()
    mean.index = mean.index.map(str)
    std.index = std.index.map(str)
    return mean, std


def paper_table(frame: pd.DataFrame, methods=None) -> pd.DataFrame:
    """The table as strings "mean ± std", with a ``block`` level (AC, NMI) over the k rows."""
    blocks = {}
    for metric, title in METRICS.items():
        mean, std = summarize(frame, metric, methods)
        blocks[title] = mean.map(lambda v: f"{v:.2f}") + " ± " + std.map(lambda v: f"{v:.2f}")
    table = pd.concat(blocks, names=["block", "k"])
    table.columns.name = None
    return table


def to_markdown(table: pd.DataFrame, caption: str) -> str:
    """Markdown rendering: one header row per block, as in the papers."""
    methods = list(table.columns)
    lines = [f"**{caption}**", "", "| k | " + " | ".join(methods) + " |", "|---" * (len(methods) + 1) + "|"]
    for block in table.index.get_level_values("block").unique():
        lines.append(f"| *{block}* |" + " |" * len(methods))
        for k, row in table.loc[block].iterrows():
            lines.append(f"| {k} | " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def to_latex(table: pd.DataFrame, caption: str) -> str:
    """LaTeX tabular rendering of the same table."""
    methods = list(table.columns)
    lines = [r"\begin{table}[t]", r"\centering", rf"\caption{{{caption}}}",
             r"\begin{tabular}{l" + "c" * len(methods) + "}", r"\hline",
             "k & " + " & ".join(methods) + r" \\", r"\hline"]
    for block in table.index.get_level_values("block").unique():
        lines.append(rf"\multicolumn{{{len(methods) + 1}}}{{l}}{{{block.replace('%', chr(92) + '%')}}} \\")
        for k, row in table.loc[block].iterrows():
            lines.append(f"{k} & " + " & ".join(v.replace("±", r"$\pm$") for v in row) + r" \\")
        lines.append(r"\hline")
    lines += [r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"

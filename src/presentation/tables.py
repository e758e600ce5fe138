"""The papers' table layout: rows k and "Avg", one column per method, an AC block and an NMI block.

Each cell is mean ± standard deviation over the trials, in percent. The standard deviation is the
sample one (ddof=1, MATLAB's ``std``). The Avg row is the mean over k of the per-k means ± the mean over k
of the per-k standard deviations, which is how the LCF paper's Tables IV and V are built (checked against
its KMeans column on Yale: 50.68 ± 7.57). A k with a single trial has no standard deviation: its cell is the
mean alone (an empty std in the CSV), and the Avg row's deviation is left out as well, rather than shown as 0.

Three renderings: Markdown (cells "mean ± std"), LaTeX (booktabs, escaped, shrunk to the text width when
wider) and CSV (numbers: one ``<method> mean`` and one ``<method> std`` column per method, see
:func:`numeric_table`).
"""

import re

import pandas as pd

METRICS = {"acc": "Accuracy (%)", "nmi": "Normalized mutual information (%)"}
#: Short metric names, as in the papers' tables and the ``metric`` column of the CSV tables.
SHORT = {"acc": "AC", "nmi": "NMI"}


def summarize(frame: pd.DataFrame, metric: str, methods=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-k mean and std (percent) of ``metric`` for one data set's rows, with an "Avg" row.

    Returns
    -------
    mean, std : DataFrame of shape (n_ks + 1, n_methods)
        Index k (as strings) then "Avg"; columns the methods, in ``methods`` order if given.
    """
    grouped = frame.groupby(["k", "method"])[metric]
    mean = grouped.mean().unstack("method") * 100
    std = grouped.std(ddof=1).unstack("method") * 100  # NaN for a k with one trial
    if methods is not None:
        mean, std = mean.reindex(columns=methods), std.reindex(columns=methods)
    single = std.isna() & mean.notna()  # a k run with one trial
    mean.loc["Avg"] = mean.mean()
    std.loc["Avg"] = std.mean().where(~single.any())
    mean.index = mean.index.map(str)
    std.index = std.index.map(str)
    return mean, std


def paper_table(frame: pd.DataFrame, methods=None) -> pd.DataFrame:
    """The table as strings "mean ± std", with a ``block`` level (AC, NMI) over the k rows."""
    blocks = {}
    for metric, title in METRICS.items():
        mean, std = summarize(frame, metric, methods)
        blocks[title] = mean.map(lambda v: f"{v:.2f}") + std.map(lambda v: "" if pd.isna(v) else f" ± {v:.2f}")
    table = pd.concat(blocks, names=["block", "k"])
    table.columns.name = None
    return table


def numeric_table(frame: pd.DataFrame, methods=None) -> pd.DataFrame:
    """The table as numbers, in percent: one row per (metric, k), then a column pair per method.

    Columns: ``metric`` (AC, NMI), ``k`` (2, 3, ..., then "Avg"), then ``<method> mean`` and
    ``<method> std`` for each method in ``methods`` order. The std is the sample one over trials; the Avg row
    holds the mean of the per-k means and the mean of the per-k stds (:func:`summarize`). A method without
    rows at some k has empty cells there.
    """
    blocks = []
    for metric, short in SHORT.items():
        mean, std = summarize(frame, metric, methods)
        columns = {}
        for method in mean.columns:
            columns[f"{method} mean"] = mean[method]
            columns[f"{method} std"] = std[method]
        block = pd.DataFrame(columns, index=mean.index)
        block.index.name = "k"
        blocks.append(block.reset_index().assign(metric=short))
    table = pd.concat(blocks, ignore_index=True)
    return table[["metric", "k"] + [c for c in table.columns if c not in ("metric", "k")]]


def to_csv(frame: pd.DataFrame, methods=None) -> str:
    """CSV text of :func:`numeric_table` (6 significant digits; read it back with ``pd.read_csv``)."""
    return numeric_table(frame, methods).to_csv(index=False, float_format="%.6g")


def to_markdown(table: pd.DataFrame, caption: str) -> str:
    """Markdown rendering: one header row per block, as in the papers."""
    methods = list(table.columns)
    lines = [f"**{caption}**", "", "| k | " + " | ".join(methods) + " |", "|---" * (len(methods) + 1) + "|"]
    for block in table.index.get_level_values("block").unique():
        lines.append(f"| *{block}* |" + " |" * len(methods))
        for k, row in table.loc[block].iterrows():
            lines.append(f"| {k} | " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
          "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
          "±": r"\ensuremath{\pm}", "×": r"\ensuremath{\times}"}
_LATEX_RE = re.compile("|".join(re.escape(c) for c in _LATEX))


def latex_escape(text) -> str:
    """``text`` with LaTeX's special characters (and ±, ×) written so that they print as themselves."""
    return _LATEX_RE.sub(lambda m: _LATEX[m.group()], str(text))


def to_latex(table: pd.DataFrame, caption: str) -> str:
    """LaTeX rendering of the same table: booktabs rules, every text escaped, never wider than the text.

    A table wider than ``\\linewidth`` is scaled down to it (``\\resizebox`` of graphicx); a narrower one
    keeps its natural size. The preamble needs ``\\usepackage{booktabs}`` and ``\\usepackage{graphicx}``.
    """
    methods = list(table.columns)
    width = len(methods) + 1
    lines = [r"% Needs \usepackage{booktabs} and \usepackage{graphicx} in the preamble.",
             r"\begin{table}[t]", r"\centering", rf"\caption{{{latex_escape(caption)}}}",
             r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{%",
             r"\begin{tabular}{l" + "c" * len(methods) + "}", r"\toprule",
             "$k$ & " + " & ".join(latex_escape(m) for m in methods) + r" \\"]
    for block in table.index.get_level_values("block").unique():
        lines += [r"\midrule", rf"\multicolumn{{{width}}}{{l}}{{\emph{{{latex_escape(block)}}}}} \\"]
        for k, row in table.loc[block].iterrows():
            if k == "Avg":
                lines.append(r"\addlinespace")
            lines.append(f"{latex_escape(k)} & " + " & ".join(latex_escape(v) for v in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}}", r"\end{table}"]
    return "\n".join(lines) + "\n"

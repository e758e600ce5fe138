"""A Bayesian comparison of the first method against each other: how likely better, equivalent, worse.

The Wilcoxon-Holm tests of :mod:`.ranking` say whether a difference is significant; they do not say how large
it is, nor whether two methods are, for practical purposes, the same. The Bayesian signed-rank test of
Benavoli et al. (2014, 2017) answers both from the same paired blocks: with a *region of practical
equivalence* (rope) declared once, here :data:`ROPE` (1 AC point), its posterior gives the probability that
the first method is better by more than the rope, that the two are within it, and that the other is better.
The library ``baycomp`` (by the test's authors) draws the posterior; nothing of the sampler is written here.

The first method is the first of a ranking's first group (:attr:`.ranking.Ranking.leaders`), compared with
every other method over the ranking's blocks: in the family benchmark the (data set, k) blocks, each the mean
AC over its trials. The hierarchical test of the same paper needs each block's trials and a Stan install;
the signed-rank test needs neither, and is the one used.

References
----------
A. Benavoli, G. Corani, J. Demšar, M. Zaffalon, "Time for a change: a tutorial for comparing multiple
classifiers through Bayesian analysis", Journal of Machine Learning Research 18(77), pp. 1-36, 2017.

A. Benavoli, G. Corani, F. Mangili, M. Zaffalon, F. Ruggeri, "A Bayesian Wilcoxon signed-rank test based on
the Dirichlet process", ICML 2014, PMLR 32(2), pp. 1026-1034.
"""

from __future__ import annotations

from pathlib import Path

import baycomp
import numpy as np
import pandas as pd

from .figures import pyplot
from .ranking import Ranking, join_names

ROPE = 0.01
"""The region of practical equivalence, on the scale of the scores (AC in [0, 1]): 1 point."""

NSAMPLES = 20000
"""Draws from the posterior per comparison (baycomp's default is 50,000; the probabilities move in the third
decimal)."""

DECIDED = 0.95
"""A posterior probability above which the report calls an outcome decided."""

SEED = 0
"""The seed of every comparison's draws, so that the same blocks give the same probabilities."""

#: Panels per row of the figure.
COLUMNS = 3

#: What a comparison's probabilities are called, in the order of the table and the figure.
OUTCOMES = ("better", "equivalent", "worse")


def compare(ranking: Ranking, first: str | None = None, rope: float = ROPE, nsamples: int = NSAMPLES,
            seed: int = SEED) -> pd.DataFrame:
    """The Bayesian signed-rank test of ``first`` against every other method of ``ranking``.

    Parameters
    ----------
    ranking : Ranking
        From :func:`.ranking.rank_methods`; its ``blocks`` (n_blocks x n_methods) are compared.
    first : str, optional
        The method compared with the others; default the first of the ranking's first group.
    rope : float
        Half-width of the region of practical equivalence, on the scale of the block values.
    nsamples : int
        Draws from the posterior.
    seed : int
        The seed of the draws (each comparison draws from its own ``RandomState(seed)``).

    Returns
    -------
    DataFrame
        One row per other method, in the ranking's place order: ``method``, ``difference`` (mean of
        ``first`` minus the method over the blocks), and ``better``, ``equivalent``, ``worse``: the posterior
        probabilities that ``first`` is better by more than ``rope``, within ``rope`` of it, worse by more.
    """
    if ranking.blocks is None:
        raise ValueError("the ranking keeps no blocks: rank with rank_methods")
    first = first or ranking.leaders[0]
    x = ranking.blocks[first].to_numpy(dtype=float)
    rows = []
    for method in ranking.order:
        if method == first:
            continue
        y = ranking.blocks[method].to_numpy(dtype=float)
        p = baycomp.SignedRankTest.probs(x, y, rope=rope, nsamples=nsamples, random_state=seed)
        rows.append({"method": method, "difference": float(np.mean(x - y)),
                     **{name: float(value) for name, value in zip(OUTCOMES, p)}})
    return pd.DataFrame(rows, columns=["method", "difference", *OUTCOMES])


def table_lines(first: str, found: pd.DataFrame, rope: float = ROPE) -> list[str]:
    """The comparisons of :func:`compare` as a Markdown table, in points."""
    lines = [f"| {first} against | mean difference (points) | P({first} better) | P(equivalent, +-{100 * rope:g}) "
             "| P(other better) |", "|---|---|---|---|---|"]
    for row in found.itertuples():
        lines.append(f"| {row.method} | {100 * row.difference:+.1f} | {row.better:.3f} | {row.equivalent:.3f} | "
                     f"{row.worse:.3f} |")
    return lines


def figure(panels: dict[str, tuple[str, pd.DataFrame]], path: Path, rope: float = ROPE) -> Path:
    """One panel per comparison set (title -> (first, :func:`compare`'s table)): a bar per other method split
    into the probabilities that the first is better (dark), equivalent (grey), worse (light)."""
    plt = pyplot()
    height = max(len(found) for _, found in panels.values())
    columns = min(COLUMNS, len(panels))
    rows = -(-len(panels) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(4.3 * columns, rows * (0.26 * height + 1.5)), squeeze=False)
    colours = {"better": "#2c6fbb", "equivalent": "0.75", "worse": "#e8a33d"}
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for ax, (title, (first, found)) in zip(axes.flat, panels.items()):
        y = np.arange(len(found))[::-1]
        left = np.zeros(len(found))
        for outcome in OUTCOMES:
            values = found[outcome].to_numpy()
            ax.barh(y, values, left=left, color=colours[outcome],
                    label={"better": "the first better", "equivalent": f"within +-{100 * rope:g} point",
                           "worse": "the other better"}[outcome])
            left += values
        ax.set_yticks(y, found["method"])
        ax.set_xlim(0, 1)
        ax.set_xlabel("posterior probability")
        ax.set_title(f"{title}: the first, {first}, against", fontsize=9)
    fig.suptitle("Bayesian signed-rank test (Benavoli et al. 2017), AC over the (data set, k) blocks", fontsize=10)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=8, frameon=False)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def section(rankings: dict[str, Ranking], out: Path, image: str = "bayesian.png", rope: float = ROPE) -> list[str]:
    """The report's part: per ranking (title -> ranking), the first of its first group against every other
    method, in a table each and one figure (``out/image``); empty when no ranking is given."""
    rankings = {title: ranking for title, ranking in rankings.items() if ranking is not None}
    if not rankings:
        return []
    panels = {title: (ranking.leaders[0], compare(ranking, rope=rope)) for title, ranking in rankings.items()}
    figure(panels, Path(out) / image, rope)
    lines = ["## How large the differences are: a Bayesian comparison", "",
             "Beside the Wilcoxon-Holm tests, which say whether a difference is significant, the Bayesian "
             "signed-rank test (Benavoli et al. 2017, with the `baycomp` library) says how likely the first "
             f"method is better than each other by more than {100 * rope:g} AC point (the region of practical "
             "equivalence, declared once), within it, or worse, over the same (data set, k) blocks. A "
             f"probability above {DECIDED:g} is a decision; below, the data leave it open.", "",
             f"![Bayesian comparison of the first method against each other]({image})", ""]
    for title, (first, found) in panels.items():
        better = found[found["better"] > DECIDED]["method"].tolist()
        same = found[found["equivalent"] > DECIDED]["method"].tolist()
        worse = found[found["worse"] > DECIDED]["method"].tolist()
        lines += [f"- {title}: {first} is better by more than {100 * rope:g} point against {len(better)} of the "
                  f"{len(found)} other methods"
                  + (f", practically equivalent to {join_names(same)}" if same else "")
                  + (f", worse than {join_names(worse)}" if worse else "")
                  + f"; open against {len(found) - len(better) - len(same) - len(worse)}."]
    lines += ["", "<details><summary>Every comparison</summary>", ""]
    for title, (first, found) in panels.items():
        lines += [f"**{title}**", "", *table_lines(first, found, rope), ""]
    return lines + ["</details>", ""]

"""The report of ``python -m src.cluster`` (:mod:`src.choice.your_data`): the answer first (the candidate to
use, its estimated share of right classes with an interval, beside the best reference's estimate on the same
splits), a figure of the score that chose, one row a method, then a short table and how it was chosen.

The estimate is the chosen candidate's share of held-out known samples classed right on the estimate's own
deals of the folds (not the folds that chose it), each held-out sample classed from the other folds' labels
only, as ``labels.csv`` classes an unknown one (:mod:`src.choice.readouts`), then read off the learning curve
at every known label, since each fold's fit is told fewer labels than the final fit
(:attr:`src.choice.estimator.FamilyChoice.estimate_intervals_`, :mod:`src.choice.learning_curve`). The
figure's and the table's intervals are Wilson's for a share of the known samples scored, as if each were an
independent trial: a binomial's spread is the least such a share has, and the samples of a fold share a fit,
so it is a guide, not a guarantee. Every candidate's scores are in ``candidates.csv``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..choice import rule
from ..choice.learning_curve import wilson
from ..choice.readouts import OWN
from ..files import write_atomic
from ..tuning.grids import setting_text
from ..tuning.selection import FOLDS
from .figures import pyplot

FIGURE = "candidates.png"


def best_of_each(found, results: dict, chosen: int) -> list[int]:
    """One candidate a method, best first: the chosen one for its method, else the method's best score
    (its setting and readout), a method whose every candidate failed last."""
    mean = np.nan_to_num(np.asarray(results["mean_test_score"], dtype=float), nan=-1.0)
    rows = {}
    for i, candidate in enumerate(found):
        kept = rows.get(candidate.name)
        if kept is None or (kept != chosen and (i == chosen or mean[i] > mean[kept])):
            rows[candidate.name] = i
    return sorted(rows.values(), key=lambda i: (-mean[i], i))


def title(candidate) -> str:
    """A candidate with its setting: ``SDA + nearest labelled (alpha=0.1,beta=0.1)``."""
    setting = setting_text(candidate.setting)
    return f"{candidate.title} ({setting})" if setting else candidate.title


def figure(found, results: dict, chosen: int, start: int, n_scored: int, path: Path | None = None):
    """The score that chose, one row a method (:func:`best_of_each`), with its 95% interval over the
    ``n_scored`` known samples; the choice in red, the prior's candidate in blue (the title says which the
    choice is where they are one). Saved to ``path``
    (returned), or the figure itself where none is given."""
    plt = pyplot()
    rows = best_of_each(found, results, chosen)
    if start not in rows:
        rows.append(start)
    mean = np.asarray(results["mean_test_score"], dtype=float)
    fig, ax = plt.subplots(figsize=(8.0, 0.26 * len(rows) + 1.4))
    for row, i in enumerate(rows):
        low, high = wilson(mean[i], n_scored)
        colour = "C3" if i == chosen else "C0" if i == start else "0.35"
        ax.plot([100 * low, 100 * high], [row, row], color=colour, lw=1.5)
        ax.plot(100 * mean[i], row, "o", color=colour, ms=4)
    ax.set_yticks(range(len(rows)), [title(found[i]) for i in rows], fontsize=7)
    for tick, i in zip(ax.get_yticklabels(), rows):
        tick.set_fontweight("bold" if i == chosen else "normal")
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel(f"of {n_scored} held-out known samples, % classed right on the folds that chose (95% interval)",
                  fontsize=8)
    ax.set_title(f"one row a method, its best; red: the choice, {'' if chosen == start else 'blue: '}the prior's "
                 "candidate", fontsize=8)
    fig.tight_layout()
    if path is None:
        return fig
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def estimated(share_low_high: tuple[float, float, float]) -> str:
    """A share right with its interval (as
    :attr:`src.choice.estimator.FamilyChoice.estimate_intervals_` gives them): ``47.2% [40.1, 54.3]``; a
    missing share (a fit failed) says so."""
    share, low, high = share_low_high
    if not np.isfinite(share):
        return "none (a fit of its failed)"
    return f"{100 * share:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def estimate(share: float, n: int) -> str:
    """A share right of ``n`` samples with Wilson's interval (:func:`src.choice.learning_curve.wilson`), as
    :func:`estimated` says it."""
    return estimated((share, *wilson(share, n)))


def answer(found, results: dict, chosen: int, start: int, why: str, intervals: dict, n_scored: int,
           level: float = rule.ALPHA) -> list[str]:
    """The answer's paragraphs: what to use and its estimate (``intervals``: a candidate's row -> its estimate
    and interval from ``n_scored`` known samples, the chosen one's and the best reference's), the reference
    beside it on the same splits, how the rule went at its ``level``."""
    reference = next((i for i in intervals if i != chosen and found[i].readout == OWN), None)
    lines = [f"**Use {title(found[chosen])}.** Its estimated share of right classes on samples whose label is "
             f"unknown: **{estimated(intervals[chosen])}** (your {n_scored} known samples scored on folds dealt "
             "afresh after the choice, each held out and classed from the other folds' labels only, as "
             "`labels.csv` classes yours, then read off the learning curve at all your labels; 95% interval).",
             ""]
    if found[chosen].readout == OWN:
        lines += [f"A reference wins: {found[chosen].title} on your labels alone, no factorization, is the "
                  "answer here.", ""]
    elif reference is not None:
        lines += [f"On the same splits, {title(found[reference])} on your labels alone: "
                  f"{estimated(intervals[reference])}.", ""]
    pvalues = np.asarray(results["p_vs_prior"], dtype=float)
    against = int(np.isfinite(pvalues).sum())
    if why == "evidence":
        lines.append(f"The rule started from {title(found[start])}, the prior's candidate, and moved: "
                     f"{found[chosen].title} gives back more right classes on the same held-out samples (one-sided "
                     f"Wilcoxon p = {pvalues[chosen]:.2g}, below {level:g} / {against} candidates).")
    else:
        kept = (f"The rule kept the prior's candidate, {title(found[chosen])}" if why == "prior" else
                f"The prior's first candidates failed; the rule took the first of its order with a score, "
                f"{title(found[chosen])}")
        lines.append(f"{kept}: none of the {against} others gave back more right classes by more than the noise "
                     f"of choosing (a one-sided Wilcoxon test at {level:g} / {against} against it on the same "
                     "held-out samples).")
    return lines


def table(found, results: dict, chosen: int, n_scored: int) -> list[str]:
    """One row a method (:func:`best_of_each`): its best candidate's share right on the folds that chose (of
    ``n_scored`` known samples) with its interval, held-out AC, p."""
    lines = ["| method, its best candidate | classed right (the folds that chose) | held-out AC | "
             "p against the prior's |",
             "|---|---|---|---|"]
    for i in best_of_each(found, results, chosen):
        name = f"**{title(found[i])}**" if i == chosen else title(found[i])
        mean, ac, p = (results[key][i] for key in ("mean_test_score", "mean_ac_score", "p_vs_prior"))
        lines.append(f"| {name} | " + ("failed | - | - |" if not np.isfinite(mean) else
                                       f"{estimate(mean, n_scored)} | {100 * ac:.1f} | "
                                       + ("-" if not np.isfinite(p) else f"{p:.2g}") + " |"))
    return lines


def rule_text(found) -> str:
    """Where the rule started and at what level: the shipped benchmark's, or the person's own."""
    if found.prior_how_ is None:
        return f"the prior given, at level {found.alpha_:g}"
    order = "mean classes given back" if found.prior_how_ == "mean" else "largest shortfall on any data set"
    chosen = " (as the benchmark's choice entrants chose on all their data sets)" if found.alpha == "shipped" else ""
    return f"the shipped benchmark's prior, its candidates ordered by their {order}, at level {found.alpha_:g}{chosen}"


def write(folder: Path, data, found, notes: list[str], seconds: float) -> Path:
    """``report.md`` and its figure in ``folder`` for the fitted :class:`src.choice.estimator.FamilyChoice`
    ``found`` on ``data`` (:class:`src.choice.your_data.YourData`)."""
    results, chosen, start = found.cv_results_, found.best_index_, found.prior_index_
    candidates = found.candidates()
    figure(candidates, results, chosen, start, found.n_scored_, Path(folder) / FIGURE)
    unknown = int((data.y < 0).sum())
    benchmarks = ", the benchmark's, on which the rule's level was chosen" if (found.n_folds, found.n_repeats) \
        == (FOLDS, 1) else ""
    lines = [f"# {data.name}: which method, and your samples' classes", "",
             *answer(candidates, results, chosen, start, found.selection_, found.estimate_intervals_,
                     found.n_scored_, found.alpha_), "",
             f"`labels.csv` gives the class of each of the {data.y.size} samples ({unknown} of them unknown "
             "before), the readout's confidence in it, and its cluster.", "",
             f"![The score that chose, one row a method]({FIGURE})", "",
             "## One row a method", "", *table(candidates, results, chosen, found.n_scored_), "",
             f"Every one of the {len(candidates)} candidates (each setting, each readout) is in `candidates.csv`.",
             "", "## How it was chosen", "",
             *(f"- {note}" for note in notes),
             f"- {len(candidates)} candidates, each scored on {found.n_folds * found.n_repeats} held-out splits "
             f"({found.n_folds} folds x {found.n_repeats} deal(s){benchmarks}) by the share of held-out known "
             "samples classed right; the rule is `src/choice/rule.py`, the manual's `docs/cluster.md`",
             f"- the estimate: the chosen candidate and the best reference scored again on {found.estimate_folds} "
             f"folds x {found.estimate_repeats} deals of their own",
             f"- the rule: {rule_text(found)}",
             "- each fold's fit is told fewer labels than the final one, so the estimate is read off the line "
             "through two label counts, straight in their logarithm, at all of them (`src/choice/learning_curve.py`)",
             f"- {seconds:.0f} s", ""]
    path = Path(folder) / "report.md"
    write_atomic(path, "\n".join(lines) + "\n")
    return path

"""The report of ``python -m src.cluster`` (:mod:`src.tuning.your_data`): the answer first (the method and
setting to use, its estimated accuracy on the unknown samples with an interval, the candidates no test separates
from it), a figure of every candidate's held-out accuracy, then the table and the cost.

The estimate is the chosen candidate's accuracy on the held-out folds of the known labels (every fold of every
deal), each held-out sample classed as ``labels.csv`` classes an unknown one (its cluster's class by the map the
other known samples give: :func:`src.tuning.estimator.mapped_accuracy`), its interval Student's t over those
splits. The held-out AC that chooses maps clusters to classes by the held-out labels themselves, and with a few
known samples a class it is far above what the classes given back score (``docs/cluster.md``). The splits share training samples, so the interval is
narrower than an independent sample's would be: a guide, not a guarantee. A candidate is "not separated" from
the choice where a two-sided Wilcoxon signed-rank test over the paired splits, Holm-adjusted over the
candidates, does not find the choice better at alpha = 0.05; with a few splits no test can, and the report says
how many there were.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy import stats

from ..files import write_atomic
from ..reproduction import shipped
from ..reproduction.contenders import LABEL_TRACKS
from ..tuning import choice
from ..tuning.homes import experiment
from .figures import pyplot
from .ranking import ALPHA, ac_order, join_names
from .choice_report import block_regret, shipped_family_rows
from .verdicts import holm, t_interval

FIGURE = "candidates.png"


def nearest_track(known_share: float) -> str:
    """The label track whose share of labelled samples is nearest ``known_share``."""
    shares = {track: float(experiment(track)["protocol"]["labels"]["fraction"]) for track in LABEL_TRACKS}
    return min(shares, key=lambda t: (abs(shares[t] - known_share), t))


def shipped_prior(known_share: float) -> list[str] | None:
    """The prior of a person's data (:mod:`src.tuning.choice`): the methods as the shipped tuned benchmark's
    pairwise tests place them (:func:`.ranking.ac_order`) in the label track whose share of labelled samples is
    nearest ``known_share``; None where no tuned cells ship."""
    rows = shipped_family_rows(nearest_track(known_share))
    return list(ac_order(rows)) if rows is not None else None


def shipped_regret(known_share: float) -> str:
    """What the same rule's choice cost on the benchmark at the nearest label rate: the regret of Choice against
    its oracle over the (data set, k) blocks (:func:`.choice_report.block_regret`), from the shipped settings
    and tuned cells alone; a sentence saying so where they do not ship."""
    track = nearest_track(known_share)
    settings, rows = shipped.load_settings(), shipped_family_rows(track)
    if settings is None or rows is None or not (settings["track"] == track).any():
        return (f"The benchmark's regret of this rule at the nearest label rate ({track}) is computed from the "
                "tuned benchmark's settings file, which does not ship yet.")
    searched = settings[settings["track"] == track].drop(columns="track")
    chosen = choice.entrant_rows(rows, searched, ac_order)
    chosen = chosen[chosen["method"] == "Choice"]
    regret, low, high, blocks = block_regret(chosen, choice.oracle(searched))
    return (f"On the benchmark at the nearest label rate ({track}), the same rule's choice was {regret:.1f} AC "
            f"points [{low:.1f}, {high:.1f}] below the best candidate in hindsight, over {blocks} (data set, k) "
            f"blocks, and scored {100 * chosen['acc'].mean():.1f} AC on average.")


def splits_of(results: dict, score: str = "test") -> np.ndarray:
    """The candidates' split scores (candidates, splits) from ``cv_results_``: the held-out AC (``"test"``), or
    the accuracy of the classes given back (``"classed"``: :func:`src.tuning.estimator.mapped_accuracy`)."""
    suffix = f"_{score}_score"
    keys = sorted((k for k in results if k.startswith("split") and k.endswith(suffix)),
                  key=lambda k: int(k[5:-len(suffix)]))
    return np.column_stack([np.asarray(results[k], dtype=float) for k in keys])


def interval(scores: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Student's t interval of the mean of a candidate's split scores (:func:`.verdicts.t_interval`)."""
    return t_interval(scores, level)


def not_separated(splits: np.ndarray, best: int) -> list[int]:
    """The candidates no Holm-adjusted Wilcoxon signed-rank test over the paired splits finds worse than
    ``best`` at :data:`~.ranking.ALPHA` (``best`` itself left out)."""
    others = [i for i in range(splits.shape[0]) if i != best and np.isfinite(splits[i]).all()]
    pvalues = []
    for i in others:
        diff = splits[best] - splits[i]
        pvalues.append(1.0 if not np.any(diff) else float(stats.wilcoxon(splits[best], splits[i]).pvalue))
    adjusted = holm(pvalues) if pvalues else []
    return [i for i, p in zip(others, adjusted) if p >= ALPHA]


def names(results: dict) -> list[str]:
    """Each candidate as ``method(param=value)``."""
    out = []
    for params in results["params"]:
        setting = ",".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in params.items()
                           if k != "method")
        out.append(f"{params['method']}({setting})" if setting else params["method"])
    return out


def figure(results: dict, best: int, path: Path) -> Path:
    """Every candidate's held-out AC with its 95% interval, best first; the choice in bold."""
    plt = pyplot()
    splits, labels = splits_of(results), names(results)
    mean = np.asarray(results["mean_test_score"], dtype=float)
    order = [i for i in np.argsort(np.where(np.isfinite(mean), -mean, np.inf), kind="stable")]
    fig, ax = plt.subplots(figsize=(6.4, 0.22 * len(order) + 1.2))
    for row, i in enumerate(order):
        low, high = interval(splits[i])
        colour = "C3" if i == best else "0.3"
        ax.plot([low, high], [row, row], color=colour, lw=1.5)
        ax.plot(mean[i], row, "o", color=colour, ms=4)
    ax.set_yticks(range(len(order)), [labels[i] for i in order], fontsize=7)
    for tick, i in zip(ax.get_yticklabels(), order):
        tick.set_fontweight("bold" if i == best else "normal")
    ax.invert_yaxis()
    ax.set_xlabel("held-out AC over the folds of the known labels (mean, 95% interval)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def by_classes(results: dict, best: int, labels: list[str]) -> str:
    """The other reading of the rule, beside the one that chose: the candidate whose classes given back score
    best over the same splits (``mean_classed_score``; a tie goes to the better held-out AC rank). No paper
    says which score chooses: the held-out AC is the benchmark's own measure, the classes given back are what
    ``labels.csv`` holds."""
    given = np.asarray(results["mean_classed_score"], dtype=float)
    if not np.isfinite(given).any():
        return "No candidate's classes given back could be scored on the splits."
    top = np.flatnonzero(given == np.nanmax(given))
    other = int(top[np.argmin(np.asarray(results["rank_test_score"])[top])])
    if other == best:
        return (f"Chosen by the accuracy of the classes it gives back instead of its held-out AC, the rule picks "
                f"{labels[best]} too.")
    return (f"Chosen by the accuracy of the classes it gives back instead of its held-out AC, the rule would pick "
            f"{labels[other]} ({100 * given[other]:.1f}% against {100 * given[best]:.1f}% for {labels[best]}); "
            "the held-out AC is the benchmark's own measure and chooses here (`docs/cluster.md`).")


def write(folder: Path, data, found, notes: list[str], seconds: float) -> Path:
    """``report.md`` and its figure in ``folder`` for the fitted :class:`src.tuning.estimator.FamilyChoice`
    ``found`` on ``data`` (:class:`src.tuning.your_data.YourData`)."""
    results, best = found.cv_results_, found.best_index_
    splits, labels = splits_of(results), names(results)
    classed = splits_of(results, "classed")[best]
    low, high = interval(classed)
    close = not_separated(splits, best)
    figure(results, best, Path(folder) / FIGURE)
    unknown = int((data.y < 0).sum())
    lines = [f"# {data.name}: which method, and your samples' classes", "",
             f"**Use {labels[best]}** ({choice.REASONS[found.selection_]}). Its estimated accuracy on samples whose label "
             f"is unknown: **{100 * np.mean(classed):.1f}%** [{100 * low:.1f}, {100 * high:.1f}] (95% interval "
             f"over {classed.size} held-out splits of the known labels, each split's samples classed as `labels.csv` "
             f"classes yours: each cluster takes the class the other known samples give it). Its held-out AC, the "
             f"score that chose it, is {100 * found.best_score_:.1f}%: its map of clusters to classes is the best for "
             "the held-out samples themselves, so it is higher, the more so the fewer known samples a class has.", "",
             ("No test over the splits separates it from " + join_names([labels[i] for i in close]) + "."
              if close else "The tests over the splits find it better than every other candidate."), "",
             f"`labels.csv` gives the class of each of the {data.y.size} samples ({unknown} of them unknown "
             "before), and its cluster.", "", by_classes(results, best, labels), "",
             f"![Every candidate's held-out accuracy]({FIGURE})", "",
             "## The candidates", "", "| candidate | held-out AC | 95% interval | classes given back | rank | "
             "fewest samples a split scored |", "|---|---|---|---|---|---|"]
    for i in np.argsort(np.asarray(results["rank_test_score"]), kind="stable"):
        a, b = interval(splits[i])
        mean, given = results["mean_test_score"][i], results["mean_classed_score"][i]
        lines.append(f"| {'**' + labels[i] + '**' if i == best else labels[i]} | "
                     + ("failed |  - |" if not np.isfinite(mean) else f"{100 * mean:.1f} | [{100 * a:.1f}, {100 * b:.1f}] |")
                     + (" - |" if not np.isfinite(given) else f" {100 * given:.1f} |")
                     + f" {results['rank_test_score'][i]} | {results['n_scored'][i]} |")
    lines += ["", "## How it was chosen", "", shipped_regret(float((data.y >= 0).mean())), "",
              *(f"- {note}" for note in notes),
              f"- {len(labels)} candidates, each scored on {splits.shape[1]} held-out splits "
              f"({found.n_folds} folds x {found.n_repeats} deals); the choice's rule is `src/tuning/choice.py`",
              f"- {seconds:.0f} s on this machine", ""]
    path = Path(folder) / "report.md"
    write_atomic(path, "\n".join(lines) + "\n")
    return path

"""What a person with the same labels would use instead: the label methods against the references.

The label tracks run two classifiers of the labelled samples beside the family (:mod:`src.methods.references`:
scikit-learn's LabelSpreading and a nearest labelled neighbour). None of the five papers compares with one.
This module writes what the benchmark's report says of them:

* :func:`answer_lines`: each label track's answer on the references, by AC and by the classes given back
  (``given_unlabelled``: the share of the unlabelled samples whose class is right when each cluster takes the
  class of the trial's labelled samples, :func:`src.protocol.partition.given_back`), both by the pairwise tests
  of the track's ranking;
* :func:`section`, "Against what you would use instead": for each label method, its AC and its classes given
  back against the best reference's (the reference with the higher mean over the blocks, which favours the
  references by at most the choice of two), with the ranking's Wilcoxon-Holm test and the Bayesian comparison
  (:mod:`.bayesian`); the ranking of every method by the classes given back; and the readouts by the labels:
  the classes a nearest labelled neighbour and label spreading give back in each method's representation
  (``given_nearest_labelled``, ``given_spread_labelled``) against the same classifier on the samples themselves,
  which says whether the factorization helps that classifier.

A method's kind (:func:`src.running.settings.method_kind`) is read from the registry: a reference classifies, a label method
factorizes with the labels, a label-free method without them.

References
----------
A. Oliver, A. Odena, C. Raffel, E. D. Cubuk, I. J. Goodfellow, "Realistic evaluation of deep semi-supervised
learning algorithms", NeurIPS 2018.

D. Zhou, O. Bousquet, T. N. Lal, J. Weston, B. Schölkopf, "Learning with local and global consistency",
NIPS 2003 (label spreading).
"""

from __future__ import annotations

import math

import pandas as pd
from scipy.stats import wilcoxon

from ..running.settings import LABEL, LABEL_FREE, REFERENCE, method_kind as kind
from ..protocol.cell import LABEL_READOUTS
from . import bayesian
from .ranking import ALPHA, Ranking, blocks_over_datasets, format_p, join_names, ranking_over
from .verdicts import holm

#: The column of the classes given back.
GIVEN = "given_unlabelled"
#: What the classes given back are called in sentences.
GIVEN_NAME = "classes given back"


def of_kind(frame: pd.DataFrame, wanted: str) -> list[str]:
    """The methods (short names) of ``frame`` of kind ``wanted``, sorted."""
    estimators = frame.drop_duplicates("method").set_index("method")["estimator"]
    return sorted(m for m, estimator in estimators.items() if kind(estimator) == wanted)


def given_ranking(frame: pd.DataFrame) -> Ranking | None:
    """The ranking of a label track's methods by the classes given back, over its (data set, k) blocks."""
    if GIVEN not in frame or frame[GIVEN].isna().all():
        return None
    return ranking_over(frame, GIVEN)


def standing(ranking: Ranking, method: str) -> str:
    """Where the pairwise tests place ``method``: in the first group, or beaten by how many."""
    others = len(ranking.methods) - 1
    beats, beaten = len(ranking.beats(method)), ranking.beaten_by(method)
    where = "in the first group" if method in ranking.leaders else \
        f"below {len(beaten)} ({join_names(beaten[:3])}{' and others' if len(beaten) > 3 else ''})"
    return f"{method} is {where}, better than {beats} of {others} (mean {100 * ranking.means[method]:.1f})"


def ranked_references(frame: pd.DataFrame, ranking: Ranking | None) -> list[str]:
    """The references of ``frame`` that ``ranking`` ranks."""
    return [m for m in of_kind(frame, REFERENCE) if ranking is not None and m in ranking.methods]


def answer_lines(frame: pd.DataFrame, ranking: Ranking | None, tuned: Ranking | None = None) -> list[str]:
    """A label track's answer on its references: their standing by AC (``ranking``, every sample scored) and by
    the classes given back, and, where the track's ``tuned`` ranking holds them (their tuned cells ship), their
    standing tuned alike."""
    references = ranked_references(frame, ranking)
    if not references:
        return []
    by_given = given_ranking(frame)
    lines = [f"What a person with the same labels would use instead (references, not in any paper): by AC, "
             + "; ".join(standing(ranking, m) for m in references) + "."]
    if by_given is not None:
        lines.append(f"By the {GIVEN_NAME} (the unlabelled samples' classes named from the known labels), the "
                     f"first group is {join_names(by_given.leaders)}: "
                     + "; ".join(standing(by_given, m) for m in references if m in by_given.methods) + ".")
    tuned_references = [m for m in references if tuned is not None and m in tuned.methods]
    if tuned_references:
        lines.append("Tuned by the same rule on the labels they may see, by AC: "
                     + "; ".join(standing(tuned, m) for m in tuned_references) + ".")
    elif tuned is not None:
        lines.append("The references run at their defaults; until their tuned cells ship, the tuned ranking "
                     "leaves them out.")
    return [" ".join(lines), ""]


def in_words(frame: pd.DataFrame, ranking: Ranking | None) -> str:
    """The references' standing by AC in a few words, for the README's row: "references: LabelSpreading in the
    first group, kNN below 2"; empty without a reference."""
    references = ranked_references(frame, ranking)
    words = [f"{m} in the first group" if m in ranking.leaders else f"{m} below {len(ranking.beaten_by(m))}"
             for m in references]
    return f"references: {', '.join(words)}" if words else ""


def best_reference(ranking: Ranking, references) -> str:
    """The reference of ``ranking`` with the higher mean over its blocks."""
    return max((m for m in references if m in ranking.methods), key=lambda m: ranking.means[m])


def against_table(ranking: Ranking, label_methods, references, name: str) -> list[str]:
    """Each label method against the best reference of ``ranking`` (metric ``name``): the two means, the
    difference, the ranking's Holm-adjusted Wilcoxon p and its verdict, and the Bayesian comparison's
    probabilities (:func:`.bayesian.compare`, the reference first)."""
    best = best_reference(ranking, references)
    found = bayesian.compare(ranking, first=best).set_index("method")
    lines = [f"| label method | its {name} | {best}'s | difference (points) | Wilcoxon-Holm p | verdict | "
             f"P(method better) | P(equivalent, +-{100 * bayesian.ROPE:g}) | P({best} better) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for method in (m for m in ranking.order if m in label_methods):
        verdict = "better" if ranking.better(method, best) else "worse" if ranking.better(best, method) else \
            "not separated"
        row = found.loc[method]
        lines.append(f"| {method} | {100 * ranking.means[method]:.1f} | {100 * ranking.means[best]:.1f} | "
                     f"{100 * (ranking.means[method] - ranking.means[best]):+.1f} | "
                     f"{format_p(ranking.wilcoxon_holm.loc[method, best])} | {verdict} | {row['worse']:.3f} | "
                     f"{row['equivalent']:.3f} | {row['better']:.3f} |")
    return lines


def readout_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Per method with a representation and readout (:data:`src.protocol.cell.LABEL_READOUTS`): the mean classes
    given back by the readout in its representation and by the same classifier on the samples (the reference's
    own cell), over the (data set, k) blocks both cover, the difference and the two-sided Wilcoxon p over the
    blocks, Holm-adjusted over every (method, readout) pair."""
    names = frame.drop_duplicates("estimator").set_index("estimator")["method"]
    rows = []
    for readout, reference in LABEL_READOUTS.items():
        column = f"given_{readout}"
        if column not in frame or reference not in names:
            continue
        on_samples = blocks_over_datasets(frame[frame["estimator"] == reference], GIVEN).iloc[:, 0]
        read = frame.dropna(subset=[column])
        for method, mine in read.groupby("method"):
            blocks = pd.concat([blocks_over_datasets(mine, column).iloc[:, 0].rename("readout"),
                                on_samples.rename("samples")], axis=1).dropna()
            if len(blocks) < 2:
                continue
            difference = blocks["readout"] - blocks["samples"]
            p = wilcoxon(difference).pvalue if (difference != 0).any() else 1.0
            rows.append({"method": method, "kind": kind(mine["estimator"].iloc[0]), "readout": readout,
                         "classifier": names[reference], "blocks": len(blocks),
                         "in_representation": blocks["readout"].mean(),
                         "on_samples": blocks["samples"].mean(), "difference": difference.mean(), "p": p})
    table = pd.DataFrame(rows)
    if not table.empty:
        table["p_holm"] = holm(table["p"].tolist())
    return table


def helps(row) -> str:
    """Whether a readout's row says the representation helps its classifier, by the Holm-adjusted test."""
    if row.p_holm >= ALPHA:
        return "no difference found"
    return "helps" if row.difference > 0 else "hurts"


def readout_lines(table: pd.DataFrame) -> list[str]:
    """The readouts' table, label methods first, and a sentence per readout of the label methods it helps."""
    if table.empty:
        return []
    order = {LABEL: 0, LABEL_FREE: 1}
    table = table.sort_values(["readout", "kind", "difference"], key=lambda c: c.map(order) if c.name == "kind"
                              else -c if c.name == "difference" else c)
    lines = ["| readout | method | kind | classes given back, in its representation | the classifier on the samples "
             "| difference (points) | Holm p | the factorization |", "|---|---|---|---|---|---|---|---|"]
    for row in table.itertuples():
        lines.append(f"| {row.readout} | {row.method} | {row.kind} | {100 * row.in_representation:.1f} | "
                     f"{row.classifier} {100 * row.on_samples:.1f} | {100 * row.difference:+.1f} | "
                     f"{format_p(row.p_holm)} | {helps(row)} |")
    sentences = []
    for readout, rows in table[table["kind"] == LABEL].groupby("readout", sort=False):
        verdicts = {word: [r.method for r in rows.itertuples() if helps(r) == word]
                    for word in ("helps", "hurts", "no difference found")}
        sentences.append(f"{rows['classifier'].iloc[0]} ({readout}) in a label method's representation: "
                         + "; ".join(f"{word} for {join_names(found)}" for word, found in verdicts.items() if found)
                         + ".")
    return [" ".join(sentences), "", *lines, "",
            f"Mean over the (data set, k) blocks of the share of unlabelled samples given their right class; Holm p: a "
            f"two-sided Wilcoxon signed-rank test over the blocks, Holm-adjusted over every row (alpha = {ALPHA:g})."]


def section(frames: dict[str, pd.DataFrame], rankings: dict[str, Ranking], titles: dict[str, str]) -> list[str]:
    """The report's section "Against what you would use instead": per label track of ``frames`` (its rows) with
    its AC ranking in ``rankings``, each label method against the best reference by AC and by the classes given
    back, the ranking by the classes given back, and the readouts; empty when no track holds a reference."""
    lines = []
    for track, frame in frames.items():
        references, label_methods = of_kind(frame, REFERENCE), of_kind(frame, LABEL)
        ranking = rankings.get(track)
        if not references or not label_methods or ranking is None:
            continue
        by_given = given_ranking(frame)
        title = titles.get(track, track)
        lines += [f"### {title}", "", "By AC on every sample:", "",
                  *against_table(ranking, label_methods, references, "AC"), ""]
        if by_given is not None:
            lines += [f"By the {GIVEN_NAME}:", "", *against_table(by_given, label_methods, references, GIVEN_NAME),
                      "", f"<details><summary>Every method ranked by the {GIVEN_NAME}</summary>", "",
                      *given_means(frame, by_given), "", "</details>", ""]
        lines += ["#### Does the factorization help a classifier?", "", *readout_lines(readout_rows(frame)), ""]
    if not lines:
        return []
    return ["## Against what you would use instead", "",
            "None of the five papers compares with a classifier of the same labelled samples. Here each label "
            "method meets the better of the two references (scikit-learn's LabelSpreading, kNN kernel, and a "
            "nearest labelled neighbour, each at its documented default: `conf/method/`) on the same trials: its "
            "AC, and the classes it gives back (each cluster named by the trial's labelled samples, as "
            "`python -m src.cluster` names a person's; a reference's classes are its own predictions), with the "
            "track ranking's Wilcoxon-Holm test and the Bayesian signed-rank comparison (rope "
            f"{100 * bayesian.ROPE:g} point). Every method here is at its fixed setting, the references at "
            "their defaults; where the references' tuned cells ship, the tuned ranking of the answer holds them "
            "tuned alike.", "",
            *lines]


def given_means(frame: pd.DataFrame, ranking: Ranking) -> list[str]:
    """Each method's mean classes given back per data set, placed by the pairwise tests, and the answer."""
    datasets = sorted(frame["dataset"].unique())
    means = frame.groupby(["method", "dataset"])[GIVEN].mean().unstack("dataset").reindex(columns=datasets) * 100
    lines = [f"| method | kind | {' | '.join(datasets)} | better than | worse than |",
             "|---" * (len(datasets) + 4) + "|"]
    kinds = frame.drop_duplicates("method").set_index("method")["estimator"].map(kind)
    for method in ranking.order:
        cells = " | ".join("-" if math.isnan(v) else f"{v:.1f}" for v in means.loc[method])
        lines.append(f"| {method} | {kinds[method]} | {cells} | {len(ranking.beats(method))} | "
                     f"{len(ranking.beaten_by(method))} |")
    return lines

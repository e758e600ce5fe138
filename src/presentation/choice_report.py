"""The report's part on the family choosing itself (:mod:`src.choice.entrants`): per label track, the two entrants
(the choice among every candidate, and among the label-free methods' clusters: COBS's setting) beside the best
single candidates, their regret against their oracle, which candidates they picked, and COBS's claim as a
verdict of its test.

The entrants' rows ship (``python -m src.benchmark --choice-entrants``, recomputed from the shipped fold fits,
cells and settings alone); :func:`with_entrants` puts them among a track's tuned rows, where they are ranked
with the family in the same blocks. A candidate is a method at a setting read out one way (its clusters mapped
by the known labels, a nearest labelled neighbour in its representation, label spreading on it), so the
entrants are also set beside every single candidate at its fixed setting, read out the same ways, from the
shipped fixed-setting cells: by AC, and by the classes given back to the unknown samples.

References
----------
T. Van Craenendonck, H. Blockeel, "Constraint-based clustering selection", Machine Learning 106(9-10),
pp. 1497-1521, 2017 (COBS: the labels choose among unsupervised algorithms and their settings, and this beats
semi-supervised algorithms).

S. Holm, "A simple sequentially rejective multiple test procedure", Scandinavian Journal of Statistics 6(2),
pp. 65-70, 1979.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
from scipy import stats

from ..choice import entrants, prior
from ..choice.readouts import OWN, candidate_name
from ..choice.rule import REASONS
from ..reproduction import shipped
from ..reproduction.contenders import LABEL_TRACKS
from ..tuning.selection import takes_labels
from .ranking import ALPHA, Ranking, claim_verdict, ranking_over
from .verdicts import holm, t_interval

#: The entrant the COBS claim is about, and what it claims.
COBS = "Choice (label-free)"
#: A trial, and a block of trials (the unit of the tests, as in the rankings).
TRIAL, BLOCK = ["track", "dataset", "k", "trial"], ["track", "dataset", "k"]
#: What each measure is called in the tables.
MEASURES = {"acc": "AC", "given_unlabelled": "classes given back"}


def with_entrants(track: str, rows: pd.DataFrame, shipped_rows: pd.DataFrame | None = None) -> pd.DataFrame:
    """A track's tuned rows with the choice's two entrants in place of any an older file held: the shipped
    entrants' rows (:func:`src.choice.entrants.load`, or ``shipped_rows``) of ``track`` on the data sets of
    ``rows``; the rows without entrants outside a label track or where none ship."""
    rows = rows[~rows["method"].isin(entrants.ENTRANTS)]
    found = entrants.load() if shipped_rows is None else shipped_rows
    if track not in LABEL_TRACKS or found is None:
        return rows
    found = found[(found["track"] == track) & found["dataset"].isin(rows["dataset"].unique())]
    return pd.concat([rows, found.drop(columns="track")], ignore_index=True) if not found.empty else rows


def singles(cells: pd.DataFrame) -> pd.DataFrame:
    """Every single candidate at its fixed setting, per trial, from the fixed-setting cells (a label track's,
    with their readouts' columns): ``track``, ``dataset``, ``k``, ``trial``, ``name``, ``acc``,
    ``given_unlabelled``."""
    found = []
    for readout, (acc, given) in entrants.CELL_COLUMNS.items():
        if readout == OWN or given not in cells:
            continue
        rows = cells.dropna(subset=[given])
        found.append(pd.DataFrame({**{c: rows[c] for c in TRIAL},
                                   "name": [candidate_name(m, readout) for m in rows["method"]],
                                   "acc": rows[acc], "given_unlabelled": rows[given]}))
    return pd.concat(found, ignore_index=True) if found else pd.DataFrame(columns=[*TRIAL, "name", *MEASURES])


def beside_singles(chosen: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """Every single candidate against the entrant's rows ``chosen`` (one track), on the trials of both: per
    candidate its mean of each measure over the (data set, k) blocks, and the Holm-adjusted p (over the
    candidates) of a one-sided Wilcoxon signed-rank test over the blocks that it is better than the entrant."""
    theirs = singles(cells).merge(chosen[TRIAL], on=TRIAL)
    ours = {m: chosen.groupby(BLOCK)[m].mean() for m in MEASURES}
    table = []
    for name, rows in theirs.groupby("name", sort=True):
        row = {"name": name}
        for measure in MEASURES:
            other = rows.groupby(BLOCK)[measure].mean().reindex(ours[measure].index)
            diff = (other - ours[measure]).dropna()
            row[measure] = float(other.mean())
            row[f"p_{measure}"] = (float(stats.wilcoxon(diff, alternative="greater").pvalue)
                                   if (diff != 0).any() else 1.0)
        table.append(row)
    table = pd.DataFrame(table, columns=["name", *(c for m in MEASURES for c in (m, f"p_{m}"))])
    for measure in MEASURES:
        table[f"holm_{measure}"] = holm(table[f"p_{measure}"].tolist()) if len(table) else []
    return table


def block_regret(chosen: pd.DataFrame, level: float = 0.95) -> tuple[float, float, float, int]:
    """The regret in points of the classes given back against the oracle of the entrant's pool (the candidate
    that gave back the most right classes on the test, a ceiling), over the trials with folds, as the mean over
    the (data set, k) blocks of each block's mean, with its ``level`` t-interval, and the number of blocks."""
    scored = chosen.dropna(subset=["oracle_given"])
    per = (scored["oracle_given"] - scored["given_unlabelled"]).groupby([scored[c] for c in BLOCK]).mean() * 100
    low, high = t_interval(per, level)
    return float(per.mean()) if len(per) else math.nan, low, high, len(per)


def summary_lines(rows: pd.DataFrame, cells: pd.DataFrame, ranking: Ranking | None) -> list[str]:
    """Per entrant: its means, its standing by the tuned ranking's tests, the best single candidate by each
    measure with the test against it, how many single candidates a test finds better, the regret, and why the
    trials were chosen."""
    lines = ["| entrant | AC | classes given back | standing (net wins) | best single by AC | best single by "
             "classes given back | singles better by a test | regret (points, 95%, blocks) | prior / evidence "
             "/ no folds |", "|---|---|---|---|---|---|---|---|---|"]
    for entrant in entrants.ENTRANTS:
        mine = rows[rows["method"] == entrant]
        if mine.empty:
            continue
        table = beside_singles(mine, cells)
        best = []
        for measure in MEASURES:
            top = table.sort_values([measure, "name"], ascending=[False, True]).head(1)
            best.append("-" if top.empty else
                        f"{top['name'].iloc[0]} {100 * top[measure].iloc[0]:.1f} "
                        f"(p {top[f'holm_{measure}'].iloc[0]:.2g})")
        better = ((table["holm_acc"] < ALPHA) | (table["holm_given_unlabelled"] < ALPHA)).sum()
        regret, low, high, blocks = block_regret(mine)
        counts = mine["selection"].value_counts()
        standing = (f"{len(ranking.beats(entrant)) - len(ranking.beaten_by(entrant)):+d}"
                    if ranking is not None and entrant in ranking.methods else "-")
        lines.append(f"| {entrant} | {100 * mine['acc'].mean():.1f} | {100 * mine['given_unlabelled'].mean():.1f} "
                     f"| {standing} | {best[0]} | {best[1]} | {better} of {len(table)} | "
                     f"{regret:.1f} [{low:.1f}, {high:.1f}], {blocks} | "
                     + " / ".join(str(int(counts.get(why, 0))) for why in ("prior", "evidence", entrants.NO_FOLDS))
                     + " |")
    return lines


def picks(chosen: pd.DataFrame) -> pd.DataFrame:
    """How often the entrant chose each candidate, per data set: ``dataset``, ``chosen``, ``n``, ``share``."""
    counts = chosen.groupby(["dataset", "chosen"]).size().rename("n").reset_index()
    counts["share"] = counts["n"] / counts.groupby("dataset")["n"].transform("sum")
    return counts.sort_values(["dataset", "n", "chosen"], ascending=[True, False, True], ignore_index=True)


def picks_lines(rows: pd.DataFrame, top: int = 2) -> list[str]:
    """Per data set, the rule chosen on the other data sets (the prior's order, :data:`src.choice.prior.HOWS`,
    and the level) and the candidates each entrant picked most, with their shares of the trials."""
    present = [entrant for entrant in entrants.ENTRANTS if (rows["method"] == entrant).any()]
    lines = ["| data set | " + " | ".join(f"{entrant}: prior, level, picked" for entrant in present) + " |",
             "|---|" + "---|" * len(present)]
    found = {entrant: picks(rows[rows["method"] == entrant]) for entrant in present}
    rules = {entrant: rows[rows["method"] == entrant].groupby("dataset")[["prior_how", "alpha"]].first()
             for entrant in present}
    for dataset in sorted({d for counts in found.values() for d in counts["dataset"]}):
        cells = []
        for entrant in present:
            mine = found[entrant][found[entrant]["dataset"] == dataset].head(top)
            how, level = rules[entrant].loc[dataset] if dataset in rules[entrant].index else ("-", math.nan)
            cells.append(f"{how}, {level:g}: " + ", ".join(f"{r.chosen} {100 * r.share:.0f}%"
                                                          for r in mine.itertuples()))
        lines.append(f"| {dataset} | " + " | ".join(cells) + " |")
    return lines


def cobs_line(ranking: Ranking | None, rows: pd.DataFrame) -> str:
    """COBS's claim, "choosing among unsupervised methods with the labels beats the semi-supervised methods",
    decided by the track's Wilcoxon-Holm tests (:func:`.ranking.claim_verdict`) against each label method."""
    if ranking is None or COBS not in ranking.methods:
        return f"COBS's claim: not decided ({COBS} is not ranked in this track)."
    names = rows.drop_duplicates("method").set_index("method")["estimator"]
    label_methods = sorted(m for m in ranking.methods if m in names.index and m not in entrants.ENTRANTS
                           and takes_labels(names[m]))
    check = claim_verdict(ranking, [COBS], label_methods)
    return (f"**COBS's claim** (choosing among the label-free methods with the labels beats the semi-supervised "
            f"methods, {len(label_methods)} of them): {check.sentence}")


def person_rule_lines(path: Path = prior.RULE_FILE) -> list[str]:
    """The rule a person's file runs under (``python -m src.cluster``): the one the entrants chose on every data
    set (:func:`src.choice.entrants.compute`), where it ships."""
    if not Path(path).is_file():
        return []
    rows = pd.read_csv(path).set_index("entrant")
    if "Choice" not in rows.index:
        return []
    mine = rows.loc["Choice"]
    order = "mean" if mine["prior_how"] == "mean" else "largest shortfall on any data set (regret)"
    return [f"A person's file is none of the data sets, so `python -m src.cluster` runs under the rule chosen on "
            f"all {len(str(mine['chosen_on']).split())} of them ({str(mine['chosen_on']).replace(' ', ', ')}), each "
            f"scored under a prior read from the others: the prior's candidates ordered by their {order}, at level "
            f"{float(mine['alpha']):g} (`papers/benchmark/choice_rule.csv`).", ""]


def section(tuned: dict[str, tuple[pd.DataFrame, pd.DataFrame | None]], rankings: dict[str, Ranking | None],
            titles: dict[str, str], cells: pd.DataFrame | None = None) -> list[str]:
    """The report's section: per label track whose tuned rows hold the entrants, the summary, the picks and
    COBS's verdict; ``rankings`` the tuned AC ranking per track (with the entrants, in the same blocks as every
    method); ``cells`` the fixed-setting cells with their readouts (default: the shipped ones)."""
    if cells is None:
        cells = shipped.load() if shipped.FILE.is_file() else pd.DataFrame(columns=TRIAL)
    parts = []
    for track, (rows, _) in tuned.items():
        if not rows["method"].isin(entrants.ENTRANTS).any():
            continue
        ranking, note = rankings.get(track), []
        covered = sorted(rows.loc[rows["method"].isin(entrants.ENTRANTS), "dataset"].unique())
        if ranking is None or not set(entrants.ENTRANTS) & set(ranking.methods):
            # the entrants' data sets only (fold fits ship for some): ranked with the family on those
            ranking = ranking_over(rows, "acc", covered)
            note = [f"The entrants' fold fits ship for {len(covered)} of the track's "
                    f"{rows['dataset'].nunique()} data sets ({', '.join(covered)}): their standing and COBS's "
                    "verdict are read from a ranking of the family on those alone.", ""]
        mine = rows.assign(track=track)
        parts += [f"### {titles.get(track, track)}", "", *note,
                  *summary_lines(mine, cells[cells["track"] == track], ranking), "", *picks_lines(mine), "",
                  cobs_line(ranking, rows), ""]
    if not parts:
        return []
    return ["## The family chooses itself", "",
            "Per trial, one candidate chosen on the trial's known samples only, by the rule of `python -m "
            "src.cluster` (`src/choice/`). A candidate is a method at a setting of its grid, read out one way: its "
            "clusters mapped by the known labels, a nearest labelled neighbour in its representation, or label "
            "spreading on it; the references are candidates too. Its score is the share of held-out known samples "
            "whose class came back right from a fit told the other folds' labels only, the same measure for every "
            "kind of candidate. The rule keeps the prior's candidate (the best by that measure in the shipped "
            "fixed-setting cells of the track's *other* data sets) unless a one-sided Wilcoxon test over the "
            "held-out samples, Bonferroni-corrected over the candidates, finds another better: "
            f"{REASONS['evidence'].split('(')[0].strip()}. Its level is chosen on the other data sets too (leave "
            "one data set out), so the figures account for choosing it. **Choice** chooses among every candidate; "
            "**Choice (label-free)** among the clusters of the methods that take no labels (COBS, Van "
            "Craenendonck and Blockeel 2017). Both are ranked with the family above, in the same blocks and tests, "
            "and set here beside every single candidate at its fixed setting (one-sided Wilcoxon over the blocks, "
            "Holm over the candidates). The regret is the classes given back by the oracle (the pool's best on "
            "the test, a ceiling) less the choice's, over the trials with folds. Recomputed from the shipped fold "
            "fits, cells and settings alone (`python -m src.benchmark --choice-entrants`).", "",
            *person_rule_lines(), *parts]

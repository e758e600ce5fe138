"""The report's part on the family choosing itself (:mod:`src.tuning.choice`): per label track, the two entrants
(the choice among every method, and among the label-free ones: COBS's setting) beside the best single method,
their regret against their oracle, which methods they picked, and COBS's claim as a verdict of its test.

Everything here reads the tuned rows (the entrants are rows of them, ranked with the family in the same blocks)
and the settings table (the oracle and the regret), so it is written from the shipped files as from a run.

References
----------
T. Van Craenendonck, H. Blockeel, "Constraint-based clustering selection", Machine Learning 106(9-10),
pp. 1497-1521, 2017 (COBS: the labels choose among unsupervised algorithms and their settings, and this beats
semi-supervised algorithms).
"""

from __future__ import annotations

import math

import pandas as pd

from ..reproduction import shipped
from ..reproduction.contenders import LABEL_TRACKS
from ..tuning import choice
from ..tuning.selection import takes_labels
from .ranking import Ranking, ac_order, claim_verdict, join_names
from .tuning_report import net_wins
from .verdicts import t_interval

#: The entrant the COBS claim is about, and what it claims.
COBS = "Choice (label-free)"


def shipped_family_rows(track: str):
    """The shipped tuned family rows of ``track`` (the choice's entrants left out), or None."""
    tuned = shipped.load_tuned()
    if tuned is None:
        return None
    rows = shipped.tuned_family(shipped.load(), tuned)
    rows = rows[(rows["track"] == track) & ~rows["method"].isin(choice.ENTRANTS)]
    return rows if not rows.empty else None


def with_entrants(track: str, rows: pd.DataFrame, searched: pd.DataFrame | None) -> pd.DataFrame:
    """A person's tuned rows of ``track`` (``python -m src.benchmark --dataset mine.npz --tune``) with the
    choice's two entrants (:func:`src.tuning.choice.entrant_rows`), their prior the shipped tuned benchmark's
    order in the same track (:func:`shipped_family_rows`; the shipped fixed-setting cells where no tuned
    cells ship), which reads no label of the person's data; the rows as they are outside a label track,
    without a settings table, or where nothing ships to order by."""
    if track not in LABEL_TRACKS or searched is None or rows["method"].isin(choice.ENTRANTS).any():
        return rows
    prior = shipped_family_rows(track)
    if prior is None:
        fixed = shipped.load()
        prior = fixed[fixed["track"] == track]
    if prior.empty:
        return rows
    # the prior of a trial is the order over the other data sets (leave_one_out): here the shipped ones alone
    found = choice.entrant_rows(pd.concat([rows, prior], ignore_index=True), searched, ac_order)
    return pd.concat([rows, found], ignore_index=True)


def block_regret(chosen: pd.DataFrame, ceiling: pd.DataFrame, level: float = 0.95) -> tuple[float, float, float,
                                                                                                int]:
    """The regret in AC points (:func:`src.tuning.choice.regret`) as the mean over the (data set, k) blocks of
    each block's mean over its trials, with its ``level`` t-interval, and the number of blocks."""
    per = choice.regret(chosen, ceiling).groupby(["dataset", "k"])["regret"].mean() * 100
    low, high = t_interval(per, level)
    return float(per.mean()) if len(per) else math.nan, low, high, len(per)


def summary_lines(rows: pd.DataFrame, searched: pd.DataFrame, ranking: Ranking | None) -> list[str]:
    """The entrants beside the best single method: mean AC, standing by the pairwise tests, regret against the
    oracle (the best candidate of the pool in hindsight), and how the trials were chosen."""
    family = [m for m in (ranking.order if ranking is not None else []) if m not in choice.ENTRANTS]
    best = family[0] if family else None
    lines = ["| entrant | AC | standing by the tests (net wins) | oracle AC | regret (points, 95% interval, blocks) | "
             "chosen on held-out / tie / too few |", "|---|---|---|---|---|---|"]
    for entrant in choice.ENTRANTS:
        mine = rows[rows["method"] == entrant]
        if mine.empty:
            continue
        ceiling = choice.oracle(searched, entrant)
        regret, low, high, blocks = block_regret(mine, ceiling)
        counts = mine["selection"].value_counts()
        standing = f"{net_wins(ranking, entrant):+d}" if ranking is not None and entrant in ranking.methods else "-"
        lines.append(f"| {entrant} | {100 * mine['acc'].mean():.1f} | {standing} | {100 * ceiling['acc'].mean():.1f} "
                     f"| {regret:.1f} [{low:.1f}, {high:.1f}], {blocks} | "
                     + " / ".join(str(int(counts.get(why, 0))) for why in ("held-out", "tie: prior", "too few: prior"))
                     + " |")
    if best is not None:
        single = rows[rows["method"] == best]
        lines.append(f"| best single method: {best} | {100 * single['acc'].mean():.1f} | "
                     f"{net_wins(ranking, best):+d} | - | - | - |")
    return lines


def picks_lines(rows: pd.DataFrame, top: int = 3) -> list[str]:
    """Per data set, the methods each entrant picked most, with their shares of the trials."""
    lines = ["| data set | " + " | ".join(f"{entrant} picked" for entrant in choice.ENTRANTS) + " |",
             "|---|" + "---|" * len(choice.ENTRANTS)]
    found = {entrant: choice.picks(rows[rows["method"] == entrant]) for entrant in choice.ENTRANTS
             if (rows["method"] == entrant).any()}
    datasets = sorted({d for picks in found.values() for d in picks["dataset"]})
    for dataset in datasets:
        cells = []
        for entrant in choice.ENTRANTS:
            picks = found.get(entrant)
            mine = picks[picks["dataset"] == dataset].head(top) if picks is not None else pd.DataFrame()
            cells.append(", ".join(f"{r.chosen_method} {100 * r.share:.0f}%" for r in mine.itertuples()) or "-")
        lines.append(f"| {dataset} | " + " | ".join(cells) + " |")
    return lines


def cobs_line(ranking: Ranking | None, searched: pd.DataFrame) -> str:
    """COBS's claim, "choosing among unsupervised methods with the labels beats the semi-supervised methods",
    decided by the track's Wilcoxon-Holm tests (:func:`.ranking.claim_verdict`) against each label method."""
    if ranking is None or COBS not in ranking.methods:
        return f"COBS's claim: not decided ({COBS} is not ranked in this track)."
    names = searched.drop_duplicates("method").set_index("method")["estimator"]
    label_methods = sorted(m for m in ranking.methods if m in names.index and takes_labels(names[m]))
    check = claim_verdict(ranking, [COBS], label_methods)
    return (f"**COBS's claim** (choosing among the label-free methods with the labels beats the semi-supervised "
            f"methods: {join_names(label_methods)}): {check.sentence}")


def section(tuned: dict[str, tuple[pd.DataFrame, pd.DataFrame | None]], rankings: dict[str, Ranking | None],
            titles: dict[str, str]) -> list[str]:
    """The report's section: per label track whose tuned rows hold the entrants and whose settings table is
    there, the summary, the picks and COBS's verdict; ``rankings`` the tuned AC ranking per track (with the
    entrants, in the same blocks as every method)."""
    parts = []
    for track, (rows, searched) in tuned.items():
        if searched is None or not rows["method"].isin(choice.ENTRANTS).any():
            continue
        ranking = rankings.get(track)
        parts += [f"### {titles.get(track, track)}", "", *summary_lines(rows, searched, ranking), "",
                  *picks_lines(rows), "", cobs_line(ranking, searched), ""]
    if not parts:
        return []
    return ["## The family chooses itself", "",
            "Per trial, one method and setting chosen among every method of the family at every setting of its "
            "grid, on the trial's labelled samples only (`src/tuning/choice.py`): each candidate's mean AC over "
            "the folds of the labelled samples, a label method fitted without the fold's labels, a label-free "
            "method's clustering scored on the same samples; the best is chosen, and where several tie or too "
            "few samples score, a prior that reads no test label of the data set (the track's tuned ranking on "
            "the other data sets) decides. **Choice** chooses among every method; **Choice (label-free)** among "
            "the methods that take no labels (COBS, Van Craenendonck and Blockeel 2017). Both are ranked with "
            "the family above, in the same blocks and tests. The **oracle** is the best candidate of the same "
            "pool on the test labels, a ceiling; the regret is its AC less the choice's. Computed from the "
            "settings table alone, with no fit.", "", *parts]

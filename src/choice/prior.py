"""The prior of a person's file: which candidate the choice starts from, read from no label of the file.

The shipped benchmark's fixed-setting cells (``papers/benchmark/family_cells.csv.gz``) score every candidate
kind the choice has: each method's clusters mapped by the known labels (``given_unlabelled``), each
representation read out by a nearest labelled neighbour and by label spreading (``given_nearest_labelled``,
``given_spread_labelled``), each reference's own classes. In the label track whose share of labelled samples
is nearest the file's, the candidates are ordered by their mean classes given back over the benchmark's
(data set, k) blocks (each block the mean over its trials), or by their largest shortfall on any data set,
best first: the first is the prior's candidate (:mod:`.rule`), at its method's default setting, the setting
those cells ran at. Equal means (KMeans's representation is the samples themselves, so its readouts are the
references' own) go to the reference, then to the name.

Which order, and the rule's level, a person's file gets is the benchmark's to say (:func:`shipped_rule`): the
choice entrants (:mod:`.entrants`) try every (order, level) on the label tracks and ship the one that gives
back the most right classes over all their data sets (:data:`RULE_FILE`). Without that file: the mean and
:data:`src.choice.rule.ALPHA`.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..config_dir import PAPERS_DIR
from ..reproduction import shipped
from ..reproduction.contenders import LABEL_TRACKS
from ..tuning.homes import experiment
from . import rule
from .readouts import SUFFIX

#: How :func:`order` may place the candidates over the benchmark's data sets.
HOWS = ("mean", "regret")
#: The rule of a person's file, a row an entrant: the prior's order (``prior_how``) and the level (``alpha``)
#: chosen on every data set of the benchmark (``python -m src.benchmark --choice-entrants``).
RULE_FILE = PAPERS_DIR / "benchmark" / "choice_rule.csv"
#: The rule where no file ships: the first reading of each.
DEFAULT_RULE = ("mean", rule.ALPHA)
#: The column of the shipped cells that scores each readout's classes given back.
COLUMNS = {"clusters": "given_unlabelled", "nearest_labelled": "given_nearest_labelled",
           "spread_labelled": "given_spread_labelled"}


def nearest_track(known_share: float) -> str:
    """The label track whose share of labelled samples is nearest ``known_share``."""
    shares = {track: float(experiment(track)["protocol"]["labels"]["fraction"]) for track in LABEL_TRACKS}
    return min(shares, key=lambda t: (abs(shares[t] - known_share), t))


def order(cells: pd.DataFrame, how: str = "mean") -> list[str]:
    """The candidates' names (:func:`.readouts.candidate_name`) of one track's ``cells`` (the shipped rows),
    best first (module docstring), ``how`` (:data:`HOWS`):

    * ``"mean"``: by their mean classes given back over the (data set, k) blocks;
    * ``"regret"``: by their largest shortfall on any data set, from the best candidate's mean there (each data
      set's mean the mean of its blocks; the best among the candidates every data set scores): the candidate
      that is never far behind comes first (minimax regret), the mean breaking ties. A candidate that some data
      set lacks (NTF: images only) comes after those scored on every one.
    """
    if how not in HOWS:
        raise ValueError(f"how={how!r}: one of {', '.join(HOWS)}")
    found = {}
    for readout, column in COLUMNS.items():
        if column not in cells:
            continue
        rows = cells.dropna(subset=[column])
        blocks = rows.groupby(["method", "estimator", "dataset", "k"])[column].mean()
        for (method, estimator), per in blocks.groupby(["method", "estimator"]):
            found[f"{method}{SUFFIX[readout]}"] = (per.groupby("dataset").mean(), float(per.mean()),
                                                   shipped.reference_estimator(estimator))
    if not found:
        return []
    by_dataset = pd.DataFrame({name: per for name, (per, _, _) in found.items()}).T  # candidates x data sets
    best = by_dataset.dropna().max(axis=0)  # among the candidates every data set scores
    shortfall = (best - by_dataset).max(axis=1, skipna=False)

    def key(name):
        _, mean, reference = found[name]
        first = (0.0,) if how == "mean" else (float("inf") if pd.isna(shortfall[name]) else shortfall[name],)
        return (*first, -mean, not reference, name)
    return sorted(found, key=key)


def shipped_rule(path: Path = RULE_FILE, entrant: str = "Choice") -> tuple[str, float]:
    """The rule of a person's file, ``(how, level)``: the prior's order (:data:`HOWS`) and the rule's level
    the benchmark's ``entrant`` chose on all its data sets (:data:`RULE_FILE`), else :data:`DEFAULT_RULE`."""
    path = Path(path)
    if not path.is_file():
        return DEFAULT_RULE
    rows = pd.read_csv(path)
    rows = rows[rows["entrant"] == entrant]
    if rows.empty:
        return DEFAULT_RULE
    how, level = str(rows["prior_how"].iloc[0]), float(rows["alpha"].iloc[0])
    if how not in HOWS or not 0.0 < level <= 1.0:
        raise ValueError(f"{path}: the rule of {entrant} is prior {how!r} at level {level:g}; expected one of "
                         f"{', '.join(HOWS)} at a level in (0, 1]")
    return how, level


def shipped_prior(known_share: float, how: str | None = None) -> list[str] | None:
    """The prior at ``known_share`` of known labels: :func:`order` (by ``how``, default the shipped rule's,
    :func:`shipped_rule`) of the shipped cells of the nearest label track (:func:`nearest_track`); None where
    no cells ship."""
    if not shipped.FILE.is_file():
        return None
    cells = shipped.load()
    cells = cells[cells["track"] == nearest_track(known_share)]
    return order(cells, how or shipped_rule()[0]) if not cells.empty else None

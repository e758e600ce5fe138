"""The prior of a person's file: which candidate the choice starts from, read from no label of the file.

The shipped benchmark's fixed-setting cells (``papers/benchmark/family_cells.csv.gz``) score every candidate
kind the choice has: each method's clusters mapped by the known labels (``given_unlabelled``), each
representation read out by a nearest labelled neighbour and by label spreading (``given_nearest_labelled``,
``given_spread_labelled``), each reference's own classes. In the label track whose share of labelled samples
is nearest the file's, the candidates are ordered by their mean classes given back over the benchmark's
(data set, k) blocks (each block the mean over its trials; :data:`HOW`, the other order :func:`order` knows
being the smallest largest shortfall on any data set), best first: the first is the prior's candidate
(:mod:`.rule`), at its method's default setting, the setting those cells ran at. Equal means (KMeans's
representation is the samples themselves, so its readouts are the references' own) go to the reference,
then to the name.
"""

from __future__ import annotations

import pandas as pd

from ..reproduction import shipped
from ..reproduction.contenders import LABEL_TRACKS
from ..tuning.homes import experiment
from .readouts import SUFFIX

#: How :func:`order` may place the candidates over the benchmark's data sets.
HOWS = ("mean", "regret")
#: How the prior of a person's file places them (:func:`shipped_prior`): by the mean, the order ``python -m
#: src.cluster``'s targets were measured under. The benchmark's entrants choose their order leave one data set
#: out (:func:`src.choice.entrants.compute`), and chose the regret on most data sets (``docs/benchmark.md``);
#: moving a person's prior to it waits for the targets measured again.
HOW = "mean"
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


def shipped_prior(known_share: float) -> list[str] | None:
    """The prior at ``known_share`` of known labels: :func:`order` (by :data:`HOW`) of the shipped cells of the
    nearest label track (:func:`nearest_track`); None where no cells ship."""
    if not shipped.FILE.is_file():
        return None
    cells = shipped.load()
    cells = cells[cells["track"] == nearest_track(known_share)]
    return order(cells, HOW) if not cells.empty else None

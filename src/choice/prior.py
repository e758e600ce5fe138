"""The prior of a person's file: which candidate the choice starts from, read from no label of the file.

The shipped benchmark's fixed-setting cells (``papers/benchmark/family_cells.csv.gz``) score every candidate
kind the choice has: each method's clusters mapped by the known labels (``given_unlabelled``), each
representation read out by a nearest labelled neighbour and by label spreading (``given_nearest_labelled``,
``given_spread_labelled``), each reference's own classes. In the label track whose share of labelled samples
is nearest the file's, the candidates are ordered by their mean classes given back over the benchmark's
(data set, k) blocks (each block the mean over its trials), best first: the first is the prior's candidate
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

#: The column of the shipped cells that scores each readout's classes given back.
COLUMNS = {"clusters": "given_unlabelled", "nearest_labelled": "given_nearest_labelled",
           "spread_labelled": "given_spread_labelled"}


def nearest_track(known_share: float) -> str:
    """The label track whose share of labelled samples is nearest ``known_share``."""
    shares = {track: float(experiment(track)["protocol"]["labels"]["fraction"]) for track in LABEL_TRACKS}
    return min(shares, key=lambda t: (abs(shares[t] - known_share), t))


def order(cells: pd.DataFrame) -> list[str]:
    """The candidates' names (:func:`.readouts.candidate_name`) of one track's ``cells`` (the shipped rows), by
    their mean classes given back over the (data set, k) blocks, best first (module docstring)."""
    found = []
    for readout, column in COLUMNS.items():
        if column not in cells:
            continue
        rows = cells.dropna(subset=[column])
        blocks = rows.groupby(["method", "estimator", "dataset", "k"])[column].mean()
        for (method, estimator), mean in blocks.groupby(["method", "estimator"]).mean().items():
            reference = shipped.reference_estimator(estimator)
            found.append((-mean, not reference, f"{method}{SUFFIX[readout]}"))
    return [name for _, _, name in sorted(found)]


def shipped_prior(known_share: float) -> list[str] | None:
    """The prior at ``known_share`` of known labels: :func:`order` of the shipped cells of the nearest label
    track (:func:`nearest_track`); None where no cells ship."""
    if not shipped.FILE.is_file():
        return None
    cells = shipped.load()
    cells = cells[cells["track"] == nearest_track(known_share)]
    return order(cells) if not cells.empty else None

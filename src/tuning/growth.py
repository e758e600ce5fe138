"""How a tuned grid grows: past an edge where the rule's own choices pile up, by a step, up to a bound.

A grid a paper gives (or the project chose, ``tune`` in ``conf/method/<name>.yaml``) is where the search
starts. Per label track, data set and method, after the rule (:mod:`.selection`) has chosen a setting for
every trial:

* **the rule's own choices** are the trials whose setting it chose by a score (``labelled`` or
  ``cross-validated``); a tie or too few samples to score keeps the default and says nothing about an edge;
* a parameter's grid **piles** at an edge (its lowest or highest value) where at least :data:`MIN_CHOICES`
  of those trials chose the edge's value and they are more than :data:`PILE` of them;
* a piled grid **grows** past that edge by the parameter's step (``grow`` in the method's config: the edge
  times the step above, divided by it below, to three significant digits), unless the new value passes the
  parameter's bound (the same ``grow`` entry); then the grid **stops at its bound**, and the report says so;
* the new settings' cells are fitted, the rule chooses again among the grown grid, and the growth repeats
  until no edge piles or every piled edge is at its bound.

The choices read only the labels a track gives, so the growth does too (tested: changing the classes of the
unlabelled samples leaves every grid as it is). The **unsupervised track** gives no label: its oracle, which
reads the test labels, never steers a grid. A method that takes no labels searches there the union of the
label tracks' grown grids on the data set (their cells are the same clustering, computed once for every track:
:mod:`src.running.pool.jobs`); run alone, the unsupervised track searches the grids as declared.

A parameter grows on its own axis: the settings stay one axis at a time (:func:`.grids.settings`), so a
grown value of PCGNMF's alpha is tried at the default beta.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..reproduction.contenders import LABEL_TRACKS
from .grids import Grid, parse_setting, setting_text
from .selection import choose, in_grid, takes_labels

#: A grid piles at an edge where more than this share of the rule's own choices sit there.
PILE = 0.5
#: The fewest of the rule's own choices a pile is read from: one k's ten trials.
MIN_CHOICES = 10
#: The selections (:data:`.selection.REASONS`) that are the rule's own choices.
BY_SCORE = ("labelled", "cross-validated")
#: The two edges of a grid, lowest value first.
SIDES = ("low", "high")


def edge_value(values: Iterable[float], side: str) -> float:
    """The grid's value at ``side`` (``low`` or ``high``)."""
    return min(values) if side == "low" else max(values)


def next_value(grid: Grid, param: str, side: str) -> float | int | None:
    """The value one step past the ``side`` edge of ``param``'s grid (three significant digits; the nearest
    whole number for a parameter among the grid's ``integers``), or None where it would pass the parameter's
    bound or, rounded, stay at the edge."""
    edge, step = edge_value(grid.values[param], side), grid.steps[param]
    value = float(f"{(edge * step if side == 'high' else edge / step):.3g}")
    if param in grid.integers:
        value = int(round(value))
        if value == edge:
            return None
    low, high = grid.bounds[param]
    return value if low * (1 - 1e-9) <= value <= high * (1 + 1e-9) else None


def own_values(choices: pd.DataFrame, param: str) -> np.ndarray:
    """The value of ``param`` in each of the rule's own choices among ``choices`` (by a score: :data:`BY_SCORE`)."""
    own = choices.loc[choices["selection"].isin(BY_SCORE), "setting"]
    return np.array([parse_setting(text)[param] for text in own], dtype=float)


def edge_shares(choices: pd.DataFrame, grid: Grid) -> dict[str, tuple[int, float, float]]:
    """Per tuned parameter, how many of the trials in ``choices`` (one track, data set and method: columns
    ``setting``, ``selection``) the rule chose by a score, and the share of them at each edge (low, high)."""
    out = {}
    for param, values in grid.values.items():
        chosen = own_values(choices, param)
        n = len(chosen)
        shares = [float(np.isclose(chosen, edge_value(values, side), rtol=1e-9, atol=0).mean()) if n else 0.0
                  for side in SIDES]
        out[param] = (n, *shares)
    return out


def moved_at_edges(choices: pd.DataFrame, grid: Grid) -> dict[str, tuple[int, float]]:
    """Per tuned parameter, how many of the trials in ``choices`` the rule moved off the default by a score,
    and the share of them whose value of the parameter sits at an edge of ``grid`` (the issue's measure of
    a grid that stops the search: blind to the edges, about two thirds of a four-value grid's moves would)."""
    out = {}
    for param, values in grid.values.items():
        chosen = own_values(choices, param)
        moved = chosen[~np.isclose(chosen, float(grid.defaults[param]), rtol=1e-9, atol=0)]
        at = [np.isclose(moved, edge_value(values, side), rtol=1e-9, atol=0) for side in SIDES]
        out[param] = (len(moved), float((at[0] | at[1]).mean()) if len(moved) else 0.0)
    return out


def piled(n: int, share: float) -> bool:
    """Whether ``share`` of ``n`` own choices at an edge is a pile (:data:`PILE`, :data:`MIN_CHOICES`)."""
    return n >= MIN_CHOICES and share > PILE


@dataclass
class Growth:
    """The grids of a tuned run as they grow: the declared grids (``start``, by registry name) and each grown
    one's values per (track, data set, registry name)."""

    start: Mapping[str, Grid]
    tracks: tuple[str, ...]
    grown: dict = field(default_factory=dict)  # (track, dataset, name) -> {param: values}

    def grid(self, track: str, dataset: str, name: str) -> Grid:
        """The grid ``name`` searches in ``track`` on ``dataset`` (module docstring: the unsupervised track's is
        the union of the label tracks' in the run)."""
        start = self.start[name]
        if track in LABEL_TRACKS:
            return start.with_values(self.grown.get((track, dataset, name), start.values))
        label_tracks = [t for t in self.tracks if t in LABEL_TRACKS]
        union = {param: tuple(sorted({value for t in label_tracks
                                      for value in self.grid(t, dataset, name).values[param]} | set(values)))
                 for param, values in start.values.items()}
        return start.with_values(union)

    def find(self, track: str, dataset: str, name: str) -> Grid | None:
        """:meth:`grid`, or None for an estimator with no grid here."""
        return self.grid(track, dataset, name) if name in self.start else None

    def added(self) -> list[tuple]:
        """Every value the grids grew to, as (track, data set, name, parameter, value)."""
        return [(track, dataset, name, param, value) for (track, dataset, name), values in sorted(self.grown.items())
                for param, found in values.items() for value in grown_values(self.start[name],
                                                                            self.start[name].with_values(values),
                                                                            param)]

    def step(self, choices: Mapping[str, pd.DataFrame]) -> list[tuple]:
        """Grow each label track's grids where the rule's choices (``choices[track]``: the tuned rows, columns
        ``dataset``, ``estimator``, ``setting``, ``selection``) pile at an edge the bound lets pass; returns
        what grew, as (track, data set, name, parameter, new value)."""
        added = []
        for track, rows in choices.items():
            if track not in LABEL_TRACKS or rows is None:
                continue
            for (dataset, name), found in rows.groupby(["dataset", "estimator"], sort=True):
                if name not in self.start or not self.start[name].tuned:
                    continue
                grid = self.grid(track, dataset, name)
                values = dict(grid.values)
                for param, (n, *shares) in edge_shares(found, grid).items():
                    for side, share in zip(SIDES, shares):
                        value = next_value(grid, param, side) if piled(n, share) else None
                        if value is not None and value not in values[param]:
                            values[param] = tuple(sorted((*values[param], value)))
                            added.append((track, dataset, name, param, value))
                if values != dict(grid.values):
                    self.grown[track, dataset, name] = values
        return added

    def edges(self, first: Mapping[str, pd.DataFrame], last: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
        """The edge table: per label track, data set, method and parameter, the share of the rule's own choices
        at each edge of the declared grid (``first``: the choices among it) and of the grown one (``last``),
        the values the grid grew to, and whether an edge still piles and why (``stops``: ``bound`` where
        the next step would pass it)."""
        out = []
        for track in self.tracks:
            if track not in LABEL_TRACKS or track not in last:
                continue
            for (dataset, name), found in last[track].groupby(["dataset", "estimator"], sort=True):
                if name not in self.start or not self.start[name].tuned:
                    continue
                start, grid = self.start[name], self.grid(track, dataset, name)
                before_rows = first[track]
                mine = before_rows[(before_rows["dataset"] == dataset) & (before_rows["estimator"] == name)]
                before, moved_before = edge_shares(mine, start), moved_at_edges(mine, start)
                moved = moved_at_edges(found, grid)
                for param, (n, low, high) in edge_shares(found, grid).items():
                    piles = [side for side, share in zip(SIDES, (low, high)) if piled(n, share)]
                    out.append({"track": track, "dataset": dataset, "method": start.label, "estimator": name,
                                "parameter": param, "n_before": before[param][0], "low_before": before[param][1],
                                "high_before": before[param][2], "n": n, "low": low, "high": high,
                                "moved_before": moved_before[param][0], "moved_edge_before": moved_before[param][1],
                                "moved": moved[param][0], "moved_edge": moved[param][1],
                                "declared": values_text(start.values[param]),
                                "grown_to": values_text(grown_values(start, grid, param)),
                                "bounds": values_text(grid.bounds[param]),
                                "still_piles": ",".join(piles),
                                "stops": ",".join("bound" if next_value(grid, param, side) is None else "rounds"
                                                  for side in piles)})
        return pd.DataFrame(out)


def values_text(values) -> str:
    """Values as the edge table writes them: ``0.01 0.1`` (read back with :func:`text_values`)."""
    return " ".join(f"{value:g}" for value in values)


def text_values(text) -> list[float]:
    """The values :func:`values_text` wrote (none for an empty cell)."""
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return []
    return [float(part) for part in str(text).split()]


def grown_values(start: Grid, grid: Grid, param: str) -> list[float]:
    """The values ``grid`` holds for ``param`` beyond the declared ``start``."""
    return [value for value in grid.values[param] if not any(math.isclose(value, v) for v in start.values[param])]


def replay(searched: Mapping[str, pd.DataFrame], start: Mapping[str, Grid], tracks) \
        -> tuple[Growth, dict, dict]:
    """The growth re-derived from the searched settings alone (``searched[track]``: the table
    :mod:`src.tuning.tables` writes and ``make results`` ships), with the rule's own code: the choices among
    the declared grids, the grids grown where they pile, the choices again, until nothing grows. Returns the
    grown grids and the first and last choices per track (tuned rows with ``setting`` and ``selection``), which
    are the run's wherever the table holds every setting the run fitted."""
    grown = Growth(start, tuple(tracks))

    def choices(track: str, rows: pd.DataFrame) -> pd.DataFrame:
        out = []
        for (dataset, name), found in rows.groupby(["dataset", "estimator"], sort=True):
            if name not in start or not start[name].tuned:
                continue
            grid = grown.grid(track, dataset, name)
            per = in_grid(found, grid)
            if track in LABEL_TRACKS:
                picked = choose(per, setting_text(grid.defaults))
                picked["selection"] = picked["selection"].where(
                    picked["selection"].map(lambda why: isinstance(why, str)),
                    "cross-validated" if takes_labels(name) else "labelled")
            else:
                picked = choose(per, setting_text(grid.defaults), score="acc")
                picked["selection"] = picked["selection"].where(
                    picked["selection"].map(lambda why: isinstance(why, str)), "oracle")
            out.append(picked.assign(estimator=name))
        return pd.concat(out, ignore_index=True) if out else pd.DataFrame(
            columns=["dataset", "method", "k", "trial", "setting", "selection", "estimator"])

    first = None
    while True:
        last = {track: choices(track, rows) for track, rows in searched.items() if rows is not None}
        first = last if first is None else first
        if not grown.step(last):
            return grown, first, last

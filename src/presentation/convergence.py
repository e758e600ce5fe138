"""How the methods' cells ended: at their iteration cap or not converged, and what they warned.

Every report that tabulates or ranks methods says it per method (:func:`section`), so that a number from
cells that mostly stopped at their cap is read as such. A cell counts as **stopped at its cap** when its
estimator reported ``converged_ = False`` (the family's methods under a stopping rule that was not met
within ``max_iter``), or, for an estimator from outside the repository that reports no ``converged_``, when
it ran ``max_iter`` iterations or more: ``max_iter`` as the row's settings give it (``param_max_iter``), else
the estimator's default. A family method that reports none ran a fixed number of iterations or has no
iterative solver, so it never counts. A cell **warned** when its ``warnings`` column
(:mod:`src.running.cell_warnings`) holds anything; the table names each category with its count of cells,
and the lines the command closed with (per method, category and first message) follow it as notes.
"""

from __future__ import annotations

import inspect
import textwrap

import pandas as pd

from .. import methods
from ..checks import is_number
from ..running import cell_warnings

#: The width the section's sentence is wrapped to (the reports' prose stays under 120 characters a line).
WIDTH = 118
#: Above this many methods the table is folded under a one-line summary.
FOLD = 8
#: A method whose cells stopped at their cap in more than this share is told so first.
MOSTLY = 0.5


def default_max_iter(estimator: str) -> float:
    """The ``max_iter`` default of the estimator ``estimator`` (a registry name or an import path); NaN when it
    has none or cannot be read."""
    try:
        parameter = inspect.signature(methods.estimator_class(estimator).__init__).parameters.get("max_iter")
    except Exception:  # noqa: BLE001 - a class that cannot be read has no default to tell
        return float("nan")
    default = None if parameter is None else parameter.default
    return float(default) if is_number(default) else float("nan")


def at_cap(frame: pd.DataFrame) -> pd.Series:
    """Per row of ``frame`` (cells), whether it stopped at its iteration cap (see the module docstring)."""
    converged = frame["converged"] if "converged" in frame else pd.Series(None, index=frame.index, dtype=object)
    told = converged.map(lambda value: str(value).strip().lower() in ("false", "0", "0.0"))
    silent = converged.isna() | converged.map(lambda value: str(value).strip().lower() in ("none", "", "nan"))
    if "estimator" not in frame or "n_iter" not in frame:
        return told
    outside = ~frame["estimator"].isin(list(methods.REGISTRY))
    cap = pd.to_numeric(frame["param_max_iter"], errors="coerce") if "param_max_iter" in frame \
        else pd.Series(float("nan"), index=frame.index)
    cap = cap.fillna(frame["estimator"].map(default_max_iter))
    return told | (silent & outside & (pd.to_numeric(frame["n_iter"], errors="coerce") >= cap))


def table(frame: pd.DataFrame, by: str = "method") -> pd.DataFrame:
    """Per method: ``cells``, ``at cap`` (cells stopped at their cap), ``warned`` (cells that warned) and
    ``warnings`` (each category with its count of cells), the methods with the most cells at their cap
    first."""
    capped = at_cap(frame)
    warned = frame[cell_warnings.COLUMN].map(lambda v: bool(cell_warnings.read(v))) \
        if cell_warnings.COLUMN in frame else pd.Series(False, index=frame.index)
    said = cell_warnings.tally(frame, by)
    rows = []
    for method, cells in frame.groupby(by, sort=False):
        mine = said[said[by] == method].groupby("category")["cells"].sum()
        rows.append({by: method, "cells": len(cells), "at cap": int(capped[cells.index].sum()),
                     "warned": int(warned[cells.index].sum()),
                     "warnings": ", ".join(f"{category} ({count:,})" for category, count in mine.items())})
    out = pd.DataFrame(rows, columns=[by, "cells", "at cap", "warned", "warnings"])
    return out.sort_values(["at cap", "warned", by], ascending=[False, False, True], kind="stable",
                           ignore_index=True)


def mostly_capped(frame: pd.DataFrame, method: str, by: str = "method") -> tuple[int, int] | None:
    """(cells at their cap, cells) of ``method`` when more than :data:`MOSTLY` of its cells stopped at their
    cap, else None."""
    mine = frame[frame[by] == method]
    capped = int(at_cap(mine).sum())
    return (capped, len(mine)) if len(mine) and capped > MOSTLY * len(mine) else None


def section(frame: pd.DataFrame, by: str = "method", heading: str = "## Convergence") -> list[str]:
    """The report's lines: one sentence of how many methods had cells at their cap or warning, and the
    table of :func:`table` (folded when it has more than :data:`FOLD` rows)."""
    found = table(frame, by)
    capped, warned = found[found["at cap"] > 0], found[found["warned"] > 0]
    named = [f"{r[by]} {r['at cap']:,} of {r['cells']:,}" for _, r in capped.head(4).iterrows()]
    summary = (f"Of {len(found)} methods, {len(capped)} had cells that stopped at their iteration cap or reported "
               f"no convergence{' (' + ', '.join(named) + (', ...' if len(capped) > 4 else '') + ')' if named else ''}"
               f" and {len(warned)} warned while they ran." if len(capped) or len(warned) else
               f"Every cell of the {len(found)} methods converged where its method reports it, and none warned.")
    rows = ["| method | cells | at cap | warned | warnings (cells) |", "|---|---|---|---|---|"]
    rows += [f"| {r[by]} | {r['cells']:,} | {r['at cap']:,} | {r['warned']:,} | {r['warnings'] or '-'} |"
             for _, r in found.iterrows()]
    text = (summary + " At cap: the estimator said it did not converge (`converged_`), or ran `max_iter` "
            "iterations without a stopping rule of its own; warned: a warning was caught while the cell ran (kept "
            "in its row's `warnings`).")
    lines = [heading, "", *textwrap.wrap(text, WIDTH, break_long_words=False, break_on_hyphens=False), ""]
    said = [f"- {line}" for line in cell_warnings.lines(frame, by)]  # the command's closing lines, as notes
    if said:
        said = ["What they said, per method, category and first message:", "", *said, ""]
    if len(found) > FOLD:
        return lines + ["<details><summary>Per method</summary>", "", *rows, "", *said, "</details>", ""]
    if len(said) > 2 + FOLD:
        said = ["<details><summary>What they said</summary>", "", *said, "</details>", ""]
    return lines + [*rows, "", *said]

"""What a method said while a cell ran: its warnings, kept with the cell's row rather than printed.

A warning raised while a cell is computed (any category: the family's own ``ConvergenceWarning`` when the
reference stopping rule is not met, a library's, an outside method's) is caught where the cell runs
(:func:`caught`), never printed by the worker, and recorded in the cell's row as the column ``warnings``
(:func:`recorded`): per category, its first message and how many times it was raised, as JSON, or an empty
text when the cell raised none. A warning is recorded, never turned into an error: the cell's numbers are
those it would have without the catch.

At the end of a command, :func:`tally` counts per method, category and message the cells that raised it, and
:func:`lines` says it in one line each ("MyNMF: ConvergenceWarning in 61 of 90 cells: Maximum number of
iterations 300 reached ..."), for the log and the reports' notes.
"""

from __future__ import annotations

import contextlib
import json
import textwrap
import warnings
from collections.abc import Iterator

import pandas as pd

#: The column of a row that holds what the cell warned (:func:`recorded`).
COLUMN = "warnings"
#: The longest message a line of :func:`lines` quotes.
MESSAGE = 90


@contextlib.contextmanager
def caught() -> Iterator[list]:
    """Catch every warning raised inside (each one, repeats included) into the list it yields; none is
    shown. The filters are restored on the way out."""
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        yield records


def recorded(records) -> str:
    """The ``warnings`` column of a cell from its caught warnings: per category (in the order first raised)
    its first message and its count, as JSON; "" for none."""
    found: dict[str, dict] = {}
    for record in records:
        category = record.category.__name__
        entry = found.setdefault(category, {"category": category, "message": str(record.message), "count": 0})
        entry["count"] += 1
    return json.dumps(list(found.values())) if found else ""


def read(value) -> list[dict]:
    """The entries of a ``warnings`` column (none for an empty or missing value)."""
    if not isinstance(value, str) or not value:
        return []
    return json.loads(value)


def tally(frame: pd.DataFrame, by: str = "method") -> pd.DataFrame:
    """Per ``by`` (a method's name), category and first message: the cells that raised it (``cells``) out of
    the method's cells (``of``), most first; empty without a ``warnings`` column or any warning."""
    columns = [by, "category", "message", "cells", "of"]
    if COLUMN not in frame or frame.empty:
        return pd.DataFrame(columns=columns)
    entries = [{by: row[by], "category": entry["category"], "message": entry["message"]}
               for row in frame[[by, COLUMN]].to_dict("records") for entry in read(row[COLUMN])]
    if not entries:
        return pd.DataFrame(columns=columns)
    counted = pd.DataFrame(entries).value_counts([by, "category", "message"], sort=False).rename("cells")
    counted = counted.reset_index()
    counted["of"] = counted[by].map(frame[by].value_counts())
    return counted.sort_values(["cells", by], ascending=[False, True], kind="stable", ignore_index=True)[columns]


#: What tells one computed cell from another among a command's rows: a cell shared by several jobs (one
#: clustering serving three tracks) writes rows equal in all of these.
SAME_CELL = ("dataset", "method", "k", "trial", "seed", "partition", "objective", "n_iter")


def distinct(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with each cell that several jobs share counted once (:data:`SAME_CELL`)."""
    keys = [key for key in SAME_CELL if key in rows]
    return rows.drop_duplicates(keys) if keys else rows


def lines(frame: pd.DataFrame, by: str = "method", noun: str = "cell") -> list[str]:
    """One line per method, category and message of :func:`tally`: "NMF: ConvergenceWarning in 61 of 90 cells:
    <message, shortened>" (``noun``: what a row is, "fit" for the choice's fits)."""
    return [f"{row[by]}: {row['category']} in {row['cells']:,} of {row['of']:,} "
            f"{noun if row['of'] == 1 else noun + 's'}: "
            f"{textwrap.shorten(' '.join(str(row['message']).split()), MESSAGE, placeholder=' ...')}"
            for _, row in tally(frame, by).iterrows()]

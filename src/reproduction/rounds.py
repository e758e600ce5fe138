"""A tuned run's rounds of cells: the declared grids, then the values grown where the choices pile
(:func:`src.tuning.grow`), each round's cells in one pool, one record of them all.

:class:`Rounds` is the ``compute`` that :func:`src.tuning.grow` calls once a round, for the family's benchmark
(``python -m src.benchmark --tune``) and for a person's file (``--dataset mine.npz --tune``) alike. It

- composes each sweep once: a later round's homes keep only the sweeps no round composed (their cells are on
  disk, and the tables read them there);
- prices a round by the rows of the rounds before it: their homes are the pool's ``sources``, so a grown value,
  which nobody has published a cost for, is priced at its method's measured cost per update on the data set
  (:func:`src.running.pool.unit_costs`), not by the size model alone, which no row of the round calibrates;
- writes after each later round one record of every round on one clock (``schedule.json``, ``schedule.csv``:
  :func:`src.running.pool.schedule.combined`) and logs its time left's errors against the whole run's end.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..running.pool import run_pool, schedule
from .homes import Paper
from .runner import Writers

logger = logging.getLogger(__name__)


@dataclass
class Rounds:
    """The rounds of a tuned run into ``out``, called as ``rounds(homes, round_number, later)``.

    Parameters
    ----------
    first : list of Paper
        The homes computed with the first round only (the tracks' fixed settings).
    options : argparse.Namespace
        The command line's ``overrides``, ``workers`` and ``dry_run``.
    out : Path
        Where the cells, ``schedule.json`` and ``schedule.csv`` go.
    writers : Writers
        Each finished job's report (:meth:`.runner.Writers.per_job`).
    sources : list of Paper
        Homes whose cells on disk may be copied (another track's, a reproduction's).
    """

    first: list[Paper]
    options: object
    out: Path
    writers: Writers
    sources: list[Paper] = field(default_factory=list)
    composed: set = field(default_factory=set)  # the sweeps of earlier rounds, whose cells are on disk
    ran: list[Paper] = field(default_factory=list)  # the homes of earlier rounds, whose rows price the next
    rounds: list[tuple[float, object, dict]] = field(default_factory=list)  # (start after the first's, cells, summary)
    began: float | None = None

    def __call__(self, tuned: list[Paper], round_number: int = 1, later: float = 0.0) -> None:
        tuned = [replace(home, sweeps=tuple(s for s in home.sweeps if s not in self.composed)) for home in tuned]
        self.composed.update(s for home in tuned for s in home.sweeps)
        homes = [home for home in (self.first if round_number == 1 else []) + tuned if home.sweeps]
        started, before = time.time(), self.signature()
        try:
            run_pool(homes, self.options.overrides, self.options.workers, self.out, dry_run=self.options.dry_run,
                     sources=[home for home in self.sources if home.sweeps] + self.ran,
                     job_report=self.writers.per_job, unit="track", later=later)
        except KeyboardInterrupt:  # the pool recorded the cells it finished: they count in a stopped piece
            if not self.options.dry_run:
                self.record(started, before)
            raise
        if self.options.dry_run:
            return
        self.ran.extend(homes)
        if self.record(started, before) and len(self.rounds) > 1:  # one record of every round: the cells, one clock
            table, summary = schedule.combined(self.rounds)
            schedule.write_record(self.out, table, summary)
            for line in schedule.error_lines(summary, whose=f"over rounds 1-{len(self.rounds)}, the time left"):
                logger.info("%s", line)

    def signature(self) -> tuple | None:
        """What tells one record of the pool from another: ``schedule.json``'s inode, size and modification
        time (every record is a new file: ``write_atomic`` replaces it); None before any."""
        try:
            found = (Path(self.out) / schedule.SUMMARY).stat()
        except OSError:
            return None
        return found.st_ino, found.st_size, found.st_mtime_ns

    def record(self, started: float, before: tuple | None) -> bool:
        """Take the round started at ``started`` from the pool's record, if the pool wrote one since
        (``before``: the record's :meth:`signature` then). An interrupted pool writes the cells it finished; one
        stopped before it started writes none."""
        now = self.signature()
        recorded = schedule.cell_table(self.out) if now is not None and now != before else None
        if recorded is None:
            return False
        self.began = started if self.began is None else self.began
        self.rounds.append((started - self.began, *recorded))
        return True

    def summary(self) -> dict | None:
        """The rounds' record as ``schedule.json`` has it (the counts of every round added; None before any)."""
        if not self.rounds:
            return None
        return self.rounds[0][2] if len(self.rounds) == 1 else schedule.combined(self.rounds)[1]

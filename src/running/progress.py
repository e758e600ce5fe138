"""Progress a person can follow: a line per k of a run, a line per job of a multirun, each with the time left.

* A single run logs a line per k (:class:`RunProgress`): cells done of all, AC and NMI at that k, time so
  far and left; a k that takes long also gets a line every 30 s. (A line per cell is DEBUG, and in a sweep
  so is the line per k: ``'hydra.verbose=[__main__,src.run,src.running.progress]'`` shows them; every cell's row is
  in ``cells/`` anyway.)
* A multirun logs one line per finished job, ``[12/40] orl NMF done in 35 s (mean AC 0.620 NMI 0.710 over
  90 cells, 90 computed); 4 min so far, about 9 min left``. The counter works across the launcher's worker
  processes: at the launch, :func:`start_progress` writes the number of jobs and the start time into
  ``<sweep dir>/.progress/`` and each job, at its end, adds a marker there (:func:`finish_job`). The time
  left is the time since the launch per job that computed something, times the jobs still to run; jobs that
  only reused stored cells (a resumed sweep) count as done but not in that rate, and markers of an earlier
  launch into the same directory are removed at the start.
"""

import csv
import json
import logging
import math
import time
from pathlib import Path

from ..files import locked, write_atomic

logger = logging.getLogger(__name__)

PROGRESS_DIR = ".progress"
LAUNCH = "launch.json"


def counted(n: int, word: str, plural: str | None = None) -> str:
    """``n`` things in words, the plural right: "1 track", "3 tracks", "4,230 cells", "2 worker processes"
    (``word`` singular; ``plural`` where adding an s is wrong)."""
    return f"{n:,} {word}" if n == 1 else f"{n:,} {plural or word + 's'}"


def duration(seconds: float) -> str:
    """A duration as a person says it, and within about 8% of it: ``35 s``; ``1 min 30 s`` below ten minutes
    (to the nearest 10 s: whole minutes would say ``1 min`` for 89 s, a third short); ``25 min``; ``2 h 05 min``."""
    seconds = max(0.0, float(seconds))
    if seconds < 59.5:
        return f"{seconds:.0f} s"
    if seconds < 595:
        minutes, tens = divmod(round(seconds / 10), 6)
        return f"{minutes} min {10 * tens} s" if tens else f"{minutes} min"
    if seconds < 3570:
        return f"{seconds / 60:.0f} min"
    hours, minutes = divmod(int(round(seconds / 60)), 60)
    return f"{hours} h {minutes:02d} min"


def time_left(elapsed: float, done: float, left: float) -> str:
    """``about 6 min left`` from the time taken for ``done`` units of work and the ``left`` still to do."""
    if left <= 0:
        return f"{duration(elapsed)} in all"
    if done <= 0:
        return f"{duration(elapsed)} so far, time left not known yet"
    return f"{duration(elapsed)} so far, about {duration(elapsed / done * left)} left"


class RunProgress:
    """The progress lines of one run's cells: one when the last trial of a k is done, and one at least
    every ``every`` seconds while a k runs, each with the cells done of all and the time left.

    The time left assumes that a cell costs in proportion to its k (a trial of k classes has about k times
    the samples of one class); cells reused from disk cost nothing.

    Parameters
    ----------
    name : str
        What runs, e.g. ``yale/NMF``.
    cells : list of (int, int)
        The (k, trial) cells in the order they run.
    todo : set of (int, int)
        The cells that are computed (the others are reused).
    level : int
        The logging level of the lines (a sweep job logs them at DEBUG: its sweep logs one line per job).
    """

    def __init__(self, name: str, cells, todo, level: int = logging.INFO, every: float = 30.0):
        self.name, self.cells, self.todo, self.level, self.every = name, list(cells), set(todo), level, every
        self.last_of_k = {k: trial for k, trial in self.cells}
        self.work_left = float(sum(k for k, _ in self.todo))
        self.work_done = 0.0
        self.done = self.reused = 0
        self.scores: dict[int, list[tuple[float, float]]] = {}
        self.start = self.last_line = time.monotonic()

    def update(self, k: int, trial: int, row: dict) -> None:
        """Count the cell (k, trial), whose row is ``row``, and log a line if one is due."""
        self.done += 1
        if (k, trial) in self.todo:
            self.work_done += k
            self.work_left -= k
        else:
            self.reused += 1
        self.scores.setdefault(k, []).append((row.get("acc", math.nan), row.get("nmi", math.nan)))
        now = time.monotonic()
        finished_k = self.last_of_k[k] == trial
        if not finished_k and now - self.last_line < self.every:
            return
        self.last_line = now
        head = f"[{self.name}] k={k} done" if finished_k else f"[{self.name}] k={k} running"
        scores = ""
        if finished_k:
            acc, nmi = (sum(s[i] for s in self.scores[k]) / len(self.scores[k]) for i in (0, 1))
            scores = f", AC {acc:.3f} NMI {nmi:.3f} at k={k}"
        logger.log(self.level, "%s: %d/%d cells%s%s; %s", head, self.done, len(self.cells),
                   f" ({self.reused} reused)" if self.reused else "", scores,
                   time_left(now - self.start, self.work_done, self.work_left))


def progress_dir(sweep_dir) -> Path:
    """Where a sweep's job counter keeps its launch record and job markers."""
    return Path(sweep_dir) / PROGRESS_DIR


def read_json(path: Path):
    """The JSON content of ``path``, or None if it is missing or unreadable."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def start_progress(sweep_dir, n_jobs: int) -> None:
    """Record a launch's number of jobs and start time in ``<sweep_dir>/.progress/``; forget the jobs an
    earlier launch into the same directory finished (so a resumed sweep counts only its own)."""
    folder = progress_dir(sweep_dir)
    with locked(folder / ".lock"):
        for stale in folder.glob("job_*.json"):
            stale.unlink()
        write_atomic(folder / LAUNCH, json.dumps({"jobs": n_jobs, "started": time.time()}))


def since_launch(sweep_dir) -> tuple[int | str, float] | None:
    """The number of jobs of the sweep's launch and the seconds since it started, or None if unrecorded."""
    launch = read_json(progress_dir(sweep_dir) / LAUNCH) or {}
    if not isinstance(launch.get("started"), (int, float)):
        return None
    return launch.get("jobs", "?"), time.time() - launch["started"]


def run_outcome(out_dir, dataset: str, label: str) -> tuple[str, bool]:
    """What a finished run in ``out_dir`` gives, on a few words, and whether it computed any cell.

    Read from its ``results.csv`` (the rows of ``dataset`` and ``label``) and ``provenance.json``:
    ``mean AC 0.620 NMI 0.710 over 90 cells, 90 computed``.
    """
    record = read_json(Path(out_dir) / "provenance.json") or {}
    computed = record.get("cells_computed")
    scores = []
    try:
        with open(Path(out_dir) / "results.csv", newline="") as handle:
            for row in csv.DictReader(handle):
                if row.get("dataset") == dataset and row.get("method") == label:
                    scores.append((float(row["acc"]), float(row["nmi"])))
    except (OSError, KeyError, ValueError):
        scores = []
    parts = []
    if scores:
        acc, nmi = (sum(s[i] for s in scores) / len(scores) for i in (0, 1))
        parts.append(f"mean AC {acc:.3f} NMI {nmi:.3f} over {counted(len(scores), 'cell')}")
    if computed is not None:
        parts.append("all reused" if computed == 0 else f"{computed} computed")
    return ", ".join(parts) or "no results read", computed != 0


def finish_job(sweep_dir, job_number: int, what: str, seconds: float, outcome: str, computed: bool,
               failed: bool = False) -> None:
    """Mark job ``job_number`` as finished in this launch and log its line with the sweep's counter.

    ``[12/40] orl NMF done in 35 s (outcome); 4 min so far, about 9 min left``: jobs finished of all
    (markers in ``.progress/``, counted under a lock so that two jobs ending together get different
    numbers) and the time since the launch per job that computed something, times the jobs left.
    """
    folder = progress_dir(sweep_dir)
    marker = {"job": job_number, "seconds": seconds, "computed": computed, "failed": failed}
    with locked(folder / ".lock"):
        write_atomic(folder / f"job_{job_number}.json", json.dumps(marker))
        markers = [m for m in map(read_json, folder.glob("job_*.json")) if isinstance(m, dict)]
    launch = read_json(folder / LAUNCH) or {}
    state = "failed after" if failed else "done in"
    if not isinstance(launch.get("jobs"), int) or not isinstance(launch.get("started"), (int, float)):
        logger.info("job %d: %s %s %s (%s)", job_number, what, state, duration(seconds), outcome)
        return
    total, done = launch["jobs"], len(markers)
    busy = sum(bool(m.get("computed")) for m in markers)
    logger.info("[%d/%d] %s %s %s (%s); %s", done, total, what, state, duration(seconds), outcome,
                time_left(time.time() - launch["started"], busy, total - done))

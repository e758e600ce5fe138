"""A paper's readings: the defensible choices where its text is silent, each declared in its home's
``readings.yaml``, and the sweeps that compute the ones needing new fits.

A reading (:class:`Reading`) has a question, a label (``text``, ``reference-code``, ``alternative`` or
``oracle``), a source and how it is computed: another ``readout`` of the primary fits, a ``family_value``
of a grid that already ran, an ``oracle_per_k`` choice, or ``sweeps`` of new fits. :func:`load_readings`
reads and checks them; :func:`readings_home` turns a paper's sweeps into one home for the pool
(each sweep into ``<out>/<reading>/runs/<i>``) and :func:`fit_readings` runs them all in one pool, marking
a reading done (:func:`mark_done`) when its sweeps are in. What a reading does to the published numbers
is :mod:`src.presentation.explain_report`'s.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import yaml

from ..checks import one_of
from ..errors import ConfigError, UserError
from ..files import write_atomic
from ..protocol.cell import READOUTS
from ..running.cells import ReportWriter
from ..running.pool import PoolFailed, run_pool
from ..running.results import find_results, read_results
from .homes import Paper

FILE = "readings.yaml"
LABELS = ("text", "reference-code", "alternative", "oracle")
HOW = ("readout", "family_value", "oracle_per_k", "sweeps")
KEYS = ("question", "label", "source", "quote", "note", *HOW)


@dataclass(frozen=True)
class Reading:
    """One reading of a paper, as declared in its ``readings.yaml`` (see the module docstring)."""

    name: str
    question: str
    label: str
    source: str
    quote: str | None = None
    note: str | None = None
    readout: str | None = None
    family_value: dict | None = None
    oracle_per_k: dict | None = None
    sweeps: tuple[tuple[str, ...], ...] = field(default_factory=tuple)

    def how(self) -> str:
        """How the reading is computed, in words."""
        parts = []
        if self.readout:
            parts.append(f"readout {self.readout} of the primary fits")
        if self.family_value:
            parts.append(f"{self.family_value['family']} at {self.family_value['value']} (grid already run)")
        if self.sweeps:
            parts.append(f"{len(self.sweeps)} sweep(s) of new fits: "
                         + "; ".join(" ".join(sweep) for sweep in self.sweeps))
        if self.oracle_per_k:
            parts.append(f"{self.oracle_per_k['family']}'s {self.oracle_per_k['param']} chosen per k by mean "
                         "accuracy")
        return ", then ".join(parts)


def load_readings(paper: Paper) -> tuple[str, list[Reading]]:
    """The primary reading's description and the readings of ``paper``; one-line ConfigError on a bad file."""
    path = paper.home / FILE
    if not path.is_file():
        return "", []
    try:
        spec = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {' '.join(str(exc).split())}") from None
    readings = []
    for name, entry in (spec.get("readings") or {}).items():
        where = f"{path}: reading {name}"
        if not isinstance(entry, dict) or set(entry) - set(KEYS):
            raise ConfigError(f"{where} must be a mapping with keys among {', '.join(KEYS)}")
        one_of(LABELS).check(f"{where}: label", entry.get("label"))
        if not entry.get("source") or not entry.get("question"):
            raise ConfigError(f"{where} needs a question and a source")
        if not any(entry.get(how) for how in HOW):
            raise ConfigError(f"{where} says neither of {', '.join(HOW)}: nothing to compute")
        if entry.get("readout"):
            one_of(READOUTS).check(f"{where}: readout", entry["readout"])
        if entry.get("oracle_per_k") and entry["label"] != "oracle":
            raise ConfigError(f"{where} chooses on the test labels (oracle_per_k) but is labelled {entry['label']!r}")
        sweeps = entry.get("sweeps") or []
        if not isinstance(sweeps, list) or not all(isinstance(s, list) and s for s in sweeps):
            raise ConfigError(f"{where}: sweeps must be a list of non-empty lists of Hydra overrides")
        readings.append(Reading(name=name, question=entry["question"], label=entry["label"], source=entry["source"],
                                quote=entry.get("quote"), note=entry.get("note"), readout=entry.get("readout"),
                                family_value=entry.get("family_value"), oracle_per_k=entry.get("oracle_per_k"),
                                sweeps=tuple(tuple(str(o) for o in sweep) for sweep in sweeps)))
    return spec.get("primary", ""), readings


DONE = "sweeps_done.json"


class NotRun(UserError):
    """A reading whose sweeps have not all finished (no ``sweeps_done.json`` for its current sweeps)."""


def runs_dir(out: Path, reading: Reading) -> Path:
    return Path(out) / reading.name / "runs"


def mark_done(out: Path, reading: Reading) -> None:
    """Record that every sweep of ``reading`` finished: the sweeps themselves (a changed list is not done)."""
    record = {"sweeps": [list(sweep) for sweep in reading.sweeps]}
    write_atomic(Path(out) / reading.name / DONE, json.dumps(record) + "\n")


def done_record(out: Path, reading: Reading) -> dict | None:
    """The record of :func:`mark_done` if it is there and for the reading's current sweeps, else None."""
    path = Path(out) / reading.name / DONE
    if not path.is_file():
        return None
    record = json.loads(path.read_text())
    return record if record.get("sweeps") == [list(sweep) for sweep in reading.sweeps] else None


def sweep_overrides(reading: Reading, out: Path) -> list[list[str]]:
    """A reading's sweeps as the pool runs them, after the paper's experiment: the sweep's overrides and a
    directory of its own (``runs/<i>``)."""
    directory = runs_dir(out, reading)
    return [[*sweep, f"hydra.sweep.dir={directory / str(i)}"] for i, sweep in enumerate(reading.sweeps, 1)]


def readings_home(paper: Paper, readings: list[Reading], out: Path) -> Paper | None:
    """The sweeps of ``paper``'s ``readings`` as one home for the pool (the paper's experiment, each sweep in
    its reading's directory under ``out``), or None when none of them fits anything new."""
    sweeps = tuple(tuple(sweep) for reading in readings for sweep in sweep_overrides(reading, out))
    return dataclasses.replace(paper, sweeps=sweeps, depends_on=()) if sweeps else None


def reading_work(out: Path, reading: Reading) -> float | None:
    """The seconds of fit and KMeans of a finished reading's cells, as their rows recorded them (whichever run
    computed them), or None when its sweeps have not finished."""
    if done_record(out, reading) is None:
        return None
    files = find_results([runs_dir(out, reading)])
    if not files:
        return None
    frame = read_results(files)
    return float(frame["fit_seconds"].sum() + frame.get("kmeans_seconds", pd.Series(0.0)).sum())


def fit_readings(homes: list[Paper], plans: dict[str, list[Reading]], out_root: Path, chosen: list[Paper],
                 overrides: list[str] = (), workers: int | None = None, dry_run: bool = False,
                 job_report: ReportWriter | None = None) -> None:
    """Every sweep of the readings in ``homes`` in one pool (``overrides`` added to each, ``workers``
    processes), the primary runs of ``chosen`` as the source of equal cells; a paper's readings are marked
    done when its sweeps are all in. ``job_report`` writes each job's report beside its ``results.csv``
    (:mod:`src.explain` passes :func:`src.presentation.report.write_reports`; None: ``results.csv`` only).
    A failed cell is a one-line :class:`~src.errors.StepFailed` after the other jobs finished."""
    def sweeps_done(home: Paper) -> None:
        for reading in plans[home.name]:
            if reading.sweeps:
                mark_done(out_root / home.name, reading)

    try:
        run_pool(homes, list(overrides), workers, out_root, None if dry_run else sweeps_done, dry_run,
                 sources=chosen, job_report=job_report)
    except PoolFailed as exc:
        raise exc.as_step() from None

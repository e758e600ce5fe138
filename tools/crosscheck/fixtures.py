"""Golden fixtures: the reference code's outputs of every case, checked by ``make test`` without Octave.

``tests/fixtures/crosscheck/cases.json`` describes every case (data subset, seed, options, starts) and the
sha256 of its inputs; ``<case>.npz`` holds the reference outputs (float64, compressed). The test rebuilds
the inputs from the data mirror, checks their sha256 (so a changed data file or random generator is told
apart from a changed solver), runs ours and compares as ``python -m tools.crosscheck`` does.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np

from src.files import write_atomic

from .cases import Case

FIXTURE_DIR = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "crosscheck"
KEEP = ("U", "V", "nIter", "obj", "chosen", "start_obj", "W", "ac", "nmi", "labels")


def slug(case: Case) -> str:
    """File name stem of a case."""
    text = "".join(ch if ch.isalnum() else "_" for ch in case.name.lower())
    return "_".join(part for part in text.split("_") if part)


def describe(case: Case) -> dict:
    """The case as plain JSON data."""
    return json.loads(json.dumps(dataclasses.asdict(case)))


def write(cases_outputs: list[tuple[Case, str, dict]], directory: Path = FIXTURE_DIR) -> list[Path]:
    """Write ``cases.json`` and one ``.npz`` per case; return the files written.

    ``cases_outputs``: (case, sha256 of its inputs, reference outputs); metrics cases also keep ``labels``,
    the clusterings scored (0-based), which the test reads instead of rerunning KMeans.
    """
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    index = []
    for case, digest, outputs in cases_outputs:
        arrays = {key: np.asarray(value, dtype=np.int64 if key == "labels" else np.float64)
                  for key, value in outputs.items() if key in KEEP}
        path = directory / f"{slug(case)}.npz"
        np.savez_compressed(path, **arrays)
        written.append(path)
        index.append({"file": path.name, "inputs_sha256": digest, "case": describe(case)})
    index_path = directory / "cases.json"
    write_atomic(index_path, json.dumps(index, indent=1) + "\n")
    written.append(index_path)
    return written


def read_index(directory: Path = FIXTURE_DIR) -> list[dict]:
    """The entries of ``cases.json``."""
    return json.loads((directory / "cases.json").read_text())


def read_outputs(entry: dict, directory: Path = FIXTURE_DIR) -> dict[str, np.ndarray]:
    """The reference outputs stored for one entry of ``cases.json``."""
    with np.load(directory / entry["file"]) as data:
        return {key: data[key] for key in data.files}

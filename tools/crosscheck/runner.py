"""Run one case of the reference code in GNU Octave: inputs as a .mat file, ``crosscheck_case.m``, outputs back.

Octave is started once per case (``octave --no-gui --quiet --no-init-file --eval ...``) with the fetched
reference directories and this package's ``octave/`` directory (the driver and the ``randsample`` stand-in)
on its path; ``octave/replay/`` (a ``rand`` that replays queued initial factors) is added by the driver
only while a multi-start case runs.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import scipy.io

from src.errors import UserError

from .cases import Case, Inputs, empty_graph, reference_graph_options

OCTAVE_DIR = Path(__file__).resolve().parent / "octave"
REFERENCE_DIRS = ("MatrixFactorization", "Tools", "Clustering", "SubspaceLearning")
INSTALL_HINT = "GNU Octave is not installed: run `apt-get update && apt-get install -y octave` (Debian/Ubuntu), then retry"


class OctaveMissing(UserError):
    """``octave`` is not on PATH."""


def octave_executable() -> str:
    """The path of ``octave``, or :class:`OctaveMissing` with the install command."""
    path = shutil.which("octave") or shutil.which("octave-cli")
    if path is None:
        raise OctaveMissing(INSTALL_HINT)
    return path


def _as_options(options: dict) -> dict:
    """An options struct for savemat: numbers as doubles (Octave's int64 arithmetic would change Cai's code)."""
    out = {}
    for key, value in options.items():
        if isinstance(value, bool | int | float | np.integer | np.floating):
            out[key] = float(value)
        else:
            out[key] = value
    return out


def case_inputs(case: Case, inputs: Inputs) -> dict:
    """The variables of the case's input .mat file (see ``octave/crosscheck_case.m``)."""
    X = inputs.X_rows.T.copy()  # features x samples
    n = X.shape[1]
    k = float(len(case.subset.classes))
    variables = {"X": X, "k": k, "W": empty_graph(n)}
    graph = reference_graph_options(case, inputs)
    if graph is not None:
        variables["graph_options"] = graph
    if case.kind == "graph":
        variables["kind"] = "graph"
    elif case.kind == "metrics":
        variables.update(kind="metrics", gnd=inputs.y.astype(np.float64) + 1.0,
                         labels=inputs.labels.astype(np.float64) + 1.0)
    elif case.kind == "multistart":
        first, second = ("W", "V") if case.method == "cf" else ("U", "V")
        variables.update(kind="multistart", options=_as_options(case.options),
                         starts_U=np.stack([s[first] for s in inputs.starts], axis=2),
                         starts_V=np.stack([s[second] for s in inputs.starts], axis=2))
    else:
        start = inputs.starts[0]
        first = "W" if case.method == "cf" else "U"
        variables.update(kind=case.reference, options=_as_options(case.options), U0=start[first], V0=start["V"])
    return variables


def run_case(case: Case, inputs: Inputs, reference_root: Path, workdir: Path, timeout: float = 600) -> dict:
    """Run ``case`` in Octave; return its outputs (arrays keyed as in ``crosscheck_case.m``).

    Raises
    ------
    OctaveMissing
        No ``octave`` on PATH.
    UserError
        Octave failed (the last lines of its output are in the message).
    """
    octave = octave_executable()
    slug = "".join(ch if ch.isalnum() else "_" for ch in case.name)
    infile, outfile = workdir / f"{slug}_in.mat", workdir / f"{slug}_out.mat"
    scipy.io.savemat(infile, case_inputs(case, inputs), do_compression=False, oned_as="column")
    paths = [str(reference_root / d) for d in REFERENCE_DIRS] + [str(OCTAVE_DIR)]
    script = (f"addpath({', '.join(_quote(p) for p in paths)}); "
              f"crosscheck_case({_quote(infile)}, {_quote(outfile)}, {_quote(OCTAVE_DIR / 'replay')});")
    proc = subprocess.run([octave, "--no-gui", "--quiet", "--no-init-file", "--no-window-system", "--eval", script],
                          capture_output=True, text=True, timeout=timeout, cwd=workdir)
    if proc.returncode != 0 or not outfile.is_file():
        tail = " | ".join((proc.stderr or proc.stdout).strip().splitlines()[-5:])
        raise UserError(f"Octave failed on case {case.name!r} (exit {proc.returncode}): {tail}")
    loaded = scipy.io.loadmat(outfile, squeeze_me=False)
    return {key: np.asarray(value) for key, value in loaded.items() if not key.startswith("__")}


def _quote(path) -> str:
    """An Octave single-quoted string literal."""
    return "'" + str(path).replace("'", "''") + "'"

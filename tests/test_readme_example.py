"""The README's library example runs as printed and says what it prints.

The example reads the reader's own labelled file ``mine.npz``; here that file holds ten objects of COIL20 (the
data set the README's sentence under the example names), written from the data mirror. The example must run
unchanged, saved in a directory outside the checkout (it imports the installed name ``repro_mf``), and print an
AC for NMF and for CNMF close to the figures the sentence gives.
"""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.io

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.integration


def library_example() -> str:
    """The first ``python`` block of README.md."""
    text = (REPO / "README.md").read_text()
    return re.search(r"```python\n(.*?)```", text, re.S).group(1)


def test_the_library_example_runs_on_ten_objects_of_coil20(mirror, tmp_path):
    data = scipy.io.loadmat(mirror / "COIL20.mat")
    X, y = data["fea"], data["gnd"].ravel()
    keep = y <= 10
    np.savez(tmp_path / "mine.npz", X=X[keep], y=y[keep])  # uint8 labels, as a user's file may have them
    done = subprocess.run([sys.executable, "-c", library_example()], cwd=tmp_path, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"},  # the installed name, anywhere
                          timeout=300)
    assert done.returncode == 0, done.stderr
    scores = {name: float(value) for name, value in re.findall(r"(\w+): AC ([\d.]+)", done.stdout)}
    sentence = " ".join((REPO / "README.md").read_text().split())
    said = re.search(r"AC of about ([\d.]+) for (\w+) and ([\d.]+) for (\w+)", sentence)
    assert said, "the README no longer says what the example prints"
    printed = {said.group(2): float(said.group(1)), said.group(4): float(said.group(3))}
    assert set(scores) == set(printed) == {"NMF", "CNMF"}
    for name, value in scores.items():  # rounding, and a BLAS that moves a few points of a clustering
        assert abs(value - printed[name]) < 0.1, (name, value, printed[name])

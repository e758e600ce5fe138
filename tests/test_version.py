"""The version: written once (pyproject.toml), read back by the package from the installed metadata
(``src.__version__``), printed by ``--version`` before Hydra starts; the licence the metadata carries."""

import os
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

import src

REPO = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
VERSION = PROJECT["version"]
CONSOLE_SCRIPT = Path(sys.executable).parent / "repro-mf"


def test_the_package_reads_the_version_of_pyproject():
    assert src.__version__ == VERSION, (
        f"the installed metadata says {src.__version__}, pyproject.toml {VERSION}: reinstall the project "
        "(pip install --no-deps -e . ; make install does it when pyproject.toml changed)")


def test_without_an_install_the_version_is_unknown(monkeypatch):
    def not_installed(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", not_installed)
    namespace: dict = {}
    exec(compile((REPO / "src" / "__init__.py").read_text(), "src/__init__.py", "exec"), namespace)
    assert namespace["__version__"] == "unknown"


def test_the_metadata_carries_the_licence():
    assert (PROJECT["license"], PROJECT["license-files"]) == ("BSD-3-Clause", ["LICENSE"])
    assert (REPO / "LICENSE").read_text().startswith("BSD 3-Clause License\n")
    assert "the repro-mf developers" in (REPO / "LICENSE").read_text()


@pytest.mark.integration  # a subprocess each: ~2 s (src.run imports Hydra and NumPy before reading the flag)
@pytest.mark.parametrize("command", [["python", "-m", "src.run"], ["repro-mf"]], ids=" ".join)
def test_version_prints_the_release_and_exits_before_hydra(command, tmp_path):
    if command == ["repro-mf"]:
        if not CONSOLE_SCRIPT.exists():
            pytest.skip(f"no console script at {CONSOLE_SCRIPT} (the project is not installed here)")
        argv = [str(CONSOLE_SCRIPT)]
    else:
        argv = [sys.executable, *command[1:]]
    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([*argv, "method=nmf", "--version"], cwd=tmp_path, env=environment, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"repro-mf {VERSION}\n"
    assert list(tmp_path.iterdir()) == []  # Hydra never started: no outputs/, no run directory, no log

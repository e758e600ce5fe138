"""What produced a result: the code, the environment, the data and the command.

Two records:

* :func:`code_fingerprint`: a short hash of every source file that can change a number (the folders of
  :data:`RESULT_FOLDERS`: the methods, the data loaders and the protocol) and of the versions of the
  numerical packages. A finished cell carries it, and a re-run recomputes a cell whose fingerprint differs.
* :func:`collect`: the full record written as ``provenance.json`` into every run directory and beside every
  report (the repro-mf version, the git commit and whether the tree had uncommitted changes, Python, every
  installed package, the BLAS libraries and their thread counts, the cores, the sha256 of every data file
  used, the command line and overrides, start and end time). :func:`markdown` renders it as the footer of
  ``report.md``, the version first.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import inspect
import json
import os
import platform
import shlex
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from threadpoolctl import threadpool_info

from .. import __version__
from ..files import write_atomic

SRC = Path(__file__).resolve().parents[1]  # src/ (this module is in src/running/)
PROJECT = SRC.parent
FILE = "provenance.json"
#: Environment variable through which ``python -m src.run`` hands its command line to the job processes.
COMMAND_ENV = "REPRO_COMMAND"
#: The folders of ``src/`` whose code computes a cell's numbers (everything else runs, checks, records or
#: presents them: settings reach a cell through its config hash, not through this fingerprint).
RESULT_FOLDERS = ("methods", "data", "protocol")
#: Packages whose version can change a computed number; part of the code fingerprint.
NUMERICAL_PACKAGES = ("numpy", "scipy", "scikit-learn", "numba", "opencv-python-headless")
#: Packages named in a report's footer (all installed packages are in ``provenance.json``).
KEY_PACKAGES = ("numpy", "scipy", "scikit-learn", "pandas", "hydra-core", "numba", "pooch",
                "threadpoolctl", "opencv-python-headless", "matplotlib")


def result_sources(root: Path = SRC) -> list[Path]:
    """The source files whose content can change a result, in a fixed order."""
    return [path for folder in RESULT_FOLDERS for path in sorted((Path(root) / folder).rglob("*.py"))
            if "__pycache__" not in path.parts]


def package_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def fingerprint_of(root: Path, packages: dict[str, str | None]) -> str:
    """Hash of the result-affecting sources under ``root`` and of the given package versions."""
    digest = hashlib.sha256()
    for path in result_sources(root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(json.dumps(packages, sort_keys=True).encode())
    return digest.hexdigest()[:16]


@functools.cache
def code_fingerprint() -> str:
    """Fingerprint of the code that computes results in this process (see the module docstring)."""
    return fingerprint_of(SRC, {name: package_version(name) for name in NUMERICAL_PACKAGES})


def with_source(fingerprint: str, cls: type) -> str:
    """``fingerprint`` combined with the source file of ``cls`` (a method outside the repository, whose code
    the fingerprint of ``src/`` does not cover); the class's module name when its file cannot be read."""
    try:
        source = Path(inspect.getsourcefile(cls)).read_bytes()
    except (TypeError, OSError):
        source = cls.__module__.encode()
    return hashlib.sha256(fingerprint.encode() + b"\0" + source).hexdigest()[:16]


def git_state(root: Path = PROJECT) -> dict:
    """Commit of the checkout at ``root`` and whether tracked or new files differ from it."""
    def git(*args):
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30,
                              check=True).stdout
    try:
        commit = git("rev-parse", "HEAD").strip()
        changed = git("status", "--porcelain")
    except (OSError, subprocess.SubprocessError):
        return {"commit": "unknown (not a git checkout)", "dirty": None, "changed_files": []}
    files = [line[3:] for line in changed.splitlines() if line.strip()]
    return {"commit": commit, "dirty": bool(files), "changed_files": files[:50]}


def blas_info() -> list[dict]:
    """Each loaded BLAS / OpenMP library with its version, CPU kernel and current thread count."""
    keys = ("user_api", "internal_api", "version", "architecture", "threading_layer", "num_threads", "filepath")
    return [{key: lib.get(key) for key in keys if key in lib} for lib in threadpool_info()]


def command_line() -> str:
    """The command that started this run: handed down by ``python -m src.run``, else this process's argv."""
    if os.environ.get(COMMAND_ENV):
        return os.environ[COMMAND_ENV]
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    start = ["python", "-m", spec.name.removesuffix(".__main__")] if spec else ["python", sys.argv[0]]
    return shlex.join([*start, *sys.argv[1:]])


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).astimezone().isoformat(timespec="seconds")


def collect(started: str, ended: str | None = None, overrides=None, extra: dict | None = None,
            data_files=()) -> dict:
    """The full provenance record of this process (see the module docstring); ``data_files`` are the raw
    files of the data set it read (``files`` of :class:`src.data.Dataset`), none for a report.

    Call it while the BLAS thread limits of the computation are in force, so that the recorded thread
    counts are the ones used.
    """
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        available = os.cpu_count()
    record = {
        "version": __version__,  # the release; the commit and code fingerprint below say what differs from it
        "started": started,
        "ended": ended,
        "command": command_line(),
        "overrides": list(overrides or []),
        "git": git_state(),
        "code_fingerprint": code_fingerprint(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "hostname": platform.node(),
        "cpu_count": os.cpu_count(),
        "cores_available": available,
        "blas": blas_info(),
        "data_files": [dict(entry) for entry in data_files],
        "packages": {dist.metadata["Name"]: dist.version for dist in
                     sorted(metadata.distributions(), key=lambda d: (d.metadata["Name"] or "").lower())},
    }
    record.update(extra or {})
    return record


def write(out_dir: Path, record: dict) -> Path:
    """Write ``record`` as ``out_dir/provenance.json`` (atomically); returns the path."""
    path = Path(out_dir) / FILE
    write_atomic(path, json.dumps(record, indent=2, default=str) + "\n")
    return path


def read(path: Path) -> dict | None:
    """The record in ``path`` (a ``provenance.json``), or None if it is missing or unreadable."""
    try:
        record = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def of_results(files) -> list[dict | None]:
    """The record of the run that wrote each results file (its directory's ``provenance.json``), None where
    there is none."""
    return [read(Path(f).parent / FILE) for f in files]


def _blas_line(record: dict) -> str:
    libs = sorted(f"{lib.get('internal_api')} {lib.get('version')} ({lib.get('architecture') or lib.get('user_api')}, "
            f"{lib.get('num_threads')} thread{'s' if lib.get('num_threads') != 1 else ''})"
            for lib in record.get("blas", []))
    return ", ".join(libs) or "none loaded"


def _git_line(git: dict) -> str:
    state = {True: "with uncommitted changes", False: "clean", None: "state unknown"}[git.get("dirty")]
    changed = git.get("changed_files") or []
    listed = f" ({', '.join(changed[:5])}{', ...' if len(changed) > 5 else ''})" if changed else ""
    return f"commit `{git.get('commit')}`, {state}{listed}"


def markdown(record: dict, runs: list[dict] | None = None) -> list[str]:
    """``record`` (this report's own provenance) and a summary of the runs it read, as Markdown lines."""
    packages = record.get("packages", {})
    lines = ["## Provenance", "",
             f"- repro-mf version {record.get('version', 'unknown')}.",
             f"- Built by `{record['command']}` from {record['started']} to {record.get('ended')}.",
             f"- Code: {_git_line(record['git'])}; code fingerprint `{record['code_fingerprint']}`.",
             f"- Python {record['python']} on {record['platform']}, {record['cores_available']} of "
             f"{record['cpu_count']} cores available; BLAS: {_blas_line(record)}.",
             "- Packages: " + ", ".join(f"{name} {packages[name]}" for name in KEY_PACKAGES if name in packages)
             + f" (all {len(packages)} in `{FILE}`)."]
    if runs is not None:
        lines += [f"- The results come from {len(runs)} run directories:"]
        groups: dict[tuple, list[dict]] = {}
        for run in runs:
            key = (run.get("git", {}).get("commit"), run.get("git", {}).get("dirty"), run.get("code_fingerprint"),
                   run.get("python"), _blas_line(run))
            groups.setdefault(key, []).append(run)
        for (commit, dirty, fingerprint, python, blas), members in groups.items():
            first = min(r.get("started") or "" for r in members)
            last = max(r.get("ended") or r.get("started") or "" for r in members)
            state = {True: "with uncommitted changes", False: "clean", None: "state unknown"}[dirty]
            lines.append(f"  - {len(members)} run(s) from {first} to {last}: commit `{commit}` ({state}), code "
                         f"fingerprint `{fingerprint}`, Python {python}, BLAS {blas}.")
        commands = sorted({r.get("command") for r in runs if r.get("command")})
        lines += ["- Commands of the runs:"] + [f"  - `{command}`" for command in commands]
        data = {f["file"]: f["sha256"] for r in runs for f in r.get("data_files", [])}
    else:
        data = {}
    data.update({f["file"]: f["sha256"] for f in record.get("data_files", [])})
    if data:
        lines += ["- Data files (sha256):"] + [f"  - `{name}`: `{digest}`" for name, digest in sorted(data.items())]
    return lines + [""]

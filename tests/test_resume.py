"""Sweeps that survive: SIGKILL then resume, two runs in one directory, the submitit launchers.

The reference is an uninterrupted run of two jobs (NMF and CNMF on Yale, 12 cells), computed in-process by
the function every CLI job runs (:func:`src.running.cells.run_experiment`, one BLAS thread as the CLI). A joblib sweep of
the same jobs is killed with SIGKILL (its whole process group, workers included) after a few cell files
have appeared (no timing window: a ``sitecustomize`` hook holds every worker that has just stored a cell once
three are on disk, so the sweep cannot finish before the kill whatever the machine's load), then resumed by two concurrent sweeps pointed at the same ``hydra.sweep.dir``: they must skip
the cells on disk (files untouched), recompute the rest without corrupting each other's files, and end with
the reference's results.csv files and report table. Only the timing columns may differ. The submitit sweep runs
on the other core, started as soon as the session's tests are known (:data:`SWEEPS`, tests/background.py).
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import background
import pandas as pd
import pytest
from hydra import compose, initialize_config_dir
from threadpoolctl import threadpool_limits

from src.presentation import report
from src.run import CONF_DIR
from src.running.cells import run_experiment
from src.resolvers import usable_cores
from src.running.slurm import SCHEMA_WARNING

REPO = Path(__file__).resolve().parents[1]
TIMING = ["fit_seconds", "kmeans_seconds", "peak_rss_mb"]  # the only columns allowed to differ between runs
PROTOCOL = ["dataset=yale", "protocol=cnmf", "protocol.ks=[2,3]", "protocol.n_trials=3",
            "protocol.kmeans_restarts=3", "method.params.max_iter=1000"]  # ~0.1-0.3 s per cell
SWEEP = ["-m", "method=nmf,cnmf", *PROTOCOL]
N_CELLS = 12  # 2 methods x 2 ks x 3 trials
JOBS = ["0_yale_NMF", "1_yale_CNMF"]  # the sweep's job directories (hydra.sweep.subdir)


def command(*args):
    return [sys.executable, "-m", "src.run", *args]


def run(*args, timeout=600):
    env = dict(os.environ, HYDRA_FULL_ERROR="0")
    return subprocess.run(command(*args), cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)


def tables(sweep: Path) -> dict[str, pd.DataFrame]:
    """results.csv of every job of a sweep, keyed by method label."""
    frames = [pd.read_csv(path) for path in sorted(sweep.glob("*/results.csv"))]
    return {frame["method"].iloc[0]: frame for frame in frames}


def job_dirs(sweep: Path) -> list[str]:
    return sorted(path.parent.name for path in sweep.glob("*/results.csv"))


def assert_same_results(got: dict, want: dict):
    assert sorted(got) == sorted(want)
    for job, frame in want.items():
        assert list(got[job].columns) == list(frame.columns), job
        pd.testing.assert_frame_equal(got[job].drop(columns=TIMING), frame.drop(columns=TIMING), check_exact=True)


def report_table(sweep: Path, out: Path) -> str:
    assert report.main([str(sweep), "--out", str(out)]) == 0
    return (out / "table_yale.csv").read_text()


def live_members(pgid: int) -> list[int]:
    """Processes of process group ``pgid`` that are still running (zombies excluded)."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":  # fields: state, ppid, pgrp, ...
            alive.append(int(stat.parent.name))
    return alive


@pytest.fixture(scope="module")
def reference(tmp_path_factory, data_dir):
    """Uninterrupted runs of the sweep's two jobs: ({method: results}, directory holding them)."""
    root = tmp_path_factory.mktemp("reference")
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        for method in ("nmf", "cnmf"):
            cfg = compose("config", overrides=[f"method={method}", *PROTOCOL, f"paths.data_dir={data_dir}"])
            with threadpool_limits(limits=cfg.runtime.blas_threads):
                run_experiment(cfg, root / method)
    results = tables(root)
    assert sorted(results) == ["CNMF", "NMF"] and sum(len(frame) for frame in results.values()) == N_CELLS
    return results, root


HOLD_AFTER_CELLS = 3
HOLD_HOOK = """
import os, time
from pathlib import Path

_replace = os.replace


def replace(src, dst, *args, **kwargs):
    _replace(src, dst, *args, **kwargs)
    dst = Path(os.fsdecode(dst))
    if dst.suffix == ".json" and dst.parent.name == "cells":
        if len(list(dst.parent.parent.parent.glob("*/cells/*.json"))) >= int(os.environ["REPRO_TEST_HOLD"]):
            while True:  # hold this worker, its cell stored, until the test kills the process group
                time.sleep(60)


os.replace = replace
"""


def hold_env(tmp_path: Path) -> dict:
    """Environment whose Python processes (the launcher and its workers) stop after storing the Nth cell.

    The hook wraps ``os.replace``, with which every cell file is renamed into place; it is loaded by a
    ``sitecustomize`` module on ``PYTHONPATH``, so the joblib workers (fresh interpreters) load it too.
    """
    hook = tmp_path / "hold_hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(HOLD_HOOK)
    path = os.pathsep.join(filter(None, [str(hook), os.environ.get("PYTHONPATH")]))
    return dict(os.environ, HYDRA_FULL_ERROR="0", PYTHONPATH=path, REPRO_TEST_HOLD=str(HOLD_AFTER_CELLS))


@pytest.mark.integration  # CLI sweeps in subprocesses
def test_sigkill_then_two_concurrent_resumes_give_the_uninterrupted_results(reference, tmp_path, data_dir):
    want, reference_sweep = reference
    sweep = tmp_path / "sweep"
    args = [*SWEEP, f"hydra.sweep.dir={sweep}", f"paths.data_dir={data_dir}"]
    with open(tmp_path / "killed.log", "w") as log:
        proc = subprocess.Popen(command(*args), cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
                                env=hold_env(tmp_path), start_new_session=True)
        deadline = time.monotonic() + 300
        while (len(list(sweep.glob("*/cells/*.json"))) < HOLD_AFTER_CELLS and proc.poll() is None
               and time.monotonic() < deadline):
            time.sleep(0.02)
        assert proc.poll() is None, (tmp_path / "killed.log").read_text()  # held, not finished or crashed
        os.killpg(proc.pid, signal.SIGKILL)  # the launcher and its workers, mid-cell
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, (tmp_path / "killed.log").read_text()
    deadline = time.monotonic() + 30
    while live_members(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not live_members(proc.pid), "workers of the killed sweep are still running"

    survivors = {path: (path.stat().st_mtime_ns, path.read_bytes()) for path in sweep.glob("*/cells/*.json")}
    # each of the two workers is held after its first cell past the threshold: at most one more cell each
    assert HOLD_AFTER_CELLS <= len(survivors) <= HOLD_AFTER_CELLS + 1, f"{len(survivors)} cells before the kill"
    assert len(list(sweep.glob("*/results.csv"))) < 2  # the sweep really was interrupted
    for data in (data for _, data in survivors.values()):
        json.loads(data)  # every cell on disk is complete
    litter = set(sweep.glob("*/cells/.*.tmp"))  # a kill during a write leaves its temporary file, never read

    env = dict(os.environ, HYDRA_FULL_ERROR="0")
    resumers = [subprocess.Popen(command(*args, *launcher), cwd=REPO, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
                for launcher in ([], ["hydra/launcher=basic"])]  # joblib workers, and jobs one after another
    outputs = [proc.communicate(timeout=600)[0] for proc in resumers]
    for proc, output in zip(resumers, outputs):
        assert proc.returncode == 0, output
    for path, (mtime, data) in survivors.items():  # finished cells were skipped, not recomputed
        assert path.stat().st_mtime_ns == mtime and path.read_bytes() == data, path.name
    cells = list(sweep.glob("*/cells/*.json"))
    assert len(cells) == N_CELLS and all(json.loads(path.read_text())["k"] in (2, 3) for path in cells)
    assert set(sweep.glob("*/cells/.*.tmp")) == litter  # the resumed runs leave no temporary file
    assert job_dirs(sweep) == JOBS
    assert_same_results(tables(sweep), want)
    assert report_table(sweep, tmp_path / "report") == report_table(reference_sweep, tmp_path / "reference_report")
    assert (sweep / "0_yale_NMF" / "figure_yale.png").read_bytes().startswith(b"\x89PNG")


def test_damaged_cell_files_are_recomputed(tmp_path, data_dir, caplog):
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=["method=nmf", "dataset=yale", "protocol.ks=[2]", "protocol.n_trials=2",
                                           "protocol.kmeans_restarts=2", "method.params.max_iter=30",
                                           f"paths.data_dir={data_dir}"])
    out = tmp_path / "run"
    with threadpool_limits(limits=1):
        first = pd.read_csv(run_experiment(cfg, out))
        cells = sorted((out / "cells").glob("*.json"))
        cells[0].write_text(cells[0].read_text()[:40])  # truncated (e.g. by a copy)
        cells[1].write_text("[1, 2]")  # valid JSON, not a row
        (out / "cells" / f".{cells[0].name}.abc123.tmp").write_text("{")  # left by a kill during a write
        again = pd.read_csv(run_experiment(cfg, out))
    assert "is unreadable" in caplog.text and "does not hold a result row" in caplog.text
    pd.testing.assert_frame_equal(again.drop(columns=TIMING), first.drop(columns=TIMING), check_exact=True)
    assert [json.loads(path.read_text())["trial"] for path in cells] == [0, 1]  # rewritten whole


def submitit_sweep():
    """The sweep through submitit's local launcher: (its directory, its completed process)."""
    root = background.directory("submitit")
    return root / "submitit", background.run_module(
        "src.run", *SWEEP, "hydra/launcher=submitit_local", "hydra.launcher.timeout_min=10",
        "hydra.launcher.cpus_per_task=1", f"hydra.sweep.dir={root / 'submitit'}", f"paths.data_dir={root / 'data'}",
        cwd=REPO)


SWEEPS = {"test_submitit_local_multirun_reports_like_joblib": submitit_sweep}


def start_in_background(items):
    background.start_tests(items, SWEEPS)


@pytest.mark.integration  # CLI sweeps in subprocesses
def test_submitit_local_multirun_reports_like_joblib(reference, tmp_path, request):
    want, reference_sweep = reference
    sweep, done = background.outcome(request, SWEEPS)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (sweep / ".submitit").is_dir() and job_dirs(sweep) == JOBS  # laid out as the joblib sweep
    assert_same_results(tables(sweep), want)
    assert report_table(sweep, tmp_path / "report") == report_table(reference_sweep, tmp_path / "reference_report")


# Hydra's deprecation of the schema matching our launcher config uses on purpose (tests/running/test_slurm.py)
@pytest.mark.filterwarnings(f"ignore:{SCHEMA_WARNING}:UserWarning")
def test_slurm_launcher_composes_with_command_line_resources():
    overrides = ["hydra/launcher=submitit_slurm", "hydra.launcher.partition=short", "hydra.launcher.timeout_min=240",
                 "hydra.launcher.cpus_per_task=2", "hydra.launcher.array_parallelism=16"]
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        launcher = compose("config", overrides=overrides, return_hydra_config=True).hydra.launcher
        default = compose("config", return_hydra_config=True).hydra.launcher
    assert launcher._target_.endswith("SlurmLauncher")
    assert (launcher.partition, launcher.timeout_min, launcher.cpus_per_task, launcher.array_parallelism) == (
        "short", 240, 2, 16)
    assert default._target_.endswith("JoblibLauncher") and default.n_jobs == usable_cores()  # joblib, a job per core

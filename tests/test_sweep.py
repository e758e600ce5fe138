"""src.sweep: a multirun checks every job before starting any, and sums up the jobs that failed."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from src import sweep
from src.errors import ConfigError

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[1]
SMALL = ["protocol.ks=[2]", "protocol.n_trials=1", "protocol.kmeans_restarts=2", "method.params.max_iter=10"]


def multirun(*args, data_dir):
    env = dict(os.environ, HYDRA_FULL_ERROR="0")
    return subprocess.run([sys.executable, "-m", "src.run", "-m", *args, f"paths.data_dir={data_dir}"], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=600)


def test_a_sweep_with_invalid_jobs_lists_each_on_one_line_and_starts_nothing(tmp_path):
    out = tmp_path / "sweep"
    done = multirun("method=nmf,cnmf,ccf", "dataset=yale", "method.params.max_iter=5,-1", *SMALL[:3],
                    f"hydra.sweep.dir={out}", data_dir=tmp_path / "data")
    log = done.stdout + done.stderr
    assert done.returncode == 2, log
    invalid = [line for line in log.splitlines() if "  job " in line]
    # max_iter -1 (3 jobs, the first error of a job is reported); cnmf and ccf without labels: 5 of 6 jobs
    assert len(invalid) == 5, log
    assert sum("max_iter=-1" in line for line in invalid) == 3
    assert sum("needs labelled samples" in line for line in invalid) == 2
    assert "5 of 6 jobs" in log
    assert not out.exists() or not [p for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")]


def test_a_job_failing_at_run_time_lets_the_others_finish_and_the_sweep_exits_nonzero(tmp_path):
    out = tmp_path / "sweep"
    (out / "1_orl_NMF" / "results.csv").mkdir(parents=True)  # job 1 cannot write its results.csv
    done = multirun("method=nmf", "dataset=yale,orl,coil20", *SMALL, f"hydra.sweep.dir={out}",
                    data_dir=tmp_path / "data")
    log = done.stdout + done.stderr
    assert done.returncode == 1, log
    assert (out / "0_yale_NMF" / "results.csv").is_file() and (out / "2_coil20_NMF" / "results.csv").is_file()
    summary = [line for line in log.splitlines() if "  job " in line]
    assert len(summary) == 1 and "job 1 (" in summary[0] and "dataset=orl" in summary[0], log
    assert "1 job(s) of this sweep failed" in log
    assert not list((out / "1_orl_NMF").glob(".results.csv.*"))  # no half-written file left behind


def test_failures_are_recorded_per_job_and_other_errors_pass(tmp_path):
    with sweep.job_failures(tmp_path, 3, ["method=nmf"]):
        raise ConfigError("max_iter=0 must be a positive integer")
    record = json.loads((sweep.failures_dir(tmp_path) / "3.json").read_text())
    assert record == {"job": 3, "overrides": ["method=nmf"], "error": "max_iter=0 must be a positive integer"}
    with sweep.job_failures(tmp_path, 4, []):
        raise RuntimeError("a\nbug")
    assert json.loads((sweep.failures_dir(tmp_path) / "4.json").read_text())["error"] == "RuntimeError: a bug"
    with pytest.raises(KeyboardInterrupt):
        with sweep.job_failures(tmp_path, 5, []):
            raise KeyboardInterrupt

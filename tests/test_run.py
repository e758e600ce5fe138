"""The command line end to end on small protocols: files written, determinism, bad input, multirun."""

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from src import report

REPO = Path(__file__).resolve().parents[1]
SMALL = ["protocol.ks=[2,3]", "protocol.n_trials=2", "protocol.kmeans_restarts=3", "method.params.max_iter=30"]


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("data")


def run(*args, cwd=REPO):
    env = dict(os.environ, HYDRA_FULL_ERROR="0")
    return subprocess.run([sys.executable, "-m", "src.run", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def test_single_run_writes_results_table_and_figure_and_is_deterministic(tmp_path, data_dir):
    outputs = []
    for attempt in ("a", "b"):
        out = tmp_path / attempt
        done = run("method=nmf", "dataset=yale", *SMALL, f"hydra.run.dir={out}", f"paths.data_dir={data_dir}")
        assert done.returncode == 0, done.stderr + done.stdout
        outputs.append(out)
    first, second = (pd.read_csv(out / "results.csv") for out in outputs)
    for column in ("dataset", "method", "k", "trial", "seed", "acc", "nmi", "n_iter", "fit_seconds"):
        assert column in first.columns
    assert len(first) == 4 and first["acc"].between(0, 1).all() and first["nmi"].between(0, 1).all()
    pd.testing.assert_frame_equal(first[["k", "trial", "acc", "nmi"]], second[["k", "trial", "acc", "nmi"]])
    out = outputs[0]
    assert (out / "config.yaml").exists() and (out / "table_yale.md").exists() and (out / "figure_yale.png").exists()
    assert len(list((out / "cells").glob("*.json"))) == 4


@pytest.mark.parametrize(
    "override, message",
    [
        ("method=foo", "method='foo' is not one of"),
        ("dataset=nope", "dataset='nope' is not one of"),
        ("protocol.ks=[1,2]", "protocol.ks contains 1"),
        ("protocol.ks=[2,16]", "protocol.ks contains 16"),
        ("protocol.labels.fraction=1.5", "protocol.labels.fraction=1.5"),
        ("protocol.labels.fraction=0", "protocol.labels.fraction=0"),
        ("protocol.labels.mode=all", "protocol.labels.mode='all'"),
        ("protocol.n_trials=0", "protocol.n_trials=0"),
        ("protocol.kmeans_restarts=-1", "protocol.kmeans_restarts=-1"),
        ("method.params.max_iter=0", "max_iter=0"),
        ("method.params.tol=-1", "tol=-1"),
        ("protocol.kmeans_metric=manhattan", "protocol.kmeans_metric='manhattan'"),
    ],
)
def test_bad_input_is_one_line_nonzero_and_leaves_no_results(override, message, tmp_path, data_dir):
    out = tmp_path / "run"
    done = run("method=nmf", "dataset=yale", "protocol=cnmf", override, f"hydra.run.dir={out}", f"paths.data_dir={data_dir}")
    assert done.returncode != 0
    errors = [line for line in (done.stdout + done.stderr).splitlines() if "ERROR" in line]
    assert len(errors) == 1 and message in errors[0], done.stdout + done.stderr
    assert not (out / "results.csv").exists() and not (out / "cells").exists()


def test_multirun_in_parallel_then_one_table_per_dataset(tmp_path, data_dir):
    sweep = tmp_path / "sweep"
    done = run("-m", "method=kmeans,nmf", "dataset=orl,yale", *SMALL[:3], f"hydra.sweep.dir={sweep}",
               f"paths.data_dir={data_dir}")
    assert done.returncode == 0, done.stderr + done.stdout
    assert len(list(sweep.rglob("results.csv"))) == 4
    assert report.main([str(sweep), "--out", str(tmp_path / "report")]) == 0
    for dataset in ("orl", "yale"):
        table = pd.read_csv(tmp_path / "report" / f"table_{dataset}.csv")
        assert {"KMeans", "NMF"} <= set(table.columns)

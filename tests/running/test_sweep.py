"""src.running.sweep: a multirun checks every job before starting any, sums up the jobs that failed, ends each job with
a line; run directories have names a shell takes as they are (the job counter itself: test_progress.py).

The multiruns these tests read run as commands started on the other core as soon as the session's tests are known
(:data:`MULTIRUNS`, tests/background.py); each test then checks what its command did."""

import json
import logging
import re
from pathlib import Path

import background
import pytest
from hydra import initialize_config_dir
from hydra.errors import HydraException
from omegaconf import OmegaConf

from src.running import progress, sweep
from src import resolvers
from src.errors import ConfigError

SHELL_SAFE = re.compile(r"^[A-Za-z0-9._=,+-]+$")
REPO = Path(__file__).resolve().parents[2]
SMALL = ["protocol.ks=[2]", "protocol.n_trials=1", "protocol.kmeans_restarts=2", "method.params.max_iter=10"]


def multirun(*args, data_dir):
    return background.run_module("src.run", "-m", *args, f"paths.data_dir={data_dir}", cwd=REPO)


def sweep_with_invalid_jobs():
    root = background.directory("sweep")
    out = root / "sweep"
    return out, multirun("method=nmf,cnmf,ccf", "dataset=yale", "method.params.max_iter=5,-1", *SMALL[:3],
                         f"hydra.sweep.dir={out}", data_dir=root / "data")


def sweep_with_a_job_failing():
    root = background.directory("sweep")
    out = root / "sweep"
    (out / "1_orl_NMF" / "results.csv").mkdir(parents=True)  # job 1 cannot write its results.csv
    return out, multirun("method=nmf", "dataset=yale,orl,coil20", *SMALL, f"hydra.sweep.dir={out}",
                         data_dir=root / "data")


def sweep_of_two_jobs():
    root = background.directory("sweep")
    out = root / "sweep"
    return out, multirun("method=nmf,fnmf", "dataset=yale", *SMALL, f"hydra.sweep.dir={out}",
                         data_dir=root / "data")


MULTIRUNS = {
    "test_a_sweep_with_invalid_jobs_lists_each_on_one_line_and_starts_nothing": sweep_with_invalid_jobs,
    "test_a_job_failing_at_run_time_lets_the_others_finish_and_the_sweep_exits_nonzero": sweep_with_a_job_failing,
    "test_a_multirun_logs_one_line_per_job_with_the_counter_and_shell_safe_directories": sweep_of_two_jobs,
}
"""Test -> the multirun it checks: ``(its sweep directory, its completed process)``."""


def start_in_background(items):
    background.start_tests(items, MULTIRUNS)


@pytest.mark.integration  # python -m src.run -m in a subprocess
def test_a_sweep_with_invalid_jobs_lists_each_on_one_line_and_starts_nothing(request):
    out, done = background.outcome(request, MULTIRUNS)
    log = done.stdout + done.stderr
    assert done.returncode == 2, log
    invalid = [line for line in log.splitlines() if "  job " in line]
    # max_iter -1 (3 jobs, the first error of a job is reported); cnmf and ccf without labels: 5 of 6 jobs
    assert len(invalid) == 5, log
    assert sum("max_iter=-1" in line for line in invalid) == 3
    assert sum("needs labelled samples" in line for line in invalid) == 2
    assert "5 of 6 jobs" in log
    assert not out.exists() or not [p for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")]


@pytest.mark.integration  # python -m src.run -m in a subprocess
def test_a_job_failing_at_run_time_lets_the_others_finish_and_the_sweep_exits_nonzero(request):
    out, done = background.outcome(request, MULTIRUNS)
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


def sweep_config(params, task):
    """The part of a multirun's config that :func:`src.running.sweep.sweep_jobs` reads."""
    return OmegaConf.create({"hydra": {"sweeper": {"params": params}, "overrides": {"task": list(task)}}})


def test_the_jobs_of_a_sweep_are_hydras_basic_sweep_in_its_order():
    """The sweeper's params first, then the command line; a key given twice keeps its first place and its last
    value; a range is expanded; a plain override is in every job; the last key varies fastest."""
    config = sweep_config({"dataset": "yale,orl"}, ["method=nmf,gnmf", "protocol.n_trials=range(2,4)", "seed=3",
                                                     "dataset=coil20,yale"])
    assert sweep.sweep_jobs(config) == [
        ["dataset=coil20", "method=nmf", "protocol.n_trials=2", "seed=3"],
        ["dataset=coil20", "method=nmf", "protocol.n_trials=3", "seed=3"],
        ["dataset=coil20", "method=gnmf", "protocol.n_trials=2", "seed=3"],
        ["dataset=coil20", "method=gnmf", "protocol.n_trials=3", "seed=3"],
        ["dataset=yale", "method=nmf", "protocol.n_trials=2", "seed=3"],
        ["dataset=yale", "method=nmf", "protocol.n_trials=3", "seed=3"],
        ["dataset=yale", "method=gnmf", "protocol.n_trials=2", "seed=3"],
        ["dataset=yale", "method=gnmf", "protocol.n_trials=3", "seed=3"],
    ]


def test_sweep_jobs_keeps_prefixes_quoting_choice_and_a_sweep_without_sweeps():
    config = sweep_config(None, ["+x=choice(a,b)", "~runtime", "method.label='a,b'", "++seed=1,2"])
    assert sweep.sweep_jobs(config) == [  # a deletion without a value gets =null, as Hydra's basic sweeper writes it
        ["+x=a", "~runtime=null", "method.label='a,b'", "++seed=1"],
        ["+x=a", "~runtime=null", "method.label='a,b'", "++seed=2"],
        ["+x=b", "~runtime=null", "method.label='a,b'", "++seed=1"],
        ["+x=b", "~runtime=null", "method.label='a,b'", "++seed=2"],
    ]
    assert sweep.sweep_jobs(sweep_config({"method": "nmf"}, [])) == [["method=nmf"]]
    assert sweep.sweep_jobs(sweep_config(None, [])) == [[]]  # -m without overrides: one job with the defaults


def test_sweep_jobs_lists_a_glob_over_a_config_group_and_refuses_an_interval():
    with initialize_config_dir(str(REPO / "conf"), version_base="1.3"):  # glob() reads the group's options
        jobs = sweep.sweep_jobs(sweep_config(None, ["method=glob(nmf*)", "dataset=yale"]))
    assert jobs == [["method=nmf", "dataset=yale"], ["method=nmf_kl", "dataset=yale"],
                    ["method=nmf_ncw", "dataset=yale"]]
    with pytest.raises(HydraException, match=r"^method.params.tol=interval\(0,1\): .* not an interval sweep$"):
        sweep.sweep_jobs(sweep_config(None, ["method.params.tol=interval(0,1)"]))


def test_the_source_uses_no_private_hydra_or_scikit_learn_api():
    private = re.compile(r"\b_internal\b|_get_param_names")
    found = [f"{path.relative_to(REPO)}:{number}" for path in sorted((REPO / "src").rglob("*.py"))
             for number, line in enumerate(path.read_text().splitlines(), 1) if private.search(line)]
    assert found == []


@pytest.mark.integration  # reads the jobs of every reproduction (their dry run, conftest.py: half a minute)
def test_the_reproductions_run_directories_are_shell_safe_and_distinct(every_papers_dry_run):
    names, dirs = {}, {}
    for job in every_papers_dry_run.jobs:
        dataset, label = job.spec.dataset.name, job.spec.method.label
        subdir = job.out_dir.name
        assert subdir == f"{dataset}_{resolvers.safe_name(label)}"
        assert SHELL_SAFE.match(subdir), subdir
        names.setdefault(resolvers.safe_name(label), set()).add(label)
        assert dirs.setdefault(job.out_dir, (dataset, label)) == (dataset, label), job.out_dir
    assert len(names) > 20 and all(len(labels) == 1 for labels in names.values()), names
    assert "FNMF-farness=0.001" in names and "SemiGNMF-alpha=100" in names


def job_lines(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "src.running.progress" and r.getMessage().startswith("[")]


def test_a_job_marks_its_end_also_when_it_fails(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="src.running.progress")
    progress.start_progress(tmp_path, 2)
    cfg = OmegaConf.create({"dataset": {"name": "yale"}, "method": {"label": "GNMF(alpha=1)"}})
    with sweep.job(tmp_path, 0, ["method=gnmf"], tmp_path / "0", cfg):
        raise ConfigError("method.params.alpha=-1 must be >= 0")
    assert (sweep.failures_dir(tmp_path) / "0.json").is_file()
    assert (progress.progress_dir(tmp_path) / "job_0.json").is_file()
    assert job_lines(caplog)[0].startswith("[1/2] yale GNMF(alpha=1) failed after")


def test_a_job_without_results_says_what_it_was_told(tmp_path, caplog):
    """A dry run's job writes no results: its line says so instead of 'no results read'."""
    caplog.set_level(logging.INFO, logger="src.running.progress")
    progress.start_progress(tmp_path, 1)
    cfg = OmegaConf.create({"dataset": {"name": "yale"}, "method": {"label": "NMF"}})
    with sweep.job(tmp_path, 0, ["method=nmf"], tmp_path / "0", cfg) as end:
        end.outcome = "dry run: no cell computed, no result written"
    assert job_lines(caplog)[0].startswith("[1/1] yale NMF done in 0 s (dry run: no cell computed")


@pytest.mark.integration  # python -m src.run -m in a subprocess
def test_a_multirun_logs_one_line_per_job_with_the_counter_and_shell_safe_directories(request):
    out, done = background.outcome(request, MULTIRUNS)
    log = done.stdout + done.stderr
    assert done.returncode == 0, log
    jobs = [line for line in log.splitlines() if re.search(r"\] - \[\d+/2\] yale ", line)]
    assert len(jobs) == 2 and "[1/2] yale " in jobs[0] and "[2/2] yale " in jobs[1], log
    assert re.search(r"(about .* left|not known yet)$", jobs[0]) and jobs[1].endswith("in all"), jobs
    assert any("FNMF(farness=" in line for line in jobs)  # the label itself is unchanged
    assert not re.search(r"\] cell \d+/\d+ k=", log) and "k=2 done" not in log  # cell and k lines: DEBUG
    runs = [path.name for path in out.iterdir() if not path.name.startswith(".") and path.is_dir()]
    assert sorted(runs) == ["0_yale_NMF", "1_yale_FNMF-farness=0.01"], runs
    assert all(SHELL_SAFE.match(name) for name in runs)

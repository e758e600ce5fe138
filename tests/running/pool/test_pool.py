"""One pool of cells for papers' sweeps: the same cells as Hydra's sweep, shared cells computed once, a
failed cell one line, a re-run that resumes, the schedule recorded.

Most tests run the workers in this process (``helpers.in_process``, a stand-in for the process pool that
calls the same :func:`src.running.pool.workers.work`); one runs the real pool of worker processes and compares it with the
same sweep through ``python -m src.run -m``, started on the other core as soon as the session's tests are known
(:data:`SWEEPS`, tests/background.py)."""

import json
import sys
from pathlib import Path

import background
import pandas as pd
import pytest
from helpers import in_process, toy_papers

import src.running.pool as pool
from src.reproduction import homes as papers
from src.running.pool import schedule
from src.errors import UserError
from src.running.slurm import SCHEMA_WARNING

REPO = Path(__file__).resolve().parents[3]
SCORES = ["acc", "nmi", "n_iter", "objective"]


def cells(root: Path, paper: str) -> pd.DataFrame:
    rows = [json.loads(path.read_text()) for path in sorted((root / "outputs/reproduce" / paper).rglob("cells/*.json"))]
    return pd.DataFrame(rows).set_index(["method", "k", "trial"]).sort_index()


@pytest.mark.integration
def test_shared_cells_are_computed_once_and_written_for_each_job(tmp_path, monkeypatch):
    monkeypatch.setattr(pool, "run_local", in_process())
    chosen, overrides = toy_papers(tmp_path)
    finished = []
    summary = pool.run_pool(chosen, overrides, 1, tmp_path / "record", finished.append)
    assert sorted(paper.name for paper in finished) == ["toy", "toy2"]  # toy2 ends first: toy computes its cells
    assert summary["cells"] == 20 and summary["computed"] == 12 and summary["shared"] == 8
    table, recorded = schedule.cell_table(tmp_path / "record")
    assert recorded["shared"] == 8 and len(table) == 20
    assert table.groupby("status").size().to_dict() == {"computed": 12, "shared": 8}
    assert set(table.loc[table.status == "shared", "paper"]) == {"toy2"}
    toy, toy2 = cells(tmp_path, "toy"), cells(tmp_path, "toy2")
    common = toy.loc[["KMeans", "NMF"]]
    pd.testing.assert_frame_equal(common[SCORES], toy2[SCORES])  # the same numbers, written for each job
    assert (toy2["protocol_labels_mode"] == "fraction").all() and toy2["acc_unlabelled"].notna().all()
    for paper in ("toy", "toy2"):
        for job in (tmp_path / "outputs/reproduce" / paper / "runs").iterdir():
            assert {"results.csv", "config.yaml", "provenance.json"} <= {p.name for p in job.iterdir()}
            assert json.loads((job / "provenance.json").read_text())["cells"] == 4


@pytest.mark.integration
def test_a_failed_cell_fails_its_job_on_one_line_and_a_rerun_resumes(tmp_path, monkeypatch, caplog):
    chosen, overrides = toy_papers(tmp_path, ("toy",))
    monkeypatch.setattr(pool, "run_local", in_process(lambda item: item.spec.method.name == "cnmf" and item.k == 3))
    finished = []
    with pytest.raises(pool.PoolFailed) as info, caplog.at_level("ERROR"):
        pool.run_pool(chosen, overrides, 1, tmp_path, finished.append)
    assert len(info.value.lines) == 1 and "\n" not in info.value.lines[0]
    assert "toy yale CNMF: cell k=3" in info.value.lines[0] and "a worker broke" in info.value.lines[0]
    assert not finished  # the paper's report waits for every cell
    runs = tmp_path / "outputs/reproduce/toy/runs"
    assert (runs / "yale_NMF" / "results.csv").is_file() and not (runs / "yale_CNMF" / "results.csv").exists()
    assert len(list((runs / "yale_CNMF" / "cells").glob("*.json"))) == 2  # k = 2 is kept
    table, _ = schedule.cell_table(tmp_path)
    assert (table.status == "failed").sum() == 2

    monkeypatch.setattr(pool, "run_local", in_process())
    summary = pool.run_pool(chosen, overrides, 1, tmp_path, finished.append)
    assert summary["computed"] == 2 and summary["reused"] == 10 and [p.name for p in finished] == ["toy"]
    assert (runs / "yale_CNMF" / "results.csv").is_file()


@pytest.mark.integration
def test_a_stopped_pool_records_the_cells_it_finished_not_those_it_planned(tmp_path, monkeypatch):
    chosen, overrides = toy_papers(tmp_path, ("toy",))
    from src.running.pool.workers import work

    def stopped_after_three(items, workers):
        for number, item in enumerate(items):
            if number == 3:
                raise KeyboardInterrupt
            yield work(item)

    monkeypatch.setattr(pool, "run_local", stopped_after_three)
    with pytest.raises(KeyboardInterrupt):
        pool.run_pool(chosen, overrides, 1, tmp_path)
    table, recorded = schedule.cell_table(tmp_path)
    assert recorded["stopped"] and recorded["computed"] == 3 == (table.status == "computed").sum()
    assert recorded["cells"] == 12  # the cells it was given stay as they were


@pytest.mark.parametrize("dry_run", [False, True], ids=["run", "dry run"])
def test_an_invalid_job_stops_everything_before_any_cell(tmp_path, monkeypatch, caplog, dry_run):
    """A real run refuses it when it opens the jobs, a dry run when it checks them without data: the same
    listing either way."""
    monkeypatch.setattr(pool, "run_local", in_process())
    chosen, overrides = toy_papers(tmp_path, ("toy",))
    with pytest.raises(pool.UserError, match=r"1 of 3 jobs are invalid.*toy yale CNMF.*needs labelled samples"):
        pool.run_pool(chosen, [*overrides, "protocol.labels.mode=none"], 1, tmp_path, dry_run=dry_run)
    assert not (tmp_path / "outputs").exists()
    # the solver's max_iter reaches the two iterative jobs (NMF, CNMF), not KMeans
    with pytest.raises(pool.UserError, match=r"2 of 3 jobs are invalid.*toy yale NMF.*max_iter=0 must be"):
        pool.run_pool(chosen, [*overrides, "solver.max_iter=0"], 1, tmp_path, dry_run=dry_run)
    listed = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(listed) == 1 + 2 and all("\n" not in line for line in listed)
    assert not (tmp_path / "outputs").exists()


def test_a_dry_run_counts_and_writes_nothing(tmp_path):
    chosen, overrides = toy_papers(tmp_path)
    assert pool.run_pool(chosen, overrides, 1, tmp_path, dry_run=True) == \
        {"jobs": 5, "cells": 20, "to_compute": 20, "copied": 0, "shared": 8}
    assert not (tmp_path / "outputs").exists() and not (tmp_path / schedule.SCHEDULE).exists()


CAI_SMALL = ["protocol.n_trials=1", "protocol.ks=[4]"]  # Cai's demo, one trial of k = 4 (its k = 20 costs 5x more)


def cai_sweeps() -> Path:
    """The output folder of Cai's demo's sweeps run as ``python -m src.run -m`` (:data:`CAI_SMALL`)."""
    root = background.directory("cai-sweeps")
    for sweep in papers.load("cai").sweep_overrides():
        done = background.run([sys.executable, "-m", "src.run", "-m", *sweep, *CAI_SMALL,
                               f"paths.output_dir={root}"], cwd=REPO, timeout=900)
        assert done.returncode == 0, done.stderr[-3000:]
    return root


SWEEPS = {"test_the_pool_of_processes_gives_the_sweeps_tables": cai_sweeps}


def start_in_background(items):
    background.start_tests(items, SWEEPS)


@pytest.mark.integration
def test_the_pool_of_processes_gives_the_sweeps_tables(tmp_path, request):
    cai = papers.load("cai")  # KMeans, NMF, GNMF on COIL20
    pool.run_pool([cai], [*CAI_SMALL, f"paths.output_dir={tmp_path / 'pool'}"], 2, tmp_path)
    swept = background.outcome(request, SWEEPS)
    jobs = sorted(path.parent.name for path in (swept / "reproduce/cai/runs").glob("*/results.csv"))
    assert len(jobs) == 3
    for job in jobs:
        ours, theirs = (root / "reproduce/cai/runs" / job for root in (tmp_path / "pool", swept))
        timing = ["fit_seconds", "kmeans_seconds", "peak_rss_mb"]
        pd.testing.assert_frame_equal(pd.read_csv(ours / "results.csv").drop(columns=timing),
                                      pd.read_csv(theirs / "results.csv").drop(columns=timing))
        theirs_config = (theirs / "config.yaml").read_text().replace(str(swept), str(tmp_path / "pool"))
        assert (ours / "config.yaml").read_text() == theirs_config  # the same config, but for its output_dir


class FakeArray:
    """A stand-in for submitit's SLURM executor: ``map_array`` gives one job per batch, run by ``wait_for``."""

    def __init__(self):
        self.batches, self.cancelled = [], []

    def map_array(self, function, batches):
        self.batches = list(batches)
        return [FakeTask(self, i) for i in range(len(self.batches))]


class FakeTask:
    def __init__(self, array, index):
        self.array, self.index, self.job_id = array, index, f"7_{index}"

    def cancel(self, check=True):
        self.array.cancelled.append(self.job_id)


#: Hydra's deprecation of the schema matching our launcher config uses on purpose (tests/running/test_slurm.py)
SCHEMA_MATCHING = f"ignore:{SCHEMA_WARNING}:UserWarning"


@pytest.mark.integration
@pytest.mark.filterwarnings(SCHEMA_MATCHING)  # Hydra's, on composing the jobs with our SLURM launcher
def test_on_slurm_cells_go_in_batches_and_a_dead_task_fails_only_its_missing_cells(tmp_path, monkeypatch):
    import src.running.pool.workers as workers
    from src.running.pool.workers import work

    array = FakeArray()
    monkeypatch.setattr(pool, "missing_commands", lambda: [])  # a submitting machine, as far as the pool can tell
    monkeypatch.setattr(workers, "slurm_executor", lambda launcher, folder: array)
    monkeypatch.setattr(workers, "BATCH_SECONDS", 1e-9)  # one cell per task

    def wait_for(jobs, poll_seconds, on_end):  # the first task dies after writing its first cell's rows
        for job in jobs:
            batch = array.batches[job.index]
            if job.index == 0:
                work(batch[0])
                on_end(job.index, workers.slurm.Ended(job, failure="SLURM task 7_0 ended without a result "
                                                                    "(state CANCELLED)"))
            else:
                on_end(job.index, workers.slurm.Ended(job, [work(item) for item in batch]))

    monkeypatch.setattr(workers.slurm, "wait_for", wait_for)
    chosen, overrides = toy_papers(tmp_path, ("toy",))
    summary = pool.run_pool(chosen, [*overrides, "hydra/launcher=submitit_slurm"], None, tmp_path)
    assert summary["slurm"] and len(array.batches) == 12  # every cell its own task here
    assert not array.cancelled  # every task ended

    def dies_after_nothing(jobs, poll_seconds, on_end):
        for job in jobs:
            on_end(job.index, workers.slurm.Ended(job, failure="SLURM task 7_0 ended without a result (state "
                                                               "CANCELLED)"))

    monkeypatch.setattr(workers.slurm, "wait_for", dies_after_nothing)
    for path in (tmp_path / "outputs/reproduce/toy/runs/yale_CNMF/cells").glob("*k03*.json"):
        path.unlink()  # two CNMF cells to compute again, in tasks that die
    with pytest.raises(pool.PoolFailed) as info:
        pool.run_pool(chosen, [*overrides, "hydra/launcher=submitit_slurm"], None, tmp_path)
    assert info.value.lines == ["toy yale CNMF: cell k=3 trial=0: SLURM task 7_0 ended without a result "
                                "(state CANCELLED)"]


@pytest.mark.filterwarnings(SCHEMA_MATCHING)  # Hydra's, on composing the jobs with our SLURM launcher
def test_on_a_machine_without_slurm_the_slurm_launcher_stops_before_anything_starts(tmp_path, monkeypatch):
    monkeypatch.setattr(pool, "missing_commands", lambda: ["sbatch", "srun"])
    monkeypatch.setattr(pool, "open_jobs", lambda jobs: pytest.fail("no job may be opened"))
    chosen, overrides = toy_papers(tmp_path, ("toy",))
    with pytest.raises(UserError, match="needs sbatch, squeue, srun .* sbatch, srun is missing"):
        pool.run_pool(chosen, [*overrides, "hydra/launcher=submitit_slurm"], None, tmp_path)
    assert not (tmp_path / "schedule.csv").exists()


@pytest.mark.integration
def test_a_sweep_with_more_iterations_is_priced_from_its_twins_rows(tmp_path, monkeypatch, caplog):
    # the toy paper runs with 20 fixed updates, then plans the same sweep with 2,000: its old rows (same folder,
    # other settings) are no measured time of the new cells; the model prices each fit at its 2,000 updates at
    # the speed the twin's rows measured, more than the twin's cells took (their KMeans step, which the updates
    # leave alone, included: on a loaded machine it can be most of a toy cell's time, so no fixed ratio holds);
    # KMeans has no setting to change and keeps its measured time
    monkeypatch.setattr(pool, "run_local", in_process())
    monkeypatch.setattr(pool, "SAMPLE_SECONDS", 0.0)  # a sample of the forecast after every cell
    chosen, twin_overrides = toy_papers(tmp_path, names=("toy",))
    with caplog.at_level("INFO"):
        summary = pool.run_pool(chosen, twin_overrides, 1, tmp_path / "record")
    closing = [r.getMessage() for r in caplog.records if r.getMessage().startswith("the time left forecast at")]
    recorded = summary["forecast_errors"] + summary["forecast_errors_by_time"]
    assert summary["forecast_errors"] and len(closing) == len(recorded)  # logged and recorded
    twin = pool.plan_jobs(chosen, twin_overrides)
    overrides = [o.replace("solver.max_iter=20", "solver.max_iter=2000") for o in twin_overrides]

    def priced(with_overrides):
        planned = pool.plan_jobs(chosen, with_overrides)
        runs = pool.open_jobs(planned)
        todo = pool.tasks_of(planned, [run.cells for run in runs])
        pool.expect(todo, planned, runs, twin)
        return {(planned[t.places[0].job].spec.method.label, t.places[0].k, t.places[0].trial): t for t in todo}

    more, same = priced(overrides), priced(twin_overrides)
    assert all(task.measured for task in same.values())  # the twin's own rows
    for (method, *cell), task in more.items():
        if method == "KMeans":
            assert task.measured and task.expected_seconds == same[method, *cell].expected_seconds
        else:
            assert not task.measured and task.expected_seconds > same[method, *cell].expected_seconds


ONE_PLURAL = r"\b1 (papers|tracks|jobs|cells|distinct cells|trials)\b"


@pytest.mark.integration
@pytest.mark.parametrize("unit", ["paper", "track"])
def test_the_opening_lines_count_in_the_commands_terms_with_the_singular_of_one(tmp_path, monkeypatch, caplog, unit):
    """A reproduction counts papers, a benchmark tracks (src/benchmark.py passes unit="track"); one of each
    is said in the singular, in the dry run's lines and the pool's opening line."""
    import re
    monkeypatch.setattr(pool, "run_local", in_process())
    chosen, overrides = toy_papers(tmp_path, ("toy2",))
    small = [*overrides, "method=nmf", "protocol.ks=[2]", "protocol.n_trials=1"]
    with caplog.at_level("INFO"):
        pool.run_pool(chosen, small, 1, dry_run=True, unit=unit)
        pool.run_pool(chosen, small, 1, unit=unit)
    said = [record.getMessage() for record in caplog.records]
    opening = [line for line in said if " to compute" in line]
    assert opening[0] == f"dry run of {unit} toy2: 1 job, 1 cell, 1 to compute"
    assert opening[1].startswith(f"dry run: 1 {unit}, 1 job, 1 cell, 1 to compute")
    assert opening[2].startswith(f"1 {unit}, 1 job, 1 cell: 0 already done, 1 to compute as 1 distinct cell (0 shared")
    assert not [line for line in said if re.search(ONE_PLURAL, line)], said


def test_the_forecast_errors_read_as_one_line_each_of_the_cells_and_of_the_time():
    summary = {"forecast_errors": [{"cells": 0.1, "elapsed": 30.0, "work": 0.2, "forecast": 540.0, "actual": 480.0,
                                    "error": 540.0 / 480.0 - 1}],
               "forecast_errors_by_time": [{"time": 0.25, "cells": 0.3, "elapsed": 130.0, "work": 0.4,
                                            "forecast": 300.0, "actual": 400.0, "error": -0.25}]}
    assert schedule.error_lines(summary, unit="fits", whose="over rounds 1-2, the time left") == [
        "over rounds 1-2, the time left forecast at 10% of the fits (30 s in): 9 min, it took 8 min (+12%)",
        "over rounds 1-2, the time left forecast at 25% of the time (2 min 10 s in): 5 min, it took 6 min 40 s (-25%)"]

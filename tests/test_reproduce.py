"""One generic entry point for every paper (src.reproduce): its plan, its command line, a paper's figures and
report as soon as its cells are in (the pool itself: tests/running/pool/; the paper homes:
tests/reproduction/test_homes.py).

The dry run of every paper composes all 151 jobs (half a minute): it runs once per session, in this process
(conftest.py's ``every_papers_dry_run``), for this module's counts and for the tests that read its jobs."""

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from helpers import in_process, toy_papers, write_home

from src import reproduce
from src.presentation import paper_report
from src.presentation.verdicts import TOO_FEW_TRIALS
from src.reproduction import homes as papers

REPO = Path(__file__).resolve().parents[1]

PAPERS = ("cai", "ccf", "cnmf", "fnmf", "lcf", "pcgnmf")


def test_a_missing_dependency_is_reproduced_first(tmp_path):
    assert [p.name for p in reproduce.plan(["pcgnmf"], outputs=tmp_path)] == ["cnmf", "pcgnmf"]
    (tmp_path / "cnmf").mkdir()
    (tmp_path / "cnmf" / reproduce.WALL).write_text("511\n")
    assert [p.name for p in reproduce.plan(["pcgnmf"], outputs=tmp_path)] == ["pcgnmf"]


def test_a_sixth_paper_is_discovered_from_its_home(tmp_path):
    for name in PAPERS:
        write_home(tmp_path, name, (papers.HOME / name / papers.SETTINGS).read_text())
    write_home(tmp_path, "sixth", "depends_on: [lcf]\n"
               "sweeps:\n  - []\n  - [\"method=nmf,cf\", \"protocol.ks=[2,3]\"]\n")
    assert papers.names(tmp_path) == sorted([*PAPERS, "sixth"])
    order = [p.name for p in papers.in_order(home=tmp_path)]
    assert order.index("lcf") < order.index("sixth")
    sixth = papers.load("sixth", tmp_path)
    assert sixth.module() is None and sixth.report_datasets is None
    assert sixth.sweep_overrides() == [["experiment=sixth"],
                                       ["experiment=sixth", "method=nmf,cf", "protocol.ks=[2,3]"]]


def test_unknown_paper_exits_2_with_one_line(caplog):
    with caplog.at_level("ERROR"):
        assert reproduce.main(["nope"]) == 2
        assert paper_report.main(["nope"]) == 2
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 2 and all("paper='nope' has no" in e and "\n" not in e for e in errors)


@pytest.mark.integration
def test_a_dry_run_counts_every_papers_cells(every_papers_dry_run):
    status, lines, _ = every_papers_dry_run
    assert status == 0, lines[-20:]
    # CNMF: 3 data sets x 7 methods, NTF on two, GNMF/SemiGNMF x 4 alphas x 3, the two references on each data set
    assert any(line.startswith("dry run of paper cnmf: 53 jobs, 4,770 cells") for line in lines)
    summary = next(line for line in lines if line.startswith("dry run: "))
    # an unsupervised method's clustering is one cell whichever samples a paper labels: CNMF's KMeans, NMF and
    # CF on ORL and Yale (labelled samples) are LCF's (none labelled), and LCF's and FNMF's NMF on ORL share too
    assert "6 papers, 165 jobs, 12,500 cells" in summary and "600 shared with another job" in summary


def test_bad_workers_exit_2_with_one_line(caplog):
    with caplog.at_level("ERROR"):
        assert reproduce.main(["cai", "--workers", "0"]) == 2
    assert [r.getMessage() for r in caplog.records if r.levelname == "ERROR"] == ["--workers=0 must be a positive integer"]


def test_the_old_selection_of_settings_in_overrides_is_read_as_the_new_with_one_warning(monkeypatch, caplog):
    given = []
    monkeypatch.setattr(reproduce, "reproduce", lambda chosen, build_report, overrides, *rest, **options:
                        given.append(overrides))
    monkeypatch.setattr(reproduce.signal, "signal", lambda *args: None)  # this process keeps its SIGTERM
    with caplog.at_level("WARNING"):
        assert reproduce.main(["cai", "--dry-run", "--overrides", "+paper/lcf=experiment", "solver=fixed"]) == 0
    assert given == [["experiment=lcf", "solver=fixed"]]
    assert [r.getMessage() for r in caplog.records if r.levelname == "WARNING"] == \
        ["+paper/lcf=experiment is deprecated and will be removed in the next release: write experiment=lcf"]


def test_the_command_hands_down_the_report_writers(monkeypatch):
    """The pool and the runner do not import presentation (tests/test_imports.py): the command gives them each
    job's tables and figure and each paper's report."""
    from src.presentation.report import write_reports

    given = []
    monkeypatch.setattr(reproduce, "reproduce", lambda chosen, build_report, *rest, **options:
                        given.append({**options, "build_report": build_report}))
    monkeypatch.setattr(reproduce.signal, "signal", lambda *args: None)  # this process keeps its SIGTERM
    assert reproduce.main(["cai", "--dry-run"]) == 0
    assert given[0]["job_report"] is write_reports and given[0]["build_report"] is paper_report.build


@pytest.fixture
def toys(tmp_path, monkeypatch):
    """The pool's toy papers, computed in this process, with their reports stood in for."""
    import src.running.pool as pool

    monkeypatch.setattr(pool, "run_local", in_process())
    built = []
    monkeypatch.setattr(paper_report, "build",
                        lambda name, runs, out, datasets: built.append((name, runs)) or out / "report.md")
    chosen, overrides = toy_papers(tmp_path)
    return chosen, overrides, tmp_path / "outputs" / "reproduce", built


@pytest.mark.integration
def test_each_papers_report_is_built_when_its_cells_are_in(toys):
    chosen, overrides, outputs, built = toys
    reports = reproduce.reproduce(chosen, paper_report.build, overrides, 1, outputs)
    assert reports == [outputs / "toy" / "report.md", outputs / "toy2" / "report.md"]
    assert sorted(name for name, _ in built) == ["toy", "toy2"]
    for name in ("toy", "toy2"):
        assert int((outputs / name / reproduce.WALL).read_text()) >= 0
    assert (outputs / "schedule.csv").is_file()


@pytest.mark.integration
def test_a_failing_report_fails_the_reproduction_with_one_line(toys, monkeypatch):
    chosen, overrides, outputs, built = toys

    def broken(name, runs, out, datasets):
        raise paper_report.MixedResultsError(f"{name} mixes two settings")

    monkeypatch.setattr(paper_report, "build", broken)
    # the first paper to finish (the pool's order decides which) is named, the other one counted
    with pytest.raises(reproduce.StepFailed, match=r"2 papers failed: (toy2?): report failed: \1 mixes two settings"):
        reproduce.reproduce(chosen, paper_report.build, overrides, 1, outputs)


@pytest.mark.integration
@pytest.mark.timeout(600)
def test_a_one_trial_reproduction_writes_its_report_with_no_verdict_and_exits_0(tmp_path, data_dir):
    """The quickest first run there is (Cai's demo, one trial: 3 cells on COIL20) reports, not crashes."""
    done = subprocess.run([sys.executable, "-m", "src.reproduce", "cai", "--overrides", "protocol.n_trials=1",
                           f"paths.data_dir={data_dir}"], cwd=tmp_path, capture_output=True, text=True, timeout=580,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    said = [line for line in done.stderr.splitlines() if TOO_FEW_TRIALS in line]
    assert len(said) == 1 and "[WARNING] cai: Every (data set, method, k)" in said[0], said
    out = tmp_path / "outputs" / "reproduce" / "cai"
    report = (out / "report.md").read_text()
    assert "No forest plot: none of the 3 published numbers" in report  # Cai's three printed NMI averages
    assert report.count("On its one block, best first: GNMF") == 2 and "No test, no group" in report  # AC, NMI
    assert "| 20 | " in report and " ± " not in report.split("## Our tables")[1].split("## ")[0]  # no deviation
    cells = pd.concat([pd.read_csv(path) for path in (out / "runs").glob("*/results.csv")])
    assert len(cells) == 3 and set(cells["trial"]) == {0}  # every cell kept

"""One generic entry point for every paper (src.reproduce): its plan, its commands, its scheduling of steps;
no sweep is run here. The paper homes themselves: tests/presentation/papers/test_paper_homes.py."""

import pytest
from helpers import write_home

from src import reproduce
from src.presentation import paper_report, papers

PAPERS = ("cai", "ccf", "cnmf", "fnmf", "lcf", "pcgnmf")


def test_a_missing_dependency_is_reproduced_first(tmp_path):
    assert [p.name for p in reproduce.plan(["pcgnmf"], outputs=tmp_path)] == ["cnmf", "pcgnmf"]
    (tmp_path / "cnmf").mkdir()
    (tmp_path / "cnmf" / reproduce.WALL).write_text("511\n")
    assert [p.name for p in reproduce.plan(["pcgnmf"], outputs=tmp_path)] == ["pcgnmf"]


def test_a_sixth_paper_is_discovered_from_its_home(tmp_path):
    for name in PAPERS:
        write_home(tmp_path, name, (papers.HOME / name / papers.SETTINGS).read_text())
    write_home(tmp_path, "sixth", "depends_on: [lcf]\nprefetch: [yale]\n"
               "sweeps:\n  - []\n  - [\"method=nmf,cf\", \"protocol.ks=[2,3]\"]\n")
    assert papers.names(tmp_path) == sorted([*PAPERS, "sixth"])
    order = [p.name for p in papers.in_order(home=tmp_path)]
    assert order.index("lcf") < order.index("sixth")
    sixth = papers.load("sixth", tmp_path)
    assert sixth.module() is None and sixth.report_datasets is None
    commands = [c[1:] for c in reproduce.commands(sixth, ["hydra/launcher=submitit_local"])]
    assert commands == [["-m", "src.data", "yale"],
                        ["-m", "src.run", "-m", "+paper/sixth=experiment", "hydra/launcher=submitit_local"],
                        ["-m", "src.run", "-m", "+paper/sixth=experiment", "method=nmf,cf", "protocol.ks=[2,3]",
                         "hydra/launcher=submitit_local"]]


def test_unknown_paper_exits_2_with_one_line(caplog):
    with caplog.at_level("ERROR"):
        assert reproduce.main(["nope"]) == 2
        assert paper_report.main(["nope"]) == 2
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 2 and all("paper='nope' has no" in e and "\n" not in e for e in errors)


def test_dry_run_prints_every_command_in_dependency_order(capsys):
    assert reproduce.main(["all", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.index("# cnmf ->") < out.index("# pcgnmf ->")
    assert "python -m src.run -m +paper/cnmf=experiment method=gnmf,semignmf method.params.alpha=1,10,100,1000" in out
    assert "figures: src.presentation.papers.lcf.figures" in out and "figures: src.presentation.papers.cnmf.figures" in out


def test_a_failing_sweep_stops_with_one_line(tmp_path, monkeypatch, caplog):
    """The first failing step ends the reproduction with its exit status; nothing after it runs."""
    started = []

    def popen(command, start_new_session=False):
        started.append(command)
        return FakeSweep(command, start_new_session, 1 if len(started) == 2 else 0, 1)

    monkeypatch.setattr(reproduce, "POLL_SECONDS", 0.0)
    monkeypatch.setattr(reproduce.subprocess, "Popen", popen)
    paper = papers.load("fnmf")
    with pytest.raises(reproduce.StepFailed) as info:
        reproduce.reproduce(paper, outputs=tmp_path)
    assert len(started) == 2 and info.value.status == 1
    assert "fnmf: sweep 1 of 4 failed (exit status 1)" in str(info.value) and "\n" not in str(info.value)
    assert reproduce.ONE_WORKER not in started[1]  # one step at a time: the launcher keeps its workers
    assert (tmp_path / "fnmf" / reproduce.START).is_file() and not (tmp_path / "fnmf" / reproduce.WALL).exists()


# -- sweeps at once ---------------------------------------------------------------------------------------
class FakeSweep:
    """A stand-in for ``subprocess.Popen`` of a sweep: it ends (with ``status``) after ``polls`` polls."""

    log: list = []
    running: set = set()
    most = 0

    def __init__(self, command, start_new_session=False, status=0, polls=2):
        assert start_new_session  # its process group can be stopped as a whole
        self.command, self.status, self.polls, self.returncode = command, status, polls, None
        self.pid = 10**9 + len(FakeSweep.log)
        FakeSweep.log.append(("start", command))
        FakeSweep.running.add(self)
        FakeSweep.most = max(FakeSweep.most, len(FakeSweep.running))

    def poll(self):
        if self.returncode is None:
            self.polls -= 1
            if self.polls <= 0:
                self.returncode = self.status
                FakeSweep.running.discard(self)
                FakeSweep.log.append(("end", self.command))
        return self.returncode

    def wait(self):
        if self.returncode is None:
            self.returncode = -15
            FakeSweep.running.discard(self)
        return self.returncode


@pytest.fixture
def fake_sweeps(tmp_path, monkeypatch):
    """Three papers with 2, 3 and 1 sweeps; data steps, sweeps, figures and reports stood in for and recorded."""
    for name, sweeps in (("alpha", 2), ("beta", 3), ("gamma", 1)):
        write_home(tmp_path / "home", name, "prefetch: [yale]\nsweeps:\n" + "".join(
            f"  - [\"protocol.seed={i}\"]\n" for i in range(sweeps)))
    FakeSweep.log, FakeSweep.running, FakeSweep.most = [], set(), 0
    killed = []
    monkeypatch.setattr(reproduce, "POLL_SECONDS", 0.0)
    monkeypatch.setattr(reproduce.subprocess, "Popen", FakeSweep)
    monkeypatch.setattr(reproduce.os, "killpg", lambda pid, sig: killed.append(pid))
    monkeypatch.setattr(paper_report, "build",
                        lambda name, runs, out, datasets: FakeSweep.log.append(("report", name)) or out / "report.md")
    chosen = [papers.load(name, tmp_path / "home") for name in ("alpha", "beta", "gamma")]
    return chosen, tmp_path / "outputs", killed


def paper_of(command):
    """The paper of a stood-in sweep, from its experiment override (None for a data step)."""
    return next((c.split("/")[1].split("=")[0] for c in command if c.startswith("+paper/")), None)


def test_steps_of_all_papers_share_the_slots(fake_sweeps):
    chosen, outputs, killed = fake_sweeps
    reports = reproduce.reproduce_together(chosen, ["x=1"], 2, outputs)
    assert reports == [outputs / name / "report.md" for name in ("alpha", "beta", "gamma")]
    starts = [command for kind, command in FakeSweep.log if kind == "start"]
    sweeps = [command for command in starts if "src.run" in command]
    assert len(starts) == 9 and len(sweeps) == 6 and FakeSweep.most == 2  # never more than two at once
    assert all(command[-2:] == ["x=1", reproduce.ONE_WORKER] for command in sweeps)
    assert [paper_of(c) for c in sweeps] == ["alpha", "alpha", "beta", "beta", "beta", "gamma"]
    data = [i for i, (kind, command) in enumerate(FakeSweep.log) if "src.data" in command]
    for start, end in zip(data[::2], data[1::2]):  # one data step at a time: each ends before the next starts
        assert FakeSweep.log[start][0] == "start" and FakeSweep.log[end][0] == "end"
    for paper in ("alpha", "beta", "gamma"):  # a paper's sweeps start after its data step ended
        nth = ("alpha", "beta", "gamma").index(paper)
        first = min(i for i, (kind, c) in enumerate(FakeSweep.log) if kind == "start" and paper_of(c) == paper)
        assert data[2 * nth + 1] < first
    kinds = [kind for kind, _ in FakeSweep.log]
    assert kinds.index("report") > max(i for i, kind in enumerate(kinds) if kind == "end")  # reports last
    for name in ("alpha", "beta", "gamma"):
        assert (outputs / name / reproduce.WALL).is_file()
    assert not killed


def test_a_failing_sweep_stops_the_others(fake_sweeps, monkeypatch):
    chosen, outputs, killed = fake_sweeps

    def popen(command, start_new_session=False):  # alpha's second sweep fails while its first still runs
        if "src.data" in command:
            return FakeSweep(command, start_new_session, 0, 1)
        fails = paper_of(command) == "alpha" and "protocol.seed=1" in command
        return FakeSweep(command, start_new_session, 3 if fails else 0, 3 if fails else 50)

    monkeypatch.setattr(reproduce.subprocess, "Popen", popen)
    with pytest.raises(reproduce.StepFailed) as info:
        reproduce.reproduce_together(chosen, [], 2, outputs)
    assert info.value.status == 3 and "alpha: sweep 2 of 2 failed (exit status 3)" in str(info.value)
    assert "\n" not in str(info.value)
    assert len(killed) == 1 and not FakeSweep.running  # alpha's first sweep was stopped, nothing else started
    assert sum(kind == "start" for kind, _ in FakeSweep.log) == 3  # alpha's data and its two sweeps
    assert not any(kind == "report" for kind, _ in FakeSweep.log)
    assert not (outputs / "alpha" / reproduce.WALL).exists() and not (outputs / "beta" / reproduce.WALL).exists()


def test_sweeps_at_once_defaults_to_the_cores_unless_a_launcher_is_given(monkeypatch):
    monkeypatch.setattr(reproduce, "cores", lambda: 6)
    assert reproduce.sweeps_at_once(None, []) == 6
    assert reproduce.sweeps_at_once(None, ["hydra/launcher=submitit_slurm"]) == 1
    assert reproduce.sweeps_at_once(None, ["hydra.launcher.n_jobs=8"]) == 1
    assert reproduce.sweeps_at_once(3, ["hydra.launcher.n_jobs=8"]) == 3
    with pytest.raises(reproduce.UserError, match="--sweeps-at-once=0"):
        reproduce.sweeps_at_once(0, [])

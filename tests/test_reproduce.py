"""One home per paper (conf/paper/<name>/), one generic entry point (src.reproduce); no sweep is run here."""

import re

import pytest
import yaml
from hydra import compose, initialize_config_dir

from src import reproduce
from src.presentation import paper_report, papers
from src.errors import ConfigError
from src.run import CONF_DIR

PAPERS = ("cai", "ccf", "cnmf", "fnmf", "lcf", "pcgnmf")


def split_values(override: str) -> list[str]:
    """A sweep override's single values: ``a=1,2`` -> ``a=1``, ``a=2`` (commas inside brackets kept)."""
    key, _, value = override.partition("=")
    if value.startswith("["):
        return [override]
    return [f"{key}={v}" for v in value.split(",")]


def test_every_paper_has_a_complete_home():
    assert papers.names() == sorted(PAPERS)
    for name in PAPERS:
        paper = papers.load(name)
        assert (paper.home / "experiment.yaml").is_file() and paper.published.is_file()
        assert yaml.safe_load(paper.published.read_text())["paper"]
        assert paper.sweeps and paper.prefetch
        assert all((CONF_DIR / "dataset" / f"{d}.yaml").is_file() for d in paper.prefetch)
        assert "Run with: make reproduce-" + name in (paper.home / "experiment.yaml").read_text()
    assert papers.load("lcf").tables.is_file()
    assert papers.load("pcgnmf").report_datasets == ("orl", "yale", "coil20")


def test_the_shared_parts_are_spliced_into_the_sweeps():
    fnmf = papers.load("fnmf")
    assert fnmf.sweeps[3] == ("dataset=caltech101_rgb", "protocol.ks=[2,3,4,5,6,7,8,9,10]",
                              "method=fnmf", "method.params.farness=0.001,0.003,0.01,0.03")
    assert fnmf.sweep_overrides()[0] == ["+paper/fnmf=experiment"]


@pytest.mark.parametrize("name", PAPERS)
def test_every_sweep_composes_with_hydra(name):
    """Every value of every sweep (its comma lists split into single values, each varied with the other
    overrides at their first value) composes, with the sweep's own data sets and methods or the experiment's."""
    paper = papers.load(name)
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        base = compose(config_name="config", overrides=[paper.experiment], return_hydra_config=True)
        assert base.hydra.sweep.dir == f"{base.paths.output_dir}/reproduce/{name}/runs"
        grid = {key: str(value) for key, value in base.hydra.sweeper.params.items()}
        for sweep in paper.sweeps:
            given = {o.partition("=")[0] for o in sweep}
            choices = [split_values(o) for o in sweep]
            choices += [split_values(f"{key}={value}") for key, value in grid.items() if key not in given]
            first = [values[0] for values in choices]
            jobs = {tuple(first[:i] + [value] + first[i + 1:]) for i, values in enumerate(choices) for value in values}
            for job in sorted(jobs):
                cfg = compose(config_name="config", overrides=[paper.experiment, *job])
                assert cfg.dataset.preprocess == "unit_norm" and cfg.runtime.blas_threads == 1


def test_the_experiment_is_the_one_the_makefile_ran():
    """``+paper/ccf=experiment`` selects the paper's settings, the CCF protocol included."""
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=["+paper/ccf=experiment", "dataset=yale", "method=ccf"])
    assert cfg.protocol.labels.fraction == 0.3 and cfg.protocol.rank_offset == 1


def test_dependencies_come_first():
    order = [p.name for p in papers.in_order()]
    assert sorted(order) == sorted(PAPERS) and order.index("cnmf") < order.index("pcgnmf")
    assert [p.name for p in papers.in_order(["pcgnmf", "cnmf"])] == ["cnmf", "pcgnmf"]
    pcgnmf = papers.load("pcgnmf")
    assert pcgnmf.depends_on == ("cnmf",)
    assert [p.as_posix() for p in pcgnmf.runs()] == ["outputs/reproduce/pcgnmf/runs", "outputs/reproduce/cnmf/runs"]


def test_a_missing_dependency_is_reproduced_first(tmp_path):
    assert [p.name for p in reproduce.plan(["pcgnmf"], outputs=tmp_path)] == ["cnmf", "pcgnmf"]
    (tmp_path / "cnmf").mkdir()
    (tmp_path / "cnmf" / reproduce.WALL).write_text("511\n")
    assert [p.name for p in reproduce.plan(["pcgnmf"], outputs=tmp_path)] == ["pcgnmf"]


def write_home(root, name, text):
    (root / name).mkdir(parents=True)
    (root / name / papers.SETTINGS).write_text(text)


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


@pytest.mark.parametrize("text, message", [
    ("sweeps: [[]]\nprefech: [yale]\n", "unknown key(s) prefech"),
    ("sweeps: [[method=nmf, 3]]\n", "must be a non-empty string"),
    ("sweeps: [[]]\ndepends_on: [nope]\n", "depends_on names nope"),
    ("sweeps: [[]]\nreport: {runs: [x]}\n", "report="),
])
def test_a_bad_home_is_one_line(tmp_path, text, message):
    write_home(tmp_path, "bad", text)
    with pytest.raises(ConfigError, match=re.escape(message)) as info:
        papers.load("bad", tmp_path)
    assert "\n" not in str(info.value)


def test_a_dependency_cycle_is_refused(tmp_path):
    write_home(tmp_path, "a", "depends_on: [b]\n")
    write_home(tmp_path, "b", "depends_on: [a]\n")
    with pytest.raises(ConfigError, match="cycle: a -> b -> a"):
        papers.in_order(home=tmp_path)


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

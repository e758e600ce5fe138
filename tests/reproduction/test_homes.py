"""The paper homes (src/presentation/papers: papers/<name>/, their settings conf/experiment/<name>.yaml):
complete, composing with Hydra, in dependency order, and refused in one line when malformed."""

import re

import pytest
import yaml
from helpers import write_home
from hydra import compose, initialize_config_dir

from src.errors import ConfigError
from src.reproduction import homes as papers
from src.config_dir import CONF_DIR

PAPERS = ("cai", "ccf", "cnmf", "fnmf", "lcf", "pcgnmf")


def test_every_paper_has_a_complete_home():
    assert papers.names() == sorted(PAPERS)
    for name in PAPERS:
        paper = papers.load(name)
        assert paper.home == CONF_DIR.parent / "papers" / name
        assert paper.experiment_file() == CONF_DIR / "experiment" / f"{name}.yaml" and paper.published.is_file()
        assert yaml.safe_load(paper.published.read_text())["paper"]
        assert paper.sweeps
        settings = paper.experiment_file().read_text()
        assert settings.startswith("# @package _global_\n") and "Run with: make reproduce-" + name in settings
    assert not list(papers.HOME.rglob("experiment.yaml"))  # the settings live on Hydra's search path only
    assert papers.load("lcf").tables.is_file()
    assert papers.load("pcgnmf").report_datasets == ("orl", "yale", "coil20")


def test_the_shared_parts_are_spliced_into_the_sweeps():
    fnmf = papers.load("fnmf")
    assert fnmf.sweeps[3] == ("dataset=caltech101_rgb", "protocol.ks=[2,3,4,5,6,7,8,9,10]",
                              "method=fnmf", "method.params.farness=0.001,0.003,0.01,0.03")
    assert fnmf.sweep_overrides()[0] == ["experiment=fnmf"]


@pytest.mark.integration
@pytest.mark.parametrize("name", PAPERS)
def test_every_job_of_every_sweep_composes_with_hydra(name, every_papers_dry_run):
    """Every job of every sweep (every value of its comma lists, with the sweep's own data sets and methods or
    the experiment's), as the reproduction composes it (its dry run, conftest.py), runs in the paper's folder
    (the first sweep in ``runs/``) on unit-norm data with one BLAS thread."""
    status, _, jobs = every_papers_dry_run
    assert status == 0
    paper = papers.load(name)
    mine = [job for job in jobs if job.paper == name]
    assert sorted({job.sweep for job in mine}) == list(range(len(paper.sweeps)))
    for job in mine:
        assert job.out_dir.parts[:3] == ("outputs", "reproduce", name), job.out_dir
        assert job.sweep or job.out_dir.parent.name == "runs", job.out_dir
        assert job.config["dataset"]["preprocess"] == "unit_norm" and job.config["runtime"]["blas_threads"] == 1
        assert paper.experiment in job.overrides


def test_the_experiment_is_the_one_the_makefile_ran():
    """``experiment=ccf`` selects the paper's settings, the CCF protocol included."""
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=["experiment=ccf", "dataset=yale", "method=ccf"])
    assert cfg.protocol.labels.fraction == 0.3 and cfg.protocol.rank_offset == 1


def test_dependencies_come_first():
    order = [p.name for p in papers.in_order()]
    assert sorted(order) == sorted(PAPERS) and order.index("cnmf") < order.index("pcgnmf")
    assert [p.name for p in papers.in_order(["pcgnmf", "cnmf"])] == ["cnmf", "pcgnmf"]
    pcgnmf = papers.load("pcgnmf")
    assert pcgnmf.depends_on == ("cnmf",)
    assert [p.as_posix() for p in pcgnmf.runs()] == ["outputs/reproduce/pcgnmf/runs", "outputs/reproduce/cnmf/runs"]


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

"""The jobs of papers' sweeps, composed as Hydra's multirun composes them, and the cells two jobs share."""

import pytest
from helpers import toy_papers

from src.running.pool.jobs import Place, expand, reads_labels, sharing_key, tasks_of
from src.resolvers import safe_name


def sweeps(chosen, overrides=()):
    return [(p.name, i, [*sweep, *overrides]) for p in chosen for i, sweep in enumerate(p.sweep_overrides())]


@pytest.mark.integration  # the jobs of every paper's reproduction, as its dry run planned them (conftest.py)
def test_a_papers_jobs_are_its_sweeps_jobs_in_their_run_directories(every_papers_dry_run):
    jobs = [job for job in every_papers_dry_run.jobs if job.paper == "cnmf"]
    assert len(jobs) == 21 + 2 + 24 + 6  # 3 data sets x 7 methods, NTF on two, GNMF/SemiGNMF x 4 alphas x 3, 2 references x 3
    assert [job.number for job in jobs if job.sweep == 3] == list(range(6))
    for job in jobs:
        name = f"{job.spec.dataset.name}_{safe_name(job.spec.method.label)}"
        assert str(job.out_dir) == f"outputs/reproduce/cnmf/runs/{name}"
        assert "experiment=cnmf" in job.overrides and job.config["seed"] == 0
    assert [job.number for job in jobs if job.sweep == 2] == list(range(24))
    assert len({job.out_dir for job in jobs}) == len(jobs)


@pytest.mark.integration
def test_a_sweep_directory_given_as_an_override_is_the_jobs(every_papers_dry_run):
    # LCF's lambda study (its sweep 2) sets hydra.sweep.dir
    jobs = [job for job in every_papers_dry_run.jobs if job.paper == "lcf" and job.sweep == 2]
    assert jobs
    assert {str(job.out_dir.parent) for job in jobs} == {"outputs/reproduce/lcf/lambda"}
    assert all(job.spec.protocol.ks == (3,) for job in jobs)


def test_cells_are_shared_only_where_nothing_the_method_reads_differs(tmp_path):
    chosen, overrides = toy_papers(tmp_path)
    jobs = {(job.paper, job.spec.method.name): job for job in expand(sweeps(chosen, overrides))}
    toy_nmf, toy2_nmf = jobs["toy", "nmf"].spec, jobs["toy2", "nmf"].spec
    assert sharing_key(toy_nmf, 2, 0) == sharing_key(toy2_nmf, 2, 0)  # the same settings, two homes
    unlabelled = [job.spec for job in expand(sweeps(chosen[1:], [*overrides, "protocol.labels.mode=none"]))
                  if job.spec.method.name == "nmf"][0]
    assert not reads_labels(unlabelled) and reads_labels(jobs["toy", "cnmf"].spec)
    # NMF takes no labels: its clustering is one cell whichever samples are labelled (each row scores its own
    # unlabelled samples from the partition) ...
    assert not reads_labels(toy_nmf) and sharing_key(toy_nmf, 2, 0) == sharing_key(unlabelled, 2, 0)
    # ... unless the row's own scores read the unlabelled samples only
    only = [job.spec for job in expand(sweeps(chosen[1:], [*overrides, "protocol.score_on=unlabelled"]))
            if job.spec.method.name == "nmf"][0]
    assert reads_labels(only) and sharing_key(only, 2, 0) != sharing_key(toy_nmf, 2, 0)
    assert sharing_key(toy_nmf, 2, 0) != sharing_key(toy_nmf, 2, 1) != sharing_key(toy_nmf, 3, 1)
    assert sharing_key(jobs["toy", "kmeans"].spec, 2, 0) != sharing_key(toy_nmf, 2, 0)


@pytest.mark.parametrize("change", [["solver.max_iter=21"], ["seed=1"], ["protocol.score_on=unlabelled"],
                                    ["protocol.kmeans_restarts=4"], ["dataset.preprocess=none"]])
def test_anything_a_cell_reads_keeps_it_apart(tmp_path, change):
    chosen, overrides = toy_papers(tmp_path, ("toy",))
    plain = [job for job in expand(sweeps(chosen, overrides)) if job.spec.method.name == "nmf"][0].spec
    other = [job for job in expand(sweeps(chosen, [*overrides, *change])) if job.spec.method.name == "nmf"][0].spec
    assert sharing_key(plain, 2, 0) != sharing_key(other, 2, 0)


def test_a_readout_by_the_labels_leaves_a_cell_shared_and_a_label_free_one_does_not(tmp_path):
    """Each run reads a shared cell out by its own labels (src.protocol.cell.readouts_for), so asking for that
    readout changes no key; a KMeans readout is computed with the fit, and does."""
    chosen, overrides = toy_papers(tmp_path, ("toy",))

    def nmf(*change):
        return [job for job in expand(sweeps(chosen, [*overrides, *change]))
                if job.spec.method.name == "nmf"][0].spec

    plain = nmf("protocol.readouts=[argmax]")
    assert sharing_key(plain, 2, 0) == sharing_key(nmf("protocol.readouts=[argmax,nearest_labelled,spread_labelled]"),
                                                   2, 0)
    assert sharing_key(plain, 2, 0) != sharing_key(nmf("protocol.readouts=[argmax,kmeans_once]"), 2, 0)


def test_a_relabelled_method_shares_its_cells(tmp_path):
    chosen, overrides = toy_papers(tmp_path, ("toy2",))
    plain = [job for job in expand(sweeps(chosen, overrides)) if job.spec.method.name == "nmf"][0]
    named = [job for job in expand(sweeps(chosen, [*overrides, "method.label=Another"]))
             if job.spec.method.name == "nmf"][0]
    assert sharing_key(plain.spec, 3, 1) == sharing_key(named.spec, 3, 1)


def test_tasks_gather_the_places_of_a_shared_cell(tmp_path):
    chosen, overrides = toy_papers(tmp_path)
    jobs = expand(sweeps(chosen, overrides))
    todo = [[(k, t) for k in job.spec.protocol.ks for t in range(2)] for job in jobs]
    tasks = tasks_of(jobs, todo)
    assert sum(len(task.places) for task in tasks) == 5 * 4  # 5 jobs x 4 cells
    assert len(tasks) == 5 * 4 - 2 * 4  # KMeans and NMF cells of toy2 are toy's
    shared = [task for task in tasks if len(task.places) == 2]
    assert len(shared) == 8
    for task in shared:
        first, second = task.places
        assert jobs[first.job].paper == "toy" and jobs[second.job].paper == "toy2"
        assert (first.k, first.trial) == (second.k, second.trial)
    assert tasks[0].places[0] == Place(0, 2, 0)


def hydra_jobs(plan):
    """The jobs of ``plan`` (paper, sweep, overrides) composed by Hydra alone, each sweep's config and then each
    job's (``load_sweep_config``), as resolved plain configs without Hydra's node, with their run directories."""
    from pathlib import Path

    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode
    from omegaconf import OmegaConf, open_dict

    from src import resolvers
    from src.config_dir import CONF_DIR
    from src.running.sweep import sweep_jobs

    resolvers.register()
    out = []
    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            loader = GlobalHydra.instance().config_loader()
            for _, _, overrides in plan:
                master = loader.load_configuration("config", list(overrides), run_mode=RunMode.MULTIRUN)
                for number, job in enumerate(sweep_jobs(master)):
                    config = loader.load_sweep_config(master, list(job))
                    with open_dict(config):
                        config.hydra.job.num = number
                    HydraConfig.instance().set_config(config)
                    where = Path(config.hydra.sweep.dir) / str(config.hydra.sweep.subdir)
                    record = (tuple(config.hydra.overrides.task), config.hydra.job.override_dirname, where,
                              OmegaConf.to_container(config.hydra.launcher, resolve=True))
                    with open_dict(config):
                        del config["hydra"]
                    out.append((record, OmegaConf.to_container(config, resolve=True)))
    finally:
        GlobalHydra.instance().clear()
    return out


TUNED_PLAN = [  # a fixed track's sweep over its data sets and methods, and a tuned setting's and a fold's sweeps
    ("t", 0, ["experiment=benchmark/labels10", "dataset=yale,orl", "method=gnmf,sda,kmeans",
              "hydra.sweep.dir=/tmp/plan/runs"]),
    ("t", 1, ["experiment=benchmark/labels30", "dataset=yale,coil20", "method=pcgnmf", "method.params.beta=1000.0",
              "method.label='PCGNMF(alpha=100.0,beta=1000.0)'", "hydra.sweep.dir=/tmp/plan/tuned"]),
    ("t", 2, ["experiment=benchmark/labels10", "dataset=orl", "protocol.ks=[2,3]", "method=semignmf",
              "method.params.alpha=0.1", "method.label='SemiGNMF(alpha=0.1)'", "++protocol.labels.folds=2",
              "++protocol.labels.fold=1", "hydra.sweep.dir=/tmp/plan/folds/1"]),
    ("t", 3, ["dataset=yale", "method=gnmf", "solver=fixed", "+extra.note=7", "~method.params.knn_algorithm",
              "hydra.sweep.dir=/tmp/plan/other"]),
]


@pytest.mark.parametrize("processes", [1, 2])
def test_the_composer_gives_the_jobs_hydra_composes_whole(processes, monkeypatch):
    from src.running.pool import jobs as jobs_module

    monkeypatch.setattr(jobs_module, "JOBS_PER_PROCESS", 1)  # a short plan still goes over the processes
    mine = expand(TUNED_PLAN, processes=processes)
    theirs = hydra_jobs(TUNED_PLAN)
    assert len(mine) == len(theirs) == 6 + 2 + 1 + 1
    for job, ((task, _, where, launcher), config) in zip(mine, theirs):
        assert job.overrides == task and job.out_dir == where and job.launcher == launcher
        assert job.config == config
    assert [job.number for job in mine[:6]] == list(range(6))
    assert mine[7].config["method"]["params"]["beta"] == 1000.0 and mine[8].config["protocol"]["labels"]["fold"] == 1
    assert mine[9].config["extra"] == {"note": 7} and "knn_algorithm" not in mine[9].config["method"]["params"]


def test_the_composer_refuses_what_hydra_refuses():
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    for bad in (["dataset=yale", "method=nmf", "method.params.no_such=1"],  # no such key: + to add it
                ["dataset=yale", "method=nmf", "+seed=3"],  # already there: ++ to set it
                ["dataset=yale", "method=nmf", "~no.such.key"]):
        with pytest.raises((HydraException, OmegaConfBaseException)):
            expand([("t", 0, bad)], processes=1)
        with pytest.raises((HydraException, OmegaConfBaseException)):
            hydra_jobs([("t", 0, bad)])


def test_override_dirname_is_hydras():
    from src.running.pool.jobs import override_dirname
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parsed = OverridesParser.create().parse_overrides(["b=2", "a.x=1", "seed=4"])
    assert override_dirname(parsed, ["seed"], ",", "=") == "a.x=1,b=2"
    assert override_dirname(parsed, [], "/", ":") == "a.x:1/b:2/seed:4"

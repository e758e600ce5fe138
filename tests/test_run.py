"""The command line end to end on small protocols: files written, determinism, bad input, multirun.

The command-line runs of these tests (:data:`COMMANDS`) start on the other core as soon as the session's tests are
known (tests/background.py); each test checks what its commands did."""

import os
import subprocess
import sys
from pathlib import Path

import background
import pandas as pd
import pytest
from helpers import THREAD_VARIABLES

from src.presentation import report

REPO = Path(__file__).resolve().parents[1]
SMALL = ["protocol.ks=[2,3]", "protocol.n_trials=2", "protocol.kmeans_restarts=3", "method.params.max_iter=30"]


def run(*args, cwd=REPO):
    return background.run_module("src.run", *args, cwd=cwd)


def shared_data_dir():
    """The data directory of this module's command-line runs (made once)."""
    return background.result(("test_run", "data"), lambda: background.directory("run-data"))


def single_run_twice():
    where, data = background.directory("run"), shared_data_dir()
    return [(where / attempt, run("method=nmf", "dataset=yale", *SMALL, f"hydra.run.dir={where / attempt}",
                                  f"paths.data_dir={data}")) for attempt in ("a", "b")]


def bad_input_run(override, message):
    out = background.directory("run") / "run"
    return out, run("method=nmf", "dataset=yale", "protocol=cnmf", override, f"hydra.run.dir={out}",
                    f"paths.data_dir={shared_data_dir()}")


def multirun_of_two_methods(*extra):
    sweep = background.directory("run") / "sweep"
    return sweep, run("-m", "method=kmeans,nmf", "dataset=orl,yale", *SMALL[:3], f"hydra.sweep.dir={sweep}",
                      f"paths.data_dir={shared_data_dir()}", *extra)


def old_and_new_form():
    return (run("+paper/ccf=experiment", "dataset=yale", "method=ccf", "--cfg=job"),
            run("experiment=ccf", "dataset=yale", "method=ccf", "--cfg=job"))


COMMANDS = {
    "test_single_run_writes_results_table_and_figure_and_is_deterministic": single_run_twice,
    "test_bad_input_is_one_line_nonzero_and_leaves_no_results": bad_input_run,
    "test_multirun_in_parallel_then_one_table_per_dataset": multirun_of_two_methods,
    "test_the_command_line_reads_the_old_form_as_the_new_with_one_warning": old_and_new_form,
    "test_a_dry_multirun_checks_every_job_and_computes_nothing": lambda: multirun_of_two_methods("dry_run=true"),
}
"""Test -> the command-line runs it checks (a parametrized test's case gets its parameters)."""


def start_in_background(items):
    background.start_tests(items, COMMANDS)


@pytest.mark.integration  # python -m src.run in a subprocess
def test_single_run_writes_results_table_and_figure_and_is_deterministic(request):
    outputs = []
    for out, done in background.outcome(request, COMMANDS):
        assert done.returncode == 0, done.stderr + done.stdout
        outputs.append(out)
    log = done.stdout + done.stderr
    progress = [line for line in log.splitlines() if "[yale/NMF] k=" in line and " done: " in line]  # one per k
    assert len(progress) == 2 and "k=2 done: 2/4 cells" in progress[0] and "4/4 cells" in progress[1], log
    assert " cell 1/4 " not in log
    first, second = (pd.read_csv(out / "results.csv") for out in outputs)
    for column in ("dataset", "method", "k", "trial", "seed", "acc", "nmi", "n_iter", "fit_seconds"):
        assert column in first.columns
    assert len(first) == 4 and first["acc"].between(0, 1).all() and first["nmi"].between(0, 1).all()
    pd.testing.assert_frame_equal(first[["k", "trial", "acc", "nmi"]], second[["k", "trial", "acc", "nmi"]])
    out = outputs[0]
    assert (out / "config.yaml").exists() and (out / "table_yale.md").exists() and (out / "figure_yale.png").exists()
    assert len(list((out / "cells").glob("*.json"))) == 4


def repeated(override: str, message: str):
    """A case whose whole path other kept tests run: marked slow (make test-slow). The command line's path for a
    setting refused before any data is read (one ERROR line, exit status 2, nothing written) is run by the kept
    tests/test_bad_input.py::test_cli_bad_value_is_one_error_line_and_exit_2[overrides1-runtime.blas_threads=0
    must be a positive integer]; this very override and its message by the kept in-process case
    tests/test_bad_input.py::test_bad_protocol_and_run_values[<the override>] (which runs run_experiment, the
    function every CLI job runs)."""
    return pytest.param(override, message, marks=pytest.mark.slow)


@pytest.mark.integration  # python -m src.run in a subprocess
@pytest.mark.parametrize(
    "override, message",
    [
        ("method=foo", "method='foo' is not one of"),
        ("dataset=nope", "dataset='nope' is not one of"),
        repeated("protocol.ks=[1,2]", "protocol.ks contains 1"),
        ("protocol.ks=[2,16]", "protocol.ks contains 16"),
        # the in-process case sets protocol.labels.mode=fraction first; protocol=cnmf below has that mode
        repeated("protocol.labels.fraction=1.5", "protocol.labels.fraction=1.5"),
        repeated("protocol.labels.fraction=0", "protocol.labels.fraction=0"),
        repeated("protocol.labels.mode=all", "protocol.labels.mode='all'"),
        repeated("protocol.n_trials=0", "protocol.n_trials=0"),
        ("protocol.kmeans_restarts=-1", "protocol.kmeans_restarts=-1"),
        ("method.params.max_iter=0", "max_iter=0"),
        ("method.params.tol=-1", "tol=-1"),
        repeated("protocol.kmeans_metric=manhattan", "protocol.kmeans_metric='manhattan'"),
    ],
)
def test_bad_input_is_one_line_nonzero_and_leaves_no_results(override, message, request):
    out, done = background.outcome(request, COMMANDS)
    assert done.returncode != 0
    errors = [line for line in (done.stdout + done.stderr).splitlines() if "ERROR" in line]
    assert len(errors) == 1 and message in errors[0], done.stdout + done.stderr
    assert not (out / "results.csv").exists() and not (out / "cells").exists()


@pytest.mark.integration  # python -m src.run in a subprocess
def test_multirun_in_parallel_then_one_table_per_dataset(tmp_path, request):
    sweep, done = background.outcome(request, COMMANDS)
    assert done.returncode == 0, done.stderr + done.stdout
    assert len(list(sweep.rglob("results.csv"))) == 4
    assert report.main([str(sweep), "--out", str(tmp_path / "report")]) == 0
    for dataset in ("orl", "yale"):
        table = pd.read_csv(tmp_path / "report" / f"table_{dataset}.csv")
        assert {"KMeans mean", "KMeans std", "NMF mean", "NMF std"} <= set(table.columns)
        assert table["NMF mean"].between(0, 100).all()


# -- nothing stale, labels where needed, readable outputs, provenance -----------------------------------

def compose(*overrides):
    from hydra import compose as hydra_compose, initialize_config_dir

    with initialize_config_dir(str(REPO / "conf"), version_base="1.3"):
        return hydra_compose("config", overrides=list(overrides))


def test_a_cell_computed_by_other_code_is_recomputed_with_one_notice(tmp_path, monkeypatch, caplog):
    import json

    from src.running import provenance
    from src.running.cells import run_experiment

    cfg = compose("method=nmf", "dataset=yale", *SMALL)
    run_experiment(cfg, tmp_path)
    first = pd.read_csv(tmp_path / "results.csv")
    assert (first["code_fingerprint"] == provenance.code_fingerprint()).all()
    run_experiment(cfg, tmp_path)  # same code: every cell reused
    assert json.loads((tmp_path / "provenance.json").read_text())["cells_reused"] == 4

    monkeypatch.setattr(provenance, "code_fingerprint", lambda: "0123456789abcdef")  # as after an edit of src/
    caplog.clear()
    with caplog.at_level("WARNING"):
        run_experiment(cfg, tmp_path)
    notices = [r.getMessage() for r in caplog.records if "recomputing" in r.getMessage()]
    assert len(notices) == 1 and "4 finished cell(s)" in notices[0] and "other code" in notices[0]
    record = json.loads((tmp_path / "provenance.json").read_text())
    assert record["cells_computed"] == 4 and record["cells_reused"] == 0
    again = pd.read_csv(tmp_path / "results.csv")
    assert (again["code_fingerprint"] == "0123456789abcdef").all()
    pd.testing.assert_series_equal(first["acc"], again["acc"])  # same code path, same seeds: same numbers


def test_changed_parameters_recompute_and_become_columns(tmp_path, caplog):
    from src.running.cells import run_experiment

    run_experiment(compose("method=gnmf", "dataset=yale", *SMALL, "method.label=GNMF", "method.params.alpha=1"),
                   tmp_path)
    with caplog.at_level("WARNING"):  # the same label with another alpha: the cells on disk are not reused
        run_experiment(compose("method=gnmf", "dataset=yale", *SMALL, "method.label=GNMF",
                               "method.params.alpha=10"), tmp_path)
    assert any("other settings" in r.getMessage() for r in caplog.records)
    frame = pd.read_csv(tmp_path / "results.csv")
    assert {"param_alpha", "param_max_iter", "param_n_neighbors", "protocol_labels_mode", "dataset_preprocess",
            "config_hash", "code_fingerprint"} <= set(frame.columns)
    assert (frame["param_alpha"] == 10).all() and (frame["param_max_iter"] == 30).all()


def test_every_label_constrained_method_is_refused_without_labels():
    from src import methods
    from src.errors import ConfigError
    from src.running.settings import needs_labels_check

    constrained = {name for name, cls in methods.REGISTRY.items() if getattr(cls, "needs_labels", False)}
    assert constrained == {"cnmf", "cnmf_kl", "ccf", "semignmf", "copkmeans", "pcgnmf", "sda", "label_spreading", "knn"}
    for name in constrained:
        with pytest.raises(ConfigError, match=f"method={name} needs labelled samples.*protocol=cnmf"):
            needs_labels_check(name, {"mode": "none"}, "yale")
        needs_labels_check(name, {"mode": "fraction", "fraction": 0.1}, "yale")
    needs_labels_check("nmf", {"mode": "none"}, "yale")


@pytest.mark.integration
def test_a_constrained_method_under_a_protocol_without_labels_stops_before_any_data(tmp_path):
    """Picking a protocol without labels is refused in one line before any data set is read or fetched."""
    out = tmp_path / "run"
    env = {key: value for key, value in os.environ.items() if key != "REPRO_DATA_MIRROR"}
    done = subprocess.run([sys.executable, "-m", "src.run", "method=ccf", "dataset=yale", "protocol=unsupervised",
                           *SMALL, f"hydra.run.dir={out}", f"paths.data_dir={tmp_path / 'no-data'}",
                           "paths.mirror=/nonexistent"], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=600)
    errors = [line for line in (done.stdout + done.stderr).splitlines() if "ERROR" in line]
    assert done.returncode == 2
    assert len(errors) == 1 and "method=ccf needs labelled samples" in errors[0]
    assert not (out / "results.csv").exists() and not (out / "cells").exists()
    assert not (tmp_path / "no-data").exists()  # nothing was fetched


@pytest.mark.integration
@pytest.mark.parametrize("method, fraction", [("ccf", 0.3), ("cnmf", 0.1)])
def test_the_briefs_command_runs_a_label_method_with_its_papers_labelling(method, fraction, tmp_path, data_dir):
    """``python -m src.run method=ccf dataset=yale`` as typed (here on a small protocol): the CCF paper's labels."""
    import yaml
    out = tmp_path / "run"
    done = run(f"method={method}", "dataset=yale", *SMALL, f"hydra.run.dir={out}", f"paths.data_dir={data_dir}")
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"runs under protocol={method}" in done.stdout + done.stderr
    config = yaml.safe_load((out / "config.yaml").read_text())
    assert config["protocol"]["labels"]["mode"] == "fraction" and config["protocol"]["labels"]["fraction"] == fraction
    assert (out / "results.csv").is_file()


def test_label_methods_get_their_papers_protocol_unless_one_is_picked():
    from src.running.command_line import with_label_protocol
    assert with_label_protocol(["method=ccf", "dataset=yale"]) == (["method=ccf", "dataset=yale", "protocol=ccf"],
                                                                   "ccf")
    assert with_label_protocol(["-m", "method=cnmf,cnmf_kl,nmf"])[1] == "cnmf"
    assert with_label_protocol(["method=ccf", "protocol.ks=[2]"])[1] == "ccf"  # ks is no choice of labels
    for picked in (["protocol=unsupervised"], ["protocol.labels.mode=none"], ["experiment=lcf"]):
        assert with_label_protocol(["method=ccf", *picked])[1] is None
    assert with_label_protocol(["method=nmf"])[1] is None and with_label_protocol([])[1] is None
    assert with_label_protocol(["method=ccf,cnmf"])[1] is None  # two papers' labellings: the sweep check says


def test_an_override_hydra_cannot_read_is_one_line_saying_how_to_quote_it():
    from src.errors import ConfigError
    from src.running.command_line import check_override_grammar
    with pytest.raises(ConfigError, match=r"""quoted inside the override, e.g. 'dataset.path="/d/données.csv"'"""):
        check_override_grammar(["dataset=file", "dataset.path=/d/données.csv"])
    check_override_grammar(["-m", "dataset=file", 'dataset.path="/d/données (1).csv"', "method=nmf,cf"])


def test_an_output_directory_that_cannot_be_made_is_one_line(tmp_path):
    from src.errors import ConfigError
    from src.running.command_line import check_output_dir
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(ConfigError, match="hydra.run.dir=.* cannot be created"):
        check_output_dir([f"hydra.run.dir={blocker / 'run'}"])
    check_output_dir([f"hydra.sweep.dir={tmp_path / 'sweep'}"])
    assert (tmp_path / "sweep").is_dir()


def test_a_full_disk_mid_run_is_one_line_and_leaves_no_table(tmp_path, monkeypatch, data_dir, capfd):
    import errno

    import src.run as run_mod
    import src.running.cells as cells

    def full(out_dir, rows):
        raise OSError(errno.ENOSPC, "No space left on device", str(out_dir / "results.csv"))

    out = tmp_path / "run"
    monkeypatch.setattr(cells, "write_results", full)
    monkeypatch.setattr(sys, "argv", ["src.run", "method=nmf", "dataset=yale", *SMALL, f"hydra.run.dir={out}",
                                      f"paths.data_dir={data_dir}"])
    with pytest.raises(SystemExit) as info:
        run_mod.cli(("python", "-m", "src.run"))
    assert info.value.code == 1
    captured = capfd.readouterr()
    errors = [line for line in (captured.out + captured.err).splitlines() if "ERROR" in line]
    assert len(errors) == 1 and errors[0].endswith(f"could not write {out / 'results.csv'}: No space left on device")
    assert not (out / "results.csv").exists() and not list(out.glob("table*"))


@pytest.mark.integration
def test_run_directory_is_readable_and_records_its_provenance(tmp_path):
    import json
    import stat

    from src.running import provenance
    from src.data.fetch import REGISTRY

    out, data = tmp_path / "run", tmp_path / "data"
    # the library's default threads (conftest.py starts processes with one): 1 below is runtime.blas_threads' doing
    env = {key: value for key, value in os.environ.items() if key not in THREAD_VARIABLES}
    done = subprocess.run([sys.executable, "-m", "src.run", "method=nmf", "dataset=yale", *SMALL,
                           f"hydra.run.dir={out}", f"paths.data_dir={data}"], cwd=REPO, capture_output=True,
                          text=True, timeout=600, env=env, preexec_fn=lambda: os.umask(0o022))
    assert done.returncode == 0, done.stderr
    written = [p for p in list(out.rglob("*")) + list(data.rglob("*")) if p.is_file()]
    assert {"results.csv", "provenance.json", "figure_yale.png", "table_yale.md", "Yale_32x32.mat"} <= {
        p.name for p in written}
    modes = {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in written}
    assert set(modes.values()) == {"0o644"}, modes
    record = json.loads((out / "provenance.json").read_text())
    assert record["command"].startswith("python -m src.run method=nmf dataset=yale")
    assert "dataset=yale" in record["overrides"] and record["ended"] >= record["started"]
    assert record["data_files"] == [{"file": "Yale_32x32.mat", "path": str(data.resolve() / "raw" / "Yale_32x32.mat"),
                                     "sha256": REGISTRY["Yale_32x32.mat"].hashes[0].split(":")[1]}]
    assert record["blas"] and all(lib["num_threads"] == 1 for lib in record["blas"])  # runtime.blas_threads
    assert record["git"] == provenance.git_state() and record["cells_computed"] == 4


def test_the_local_launcher_runs_one_job_per_usable_core_unless_told_otherwise(monkeypatch):
    """The default number of parallel jobs is the cores this process may use (its CPU affinity, else every core),
    read when the launcher starts; ``hydra.launcher.n_jobs=1`` gives 1."""
    from hydra import compose as hydra_compose, initialize_config_dir
    from hydra.utils import instantiate

    from src import resolvers

    with initialize_config_dir(str(REPO / "conf"), version_base="1.3"):
        launcher = hydra_compose("config", return_hydra_config=True).hydra.launcher
        one_worker = hydra_compose("config", overrides=["hydra.launcher.n_jobs=1"], return_hydra_config=True).hydra.launcher
    assert launcher.n_jobs == resolvers.usable_cores() >= 1
    assert instantiate(launcher).joblib["n_jobs"] == resolvers.usable_cores()  # what joblib.Parallel is given
    assert one_worker.n_jobs == 1
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 2, 5}, raising=False)  # e.g. taskset -c 0,2,5
    assert launcher.n_jobs == 3
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)  # a system without affinity (macOS)
    monkeypatch.setattr(os, "cpu_count", lambda: 6)
    assert launcher.n_jobs == 6


def test_paper_settings_are_checked_before_hydra_starts():
    from src.running.command_line import check_group_choices, with_experiment_group
    from src.errors import ConfigError

    check_group_choices(["experiment=cnmf", "method=nmf,cnmf", "solver=reference,fixed"])
    check_group_choices(["experiment=benchmark/labels10"])
    with pytest.raises(ConfigError, match="solver='tight' is not one of fixed, reference"):
        check_group_choices(["solver=tight"])
    with pytest.raises(ConfigError, match=r"experiment='nope' is not one of benchmark/labels10, .*, cai, ccf, cnmf"):
        check_group_choices(with_experiment_group(["+paper/nope=experiment"]))
    with pytest.raises(ConfigError, match="method='foo' is not one of"):
        check_group_choices(["method=nmf,foo"])


#: The deprecated selections of a paper's settings and of a benchmark track's, with what they now read as.
#: Each: the old override, the new, the old group (a folder) and the new choice, where its sweep writes.
OLD_FORMS = [("+paper/cnmf=experiment", "experiment=cnmf", "paper/cnmf", "cnmf", "reproduce/cnmf/runs"),
             ("+benchmark/labels10=experiment", "experiment=benchmark/labels10", "benchmark/labels10",
              "benchmark/labels10", "benchmark/labels10/runs")]


def without_choices(cfg) -> dict:
    """A composed config with Hydra's node, less what records how it was chosen (the overrides as typed, the
    groups' choices)."""
    from omegaconf import OmegaConf

    tree = OmegaConf.to_container(cfg)
    del tree["hydra"]["runtime"], tree["hydra"]["overrides"], tree["hydra"]["job"]["override_dirname"]
    return tree


@pytest.mark.parametrize("old, new, group, choice, runs", OLD_FORMS)
def test_the_old_selection_of_a_papers_settings_composes_the_same_config_with_one_warning(
        old, new, group, choice, runs, tmp_path, caplog):
    """``+paper/<name>=experiment`` is read as ``experiment=<name>`` for one release, with one warning naming
    the new form; the settings, selected the old way from a copy of the old layout (the file as the option
    ``experiment`` of the group ``paper/<name>``, appended after the primary config), compose the config the
    group ``experiment`` composes: the job's and its sweep's."""
    from hydra import compose as hydra_compose, initialize_config_dir

    from src.running.command_line import with_experiment_group

    typed = ["-m", old, "dataset=yale", "method=nmf"]
    with caplog.at_level("WARNING", logger="src.running.command_line"):
        assert with_experiment_group(typed) == ["-m", new, "dataset=yale", "method=nmf"]
    assert [record.getMessage() for record in caplog.records] == \
        [f"{old} is deprecated and will be removed in the next release: write {new}"]
    assert with_experiment_group(["-m", new, "dataset=yale"]) == ["-m", new, "dataset=yale"]
    assert len(caplog.records) == 1  # nothing to say about the new form

    layout = tmp_path / "old"
    (layout / group).mkdir(parents=True)
    (layout / group / "experiment.yaml").write_text((REPO / "conf" / "experiment" / f"{choice}.yaml").read_text())
    with initialize_config_dir(str(REPO / "conf"), version_base="1.3"):
        before, after = (hydra_compose("config", overrides=[f"hydra.searchpath=[file://{layout}]", chosen],
                                       return_hydra_config=True) for chosen in (old, new))
    composed = without_choices(after)
    assert without_choices(before) == composed
    # the experiment's sweep wins over config.yaml's, as it did appended after the primary config
    assert composed["hydra"]["sweep"]["dir"] == "${paths.output_dir}/" + runs
    assert composed["hydra"]["sweeper"]["params"]["dataset"]


@pytest.mark.integration  # python -m src.run in a subprocess, Hydra's --cfg: ~3 s
def test_the_command_line_reads_the_old_form_as_the_new_with_one_warning(request):
    old, new = background.outcome(request, COMMANDS)
    assert old.returncode == new.returncode == 0, old.stderr + new.stderr
    assert old.stdout == new.stdout and "fraction: 0.3" in new.stdout  # the CCF protocol: 30% labelled
    warnings = [line for line in old.stderr.splitlines() if "WARNING" in line]
    assert warnings == ["[WARNING] +paper/ccf=experiment is deprecated and will be removed in the next release: "
                        "write experiment=ccf"]
    assert "deprecated" not in new.stderr


def test_provenance_lists_only_the_data_files_of_its_own_job(tmp_path):
    import json

    from src.running.cells import run_experiment

    run_experiment(compose("method=nmf", "dataset=yale", *SMALL), tmp_path / "yale")
    run_experiment(compose("method=nmf", "dataset=orl", *SMALL), tmp_path / "orl")  # the same process, next job
    files = [f["file"] for f in json.loads((tmp_path / "orl" / "provenance.json").read_text())["data_files"]]
    assert files == ["ORL_32x32.mat"]


# -- dry runs ------------------------------------------------------------------------------------------------------

def test_a_dry_run_checks_loads_and_counts_the_cells_but_computes_and_writes_nothing(tmp_path, caplog):
    from src.errors import ConfigError
    from src.running.cells import run_experiment

    out = tmp_path / "run"
    with caplog.at_level("INFO"):
        assert run_experiment(compose("method=nmf", "dataset=yale", *SMALL, "dry_run=true"), out) is None
    assert not out.exists()  # no cell, no results.csv, no config.yaml, no provenance.json
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("dry run")]
    assert len(lines) == 1 and "yale/NMF: 4 cells (k = 2, 3; 2 trials each), 0 already done" in lines[0]
    assert "4 to compute" in lines[0]
    assert any("dataset yale: X (165, 1024)" in r.getMessage() for r in caplog.records)  # the data were loaded

    run_experiment(compose("method=nmf", "dataset=yale", *SMALL[:3], "method.params.max_iter=30", "protocol.ks=[2]"),
                   out)  # the cells of k = 2
    written = {path: path.stat().st_mtime_ns for path in out.rglob("*")}
    caplog.clear()
    with caplog.at_level("INFO"):
        assert run_experiment(compose("method=nmf", "dataset=yale", *SMALL, "dry_run=true"), out) is None
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("dry run")]
    assert "2 already done" in lines[0] and "2 to compute" in lines[0]
    assert {path: path.stat().st_mtime_ns for path in out.rglob("*")} == written  # nothing touched

    with pytest.raises(ConfigError, match="max_iter=0"):  # every setting is checked
        run_experiment(compose("method=nmf", "dataset=yale", *SMALL[:3], "method.params.max_iter=0", "dry_run=true"),
                       tmp_path / "bad")
    with pytest.raises(ConfigError, match="dry_run='yes' must be true or false"):
        run_experiment(compose("method=nmf", "dataset=yale", *SMALL, "dry_run=yes"), tmp_path / "bad")


@pytest.mark.integration  # python -m src.run -m in a subprocess
def test_a_dry_multirun_checks_every_job_and_computes_nothing(request):
    sweep, done = background.outcome(request, COMMANDS)
    log = done.stdout + done.stderr
    assert done.returncode == 0, log
    assert "checked the 4 jobs of this sweep: all valid" in log
    assert sum("dry run of " in line and "4 to compute" in line for line in log.splitlines()) == 4, log
    assert sum("(dry run: no cell computed, no result written)" in line for line in log.splitlines()) == 4, log
    assert not list(sweep.rglob("results.csv")) and not list(sweep.rglob("cells"))


def test_an_import_path_as_method_is_the_outside_config_holding_it():
    from src.running.command_line import with_outside_method
    assert with_outside_method(["method=mypkg.mine:MyNMF", "dataset=yale"]) == \
        ["method=outside", 'method.name="mypkg.mine:MyNMF"', 'method.label="MyNMF"', "dataset=yale"]
    assert with_outside_method(["method=path/to/my_nmf.py:Mine", "method.label=Other"]) == \
        ["method=outside", 'method.name="path/to/my_nmf.py:Mine"', "method.label=Other"]
    assert with_outside_method(["method=nmf", "-m", "method=nmf,cnmf"]) == ["method=nmf", "-m", "method=nmf,cnmf"]


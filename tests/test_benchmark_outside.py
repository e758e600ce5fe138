"""Your method and your data against the family through ``python -m src.benchmark`` (src/benchmark.py): the gate's
refusals, cells that fail or hang, resuming, the report, and a data set too small for the protocol.

The family's shipped cells are replaced by a small synthetic file on Yale (k = 2, 3; two trials), with Yale's
real digest, so that the runs here compute a few cells only."""

import hashlib
import logging
import os
import signal
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from src import benchmark
from src.reproduction import contenders, shipped
from src.running.pool import plan_jobs
from src.running.settings import thaw

MODULE = "fixtures.outside.estimators"
SMALL = ["--datasets", "yale", "--overrides", "protocol.ks=[2,3]", "protocol.n_trials=2"]
FAMILY = {"KMeans": "kmeans", "NMF": "nmf", "GNMF": "gnmf", "CNMF": "cnmf"}


@pytest.fixture(scope="module")
def family_file(tmp_path_factory, data_dir):
    """A synthetic shipped file: four family methods on Yale in the three tracks, Yale's digest as loaded here."""
    mirror = Path(os.environ["REPRO_DATA_MIRROR"])
    job = plan_jobs([contenders.Sweeps("u", (("experiment=benchmark/unsupervised", "dataset=yale", "method=nmf"),))],
                    [f"paths.mirror={mirror}", f"paths.data_dir={data_dir}"])[0]
    digest = shipped.local_digests({"yale": thaw(job.spec.dataset.config)}, data_dir, mirror)["yale"]
    rng = np.random.default_rng(0)
    rows = [dict(track=track, dataset="yale", method=method, label=method, estimator=name, k=k, trial=trial,
                 acc=acc, nmi=acc - 0.1, acc_unlabelled=np.nan if track == "unsupervised" else acc - 0.02,
                 nmi_unlabelled=np.nan if track == "unsupervised" else acc - 0.12, ari=acc - 0.2,
                 ari_unlabelled=np.nan if track == "unsupervised" else acc - 0.22, partition="ab", converged=True,
                 warnings="", objective=1.0,
                 fit_seconds=0.2,
                 kmeans_seconds=0.1, n_iter=5, seed=0, config_hash="h", code_fingerprint="f", data_sha256=digest)
            for track in contenders.TRACKS for method, name in FAMILY.items() if track != "unsupervised"
            or name != "cnmf" for k in (2, 3) for trial in (0, 1) for acc in [rng.uniform(0.3, 0.6)]]
    return shipped.write(pd.DataFrame(rows).reindex(columns=list(shipped.COLUMNS)),
                         tmp_path_factory.mktemp("family") / "cells.csv.gz")


@pytest.fixture
def run(family_file, data_dir, monkeypatch, caplog):
    """``python -m src.benchmark`` in this process on the synthetic family; returns (status, error lines)."""
    monkeypatch.setattr(shipped, "FILE", family_file)
    monkeypatch.setattr(shipped, "TUNED_FILE", family_file.parent / "no_tuned_cells.csv.gz")  # none ship here
    # this process keeps its SIGTERM handler (the module's own signal stays real: the time limits need SIGALRM)
    monkeypatch.setattr(benchmark, "signal", SimpleNamespace(signal=lambda *args: None, SIGTERM=signal.SIGTERM))

    def call(*argv, overrides=()):
        caplog.clear()
        with caplog.at_level(logging.INFO):
            status = benchmark.main([*argv, "--workers", "1", *SMALL, f"paths.data_dir={data_dir}", *overrides])
        return status, [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]

    return call


def digests(folder: Path) -> dict:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.integration
@pytest.mark.parametrize("name, check", [
    ("no_such_package.mine:MyNMF", "import"), (f"{MODULE}:Missing", "import"),
    (f"{MODULE}:NotAnEstimator", "estimator"), (f"{MODULE}:Raises", "fit"), (f"{MODULE}:GivesNaN", "output"),
    (f"{MODULE}:WrongShape", "output"), (f"{MODULE}:Unseeded", "seed"), (f"{MODULE}:Hangs", "fit"),
])
def test_a_bad_method_is_one_line_status_2_and_nothing_written(run, tmp_path, family_file, name, check):
    earlier = tmp_path / "earlier"  # the outputs of an earlier run stay as they were
    (earlier / "unsupervised").mkdir(parents=True)
    (earlier / "unsupervised" / "results.csv").write_text("dataset,method\nyale,Mine\n")
    before, shipped_before = digests(earlier), hashlib.sha256(family_file.read_bytes()).hexdigest()
    extra = ["--cell-timeout", "2"] if "Hangs" in name else []
    status, errors = run("--method", name, "--out", str(tmp_path / "out"), *extra)
    assert status == 2 and len(errors) == 1 and errors[0].startswith(f"{check}: "), errors
    assert not (tmp_path / "out").exists()
    assert digests(earlier) == before and hashlib.sha256(family_file.read_bytes()).hexdigest() == shipped_before


@pytest.mark.integration
def test_two_methods_are_ranked_together_in_the_tracks_they_enter(run, tmp_path):
    out = tmp_path / "two"
    status, errors = run("--method", f"{MODULE}:PlainNMF", f"{MODULE}:LabelNMF", "--out", str(out))
    assert status == 0 and not errors
    report = (out / "report.md").read_text()
    assert report.startswith("# PlainNMF and LabelNMF against the family")
    assert "**LabelNMF** (extends NMF)" in report
    computed = pd.read_csv(out / "schedule.csv")
    assert set(computed["method"]) == {"PlainNMF", "LabelNMF"}  # its own cells only: the family's are shipped
    assert len(computed) == 4 * (3 + 2)  # 4 cells per job: PlainNMF in three tracks, LabelNMF in two
    assert {p.parent.parent.name for p in out.glob("*/runs/*")} == set(contenders.TRACKS)


@pytest.mark.integration
def test_a_cell_that_fails_or_runs_too_long_is_named_and_the_rest_kept_then_resumed(run, tmp_path):
    out = tmp_path / "slow"
    status, errors = run("--method", f"{MODULE}:SlowAtThree", "--tracks", "unsupervised", "--out", str(out),
                         "--cell-timeout", "1")
    assert status == 1
    named = [e for e in errors if e.startswith("unsupervised yale")]  # as each cell fails; then the jobs listed
    assert sorted(named) == [f"unsupervised yale SlowAtThree: cell k=3 trial={t}: CellTimeLimit: stopped after 1 s, "
                             "the cell time limit (set it with --cell-timeout)" for t in (0, 1)]
    kept = list((out / "unsupervised" / "runs").rglob("cells/*"))
    assert len(kept) == 2  # the two cells of k = 2
    status, errors = run("--method", f"{MODULE}:SlowAtThree", "--tracks", "unsupervised", "--out", str(out),
                         "--cell-timeout", "60")
    assert status == 0 and not errors
    schedule = pd.read_csv(out / "schedule.csv")
    assert sorted(zip(schedule["k"], schedule["status"])) == [(2, "reused"), (2, "reused"), (3, "computed"),
                                                               (3, "computed")]


@pytest.mark.integration
def test_a_nan_in_one_cell_is_named_with_its_data_set_k_and_trial(run, tmp_path):
    status, errors = run("--method", f"{MODULE}:NaNAtThree", "--tracks", "unsupervised", "--out",
                         str(tmp_path / "nan"))
    assert status == 1
    assert sorted(e for e in errors if e.startswith("unsupervised yale")) == [
        f"unsupervised yale NaNAtThree: cell k=3 trial={t}: ValueError: fit_transform returned 1 NaN or infinite "
        "value(s)"
        for t in (0, 1)]


def test_a_data_set_too_small_for_the_protocol_is_refused_before_any_cell(run, tmp_path):
    path = tmp_path / "tiny.npz"
    np.savez(path, X=np.random.default_rng(0).random((7, 4)), y=np.array([0, 0, 0, 1, 1, 1, 2]))
    status, errors = run("--dataset", str(path), "--out", str(tmp_path / "out"))
    assert status == 2 and errors == [f"--dataset {path}: class 2 has 1 sample(s); each class needs at least 2 (one "
                                      "labelled and one to cluster): drop or merge the small classes (1 of 3 are "
                                      "too small)"]
    assert not (tmp_path / "out").exists()


def test_a_method_and_a_data_set_together_or_a_family_label_are_refused(run, tmp_path):
    status, errors = run("--method", f"{MODULE}:PlainNMF", "--dataset", "x.npz")
    assert status == 2 and "not both" in errors[0]
    status, errors = run("--method", f"{MODULE}:PlainNMF", "--label", "NMF")
    assert status == 2 and "must differ" in errors[0]


@pytest.mark.integration
def test_what_a_method_warns_is_counted_per_cell_and_reported_not_printed(run, tmp_path, caplog, capfd):
    out = tmp_path / "capped"
    status, errors = run("--method", f"{MODULE}:Capped", "--tracks", "unsupervised", "labels10", "--out", str(out))
    assert status == 0 and not errors
    messages = [record.getMessage() for record in caplog.records]
    opening = next(message for message in messages if " to compute as " in message)
    assert opening.startswith("2 tracks, 2 jobs, 8 cells: 0 already done, 8 to compute as 4 distinct cells")
    said = [message for message in messages if "ConvergenceWarning" in message]
    assert said == ["Capped: ConvergenceWarning in 4 of 4 cells: Maximum number of iterations 3 reached. Increase "
                    "it to improve convergence."], said  # one line for the method; one cell serves both tracks
    assert "ConvergenceWarning" not in capfd.readouterr().err  # no worker printed it
    rows = pd.concat([pd.read_csv(path) for path in out.glob("*/runs/*/results.csv")])
    assert len(rows) == 8 and rows["warnings"].str.contains('"count": 1').all()
    report = (out / "report.md").read_text()
    assert "**Capped: 4 of its 4 cells stopped at the iteration cap (max_iter=3) rather than converging**" in \
        " ".join(report.split("\n## ")[0].split())  # in its opening, before any section
    assert "| Capped | 4 | 4 | 4 | ConvergenceWarning (4) |" in report


@pytest.mark.integration
@pytest.mark.parametrize("argv, message", [
    (["--grid", "beta=1,2"], "--grid beta: PlainNMF takes no parameter 'beta'"),
    (["--grid", "max_iter="], "--grid 'max_iter=' gives no value"),
    (["--grid", "max_iter=50,100", "--param", "max_iter=20"], "--grid max_iter and --param max_iter"),
    (["--grid", "max_iter=50,-1"], "--grid max_iter=-1: PlainNMF refuses it (fit: "),
    (["--grid", "max_iter=-1,50"], "--grid max_iter=-1: PlainNMF refuses it (fit: "),  # the grid's default
])
def test_a_bad_grid_is_one_line_status_2_and_nothing_written(run, tmp_path, argv, message):
    status, errors = run("--method", f"{MODULE}:PlainNMF", "--out", str(tmp_path / "out"), *argv)
    assert status == 2 and len(errors) == 1 and errors[0].startswith(message), errors
    assert not (tmp_path / "out").exists()


@pytest.mark.integration
def test_a_contender_given_a_grid_is_tuned_by_the_rule_and_its_report_says_so(run, tmp_path):
    out = tmp_path / "grid"
    status, errors = run("--method", f"{MODULE}:PlainNMF", "--tracks", "unsupervised", "labels30", "--out", str(out),
                         "--grid", "max_iter=20,200,400")
    assert status == 0 and not errors
    computed = pd.read_csv(out / "schedule.csv")
    assert sorted(computed["method"].unique()) == ["PlainNMF", "PlainNMF(max_iter=20)", "PlainNMF(max_iter=400)"]
    assert len(computed) == 2 * 3 * 4  # a cell per track, value and trial
    assert (computed["status"] == "computed").sum() == 3 * 4  # each serving both tracks (one clustering)
    tuned = pd.read_csv(out / "tuned" / "labels30.csv")
    assert len(tuned) == 4 and set(tuned["selection"]) <= {"labelled", "tie", "too few"}
    assert set(tuned["default_setting"]) == {"max_iter=200"}
    oracle = pd.read_csv(out / "tuned" / "unsupervised.csv")
    assert set(oracle["selection"]) <= {"oracle", "tie"}
    settings = pd.read_csv(out / "tuned" / "labels30_settings.csv")
    assert len(settings) == 3 * 4 and settings.groupby(["k", "trial"])["chosen"].sum().eq(1).all()
    report = (out / "report.md").read_text()
    assert "PlainNMF: tuned by the benchmark on the labels it may see (max_iter over 20, 200, 400 (default 200))" \
        in report
    assert "the family's tuned cells do not ship for this track" in report  # the synthetic family has none


@pytest.mark.integration
def test_a_grid_value_whose_cells_fail_is_named_and_the_others_kept(run, tmp_path):
    out = tmp_path / "failing"
    status, errors = run("--method", f"{MODULE}:NaNAtThreeWhenLong", "--tracks", "unsupervised", "--out", str(out),
                         "--grid", "max_iter=20,200,400")
    assert status == 1
    assert sorted(e for e in errors if e.startswith("tuned unsupervised yale")) == [  # as each cell fails
        f"tuned unsupervised yale NaNAtThreeWhenLong(max_iter=400): cell k=3 trial={t}: ValueError: fit_transform "
        "returned 1 NaN or infinite value(s)" for t in (0, 1)]
    kept = {job.name: len(list((job / "cells").iterdir()))
            for job in (out / "tuned" / "unsupervised" / "runs").iterdir()}
    assert kept == {"yale_NaNAtThreeWhenLong-max_iter=20": 4, "yale_NaNAtThreeWhenLong-max_iter=400": 2}  # its k = 2
    assert len(list((out / "unsupervised" / "runs").rglob("cells/*"))) == 4  # the default's, all kept


@pytest.mark.integration
def test_a_label_contender_is_cross_validated_on_folds_of_the_labelled_samples(run, tmp_path):
    out = tmp_path / "folds"
    status, errors = run("--method", f"{MODULE}:LabelNMF", "--tracks", "labels30", "--out", str(out),
                         "--grid", "max_iter=20,200", overrides=["protocol.labels.fraction=0.9"])
    assert status == 0 and not errors
    folds = list((out / "tuned" / "labels30" / "folds").glob("*/*/results.csv"))
    assert len(folds) == 2 * 2  # two settings, two folds
    tuned = pd.read_csv(out / "tuned" / "labels30.csv")
    assert set(tuned["selection"]) <= {"cross-validated", "tie"} and (tuned["n_validation"] >= 5).all()


@pytest.mark.integration
def test_a_contender_set_with_param_is_told_that_such_values_flatter_it(run, tmp_path):
    out = tmp_path / "param"
    status, errors = run("--method", f"{MODULE}:PlainNMF", "--tracks", "unsupervised", "--out", str(out),
                         "--param", "max_iter=300")
    assert status == 0 and not errors
    assert "Values chosen by looking at this benchmark's scores flatter the method" in (out / "report.md").read_text()


@pytest.mark.slow
def test_your_data_tuned_ranks_the_family_tuned_and_points_to_the_choice(run, tmp_path):
    """``--dataset mine.npz --tune``: every family method tuned on the file, as on the benchmark's data sets; the
    choice among them on the file is ``python -m src.cluster``'s, which the report names (the benchmark's
    entrants are the benchmark data sets' own, so none is ranked here)."""
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(4), 20)  # 6 labelled a class at 30%: two folds score at k = 2 and 3
    path = tmp_path / "mine.npz"
    np.savez(path, X=np.abs(3 * rng.random((4, 10))[y] + 2 * rng.random((80, 10))), y=y)
    out = tmp_path / "yours"
    status, errors = run("--dataset", str(path), "--tune", "--tracks", "labels30", "--out", str(out))
    assert status == 0 and not errors
    tuned = pd.read_csv(out / "tuned" / "labels30.csv")
    settings = pd.read_csv(out / "tuned" / "labels30_settings.csv")
    assert set(tuned["dataset"]) == set(settings["dataset"]) == {"mine"}
    assert settings.groupby(["method", "k", "trial"])["chosen"].sum().eq(1).all()  # one choice per method and trial
    folds = settings[settings["estimator"] == "semignmf"].filter(like="validation_acc_fold")
    assert folds.notna().any().all()  # a label method scored on its folds at the k where they can score
    report = (out / "report.md").read_text()
    assert "## The family chooses itself" not in report and "| Choice |" not in report
    assert "every family method: tuned on this file" in report and "`python -m src.cluster`" in report

"""``python -m src.cluster``: a partially labelled file clustered by the method the family chooses on its known
labels (src/choice/your_data.py); every bad file one line, exit status 2, nothing written."""

import json
import logging

import numpy as np
import pandas as pd
import pytest

from src import cluster
from src.errors import ConfigError
from src.reproduction import contenders
from src.running.pool.schedule import published_costs
from src.choice import your_data


def write_file(tmp_path, told=None, seed=0):
    """Three classes (1, 2, 3) of 15 samples in 10 non-negative features, about 40% of the labels known."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(1, 4), 15)
    X = np.abs(rng.random((3, 10))[y - 1] * 3 + rng.normal(0, 0.5, (45, 10)))
    if told is None:
        told = np.where(rng.random(45) < 0.4, y, -1)
        told[[0, 15, 30, 1, 16, 31]] = y[[0, 15, 30, 1, 16, 31]]  # two known a class at least
    path = tmp_path / "mine.npz"
    np.savez(path, X=X, y=told)
    return path, y, told


def test_the_command_writes_every_samples_class_the_candidates_a_report_and_provenance(tmp_path):
    path, y, told = write_file(tmp_path)
    out = tmp_path / "out"
    assert cluster.main([str(path), "--methods", "kmeans", "gnmf", "cnmf", "--repeats", "1", "--out", str(out)]) == 0
    assert {p.name for p in out.iterdir()} == {"labels.csv", "candidates.csv", "candidates.png", "report.md",
                                               "provenance.json"}
    labels = pd.read_csv(out / "labels.csv")
    known = told != -1
    assert (labels.loc[known, "given"] == told[known]).all() and labels.loc[~known, "given"].isna().all()
    assert (labels["predicted"] == y).mean() >= 0.9  # the classes come back in the file's own values
    assert (labels.loc[known, "confidence"] == 1).all() and labels["confidence"].between(0, 1).all()
    candidates = pd.read_csv(out / "candidates.csv")
    # each method at each setting of its grid, each with its three readouts (COP-KMeans would have one)
    assert candidates["param_method"].tolist() == ["kmeans"] * 3 + ["gnmf"] * 12 + ["cnmf"] * 3
    assert candidates["param_readout"].tolist()[:3] == ["clusters", "nearest_labelled", "spread_labelled"]
    report = (out / "report.md").read_text()
    assert report.splitlines()[2].startswith("**Use ") and "![The score that chose, one row a method]" in report
    assert not any(p.name.startswith(".out.") for p in tmp_path.iterdir())  # no staging folder left
    said = json.loads((out / "provenance.json").read_text())["time_left"]  # how far the time left was
    assert [e["cells"] for e in said["forecast_errors"]] == [0.1, 0.25, 0.5] and isinstance(said["lines"], list)


@pytest.mark.parametrize("told, says", [
    (np.full(45, -1), "no label is known"),
    (np.where(np.arange(45) < 5, 1, -1), "a single class is known"),
    (np.where(np.arange(45) < 10, np.arange(45) % 3 + 0.5, -1), "must be integers"),
])
def test_a_file_that_cannot_choose_is_one_line_status_2_and_nothing_written(tmp_path, caplog, told, says):
    path, _, _ = write_file(tmp_path, told=told)
    out = tmp_path / "out"
    with caplog.at_level(logging.ERROR):
        assert cluster.main([str(path), "--methods", "kmeans", "--out", str(out)]) == 2
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and says in errors[0] and "\n" not in errors[0]
    assert not out.exists() and list(tmp_path.iterdir()) == [path]


@pytest.mark.parametrize("args, says", [(["--alpha", "0"], "--alpha 0"), (["--alpha", "1.5"], "--alpha 1.5"),
                                         (["--folds", "1"], "--folds 1")])
def test_a_rule_that_cannot_run_is_one_line_status_2_before_any_fit(tmp_path, caplog, monkeypatch, args, says):
    path, _, _ = write_file(tmp_path)
    monkeypatch.setattr(your_data, "run", lambda *a, **k: pytest.fail("fitted with a rule refused"))
    with caplog.at_level(logging.ERROR):
        assert cluster.main([str(path), "--methods", "kmeans", *args]) == 2
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and says in errors[0]


def test_the_rule_runs_at_the_level_asked_and_says_so(tmp_path):
    path, _, _ = write_file(tmp_path)
    out = tmp_path / "out"
    assert cluster.main([str(path), "--methods", "kmeans", "--repeats", "1", "--alpha", "0.2", "--out", str(out)]) == 0
    choice = json.loads((out / "provenance.json").read_text())["choice"]
    assert choice["alpha"] == 0.2 and choice["prior_how"] in ("mean", "regret")
    assert "at level 0.2" in (out / "report.md").read_text()


def test_a_partially_labelled_file_given_to_the_benchmark_names_the_command_that_reads_it():
    with pytest.raises(ConfigError, match="python -m src.cluster mine.npz"):
        contenders.check_user_data(np.array([0, 1, 1, 2, 2]), "mine.npz", ("-1", "1", "2"))


def test_a_folder_that_cannot_be_written_is_one_line_and_leaves_nothing(tmp_path, caplog):
    path, _, _ = write_file(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with caplog.at_level(logging.ERROR):
        assert cluster.main([str(path), "--methods", "kmeans", "--repeats", "1", "--jobs", "1",
                             "--out", str(blocker / "out")]) == 2
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and "cannot make the folder" in errors[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "mine.npz"]


def test_a_fit_is_priced_from_the_benchmarks_cell_nearest_in_trial_size_and_k_scaled_by_both():
    sizes, costs = your_data.trial_sizes(), published_costs()
    n = sizes[("coil20", 10)]
    cost = costs[("benchmark/labels30/runs/coil20_KMeans", 10)]
    assert your_data.priced(["kmeans"], n, 10)["kmeans"] == pytest.approx(cost)
    assert your_data.priced(["kmeans"], n + 1, 10)["kmeans"] == pytest.approx(cost * (n + 1) / n)
    # COIL20 whole (1,440 samples, 20 classes): the cell nearest in both, scaled by both ratios
    (dataset, k), size = min(sizes.items(), key=lambda item: np.log(item[1] / 1440) ** 2 + np.log(item[0][1] / 20) ** 2)
    nearest = costs[(f"benchmark/labels30/runs/{dataset}_KMeans", k)]
    assert your_data.priced(["kmeans"], 1440, 20)["kmeans"] == pytest.approx(nearest * 1440 / size * 20 / k)
    assert your_data.priced(["kmeans"], 1440, 20)["kmeans"] > 4 * cost  # more than the ratio of samples alone


def test_the_progress_says_the_fits_the_work_and_the_time_left(caplog, monkeypatch):
    monkeypatch.setattr(your_data.FitProgress, "EVERY", 0.0)
    progress = your_data.FitProgress({"kmeans": 1.0, "sda": 3.0}, ["kmeans", "sda"])
    with caplog.at_level(logging.DEBUG, logger="src.choice.your_data"):
        progress("kmeans")
        progress("sda")
    lines = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert lines[0].startswith("[fits 1/2, work 25%]") and "left" in lines[0]
    assert lines[1].startswith("[fits 2/2, work 100%]") and lines[1].endswith("in all")
    # the last fit logs how far the time left was from the time that remained, for us (DEBUG): a line was
    # read (EVERY is 0), so how far the lines were is the reader's
    assert lines[2:] == ["the time left said on 1 line before the end: " + lines[2].split(": ", 1)[1]]
    errors = [r.getMessage() for r in caplog.records if r.getMessage().startswith("the time left forecast at 50% "
                                                                                  "of the fits")]
    assert len(errors) == 1 and "it took" in errors[0]
    assert all(r.levelno == logging.DEBUG for r in caplog.records if r.getMessage().startswith("the time left forecast"))


def test_a_run_that_ends_before_its_first_line_says_only_its_last(caplog):
    """How far the forecasts were is ours (DEBUG, and provenance.json): the reader of a short run sees one line."""
    clock = iter([0.0, 1.0, 2.0])  # the start, then two fits, long before a line is due
    progress = your_data.FitProgress(dict.fromkeys("ab", 1.0), list("ab"), clock=lambda: next(clock))
    with caplog.at_level(logging.INFO, logger="src.choice.your_data"):
        progress("a", 1.0)
        progress("b", 1.0)
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and said[0].startswith("[fits 2/2, work 100%]") and said[0].endswith("in all")
    assert progress.errors["lines"] == [] and len(progress.errors["forecast_errors"]) == 3


def test_the_last_fit_records_how_far_each_line_a_person_read_was_from_the_time_that_remained(caplog):
    clock = iter([0.0, 10.0, 20.0, 45.0, 50.0])  # the start, then four fits: a line is due at 45 s only
    progress = your_data.FitProgress(dict.fromkeys("ab", 1.0), list("abab"), clock=lambda: next(clock))
    with caplog.at_level(logging.INFO, logger="src.choice.your_data"):
        for name, seconds in zip("abab", (10.0, 10.0, 25.0, 5.0)):
            progress(name, seconds)
    # at 45 s, 45 s of work done and b's fit left at b's mean of 10 s: 10 s said where 5 s remained
    assert [line["elapsed"] for line in progress.errors["lines"]] == [45.0]
    assert progress.errors["lines"][0]["forecast"] == pytest.approx(10.0)
    assert progress.errors["lines"][0]["error"] == pytest.approx(10.0 / 5.0 - 1)
    assert [e["cells"] for e in progress.errors["forecast_errors"]] == [0.1, 0.25, 0.5]
    assert caplog.records[-1].getMessage() == ("the time left said on 1 line before the end: +100% to +100% of "
                                               "the time that remained")
    assert your_data.said_lines([]) == "no progress line said a time left before the end"


def test_a_method_that_has_run_is_paced_by_its_own_seconds_the_others_by_their_price():
    progress = your_data.FitProgress({"a": 1.0, "b": 1.0}, ["a", "b", "a", "b"])
    progress("a", 4.0)  # four times its price: the price of b is read at that ratio until b runs
    assert progress.seconds_left() == pytest.approx((4.0, 4.0 + 4.0 + 4.0))
    progress("b", 1.0)
    assert progress.seconds_left() == pytest.approx((5.0, 4.0 + 1.0))
    progress("a")  # no seconds said: its price
    assert progress.seconds_left() == pytest.approx((6.0, 1.0))
    progress = your_data.FitProgress(dict.fromkeys("abcd", 1.0), list("abcd"))
    for name, seconds in zip("abc", (10.0, 1.0, 1.0)):
        progress(name, seconds)
    assert progress.seconds_left() == pytest.approx((12.0, 1.0))  # d at the median ratio, not at 12 / 3
    progress = your_data.FitProgress({"a": 1.0, "b": 1.0}, ["a", "a", "b"])
    progress("b", 2.0)  # the fits end in any order: those left are counted by method
    assert progress.seconds_left() == pytest.approx((2.0, 2.0 + 2.0))


def test_the_time_left_counts_a_fit_under_way_in_each_other_process(caplog, monkeypatch):
    """With two processes the first fit to end has the other's about as long again behind it."""
    clock = iter([0.0, 10.0, 20.0])  # the start, then two fits
    monkeypatch.setattr(your_data.FitProgress, "EVERY", 0.0)
    progress = your_data.FitProgress(dict.fromkeys("ab", 1.0), list("aabb"), workers=2, clock=lambda: next(clock))
    assert progress.begun(10.0) == 0.0  # nothing done: no pace yet
    with caplog.at_level(logging.INFO, logger="src.choice.your_data"):
        progress("a", 10.0)  # 10 s in, one fit of 10 s done and the other process 10 s into its own
        assert progress.begun(10.0) == pytest.approx(20.0)
        assert progress.samples[-1][3] == pytest.approx(10.0 / 20.0 * 30.0)  # 30 s of work left on 2 processes
        progress("b", 10.0)
    assert "about 15 s left" in caplog.records[0].getMessage()
    progress.fits, progress.count = 3, 4  # one fit left: no other process has one to run
    assert progress.begun(30.0) == pytest.approx(30.0 * (1 + 1 / 3))
    progress.fits = 4
    assert progress.begun(40.0) == pytest.approx(40.0)
    single = your_data.FitProgress(dict.fromkeys("ab", 1.0), list("aabb"))
    single.fits = 1
    assert single.begun(10.0) == pytest.approx(10.0)  # one process: nothing else under way


def test_the_estimates_fits_replace_the_forecast_of_them_once_the_choice_is_known(caplog, monkeypatch):
    monkeypatch.setattr(your_data.FitProgress, "EVERY", 0.0)
    progress = your_data.FitProgress({"kmeans": 1.0, "sda": 3.0}, ["kmeans", "sda", "sda"])  # the last forecast
    with caplog.at_level(logging.INFO, logger="src.choice.your_data"):
        progress("kmeans")
        progress.expect(["kmeans", "kmeans"])  # the rule moved: the estimate's fits are others
        progress("kmeans")
        progress("kmeans")
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0].startswith("[fits 1/3, work 14%]") and lines[1].startswith("[fits 2/3, work 67%]")
    assert lines[2].startswith("[fits 3/3, work 100%]")  # then how far the time left was



OUTSIDE = "tests/fixtures/outside/estimators.py:PlainNMF"


def test_an_outside_estimator_joins_the_candidates_through_the_gate(tmp_path):
    path, y, told = write_file(tmp_path)
    out = tmp_path / "out"
    assert cluster.main([str(path), "--methods", "kmeans", "--repeats", "1", "--jobs", "1", "--method", OUTSIDE,
                         "--grid", "max_iter=100,200", "--out", str(out)]) == 0
    candidates = pd.read_csv(out / "candidates.csv")
    mine = candidates[candidates["param_method"] == OUTSIDE]
    assert sorted(mine["setting"].unique()) == ["max_iter=100", "max_iter=200"] and mine["mean_test_score"].notna().all()
    assert set(mine["param_readout"]) == {"clusters", "nearest_labelled", "spread_labelled"}  # read out as ours


def test_an_outside_grid_the_estimator_refuses_is_one_line_before_any_fit(tmp_path, caplog):
    path, _, _ = write_file(tmp_path)
    with caplog.at_level(logging.ERROR):
        assert cluster.main([str(path), "--methods", "kmeans", "--method", OUTSIDE, "--grid", "beta=1,2",
                             "--out", str(tmp_path / "out")]) == 2
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and "beta" in errors[0] and not (tmp_path / "out").exists()

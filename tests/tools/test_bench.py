"""tools.bench: targets as data, the sklearn difference, the callback timer, facts from the registry, the report
files, the child processes, and one quick run of ``python -m tools.bench`` (integration)."""

import csv
import dataclasses
import io
import math
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from src import methods
from tools.bench import measure, report, targets
from tools.bench.data import BenchData, labelled, load_saved, save, subsample
from tools.bench.facts import build, facts, select
from tools.bench.measure import PassTimer, difference_per_iteration, iterations_for, run_in_child, timed_fit
from tools.bench.suite import FULL, QUICK, Bench, reproduce_wall
from tools.bench.targets import FAIL, INFO, MISSING, PASS, Target
from src.errors import ConfigError
from src.methods.core.estimator import Factorization
from src.methods.core.loop import Pass

#: Near the end of the suite, a quarter of a minute in this process: run in a pytest process of its own on the
#: other core (conftest.py).
IN_ITS_OWN_PROCESS = True

REPO = Path(__file__).resolve().parents[2]


# -- targets -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value, op, limit, expected", [
    (1.0, "<=", 1.0, True), (1.01, "<=", 1.0, False), (3.0, ">=", 3.0, True), (2.99, ">=", 3.0, False),
    (59.9, "<", 60.0, True), (60.0, "<", 60.0, False),
])
def test_holds_compares_with_the_limit(value, op, limit, expected):
    assert targets.holds(value, op, limit) is expected


def test_a_row_passes_fails_reports_or_is_missing():
    assert Target(2, "r", measured=0.8, unit="x", op="<=", limit=1.0).result == PASS
    assert Target(2, "r", measured=1.2, unit="x", op="<=", limit=1.0).result == FAIL
    assert Target(6, "t", measured=12.0, unit="s").result == INFO
    assert Target(2, "r", op="<=", limit=1.0, missing="data set not selected").result == MISSING
    assert Target(2, "r", measured=math.nan, op="<=", limit=1.0).result == MISSING
    assert Target(4, "fit", op="<", limit=60.0, failure="stopped after 120 s").result == FAIL
    with pytest.raises(ValueError):
        Target(2, "r", measured=1.0, op="<=")  # an op needs a limit
    with pytest.raises(ValueError):
        Target(2, "r", measured=1.0, op="==", limit=1.0)


def test_reproduce_target_in_minutes_or_not_run():
    row = targets.reproduce_all(24 * 60.0)
    assert row.measured == pytest.approx(24.0) and row.unit == "min" and row.result == PASS
    assert targets.reproduce_all(26 * 60.0).result == FAIL
    absent = targets.reproduce_all(None, "not run")
    assert absent.result == MISSING and absent.missing == "not run" and absent.limit == targets.REPRODUCE_MINUTES


def test_sklearn_ratio_rows_name_their_rank():
    row = targets.sklearn_ratio("nmf", "COIL20", 1, 1.0, 2.0, "frobenius", True, 20)
    assert row.name == "per iteration / scikit-learn MU, k = 20" and row.extra["rank"] == 20
    assert targets.sklearn_ratio("nmf", "COIL20", 1, 1.0, 2.0, "frobenius", True).name == targets.sklearn_ratio_name()


def test_sklearn_ratio_has_a_limit_only_for_the_target_methods():
    row = targets.sklearn_ratio("nmf", "Yale", 1, 0.9, 1.0, "frobenius", target=True)
    assert row.measured == pytest.approx(0.9) and row.result == PASS and row.item == 2
    assert targets.sklearn_ratio("nmf_kl", "Yale", 2, 1.1, 1.0, "kullback-leibler", target=True).result == FAIL
    info = targets.sklearn_ratio("gnmf", "Yale", 1, 3.0, 1.0, "frobenius", target=False)
    assert info.result == INFO and info.limit is None
    assert targets.sklearn_ratio("nmf", "Yale", 1, 0.9, math.nan, "frobenius", target=True).result == MISSING


def test_batched_speedup_is_singles_over_batched():
    row = targets.batched_speedup("nmf", "ORL", batched_s=1.0, singles_s=3.0)
    assert row.measured == pytest.approx(3.0) and row.result == PASS
    assert targets.batched_speedup("gnmf", "ORL", batched_s=1.0, singles_s=1.2).result == FAIL


def test_batched_bound_is_the_singles_time_over_the_arithmetic_at_the_blas_rate():
    # 10 starts x 30 iterations x 2 products x 2 m n k flops, m n k = 1024 * 165 * 10: 2.03 GFLOP, 40.6 ms
    # at 50 GFLOP/s; ten single-start fits in 80 ms can then gain at most 1.97x
    flops = 10 * 30 * 2 * 2.0 * 1024 * 165 * 10
    bound = targets.batched_bound(0.08, flops, 50.0)
    assert bound == pytest.approx(0.08 / (flops / 50e9))
    assert 1.9 < bound < 2.0
    row = targets.batched_speedup("nmf", "Yale", 0.05, 0.08, bound=bound)
    assert row.extra["bound_x"] == bound and "at most 1.97x" in row.detail
    assert targets.batched_bound(0.08, None, 50.0) is None and targets.batched_bound(0.08, flops, 0.0) is None
    assert "at most" not in targets.batched_speedup("gnmf", "Yale", 0.05, 0.08).detail


def test_gemm_rate_is_positive_and_finite():
    from tools.bench.measure import gemm_gflops
    rate = gemm_gflops(size=200, repeats=2)
    assert math.isfinite(rate) and rate > 0


def test_big_fit_stopped_at_its_cap_fails_without_a_value():
    stopped = targets.big_fit("nmf_kl", "MNIST-70k", 2, 130.0, 60.0, "fit", failure="stopped after 121 s")
    assert stopped.result == FAIL and stopped.measured is None
    assert targets.big_fit("nmf", "MNIST-70k", 2, 20.0, 60.0, "fit").result == PASS
    assert targets.big_fit("kmeans", "MNIST-70k", 2, 130.0, 120.0, "trial").result == FAIL


def trial(acc64, acc32, acc64b):
    return {"acc_f64": acc64, "acc_f32": acc32, "acc_f64b": acc64b, "nmi_f64": 0.5, "nmi_f32": 0.5, "nmi_f64b": 0.5}


def test_dtype_quality_compares_the_float32_change_with_the_seed_noise():
    within = targets.dtype_quality("nmf", "COIL20", "acc", [trial(0.5, 0.52, 0.45), trial(0.6, 0.6, 0.62)])
    assert within.measured == pytest.approx(0.01) and within.limit == pytest.approx(0.035)
    assert within.result == PASS and "1 of 2 trials changed" in within.detail
    beyond = targets.dtype_quality("nmf", "COIL20", "acc", [trial(0.5, 0.6, 0.5), trial(0.6, 0.6, 0.61)])
    assert beyond.result == FAIL
    assert targets.dtype_quality("nmf", "COIL20", "nmi", [trial(0.5, 0.5, 0.5)]).result == PASS  # 0 <= 0
    assert targets.dtype_quality("nmf", "COIL20", "acc", []).result == MISSING


def test_summaries_count_the_judged_rows_of_each_item():
    rows = [targets.reproduce_all(None), targets.sklearn_ratio("nmf", "Yale", 1, 0.5, 1.0, "frobenius", True),
            targets.sklearn_ratio("nmf_kl", "Yale", 1, 2.0, 1.0, "kullback-leibler", True),
            targets.sklearn_ratio("gnmf", "Yale", 1, 2.0, 1.0, "frobenius", False),
            targets.batched_speedup("nmf", "ORL", 1.0, 4.0),
            targets.convergence("nmf", "Yale", {"seconds": 1.0, "n_iter": 80, "converged": True})]
    summary = {s.item: s for s in targets.summarize(rows)}
    assert set(summary) == set(targets.ITEMS)
    assert summary[1].result == MISSING
    assert (summary[2].passed, summary[2].failed, summary[2].result) == (1, 1, FAIL)
    assert summary[3].result == PASS and summary[4].result == MISSING
    assert summary[6].result == INFO and summary[6].reported == 1


# -- measure -------------------------------------------------------------------------------------------------
def test_sklearn_per_iteration_is_the_difference_of_the_fastest_fits():
    # 2 iterations: best 1.0 s; 22 iterations: best 2.9 s -> (2.9 - 1.0) / 20
    assert difference_per_iteration([1.1, 1.0, 1.3], [3.0, 2.9, 3.4], 2, 22) == pytest.approx(0.095)
    assert math.isnan(difference_per_iteration([1.0], [0.9], 2, 22))  # noise beyond the extra iterations
    with pytest.raises(ValueError):
        difference_per_iteration([1.0], [2.0], 5, 5)


def test_iterations_for_a_budget_stay_within_bounds():
    assert iterations_for(0.01, 1.0, 20, 500) == 100
    assert iterations_for(1.0, 1.0, 20, 500) == 20
    assert iterations_for(1e-6, 1.0, 20, 500) == 500
    assert iterations_for(0.0, 1.0, 20, 500) == 500


def test_pass_timer_takes_iterations_between_iterate_passes(monkeypatch):
    clock = iter([0.0, 1.0, 2.0, 3.0, 3.5, 4.5, 5.0])  # start, then one reading per pass
    monkeypatch.setattr(measure.time, "perf_counter", lambda: next(clock))
    timer = PassTimer()
    for update in (Pass("select", 1, 4, None), Pass("select", 2, 4, None), Pass("iterate", 3, 1, 1.0),
                   Pass("iterate", 4, 1, 0.9), Pass("iterate", 5, 1, 0.8), Pass("iterate", 6, 1, 0.7)):
        timer(update)
    assert (timer.count("select"), timer.count("iterate")) == (2, 4)
    assert timer.iteration_seconds() == pytest.approx([0.5, 1.0, 0.5])  # the first iterate pass not counted
    assert timer.iterate_ms() == pytest.approx(2000.0 / 3)
    assert timer.select_seconds() == pytest.approx(2.0) and timer.first_pass_seconds() == pytest.approx(1.0)


def test_pass_timer_stops_a_fit_past_its_cap(monkeypatch):
    clock = iter([0.0, 1.0, 5.0])
    monkeypatch.setattr(measure.time, "perf_counter", lambda: next(clock))
    timer = PassTimer(cap_s=2.0)
    timer(Pass("iterate", 1, 1, 1.0))
    with pytest.raises(measure.FitStopped, match="stopped after 5 s"):
        timer(Pass("iterate", 2, 1, 0.9))


@pytest.mark.parametrize("n_starts, min_iter, max_iter", [(1, 30, 7), (3, 4, 10)])
def test_callback_timer_on_a_real_fit_counts_passes_equal_to_n_iter(tiny, n_starts, min_iter, max_iter):
    model = methods.make("nmf", n_components=2, n_starts=n_starts, min_iter=min_iter, max_iter=max_iter,
                         stopping="fixed", random_state=0)
    timing = timed_fit(model, tiny)
    assert timing.n_iter == model.n_iter_ == max_iter
    assert timing.select_passes + timing.iterate_passes == timing.n_iter
    assert timing.select_passes == (min_iter if n_starts > 1 else 0)
    assert timing.iterate_ms > 0 and timing.seconds > 0 and not timing.stopped


def test_a_capped_real_fit_is_reported_stopped(tiny):
    model = methods.make("nmf", n_components=2, n_starts=1, max_iter=50, stopping="fixed")
    timing = timed_fit(model, tiny, cap_s=0.0)
    assert timing.stopped.startswith("stopped after") and timing.n_iter is None
    assert timing.iterate_passes == 1


@pytest.mark.integration  # the first child starts the fork server (~3 s)
def test_a_child_returns_its_value_and_peak_memory():
    result = run_in_child(math.fsum, args=([1.0, 2.0],), timeout_s=60)
    assert result.status == "ok" and result.value == 3.0 and result.peak_rss_mb > 0


@pytest.mark.integration
def test_a_failing_child_gives_one_line_and_a_slow_one_is_stopped():
    failed = run_in_child(math.sqrt, args=(-1.0,), timeout_s=60)
    assert failed.status == "error" and failed.error.startswith("ValueError") and "\n" not in failed.error
    start = time.perf_counter()
    stopped = run_in_child(time.sleep, args=(60,), timeout_s=0.5)
    assert stopped.status == "stopped" and "stopped after" in stopped.error
    assert time.perf_counter() - start < 30


# -- facts, data ---------------------------------------------------------------------------------------------
def test_facts_are_read_from_the_registered_classes():
    for name, cls in methods.REGISTRY.items():
        found = facts(name)
        assert found.iterates == issubclass(cls, Factorization)
        assert found.needs_labels == bool(getattr(cls, "needs_labels", False))
        assert found.has_dtype == ("dtype" in methods.parameter_names(cls))
        if found.iterates:
            assert found.loss == cls.loss and found.batched == cls.batched and found.takes_callback
    assert not facts("kmeans").iterates and facts("kmeans").loss is None


def test_products_per_iteration_is_declared_only_where_it_is_the_whole_arithmetic():
    assert facts("nmf").products_per_iteration == 2 and facts("nmf_kl").products_per_iteration == 3
    assert facts("gnmf").products_per_iteration is None and facts("kmeans").products_per_iteration is None


def test_facts_follow_the_class_at_run_time(monkeypatch):
    monkeypatch.setattr(methods.REGISTRY["nmf"], "batched", False)
    monkeypatch.setattr(methods.REGISTRY["nmf"], "loss", "kl")
    assert not facts("nmf").batched and facts("nmf").loss == "kl"


def test_methods_are_checked_and_overrides_never_dropped():
    assert select([]) == list(methods.NAMES)
    assert select(["nmf", "kmeans", "nmf"]) == ["nmf", "kmeans"]
    with pytest.raises(ConfigError, match="'nope'"):
        select(["nope"])
    model = build("gnmf", 10, 3, max_iter=5)
    assert model.alpha == 100.0 and model.max_iter == 5 and model.random_state == 3 and model.n_components == 10
    with pytest.raises(ConfigError, match="dtype"):
        build("kmeans", 10, 0, dtype="float32")


def tiny_data(rng, n=40, m=16, classes=4):
    X = rng.random((n, m))
    y = np.arange(n) % classes
    return BenchData("yale", X, y, labelled(y, "yale"), (4, 4))


def test_data_round_trip_through_a_file_and_labels_only_when_needed(rng, tmp_path):
    data = tiny_data(rng)
    assert data.labels(False) is None and (data.labels(True) >= 0).sum() == 4  # one of 10 per class, at least 1
    back = load_saved(save(data, tmp_path / "d.npz"))
    assert np.array_equal(back.X, data.X) and np.array_equal(back.y_partial, data.y_partial)
    assert back.image_shape == (4, 4) and back.name == "yale"
    X, y = subsample(data.X, data.y + 3, 10)
    assert X.shape == (10, 16) and y.min() == 0


# -- suite ---------------------------------------------------------------------------------------------------
def test_reproduce_wall_time_is_read_from_its_file(tmp_path):
    assert reproduce_wall(tmp_path)[0] is None and "not run" in reproduce_wall(tmp_path)[1]
    (tmp_path / "all").mkdir()
    (tmp_path / "all" / ".start").write_text("1700000000\n")
    assert "not run to the end" in reproduce_wall(tmp_path)[1]
    (tmp_path / "all" / "wall_seconds.txt").write_text("1234\n")
    assert reproduce_wall(tmp_path) == (1234.0, "")


def test_bench_items_on_tiny_data(rng, tmp_path):
    plan = QUICK
    bench = Bench(plan, ["nmf", "kmeans", "cnmf"], {"yale": tiny_data(rng)}, tmp_path, outputs=tmp_path)
    assert bench.iterating == ["nmf", "cnmf"]
    bench.batched()
    bench.convergence()
    rows = bench.rows
    batched = [r for r in rows if r.item == 3]
    assert [r.method for r in batched] == ["nmf", "cnmf"] and all(r.measured > 0 for r in batched)
    converged = [r for r in rows if r.item == 6]
    assert all(r.extra["n_iter"] >= plan.convergence_overrides["min_iter"] for r in converged)


@pytest.mark.integration
def test_big_item_runs_each_method_in_a_child(rng, tmp_path):
    plan = QUICK
    bench = Bench(plan, ["nmf", "kmeans", "cnmf"], {"yale": tiny_data(rng)}, tmp_path, outputs=tmp_path)
    bench.big()  # quick: the one data set stands in for MNIST-70k; one child per method
    assert [r.method for r in bench.rows] == ["nmf", "cnmf", "kmeans"]
    assert all(r.measured > 0 and r.extra["peak_rss_mb"] > 0 for r in bench.rows)
    assert bench.rows[0].extra["n_iter"] == plan.big_iters


def test_per_iteration_rows_for_the_targets_and_the_other_methods(rng, tmp_path):
    bench = Bench(QUICK, ["nmf", "kmeans", "cnmf"], {"yale": tiny_data(rng)}, tmp_path, outputs=tmp_path)
    assert QUICK.sklearn_ranks == FULL.sklearn_ranks == (10, 20) and QUICK.rank == 10
    assert bench.per_iteration_subjects("yale") == [(10, ["nmf", "cnmf"]), (20, ["nmf"])]
    assert bench.per_iteration_subjects("mnist10k") == [(10, ["nmf"]), (20, ["nmf"])]  # no ratio for the others
    bench.per_iteration()
    measured = [(r.method, r.threads, r.extra["rank"], r.op) for r in bench.rows if r.dataset.startswith("Yale")]
    threads = bench.thread_settings()
    assert measured == [(name, t, k, "<=" if name == "nmf" else "") for t in threads
                        for k, names in ((10, ("nmf", "cnmf")), (20, ("nmf",))) for name in names]
    assert all(r.name.endswith(f", k = {r.extra['rank']}") for r in bench.rows if r.dataset.startswith("Yale"))
    assert all(not r.failure for r in bench.rows)
    missing = {(r.method, r.dataset) for r in bench.rows if r.missing}
    assert ("nmf_kl", "") in missing and ("", "COIL20") in missing and ("", "MNIST-10k") in missing


def test_dtype_item_picks_nmf_and_a_kl_method_from_the_facts(rng, tmp_path, monkeypatch):
    bench = Bench(QUICK, ["kmeans", "nmf", "gnmf", "nmf_kl"], {"coil20": tiny_data(rng)}, tmp_path)
    kl = [n for n in bench.iterating if bench.facts[n].loss == "kl" and bench.facts[n].has_dtype]
    assert bench.dtype_methods() == ["nmf"] + kl[:1]
    monkeypatch.setitem(bench.facts, "gnmf", dataclasses.replace(facts("gnmf"), loss="kl", has_dtype=True))
    assert bench.dtype_methods() == ["nmf", "gnmf"]
    assert bench.dtype_dataset() == "coil20"


def test_dtype_item_on_tiny_data(rng, tmp_path):
    bench = Bench(QUICK, ["nmf"], {"coil20": tiny_data(rng)}, tmp_path)
    bench.dtypes()
    names = [r.name for r in bench.rows]
    assert any("a KL method" in name for name in names)  # nmf_kl not selected: said so
    speed = next(r for r in bench.rows if r.name.startswith("float32 speed-up"))
    assert speed.result == INFO and speed.measured > 0
    trials = [r for r in bench.rows if r.name == report.TRIAL]
    assert len(trials) == QUICK.dtype_trials * len(QUICK.dtype_ks)
    assert {"acc_f64", "acc_f32", "acc_f64b", "n_iter_f32"} <= set(trials[0].extra)
    quality = [r for r in bench.rows if r.name.startswith(("ACC", "NMI"))]
    assert len(quality) == 2 and all(r.result in (PASS, FAIL) for r in quality)


# -- report --------------------------------------------------------------------------------------------------
def sample_rows():
    return [targets.reproduce_all(None),
            targets.sklearn_ratio("nmf", "Yale", 1, 0.5, 1.0, "frobenius", True, 10),
            targets.sklearn_ratio("nmf", "Yale", 2, 0.7, 0.5, "frobenius", True, 10),
            targets.batched_speedup("nmf", "ORL", 1.0, 4.0, {"batched_class": True}),
            targets.big_fit("nmf_kl", "MNIST-70k", 2, None, 60.0, "fit", failure="stopped after 121 s | x"),
            targets.convergence("nmf", "Yale", {"seconds": 1.5, "n_iter": 80, "converged": True, "select_s": 0.5,
                                                "iterate_ms": 2.0, "rank": 10}),
            targets.sklearn_ratio("nmf", "Yale", 1, 1.8, 1.5, "frobenius", True, 20),
            targets.sklearn_ratio("nmf", "Yale", 2, 1.2, 1.0, "frobenius", True, 20)]


def test_markdown_reports_every_item_with_its_verdicts():
    text = report.markdown(sample_rows(), {"mode": "full", "command": "`python -m tools.bench`"})
    assert text.startswith("# Speed and scale benchmark")
    for item in targets.ITEMS:
        assert f"\n## {item}. " in text
    assert "| 2 | nmf and nmf_kl per iteration" in text and "**FAIL**" in text
    assert "stopped after 121 s \\| x" in text  # a pipe in a cell is escaped
    convergence = next(line for line in text.splitlines() if line.startswith("| Yale | nmf | 1.5 s"))
    assert "0.50x" in convergence and "1.40x" in convergence  # the item-2 ratios at its rank beside it
    assert "1.20x" not in convergence and "1.20x" in text  # k = 20: its own rows
    assert "| Yale | nmf | 2 | per iteration / scikit-learn MU, k = 20 | 1.20x | <= 1.00x | **FAIL** |" in text
    assert "nmf on Yale, k = 10: 1.40x" in text  # the worst row of item 2 names its rank


def test_csv_holds_every_row_with_its_extra_numbers():
    rows = sample_rows()
    read = list(csv.DictReader(io.StringIO(report.csv_text(rows))))
    assert len(read) == len(rows)
    assert read[1]["result"] == PASS and float(read[1]["measured"]) == pytest.approx(0.5)
    assert read[3]["batched_class"] == "True" and read[5]["n_iter"] == "80"
    assert read[6]["rank"] == "20" and read[6]["name"] == "per iteration / scikit-learn MU, k = 20"


def test_report_files_are_written_whole(tmp_path):
    md, table = report.write(tmp_path, sample_rows(), {"mode": "full"})
    assert md.read_text().startswith("# Speed") and table.read_text().startswith("item,name,")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bench.csv", "bench.md"]  # no temporary left


# -- the command -----------------------------------------------------------------------------------------------
def test_bad_arguments_are_one_line(caplog):
    from tools.bench.__main__ import main

    with caplog.at_level("ERROR"):
        assert main(["--methods", "nmf,nope"]) == 2
        assert main(["--datasets", "yalee"]) == 2
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 2 and "'nope'" in errors[0] and "'yalee'" in errors[1]


@pytest.mark.integration
def test_quick_run_writes_the_report(tmp_path, mirror):
    done = subprocess.run([sys.executable, "-m", "tools.bench", "--quick", "--methods", "nmf", "kmeans",
                           "--datasets", "yale", "--out", str(tmp_path)], cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    text = (tmp_path / "bench.md").read_text()
    assert "## Targets" in text and "Quick mode" in text and "## Provenance" in text
    with open(tmp_path / "bench.csv", newline="") as file:  # closed here: an open file left is a ResourceWarning
        rows = list(csv.DictReader(file))
    assert {int(r["item"]) for r in rows} == set(targets.ITEMS)
    measured = {(r["item"], r["method"]) for r in rows if r["result"] in (PASS, FAIL, INFO)}
    assert {("2", "nmf"), ("3", "nmf"), ("4", "nmf"), ("4", "kmeans"), ("5", "nmf"), ("6", "nmf")} <= measured
    assert not [r for r in rows if r["failure"]], [r["failure"] for r in rows if r["failure"]]
    assert (tmp_path / "provenance.json").is_file() and not list(tmp_path.glob(".work_*"))

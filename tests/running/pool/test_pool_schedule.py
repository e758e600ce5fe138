"""The pool's order (expected times), SLURM batches of cells, and the schedule's record."""

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from src.running.pool import schedule
from src.running.pool.workers import batches

chain = schedule.group_chain


def test_a_recorded_time_is_expected_before_the_model(tmp_path):
    stale = tmp_path / "a.json"
    stale.write_text(json.dumps({"fit_seconds": 2.5, "kmeans_seconds": 0.5, "config_hash": "old"}))
    assert schedule.recorded_seconds([tmp_path / "missing.json", stale]) == 3.0
    assert schedule.recorded_seconds([tmp_path / "missing.json"]) is None
    modelled = schedule.model_seconds(100, 1024, 5, 1)
    assert modelled > 0
    assert schedule.model_seconds(200, 1024, 5, 1) == pytest.approx(2 * modelled)  # bigger cells first
    assert schedule.model_seconds(100, 1024, 5, 10) == pytest.approx(10 * modelled)  # ten sub-runs, ten fits


def test_modelled_cells_are_put_in_seconds_by_the_recorded_ones():
    # two recorded cells take 10x and 30x their model (median 30, the upper middle), one has no record
    assert schedule.expected_seconds([1.0, 3.0, None], [0.1, 0.1, 0.2]) == pytest.approx([1.0, 3.0, 6.0])
    assert schedule.expected_seconds([None, None], [0.1, 0.2]) == [0.1, 0.2]  # nothing recorded: the model


def test_batches_hold_about_the_same_work_and_every_cell_once():
    items = list(range(40))
    seconds = {i: float(40 - i) for i in items}  # longest first, 820 s in all
    groups = batches(items, seconds.get, seconds=100.0)
    assert len(groups) == math.ceil(820 / 100)
    assert sorted(i for group in groups for i in group) == items
    loads = [sum(seconds[i] for i in group) for group in groups]
    assert max(loads) - min(loads) <= max(seconds.values())  # greedy least-loaded: within one cell
    assert batches(items[:3], seconds.get, seconds=1e6) == [items[:3]]  # little work: one task
    assert len(batches(items[:3], seconds.get, seconds=1e-3)) == 3  # never more tasks than cells


def test_the_record_reads_back(tmp_path):
    rows = [{"paper": "toy", "sweep": 0, "job": "toy/runs/yale_NMF", "k": 2, "trial": 0, "seconds": 1.5,
             "status": "computed"}]
    schedule.write_record(tmp_path, rows, {"wall_seconds": 3.0, "workers": 2})
    table, summary = schedule.cell_table(tmp_path)
    assert list(table.columns) == list(schedule.COLUMNS) and len(table) == 1
    assert table.loc[0, "seconds"] == 1.5 and pd.isna(table.loc[0, "cpu_seconds"])
    assert summary == {"wall_seconds": 3.0, "workers": 2}
    assert schedule.cell_table(tmp_path / "nothing") is None
    assert schedule.utilisation(110.0, 200.0, 2) == 1.1


def test_forecast_calibrates_each_group_on_its_own_cells():
    # two groups whose expectations are off by different factors: after one cell of each, the work left is
    # each group's expectation times its own ratio, not the pool's average ratio
    groups = [chain("nmf", "orl"), chain("nmf", "orl"), chain("lcf", "orl"), chain("lcf", "orl")]
    forecast = schedule.Forecast([10, 10, 10, 10], groups, workers=1, started=0.0)
    assert forecast.seconds_left(now=1.0) is None  # nothing measured yet
    forecast.done(0, 30.0)  # nmf takes three times its expectation
    forecast.done(2, 5.0)   # lcf half of it
    assert forecast.work_left() == pytest.approx(30.0 + 5.0)
    assert forecast.seconds_left(now=35.0) == pytest.approx(35.0)
    assert forecast.fraction_done() == pytest.approx(0.5)


def test_forecast_falls_back_to_the_method_then_to_every_cell():
    groups = [chain("nmf", "orl"), chain("nmf", "yale"), chain("gnmf", "coil20")]
    forecast = schedule.Forecast([10, 10, 10], groups, workers=2, started=0.0)
    forecast.done(0, 20.0)
    assert forecast.ratio(1) == pytest.approx(2.0)  # same method, other data set
    assert forecast.ratio(2) == pytest.approx(2.0)  # no cell of its method: every cell done
    # two workers share the 40 s left, but no worker can finish the longest cell left sooner than 20 s
    assert forecast.seconds_left(now=20.0) == pytest.approx(20.0)
    forecast.done(1, 20.0)
    forecast.done(2, 1.0)
    assert forecast.seconds_left() == 0.0 and forecast.fraction_done() == 1.0


def test_forecast_errors_compare_the_forecast_with_the_time_that_remained():
    samples = [[10.0, 0.05, 0.05, 200.0], [20.0, 0.12, 0.1, 100.0], [50.0, 0.3, 0.3, 50.0], [60, 0.6, 0.5, 40.0]]
    errors = schedule.forecast_errors(samples, wall=100.0)
    assert [e["cells"] for e in errors] == [0.1, 0.25, 0.5]
    assert errors[0]["actual"] == 80.0 and errors[0]["error"] == pytest.approx(100 / 80 - 1)
    assert errors[2]["elapsed"] == 60 and errors[2]["error"] == pytest.approx(0.0)
    by_time = schedule.forecast_errors(samples, wall=100.0, by="time")  # at 10, 25 and 50 s of the 100
    assert [(e["time"], e["elapsed"], e["cells"]) for e in by_time] == [(0.1, 10.0, 0.05), (0.25, 50.0, 0.3),
                                                                        (0.5, 50.0, 0.3)]
    assert by_time[0]["error"] == pytest.approx(200 / 90 - 1)


def test_measured_cells_take_the_ratio_of_every_measured_cell_not_their_groups():
    # a measured expectation already holds the cell's size: the big nmf cell ran at half its cost, the small
    # one is expected at the measured cells' ratio (here 0.5 too: (5 + 10) / (10 + 20)); a modelled cell
    # of the same group has no modelled cell of its group or method done, so it takes every cell's ratio
    groups = [chain("nmf", "orl"), chain("lcf", "orl"), chain("nmf", "orl"), chain("nmf", "orl")]
    forecast = schedule.Forecast([10, 20, 1, 1], groups, workers=1, started=0.0,
                                 measured=[True, True, True, False])
    forecast.done(0, 5.0)
    forecast.done(1, 10.0)
    assert forecast.ratio(2) == pytest.approx(0.5) and forecast.ratio(3) == pytest.approx(0.5)
    forecast = schedule.Forecast([10, 20, 1, 1], groups, workers=1, started=0.0,
                                 measured=[True, True, True, False])
    forecast.done(0, 5.0)
    forecast.done(1, 40.0)  # lcf twice its measured cost: the machine is slower than when it was measured
    assert forecast.ratio(2) == pytest.approx(45.0 / 30.0)  # every measured cell, not nmf's 0.5
    assert forecast.ratio(3) == pytest.approx(45.0 / 30.0)  # modelled: no modelled cell done, every cell's
    forecast.done(3, 3.0)
    assert forecast.ratio(2) == pytest.approx(45.0 / 30.0)  # a modelled cell leaves the measured ratio alone


def test_a_job_is_keyed_from_its_commands_folder_on_whatever_the_path_before():
    assert schedule.job_key("/home/me/outputs/reproduce/lcf/runs/yale_LCF") == "reproduce/lcf/runs/yale_LCF"
    assert schedule.job_key("outputs/benchmark/labels10/runs/orl_CNMF") == "benchmark/labels10/runs/orl_CNMF"


def test_a_tuned_fold_nobody_published_is_priced_like_its_settings_run_then_the_tracks_own_job():
    """The twins the tuned homes declare (src/tuning/homes.py) price a fold's job like its setting's tuned run,
    then like the track's own job, a tuned run like the track's own job; nothing else has a twin."""
    from src.tuning.homes import tuned_homes
    from src.tuning.grids import family_grid

    costs = {("benchmark/labels10/runs/mnist1000_CNMF", 2): 0.06,
             ("benchmark/tuned/labels10/runs/mnist1000_GNMF-alpha=0.1", 2): 0.5,
             ("benchmark/labels10/runs/mnist1000_GNMF", 2): 0.3,
             ("benchmark/tuned/labels10/folds/1/mnist1000_SDA", 2): 0.9}
    homes = tuned_homes([(family_grid("gnmf"), ["mnist1000"]), (family_grid("cnmf"), ["mnist1000"])],
                        ["labels10"], ["mnist1000"], Path("outputs/benchmark"))
    twins = schedule.twin_folders(homes)
    out = Path("outputs/benchmark/tuned/labels10")
    price = lambda job, k=2: schedule.prior_seconds(costs, out / job, k, twins)  # noqa: E731
    assert price("folds/0/mnist1000_CNMF") == 0.06  # nothing to tune
    assert price("folds/1/mnist1000_GNMF-alpha=0.1") == 0.5  # its setting's run
    assert price("runs/mnist1000_GNMF") == 0.3
    assert price("folds/1/mnist1000_SDA") == 0.9  # its own, published
    assert price("folds/0/mnist1000_CNMF", 3) is None  # no twin at that k
    assert schedule.prior_seconds(costs, out / "folds/0/mnist1000_CNMF", 2) is None  # no twins declared
    assert schedule.prior_seconds(costs, Path("outputs/benchmark/labels30/runs/mnist1000_CNMF"), 2, twins) is None


def test_reports_left_add_the_mean_time_of_the_reports_written_so_far():
    forecast = schedule.Forecast([10, 10], [chain("nmf", "orl")] * 2, workers=1, started=0.0, reports=3)
    forecast.done(0, 10.0)
    assert forecast.seconds_left(now=10.0) == pytest.approx(10.0)  # no report written yet: nothing to add
    forecast.report_done(4.0)
    assert forecast.seconds_left(now=14.0) == pytest.approx(10.0 + 2 * 4.0)  # two reports left at 4 s each
    forecast.report_done(2.0)
    forecast.done(1, 10.0)
    assert forecast.seconds_left() == pytest.approx(3.0)  # every cell in, one report left at the mean 3 s


def test_published_costs_are_the_workers_wall_seconds_else_the_rows(tmp_path):
    rows = pd.DataFrame([
        {"job": "/x/outputs/reproduce/lcf/runs/yale_LCF", "k": 2, "seconds": 1.0, "status": "computed",
         "start": 10.0, "end": 11.5},
        {"job": "/x/outputs/reproduce/lcf/runs/yale_LCF", "k": 2, "seconds": 2.0, "status": "computed",
         "start": 20.0, "end": 22.5},
        {"job": "/x/outputs/reproduce/lcf/runs/yale_LCF", "k": 3, "seconds": 4.0, "status": "reused",
         "start": float("nan"), "end": float("nan")},
        {"job": "/x/outputs/reproduce/lcf/runs/yale_LCF", "k": 4, "seconds": 9.0, "status": "failed",
         "start": 0.0, "end": 9.0}])
    schedule.write_costs(rows, tmp_path / "costs.csv")
    costs = schedule.published_costs(tmp_path / "costs.csv")
    assert costs == {("reproduce/lcf/runs/yale_LCF", 2): pytest.approx(2.0),  # (1.5 + 2.5) / 2, the workers'
                     ("reproduce/lcf/runs/yale_LCF", 3): pytest.approx(4.0)}  # no worker time: the row's


def test_measured_cells_take_the_speed_of_the_last_minutes_not_of_the_whole_run():
    # the first measured cell ran at twice its cost (another load on the machine), the next ones at their
    # cost: five minutes on, only the recent cells set the ratio; without a recent cell, every measured one
    groups = [chain("nmf", "orl")] * 4
    forecast = schedule.Forecast([100, 10, 10, 10], groups, workers=1, started=0.0, measured=[True] * 4)
    forecast.done(0, 200.0, now=200.0)
    assert forecast.seconds_left(now=200.0) == pytest.approx(3 * 10 * 2.0)  # only the slow cell so far
    forecast.done(1, 10.0, now=200.0 + schedule.RECENT_SECONDS + 10)
    now = 200.0 + schedule.RECENT_SECONDS + 10
    assert forecast.ratio(2) == pytest.approx(1.0)  # the slow cell ended more than RECENT_SECONDS ago
    assert forecast.seconds_left(now=now) == pytest.approx(2 * 10.0)
    later = now + 2 * schedule.RECENT_SECONDS  # nothing ended recently: every measured cell's ratio
    assert forecast.seconds_left(now=later) == pytest.approx(2 * 10 * 210.0 / 110.0)


# -- the cost model: what a cell's settings do to its work -------------------------------------------------------
REFERENCE = {"stopping": "reference", "n_starts": 10, "min_iter": 30, "tol": 1e-5, "max_iter": 10_000}


def test_updates_follow_the_starts_the_stopping_rule_and_its_cap():
    fixed = {**REFERENCE, "stopping": "fixed", "max_iter": 200}
    assert schedule.updates(schedule.loop_settings(fixed)) == 10 * 30 + (200 - 30)  # selection, then to 200
    one = {**fixed, "n_starts": 1}
    assert schedule.updates(schedule.loop_settings(one)) == 200  # no selection: exactly max_iter
    loop = schedule.loop_settings(REFERENCE)
    assert schedule.updates(loop, continued=70) == 300 + 70  # the updates rows of this setting made
    assert schedule.updates(loop) == 300 + 10_000 - 30  # nobody measured it: priced at its cap
    assert schedule.updates(loop, continued=1e9) == schedule.updates(loop)  # never beyond the cap
    assert schedule.loop_settings({"n_clusters": 3}) is None and schedule.updates(None) == 1.0  # KMeans, SDA
    assert schedule.loop_settings({"max_iter": 50}) == {**REFERENCE, "max_iter": 50}  # defaults filled
    assert schedule.continued_of(loop, 100) == 70 and schedule.continued_of({**loop, "n_starts": 1}, 100) == 100


def row(seconds, n_iter, n_samples=100, rank=5, kmeans=0.0):
    return {"fit_seconds": seconds, "kmeans_seconds": kmeans, "n_iter": n_iter, "n_samples": n_samples,
            "rank": rank}


def test_unit_costs_price_an_unmeasured_setting_by_its_own_updates():
    # two rows of NMF on Yale under the reference rule made 100 updates after the selection each (400 in all)
    # and took 4 s: 0.01 s an update. Fixed 2,000 updates are priced at about 2,000 of them, the reference rule
    # of the rows at the 100 they made, another data set at nothing (no row read)
    units = schedule.UnitCosts()
    for _ in range(2):
        units.learn("nmf", "yale", REFERENCE, row(4.0, 130), subruns=1)
    assert units.continued("nmf", "yale", schedule.loop_settings(REFERENCE)) == pytest.approx(100)
    same = units.seconds("nmf", "yale", REFERENCE, 100, 5, 1)
    fixed = units.seconds("nmf", "yale", {**REFERENCE, "stopping": "fixed", "max_iter": 2000}, 100, 5, 1)
    assert same == pytest.approx(4.0)
    assert fixed == pytest.approx(4.0 * (300 + 1970) / 400)
    assert units.seconds("nmf", "orl", REFERENCE, 100, 5, 1) is None
    tight = units.seconds("nmf", "yale", {**REFERENCE, "tol": 1e-7, "max_iter": 20_000}, 100, 5, 1)
    assert tight > 40 * same  # an unmeasured stopping rule: priced at its cap of 20,000
    assert units.seconds("nmf", "yale", REFERENCE, 100, 5, 10) == pytest.approx(10 * same)  # ten sub-runs


def test_an_update_costs_a_part_per_sample_and_a_part_per_rank_and_kmeans_apart():
    # rows made by cost = n x updates x (2e-5 + 1e-5 x rank) and KMeans 0.01 + 1e-5 x n x rank: the fit finds
    # both parts again, and prices a rank (and a KMeans step) no row had
    units = schedule.UnitCosts()
    fixed = {**REFERENCE, "stopping": "fixed", "n_starts": 1, "max_iter": 200}
    for rank in (2, 4, 8):
        for n in (50, 100):
            units.learn("nmf", "orl", fixed, row(n * 200 * (2e-5 + 1e-5 * rank), 200, n, rank,
                                                 kmeans=0.01 + 1e-5 * n * rank), subruns=1)
    a, b, c, d = units.coefficients("nmf", "orl")
    assert (a, b, c, d) == pytest.approx((2e-5, 1e-5, 0.01, 1e-5), rel=1e-6)
    priced = units.seconds("nmf", "orl", fixed, 80, 6, 1)
    assert priced == pytest.approx(80 * 200 * (2e-5 + 6e-5) + 0.01 + 1e-5 * 80 * 6, rel=1e-6)
    # one rank only: proportional to the rank, as nothing tells the two parts apart
    single = schedule.UnitCosts()
    single.learn("nmf", "orl", fixed, row(2.0, 200, 100, 5), subruns=1)
    assert single.seconds("nmf", "orl", fixed, 100, 10, 1) == pytest.approx(4.0)


def test_a_sweep_with_ten_times_the_iterations_is_priced_by_its_first_cells():
    # the twin (fixed 200 updates) and its sweep with ten times the iterations (fixed 2,000) are both modelled
    # at one guessed price, 1 s a cell (as when nothing tells them apart: a cost model that misjudges the
    # setting); the twin's cells take 1 s, the sweep's first cell 10 s. The rest of the sweep is priced at
    # several times the twin's cells, by its own setting's ratio, not by its method's
    twin = schedule.change_key({**REFERENCE, "stopping": "fixed", "max_iter": 200}, 1, "unit_norm")
    sweep = schedule.change_key({**REFERENCE, "stopping": "fixed", "max_iter": 2000}, 1, "unit_norm")
    for basis in ("size", "rows"):
        groups = [chain("nmf", "yale", "twin", twin, basis)] * 4 + [chain("nmf", "yale", "ten", sweep, basis)] * 4
        forecast = schedule.Forecast([1.0] * 8, groups, workers=1, started=0.0)
        for task in range(3):
            forecast.done(task, 1.0)
        forecast.done(4, 10.0)
        assert forecast.ratio(5) >= 5 * forecast.ratio(3)
        assert forecast.expected[5] * forecast.ratio(5) == pytest.approx(10.0)


def test_a_stopping_rule_priced_at_its_cap_takes_the_share_other_methods_ran_and_the_rest_their_model():
    # a tightened rule nobody measured is priced at its cap: once NMF's first cell ran a tenth of it, CF under
    # the same change takes that tenth; a cell the rows priced keeps its model until its own setting has a cell
    # done, whatever the other settings' cells took (the pool ran first those it priced highest)
    tight = schedule.change_key({**REFERENCE, "tol": 1e-7, "max_iter": 20_000}, 1, "unit_norm")
    plain = schedule.change_key(REFERENCE, 1, "none")
    forecast = schedule.Forecast([10.0, 10.0, 2.0, 2.0], [
        chain("nmf", "yale", "nmf-tight", tight, "cap"), chain("cf", "orl", "cf-tight", tight, "cap"),
        chain("cf", "orl", "cf-raw", plain, "rows"), chain("nmf", "orl", "nmf-raw", plain, "rows")],
        workers=1, started=0.0)
    forecast.done(0, 1.0)
    assert forecast.ratio(1) == pytest.approx(0.1)
    forecast.done(2, 0.5)
    assert forecast.ratio(3) == 1.0  # its own setting has no cell done: the model stands


def test_the_time_left_includes_the_work_expected_after_the_pool_at_the_pools_speed():
    """A tuned run's later rounds (``later``, seconds of work by the same costs) are in the time left, over the
    workers and at the speed the cells have gone so far."""
    plain = schedule.Forecast([10.0, 10.0, 10.0], [("m", "d")] * 3, workers=2, started=0.0)
    later = schedule.Forecast([10.0, 10.0, 10.0], [("m", "d")] * 3, workers=2, started=0.0, later=100.0)
    for forecast in (plain, later):
        forecast.done(0, 20.0, now=20.0)  # twice as slow as expected
    assert later.seconds_left(now=20.0) == pytest.approx(plain.seconds_left(now=20.0) + 100.0 * 2 / 2)
    for forecast in (plain, later):
        forecast.done(1, 20.0, now=30.0)
        forecast.done(2, 20.0, now=40.0)
    assert plain.seconds_left(now=40.0) == 0.0 and later.seconds_left(now=40.0) == pytest.approx(100.0)

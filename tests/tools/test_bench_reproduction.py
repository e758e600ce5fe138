"""tools.bench.reproduction: the schedules on hand-made tables, Graham's bound, the cost model against the products
a real fit runs, the rows and their section in bench.md, and the wiring into ``python -m tools.bench``."""

import dataclasses
import importlib
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from src import methods
from src.methods.core import products
from src.methods.nmf_kl import KLProducts
from tools.bench import report, reproduction, targets
from tools.bench.reproduction import (COSTS, NoReproduction, list_schedule, simulate_pool, simulate_sweeps)
from tools.bench.suite import QUICK, Bench

from helpers import AT_THE_CAP

RATES = {"narrow": 40.0, "wide": 50.0}
NMF_PARAMS = json.dumps({"n_starts": 10, "min_iter": 30, "max_iter": 10000, "stopping": "reference", "tol": 1e-5})


def cells(seconds, paper="p", sweep=0, job=None, status="computed", expected=math.nan, **columns):
    """A cell table with one row per entry of ``seconds`` (the other columns plausible for an NMF cell)."""
    n = len(seconds)

    def column(value):
        return list(value) if isinstance(value, (list, tuple)) else [value] * n

    frame = pd.DataFrame({
        "paper": column(paper), "sweep": column(sweep), "job": column(job or f"{paper}/runs/j"),
        "dataset": "yale", "method": "NMF", "estimator": "nmf", "params": NMF_PARAMS, "k": 3, "trial": range(n),
        "rank": 3, "n_samples": 33, "n_features": 1024, "n_iter": 100, "seconds": list(seconds),
        "status": column(status), "cpu_seconds": math.nan, "expected_seconds": column(expected)})
    for name, value in columns.items():
        frame[name] = column(value)
    return frame


# -- schedules on hand-made tables --------------------------------------------------------------------------------
def test_list_schedule_gives_each_duration_to_the_worker_free_first():
    assert list_schedule([5, 3, 2], 2) == 5  # 5 | 3 + 2
    assert list_schedule([2, 3, 5], 2) == 7  # 2 + 5 | 3: the order matters
    assert list_schedule([5, 3, 2], 1) == 10
    assert list_schedule([], 3) == 0
    with pytest.raises(ValueError):
        list_schedule([1.0], 0)


def test_pool_runs_the_longest_first():
    assert simulate_pool(cells([2, 3, 5]), 2) == 5  # longest first: 5 | 3 + 2
    assert simulate_pool(cells([2, 3, 5]), 3) == 5
    assert simulate_pool(cells([2, 3, 5]), 1) == 10


def test_pool_orders_by_the_expected_time_where_known_and_lasts_the_recorded_one():
    # expected 1, 3, 2 for cells of 5, 3, 2 s: order 3, 2, 5 -> 3 | 2 + 5 = 7
    assert simulate_pool(cells([5, 3, 2], expected=[1.0, 3.0, 2.0]), 2) == 7
    # unknown expectations fall back to the recorded seconds: 5 first again
    assert simulate_pool(cells([5, 3, 2], expected=[math.nan, 3.0, 2.0]), 2) == 5


def test_pool_computes_a_shared_cell_once_and_skips_failed_ones():
    table = cells([4, 4, 1], status=["computed", "shared", "failed"])
    assert simulate_pool(table, 1) == 4
    assert reproduction.pool_cells(table).seconds.sum() == 4


def test_sweeps_run_their_cells_in_turn_in_paper_order():
    # sweeps a/0 (1 + 1 s), a/1 (1 s), b/0 (4 s): a/0 and a/1 start first, b/0 waits for a free worker
    table = cells([1, 1, 1, 4], paper=["a", "a", "a", "b"], sweep=[0, 0, 1, 0],
                  job=["a/runs/x", "a/runs/y", "a/runs/z", "b/runs/x"])
    assert simulate_sweeps(table, 2) == 5  # a/0 (2 s) | a/1 (1 s), then b/0 on the worker free at 1 s: 1 + 4
    assert simulate_sweeps(table, 1) == 7
    assert simulate_sweeps(table, 64) == 4  # one worker per sweep: the longest sweep
    assert simulate_sweeps(table, 2, order=["b", "a"]) == 4  # b/0 | a/0 then a/1: 4 | 3
    assert simulate_pool(table, 2) == 4  # 4 | 1 + 1 + 1


def test_sweep_schedule_counts_shared_cells_in_every_job_and_orders_papers_by_name():
    table = cells([3, 3, 2], paper=["pcgnmf", "cnmf", "cai"], status=["shared", "computed", "computed"])
    assert simulate_sweeps(table, 1) == 8  # the shared cell's 3 s counted again in its own sweep
    assert simulate_pool(table, 1) == 5
    assert reproduction.paper_order(["pcgnmf", "lcf", "cnmf", "ccf", "fnmf", "cai"]) == [
        "cai", "ccf", "cnmf", "fnmf", "lcf", "pcgnmf"]
    # 2 workers, paper order: cai 2 s | cnmf 3 s; pcgnmf 3 s after cai: 5
    assert simulate_sweeps(table, 2) == 5


@pytest.mark.parametrize("seed", range(20))
def test_pool_wall_keeps_within_grahams_bounds(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    seconds = rng.exponential(2.0, n) * rng.choice([1.0, 10.0], n, p=[0.9, 0.1])
    expected = np.where(rng.random(n) < 0.5, np.nan, seconds * rng.uniform(0.2, 5.0, n))  # orders, never lasts
    table = cells(seconds, expected=list(expected))
    for cores in (1, 2, 3, 7, 64):
        work, longest = seconds.sum(), seconds.max()
        wall = simulate_pool(table, cores)
        assert max(longest, work / cores) - 1e-9 <= wall <= work / cores + longest + 1e-9
        assert simulate_sweeps(table, cores) >= work / cores - 1e-9


def test_schedules_report_each_core_count_against_the_ideal():
    table = cells([5, 3, 2], paper=["a", "a", "b"], sweep=[0, 0, 0], job=["a/runs/x", "a/runs/y", "b/runs/x"])
    frame = reproduction.schedules(table, [2, 1, 2])
    assert frame.cores.tolist() == [1, 2]
    two = frame.set_index("cores").loc[2]
    assert two.ideal == 5 and two.after == 5 and two.before == 8  # sweeps a (8 s) | b (2 s)
    assert two.before_ratio == pytest.approx(1.6) and two.after_ratio == 1


# -- the cost model ------------------------------------------------------------------------------------------------
def test_nmf_cell_flops_by_hand():
    m, n, r, c = 1024, 30, 4, 3
    P, G = 2.0 * m * n * r, 2.0 * (m + n) * r * r
    select, other = reproduction.cell_flops("nmf", NMF_PARAMS, m, n, r, c, n_iter=130)
    assert select == 10 * 30 * (2 * P + 2 * G)  # ten starts, 30 selection updates each
    kmeans = reproduction.KMEANS_RUNS * reproduction.KMEANS_ITERATIONS * 2.0 * n * c * r
    assert other == pytest.approx(100 * (2 * P + 3 * G) + 10 * G + P + kmeans)  # 100 updates of the kept start


def test_a_cell_of_several_subruns_counts_each():
    table = cells([1.0, 1.0])
    once, twice = reproduction.flops(table), reproduction.flops(table.assign(subruns=[1, 2]))
    assert twice.other_flops.tolist() == [once.other_flops[0], 2 * once.other_flops[1]]
    assert twice.select_flops[1] == 2 * once.select_flops[1] > 0


def test_closed_form_and_unknown_estimators():
    m, n, r, c = 1024, 30, 4, 3
    assert reproduction.cell_flops("kmeans", "{}", m, n, r, c, 0) == (
        0.0, reproduction.KMEANS_RUNS * 2.0 * n * c * m)  # Elkan on 1024 dimensions: its first assignment
    assert reproduction.cell_flops("copkmeans", json.dumps({"n_restarts": 20}), m, n, c, c, 8) == (
        0.0, 20 * 2.0 * n * c * m)  # clusters by itself: no protocol KMeans
    assert all(math.isnan(v) for v in reproduction.cell_flops("no_such_method", "{}", m, n, r, c, 10))


def test_ccf_from_nmf_adds_the_nmf_fit_of_the_same_trial():
    ccf_params = json.dumps({"init_from_nmf": True, "n_starts": 10, "min_iter": 30, "max_iter": 10000,
                             "stopping": "reference", "tol": 1e-5})
    table = pd.concat([cells([1.0], estimator="nmf", n_iter=200, trial=[0]),
                       cells([1.0], estimator="ccf", method="CCF", params=ccf_params, n_iter=50, trial=[0]),
                       cells([1.0], estimator="ccf", method="CCF", params=ccf_params, n_iter=50, trial=[1])],
                      ignore_index=True)
    iterations = reproduction._nmf_iterations(table)
    assert math.isnan(iterations[0]) and iterations[1] == 200 and math.isnan(iterations[2])
    found = reproduction.flops(table)
    alone = reproduction.cell_flops("ccf", ccf_params, 1024, 33, 3, 3, 50)
    with_nmf = reproduction.cell_flops("ccf", ccf_params, 1024, 33, 3, 3, 50, nmf_iter=200)
    assert alone[0] == 0  # CCF itself iterates one start
    assert (found.select_flops[1], found.other_flops[1]) == with_nmf
    assert (found.select_flops[2], found.other_flops[2]) == alone  # trial 1 has no nmf cell: not counted
    assert with_nmf[0] > 0


def _width(B):
    return B.shape[0] * B.shape[-1] if B.ndim == 3 else B.shape[-1]


@pytest.mark.filterwarnings(AT_THE_CAP)  # the reference rule may stop at max_iter: the products are counted
@pytest.mark.parametrize("estimator", sorted(COSTS))
@pytest.mark.parametrize("solver", [{"n_starts": 3, "min_iter": 4, "max_iter": 10, "stopping": "fixed"},
                                    {"n_starts": 3, "min_iter": 4, "max_iter": 300, "stopping": "reference"}])
def test_the_model_counts_the_products_with_x_that_a_fit_runs(estimator, solver, monkeypatch):
    """Every product with X of a real fit (the fused passes, the KL passes, x_dot and xt_dot in the methods) against
    the model's count for the iterations it reports, without the products it adds besides them (the (r x r)
    products, U V^T of ``reconstruction_err_`` and the concepts' X W of the outputs)."""
    counted = []
    fused, kl_pass = products.SampleBlocks.fused, KLProducts._pass

    def counting_fused(self, P, rule, B):
        counted.append(2 * 2.0 * self.X.shape[0] * self.X.shape[1] * _width(P))
        return fused(self, P, rule, B)

    def counting_pass(self, P, Q, row_side, divergence):
        counted.append(2 * 2.0 * self.M.shape[0] * self.M.shape[1] * P.shape[0] * P.shape[-1])
        return kl_pass(self, P, Q, row_side, divergence)

    def counting(product):
        def wrapped(X, B):
            counted.append(2.0 * X.shape[0] * X.shape[1] * _width(B))
            return product(X, B)
        return wrapped

    monkeypatch.setattr(products.SampleBlocks, "fused", counting_fused)
    monkeypatch.setattr(KLProducts, "_pass", counting_pass)
    for name in ("core.frobenius", "cnmf", "sparse_nmf", "ntf", "nlcf", "concept", "lcf", "gnmf", "fnmf", "npnmf",
                 "pcgnmf", "nmf_ncw"):
        module = importlib.import_module(f"src.methods.{name}")
        for product in ("x_dot", "xt_dot"):
            if hasattr(module, product):
                monkeypatch.setattr(module, product, counting(getattr(products, product)))
    rng = np.random.default_rng(0)
    n, m, r = 40, 64, 3
    X = rng.random((n, m))
    y = np.where(rng.random(n) < 0.3, np.repeat(np.arange(4), n // 4), -1)
    extra = {"image_shape": (8, 8)} if estimator == "ntf" else {}
    model = methods.REGISTRY[estimator](n_components=r, random_state=0, **solver, **extra)
    model.fit(X, y if getattr(model, "needs_labels", False) else None)
    cost = COSTS[estimator]
    besides = 2 if cost is reproduction.CONCEPT else 1  # not seen by the patches
    bare = dataclasses.replace(cost, grams=0, per_fit=cost.per_fit - besides, knn=False)
    select, other = reproduction.iterating_flops(bare, {**reproduction._defaults(estimator), **solver}, m, n, r,
                                                 model.n_iter_)
    assert sum(counted) == pytest.approx(select + other, abs=2 * 2.0 * m * n * r)  # within two products per fit


def test_bounds_per_method_and_dataset_sorted_by_work_with_a_total():
    table = pd.concat([cells([1.0, 1.0], dataset="yale"), cells([3.0], dataset="orl"),
                       cells([9.0], dataset="orl", status="reused"),
                       cells([2.0], dataset="orl", estimator="no_such_method", method="X")], ignore_index=True)
    frame = reproduction.bounds(table, RATES)
    assert frame[["method", "dataset"]].values.tolist() == [["NMF", "orl"], ["NMF", "yale"], ["X", "orl"],
                                                             ["all", "all"]]  # a tie keeps the table's order
    total = frame.iloc[-1]
    assert total.work == 7.0 and total.cells == 4 and total.unmodelled == 1  # the reused cell is not this run's work
    nmf_orl = frame.iloc[0]
    select, other = reproduction.cell_flops("nmf", NMF_PARAMS, 1024, 33, 3, 3, 100)
    assert nmf_orl.bound == pytest.approx(select / 50e9 + other / 40e9)
    assert nmf_orl.above == pytest.approx(1 - nmf_orl.bound / 3.0)
    assert math.isnan(frame.iloc[2].bound) and not math.isnan(frame.iloc[1].bound)


def test_the_bound_at_each_cells_own_shapes():
    table = pd.concat([cells([1.0, 1.0], dataset="yale", n_samples=33), cells([4.0], dataset="orl", n_samples=30),
                       cells([2.0], dataset="orl", estimator="no_such_method", method="X", n_samples=30),
                       cells([9.0], dataset="orl", status="reused", n_samples=40)], ignore_index=True)
    shapes = reproduction.cell_shapes(table)  # the computed cells' shapes only
    assert shapes == [(30, 1024, 3), (30, 1024, 30), (33, 1024, 3), (33, 1024, 30)]  # one and ten starts' columns
    own = {(33, 1024, 3): 10.0, (33, 1024, 30): 20.0, (30, 1024, 3): 5.0, (30, 1024, 30): 25.0}
    frame = reproduction.bounds(table, RATES, own)
    select, other = reproduction.cell_flops("nmf", NMF_PARAMS, 1024, 30, 3, 3, 100)
    nmf_orl = frame.iloc[0]
    assert (nmf_orl.method, nmf_orl.dataset) == ("NMF", "orl")
    assert nmf_orl.own_bound == pytest.approx(select / 25e9 + other / 5e9)  # wide rate for the selection phase
    assert nmf_orl.own_above == pytest.approx(1 - nmf_orl.own_bound / 4.0)
    select, other = reproduction.cell_flops("nmf", NMF_PARAMS, 1024, 33, 3, 3, 100)
    assert frame.iloc[1].own_bound == pytest.approx(2 * (select / 20e9 + other / 10e9))
    assert math.isnan(frame.iloc[2].own_bound)  # no model, no bound at any rate
    total = frame.iloc[-1]
    assert total.own_bound == pytest.approx(frame.iloc[0].own_bound + frame.iloc[1].own_bound)
    assert "own_bound" in reproduction.bounds(table, RATES).columns  # NaN without the rates
    assert reproduction.bounds(table, RATES).own_bound.isna().all()
    missing = reproduction.bounds(table, RATES, {})  # a shape without a measured rate: no bound for the cell
    assert missing.own_bound.isna().all()


def test_shape_rates_measure_each_shape_once():
    rates = reproduction.shape_rates([(20, 64, 2), (20, 64, 20)], budget_s=0.001)
    assert set(rates) == {(20, 64, 2), (20, 64, 20)} and all(0 < r < math.inf for r in rates.values())


# -- rows, the section, the wiring ---------------------------------------------------------------------------------
def run_table():
    computed = cells([5.0, 3.0, 2.0], paper=["cai", "cnmf", "cnmf"], sweep=[0, 0, 1],
                     job=["cai/runs/a", "cnmf/runs/b", "cnmf/runs/c"], cpu_seconds=[4.0, math.nan, 2.0])
    shared = cells([3.0], paper="pcgnmf", job="pcgnmf/runs/b", status="shared")
    return pd.concat([computed, shared], ignore_index=True)


def loader_of(table, summary):
    return lambda folder: (table, summary)


def test_rows_of_a_reproduction(tmp_path):
    rows = reproduction.report_rows(tmp_path, loader_of(run_table(), {"wall_seconds": 7.0, "workers": 2,
                                                                      "cores": 2}), RATES, cores=(4,))
    by = {(r.name, r.method, r.dataset): r for r in rows}
    assert all(r.item == reproduction.ITEM and not r.op and not r.failure for r in rows)
    assert by[(reproduction.WORK, "", "all papers")].measured == 10.0
    assert by[(reproduction.CPU, "", "all papers")].measured == 6.0  # where known: 2 of 3 computed cells
    assert by[(reproduction.RATIO, "", "all papers")].measured == pytest.approx(7.0 / (10.0 / 2))
    assert by[(reproduction.RATE, "wide", "")].measured == 50.0
    assert by[(reproduction.BOUND, "all", "all")].extra["work_s"] == 10.0
    walls = {(r.extra["cores"], r.method): r.measured for r in rows if r.name == reproduction.SCHEDULE}
    assert set(walls) == {(c, s) for c in (2, 4) for s in (reproduction.BEFORE, reproduction.AFTER,
                                                           reproduction.IDEAL)}
    assert walls[2, reproduction.AFTER] == 5 and walls[2, reproduction.IDEAL] == 5
    assert walls[2, reproduction.BEFORE] == 8  # cai/0 5 s | cnmf/0 3 s, cnmf/1 2 s, pcgnmf/0 3 s


def test_no_reproduction_is_one_row(tmp_path):
    for folder, loader in ((tmp_path / "absent", None), (tmp_path, lambda folder: None),
                           (tmp_path, lambda folder: pd.DataFrame(columns=reproduction.COLUMNS))):
        rows = reproduction.report_rows(folder, loader, rates=lambda: pytest.fail("measured without cells"))
        assert len(rows) == 1 and rows[0].result == targets.MISSING and "no reproduction" in rows[0].missing
    with pytest.raises(NoReproduction, match="lacks"):
        reproduction.load(tmp_path, loader_of(run_table().drop(columns=["status"]), {}))


def test_a_failing_bound_leaves_the_rest_and_no_verdict(tmp_path):
    def broken():
        raise RuntimeError("no BLAS today")

    rows = reproduction.report_rows(tmp_path, loader_of(run_table(), {}), broken, cores=(4,))
    bound = [r for r in rows if r.name == reproduction.BOUND]
    assert len(bound) == 1 and "no BLAS today" in bound[0].missing
    assert any(r.name == reproduction.SCHEDULE for r in rows)
    summary = next(s for s in targets.summarize([targets.reproduce_all(1200.0), *rows]) if s.item == 1)
    assert summary.result == targets.PASS  # the report's rows never change item 1's verdict


def test_the_section_shows_the_bound_at_own_shapes_when_measured(tmp_path):
    def own(shapes):
        return dict.fromkeys(shapes, 20.0)

    rows = reproduction.report_rows(tmp_path, loader_of(run_table(), {"wall_seconds": 7.0, "cores": 2}), RATES,
                                    cores=(4,), own_rates=own)
    total = next(r for r in rows if r.name == reproduction.BOUND and r.method == "all")
    select, other = reproduction.cell_flops("nmf", NMF_PARAMS, 1024, 33, 3, 3, 100)
    assert total.extra["own_bound_s"] == pytest.approx(3 * (select + other) / 20e9)  # the three computed cells
    assert "at its own shapes' rates" in total.detail
    assert total.extra["own_above_pct"] == pytest.approx(100 * (1 - total.extra["own_bound_s"] / 10.0))
    text = report.markdown([targets.reproduce_all(7.0), *rows], {"mode": "full"})
    section = text[text.index("## 1. "):text.index("## 2. ")]
    assert "| bound at own shapes | above it |" in section
    assert "| all | all | 3 | 10.0 s | 0.010 s | 100% | 0.025 s | 100% |" in section  # 20 GFLOP/s for every shape
    plain = report.markdown([targets.reproduce_all(7.0), *reproduction.report_rows(
        tmp_path, loader_of(run_table(), {"wall_seconds": 7.0, "cores": 2}), RATES, cores=(4,))], {})
    assert "bound at own shapes" not in plain  # not measured, not shown


def test_the_section_in_bench_md_and_csv(tmp_path):
    rows = [targets.reproduce_all(7.0), *reproduction.report_rows(
        tmp_path, loader_of(run_table(), {"wall_seconds": 7.0, "workers": 2, "cores": 2}), RATES, cores=(4,))]
    text = report.markdown(rows, {"mode": "full"})
    section = text[text.index("## 1. "):text.index("## 2. ")]
    assert report.REPRODUCTION_TITLE in section and "| wall / (work / cores) | 1.40x |" in section
    assert "| NMF | yale | 3 | 10.0 s |" in section and "| all | all | 3 | 10.0 s |" in section
    assert "| 2 | 8.0 s | 1.60x | 5.0 s | 1.00x | 5.0 s |" in section
    assert "| 4 | 5.0 s | 2.00x | 5.0 s | 2.00x | 2.5 s |" in section  # four sweeps, four workers
    assert section.count("| all papers |") == 1  # item 1's own table keeps its one row
    read = report.csv_text(rows).splitlines()
    assert len(read) == 1 + len(rows) and "work_s" in read[0]
    absent = report.markdown([targets.reproduce_all(None), *reproduction.report_rows(tmp_path / "nope")], {})
    section = absent[absent.index("## 1. "):absent.index("## 2. ")]
    assert f"{report.REPRODUCTION_TITLE}\n\nNot measured: no reproduction in {tmp_path / 'nope'}" in section


def test_the_bench_reports_the_reproduction_beside_item_1(tmp_path, monkeypatch):
    monkeypatch.setattr(reproduction, "gemm_rates", lambda: RATES)
    asked = []
    monkeypatch.setattr(reproduction, "shape_rates", lambda shapes: asked.append(shapes) or dict.fromkeys(shapes, 9.0))
    bench = Bench(QUICK, ["nmf"], {}, tmp_path, outputs=tmp_path,
                  reproduction_loader=loader_of(run_table(), {"wall_seconds": 7.0, "cores": 2}))
    bench.last_reproduction()
    assert {r.name for r in bench.rows} >= {reproduction.WORK, reproduction.BOUND, reproduction.SCHEDULE}
    assert asked == [[(33, 1024, 3), (33, 1024, 30)]]  # the computed cells' shapes, measured once
    assert all("own_bound_s" in r.extra for r in bench.rows if r.name == reproduction.BOUND)
    broken = Bench(QUICK, ["nmf"], {}, tmp_path, outputs=tmp_path,
                   reproduction_loader=lambda folder: 1 / 0)
    broken.last_reproduction()  # a loader that fails: one row (and one for the benchmark), the bench goes on
    assert len(broken.rows) == 2 and "unreadable: ZeroDivisionError" in broken.rows[0].missing
    assert broken.rows[1].name == reproduction.BENCHMARK and broken.rows[1].missing
    empty = Bench(QUICK, ["nmf"], {}, tmp_path, outputs=tmp_path / "nope")
    empty.last_reproduction()
    assert len(empty.rows) == 2 and "no reproduction" in empty.rows[0].missing
    assert "no make benchmark record" in empty.rows[1].missing


def test_the_command_takes_the_reproduction_folder():
    from tools.bench.__main__ import parser

    assert parser().parse_args([]).reproduction == Path("outputs") / "reproduce"
    assert str(parser().parse_args(["--reproduction", "/x/y"]).reproduction) == "/x/y"


def test_the_benchmark_counts_what_it_computed_and_what_it_copied(tmp_path):
    table = cells([4.0, 3.0, 2.0, 9.0, 9.0], status=["computed", "computed", "computed", "reused", "reused"],
                  shared_with=[None, None, None, "outputs/reproduce/cnmf/runs/yale_NMF", None])
    rows = reproduction.benchmark_rows(tmp_path, loader_of(table, {"wall_seconds": 5.0, "workers": 2, "cores": 2}),
                                       cores=(4,))
    by = {(r.method, r.dataset): r for r in rows}
    assert by["wall", "the benchmark"].measured == 5.0 and by["wall", "the benchmark"].extra["copied"] == 1
    assert "3 computed, 1 copied from the reproduction, 1 on disk before" in by["wall", "the benchmark"].detail
    assert by["work", "the benchmark"].measured == 9.0  # the computed cells only
    assert by[reproduction.AFTER, "the benchmark, 2 cores"].measured == 5.0  # 4 | 3 + 2
    assert by[reproduction.AFTER, "the benchmark, 4 cores"].measured == 4.0
    missing = reproduction.benchmark_rows(tmp_path / "absent")
    assert len(missing) == 1 and "no make benchmark record" in missing[0].missing


def test_record_only_reports_a_runs_record_without_data_or_fits(tmp_path, monkeypatch):
    from tools.bench import __main__ as command
    from tools.bench import data as bench_data

    monkeypatch.setattr(reproduction, "default_loader", loader_of(run_table(), {"wall_seconds": 7.0, "cores": 2}))
    monkeypatch.setattr(reproduction, "gemm_rates", lambda: RATES)
    monkeypatch.setattr(reproduction, "shape_rates", lambda shapes: dict.fromkeys(shapes, 20.0))
    monkeypatch.setattr(bench_data, "load", lambda *args: pytest.fail("a data set loaded"))
    monkeypatch.setattr(Bench, "run", lambda self: pytest.fail("the whole bench ran"))
    out = tmp_path / "out"
    assert command.main(["--record-only", "--reproduction", str(tmp_path), "--out", str(out)]) == 0
    text = (out / "bench.md").read_text()
    assert "the run's record only" in text
    assert "| all | all | 3 | 10.0 s |" in text and "| bound at own shapes | above it |" in text

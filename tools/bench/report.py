"""bench.md and bench.csv from the rows of a run (:class:`.targets.Target`), written atomically.

bench.md: the run's header, one summary line per target of issue #13 (:func:`.targets.summarize`), one
section per item with every row, the time to convergence beside the per-iteration ratios, and the
provenance footer (:func:`src.running.provenance.markdown`). bench.csv: every row with its numbers (one column per
key of the rows' ``extra``).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from src.running import provenance
from src.files import write_atomic
from . import reproduction
from .targets import ITEMS, Target, summarize

MARKDOWN, CSV = "bench.md", "bench.csv"
TRIAL = "protocol trial: AC float32 - float64"
COLUMNS = ("item", "name", "method", "dataset", "threads", "measured", "unit", "op", "limit", "result", "detail",
           "failure", "missing")


def number(value, unit: str = "") -> str:
    """A measured value as the report shows it: n/a for None or NaN."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if unit == "x":
        return f"{value:.2f}x"
    if unit in ("s", "min"):
        return f"{value:,.{3 if abs(value) < 1 else 1}f} {unit}"
    if unit == "ms":
        return f"{value:.3f} ms"
    return f"{value:.4g}"


def limit_text(row: Target) -> str:
    return f"{row.op} {number(row.limit, row.unit)}" if row.op else ""


def measured_text(row: Target) -> str:
    if row.failure:
        return row.failure
    if row.missing:
        return row.missing
    return number(row.measured, row.unit)


def result_text(result: str) -> str:
    return f"**{result}**" if result == "FAIL" else result


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A Markdown table (pipes in cells escaped)."""
    def line(cells):
        return "| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ") for c in cells) + " |"
    return [line(header), "| " + " | ".join("---" for _ in header) + " |", *map(line, rows), ""]


def worst(rows: Sequence[Target]) -> Target | None:
    """The measured row farthest on the wrong side of its limit (the largest for <=, <; smallest for >=)."""
    judged = [r for r in rows if r.op and r.result in ("PASS", "FAIL")]
    if not judged:
        return None
    return max(judged, key=lambda r: -r.measured if r.op == ">=" else r.measured)


def summary_lines(rows: Sequence[Target]) -> list[str]:
    body = []
    for summary in summarize(rows):
        mine = [r for r in rows if r.item == summary.item]
        bad = worst(mine)
        where = "" if bad is None else f"{bad.method} on {bad.dataset}" if bad.method else bad.dataset
        if bad is not None and bad.extra.get("rank") is not None:
            where += f", k = {bad.extra['rank']}"
        body.append([str(summary.item), ITEMS[summary.item], result_text(summary.result), summary.passed,
                     summary.failed, summary.missing, f"{where}: {number(bad.measured, bad.unit)}" if bad else ""])
    return table(["#", "target", "result", "pass", "fail", "not measured", "worst measured"], body)


def item_table(rows: Sequence[Target]) -> list[str]:
    if not rows:
        return []
    body = [[r.dataset, r.method, "" if r.threads is None else r.threads, r.name, measured_text(r), limit_text(r),
             result_text(r.result), r.detail] for r in rows]
    return table(["data set", "method", "threads", "measured", "value", "limit", "result", "detail"], body)


def trial_table(rows: Sequence[Target]) -> list[str]:
    body = []
    for r in rows:
        e = r.extra
        body.append([r.method, r.dataset, e["k"], e["trial"], e["n"]]
                    + [f"{e[f'{metric}_{v}']:.3f}" for metric in ("acc", "nmi") for v in ("f64", "f32", "f64b")]
                    + [f"{e['n_iter_f64']} / {e['n_iter_f32']} / {e['n_iter_f64b']}"])
    return table(["method", "data set", "k", "trial", "n", "AC f64", "AC f32", "AC f64 seed 2", "NMI f64", "NMI f32",
                  "NMI f64 seed 2", "iterations f64 / f32 / f64 seed 2"], body)


def ratio_text(row: Target | None) -> str:
    return number(row.measured, "x") if row is not None and row.measured is not None else "n/a"


def convergence_table(rows: Sequence[Target]) -> list[str]:
    """Item 6 with the per-iteration ratios of item 2 (one thread, all cores) for the same method, data set and
    rank."""
    ratios = {(r.method, r.dataset, r.threads, r.extra.get("rank")): r for r in rows if r.item == 2 and r.method}
    most = max((threads for (_, _, threads, _) in ratios if threads), default=1)
    body = []
    for r in (r for r in rows if r.item == 6 and r.method):
        e = r.extra
        body.append([r.dataset, r.method, measured_text(r), e.get("n_iter", ""), e.get("converged", ""),
                     number(e.get("select_s"), "s"), number(e.get("iterate_ms"), "ms"),
                     ratio_text(ratios.get((r.method, r.dataset, 1, e.get("rank")))),
                     ratio_text(ratios.get((r.method, r.dataset, most, e.get("rank")))) if most > 1 else "n/a"])
    return table(["data set", "method", "seconds", "iterations", "converged", "selection phase", "ms / iteration",
                  "x scikit-learn MU, 1 thread", f"x scikit-learn MU, {most} threads"], body)


REPRODUCTION_TITLE = "### Where the last reproduction's time went"
REPRODUCTION_TEXT = (
    "From the reproduction's record of its cells (`--reproduction DIR`, default `outputs/reproduce`; "
    "`tools/bench/reproduction.py`). Work: the fit and KMeans seconds of the cells this run computed, each at one "
    "BLAS thread. Bound: each computed cell's floating-point operations in dense products (the products with X of "
    "its updates and objectives times its iterations, the selection phase's starts included; the kNN graph; the "
    "protocol's KMeans; one model per method, documented with the lines it counts in the module) at the GEMM rates "
    "of one thread above (COIL20's X times one start's or ten starts' columns); the share of the work above it is "
    "time spent on anything but that arithmetic at those rates. Bound at own shapes: the same operations at the "
    "rate one thread reaches on X^T F with the cell's own samples, features and columns (a product of rank 2 to 10 "
    "columns, or of a few dozen samples, runs slower than COIL20's with 16); the share above it is what the "
    "products alone do not explain. Schedules: the recorded cell times replayed on P cores. Before: each sweep of "
    "a paper one unit (its jobs and cells one after another, a shared cell in every job that holds it), the sweeps "
    "in paper order, each worker taking the next when free. After: one pool of cells, each once, longest expected "
    "first. Ideal: the pool's work / P. Every cell counts, reused ones too: a reproduction from scratch.")


def is_reproduction(row: Target) -> bool:
    """Whether ``row`` is one of the report on the last reproduction (:mod:`.reproduction`), shown beside item 1."""
    return row.item == reproduction.ITEM and row.name in reproduction.NAMES


def _seconds(value) -> str:
    return number(value, "s")


def reproduction_lines(rows: Sequence[Target]) -> list[str]:
    """The report on the last reproduction: one line when there is none, else its summary, its work above the
    arithmetic bound per method and data set, and the simulated schedules."""
    if not rows:
        return []
    lines = [REPRODUCTION_TITLE, ""]
    absent = [r for r in rows if r.name == reproduction.NO_REPRODUCTION]
    if absent:
        return lines + [f"Not measured: {absent[0].missing}.", ""]
    lines += [REPRODUCTION_TEXT, ""]
    overview = [r for r in rows if r.name in (reproduction.WALL, reproduction.WORK, reproduction.CPU,
                                              reproduction.RATIO, reproduction.RATE)]

    def value(r: Target) -> str:
        return f"{r.measured:.1f} GFLOP/s" if r.unit == "GFLOP/s" and r.measured is not None else measured_text(r)

    lines += table(["measured", "value", "detail"],
                   [[f"{r.name}, {r.method}" if r.method else r.name, value(r), r.detail] for r in overview])
    bound = [r for r in rows if r.name == reproduction.BOUND]
    if len(bound) == 1 and bound[0].missing:
        lines += [f"Arithmetic bound: {bound[0].missing}.", ""]
    elif bound:
        lines += ["Work above the arithmetic bound, per method and data set (computed cells, most work first):", ""]
        own = any("own_bound_s" in r.extra for r in bound)
        header = ["method", "data set", "cells", "work", "bound", "above the bound"]
        body = [[r.method, r.dataset, r.extra.get("cells", ""), _seconds(r.extra.get("work_s")),
                 _seconds(r.extra.get("bound_s")), "n/a" if r.measured is None else f"{r.measured:.0f}%"]
                for r in bound]
        if own:
            header += ["bound at own shapes", "above it"]
            for r, cells in zip(bound, body):
                above = r.extra.get("own_above_pct")
                cells += [_seconds(r.extra.get("own_bound_s")),
                          "n/a" if above is None or math.isnan(above) else f"{above:.0f}%"]
        lines += table(header, body)
    walls: dict[int, dict[str, Target]] = {}
    for r in (r for r in rows if r.name == reproduction.SCHEDULE):
        walls.setdefault(r.extra["cores"], {})[r.method] = r
    body = []
    for cores, by in sorted(walls.items()):
        cells = [cores]
        for name in (reproduction.BEFORE, reproduction.AFTER):
            row = by.get(name)
            cells += ["n/a", "n/a"] if row is None else [_seconds(row.measured), f"{row.extra['ratio_to_ideal']:.2f}x"]
        cells.append(_seconds(by[reproduction.IDEAL].measured) if reproduction.IDEAL in by else "n/a")
        body.append(cells)
    if body:
        lines += ["Simulated wall time from the recorded cell times:", ""]
        lines += table(["cores", reproduction.BEFORE, "x ideal", reproduction.AFTER, "x ideal", reproduction.IDEAL],
                       body)
    return lines


SECTIONS = {
    1: "From `outputs/reproduce/all/wall_seconds.txt`, which `make reproduce-all` (`python -m src.reproduce all`) "
       "writes when every paper has run to the end; whatever else ran on the machine meanwhile is included.",
    2: "Ours: the mean time between two consecutive passes of the kept start (`Pass` callback of the shared loop: "
       "one update plus the objective the loop evaluates after it), from a one-start fit of fixed length after a "
       "warm-up fit. scikit-learn: `NMF(solver=\"mu\", init=\"random\", tol=0)` with the method's loss "
       "(frobenius or kullback-leibler), per iteration = difference of the fastest fits of few and many "
       "iterations over the extra iterations (it evaluates no loss with tol=0). Threads: `threadpool_limits`. "
       "Both at the rank in the row (nmf and nmf_kl at k = 10 and 20, `Plan.sklearn_ranks`). Only nmf and nmf_kl "
       "have a limit; the other methods' ratios (k = 10) are shown beside item 6.",
    3: "One fit with `n_starts=10, min_iter=max_iter=30, stopping=\"fixed\"` (the selection phase: every start "
       "advances together when the class is `batched`) against ten fits with `n_starts=1, max_iter=30, "
       "stopping=\"fixed\"` (random_state seed, seed + 1, ...), whole `fit` calls at one BLAS thread, k = 10. "
       "For a class that declares its arithmetic (`products_per_iteration`: nmf, nmf_kl) the detail adds the "
       "largest speed-up any batching could give: the ten fits' time over the time of all their products with X "
       "(2 m n k flops each) at the rate of one large float64 product on one thread (`gemm_gflops` column), as "
       "if nothing else took time. Batching shares the reads of X and the per-start overhead, not the "
       "arithmetic, so where that bound is below 3 the target cannot be met by batching.",
    4: "Each in its own child process at all cores, one start, `stopping=\"fixed\"`; a fit still running past "
       "its cap is stopped and fails. The KMeans baseline as the protocol runs it (`src.protocol.cell.fit_and_cluster` "
       "over all samples and classes). Peak RSS: the child's VmHWM (interpreter, libraries, data and fit).",
    5: "Per iteration as in item 2 at one thread, with `dtype` float64 and float32. Protocol trials "
       "(`src.protocol.cell.fit_and_cluster`: the configured solver, KMeans best of 20 on the representation) in "
       "float64, float32 and float64 from a second seed (`src.protocol.cell.subrun_seed`): float32 passes where it "
       "changes AC/NMI on average no more than another seed does.",
    6: "Each iterating method with its configured parameters (reference rule, n_starts = 10) at one BLAS thread, "
       "k = 10: seconds of the whole fit, iterations (counted as the reference code counts them), whether the rule "
       "was met, the selection phase (set-up included) and ms per iteration of the kept start; beside them the "
       "per-iteration ratios to scikit-learn's MU of item 2.",
}


def markdown(rows: Sequence[Target], header: Mapping, record: Mapping | None = None) -> str:
    """The whole bench.md (see the module docstring); ``header`` from :mod:`.__main__`."""
    lines = ["# Speed and scale benchmark (issue #13)", ""]
    lines += [f"- {key}: {value}" for key, value in header.items()] + [""]
    if str(header.get("mode", "")).startswith("quick"):
        lines += ["*Quick mode: tiny sizes and few iterations check the code; the verdicts mean nothing.*", ""]
    lines += ["## Targets", ""] + summary_lines(rows)
    for item, title in ITEMS.items():
        mine = [r for r in rows if r.item == item]
        lines += [f"## {item}. {title}", "", SECTIONS[item], ""]
        if item == 6:
            lines += convergence_table(rows)
            lines += item_table([r for r in mine if not r.method])
            continue
        lines += item_table([r for r in mine if r.name != TRIAL and not is_reproduction(r)])
        trials = [r for r in mine if r.name == TRIAL]
        if trials:
            lines += trial_table(trials)
        if item == reproduction.ITEM:
            lines += reproduction_lines([r for r in mine if is_reproduction(r)])
    if record is not None:
        lines += provenance.markdown(record)
    return "\n".join(line for line in lines if line is not None) + "\n"


def csv_text(rows: Sequence[Target]) -> str:
    """Every row, with one column per key of the rows' ``extra``."""
    extra = sorted({key for r in rows for key in r.extra} - set(COLUMNS))
    handle = io.StringIO()
    writer = csv.DictWriter(handle, fieldnames=[*COLUMNS, *extra], lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow({**{key: r.extra[key] for key in extra if key in r.extra},
                         **{key: getattr(r, key) for key in COLUMNS}})
    return handle.getvalue()


def write(out_dir: Path, rows: Sequence[Target], header: Mapping, record: Mapping | None = None) -> tuple[Path, Path]:
    """Write bench.md, bench.csv (and provenance.json if ``record``) into ``out_dir``; their paths."""
    out_dir = Path(out_dir)
    write_atomic(out_dir / MARKDOWN, markdown(rows, header, record))
    write_atomic(out_dir / CSV, csv_text(rows))
    if record is not None:
        provenance.write(out_dir, record)
    return out_dir / MARKDOWN, out_dir / CSV

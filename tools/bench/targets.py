"""The targets of issue #13 as data: what was measured, the limit, and whether it holds.

Every number the benchmark reports is a :class:`Target` row: a measured value with a limit (PASS or
FAIL), a measured value without one ("info": a ratio or a time shown beside the targets), a measurement
that failed (stopped at its cap, or an error: FAIL) or one not made ("not measured": a data set or method
not selected, a file absent). The functions below build each kind of row from plain numbers.

Items (issue #13):

1. ``make reproduce-all`` converged wall time <= :data:`REPRODUCE_MINUTES` minutes.
2. nmf and nmf_kl per iteration <= :data:`SKLEARN_RATIO` x scikit-learn's MU per iteration, at each rank of
   the plan (k = 10 and 20), one row per rank.
3. Ten batched starts >= :data:`BATCHED_SPEEDUP` x faster than ten single-start fits.
4. Every factorization on MNIST-70k under :data:`BIG_FIT_SECONDS` s; the KMeans baseline under
   :data:`KMEANS_SECONDS` s.
5. float32 against float64: speed (info) and AC/NMI changed no more than a second float64 seed changes them.
6. Time to convergence under the reference rule (info).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

REPRODUCE_MINUTES = 25.0
SKLEARN_RATIO = 1.0
BATCHED_SPEEDUP = 3.0
BIG_FIT_SECONDS = 60.0
KMEANS_SECONDS = 120.0

ITEMS = {
    1: f"`make reproduce-all` converged wall time <= {REPRODUCE_MINUTES:g} min",
    2: f"nmf and nmf_kl per iteration <= {SKLEARN_RATIO:g}x scikit-learn MU per iteration (k = 10 and 20)",
    3: f"ten batched starts >= {BATCHED_SPEEDUP:g}x faster than ten single-start fits (k = 10)",
    4: f"every factorization on MNIST-70k < {BIG_FIT_SECONDS:g} s; KMeans baseline < {KMEANS_SECONDS:g} s",
    5: "float32 against float64: speed, and AC/NMI within the noise of a second float64 seed",
    6: "time to convergence under the reference rule (n_starts = 10)",
}

PASS, FAIL, INFO, MISSING = "PASS", "FAIL", "info", "not measured"
OPS = ("<=", ">=", "<", "")


def holds(value: float, op: str, limit: float) -> bool:
    """Whether ``value op limit`` (op one of "<=", ">=", "<")."""
    if op == "<=":
        return value <= limit
    if op == ">=":
        return value >= limit
    if op == "<":
        return value < limit
    raise ValueError(f"op={op!r} must be one of '<=', '>=', '<'")


def _finite(value) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


@dataclass(frozen=True)
class Target:
    """One row of the report (see the module docstring).

    Attributes
    ----------
    item : int
        The issue's item, 1-6.
    name : str
        What is measured.
    method, dataset : str
    threads : int or None
        BLAS threads of the measurement.
    measured : float or None
        The value, in ``unit``.
    op, limit : str, float or None
        The target: ``measured op limit``; no limit (``op`` "") for a reported value.
    detail : str
        The numbers behind the value, for the reader.
    failure : str
        Why there is no value although one was due (stopped at its cap, an error): the row fails.
    missing : str
        Why it was not measured.
    extra : mapping of str to value
        Further numbers, written to bench.csv.
    """

    item: int
    name: str
    method: str = ""
    dataset: str = ""
    threads: int | None = None
    measured: float | None = None
    unit: str = ""
    op: str = ""
    limit: float | None = None
    detail: str = ""
    failure: str = ""
    missing: str = ""
    extra: Mapping = field(default_factory=dict)

    def __post_init__(self):
        if self.op not in OPS:
            raise ValueError(f"op={self.op!r} must be one of {OPS}")
        if bool(self.op) != (self.limit is not None):
            raise ValueError("a target has both an op and a limit, a reported value neither")

    @property
    def result(self) -> str:
        if self.failure:
            return FAIL
        if self.missing or not _finite(self.measured):
            return MISSING
        if not self.op:
            return INFO
        return PASS if holds(self.measured, self.op, self.limit) else FAIL


# -- the rows of each item ---------------------------------------------------------------------------------
def reproduce_all(seconds: float | None, note: str = "not run") -> Target:
    """Item 1 from the wall time in seconds (None: ``note`` says why there is none)."""
    name = "`make reproduce-all`, converged protocol, wall time"
    if seconds is None:
        return Target(1, name, dataset="all papers", op="<=", limit=REPRODUCE_MINUTES, unit="min", missing=note)
    return Target(1, name, dataset="all papers", measured=seconds / 60, unit="min", op="<=",
                  limit=REPRODUCE_MINUTES, detail=f"{seconds:,.0f} s", extra={"seconds": seconds})


def sklearn_ratio_name(rank: int | None = None) -> str:
    """The name of an item-2 row, with its rank k when given."""
    return "per iteration / scikit-learn MU" + ("" if rank is None else f", k = {rank}")


def sklearn_ratio(method: str, dataset: str, threads: int, ours_ms: float, sklearn_ms: float, loss: str,
                  target: bool, rank: int | None = None) -> Target:
    """Item 2: ours per iteration over scikit-learn's MU with the same loss, both at ``rank`` (in the row's name
    and in ``extra``); a limit only if ``target``."""
    ratio = ours_ms / sklearn_ms if _finite(ours_ms) and _finite(sklearn_ms) and sklearn_ms > 0 else None
    limit = {"op": "<=", "limit": SKLEARN_RATIO} if target else {}
    detail = f"{_fmt(ours_ms, 3)} ms / {_fmt(sklearn_ms, 3)} ms ({loss})"
    missing = "" if ratio is not None else (
        "scikit-learn's difference of fits lost in noise" if _finite(ours_ms) else "no iterations timed")
    return Target(2, sklearn_ratio_name(rank), method, dataset, threads, ratio, "x", detail=detail,
                  missing=missing, extra={"ours_ms": ours_ms, "sklearn_ms": sklearn_ms, "loss": loss, "rank": rank},
                  **limit)


def batched_bound(singles_s: float, flops: float, gflops: float) -> float | None:
    """The largest speed-up any batching of the starts can give: the single-start fits' time over the time
    of their ``flops`` (all starts' products with X) at ``gflops``, the BLAS's rate on a large product, as if
    nothing else took time. Batching shares the reads of X, not the arithmetic: each start still needs its
    own products."""
    if not (_finite(singles_s) and _finite(flops) and _finite(gflops)) or flops <= 0 or gflops <= 0:
        return None
    return singles_s / (flops / (gflops * 1e9))


def batched_speedup(method: str, dataset: str, batched_s: float, singles_s: float, extra: Mapping = (),
                    bound: float | None = None) -> Target:
    """Item 3: ten single-start fits' total time over one fit of ten batched starts (``bound``: see
    :func:`batched_bound`, shown beside it when the class declares its arithmetic)."""
    speedup = singles_s / batched_s if batched_s > 0 else None
    detail = f"{singles_s:.3f} s / {batched_s:.3f} s"
    if bound is not None:
        detail += f"; at most {bound:.2f}x with every product at the BLAS rate and nothing else"
    return Target(3, "ten single-start fits / ten batched starts", method, dataset, 1, speedup, "x", ">=",
                  BATCHED_SPEEDUP, detail=detail,
                  extra={"batched_s": batched_s, "singles_s": singles_s, "bound_x": bound, **dict(extra)})


def big_fit(method: str, dataset: str, threads: int, seconds: float | None, limit: float, what: str,
            failure: str = "", detail: str = "", extra: Mapping = ()) -> Target:
    """Item 4: one fit (or the KMeans baseline's trial) on the big data set, under ``limit`` seconds."""
    return Target(4, what, method, dataset, threads, None if failure else seconds, "s", "<", limit, detail=detail,
                  failure=failure, extra=dict(extra))


def dtype_speed(method: str, dataset: str, f64_ms: float, f32_ms: float) -> Target:
    """Item 5: float64 per iteration over float32 per iteration (reported)."""
    ratio = f64_ms / f32_ms if _finite(f64_ms) and _finite(f32_ms) and f32_ms > 0 else None
    return Target(5, "float32 speed-up per iteration (float64 / float32)", method, dataset, 1, ratio, "x",
                  detail=f"{_fmt(f64_ms, 3)} ms / {_fmt(f32_ms, 3)} ms", extra={"f64_ms": f64_ms, "f32_ms": f32_ms})


def dtype_quality(method: str, dataset: str, metric: str, rows: Iterable[Mapping]) -> Target:
    """Item 5: mean |float32 - float64| of ``metric`` over the trials, against the seed noise.

    ``rows`` hold ``<metric>_f64``, ``<metric>_f32`` and ``<metric>_f64b`` (float64 from a second seed);
    the limit is the mean |second seed - first seed|.
    """
    rows = list(rows)
    name = f"{metric.upper()}: mean |float32 - float64| <= mean |second float64 seed - float64|"
    if not rows:
        return Target(5, name, method, dataset, 1, op="<=", limit=math.nan, missing="no trials")
    change = [abs(r[f"{metric}_f32"] - r[f"{metric}_f64"]) for r in rows]
    noise = [abs(r[f"{metric}_f64b"] - r[f"{metric}_f64"]) for r in rows]
    changed = sum(c > 0 for c in change)
    mean = sum(change) / len(change)
    scale = sum(noise) / len(noise)
    means = {dtype: sum(r[f"{metric}_{dtype}"] for r in rows) / len(rows) for dtype in ("f64", "f32", "f64b")}
    detail = (f"{changed} of {len(rows)} trials changed; mean {metric.upper()} float64 {means['f64']:.3f}, "
              f"float32 {means['f32']:.3f}, second seed {means['f64b']:.3f}")
    return Target(5, name, method, dataset, 1, mean, "", "<=", scale, detail=detail,
                  extra={"trials": len(rows), "changed": changed, **{f"mean_{k}": v for k, v in means.items()}})


def convergence(method: str, dataset: str, timing: Mapping, failure: str = "") -> Target:
    """Item 6: seconds of a fit under the reference rule (reported), with its iterations and verdict."""
    detail = "" if failure else f"{timing['n_iter']} iterations, converged: {timing['converged']}"
    return Target(6, "fit to convergence (reference rule)", method, dataset, 1,
                  None if failure else timing["seconds"], "s", detail=detail, failure=failure, extra=dict(timing))


def missing(item: int, name: str, reason: str, method: str = "", dataset: str = "", op: str = "",
            limit: float | None = None, unit: str = "") -> Target:
    """A row of ``item`` that was not measured, and why."""
    return Target(item, name, method, dataset, unit=unit, op=op, limit=limit, missing=reason)


def failed(item: int, name: str, reason: str, method: str = "", dataset: str = "", threads: int | None = None,
           op: str = "", limit: float | None = None, unit: str = "") -> Target:
    """A row of ``item`` whose measurement failed (counts as FAIL)."""
    return Target(item, name, method, dataset, threads, unit=unit, op=op, limit=limit, failure=reason)


# -- summaries ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Summary:
    """The verdict of one item over its rows."""

    item: int
    passed: int
    failed: int
    missing: int
    reported: int

    @property
    def result(self) -> str:
        if self.failed:
            return FAIL
        if self.passed:
            return PASS if not self.missing else f"{PASS} where measured"
        return INFO if self.reported and not self.missing else MISSING


def summarize(rows: Iterable[Target]) -> list[Summary]:
    """One :class:`Summary` per item of :data:`ITEMS`, in order; rows with a limit count, the rest report."""
    rows = list(rows)
    out = []
    for item in ITEMS:
        mine = [r for r in rows if r.item == item]
        judged = [r for r in mine if r.op or r.failure]
        results = [r.result for r in judged]
        out.append(Summary(item, results.count(PASS), results.count(FAIL), results.count(MISSING),
                           sum(r.result == INFO for r in mine)))
    return out


def _fmt(value, digits: int) -> str:
    return f"{value:.{digits}f}" if _finite(value) else "n/a"

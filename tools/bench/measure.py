"""Timing a fit through the loop's callback, scikit-learn's MU per iteration, and capped child processes.

* :class:`PassTimer` is the ``callback`` of ``estimator.fit(X, y, callback=...)``: the loop
  (:func:`src.methods.core.loop.solve`) calls it with a :class:`~src.methods.core.loop.Pass` after every update, in
  the ``"select"`` phase (all starts advancing together) or the ``"iterate"`` phase (the kept start). The
  time of one iteration of the kept start is the time between two consecutive ``"iterate"`` passes: its
  update plus the objective the loop evaluates after it. The first iterate pass is not counted (it follows
  the set-up, or the selection and the copy of the kept start). Past ``cap_s`` seconds it stops the fit
  (:class:`FitStopped`).
* :func:`difference_per_iteration`: scikit-learn's ``NMF(solver="mu", tol=0)`` per iteration from two
  fits of few and many iterations, so that its set-up and initial loss cancel out.
* :func:`run_in_child`: a job in a fresh process (``forkserver``: forked from a server that never ran a
  BLAS or OpenMP pool), stopped at a time limit, with its peak resident memory (VmHWM).
"""

from __future__ import annotations

import inspect
import math
import multiprocessing
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from src.errors import one_line
from src.methods.core.loop import Pass


class FitStopped(Exception):
    """A fit ran past its cap; ``seconds`` after its start, with ``passes`` updates done."""

    def __init__(self, seconds: float, passes: int):
        super().__init__(f"stopped after {seconds:.0f} s ({passes} updates)")
        self.seconds = seconds
        self.passes = passes


class PassTimer:
    """The time of every pass of the loop (see the module docstring).

    Parameters
    ----------
    cap_s : float, optional
        Stop the fit (raise :class:`FitStopped` from the callback) at the first pass later than this
        many seconds after :meth:`start`.
    """

    def __init__(self, cap_s: float | None = None):
        self.cap_s = cap_s
        self.start()

    def start(self) -> None:
        """Reset; the clock starts now (call it right before ``fit``)."""
        self.started = time.perf_counter()
        self.phases: list[str] = []
        self.times: list[float] = []  # seconds since start, after each pass

    def __call__(self, update: Pass) -> None:
        elapsed = time.perf_counter() - self.started
        self.phases.append(update.phase)
        self.times.append(elapsed)
        if self.cap_s is not None and elapsed > self.cap_s:
            raise FitStopped(elapsed, len(self.times))

    def count(self, phase: str) -> int:
        """Passes seen in ``phase``."""
        return sum(p == phase for p in self.phases)

    def iteration_seconds(self) -> list[float]:
        """Seconds of each iteration of the kept start: between consecutive ``"iterate"`` passes."""
        return [self.times[i] - self.times[i - 1] for i in range(1, len(self.times))
                if self.phases[i - 1] == self.phases[i] == "iterate"]

    def iterate_ms(self) -> float:
        """Mean ms of one iteration of the kept start (NaN with fewer than two iterate passes)."""
        seconds = self.iteration_seconds()
        return 1e3 * float(np.mean(seconds)) if seconds else math.nan

    def select_seconds(self) -> float:
        """Seconds from :meth:`start` to the last ``"select"`` pass (set-up included; NaN without one)."""
        ends = [t for p, t in zip(self.phases, self.times) if p == "select"]
        return ends[-1] if ends else math.nan

    def first_pass_seconds(self) -> float:
        """Seconds from :meth:`start` to the first pass: the fit's set-up and its first update."""
        return self.times[0] if self.times else math.nan


@dataclass(frozen=True)
class FitTiming:
    """How a timed fit went (:func:`timed_fit`)."""

    seconds: float
    n_iter: int | None  # None if stopped
    converged: bool | None
    select_passes: int
    iterate_passes: int
    iterate_ms: float  # mean ms per iteration of the kept start
    select_s: float  # seconds to the end of the selection phase (NaN without one)
    first_pass_s: float
    stopped: str = ""  # why the fit was stopped, or ""

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def timed_fit(model, X, y=None, cap_s: float | None = None) -> FitTiming:
    """Fit ``model`` on X (rows are samples) with a :class:`PassTimer` as its callback.

    A fit that passes ``cap_s`` seconds is stopped and reported (``stopped``), not raised. A model whose
    ``fit`` takes no ``callback`` is fitted without one: no passes, no cap.
    """
    timer = PassTimer(cap_s)
    stopped = ""
    timer.start()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning of a capped max_iter: n_iter and converged say it
        try:
            if "callback" in inspect.signature(model.fit).parameters:
                model.fit(X, y, callback=timer)
            else:  # a fit that takes no callback: timed as a whole, no passes seen, no cap
                model.fit(X, y)
        except FitStopped as exc:
            stopped = str(exc)
    seconds = time.perf_counter() - timer.started
    return FitTiming(
        seconds=seconds,
        n_iter=None if stopped else int(model.n_iter_),
        converged=None if stopped else getattr(model, "converged_", None),
        select_passes=timer.count("select"),
        iterate_passes=timer.count("iterate"),
        iterate_ms=timer.iterate_ms(),
        select_s=timer.select_seconds(),
        first_pass_s=timer.first_pass_seconds(),
        stopped=stopped,
    )


def wall_seconds(fn: Callable[[], object]) -> float:
    """Wall time of ``fn()`` in seconds."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def gemm_gflops(size: int = 1500, repeats: int = 3) -> float:
    """The rate of numpy's BLAS on one (size x size) float64 matrix product, in GFLOP/s (best of
    ``repeats``), with the threads it has now: the ceiling for any product of the factorizations."""
    A = np.random.default_rng(0).random((size, size))
    A @ A  # warm-up
    best = min(wall_seconds(lambda: A @ A) for _ in range(repeats))
    return 2.0 * size**3 / best / 1e9


def iterations_for(seconds_per_iteration: float, budget_s: float, low: int, high: int) -> int:
    """Iterations that take about ``budget_s`` at ``seconds_per_iteration``, within [low, high]."""
    if not seconds_per_iteration > 0:
        return high
    return int(min(max(math.ceil(budget_s / seconds_per_iteration), low), high))


def difference_per_iteration(short: Sequence[float], long: Sequence[float], short_iters: int,
                             long_iters: int) -> float:
    """Seconds per iteration from fits of ``short_iters`` and ``long_iters`` iterations.

    ``short`` and ``long`` are the wall times of repeated fits; the fastest of each is used, so the
    set-up both share (validation, initialization, the initial loss) cancels. NaN if the difference is not
    positive (noise larger than the extra iterations).
    """
    if long_iters <= short_iters:
        raise ValueError(f"long_iters={long_iters} must exceed short_iters={short_iters}")
    difference = min(long) - min(short)
    return difference / (long_iters - short_iters) if difference > 0 else math.nan


SHORT_ITERS = 2


def sklearn_fit_seconds(X_rows: np.ndarray, rank: int, beta_loss: str, n_iter: int, seed: int = 0) -> float:
    """Wall time of scikit-learn's ``NMF(solver="mu", init="random", tol=0)`` for ``n_iter`` iterations."""
    from sklearn.decomposition import NMF as SklearnNMF

    model = SklearnNMF(rank, solver="mu", beta_loss=beta_loss, init="random", max_iter=n_iter, tol=0.0,
                       random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # max_iter reached: the point
        return wall_seconds(lambda: model.fit(X_rows))


def sklearn_per_iteration_ms(X_rows: np.ndarray, rank: int, beta_loss: str, budget_s: float, low: int,
                             high: int, repeats: int = 3) -> tuple[float, int]:
    """scikit-learn's MU per iteration in ms (:func:`difference_per_iteration`) and the extra iterations.

    A first fit of ``SHORT_ITERS + low`` iterations estimates the cost and warms up; the extra iterations
    then take about ``budget_s``; fits longer than a few seconds are not repeated. A difference lost in
    noise is measured once more over four times the extra iterations (still NaN if lost again).
    """
    pilot = sklearn_fit_seconds(X_rows, rank, beta_loss, SHORT_ITERS + low) / (SHORT_ITERS + low)
    extra = iterations_for(pilot, budget_s, low, high)
    for attempt in range(2):
        extra *= 4 if attempt else 1
        repeats = repeats if pilot * extra < 3.0 else 1
        short = [sklearn_fit_seconds(X_rows, rank, beta_loss, SHORT_ITERS) for _ in range(repeats)]
        long = [sklearn_fit_seconds(X_rows, rank, beta_loss, SHORT_ITERS + extra) for _ in range(repeats)]
        per_iteration = difference_per_iteration(short, long, SHORT_ITERS, SHORT_ITERS + extra)
        if not math.isnan(per_iteration):
            break
    return 1e3 * per_iteration, extra


# -- child processes ---------------------------------------------------------------------------------------
PRELOAD = ["numpy", "scipy.sparse", "sklearn.cluster", "tools.bench.jobs"]


def vm_hwm_mb(pid: int | str = "self") -> float:
    """Peak resident memory so far (VmHWM) of process ``pid``, in MB (Linux /proc; NaN elsewhere)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return math.nan


@dataclass(frozen=True)
class ChildResult:
    """What :func:`run_in_child` got: ``status`` "ok" (``value`` set), "stopped" or "error" (``error``)."""

    status: str
    value: object = None
    seconds: float = math.nan
    peak_rss_mb: float = math.nan
    error: str = ""


def _child(connection, job, args, kwargs) -> None:
    try:
        value = job(*args, **kwargs)
        connection.send(("ok", value, vm_hwm_mb()))
    except BaseException as exc:  # everything goes back as one line, the parent carries on
        connection.send(("error", one_line(exc), vm_hwm_mb()))
    finally:
        connection.close()


def _context():
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)  # takes effect when the server starts (the first child)
    return context


def run_in_child(job: Callable, args: tuple = (), kwargs: dict | None = None,
                 timeout_s: float | None = None) -> ChildResult:
    """Run ``job(*args, **kwargs)`` in a fresh child process; stop it after ``timeout_s`` seconds.

    ``job`` must be importable by name (a module-level function) and return something picklable. The
    child runs alone: the call returns when it has ended.
    """
    context = _context()
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(send, job, args, kwargs or {}), daemon=True)
    start = time.perf_counter()
    process.start()
    send.close()
    try:
        if not receive.poll(timeout_s):
            peak = vm_hwm_mb(process.pid)
            process.kill()
            process.join()
            return ChildResult("stopped", seconds=time.perf_counter() - start, peak_rss_mb=peak,
                               error=f"stopped after {timeout_s:.0f} s")
        try:
            status, value, peak = receive.recv()
        except EOFError:  # died without a word (killed by the system, a crash)
            process.join()
            return ChildResult("error", seconds=time.perf_counter() - start,
                               error=f"the child process died (exit code {process.exitcode})")
    finally:
        receive.close()
    process.join()
    seconds = time.perf_counter() - start
    if status == "ok":
        return ChildResult("ok", value=value, seconds=seconds, peak_rss_mb=peak)
    return ChildResult("error", seconds=seconds, peak_rss_mb=peak, error=value)

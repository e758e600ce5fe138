"""Processes a test waits for, started on the machine's other core while this process runs the tests before it.

pytest runs one test at a time in this process. A test that starts a long process and waits for it (the docs
build, a dry run that composes every job of every paper) leaves the other core idle while it waits, and so do the
in-process tests before it. A test module that defines ``start_in_background(items)`` is called by conftest.py
once the session's tests are known (``items``: its selected tests); it hands such work to :func:`submit`, and its
test or fixture takes the outcome with :func:`result`: waited for if the work is running, run there and then if it
has not started (or was never submitted: a module run alone works as before). The work itself is unchanged and so
is what the test checks of it: an exception raised by the work is raised by :func:`result`, in the test.

The background runs one piece of work at a time, in the order submitted; a test waiting for work the background is
running takes the next pending work meanwhile and runs it itself (:func:`result`), so that two things run at a
time, never more, and neither core idles while work is left. The tests meanwhile change this process's environment
(``monkeypatch.setenv``) and working directory: the work uses absolute paths and the environment as it was when
the first work was submitted (:func:`environ`, the default of :func:`run`). The processes started through
:func:`run` that are still running when the session ends are killed (:func:`shutdown`, called by conftest.py), and
the directories made by :func:`directory` are removed. With ``REPRO_TEST_BACKGROUND=0`` conftest.py starts
nothing: each test runs its work itself, in turn.

Tests that compute in this process for a long while (no process to wait for) go to the other core whole: a module
that sets ``IN_ITS_OWN_PROCESS = True`` has its selected tests run by :func:`run_tests`, one pytest process of
their own in the background (conftest.py submits it), and each test here ends as it ended there
(:func:`take_outcome`: passed, failed with its report, skipped or xfailed). Its fixtures are set up in both
processes, so such a module has no expensive one.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: Where a pytest process started by :func:`run_tests` records its tests' outcomes (conftest.py writes them).
OUTCOMES_VARIABLE = "REPRO_TEST_OUTCOMES"

_lock = threading.Lock()
_wake = threading.Condition(_lock)  # the worker waits on it for work
_worker: threading.Thread | None = None
_pending: dict[Hashable, tuple[Future, Callable[[], object]]] = {}  # submitted, not started, in order
_outcomes: dict[Hashable, Future] = {}
_processes: set[subprocess.Popen] = set()
_directories: list[Path] = []
_environ: dict[str, str] | None = None
_closed = False


def submit(key: Hashable, work: Callable[[], object]) -> None:
    """Run ``work()`` in the background, after the work submitted before it; its outcome is :func:`result`
    of ``key`` (a key already known is left as it is). ``work`` may take the :func:`result` of other keys, not
    of its own (it would wait for itself)."""
    global _worker, _environ
    with _lock:
        if _closed or key in _outcomes:
            return
        if _worker is None:
            _environ = dict(os.environ)  # before any test runs: no test's monkeypatch in it
            _worker = threading.Thread(target=_work_through, name="background", daemon=True)
            _worker.start()
        _outcomes[key] = Future()
        _pending[key] = (_outcomes[key], work)
        _wake.notify()


def _take(key: Hashable | None = None) -> tuple[Future, Callable[[], object]] | None:
    """Under the lock: the pending work ``key`` (default: the first pending), now running, or None."""
    if not _pending or (key is not None and key not in _pending):
        return None
    outcome, work = _pending.pop(next(iter(_pending)) if key is None else key)
    outcome.set_running_or_notify_cancel()
    return outcome, work


def _run(outcome: Future, work: Callable[[], object]) -> None:
    try:
        outcome.set_result(work())
    except BaseException as exc:  # noqa: BLE001 - handed to the test, as work() raised it
        outcome.set_exception(exc)
        if isinstance(exc, KeyboardInterrupt):  # Ctrl-C during work run here stops the session too
            raise


def _work_through() -> None:
    """The background thread: the pending work, first submitted first, until the session ends."""
    while True:
        with _lock:
            while not _pending and not _closed:
                _wake.wait()
            if _closed:
                return
            taken = _take()
        _run(*taken)


def result(key: Hashable, work: Callable[[], object]):
    """The outcome of the work ``key``, raising what the work raised. Not started yet (or never submitted):
    ``work()`` runs here, now, and its outcome is kept for the next call. Running in the background: while it
    runs, this thread takes the next pending work and runs it (a core waiting on another does the queue's work
    instead), then waits for the rest."""
    with _lock:
        taken = _take(key)
        if taken is None and key not in _outcomes:
            _outcomes[key] = Future()
            _outcomes[key].set_running_or_notify_cancel()  # running: a later call waits for it
            taken = _outcomes[key], work
        outcome = _outcomes[key]
    if taken is not None:
        _run(*taken)
    while not outcome.done():
        with _lock:
            other = None if outcome.done() else _take()
        if other is None:
            break
        _run(*other)
    return outcome.result()


def start_tests(items, works: dict[str, Callable[..., object]]) -> None:
    """For a module's ``start_in_background(items)``: submit ``works[name](**parameters)`` for each selected test
    whose function is called ``name`` (``parameters``: its case's, when parametrized); :func:`outcome` is its
    result, in the test."""
    for item in items:
        name = getattr(item, "originalname", item.name)
        if name in works:
            submit((item.module.__name__, item.name), _work(item, works[name]))


def outcome(request, works: dict[str, Callable[..., object]]):
    """In a test (``request``: pytest's fixture), the :func:`result` of its entry in ``works`` (see
    :func:`start_tests`)."""
    item = request.node
    return result((item.module.__name__, item.name), _work(item, works[item.originalname]))


def _work(item, work: Callable[..., object]) -> Callable[[], object]:
    callspec = getattr(item, "callspec", None)
    return functools.partial(work, **callspec.params) if callspec is not None else work


def run_tests(nodeids: list[str]) -> dict[str, dict]:
    """Run the tests ``nodeids`` in a pytest process of its own (from the checkout, without a background of
    its own); returns each test's outcome as :func:`take_outcome` reads it. A test the process never reported
    (it crashed, or could not collect it) is absent; ``""`` holds the process's exit status and output."""
    record = directory("outcomes") / "outcomes.jsonl"
    env = dict(environ(), REPRO_TEST_BACKGROUND="0", **{OUTCOMES_VARIABLE: str(record)})
    ran = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "", *nodeids], cwd=REPO,
              env=env)
    outcomes = {"": {"status": ran.returncode, "output": f"{ran.stdout[-3000:]}\n{ran.stderr[-3000:]}"}}
    for line in record.read_text().splitlines() if record.is_file() else []:
        phase = json.loads(line)
        kept = outcomes.setdefault(phase["nodeid"], phase)
        if phase["outcome"] != "passed" and kept["outcome"] == "passed":  # a failed teardown fails a passed test
            outcomes[phase["nodeid"]] = phase
    return outcomes


def record_outcome(report) -> None:
    """For conftest.py's ``pytest_runtest_logreport`` in a process :func:`run_tests` started: one phase of a
    test (setup, call, teardown), appended to the file it names."""
    path = os.environ.get(OUTCOMES_VARIABLE)
    if not path:
        return
    skipped = report.skipped and isinstance(report.longrepr, tuple)  # (file, line, "Skipped: reason")
    reason = report.longrepr[2].removeprefix("Skipped: ") if skipped else report.longreprtext
    phase = {"nodeid": report.nodeid, "when": report.when, "outcome": report.outcome, "text": reason,
             "xfail": getattr(report, "wasxfail", None)}
    with open(path, "a", encoding="utf-8") as file:
        file.write(json.dumps(phase) + "\n")


def take_outcome(outcomes: dict[str, dict], nodeid: str) -> None:
    """In the test ``nodeid`` itself: end as it ended in the process of :func:`run_tests` (fail with its
    report, skip or xfail with its reason, else return)."""
    phase = outcomes.get(nodeid)
    if phase is None:
        pytest.fail(f"the pytest process did not report {nodeid}: exit status {outcomes['']['status']}\n"
                    f"{outcomes['']['output']}", pytrace=False)
    if phase["xfail"] is not None:
        pytest.xfail(phase["xfail"])
    if phase["outcome"] == "skipped":
        pytest.skip(phase["text"])
    if phase["outcome"] == "failed":
        pytest.fail(f"in the pytest process of its module ({phase['when']}):\n{phase['text']}", pytrace=False)


def environ() -> dict[str, str]:
    """A copy of the environment as it was when the first work was submitted (before any test ran), else of
    the present one."""
    with _lock:
        return dict(_environ if _environ is not None else os.environ)


def run(args, *, timeout: float | None = None, **options) -> subprocess.CompletedProcess:
    """:func:`subprocess.run` with the output captured as text (``options`` as Popen takes them; ``env``:
    :func:`environ` unless given), through a process :func:`shutdown` kills if the session ends first."""
    options.setdefault("env", environ())
    with _lock:
        if _closed:
            raise RuntimeError(f"the session has ended: {args[0]} not started")
        process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   start_new_session=True, **options)  # its own group: killed with its children
        _processes.add(process)
    with process:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill(process)
            process.communicate()
            raise
        finally:
            with _lock:
                _processes.discard(process)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def run_module(module: str, *args: str, cwd: Path, timeout: float = 600, **variables: str):
    """``python -m module args`` run from ``cwd`` through :func:`run`: this interpreter, the checkout importable
    (``PYTHONPATH``), Hydra's errors on one line (``HYDRA_FULL_ERROR=0``), :func:`environ` and ``variables``.
    How the tests run a command of the project."""
    env = dict(environ(), HYDRA_FULL_ERROR="0", PYTHONPATH=str(REPO), **variables)
    return run([sys.executable, "-m", module, *args], cwd=cwd, env=env, timeout=timeout)


def kill(process: subprocess.Popen) -> None:
    """Kill the process and the processes it started (its process group)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:  # ended already
        pass


def directory(prefix: str) -> Path:
    """A new empty directory, removed when the session ends."""
    path = Path(tempfile.mkdtemp(prefix=f"pytest-background-{prefix}-"))
    with _lock:
        _directories.append(path)
    return path


def shutdown() -> None:
    """The session ends: no more work or process starts, the work not started is dropped, the processes still
    running are killed, the directories are removed."""
    global _closed
    with _lock:
        _closed = True
        worker, processes = _worker, list(_processes)
        for outcome, _ in _pending.values():
            outcome.cancel()
        _pending.clear()
        _wake.notify_all()
    for process in processes:
        kill(process)
    if worker is not None:
        worker.join()
    for path in _directories:
        shutil.rmtree(path, ignore_errors=True)

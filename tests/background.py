"""Processes a test waits for, started on the machine's other core while this process runs the tests before it.

pytest runs one test at a time in this process. A test that starts a long process and waits for it (the docs
build, a dry run that composes every job of every paper) leaves the other core idle while it waits, and so do the
in-process tests before it. A test module that defines ``start_in_background(items)`` is called by conftest.py
once the session's tests are known (``items``: its selected tests); it hands such work to :func:`submit`, and its
test or fixture takes the outcome with :func:`result`: waited for if the work is running, run there and then if it
has not started (or was never submitted: a module run alone works as before). The work itself is unchanged and so
is what the test checks of it: an exception raised by the work is raised by :func:`result`, in the test.

One piece of work runs at a time, in the order submitted, so that this process and the background share two
cores. The tests meanwhile change this process's environment (``monkeypatch.setenv``) and working directory:
the work uses absolute paths and the environment as it was when the first work was submitted (:func:`environ`,
the default of :func:`run`). The processes started through :func:`run` that are still running when the session
ends are killed (:func:`shutdown`, called by conftest.py), and the directories made by :func:`directory` are
removed. With ``REPRO_TEST_BACKGROUND=0`` conftest.py starts nothing: each test runs its work itself, in turn.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

_lock = threading.Lock()
_queue: ThreadPoolExecutor | None = None
_outcomes: dict[Hashable, Future] = {}
_processes: set[subprocess.Popen] = set()
_directories: list[Path] = []
_environ: dict[str, str] | None = None
_closed = False


def submit(key: Hashable, work: Callable[[], object]) -> None:
    """Run ``work()`` in the background, after the work submitted before it; its outcome is :func:`result`
    of ``key`` (a key already known is left as it is). ``work`` may take the :func:`result` of other keys, not
    of its own (it would wait for itself)."""
    global _queue, _environ
    with _lock:
        if _closed or key in _outcomes:
            return
        if _queue is None:
            _queue = ThreadPoolExecutor(max_workers=1, thread_name_prefix="background")
            _environ = dict(os.environ)  # before any test runs: no test's monkeypatch in it
        _outcomes[key] = _queue.submit(work)


def result(key: Hashable, work: Callable[[], object]):
    """The outcome of the work ``key``: waited for if it runs (or ran) in the background; else ``work()`` is run
    here, now, and its outcome kept for the next call. Raises what the work raised."""
    with _lock:
        outcome = _outcomes.get(key)
        here = outcome is None or outcome.cancel()  # cancel(): submitted but not started, so it runs here
        if here:
            outcome = _outcomes[key] = Future()
            outcome.set_running_or_notify_cancel()  # running: a later call waits for it
    if here:
        try:
            outcome.set_result(work())
        except BaseException as exc:  # noqa: BLE001 - handed to the test, as work() raised it
            outcome.set_exception(exc)
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
        queue, processes = _queue, list(_processes)
    if queue is not None:
        queue.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        kill(process)
    if queue is not None:
        queue.shutdown(wait=True)
    for path in _directories:
        shutil.rmtree(path, ignore_errors=True)

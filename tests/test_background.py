"""tests/background.py: work runs once, in the background or in the test that needs it, and a test waiting
for the background runs the pending work meanwhile.

Each test loads its own copy of the module (its own worker and queue), so that the session's background work
is not in the way."""

import importlib.util
import threading
from pathlib import Path

import pytest

WAIT = 60  # seconds; only reached if the module is broken


@pytest.fixture
def background():
    spec = importlib.util.spec_from_file_location("background_copy", Path(__file__).with_name("background.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield module
    module.shutdown()


def test_a_test_waiting_for_the_background_runs_the_next_pending_work(background):
    started, released = threading.Event(), threading.Event()
    threads = {}

    def first():
        threads["first"] = threading.current_thread()
        started.set()
        return released.wait(WAIT)  # True only if the second ran while this one waited

    def second():
        threads["second"] = threading.current_thread()
        released.set()
        return "second"

    background.submit("first", first)
    background.submit("second", second)
    assert started.wait(WAIT)
    assert background.result("first", first) is True
    assert threads["second"] is threading.current_thread() is not threads["first"]
    assert background.result("second", second) == "second"


def test_work_not_started_runs_in_the_test_once_and_its_exception_is_the_tests(background):
    calls = []

    def failing():
        calls.append(threading.current_thread())
        raise ValueError("the work failed")

    with pytest.raises(ValueError, match="the work failed"):
        background.result("never submitted", failing)
    with pytest.raises(ValueError, match="the work failed"):
        background.result("never submitted", failing)
    assert calls == [threading.current_thread()]

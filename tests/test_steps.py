"""Processes side by side (src.steps.run_steps, which runs the readings' sweeps of src.explain): up to N at a
time, in order, each when ready; the first failure stops the others with one line."""

import pytest

from src import steps


class FakeSweep:
    """A stand-in for ``subprocess.Popen`` of a sweep: it ends (with ``status``) after ``polls`` polls."""

    log: list = []
    running: set = set()
    most = 0

    def __init__(self, command, start_new_session=False, status=0, polls=2):
        assert start_new_session  # its process group can be stopped as a whole
        self.command, self.status, self.polls, self.returncode = command, status, polls, None
        self.pid = 10**9 + len(FakeSweep.log)
        FakeSweep.log.append(("start", command))
        FakeSweep.running.add(self)
        FakeSweep.most = max(FakeSweep.most, len(FakeSweep.running))

    def poll(self):
        if self.returncode is None:
            self.polls -= 1
            if self.polls <= 0:
                self.returncode = self.status
                FakeSweep.running.discard(self)
                FakeSweep.log.append(("end", self.command))
        return self.returncode

    def wait(self):
        if self.returncode is None:
            self.returncode = -15
            FakeSweep.running.discard(self)
        return self.returncode


@pytest.fixture
def fake_processes(monkeypatch):
    FakeSweep.log, FakeSweep.running, FakeSweep.most = [], set(), 0
    killed = []
    monkeypatch.setattr(steps, "POLL_SECONDS", 0.0)
    monkeypatch.setattr(steps.subprocess, "Popen", FakeSweep)
    monkeypatch.setattr(steps.os, "killpg", lambda pid, sig: killed.append(pid))
    return killed


def test_steps_share_the_places_in_order(fake_processes):
    done = []
    seconds = steps.run_steps([(f"step {i}", ["python", "-m", "x", str(i)], i) for i in range(5)], 2,
                              finished=done.append)
    assert len(seconds) == 5 and FakeSweep.most == 2 and done == [0, 1, 2, 3, 4]
    starts = [command[-1] for kind, command in FakeSweep.log if kind == "start"]
    assert starts == ["0", "1", "2", "3", "4"] and not fake_processes


def test_a_step_waits_until_it_is_ready(fake_processes):
    """Step 1 may not run beside step 0 (as two data steps of src.explain may not)."""
    steps.run_steps([(f"step {i}", ["python", str(i)], i) for i in range(3)], 3,
                    ready=lambda item, running: not (item == 1 and 0 in running))
    order = [(kind, command[-1]) for kind, command in FakeSweep.log]
    assert order.index(("end", "0")) < order.index(("start", "1"))


def test_a_failing_step_stops_the_others_with_one_line(fake_processes, monkeypatch):
    def popen(command, start_new_session=False):  # the second fails while the first still runs
        fails = command[-1] == "1"
        return FakeSweep(command, start_new_session, 3 if fails else 0, 3 if fails else 50)

    monkeypatch.setattr(steps.subprocess, "Popen", popen)
    with pytest.raises(steps.StepFailed) as info:
        steps.run_steps([(f"step {i}", ["python", "-m", "x", str(i)], i) for i in range(4)], 2)
    assert info.value.status == 3 and "step 1 failed (exit status 3): python -m x 1" in str(info.value)
    assert "\n" not in str(info.value)
    assert len(fake_processes) == 1 and not FakeSweep.running  # the first was stopped, nothing else started
    assert sum(kind == "start" for kind, _ in FakeSweep.log) == 2

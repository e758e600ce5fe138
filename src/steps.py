"""Processes run side by side: a list of commands (sweeps of ``python -m src.run -m``), up to N at a time.

:mod:`src.explain` runs each reading of a paper as a sweep of its own this way (:func:`run_steps`): the
steps start in order as places free up, the first that fails stops the others (their whole process groups)
with one line.
"""

from __future__ import annotations

import logging
import os
import shlex
import signal
import subprocess
import sys
import time

from .config_dir import PACKAGE_NAME

logger = logging.getLogger(__name__)

#: The override that gives a sweep one worker, when several sweeps share the cores.
ONE_WORKER = "hydra.launcher.n_jobs=1"
POLL_SECONDS = 0.5


class StepFailed(Exception):
    """A step of a reproduction failed; the message is one line, ``status`` the exit status to return."""

    def __init__(self, message: str, status: int = 1):
        super().__init__(message)
        self.status = status


def python_module(module: str, *args: str) -> list[str]:
    """The command that runs the package's module ``module`` (``run``, ``data``) with ``args``."""
    return [sys.executable, "-m", f"{PACKAGE_NAME}.{module}", *args]


def _stop(running: dict) -> None:
    """Stop the sweeps still running (their whole process groups: the launcher and its workers)."""
    for process in running:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass
    for process in running:
        process.wait()


def run_steps(steps: list[tuple], at_once: int, ready=None, finished=None) -> list[float]:
    """Run ``(what, command, item)`` steps as processes, up to ``at_once`` at the same time; returns each
    step's wall seconds.

    Steps start in the given order, each as soon as a place is free and ``ready(item, running_items)`` holds
    (default: always); ``finished(item)`` runs after each step that succeeds. The first step that fails stops
    the others (their whole process groups) and raises :class:`StepFailed` with one line; so does an
    interrupt, after stopping them.
    """
    queue = list(enumerate(steps))  # (index, (what, command, item))
    running: dict = {}  # process -> (index, what, command, item, start time)
    seconds = [0.0] * len(steps)

    def startable():
        items = [entry[3] for entry in running.values()]
        return next((q for q in queue if ready is None or ready(q[1][2], items)), None)

    try:
        while queue or running:
            while len(running) < at_once and (entry := startable()) is not None:
                queue.remove(entry)
                i, (what, command, item) = entry
                logger.info("%s: %s", what, shlex.join(["python", *command[1:]]))
                running[subprocess.Popen(command, start_new_session=True)] = (i, what, command, item, time.time())
            time.sleep(POLL_SECONDS)
            for process in [p for p in running if p.poll() is not None]:
                i, what, command, item, clock = running.pop(process)
                seconds[i] = time.time() - clock
                if process.returncode != 0:
                    raise StepFailed(f"{what} failed (exit status {process.returncode}): "
                                     f"{shlex.join(['python', *command[1:]])}; its errors are above. Run the same "
                                     "command again to resume.", process.returncode)
                logger.info("%s: done in %.0f s", what, seconds[i])
                if finished is not None:
                    finished(item)
    finally:
        _stop(running)  # after a failure or an interrupt: nothing keeps running behind the error
    return seconds

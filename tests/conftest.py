"""Shared fixtures: the data mirror (../shared/datasets unless REPRO_DATA_MIRROR says otherwise), a per-module data
directory for the CLI runs, the random generator and a tiny matrix, the dry run of every paper's reproduction;
one BLAS thread in this process and, by default, in the processes the tests start; the work test modules start
in the background once the session's tests are known (background.py). Shared plain helpers are in helpers.py."""

import functools
import logging
import os
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import background
from helpers import THREAD_VARIABLES
from src import resolvers

REPO = Path(__file__).resolve().parents[1]
DEFAULT_MIRROR = REPO.parent / "shared" / "datasets"
if DEFAULT_MIRROR.is_dir():  # else: no mirror, the data are downloaded (tests needing the mirror itself skip)
    os.environ.setdefault("REPRO_DATA_MIRROR", str(DEFAULT_MIRROR))
# The test matrices are tiny: one BLAS thread is much faster than two threads on two busy cores.
threadpool_limits(1)
# The same for the processes the tests start (CLI runs, pool workers, the docs build and its gallery) and for
# the OpenMP runtime scikit-learn loads later in this one: one BLAS / OpenMP thread unless the environment says
# otherwise (a run's runtime.blas_threads still sets its own limit). Two threads on two busy cores spin against
# each other: the docs' gallery ran several times slower with them. A test that checks how a run chooses its
# threads starts its process without these variables (helpers.THREAD_VARIABLES).
for _name in THREAD_VARIABLES:
    os.environ.setdefault(_name, "1")
# The tests compose configs as the entry points do, with the configs' resolvers registered first.
resolvers.register()


@pytest.fixture
def mirror() -> Path:
    """Directory holding the raw data files, laid out like ../shared/datasets."""
    path = Path(os.environ.get("REPRO_DATA_MIRROR", DEFAULT_MIRROR))
    if not path.is_dir():
        pytest.skip(f"no data mirror at {path}")
    return path


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def tiny(rng):
    """A random nonnegative 12 samples x 8 features matrix (rows are samples)."""
    return rng.random((12, 8))


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    """An empty data directory shared by the CLI runs of one test module (the datasets are prepared once)."""
    return tmp_path_factory.mktemp("data")


class DryRun(NamedTuple):
    """What ``python -m src.reproduce all --dry-run`` did: its exit status, its log's messages, the jobs it
    planned (:class:`src.running.pool.jobs.Job`, every job of every paper's sweeps)."""

    status: int
    messages: list[str]
    jobs: list


@pytest.fixture(scope="session")
def every_papers_dry_run(tmp_path_factory) -> DryRun:
    """The dry run of every paper's reproduction, run once per session for the tests that read its jobs or its
    counts: composing all 151 jobs takes half a minute. ``src.reproduce.main(["all", "--dry-run"])`` runs in
    this process, from an empty directory (no cell on disk), recording what ``plan_jobs`` returns and every
    log message; this process keeps its SIGTERM handler and its logging level."""
    import src.running.pool as pool
    from src import reproduce

    planned, messages = [], []
    plan_jobs = pool.plan_jobs

    def recording(chosen, overrides):
        jobs = plan_jobs(chosen, overrides)
        planned.extend(jobs)
        return jobs

    class Recorder(logging.Handler):
        def emit(self, record):
            messages.append(record.getMessage())

    root, recorder = logging.getLogger(), Recorder(logging.INFO)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pool, "plan_jobs", recording)
        patch.setattr(reproduce.signal, "signal", lambda *args: None)
        patch.chdir(tmp_path_factory.mktemp("dry-run"))
        level = root.level
        root.addHandler(recorder)
        root.setLevel(logging.INFO)
        try:
            status = reproduce.main(["all", "--dry-run"])
        finally:
            root.setLevel(level)
            root.removeHandler(recorder)
    return DryRun(status, messages, planned)


#: The tests handed to a pytest process of their own (``IN_ITS_OWN_PROCESS`` modules): nodeid -> the
#: background work (key and function) that runs them.
_APART: dict[str, tuple] = {}


def pytest_collection_finish(session):
    """Each test module defining ``start_in_background(items)`` gets its selected tests, to start the processes
    they wait for on the other core (background.py); a module setting ``IN_ITS_OWN_PROCESS = True`` (tests that
    compute in this process for a minute, no expensive fixture) has its selected tests run in a pytest process
    of their own there, each test here taking its outcome. Not when the tests are only listed, nor with
    REPRO_TEST_BACKGROUND=0."""
    if session.config.option.collectonly or os.environ.get("REPRO_TEST_BACKGROUND") == "0":
        return  # REPRO_TEST_BACKGROUND=0: every test runs its work itself, in this process's order
    selected = {}
    for item in session.items:
        module = getattr(item, "module", None)
        if module is not None and (hasattr(module, "start_in_background") or
                                   getattr(module, "IN_ITS_OWN_PROCESS", False)):
            selected.setdefault(module, []).append(item)
    for module, items in selected.items():
        if getattr(module, "IN_ITS_OWN_PROCESS", False):
            key, work = ("pytest", module.__name__), functools.partial(background.run_tests, [i.nodeid for i in items])
            background.submit(key, work)
            _APART.update((item.nodeid, (key, work)) for item in items)
        if hasattr(module, "start_in_background"):
            module.start_in_background(items)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """A test run in a pytest process of its own ends as it ended there (background.take_outcome)."""
    apart = _APART.get(pyfuncitem.nodeid)
    if apart is None:
        return None
    background.take_outcome(background.result(*apart), pyfuncitem.nodeid)
    return True


def pytest_runtest_logreport(report):
    """In a pytest process started by background.run_tests: each phase of each test recorded for the session
    that started it."""
    background.record_outcome(report)


def pytest_sessionfinish(session):
    background.shutdown()

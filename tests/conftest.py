"""Shared fixtures: the data mirror (../shared/datasets unless REPRO_DATA_MIRROR says otherwise), a per-module data
directory for the CLI runs, the random generator and a tiny matrix. Shared plain helpers are in helpers.py."""

import os
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from src import resolvers

REPO = Path(__file__).resolve().parents[1]
DEFAULT_MIRROR = REPO.parent / "shared" / "datasets"
if DEFAULT_MIRROR.is_dir():  # else: no mirror, the data are downloaded (tests needing the mirror itself skip)
    os.environ.setdefault("REPRO_DATA_MIRROR", str(DEFAULT_MIRROR))
# The test matrices are tiny: one BLAS thread is much faster than two threads on two busy cores.
threadpool_limits(1)
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

"""Properties shared by GNMF, SemiGNMF and NMF-NCW (src.methods.gnmf, .nmf_ncw): monotone objective, finite factors, seeds."""

import numpy as np
import pytest

from src.methods.gnmf import GNMF, SemiGNMF
from src.methods.nmf_ncw import NMFNCW

from helpers import (
    check_degenerate_input_stays_finite,
    check_objective_never_increases,
    check_same_seed_same_result_and_init_untouched,
)

METHODS = {"gnmf": GNMF, "semignmf": SemiGNMF, "nmf_ncw": NMFNCW}


# -- properties shared by the three methods ------------------------------------------------------
CONFIGS = [
    ("gnmf", {}),
    ("gnmf", {"weight": "heat", "alpha": 10.0}),
    ("gnmf", {"weight": "cosine", "n_neighbors": 3}),
    ("semignmf", {}),
    ("semignmf", {"weight": "heat"}),
    ("semignmf", {"normalize_init": True}),
    ("nmf_ncw", {}),
]


@pytest.mark.parametrize("name, params", CONFIGS)
def test_objective_never_increases_and_factors_stay_nonnegative(name, params, rng):
    check_objective_never_increases(METHODS[name], params, rng, n_labelled=8)


@pytest.mark.parametrize("name, params", CONFIGS)
def test_degenerate_input_stays_finite(name, params, rng):
    check_degenerate_input_stays_finite(METHODS[name], params, rng)


@pytest.mark.parametrize("name", METHODS)
def test_same_seed_same_result_and_init_is_not_modified(name, rng):
    check_same_seed_same_result_and_init_untouched(METHODS[name], rng)

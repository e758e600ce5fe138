"""Properties shared by NPNMF, FNMF and PCGNMF (src.methods.npnmf, .fnmf, .pcgnmf): monotone objective, finite factors, seeds, parameters."""

import numpy as np
import pytest
from sklearn.base import clone

from src.errors import ConfigError
from src.methods.fnmf import FNMF
from src.methods.npnmf import NPNMF
from src.methods.pcgnmf import PCGNMF

from helpers import (
    check_degenerate_input_stays_finite,
    check_objective_never_increases,
    check_same_seed_same_result_and_init_untouched,
)

METHODS = {"npnmf": NPNMF, "fnmf": FNMF, "pcgnmf": PCGNMF}


# -- properties shared by the three methods ---------------------------------------------------------
CONFIGS = [
    ("npnmf", {}),
    ("npnmf", {"mu": 1e4, "n_neighbors": 8}),
    ("npnmf", {"mu": 1.0, "normalize_init": True}),
    ("fnmf", {}),
    ("fnmf", {"farness": 0.5}),
    ("pcgnmf", {}),
    ("pcgnmf", {"beta": 1e4, "alpha": 1.0}),
    ("pcgnmf", {"weight": "heat", "normalize_init": True}),
]


@pytest.mark.parametrize("name, params", CONFIGS)
def test_objective_never_increases_and_factors_stay_nonnegative(name, params, rng):
    check_objective_never_increases(METHODS[name], params, rng, n_labelled=10)


@pytest.mark.parametrize("name, params", CONFIGS)
def test_degenerate_input_stays_finite(name, params, rng):
    check_degenerate_input_stays_finite(METHODS[name], params, rng)


@pytest.mark.parametrize("name", METHODS)
def test_same_seed_same_result_init_untouched_and_clone(name, rng):
    check_same_seed_same_result_and_init_untouched(METHODS[name], rng)
    params = clone(METHODS[name](n_components=3)).get_params()
    assert params["n_components"] == 3


def test_defaults():
    assert NPNMF().get_params()["mu"] == 100 and NPNMF().get_params()["n_neighbors"] == 5
    assert FNMF().get_params()["farness"] == 0.01 and FNMF().get_params()["n_neighbors"] == 5
    params = PCGNMF().get_params()
    assert params["alpha"] == 100 and params["beta"] == 100 and params["n_neighbors"] == 5
    assert params["weight"] == "binary" and params["normalize_init"] is True  # Cai's NormalizeUV, as the config
    assert NPNMF().get_params()["normalize_init"] is True
    for cls in (NPNMF, FNMF, PCGNMF):
        params = cls().get_params()
        assert params["stopping"] == "reference" and params["n_starts"] == 10 and params["min_iter"] == 30
        assert params["tol"] == 1e-5 and params["max_iter"] == 10_000


@pytest.mark.parametrize(
    "cls, params, match",
    [
        (NPNMF, {"mu": -1.0}, "mu=-1.0"),
        (NPNMF, {"mu": "big"}, "mu='big'"),
        (NPNMF, {"n_neighbors": 0}, "n_neighbors=0"),
        (NPNMF, {"reg": 0.0}, "reg=0.0"),
        (NPNMF, {"normalize_init": "yes"}, "normalize_init='yes'"),
        (FNMF, {"farness": -0.1}, "farness=-0.1"),
        (FNMF, {"farness": 1.0}, "farness=1.0"),
        (FNMF, {"farness": float("nan")}, "farness=nan"),
        (FNMF, {"n_neighbors": 2.5}, "n_neighbors=2.5"),
        (FNMF, {"n_components": 0}, "n_components=0"),
        (PCGNMF, {"beta": -2.0}, "beta=-2.0"),
        (PCGNMF, {"beta": None}, "beta=None"),
        (PCGNMF, {"alpha": -1.0}, "alpha=-1.0"),
        (PCGNMF, {"weight": "gauss"}, "weight='gauss'"),
    ],
)
def test_bad_parameters_name_themselves(cls, params, match, rng):
    with pytest.raises(ConfigError, match=match):
        cls(**params).fit(rng.random((8, 4)))

"""Estimators outside the repository, named by their import path (src/methods/outside.py)."""

from pathlib import Path

import numpy as np
import pytest

from src import methods
from src.errors import ConfigError
from src.methods import outside

FILE = Path(__file__).resolve().parents[1] / "fixtures" / "outside" / "estimators.py"


@pytest.mark.parametrize("name", ["fixtures.outside.estimators:PlainNMF", "fixtures.outside.estimators.PlainNMF",
                                  f"{FILE}:PlainNMF"])
def test_a_class_is_found_by_module_path_hydra_target_or_file(name):
    cls = methods.estimator_class(name)
    assert cls.__name__ == "PlainNMF"
    model = methods.make(name, n_components=3, random_state=0)
    codes = model.fit_transform(np.random.default_rng(0).random((20, 6)))
    assert codes.shape == (20, 3) and (codes >= 0).all()


def test_the_same_file_is_one_module_in_a_process():
    assert outside.module_from_file(str(FILE)) is outside.module_from_file(str(FILE))


def test_registry_names_are_not_import_paths():
    assert methods.estimator_class("nmf") is methods.NMF
    assert not any(outside.is_import_path(name) for name in methods.NAMES)
    with pytest.raises(ConfigError, match="is not one of"):
        methods.estimator_class("nmff")


@pytest.mark.parametrize("name, message", [
    ("no_such_package.module:Thing", "does not import .*ModuleNotFoundError"),
    ("fixtures.outside.broken_module:Thing", "does not import .*RuntimeError: a half-finished module"),
    ("fixtures.outside.estimators:Missing", "has no 'Missing'"),
    ("fixtures.outside.estimators:NOT_A_CLASS", "is an int, not a class"),
    ("/nowhere/my_nmf.py:MyNMF", "does not exist"),
    ("fixtures.outside.estimators:", "is not an import path"),
])
def test_a_bad_import_path_is_one_line_naming_what_to_change(name, message):
    with pytest.raises(ConfigError, match=message) as caught:
        outside.load(name)
    assert "\n" not in str(caught.value)


def test_make_refuses_a_parameter_the_outside_class_does_not_take():
    with pytest.raises(ConfigError, match="has no parameter 'beta'"):
        methods.make("fixtures.outside.estimators:PlainNMF", beta=1)

"""src.checks: the one vocabulary of value checks, its words, and that nothing in src/ writes its own.

The rules accept what they say and reject the rest with one line naming the value (booleans are not
integers, NumPy's integers are); the configs' checks (src.running.settings), the data loaders and the estimators'
rule tables all speak through them; resolvers are registered in src.resolvers only.
"""

import re
from pathlib import Path

import numpy as np
import pytest

from src.checks import (BOOLEAN, NONNEGATIVE, NONNEGATIVE_INT, POSITIVE, POSITIVE_INT, fraction_in, integer,
                        is_integer, is_number, one_of, optional)
from src.errors import ConfigError

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.mark.parametrize("value, expected", [(3, True), (np.int64(3), True), (0, True), (True, False),
                                             (np.bool_(True), False), (3.0, False), ("3", False), (None, False)])
def test_an_integer_is_never_a_boolean(value, expected):
    assert is_integer(value) is expected


@pytest.mark.parametrize("value, expected", [(0.5, True), (2, True), (np.float32(1.5), True), (False, False),
                                             (float("nan"), False), (float("inf"), False), ("1", False)])
def test_a_number_is_finite_and_never_a_boolean(value, expected):
    assert is_number(value) is expected


@pytest.mark.parametrize("rule, good, bad, words", [
    (POSITIVE_INT, [1, np.int32(7)], [0, -2, 1.0, True], "x={!r} must be a positive integer"),
    (NONNEGATIVE_INT, [0, 5], [-1, 0.0, False], "x={!r} must be an integer >= 0"),
    (integer(2), [2, 10], [1, 2.5], "x={!r} must be an integer >= 2"),
    (NONNEGATIVE, [0, 0.0, 3.5], [-0.1, float("nan"), True], "x={!r} must be a finite number >= 0"),
    (POSITIVE, [1e-9, 4], [0, -1, float("inf")], "x={!r} must be a finite number > 0"),
    (BOOLEAN, [True, np.bool_(False)], [1, "yes", None], "x={!r} must be true or false"),
    (one_of(("a", "b")), ["a", "b"], ["c", None, 1], "x={!r} is not one of a, b"),
    (optional(POSITIVE_INT, "library default"), [None, 3], [0, "3"],
     "x={!r} must be a positive integer or null (library default)"),
    (fraction_in(0, 1, include_low=False, include_high=True), [1, 0.5, 1e-12], [0, 1.01, True],
     "x={!r} must be a number in (0, 1]"),
    (fraction_in(0, 1, include_low=True, include_high=False), [0, 0.999], [1, -0.1], "x={!r} must be a number in [0, 1)"),
])
def test_a_rule_returns_what_it_accepts_and_names_what_it_rejects(rule, good, bad, words):
    for value in good:
        assert rule.check("x", value) is value
    for value in bad:
        with pytest.raises(ConfigError) as caught:
            rule.check("x", value)
        assert str(caught.value) == words.format(value)


def test_two_rules_together_speak_with_the_first_that_fails():
    both = NONNEGATIVE & one_of(("0", "1"))  # nothing passes both: each failure is the first rule's or the second's
    with pytest.raises(ConfigError, match=r"x=-1 must be a finite number >= 0$"):
        both.check("x", -1)
    with pytest.raises(ConfigError, match=r"x=3 is not one of 0, 1$"):
        both.check("x", 3)


def python_files():
    return [p for p in SRC.rglob("*.py") if "__pycache__" not in p.parts]


def test_no_module_spells_out_an_integer_check_of_its_own():
    """"An integer but not a bool" lives in src/checks.py only; everyone else asks is_integer or a rule."""
    spelled = re.compile(r"isinstance\([^()]*,\s*bool\)\s+or\s+not\s+isinstance|not\s+isinstance\([^()]*,\s*bool\)")
    offenders = [f"{p.relative_to(SRC.parent)}:{n}" for p in python_files() if p.name != "checks.py"
                 for n, line in enumerate(p.read_text().splitlines(), 1) if spelled.search(line)]
    assert offenders == []


def test_the_resolvers_are_registered_in_one_place():
    offenders = [str(p.relative_to(SRC.parent)) for p in python_files()
                 if "register_new_resolver" in p.read_text() and p.name != "resolvers.py"]
    assert offenders == []

"""The one vocabulary for checking a value: rules that the configs, the data loaders and the estimators share.

A :class:`Rule` is a test and the words a rejected value is told. ``rule.check(name, value)`` returns the
value when the test accepts it and otherwise raises :class:`~src.errors.ConfigError` with one line naming
both, ``max_iter=0 must be a positive integer``; the same rule gives the same words whether the value came
from the command line, a config file or the Python API.

The numbers: :func:`integer` (an integer, never a boolean, at least some bound), :data:`POSITIVE_INT`,
:data:`NONNEGATIVE_INT`, :data:`NONNEGATIVE`, :data:`POSITIVE`, :func:`fraction_in` (a number in an
interval). The rest: :data:`BOOLEAN`, :func:`one_of` (a string among choices, ``x='foo' is not one of a, b``),
:func:`optional` (None or the rule) and ``rule & other`` (both, the first failure speaks). A check that
needs the data (a k against the number of classes) stays with the data, but builds on these tests.
"""

from collections.abc import Callable
from numbers import Integral, Real

import numpy as np

from .errors import ConfigError


def is_integer(value) -> bool:
    """Whether ``value`` is an integer (Python's or NumPy's) and not a boolean, which Python counts as one."""
    return isinstance(value, Integral) and not isinstance(value, (bool, np.bool_))


def is_number(value) -> bool:
    """Whether ``value`` is a finite real number (an integer or a float) and not a boolean."""
    return isinstance(value, Real) and not isinstance(value, (bool, np.bool_)) and bool(np.isfinite(value))


class Rule:
    """A test of a value, and what a rejected value is told.

    Parameters
    ----------
    test : callable
        Takes the value, returns whether it is accepted.
    requirement : str
        What an accepted value is: the message reads ``{name}={value!r} must be {requirement}``.
    """

    def __init__(self, test: Callable[[object], bool], requirement: str):
        self.test = test
        self.requirement = requirement

    def message(self, name: str, value) -> str:
        """The one line a rejected ``value`` of ``name`` is told."""
        return f"{name}={value!r} must be {self.requirement}"

    def check(self, name: str, value):
        """Return ``value`` if the test accepts it, else raise :class:`~src.errors.ConfigError` naming it."""
        if not self.test(value):
            raise ConfigError(self.message(name, value))
        return value

    def __and__(self, other: "Rule") -> "Rule":
        return _Both(self, other)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.requirement!r})"


class _Both(Rule):
    """Two rules in order: the first one that rejects the value gives the message."""

    def __init__(self, first: Rule, second: Rule):
        super().__init__(lambda value: first.test(value) and second.test(value),
                         f"{first.requirement}, and {second.requirement}")
        self.first, self.second = first, second

    def check(self, name: str, value):
        self.first.check(name, value)
        return self.second.check(name, value)


class _OneOf(Rule):
    """A string among fixed choices; a rejected value is told ``is not one of`` and the choices, in order."""

    def __init__(self, choices):
        self.choices = tuple(choices)
        super().__init__(lambda value: isinstance(value, str) and value in self.choices,
                         f"one of {', '.join(map(str, self.choices))}")

    def message(self, name: str, value) -> str:
        return f"{name}={value!r} is not {self.requirement}"


def integer(low: int, requirement: str | None = None) -> Rule:
    """The rule "an integer >= ``low``" (not a boolean); ``requirement`` replaces the default words."""
    return Rule(lambda value: is_integer(value) and value >= low, requirement or f"an integer >= {low}")


def one_of(choices) -> Rule:
    """The rule "a string among ``choices``"; its message lists them in their order."""
    return _OneOf(choices)


def optional(rule: Rule, meaning: str) -> Rule:
    """None, or a value ``rule`` accepts; ``meaning`` says what None stands for ("library default")."""
    return Rule(lambda value: value is None or rule.test(value), f"{rule.requirement} or null ({meaning})")


def fraction_in(low: float, high: float, *, include_low: bool, include_high: bool) -> Rule:
    """The rule "a number in the interval from ``low`` to ``high``", each end included as said."""
    def test(value) -> bool:
        return (is_number(value) and (value >= low if include_low else value > low)
                and (value <= high if include_high else value < high))

    brackets = ("[" if include_low else "(", "]" if include_high else ")")
    return Rule(test, f"a number in {brackets[0]}{low:g}, {high:g}{brackets[1]}")


def below(limit: float, why: str) -> Rule:
    """The rule "a number < ``limit``", its reason in brackets (combine it with :data:`NONNEGATIVE`)."""
    return Rule(lambda value: value < limit, f"< {limit:g} ({why})")


POSITIVE_INT = integer(1, "a positive integer")
"""Counts: an integer >= 1."""
NONNEGATIVE_INT = integer(0)
"""Seeds and offsets: an integer >= 0."""
NONNEGATIVE = Rule(lambda value: is_number(value) and value >= 0, "a finite number >= 0")
"""Weights and tolerances: a finite real >= 0."""
POSITIVE = Rule(lambda value: is_number(value) and value > 0, "a finite number > 0")
"""Widths and regularizers that must not vanish: a finite real > 0."""
BOOLEAN = Rule(lambda value: isinstance(value, (bool, np.bool_)), "true or false")
"""Switches: a boolean (Python's or NumPy's)."""

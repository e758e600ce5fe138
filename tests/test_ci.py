"""No test left behind: the steps of ``.ci/run`` together select every test, whatever its markers.

A marker that a CI step deselects (``-m 'not slow'``) hides its tests unless another step selects them. The
check reads the markers ``pyproject.toml`` declares, the ``make`` targets ``.ci/run`` calls and the ``-m``
expression of each target's pytest command in the ``Makefile`` (pytest's ``addopts`` where a target gives
none), and asks, for every combination of the markers a test could carry, whether some step selects it. The
expressions are evaluated by pytest's own parser of ``-m``.
"""

import itertools
import re
import shlex
import tomllib
from pathlib import Path

import pytest
from _pytest.mark.expression import Expression

REPO = Path(__file__).resolve().parents[1]


def declared_markers() -> list[str]:
    options = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    return [line.split(":", 1)[0].strip() for line in options["markers"]]


def default_expression() -> str:
    options = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    return marker_expression(shlex.split(options["addopts"])) or ""


def marker_expression(words: list[str]) -> str | None:
    """The last ``-m`` expression of a pytest command line (the one pytest applies), None without one."""
    found = None
    for index, word in enumerate(words):
        if word == "-m" and index + 1 < len(words):
            found = words[index + 1]
        elif word.startswith("-m") and len(word) > 2:
            found = word[2:]
    return found


def ci_targets(script: str) -> list[str]:
    """The make targets ``.ci/run`` calls, in order (comments left out)."""
    targets = []
    for line in script.splitlines():
        words = shlex.split(line, comments=True)
        if words[:1] == ["make"]:
            targets += [word for word in words[1:] if "=" not in word and not word.startswith("-")]
    return targets


def target_expressions(makefile: str, target: str) -> list[str]:
    """The ``-m`` expression of every pytest command in ``target``'s recipe (pytest's default where none)."""
    lines = makefile.splitlines()
    start = next((i for i, line in enumerate(lines) if re.match(rf"{re.escape(target)}\s*:", line)), None)
    assert start is not None, f"the Makefile has no target {target} (.ci/run calls it)"
    expressions = []
    for line in itertools.takewhile(lambda text: text.startswith("\t"), lines[start + 1:]):
        if "pytest" in line:
            expression = marker_expression(shlex.split(line.split("pytest", 1)[1]))
            expressions.append(default_expression() if expression is None else expression)
    return expressions


def selects(expression: str, markers: set[str]) -> bool:
    """Whether ``-m expression`` selects a test carrying exactly ``markers``."""
    if not expression.strip():
        return True
    return Expression.compile(expression).evaluate(lambda name, **kwargs: name in markers)


def ci_expressions() -> dict[str, list[str]]:
    makefile = (REPO / "Makefile").read_text()
    return {target: target_expressions(makefile, target) for target in ci_targets((REPO / ".ci" / "run").read_text())}


def test_ci_runs_some_pytest_step():
    steps = ci_expressions()
    assert any(steps.values()), f".ci/run calls no make target that runs pytest: {steps}"


@pytest.mark.parametrize("n_markers", range(len(declared_markers()) + 1))
def test_every_combination_of_markers_is_selected_by_some_ci_step(n_markers):
    expressions = [expression for found in ci_expressions().values() for expression in found]
    left_behind = [set(combination) for combination in itertools.combinations(declared_markers(), n_markers)
                   if not any(selects(expression, set(combination)) for expression in expressions)]
    assert not left_behind, (f"tests marked {left_behind} run in no step of .ci/run (its pytest -m expressions: "
                             f"{expressions})")


def test_the_check_sees_a_deselected_marker():
    assert not selects("not slow", {"slow"}) and selects("not slow", {"integration"})
    assert not selects("not slow and not integration", {"integration", "slurm"}) and selects("slow", {"slow", "x"})
    assert marker_expression(["-q", "-m", "not slow", "-ra"]) == "not slow"
    assert ci_targets("set -e\nmake test  # the suite\n# make test-slow\nmake test-slow PYTHON=python3.12\n") == [
        "test", "test-slow"]

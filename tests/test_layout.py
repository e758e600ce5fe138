"""The tests mirror the source tree: a folder of tests per package folder of src/ (and tools/), a test module
per module where it has tests of its own, and one name per test module across folders."""

import ast
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"
NOT_MIRRORED = {"fixtures", "__pycache__"}


def test_every_test_folder_mirrors_a_source_folder():
    for folder in TESTS.rglob("*"):
        if not folder.is_dir() or NOT_MIRRORED & set(folder.relative_to(TESTS).parts):
            continue
        relative = folder.relative_to(TESTS)
        assert (REPO / "src" / relative).is_dir() or (REPO / relative).is_dir() and relative.parts[0] == "tools", (
            f"tests/{relative.as_posix()} has no source folder src/{relative.as_posix()} or {relative.as_posix()}")


def test_test_module_names_are_unique_across_folders():
    # pytest imports test modules by their name (no __init__.py in tests/): two of one name would collide
    names = Counter(path.name for path in TESTS.rglob("test_*.py"))
    assert [name for name, count in names.items() if count > 1] == []


def test_every_source_folder_with_modules_has_its_test_folder():
    for init in (REPO / "src").rglob("__init__.py"):
        relative = init.parent.relative_to(REPO / "src")
        if relative.parts and "__pycache__" not in relative.parts:
            assert (TESTS / relative).is_dir(), f"src/{relative.as_posix()} has no tests/{relative.as_posix()}"


LONGEST_FUNCTION = 80
"""Lines of the longest function of src/ a reader should have to hold (from its ``def`` to its last line)."""


def function_lengths() -> list[tuple[int, str]]:
    """(lines, ``path:line name``) of every function and method of src/, longest first (an AST count)."""
    import ast

    found = []
    for path in sorted((REPO / "src").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                where = f"{path.relative_to(REPO)}:{node.lineno} {node.name}"
                found.append((node.end_lineno - node.lineno + 1, where))
    return sorted(found, reverse=True)


def test_no_function_is_longer_than_a_reader_can_hold():
    lengths = function_lengths()
    assert lengths and lengths[0][0] > 20  # the count sees the functions
    too_long = [f"{n} lines: {where}" for n, where in lengths if n > LONGEST_FUNCTION]
    assert not too_long, "split these functions:\n" + "\n".join(too_long)

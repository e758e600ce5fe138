"""Every reference resolves: the files and tests that config, docs, reports and docstrings name exist, and each
paper's citation carries the title printed on the paper's first lines.

References are found by their form in the text (prose, YAML values and comments, docstrings, comments and string
literals of the Python code alike, so every string a report prints from conf/ or from code is covered):

* a path under one of the repository's top folders: ``tests/...``, ``src/...``, ``conf/...``, ``papers/...``,
  ``tools/...``, ``docs/...`` (a file or a folder; a trailing ``.``, ``,`` or ``:`` of the sentence is not part
  of it);
* a test, after such a path or after a bare file name: ``tests/methods/test_lcf.py::test_name``,
  ``tests/x.py::TestClass::test_name``, ``test_lcf.py::test_name``; each name after ``::`` must be defined in
  that file (a module-level ``def`` or ``class``, then a member of that class), a parametrized id
  (``test_x[abc]``) stands for its function;
* a bare test module, ``test_lcf.py``, with or without names. A bare file name is looked up in ``tests/``, whose
  test file names are unique (tests/test_layout.py).

Not references, skipped by rule rather than one by one:

* patterns and placeholders: a path with ``*``, ``?``, ``<...>``, ``{...}`` (globs such as
  ``papers/*/readings.yaml``, ``papers/<paper>/``, f-strings) or ``...``, or with a segment in capitals and
  without a dot (``papers/PAPER/published.yaml``);
* paths written at run time (:data:`GENERATED`): ``docs/_build/``, ``docs/_generated/``, the gallery's
  ``docs/auto_examples/`` and ``docs/sg_execution_times.rst`` (``make docs``) and
  ``docs/results/`` (``make results``); ``outputs/...`` and ``data/...`` are under no folder checked here, and a
  path inside another path or a URL (``outputs/x/conf/...``, ``https://.../src/...``) is not taken for one of ours.

Scanned: every file of :data:`SCANNED` but this one (its planted references are made up). CHANGELOG.md is not:
it is history, each release's entry describes the tree as it was at that release (a test file it names may have
moved since), and rewriting it to today's paths would falsify the record.

:func:`broken_references` takes the root to scan, so the planted-reference test below runs it on a made-up tree.
A fast unit test (no marker: ``make test-fast`` runs it).
"""

import ast
import os
import re
import unicodedata
from functools import lru_cache
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]

#: The files whose text may name paths (globs relative to the root): config and the paper homes, docs and the
#: docs extension, the README, the examples, every module of src/ (the report templates and the report-writing
#: code among them), tools/ and tests/, and the build files.
SCANNED = ("conf/**/*.yaml", "papers/**/*.yaml", "docs/**/*.md", "docs/**/*.rst", "docs/**/*.py", "README.md", "examples/**/*.py",
           "src/**/*.py", "tools/**/*.py", "tools/**/*.m", "tools/**/*.sh", "tests/**/*.py",
           "Makefile", "pyproject.toml", "CITATION.cff")
#: Folders written by a command, neither scanned nor checked: the site (``make docs``) and the snapshot of the last
#: reproduction's reports (``make results``, src/presentation/front_page.py), copies of what conf/ and src/ wrote.
GENERATED = ("docs/_build", "docs/_generated", "docs/auto_examples", "docs/sg_execution_times.rst", "docs/results")
#: This file: the references of its planted-reference test are made up not to resolve.
NOT_SCANNED = ("tests/test_references.py",)
TOP = ("tests", "src", "conf", "papers", "tools", "docs")

_NAMES = r"(?P<names>(?:::\w+(?:\[[^\]\s]*\])?)*)"
#: A path under one of :data:`TOP` (not preceded by a path or word character), with its ``::`` names if any.
PATH = re.compile(r"(?<![\w./\\-])(?P<path>(?:" + "|".join(TOP) + r")/[\w./*?<>{}-]*)" + _NAMES)
#: A bare test module (``test_lcf.py``) or ``file.py::name``, without a folder.
BARE = re.compile(r"(?<![\w./\\-])(?P<path>test_\w+\.py|\w+\.py(?=::))" + _NAMES)
PLACEHOLDER = re.compile(r"[*?<>{}]|\.\.\.")


def _scanned_files(root: Path, patterns=SCANNED) -> list[Path]:
    files = set()
    for pattern in patterns:
        for path in root.glob(pattern):
            relative = path.relative_to(root).as_posix()
            if path.is_file() and "__pycache__" not in relative and not relative.startswith(GENERATED) \
                    and relative not in NOT_SCANNED:
                files.add(path)
    return sorted(files)


def _is_pattern(path: str) -> bool:
    """A glob or placeholder rather than a path (see the module docstring)."""
    return bool(PLACEHOLDER.search(path)) or any(part.isupper() and "." not in part for part in path.split("/"))


@lru_cache(maxsize=None)
def _defined(path: Path) -> dict[str, set[str]]:
    """The module-level functions and classes of a Python file, each with its members (a function: none)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return {node.name: {member.name for member in node.body if isinstance(member, kinds)}
            if isinstance(node, ast.ClassDef) else set() for node in tree.body if isinstance(node, kinds)}


def _missing_name(target: Path, names: str) -> str | None:
    """Why ``target::names`` does not resolve, or None when it does."""
    chain = [re.sub(r"\[.*\]$", "", name) for name in names.split("::") if name]
    if target.suffix != ".py":
        return f"{target.name} is not a Python file"
    defined = _defined(target)
    if chain[0] not in defined:
        return f"no def or class {chain[0]} in it"
    if len(chain) > 1 and chain[1] not in defined[chain[0]]:
        return f"no {chain[1]} in class {chain[0]}"
    if len(chain) > 2:
        return "more than Class::name"
    return None


def _check(root: Path, path: str, names: str) -> str | None:
    """Why a reference does not resolve under root, or None when it does."""
    target = root / path
    if not target.exists():
        return "no such file or folder"
    return _missing_name(target, names) if names else None


def _check_bare(root: Path, name: str, names: str) -> str | None:
    found = sorted((root / "tests").rglob(name)) if (root / "tests").is_dir() else []
    if not found:
        return f"no {name} in tests/"
    reasons = [_missing_name(target, names) if names else None for target in found]
    return None if None in reasons else reasons[0]


def references(text: str):
    """Each (line number, reference, path, names) of a text, patterns and generated paths left out."""
    for number, line in enumerate(text.splitlines(), start=1):
        spans = []
        for match in PATH.finditer(line):
            path, names = match["path"], match["names"]
            spans.append(match.span())
            if _is_pattern(path):
                continue
            path = path.rstrip(".") if not names else path
            if path.startswith(GENERATED):
                continue
            yield number, path + names, path, names
        for match in BARE.finditer(line):
            if not any(start <= match.start() < end for start, end in spans):
                yield number, match.group(0), None, match["names"]


def broken_references(root: Path = REPO, patterns=SCANNED) -> list[str]:
    """``file:line: reference (why)`` for every reference under root that does not resolve."""
    broken = []
    for file in _scanned_files(root, patterns):
        for number, reference, path, names in references(file.read_text(encoding="utf-8", errors="replace")):
            if path is None:
                bare = reference.split("::")[0]
                why = _check_bare(root, bare, names)
            else:
                why = _check(root, path, names)
            if why:
                broken.append(f"{file.relative_to(root).as_posix()}:{number}: {reference} ({why})")
    return broken


def test_every_reference_resolves():
    broken = broken_references()
    assert not broken, f"{len(broken)} references name no file or test:\n" + "\n".join(broken)


def test_a_planted_bad_reference_is_reported(tmp_path):
    """The check fails where it should: references planted in a made-up tree, good ones, skipped ones and bad ones."""
    (tmp_path / "tests" / "methods").mkdir(parents=True)
    (tmp_path / "tests" / "methods" / "test_real.py").write_text(
        "def test_ok():\n    pass\n\n\nclass TestGroup:\n    def test_member(self):\n        pass\n")
    (tmp_path / "papers" / "x").mkdir(parents=True)
    (tmp_path / "conf").mkdir()
    good = ["tests/methods/test_real.py::test_ok", "tests/methods/test_real.py::test_ok[a-1]",
            "tests/methods/test_real.py::TestGroup::test_member", "test_real.py::test_ok", "test_real.py",
            "papers/x/"]
    skipped = ["papers/*/readings.yaml", "papers/<paper>/published.yaml", "papers/PAPER/published.yaml",
               "papers/{name}/reproduce.yaml", "tests/...", "docs/_generated/papers/lcf.md",
               "outputs/conf/none.yaml", "https://example.org/src/none.py"]
    bad = ["tests/does_not_exist.py", "tests/methods/test_real.py::test_gone",
           "tests/methods/test_real.py::TestGroup::test_gone", "test_real.py::test_gone[x]", "test_gone.py",
           "src/nowhere/"]
    lines = [f"  - see {reference}." for reference in good + skipped + bad]
    (tmp_path / "conf" / "notes.yaml").write_text("notes:\n" + "\n".join(lines) + "\n")
    (tmp_path / "README.md").write_text(f"Tested in `{bad[0]}`, as `{good[0]}` says.\n")
    (tmp_path / "CHANGELOG.md").write_text(f"- {bad[0]} added\n")   # history: not scanned

    first = 2 + len(good) + len(skipped)   # the line of the first bad reference in notes.yaml
    assert broken_references(tmp_path) == [
        "README.md:1: tests/does_not_exist.py (no such file or folder)",
        f"conf/notes.yaml:{first}: tests/does_not_exist.py (no such file or folder)",
        f"conf/notes.yaml:{first + 1}: tests/methods/test_real.py::test_gone (no def or class test_gone in it)",
        f"conf/notes.yaml:{first + 2}: tests/methods/test_real.py::TestGroup::test_gone "
        "(no test_gone in class TestGroup)",
        f"conf/notes.yaml:{first + 3}: test_real.py::test_gone[x] (no def or class test_gone in it)",
        f"conf/notes.yaml:{first + 4}: test_gone.py (no test_gone.py in tests/)",
        f"conf/notes.yaml:{first + 5}: src/nowhere/ (no such file or folder)",
    ]


# -- citations: each paper's title as printed on its first lines -------------------------------------------------

PAPERS = sorted(path.parent.name for path in (REPO / "papers").glob("*/published.yaml"))
#: How many lines of a paper's text hold its title and authors (the CCF text starts with its page number and
#: journal line, the PCGNMF preview with a web page's menu).
FIRST_LINES = 15
#: Misspellings of the paper texts themselves, read as the paper spells the words everywhere else: the FNMF text
#: prints its title's first word "FARNES" (l.3, l.56) where its body says "farness" seven times, and its first
#: author "Babae" (l.5), Mohammadreza Babaee (his name in the file's own name, CITATION.cff and src/methods/fnmf.py).
TEXT_ERRATA = {"fnmf": {"farnes": "farness", "babae": "babaee"}}
AUTHOR = re.compile(r"^(?:[A-Z]\.[ -]?)+ ?(?P<surname>[A-Z][\w'-]+)$")


def papers_dir() -> Path:
    """The papers' texts: beside the data mirror (``$REPRO_DATA_MIRROR/../papers``, ../shared/papers by default)."""
    mirror = os.environ.get("REPRO_DATA_MIRROR")
    return (Path(mirror) if mirror else REPO.parent / "shared" / "datasets").parent / "papers"


def normalize(text: str) -> str:
    """Lower case, no accents nor superscripts, words joined across a line-end hyphen and within a hyphenated word
    ("non-negative": "nonnegative"), every other punctuation a space, single spaces."""
    text = "".join(" " if unicodedata.category(c) == "No" else c for c in text)   # superscripts: Rigoll¹
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)).lower()
    text = re.sub(r"(?<=\w)[-\u2010\u2011]\s*\n\s*(?=\w)", "", text)
    text = re.sub(r"(?<=\w)[-\u2010\u2011](?=\w)", "", text)
    return " ".join(re.sub(r"[\W_]+", " ", text).split())


def citation(paper: str) -> tuple[list[str], str]:
    """The surnames and the title of a paper's citation (``paper`` of its published.yaml): "authors, title, venue",
    parts separated by ", ", the authors as initials and surname (or "Surname et al.": no surname checked), the
    title the next part (so a title with ", " in it would be cut there, and fail)."""
    entry = yaml.safe_load((REPO / "papers" / paper / "published.yaml").read_text())["paper"]
    parts = [part.strip() for part in entry.split(", ")]
    surnames = []
    while parts and (AUTHOR.match(parts[0]) or parts[0].endswith(" et al.")):
        author = parts.pop(0)
        if not author.endswith(" et al."):
            surnames.append(AUTHOR.match(author)["surname"])
    assert parts, f"papers/{paper}/published.yaml: no title after the authors in {entry!r}"
    return surnames, parts[0]


@pytest.mark.parametrize("paper", PAPERS)
def test_citation_carries_the_papers_title(paper):
    folder = papers_dir()
    if not folder.is_dir():
        pytest.skip(f"no papers folder at {folder} (REPRO_DATA_MIRROR/../papers, ../shared/papers by default)")
    texts = sorted(folder.glob(f"{paper}_*.txt"))   # <paper>_<first author><year>_<venue>.txt, see REPRODUCTION.md
    if not texts:
        pytest.skip(f"no text of the {paper} paper in {folder} (the cai home is a demo page, not a paper)")
    assert len(texts) == 1, f"more than one text of the {paper} paper: {[t.name for t in texts]}"
    first = "\n".join(texts[0].read_text(encoding="utf-8").splitlines()[:FIRST_LINES])
    words = normalize(first).split()
    words = [TEXT_ERRATA.get(paper, {}).get(word, word) for word in words]
    printed = f" {' '.join(words)} "
    surnames, title = citation(paper)
    assert f" {normalize(title)} " in printed, (
        f"papers/{paper}/published.yaml cites the title {title!r}, which is not on the first {FIRST_LINES} "
        f"lines of {texts[0].name}:\n{first}")
    missing = [name for name in surnames if f" {normalize(name)} " not in printed]
    assert not missing, f"papers/{paper}/published.yaml cites authors {missing} not on the first lines of " \
                        f"{texts[0].name}"

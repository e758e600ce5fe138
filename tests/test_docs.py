"""The documentation site builds with warnings as errors, and its main pages say what they should.

The site is built as ``make docs`` builds it (``sphinx -W --keep-going -n``), from a copy of ``docs/`` in a
temporary directory beside links to the checkout's ``src/``, ``conf/``, ``papers/`` (the paper homes, one page
each), ``README.md``, ``CHANGELOG.md`` (which the changelog page includes) and ``examples/`` (the gallery's
scripts), so that the pages the build writes (``docs/_generated/``) do not touch the checkout. The guides are
the manual's own Markdown pages: none includes a part of README.md. ``repro_outputs`` points at a small
made-up reproduction: the CNMF paper's report with one table and one figure, no other paper and no scorecard,
so that both kinds of paper page are checked (a report shown, and the sentence saying which ``make`` target
writes it). The build takes a minute (the gallery runs every example): it starts on the other core as soon as
the session's tests are known, while the tests before this module run (tests/background.py).
"""

import html
import importlib.util
import re
import shutil
import struct
import sys
import zlib
from pathlib import Path

import background
import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS_PACKAGES = ("sphinx", "numpydoc", "myst_parser", "pydata_sphinx_theme", "sphinx_gallery")
MISSING = [name for name in DOCS_PACKAGES if importlib.util.find_spec(name) is None]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(bool(MISSING), reason=f"the docs extra is not installed ({', '.join(MISSING)} missing): "
                                             "`make docs` installs it into .venv, or pip install -e '.[docs]'"),
]

REPORT = """# Reproduction report: CNMF

Paper: H. Liu, Z. Wu, X. Li, D. Cai, T. S. Huang, Constrained nonnegative matrix factorization for image representation

## Our tables

**orl**

| k | NMF | CNMF |
|---|---|---|
| 2 | 90.00 ± 12.25 | 94.50 ± 7.98 |

![orl](figure_orl.png)
"""


def png(width: int = 2, height: int = 2) -> bytes:
    """A small grey PNG image."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def build_site() -> Path:
    """The site built as the module docstring says; returns its html/ directory."""
    root = background.directory("site")
    # auto_examples/ of an earlier build would let sphinx-gallery skip the examples: they run anew here
    shutil.copytree(REPO / "docs", root / "docs", ignore=shutil.ignore_patterns(
        "_build", "_generated", "auto_examples", "sg_execution_times.rst"))
    for name in ("src", "conf", "papers", "README.md", "CHANGELOG.md", "examples"):  # examples/: the gallery
        (root / name).symlink_to(REPO / name)
    outputs = root / "outputs" / "reproduce"
    (outputs / "cnmf").mkdir(parents=True)
    (outputs / "cnmf" / "report.md").write_text(REPORT)
    (outputs / "cnmf" / "figure_orl.png").write_bytes(png())
    html = root / "html"
    result = background.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-b", "html", "-q",
         "-D", f"repro_outputs={outputs}", str(root / "docs"), str(html)],
        cwd=root, timeout=900)
    assert result.returncode == 0, f"sphinx failed (status {result.returncode}):\n{result.stderr[-6000:]}"
    assert "WARNING" not in result.stderr, result.stderr[-6000:]
    return html


def start_in_background(items):
    """The build takes a minute (the gallery runs its examples): conftest.py starts it when the session's tests
    are known, and it runs on the other core while the tests before this module run (background.py)."""
    if not MISSING:
        background.submit("docs site", build_site)


@pytest.fixture(scope="module")
def site() -> Path:
    return background.result("docs site", build_site)


def page(site: Path, name: str) -> str:
    """The HTML of a built page."""
    path = site / f"{name}.html"
    assert path.is_file(), f"{name}.html was not built"
    return path.read_text()


def text(site: Path, name: str) -> str:
    """What a reader sees of a built page: its text without tags, spaces collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", page(site, name))).split())


def test_landing_page_introduces_the_papers_and_the_docs(site):
    shown = text(site, "index")
    for expected in ("repro-mf", "make reproduce-cnmf", "Constrained NMF for image representation",
                     "About these docs", "numpydoc", "pydata"):
        assert expected.lower() in shown.lower(), expected
    for link in ("_generated/papers/index.html", "api/index.html", "install.html"):
        assert f'href="{link}' in page(site, "index"), link


def test_a_paper_page_shows_its_report_with_tables_and_figures(site):
    shown = text(site, "_generated/papers/cnmf")
    assert "CNMF: constrained NMF" in shown and "make reproduce-cnmf" in shown
    assert "94.50 ± 7.98" in shown and "<table" in page(site, "_generated/papers/cnmf")
    assert re.search(r'<img [^>]*src="[^"]*figure_orl[^"]*\.png"', page(site, "_generated/papers/cnmf"))
    assert list((site / "_images").glob("figure_orl*.png")), "the report's figure was not copied"


def test_a_paper_without_a_reproduction_says_how_to_make_one(site):
    assert "No reproduction found" in text(site, "_generated/papers/lcf")
    assert "make reproduce-lcf" in text(site, "_generated/papers/lcf")
    assert "make reproduce-all" in text(site, "_generated/papers/scorecard")


def test_every_estimator_of_the_registry_has_an_api_page_with_its_parameters(site):
    from src.methods import REGISTRY

    for name, cls in REGISTRY.items():
        assert f"class {cls.__module__}.{cls.__name__}" in text(site, f"_generated/api/methods/{name}"), name
    gnmf = text(site, "_generated/api/methods/gnmf")
    for expected in ("Graph regularized NMF", "Parameters", "alpha", "default=100.0", "n_neighbors",
                     "knn_algorithm", "Multiplicative updates", "Factorization"):
        assert expected in gnmf, expected


#: Each guide page of docs/ (its file name without .md) and facts its text must state.
GUIDES = {
    "install": ("make test", "Installing outside a checkout", "requirements.lock", "REPRO_DATA_MIRROR",
                "CITATION.cff"),
    "running": ("python -m src.run method=nmf dataset=yale", "dry_run=true", "python -m src.data --list",
                "label_protocols", "hydra.verbose", "repro-mf -sc install=bash", "python -m src.reproduce",
                "python -m src.run -m experiment=cnmf"),
    "own_data": ("dataset=file", "dataset.label_column", "dataset.sha256"),
    "results": ("results.csv", "provenance.json", "code fingerprint", "Sweeps that fail well"),
    "resuming": ("already done, skipped", "hydra.sweep.dir", "config_hash"),
    "slurm": ("hydra/launcher=submitit_slurm", "setup_single_node.sh", "sacct", "submitit_local"),
    "protocol": ("The solver: Deng Cai", "solver=fixed", "protocol.rank_offset"),
    "verdicts": ("agrees", "differs", "readings.yaml", "make explain-all"),
    "library": ("Pipeline", "GridSearchCV", "check_estimator", "inverse_transform"),
    "performance": ("make bench", "NN-descent", "faiss"),
    "crosscheck": ("apt-get update", "MatlabFunc/MatrixFactorization", "--write-fixtures"),
    "troubleshooting": ("No space left on device", "What is not an error", "Numerical robustness"),
    "own_method": ("python -m src.benchmark --method", "needs_labels", "--config-dir", "The gate", "--dataset",
                   "family_cells.csv.gz"),
    "adding_a_method": ("_parameter_constraints", "The estimator contract", "Adding a paper", "Code layout"),
    "changelog": ("0.2.0", "Added"),
}


def test_the_guides_say_what_they_should(site):
    for name, facts in GUIDES.items():
        shown = text(site, name)
        for fact in facts:
            assert fact in shown, f"{name}: {fact}"
    for name in ("api/settings", "api/protocol", "api/data", "api/core", "api/runs", "api/presentation"):
        assert text(site, name)


def test_the_landing_page_lists_every_guide(site):
    landing = page(site, "index")
    for name in GUIDES:
        assert f'href="{name}.html' in landing, name


def test_no_page_includes_the_readme():
    """The manual owns its text: no page of docs/ re-includes a part of README.md."""
    for path in (REPO / "docs").rglob("*.md"):
        if {"_generated", "_build", "auto_examples"} & set(path.parts):
            continue
        assert "README.md" not in "".join(re.findall(r"```\{include\}[^\n]*", path.read_text())), path

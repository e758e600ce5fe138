"""Sphinx configuration of the repro-mf documentation site (``make docs`` -> ``docs/_build/html``).

The site has two kinds of pages. The guides are the Markdown pages of ``docs/`` (one page per task; README.md
is the front page and links into them; no page includes another's text). The pages that depend on the
checkout are written at build time into ``docs/_generated/`` (git-ignored) by the local extension
``_ext/repro_docs.py``: one page per paper from the reproduction ``make results`` published in
``docs/results/`` (else ``outputs/reproduce/``, else a sentence saying how to make it), the scorecard, and one API page per estimator of
the registry ``src.methods.REGISTRY``. The gallery (``auto_examples/``, git-ignored) is made by sphinx-gallery from
the scripts ``examples/plot_*.py``, each run by the build on the real data sets (see ``sphinx_gallery_conf``).

The build treats warnings as errors (``sphinx-build -W --keep-going -n``), and the Python warnings raised
while it runs too (the filters below). Nitpicky mode checks every cross-reference but those to the third-party
packages listed in ``nitpick_ignore_regex``: their inventories would need intersphinx, which downloads them,
and the build must work offline.
"""

import os
import re
import sys
import warnings
from pathlib import Path

from omegaconf import OmegaConf

DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent
# The checkout's package imports as ``src`` (as in the README's examples and the docstrings' references).
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(DOCS / "_ext"))

# A Python warning that the build would show (Python's default filters: all but the deprecations inside the
# libraries) is an error, as in the test suite (pyproject.toml's filterwarnings): the example or the page that
# raised it fails, and -W fails the build. Sphinx's extensions calling its deprecated API stay hidden, as Python
# hides them. One exception, not ours to mend: autodoc hands numpydoc the docstring of submitit's AutoExecutor
# (imported by src/running/slurm.py, never shown), whose "Note" section numpydoc does not know.
warnings.simplefilter("error")
for _category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
    warnings.filterwarnings("ignore", category=_category)
warnings.filterwarnings("error", category=DeprecationWarning, module="__main__")  # an example's own, as Python
warnings.filterwarnings("ignore", r"Unknown section Note in the docstring of AutoExecutor", UserWarning,
                        r"numpydoc\.docscrape")

project = "repro-mf"
author = "the repro-mf authors"
copyright = "the repro-mf authors"

extensions = [
    "sphinx.ext.autodoc",
    "numpydoc",
    "myst_parser",
    "repro_docs",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
# results/: the published reproduction (make results), shown through the generated paper pages, not read itself
exclude_patterns = ["_build", "_generated/reports", "results", "**/.ipynb_checkpoints"]
templates_path = []

# -- MyST: the pages are Markdown with GitHub tables and heading anchors ---------------------------------
myst_enable_extensions = ["colon_fence"]  # ::: fences: the generated pages nest a directive in a container
myst_heading_anchors = 3  # `[text](page.md#a-heading)` links resolve to headings, as on GitHub

# -- autodoc and numpydoc -------------------------------------------------------------------------------------
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"  # the numpydoc sections give every type, in words
numpydoc_show_class_members = False  # :members: lists the methods a class defines itself
numpydoc_xref_param_type = False
highlight_language = "text"  # literal blocks of the docstrings are equations, not Python

# -- nitpicky: every reference must resolve, except to packages without a local inventory ---------------------
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|scipy|sklearn|pandas|pooch|omegaconf|hydra)(\..*)?"),
]

# -- HTML: the pydata theme, as scikit-learn, NumPy and SciPy use ------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = "repro-mf"
html_static_path = ["_static"]
html_css_files = ["repro.css"]  # wide report tables (see the file)
html_show_sourcelink = False
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "navbar_align": "left",
    "header_links_before_dropdown": 8,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
# Pages without subpages get no left sidebar (it would be empty); the paper pages neither, so that their wide
# tables get the width (the navigation bar's "Papers" lists them, and each page links to the next).
html_sidebars = {name: [] for name in (
    "index", "install", "running", "own_data", "results", "resuming", "slurm", "protocol", "verdicts", "library",
    "performance", "crosscheck", "troubleshooting", "adding_a_method", "changelog", "_generated/papers/*")}

# -- The gallery of examples (sphinx-gallery) -------------------------------------------------------------------
# Every examples/plot_*.py is run by the build, in this process, on the real data sets (fetched through
# REPRO_DATA_MIRROR when it is set, else downloaded), and a script that fails fails the build. A script unchanged
# since the last build keeps its output in auto_examples/ (sphinx-gallery compares checksums; -E does not change
# that): delete docs/auto_examples/ to run them all again. Their run times are in sg_execution_times.rst (both
# git-ignored). The scripts are sized to take seconds each, so that tests/test_docs.py (a fresh copy of docs/:
# every script runs) can build the whole site.
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": re.escape(os.sep) + "plot_",  # run every plot_*.py, not only the ones Sphinx links to
    "within_subsection_order": "FileNameSortKey",
    "abort_on_example_error": True,
    "download_all_examples": False,
    "show_signature": False,
}
# sphinx-gallery runs each script from examples/ (its working directory), where the default download cache,
# data/ under the working directory in a checkout, would make a second cache beside the checkout's data/. The
# scripts use the checkout's data/ instead, as a script run from the checkout's root does. src/ may be a link
# (tests/test_docs.py builds a copy of docs/ beside links to the checkout): its real parent is the checkout.
# src.resolvers.register() keeps a resolver already registered, so this one stands in for
# src.resolvers.default_data_dir in the scripts.
OmegaConf.register_new_resolver("default_data_dir", lambda: str((REPO / "src").resolve().parent / "data"),
                                replace=True)

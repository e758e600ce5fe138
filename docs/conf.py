"""Sphinx configuration of the repro-mf documentation site (``make docs`` -> ``docs/_build/html``).

The site has two kinds of pages. The guides include the sections of README.md between ``<!-- docs:NAME:start -->``
and ``<!-- docs:NAME:end -->`` markers, so each text has one home (README.md) and the site shows it as it is.
The pages that depend on the checkout are written at build time into ``docs/_generated/`` (git-ignored) by
the local extension ``_ext/repro_docs.py``: one page per paper from the latest reproduction found in
``outputs/reproduce/`` (or a sentence saying how to make it), the scorecard, and one API page per estimator of
the registry ``src.methods.REGISTRY``.

The build treats warnings as errors (``sphinx-build -W --keep-going -n``). Nitpicky mode checks every
cross-reference but those to the third-party packages listed in ``nitpick_ignore_regex``: their
inventories would need intersphinx, which downloads them, and the build must work offline.
"""

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent
# The checkout's package imports as ``src`` (as in the README's examples and the docstrings' references).
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(DOCS / "_ext"))

project = "repro-mf"
author = "the repro-mf authors"
copyright = "the repro-mf authors"

extensions = [
    "sphinx.ext.autodoc",
    "numpydoc",
    "myst_parser",
    "repro_docs",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_generated/reports", "**/.ipynb_checkpoints"]
templates_path = []

# -- MyST: README.md parts are Markdown with GitHub tables and heading anchors ---------------------------------
myst_enable_extensions = ["colon_fence"]  # ::: fences: the generated pages nest a directive in a container
myst_heading_anchors = 3  # `[text](#a-heading)` links of README.md resolve to its headings, as on GitHub

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
html_sidebars = {"index": [], "install": [], "protocol": [], "verdicts": [], "adding_a_method": [],
                 "performance": [], "crosscheck": [], "_generated/papers/*": []}

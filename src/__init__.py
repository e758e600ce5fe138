"""Reproduction pipeline for label-constrained and geometry-aware matrix factorization papers.

The version is written in one place, pyproject.toml's ``version``; :data:`__version__` reads it back from the
installed distribution's metadata (an editable install in a checkout counts), so that the command line
(``repro-mf --version``), every ``provenance.json`` and every report footer name the same release.
"""

from importlib import metadata

#: The distribution's name on an index and in ``pip``; the package installs as ``repro_mf``.
DISTRIBUTION = "repro-mf"

try:
    __version__ = metadata.version(DISTRIBUTION)
except metadata.PackageNotFoundError:  # src/ on the path without any install: no metadata to read it from
    __version__ = "unknown"

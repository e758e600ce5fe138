"""The values a config computes (OmegaConf resolvers), defined and registered in one place.

``${default_data_dir:}``, ``${user_file_stem:}``, ``${safe_name:...}``, ``${usable_cores:}`` and
``${package:}`` appear in ``conf/``; :func:`register` makes all five known to OmegaConf. Every place that
composes a config calls it first: the entry point ``python -m src.run`` (at import, so that the worker
processes of a multirun, which import it to run their jobs, have them too), the pool's job composer
(:mod:`src.running.pool.jobs`) and :func:`src.data.named.load_named`. Importing any other module registers nothing.
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

import pooch
from omegaconf import OmegaConf

from . import config_dir

#: The name of an installed copy's directory in the user's cache (:func:`default_data_dir`).
CACHE_NAME = "repro-mf"
#: A user file's data set name while its ``path`` is not set yet (the run then stops on it).
NO_FILE_NAME = "file"
UNSAFE = re.compile(r"[^A-Za-z0-9._=,+-]+")


def default_data_dir() -> str:
    """``${default_data_dir:}``, the default of ``paths.data_dir``: ``data`` (under the working directory) in
    a checkout, the user's cache directory (``pooch.os_cache``) for an installed copy.

    A checkout keeps its data beside its outputs, in the git-ignored ``data/``; an installed copy has no
    project directory, and a cache that depends on the working directory would download the same files
    again for every directory a run starts from.
    """
    if config_dir.CHECKOUT is not None:
        return "data"
    return str(pooch.os_cache(CACHE_NAME))


def user_file_stem(*, _parent_) -> str:
    """``${user_file_stem:}``, the default name of a user's data file: the stem of the sibling key ``path``
    (``file`` while it is unset).

    Characters other than ASCII letters, digits and ``._+-`` become ``-`` (the name is part of directory
    and file names): ``my data (v2).csv`` gives ``my-data-v2``.
    """
    if OmegaConf.is_missing(_parent_, "path") or _parent_.get("path") in (None, ""):
        return NO_FILE_NAME
    stem = re.sub(r"[^A-Za-z0-9._+-]+", "-", Path(str(_parent_.get("path"))).stem).strip("-")
    return stem or NO_FILE_NAME


def safe_name(label) -> str:
    """``${safe_name:...}``: ``label`` as a file name that a shell takes without quoting (letters, digits and
    ``._=,+-``); run and sweep directories are named with it.

    Accents are dropped (``é`` -> ``e``); every run of other characters (spaces, brackets, quotes, slashes,
    other alphabets) becomes one ``-``; a leading ``-.=+,`` (an option, a hidden file, zsh's ``=command``)
    and a trailing ``-`` are removed. ``FNMF(farness=0.001)`` -> ``FNMF-farness=0.001``,
    ``PCGNMF(alpha=1,beta=10)`` -> ``PCGNMF-alpha=1,beta=10``. A label with nothing left gives ``unnamed``.
    """
    text = "".join(c for c in unicodedata.normalize("NFKD", str(label)) if not unicodedata.combining(c))
    return UNSAFE.sub("-", text).lstrip("-.=+,").rstrip("-") or "unnamed"


def usable_cores() -> int:
    """``${usable_cores:}``: the number of cores this process may run on, its CPU affinity where the system
    has one (Linux), else every core of the machine.

    The local launcher's default number of parallel jobs (``conf/hydra/launcher/joblib_local.yaml``) and
    the pool's default number of workers: a machine runs as many jobs at a time as it has cores, and a
    process confined to some cores (``taskset``, a batch system's CPU set) as many as it may use.
    """
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity on this system (macOS, Windows)
        return os.cpu_count() or 1


def package_name() -> str:
    """``${package:}``: the package's own name, ``src`` in a checkout and ``repro_mf`` installed (the configs'
    ``_target_`` names its classes with it)."""
    return config_dir.PACKAGE_NAME


RESOLVERS = {"default_data_dir": default_data_dir, "user_file_stem": user_file_stem, "safe_name": safe_name,
             "usable_cores": usable_cores, "package": package_name}
"""Resolver name in ``conf/`` -> the function that computes it."""


def register() -> None:
    """Make every resolver of :data:`RESOLVERS` known to OmegaConf (once; a second call changes nothing)."""
    for name, function in RESOLVERS.items():
        if not OmegaConf.has_resolver(name):
            OmegaConf.register_new_resolver(name, function)

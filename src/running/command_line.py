"""What the command line is checked and completed with before Hydra starts.

Hydra reports a bad group choice, an override it cannot parse or an output directory it cannot make over
several lines, with a traceback; these checks say it in one line (:class:`~src.errors.ConfigError`, exit
status 2 from :func:`src.run.cli`). :func:`with_experiment_group` rewrites the old selection of a paper's
settings (``+paper/<name>=experiment``) to the config group ``experiment=<name>``, with a deprecation
warning. :func:`with_label_protocol` gives a label-constrained method the labelling of its paper when the
command line picks none. :func:`add_pool_arguments` gives the commands that compute their cells in the pool
their shared options.
"""

import logging
import os
import re
from pathlib import Path

import yaml
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import OverrideParseException

from ..checks import POSITIVE_INT
from ..config_dir import CONF_DIR
from ..errors import ConfigError
from ..methods import outside
from .settings import class_label

logger = logging.getLogger(__name__)

#: The config groups a command line chooses from; ``experiment`` holds a paper's settings
#: (``experiment=cnmf``) and, in its folder ``benchmark/``, the family benchmark's tracks
#: (``experiment=benchmark/labels10``).
GROUPS = ("dataset", "method", "protocol", "solver", "experiment")
#: The selection of a paper's settings before they were the group ``experiment``: ``+paper/<name>=experiment``,
#: ``+benchmark/<track>=experiment`` (group ``paper/<name>`` or ``benchmark/<track>``, option ``experiment``).
#: Still read, rewritten by :func:`with_experiment_group`, for one release.
DEPRECATED = re.compile(r"\+(paper|benchmark)/([^/=]+)=experiment")


def with_experiment_group(overrides: list[str]) -> list[str]:
    """``overrides`` with the deprecated ``+paper/<name>=experiment`` written as ``experiment=<name>``.

    Before a paper's settings were the config group ``experiment`` (``conf/experiment/<name>.yaml``, selected
    with ``experiment=<name>`` as Hydra users expect), each was the option ``experiment`` of a group of its
    own, ``+paper/<name>=experiment``, and a track of the family benchmark ``+benchmark/<track>=experiment``.
    Those overrides, from a command line or a script, still work for one release: each is replaced, in place,
    by the override that composes the same config (``experiment=<name>``, ``experiment=benchmark/<track>``),
    and one warning says what to write instead. Any other override is kept as it is.

    Parameters
    ----------
    overrides : list of str
        Hydra overrides, as typed (flags such as ``-m`` pass through).

    Returns
    -------
    list of str
        The overrides, the deprecated ones rewritten.
    """
    kept, rewritten = [], []
    for override in overrides:
        match = DEPRECATED.fullmatch(override)
        if match is None:
            kept.append(override)
            continue
        group, name = match.groups()
        kept.append(f"experiment={name}" if group == "paper" else f"experiment=benchmark/{name}")
        rewritten.append((override, kept[-1]))
    if rewritten:
        logger.warning("%s %s deprecated and will be removed in the next release: write %s",
                       " ".join(old for old, _ in rewritten), "is" if len(rewritten) == 1 else "are",
                       " ".join(new for _, new in rewritten))
    return kept


def with_outside_method(overrides: list[str]) -> list[str]:
    """``overrides`` with ``method=<import path>`` (``mypkg.mymodule:MyNMF``, ``path/to/my_nmf.py:MyNMF``: an
    estimator outside the repository, :mod:`src.methods.outside`) written as the config ``method=outside``
    that holds it: its name, and its class's name as the label unless ``method.label`` is given."""
    out = []
    labelled = any(o.partition("=")[0].lstrip("+") == "method.label" for o in overrides)
    for override in overrides:
        key, sep, value = override.partition("=")
        if sep and key.lstrip("+") == "method" and outside.is_import_path(value) and "," not in value:
            name = value.strip("'\"")
            out += ["method=outside", f'method.name="{name}"'] + \
                ([] if labelled else [f'method.label="{class_label(name)}"'])
        else:
            out.append(override)
    return out


def options(group: str, conf_dir: Path = CONF_DIR) -> list[str]:
    """The options of the config group ``group`` in ``conf_dir``, sorted: its files' names without ``.yaml``;
    for ``experiment`` also those of its folders, as ``benchmark/labels10``."""
    folder = Path(conf_dir) / group
    found = folder.rglob("*.yaml") if group == "experiment" else folder.glob("*.yaml")
    return sorted(path.relative_to(folder).with_suffix("").as_posix() for path in found)


def check_group_choices(overrides: list[str], conf_dir: Path = CONF_DIR) -> None:
    """Reject an unknown config group choice (``method=foo``, ``experiment=foo``) with one line listing the
    choices."""
    for override in overrides:
        key, sep, value = override.partition("=")
        key = key.lstrip("+~")
        if not sep or key not in GROUPS:
            continue
        available = options(key, conf_dir)
        for choice in value.split(","):
            if choice not in available:
                raise ConfigError(f"{key}={choice!r} is not one of {', '.join(available)}")


def check_override_grammar(overrides: list[str]) -> None:
    """Reject an override Hydra's grammar cannot read with one line that says how to quote it.

    A value with a space, a non-ASCII letter or another special character (a data file's path, say) has to
    be quoted inside the override, and the override quoted again for the shell. Hydra's public parser reads
    each override as Hydra will.
    """
    parser = OverridesParser.create()
    for override in overrides:
        if override.startswith("-"):
            continue
        try:
            parser.parse_overrides([override])
        except OverrideParseException:
            key, _, value = override.partition("=")
            raise ConfigError(
                f"Hydra cannot read the override {override!r}: a value with spaces, non-ASCII letters or other "
                f"special characters must be quoted inside the override, e.g. '{key}=\"{value}\"' (the outer "
                "single quotes are for the shell)") from None


def with_label_protocol(overrides: list[str], conf_dir: Path = CONF_DIR) -> tuple[list[str], str | None]:
    """``overrides`` plus ``protocol=<p>`` when they run label-constrained methods and pick no protocol.

    ``p`` is the method's entry in ``label_protocols`` of ``conf/config.yaml`` (the labelling of the paper
    that introduced it). Nothing is added when the overrides choose a protocol, its labels or a paper's
    settings (other protocol keys, such as ``protocol.ks``, still apply on top of ``p``), when
    no method of theirs needs labels, or when their label methods belong to different protocols (the sweep's
    check then names each job that has no labels). Returns the overrides and the protocol added (or None).
    """
    keys = [o.partition("=")[0].lstrip("+~") for o in overrides if "=" in o and not o.startswith("-")]
    if any(key in ("protocol", "experiment") or key.startswith(("protocol.labels", "protocol.label_overrides"))
           for key in keys):
        return overrides, None
    homes = yaml.safe_load((conf_dir / "config.yaml").read_text()).get("label_protocols") or {}
    chosen = [o.partition("=")[2] for o in overrides if o.partition("=")[0].lstrip("+") == "method"]
    names = [name for value in chosen for name in value.split(",")]
    wanted = {homes[name] for name in names if name in homes}
    if len(wanted) != 1:
        return overrides, None
    protocol = wanted.pop()
    return [*overrides, f"protocol={protocol}"], protocol


def check_output_dir(overrides: list[str]) -> None:
    """Make the output directory given on the command line, or fail in one line before Hydra tries.

    The directories are the values of ``hydra.run.dir``, ``hydra.sweep.dir`` and ``paths.output_dir`` on the
    command line (those without interpolations), else ``outputs/`` under the working directory. Hydra would
    make them a moment later, with a traceback when it cannot.
    """
    given = {o.partition("=")[0].lstrip("+"): o.partition("=")[2] for o in overrides if "=" in o}
    values = [(key, given[key]) for key in ("hydra.run.dir", "hydra.sweep.dir", "paths.output_dir") if key in given]
    for key, value in values or [("the output directory", "outputs")]:
        if not value or "${" in value:
            continue
        path = Path(value).expanduser()
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"{key}={value!r} cannot be created: {exc.strerror or exc}") from None
        if not os.access(path, os.W_OK | os.X_OK):
            raise ConfigError(f"{key}={value!r} is not writable")


def add_pool_arguments(parser) -> None:
    """The options of a command that computes its cells in the pool (``src.reproduce``, ``src.benchmark``):
    ``--overrides`` (Hydra overrides added to every sweep), ``--workers`` and ``--dry-run``."""
    parser.add_argument("--overrides", nargs="+", default=[], metavar="OVERRIDE",
                        help="Hydra overrides added to every sweep (e.g. a launcher: hydra/launcher=submitit_slurm)")
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help="worker processes computing cells (default: the cores this process may use)")
    parser.add_argument("--dry-run", action="store_true",
                        help="compose and check the jobs, count the cells to compute; compute and write nothing")


def check_pool_arguments(args) -> None:
    """Refuse a bad ``--workers`` (read by :func:`add_pool_arguments`) with one line naming it."""
    if args.workers is not None:
        POSITIVE_INT.check("--workers", args.workers)

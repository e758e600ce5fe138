"""The grids the tuned benchmark searches: the family's, declared in each method's config, and a contender's.

A family method declares the grid of each parameter it tunes under ``tune`` in ``conf/method/<name>.yaml``,
beside the parameter's default (``params``), which is among the values; a method with nothing to tune says so
with ``tune: {}`` and a comment. A contender's grid comes from the command line (``--grid name=v1,v2,...``,
:func:`parse_grid`) and is checked before any cell (:func:`contender_grid`, and each value through the gate:
:func:`src.tuning.contender_grid`).

The settings a grid searches (:func:`settings`): the default, then each tuned parameter's other values with
the other parameters at their defaults (one axis at a time). A two-parameter method (PCGNMF, SDA) so tries
seven settings, not the sixteen of the product: the product would cost its cross-validation 16 fits per fold
and trial where one axis at a time costs 7, and no paper of the family tunes two weights jointly.

References
----------
Dodge, J., Gururangan, S., Card, D., Schwartz, R. and Smith, N. A. (2019). Show your work: improved reporting
of experimental results. EMNLP 2019, 2185-2194.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from ..checks import is_integer
from ..config_dir import CONF_DIR
from ..errors import ConfigError
from ..reproduction.shipped import short_name


@dataclass(frozen=True)
class Grid:
    """A method's grid: its registry name (or import path), its short label, the default of each tuned
    parameter and each one's values (the default among them); for a grid that may grow
    (:mod:`src.tuning.growth`), each parameter's step (the factor between a grown value and the edge it
    extends) and bounds (the lowest and highest value it may grow to)."""

    name: str
    label: str
    defaults: Mapping
    values: Mapping  # parameter -> tuple of values
    steps: Mapping = field(default_factory=dict)  # parameter -> factor > 1
    bounds: Mapping = field(default_factory=dict)  # parameter -> (lowest, highest)
    integers: frozenset = frozenset()  # the parameters that take whole numbers only (a count of neighbours)

    @property
    def tuned(self) -> bool:
        return bool(self.values)

    def with_values(self, values: Mapping) -> "Grid":
        """The same grid over other values (a grown grid: :mod:`src.tuning.growth`)."""
        return replace(self, values={p: tuple(v) for p, v in values.items()})


def method_config(name: str) -> dict:
    """The family method's config file ``conf/method/<name>.yaml`` as written (defaults list left unread)."""
    path = Path(CONF_DIR) / "method" / f"{name}.yaml"
    if not path.is_file():
        raise ConfigError(f"method={name!r} has no config {path}")
    return yaml.safe_load(path.read_text()) or {}


def family_grid(name: str) -> Grid:
    """The grid a family method declares (``tune`` in its config) and how each parameter's grid grows
    (``grow``: its step and bounds); empty for a method with nothing to tune. A declared parameter without a
    default in ``params``, whose default is not among its values, or without a step above 1 and bounds that
    hold its values, is refused on one line."""
    node = method_config(name)
    if "tune" not in node:
        raise ConfigError(f"conf/method/{name}.yaml declares no tune: give its grid, or tune: {{}} and why not")
    params, tune, grow = node.get("params") or {}, node["tune"] or {}, node.get("grow") or {}
    where = f"conf/method/{name}.yaml"
    for param, values in tune.items():
        if param not in params:
            raise ConfigError(f"{where}: tune.{param} has no default in params")
        if params[param] not in values:
            raise ConfigError(f"{where}: tune.{param}={values} leaves out the default {params[param]!r}")
        rule = grow.get(param)
        if not isinstance(rule, Mapping) or not {"step", "bounds"} <= set(rule) <= {"step", "bounds", "integer"}:
            raise ConfigError(f"{where}: tune.{param} needs grow.{param}: {{step: <factor above 1>, "
                              "bounds: [lowest, highest]}, how its grid grows, and integer: true where it takes "
                              "whole numbers only (docs/benchmark.md)")
        if rule.get("integer") and not all(is_integer(v) for v in (*values, *rule["bounds"])):
            raise ConfigError(f"{where}: grow.{param} says integer, but its grid {values} or bounds "
                              f"{rule['bounds']} hold a value that is no whole number")
        low, high = rule["bounds"]
        if not float(rule["step"]) > 1 or not low <= min(values) or not max(values) <= high:
            raise ConfigError(f"{where}: grow.{param} needs a step above 1 and bounds [{low}, {high}] that "
                              f"hold the grid {values}")
    extra = set(grow) - set(tune)
    if extra:
        raise ConfigError(f"{where}: grow.{sorted(extra)[0]} has no grid under tune")
    return Grid(name, short_name(node.get("label", name)), {p: params[p] for p in tune},
                {p: tuple(v) for p, v in tune.items()}, {p: float(grow[p]["step"]) for p in tune},
                {p: (float(grow[p]["bounds"][0]), float(grow[p]["bounds"][1])) for p in tune},
                frozenset(p for p in tune if grow[p].get("integer")))


def settings(grid: Grid) -> list[dict]:
    """The settings the grid searches, default first: each a mapping of every tuned parameter to its value
    (one axis at a time, the module docstring)."""
    found = [dict(grid.defaults)]
    for param, values in grid.values.items():
        found += [{**grid.defaults, param: value} for value in values if value != grid.defaults[param]]
    return found


def setting_text(setting: Mapping) -> str:
    """A setting as the tables print it: ``alpha=10.0`` or ``alpha=10.0,beta=100.0``."""
    return ",".join(f"{param}={value}" for param, value in setting.items())


def parse_setting(text: str) -> dict:
    """A setting's text read back (the inverse of :func:`setting_text`): ``"alpha=10.0,beta=100.0"`` as
    ``{"alpha": 10.0, "beta": 100.0}``, a value that is no number kept as text."""
    setting = {}
    for part in str(text).split(","):
        name, _, value = part.partition("=")
        try:
            setting[name] = float(value)
        except ValueError:
            setting[name] = value
    return setting


def setting_label(grid: Grid, setting: Mapping) -> str:
    """The label of a grid cell's method in tables and directories: ``GNMF(alpha=10.0)``; a method's own label
    (``CNMF``) where it has nothing to tune."""
    return f"{grid.label}({setting_text(setting)})" if setting else grid.label


def setting_of(params_json: str, grid: Grid) -> str:
    """The setting text of a row from its ``params`` column (the method's parameters as JSON)."""
    params = json.loads(params_json)
    return setting_text({param: params.get(param, grid.defaults[param]) for param in grid.values})


def parse_grid(items: list[str]) -> dict[str, tuple]:
    """``["beta=0.1,1,10"]`` as ``{"beta": (0.1, 1, 10)}`` (each value read as YAML); an item that is not
    ``name=v1,v2,...``, an empty grid or a name given twice is one line."""
    grid = {}
    for item in items or []:
        name, sep, text = item.partition("=")
        if not sep or not name.isidentifier():
            raise ConfigError(f"--grid {item!r} must be name=v1,v2,..., e.g. --grid beta=0.01,0.1,1,10")
        values = tuple(yaml.safe_load(part) for part in text.split(",") if part.strip())
        if not values:
            raise ConfigError(f"--grid {item!r} gives no value: name=v1,v2,...")
        if len(set(map(repr, values))) < len(values):
            raise ConfigError(f"--grid {item!r} gives a value twice")
        if name in grid:
            raise ConfigError(f"--grid {name} is given twice: one --grid per parameter")
        grid[name] = values
    return grid


def contender_grid(name: str, label: str, params: Mapping, grid: Mapping, accepted, defaults: Mapping) -> Grid:
    """The :class:`Grid` of a contender: ``grid`` (from :func:`parse_grid`) on the estimator whose
    constructor takes ``accepted`` with ``defaults``; a parameter it does not take, or one both in ``--grid``
    and ``--param``, is one line. A parameter's default is its ``--param``-free constructor default when the
    grid holds it, else the grid's first value (what a tie keeps)."""
    for param in grid:
        if param not in accepted:
            raise ConfigError(f"--grid {param}: {label} takes no parameter {param!r} (it takes "
                              f"{', '.join(sorted(accepted))})")
        if param in params:
            raise ConfigError(f"--grid {param} and --param {param}: give the parameter one way")
    chosen = {p: (defaults[p] if p in defaults and defaults[p] in values else values[0]) for p, values in grid.items()}
    return Grid(name, label, chosen, {p: tuple(v) for p, v in grid.items()})

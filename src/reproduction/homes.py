"""The papers this project reproduces, each with one home: ``papers/<name>/``, and its Hydra settings.

A paper's Hydra settings are ``conf/experiment/<name>.yaml`` (protocol, preprocessing, the sweep's data sets and
methods, the output directory), selected with ``python -m src.run -m experiment=<name>``. Its home, beside
``conf/`` and off Hydra's search path (none of its files is a config), holds

* ``reproduce.yaml``: what :mod:`src.reproduce` runs: ``sweeps`` (each a list of Hydra overrides added to
  the experiment; a nested list, e.g. a YAML alias of an entry of ``parts``, is spliced in), ``depends_on``
  (papers whose runs this one's report also reads; its report waits for them) and ``report``
  (``datasets``: keep only these in the report);
* ``published.yaml`` (and ``tables.csv`` when the paper's tables survive): its published numbers and claims,
  read by :mod:`src.presentation.paper_report`;
* ``readings.yaml`` if it declares readings (:mod:`src.reproduction.readings`).

The tracks of the family benchmark (:mod:`src.benchmark`) are homes too, ``papers/benchmark/<track>/`` with
the settings ``conf/experiment/benchmark/<track>.yaml`` (``experiment=benchmark/<track>``).

What is the paper's own in code (extra figures) lives in ``src/presentation/papers/<name>.py``, which defines
``figures(out: Path)``; papers without such a module have no extra figures. Adding a paper means adding
its experiment, its home and, if it has figures of its own, that module.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import yaml

from ..config_dir import CONF_DIR, PAPERS_DIR
from ..errors import ConfigError

#: The root of the paper homes: the checkout's ``papers/``, or the installed copy (``src/config_dir.py``).
HOME = PAPERS_DIR
#: Where ``make reproduce-<paper>`` writes (relative to the working directory, as ``paths.output_dir``).
OUTPUTS = Path("outputs") / "reproduce"
#: The homes of the family benchmark's tracks (their Hydra settings: ``conf/experiment/benchmark/<track>.yaml``).
BENCHMARK_HOME = PAPERS_DIR / "benchmark"
#: Where ``make benchmark`` writes (relative to the working directory).
BENCHMARK_OUTPUTS = Path("outputs") / "benchmark"
#: The tuned benchmark's folder inside a benchmark's (``outputs/benchmark/tuned/``): the other settings' and the
#: folds' cells (:mod:`src.tuning.homes`) and the tuned tables (:mod:`src.tuning.tables`).
TUNED_DIR = "tuned"
SETTINGS = "reproduce.yaml"
KEYS = ("sweeps", "depends_on", "report", "parts")
#: Where a paper's own code (its extra figures) lives: ``src/presentation/papers/<name>.py``.
OWN_CODE = Path(__file__).resolve().parents[1] / "presentation" / "papers"
OWN_CODE_PACKAGE = f"{__package__.rpartition('.')[0]}.presentation.papers"
REPORT_KEYS = ("datasets",)


@dataclass(frozen=True)
class Paper:
    """One paper's home, as read from ``<home>/<name>/reproduce.yaml``.

    ``group`` is the folder of ``conf/experiment/`` that holds its Hydra settings: ``""`` for a paper
    (``conf/experiment/<name>.yaml``), ``"benchmark"`` for a track of the family benchmark
    (``conf/experiment/benchmark/<track>.yaml``).
    """

    name: str
    home: Path
    sweeps: tuple[tuple[str, ...], ...] = ()
    depends_on: tuple[str, ...] = ()
    report_datasets: tuple[str, ...] | None = None
    group: str = ""

    @property
    def choice(self) -> str:
        """Its option of the config group ``experiment``: ``<name>`` for a paper, ``benchmark/<track>`` for a
        track."""
        return f"{self.group}/{self.name}" if self.group else self.name

    @property
    def experiment(self) -> str:
        """The Hydra override selecting its settings: ``experiment=<name>`` for a paper,
        ``experiment=benchmark/<track>`` for a track of the family benchmark."""
        return f"experiment={self.choice}"

    def experiment_file(self, conf_dir: Path = CONF_DIR) -> Path:
        """The file of its Hydra settings in the config directory ``conf_dir``:
        ``<conf_dir>/experiment/<choice>.yaml``."""
        return Path(conf_dir) / "experiment" / f"{self.choice}.yaml"

    @property
    def published(self) -> Path:
        return self.home / "published.yaml"

    @property
    def tables(self) -> Path:
        return self.home / "tables.csv"

    def sweep_overrides(self) -> list[list[str]]:
        """Each sweep's full override list: the experiment, then the sweep's own overrides."""
        return [[self.experiment, *sweep] for sweep in self.sweeps]

    def out(self, outputs: Path = OUTPUTS) -> Path:
        """The paper's output directory, ``<outputs>/<name>``."""
        return Path(outputs) / self.name

    def runs(self, out: Path | None = None) -> list[Path]:
        """The run directories the paper's report in ``out`` (default :meth:`out`) reads: ``out/runs``, then
        the runs of each paper it depends on, beside ``out``."""
        out = Path(out) if out is not None else self.out()
        return [out / "runs", *(out.parent / name / "runs" for name in self.depends_on)]

    def module(self) -> ModuleType | None:
        """``src.presentation.papers.<name>`` if the paper has its own code (figures), else None.

        Found by name, as a plug-in: the paper's model knows where its figures live but does not import the
        presentation room."""
        if not (OWN_CODE / f"{self.name}.py").is_file():
            return None
        return importlib.import_module(f"{OWN_CODE_PACKAGE}.{self.name}")


def names(home: Path = HOME) -> list[str]:
    """Every paper with a home under ``home`` (a directory holding ``reproduce.yaml``), sorted."""
    return sorted(path.parent.name for path in Path(home).glob(f"*/{SETTINGS}"))


def _strings(value, where: str) -> tuple[str, ...]:
    """A list of strings, nested lists spliced in (YAML aliases of shared parts)."""
    if not isinstance(value, list):
        raise ConfigError(f"{where}={value!r} must be a list")
    out = []
    for item in value:
        if isinstance(item, list):
            out.extend(_strings(item, where))
        elif isinstance(item, str) and item:
            out.append(item)
        else:
            raise ConfigError(f"{where} holds {item!r}; each entry must be a non-empty string "
                              "(quote values with commas)")
    return tuple(out)


def load(name: str, home: Path = HOME, group: str = "") -> Paper:
    """The paper ``name`` of ``home``, whose Hydra settings are in the folder ``group`` of
    ``conf/experiment/`` (``""``: a paper, ``"benchmark"``: a track); one-line
    :class:`~src.errors.ConfigError` if it has no home or a bad one."""
    path = Path(home) / name / SETTINGS
    if not path.is_file():
        raise ConfigError(f"paper={name!r} has no {path} (papers: {', '.join(names(home)) or 'none'})")
    try:
        settings = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {' '.join(str(exc).split())}") from None
    if not isinstance(settings, dict):
        raise ConfigError(f"{path} must be a mapping with keys {', '.join(KEYS)}")
    unknown = sorted(set(settings) - set(KEYS))
    if unknown:
        raise ConfigError(f"{path}: unknown key(s) {', '.join(unknown)} (known: {', '.join(KEYS)})")
    report = settings.get("report") or {}
    if not isinstance(report, dict) or set(report) - set(REPORT_KEYS):
        raise ConfigError(f"{path}: report={report!r} must be a mapping with keys {', '.join(REPORT_KEYS)}")
    depends_on = _strings(settings.get("depends_on") or [], f"{path}: depends_on")
    missing = [dep for dep in depends_on if not (Path(home) / dep / SETTINGS).is_file()]
    if missing:
        raise ConfigError(f"{path}: depends_on names {', '.join(missing)}, which has no home under {home}")
    return Paper(name=name, home=Path(home) / name, group=group,
                 sweeps=tuple(_strings(sweep, f"{path}: sweeps[{i}]")
                              for i, sweep in enumerate(settings.get("sweeps") or [])),
                 depends_on=depends_on,
                 report_datasets=_strings(report["datasets"], f"{path}: report.datasets")
                 if report.get("datasets") else None)


def runs_may_be_on_disk(overrides: list[str]) -> bool:
    """Whether jobs composed with ``overrides`` may find a reproduction's runs on disk: ``outputs/reproduce``
    exists in the working directory, or ``paths.output_dir`` is overridden (the runs may be elsewhere).

    A command that copies a reproduction's cells (the benchmark, a paper's readings) composes the papers' jobs
    only then: their run directories lie under ``paths.output_dir``, so with neither there is nothing to copy."""
    elsewhere = any(item.lstrip("+~").startswith("paths.output_dir") for item in overrides)
    return elsewhere or OUTPUTS.is_dir()


def in_order(selected: list[str] | None = None, home: Path = HOME) -> list[Paper]:
    """The papers ``selected`` (default: all), each after the papers it depends on (only those selected).

    Papers keep their given order (all: sorted by name) where no dependency constrains them; a cycle is a
    :class:`~src.errors.ConfigError`.
    """
    selected = list(dict.fromkeys(selected if selected is not None else names(home)))
    papers = {name: load(name, home) for name in selected}
    ordered: list[Paper] = []
    visiting: list[str] = []

    def visit(name: str) -> None:
        if any(p.name == name for p in ordered):
            return
        if name in visiting:
            raise ConfigError(f"papers depend on each other in a cycle: {' -> '.join([*visiting, name])}")
        visiting.append(name)
        for dep in papers[name].depends_on:
            if dep in papers:
                visit(dep)
        visiting.pop()
        ordered.append(papers[name])

    for name in selected:
        visit(name)
    return ordered

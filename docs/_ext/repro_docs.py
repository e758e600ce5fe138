"""Sphinx extension: the pages of the site that depend on the checkout, written into ``docs/_generated/``.

At ``builder-inited`` (before Sphinx reads any source) it writes

* ``docs/_generated/papers/<paper>.md``, one per paper home ``papers/<paper>/reproduce.yaml``: the report of
  the latest reproduction, ``<outputs>/<paper>/report.md`` with the figures it shows, or, when there is none,
  a sentence saying which ``make reproduce-<paper>`` writes it;
* ``docs/_generated/papers/readings_<paper>.md`` for each paper whose readings ran (``make explain-<paper>``):
  its readings' report, ``<outputs>/explain/<paper>/report.md``;
* ``docs/_generated/papers/scorecard.md`` from ``<outputs>/README.md`` (written by ``make reproduce-all``),
  ``docs/_generated/papers/benchmark.md`` from the family benchmark's ``report.md`` (written by
  ``make benchmark``), and ``docs/_generated/papers/index.md``, their table of contents;
* ``docs/_generated/api/methods.rst`` and ``docs/_generated/api/methods/<name>.rst``, one page per estimator
  of ``src.methods.REGISTRY``, so that a method added to the registry gets its page without editing the docs.

``<outputs>`` is the config value ``repro_outputs`` (``sphinx-build -D repro_outputs=DIR``), by default
``docs/results/``, the last reproduction that ``make results`` published (the pages the README links to), and
``outputs/reproduce`` of the checkout when nothing is published. A report and its figures are copied into ``_generated/reports/``
(excluded from the sources) and included with MyST's ``{include}``, so the page shows the report as
written (but for non-breaking spaces inside its numbers, :data:`PLUS_MINUS`). A file is rewritten only when its text changes, and files no longer produced are removed, so
that an incremental build reads only what changed.
"""

from __future__ import annotations

import datetime
import inspect
import re
import shutil
from pathlib import Path

import yaml

GENERATED = "_generated"
#: Navigation titles of the paper pages, in the order of the README's table; a paper home without one
#: here is listed after them under its name in capitals.
TITLES = {
    "cnmf": "CNMF: constrained NMF (Liu et al., TPAMI 2012)",
    "ccf": "CCF: constrained concept factorization (Liu et al., TCYB 2014)",
    "lcf": "LCF: local coordinate concept factorization (Liu et al., TNNLS 2014)",
    "fnmf": "FNMF: farness-preserving NMF (Babaee et al., ICIP 2014)",
    "pcgnmf": "PCGNMF: pairwise-constrained graph NMF (He et al., NPL 2015)",
    "cai": "Deng Cai's GNMF demo on COIL20",
}
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")
#: "mean ± sd" and "[low, high]" in the reports' tables: the spaces inside them become non-breaking in the
#: copy the site shows, so that a narrow column wraps between numbers, never inside one.
PLUS_MINUS = re.compile(r"(\d) ± (\d)")
INTERVAL = re.compile(r"\[([-+]?\d[\d.]*), ([-+]?\d[\d.]*)\]")
NBSP = "\u00a0"


def shown(path: Path) -> str:
    """``path`` as a reader finds it: relative to the checkout (``docs/results/...``, ``outputs/reproduce/...``)
    when it lies inside one, else as it is."""
    path = Path(path).resolve()
    for parent in path.parents:
        if (parent / "pyproject.toml").is_file():
            return path.relative_to(parent).as_posix()
    return str(path)


def papers(home: Path) -> list[str]:
    """The paper homes (``papers/<name>/reproduce.yaml``), in the order of :data:`TITLES`, then by name."""
    names = sorted(path.parent.name for path in home.glob("*/reproduce.yaml"))
    known = [name for name in TITLES if name in names]
    return known + [name for name in names if name not in TITLES]


def citation(home: Path, paper: str) -> str | None:
    """The paper's reference as its ``published.yaml`` gives it (``paper:``), if any."""
    path = home / paper / "published.yaml"
    if not path.is_file():
        return None
    return (yaml.safe_load(path.read_text()) or {}).get("paper")


BUILT = re.compile(r"Built by `[^`]*` from \S+ to (\d{4}-\d\d-\d\dT[\d:]+[^\s.]*)")


def written_at(path: Path) -> str:
    """When the report at ``path`` was written, in UTC to the minute: the end its provenance section records
    (a copy in a fresh clone keeps it), else the file's modification time."""
    match = BUILT.search(path.read_text())
    if match:
        stamp = datetime.datetime.fromisoformat(match.group(1)).astimezone(datetime.timezone.utc)
    else:
        stamp = datetime.datetime.fromtimestamp(path.stat().st_mtime, tz=datetime.timezone.utc)
    return stamp.strftime("%Y-%m-%d %H:%M UTC")


def copy_report(report: Path, target: Path) -> list[str]:
    """Copy ``report`` (numbers kept whole, see :data:`PLUS_MINUS`) and the local images it shows into the
    directory ``target``; returns their names."""
    target.mkdir(parents=True, exist_ok=True)
    text = report.read_text()
    copied = [report.name]
    shown = PLUS_MINUS.sub(rf"\1{NBSP}±{NBSP}\2", text)
    write(target / report.name, INTERVAL.sub(rf"[\1,{NBSP}\2]", shown))
    for name in dict.fromkeys(IMAGE.findall(text)):
        image = report.parent / name
        if "://" in name or not image.is_file():
            continue
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        if not destination.is_file() or destination.read_bytes() != image.read_bytes():
            shutil.copyfile(image, destination)
        copied.append(name)
    return copied


def include(path: str, text: str) -> str:
    """A MyST ``{include}`` of ``path`` without its leading ``# title`` line (the page has its own)."""
    first = text.splitlines()[0] if text.strip() else ""
    start = "\n:start-line: 1" if first.startswith("# ") else ""
    return f"```{{include}} {path}\n:relative-images:{start}\n```\n"


def report_intro(sentence: str) -> str:
    """The page's opening sentence in a ``repro-report`` container: the mark by which ``_static/repro.css``
    widens the page and keeps the report's wide tables readable (a container around the report itself would
    turn its headings into plain titles, without the page's table of contents)."""
    return f"::::{{container}} repro-report\n{sentence}\n::::\n"


def paper_page(paper: str, home: Path, outputs: Path, generated: Path) -> tuple[str, set[Path]]:
    """The Markdown of a paper's page and the files it needs under ``generated``."""
    report = outputs / paper / "report.md"
    reference = citation(home, paper)
    when = f"`{shown(report)}` (written {written_at(report)})" if report.is_file() else ""
    return report_page(TITLES.get(paper, paper.upper()), report,
                       (f"Paper: {reference}\n\n" if reference else "")
                       + f"No reproduction found in `outputs/reproduce/{paper}/`: run `make reproduce-{paper}`, then "
                       "`make docs` again, and this page shows its report (tables, figures, the comparison with the "
                       "published numbers).",
                       f"The report of the reproduction these pages were built from, {when}; `make reproduce-{paper}` "
                       "runs it again. Every number comes from that run's results; the paper's own numbers stand "
                       "beside ours where its text gives them.", paper, generated)


def report_page(title: str, report: Path | None, missing: str, intro: str, name: str,
                generated: Path) -> tuple[str, set[Path]]:
    """The Markdown of a page that shows ``report`` (copied under ``generated/reports/<name>``) after the
    sentence ``intro``, or says ``missing`` when there is no report; and the files it needs."""
    lines = [f"# {title}", ""]
    if report is None or not report.is_file():
        return "\n".join(lines + [missing, ""]), set()
    target = generated / "reports" / name
    copied = copy_report(report, target)
    lines += [report_intro(intro), "", include(f"../reports/{name}/{report.name}", report.read_text())]
    return "\n".join(lines), {target / file for file in copied}


def beside(outputs: Path, relative: Path) -> Path | None:
    """``relative`` in the published snapshot ``outputs``, else beside a local reproduction's folder
    (``outputs/../relative``), else None."""
    return next((path for path in (outputs / relative, outputs.parent / relative) if path.is_file()), None)


def readings_page(paper: str, outputs: Path, generated: Path) -> tuple[str, set[Path]] | None:
    """The Markdown of the page of a paper's readings (``make explain-<paper>``): ``explain/<paper>/report.md``
    of ``outputs`` (the published snapshot) or, beside a local reproduction, ``outputs/../explain``; None when
    the paper has none."""
    report = beside(outputs, Path("explain") / paper / "report.md")
    if report is None:
        return None
    return report_page(f"{TITLES.get(paper, paper.upper())}: the readings", report, "",
                       f"What each reading of the paper (a defensible other choice where its text is silent, run beside "
                       f"the primary one) does to its published numbers: the report of the `make explain-{paper}` "
                       f"these pages were built from, `{shown(report)}` (written {written_at(report)}).",
                       f"explain_{paper}", generated)


def scorecard_page(outputs: Path, generated: Path) -> tuple[str, set[Path]]:
    """The Markdown of the scorecard's page and the files it needs under ``generated``."""
    scorecard = outputs / "README.md"
    when = f"`{shown(scorecard)}` (written {written_at(scorecard)})" if scorecard.is_file() else ""
    return report_page("Scorecard", scorecard,
                       "No scorecard found in `outputs/reproduce/README.md`: run `make reproduce-all` (every paper, "
                       "then the scorecard), then `make docs` again.",
                       "Every published number we have data for, beside ours, with a verdict that accounts for the "
                       f"noise of the trials; from the `make reproduce-all` these pages were built from, {when}.",
                       "scorecard", generated)


def benchmark_page(outputs: Path, generated: Path) -> tuple[str, set[Path]]:
    """The Markdown of the family benchmark's page: ``benchmark/report.md`` of ``outputs`` (the published
    snapshot) or, beside a local reproduction, ``outputs/benchmark/report.md``; and the files it needs."""
    report = beside(outputs, Path("benchmark") / "report.md")
    when = f"`{shown(report)}` (written {written_at(report)})" if report is not None else ""
    return report_page("The family benchmark", report,
                       "No benchmark found in `outputs/benchmark/`: run `make benchmark` (after `make reproduce-all`, "
                       "whose cells it copies), then `make docs` again, and this page shows its report.",
                       "Every method of the family under one protocol, ranked: the report of the `make benchmark` "
                       f"these pages were built from, {when}.", "benchmark", generated)


def papers_index(names: list[str], readings: list[str] = ()) -> str:
    pages = [page for name in names for page in ([name, f"readings_{name}"] if name in readings else [name])]
    entries = "\n".join(pages + ["scorecard", "benchmark"])
    return ("# Papers\n\n"
            "One page per paper home (`papers/<paper>/`): the report that `make reproduce-<paper>` wrote last, "
            "with our tables, the figures and our numbers beside the published ones, the scorecard over "
            "all papers, and the family benchmark, which ranks every method under one protocol. These pages are written when the site is built, from whatever `outputs/reproduce/` "
            "holds then. How a number is judged to come back is explained in {doc}`/verdicts`.\n\n"
            f"```{{toctree}}\n:maxdepth: 1\n\n{entries}\n```\n")


def summary(cls) -> str:
    """The first line of a class's docstring."""
    doc = inspect.getdoc(cls) or ""
    return doc.splitlines()[0] if doc else ""


def method_page(name: str, cls, documented_modules: set[str], registry: dict) -> str:
    """The reST of an estimator's page: the class, then its module (objective, rules, helpers) once."""
    from src.methods.core.estimator import Factorization

    target = f"{cls.__module__}.{cls.__qualname__}"
    heading = f"``{name}``: {cls.__name__}"
    lines = [heading, "=" * len(heading), "",
             f"``method={name}`` in a run (``conf/method/{name}.yaml``); in Python "
             f"``src.methods.make(\"{name}\", ...)`` or ``from src.methods import {cls.__name__}``.", ""]
    if issubclass(cls, Factorization):
        lines += ["Fitting, the solver's parameters and the representation of new samples are those of the base "
                  "class :class:`~src.methods.core.estimator.Factorization`.", ""]
    lines += [f".. autoclass:: {target}", "   :members:", ""]
    module = cls.__module__
    if module in documented_modules:
        lines += [f"The objective and the update rules are described with :mod:`{module}`.", ""]
    else:
        documented_modules.add(module)
        section = f"The module ``{module}``"
        own = ", ".join(other.__name__ for other in registry.values() if other.__module__ == module)
        lines += [section, "-" * len(section), "", f".. automodule:: {module}", "   :members:",
                  f"   :exclude-members: {own}", ""]
    return "\n".join(lines)


def methods_index(registry: dict) -> str:
    rows = []
    for name, cls in registry.items():
        rows += [f"   * - :doc:`{name} <methods/{name}>`",
                 f"     - :class:`~{cls.__module__}.{cls.__qualname__}`",
                 f"     - {summary(cls)}"]
    pages = "\n".join(f"   methods/{name}" for name in registry)
    return "\n".join([
        "The estimators",
        "==============",
        "",
        "Every class of the registry ``src.methods.REGISTRY``, by its config name (``method=<name>``), each on a "
        "page of its own with its parameters and the module that defines its objective. They are scikit-learn "
        "estimators: :doc:`/api/index` says how to use them.",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "   :widths: 15 20 65",
        "",
        "   * - config name",
        "     - class",
        "     - what it is",
        *rows,
        "",
        ".. automodule:: src.methods",
        "   :members: make, estimator_class",
        "",
        ".. autodata:: src.methods.REGISTRY",
        "   :no-value:",
        "",
        "   The config name of each method (``conf/method/<name>.yaml``) and its estimator class: the one "
        "place the configs, :func:`make`, the tests and the reports take the methods from.",
        "",
        ".. autodata:: src.methods.NAMES",
        "   :no-value:",
        "",
        "   The config names of :data:`REGISTRY`, in its order.",
        "",
        ".. toctree::",
        "   :hidden:",
        "",
        pages,
        "",
    ])


def write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` unless it already holds it (Sphinx rereads only changed files)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file() or path.read_text() != text:
        path.write_text(text)


def generate(srcdir: Path, repo: Path, outputs: Path) -> set[Path]:
    """Write every generated page under ``srcdir/_generated``; returns the files written or kept."""
    from src.methods import REGISTRY

    generated = srcdir / GENERATED
    home = repo / "papers"
    keep: set[Path] = set()

    def page(path: Path, text: str) -> None:
        write(path, text)
        keep.add(path)

    names, explained = papers(home), []
    for paper in names:
        text, files = paper_page(paper, home, outputs, generated)
        page(generated / "papers" / f"{paper}.md", text)
        keep |= files
        readings = readings_page(paper, outputs, generated)
        if readings is not None:
            page(generated / "papers" / f"readings_{paper}.md", readings[0])
            keep |= readings[1]
            explained.append(paper)
    text, files = scorecard_page(outputs, generated)
    page(generated / "papers" / "scorecard.md", text)
    keep |= files
    text, files = benchmark_page(outputs, generated)
    page(generated / "papers" / "benchmark.md", text)
    keep |= files
    page(generated / "papers" / "index.md", papers_index(names, explained))

    page(generated / "api" / "methods.rst", methods_index(REGISTRY))
    documented: set[str] = set()
    for name, cls in REGISTRY.items():
        page(generated / "api" / "methods" / f"{name}.rst", method_page(name, cls, documented, REGISTRY))

    for path in sorted(generated.rglob("*"), reverse=True):  # what an earlier build wrote and this one did not
        if path.is_file() and path not in keep:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    return keep


def on_builder_inited(app) -> None:
    srcdir = Path(app.srcdir)
    repo = srcdir.parent
    if app.config.repro_outputs:
        outputs = Path(app.config.repro_outputs)
    else:  # the snapshot `make results` publishes, else a local reproduction
        published = srcdir / "results"
        outputs = published if (published / "README.md").is_file() else repo / "outputs" / "reproduce"
    generate(srcdir, repo, outputs.expanduser().resolve())


def skip_inherited_from_dependencies(app, what, name, obj, skip, options):
    """Leave out the members a class inherits from scikit-learn (``set_fit_request``, ``get_params``, ...):
    they are documented by scikit-learn, and their docstrings refer to its own pages."""
    module = getattr(obj, "__module__", None) or ""
    if what == "class" and module and not module.startswith("src"):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", skip_inherited_from_dependencies)
    app.add_config_value("repro_outputs", None, "env", types=[str, type(None)])
    app.connect("builder-inited", on_builder_inited)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}

"""The imports of src/: each module imports alone, the import graph has no cycle, imports are relative.

(a) Every module of src/ is imported first thing in an interpreter that has loaded the libraries src/ uses
    (numpy, scikit-learn, Hydra, ...: :func:`libraries`) and none of src/: a module that only imports after
    another one was imported first (an order-dependent cycle, a name taken from a half-initialized module)
    fails here. One interpreter loads the libraries once and forks for each module (:data:`FORK_EACH`), so a
    module's import costs its own code, not the libraries' (integration; started on the other core as soon as
    the session's tests are known, tests/background.py).
(b) The import graph of src/, read with ``ast`` (every ``import`` and ``from ... import``, relative ones
    resolved, those inside functions included), has no cycle; no function body imports anything, except the
    deferred heavy imports of :data:`DEFERRED`, each with its reason (a deferred import that only dodges a
    cycle does not belong there: the cycle test counts it).
(c) Every module imports the package relatively: installed, src/ is the package ``repro_mf``, so an
    ``import src...`` works in a checkout only; and nothing under src/ imports tools/, which is not installed.
(d) The rooms are layered (:data:`LAYERS`): a module imports only from its own layer or those below, the
    base modules from nothing above them, the numerical rooms from the base only, running cells from those,
    the papers' models and their orchestration from running, the tuned benchmark (and the benchmark's
    orchestration) from the papers, the choice from those, presentation from the models, and nothing
    imports an entry point; an arrow upwards is declared in :data:`UPWARD` with its reason. Presentation is
    on top: a run's cells and a paper's orchestration do not know how a report is written, the entry points
    hand the report writers down.
"""

import ast
import functools
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import background
import pytest

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
PACKAGE = "src"
INSTALLED = "repro_mf"  # the name of src/ when installed (pyproject.toml, [tool.setuptools] package-dir)

DEFERRED = {
    ("src.methods.graph.knn", "src.methods.graph.nndescent"):
        "nndescent imports numba (0.2-0.5 s, and compiles on first use); only the approximate kNN search "
        "(knn_algorithm='nndescent', or 'auto' above 30,000 samples) needs it",
    ("src.presentation.figures", "matplotlib"):
        "every command imports the figures (a run draws one at its end); pyplot takes half a second to import, "
        "which the processes that draw nothing (dry runs, pool workers, refused settings) do not pay",
    ("src.presentation.figures", "matplotlib.pyplot"): "the same (the backend is set to Agg before it)",
    ("src.presentation.figures", "matplotlib.ticker"): "the same (the k axis's integer ticks)",
}
"""(importing module, imported module) -> why the import waits inside a function."""


LAYERS = [
    ("base", ("src", "src.errors", "src.checks", "src.files", "src.config_dir", "src.resolvers")),
    ("numerical rooms", ("src.methods", "src.data", "src.protocol")),
    ("running cells", ("src.running",)),
    ("the papers' models and orchestration", ("src.reproduction",)),
    ("the tuned benchmark and its orchestration", ("src.tuning",)),
    ("the choice on a person's labels", ("src.choice",)),
    ("presentation", ("src.presentation",)),
    ("entry points", ("src.run", "src.reproduce", "src.explain", "src.benchmark", "src.cluster")),
]
"""The layers from the bottom, each with the modules (and the packages, with everything under them) that form
it; a module belongs to the layer of its longest listed prefix."""

UPWARD: dict[tuple[str, str], str] = {}
"""(importing module, imported module) -> why the arrow goes up a layer."""


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(SRC.rglob("*.py")) if "__pycache__" not in path.parts}
"""Dotted name (src.methods.core.loop; a package by its __init__.py) -> file, every module of src/."""


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    target: str  # the imported module, absolute (a src module, or e.g. "numpy.linalg")
    line: int
    function: str | None  # the enclosing function, None at module or class level
    statement: str
    relative: bool

    def where(self) -> str:
        inside = f" in {self.function}()" if self.function else ""
        return f"{MODULES[self.module].relative_to(REPO)}:{self.line}{inside}: {self.statement}"


def package_of(module: str) -> str:
    """The package a module's relative imports start from (a package's own name for its __init__.py)."""
    return module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]


def in_package(name: str) -> str | None:
    """``name`` as a module of src/ (an absolute ``src.`` or ``repro_mf.`` name mapped to ``src.``), else None."""
    for top in (PACKAGE, INSTALLED):
        if name == top or name.startswith(top + "."):
            return PACKAGE + name[len(top):]
    return None


class _Collector(ast.NodeVisitor):
    def __init__(self, module: str):
        self.module = module
        self.functions: list[str] = []
        self.found: list[Import] = []

    def _function(self, node):
        self.functions.append(node.name)
        self.generic_visit(node)
        self.functions.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def _add(self, node, target: str):
        function = self.functions[-1] if self.functions else None
        relative = bool(getattr(node, "level", 0))
        self.found.append(Import(self.module, target, node.lineno, function, ast.unparse(node), relative))

    def visit_Import(self, node: ast.Import):
        for alias in node.names:
            self._add(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom):
        if node.level:
            base = package_of(self.module)
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            origin = f"{base}.{node.module}" if node.module else base
        else:
            origin = node.module
        targets = []  # from package import submodule: the submodule (the package is its ancestor), else origin
        for alias in node.names:
            submodule = f"{origin}.{alias.name}"
            target = submodule if f"{in_package(origin) or origin}.{alias.name}" in MODULES else origin
            if target not in targets:
                targets.append(target)
        for target in targets:
            self._add(node, target)


def imports_of(module: str) -> list[Import]:
    collector = _Collector(module)
    collector.visit(ast.parse(MODULES[module].read_text(), filename=str(MODULES[module])))
    return collector.found


IMPORTS = [found for module in MODULES for found in imports_of(module)]


def ancestors(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def import_graph() -> dict[str, dict[str, Import]]:
    """module -> {module of src/ it imports: the first statement that does}.

    Importing ``src.a.b.c`` runs the packages ``src.a`` and ``src.a.b`` first: they are edges too, except the
    importing module's own packages (already being imported when its body runs).
    """
    graph: dict[str, dict[str, Import]] = {module: {} for module in MODULES}
    for found in IMPORTS:
        target = in_package(found.target)
        if target is None:
            continue
        own = set(ancestors(found.module))
        for name in [*ancestors(target), target]:
            if name in MODULES and name not in own and name != found.module:
                graph[found.module].setdefault(name, found)
    return graph


def cycles(graph: dict[str, dict[str, Import]]) -> list[list[str]]:
    """One cycle (a list of modules, the first repeated at the end) per strongly connected component of
    more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    found = []
    for component in components:  # a shortest way from the component's first module back to itself
        start, members = component[0], set(component)
        paths = {start: [start]}
        queue = [start]
        while queue:
            node = queue.pop(0)
            for nxt in sorted(graph[node]):
                if nxt == start:
                    found.append([*paths[node], start])
                    queue = []
                    break
                if nxt in members and nxt not in paths:
                    paths[nxt] = [*paths[node], nxt]
                    queue.append(nxt)
    return found


# -- (a) each module alone -----------------------------------------------------------------------------------
FORK_EACH = r"""
import importlib, json, os, sys, tempfile, traceback
for name in json.loads(sys.argv[1]):  # the libraries, so that each fork imports only the project's code
    try:
        importlib.import_module(name)
    except ImportError:  # an optional one: the modules that import it do so in their fork
        pass
for module in json.loads(sys.argv[2]):
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = os.fork()
        if pid == 0:  # the fork: nothing of the project loaded yet
            os.dup2(out.fileno(), 1)
            os.dup2(err.fileno(), 2)
            try:
                importlib.import_module(module)
                print("\n".join(sys.modules))
                status = 0
            except BaseException:
                traceback.print_exc()
                status = 1
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)
        status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        out.seek(0)
        err.seek(0)
        print(json.dumps([module, status, out.read().decode(errors="replace"), err.read().decode(errors="replace")]),
              flush=True)
"""
"""The program of :func:`imports_alone`: after ``import``-ing the libraries named in its first argument (a JSON
list), it takes each module of its second (a JSON list) in turn, forks, imports that module first thing in the
fork and prints, as a JSON line ``[module, exit status, output, errors]``, what the fork wrote: the names of the
modules then loaded, one a line, or the traceback."""


def libraries() -> list[str]:
    """The modules outside src/ and the standard library that src/ imports at module level (numpy, sklearn.base,
    hydra.core.plugins, ...): what every interpreter running the project loads whatever it imports."""
    names = {found.target for found in IMPORTS if found.function is None and in_package(found.target) is None}
    return sorted(name for name in names if name.split(".")[0] not in sys.stdlib_module_names)


def imports_alone(modules: frozenset[str]) -> dict[str, subprocess.CompletedProcess]:
    """module -> the outcome of ``import module`` first thing in a fork of an interpreter that has loaded the
    libraries (:func:`libraries`) and no module of src/ (one interpreter for all modules, :data:`FORK_EACH`,
    run from the checkout); its ``stdout`` lists the modules loaded once the import was done."""
    env = {key: value for key, value in background.environ().items() if key != "PYTHONPATH"}
    result = background.run([sys.executable, "-c", FORK_EACH, json.dumps(libraries()), json.dumps(sorted(modules))],
                            cwd=REPO, env=env, timeout=600)
    assert result.returncode == 0, f"the interpreter forking the imports failed:\n{result.stderr[-3000:]}"
    outcomes = {}
    for line in result.stdout.splitlines():
        module, status, stdout, stderr = json.loads(line)
        outcomes[module] = subprocess.CompletedProcess(["import", module], status, stdout, stderr)
    return outcomes


def selected(items) -> frozenset[str]:
    """The modules of the selected cases of test_module_imports_alone."""
    return frozenset(item.callspec.params["module"] for item in items
                     if getattr(item, "originalname", "") == "test_module_imports_alone")


def start_in_background(items):
    """Called by conftest.py once the session's tests are known: the imports of the selected modules start on
    the other core (tests/background.py)."""
    wanted = selected(items)
    background.submit(("imports alone", wanted), functools.partial(imports_alone, wanted))


@pytest.fixture(scope="module")
def imported_alone(request):
    """module -> the outcome of its import alone (:func:`imports_alone` of the selected cases' modules, started
    by :func:`start_in_background`, else run at the first case reached)."""
    wanted = selected(request.session.items) if request.session.items else frozenset(MODULES)
    return lambda module: background.result(("imports alone", wanted),
                                            functools.partial(imports_alone, wanted))[module]


@pytest.mark.integration
@pytest.mark.parametrize("module", MODULES)
def test_module_imports_alone(module, imported_alone):
    result = imported_alone(module)
    assert result.returncode == 0, f"importing {module} alone failed:\n{result.stderr[-3000:]}"
    assert module in result.stdout.split(), f"importing {module} alone did not load it"


def test_a_module_that_imports_only_after_another_fails_alone(tmp_path):
    """The forked imports tell an order-dependent import apart: a module taking a name from a module that is
    only half-initialized when imported first fails alone, and the same module imported after the other passes."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "a.py").write_text("from . import b\nVALUE = 1\n")
    (tmp_path / "pkg" / "b.py").write_text("from .a import VALUE\n")
    env = {key: value for key, value in background.environ().items() if key != "PYTHONPATH"}
    result = subprocess.run([sys.executable, "-c", FORK_EACH, json.dumps(["numpy"]), json.dumps(["pkg.a", "pkg.b"])],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    outcomes = {module: (status, err) for module, status, _, err in map(json.loads, result.stdout.splitlines())}
    assert outcomes["pkg.a"][0] != 0 and "ImportError" in outcomes["pkg.a"][1]
    assert outcomes["pkg.b"][0] == 0


# -- (b) the import graph ------------------------------------------------------------------------------------
def test_the_modules_are_found():
    assert {"src", "src.run", "src.methods", "src.methods.core.estimator", "src.data.__main__"} <= set(MODULES)
    graph = import_graph()
    assert "src.methods.core.estimator" in graph["src.methods.nmf"]  # relative imports are resolved


def test_the_import_graph_has_no_cycle():
    graph = import_graph()
    found = cycles(graph)
    lines = []
    for cycle in found:
        lines.append(" -> ".join(cycle))
        lines += [f"    {graph[a][b].where()}" for a, b in zip(cycle, cycle[1:])]
    assert not found, "import cycles in src/ (each edge: the statement that makes it):\n" + "\n".join(lines)


def test_cycle_search_reports_a_cycle():
    toy = {"a": {"b": None}, "b": {"c": None}, "c": {"a": None, "d": None}, "d": {}, "e": {"e2": None}, "e2": {}}
    assert cycles(toy) == [["a", "b", "c", "a"]]


def test_no_import_inside_a_function_but_the_declared_deferred_ones():
    inside = [found for found in IMPORTS if found.function is not None]
    undeclared = [found.where() for found in inside if (found.module, found.target) not in DEFERRED]
    assert not undeclared, ("imports inside functions (move them to the top of the module, or declare a heavy "
                            "one in DEFERRED with its reason):\n" + "\n".join(undeclared))
    stale = sorted(set(DEFERRED) - {(found.module, found.target) for found in inside})
    assert not stale, f"DEFERRED entries no longer found (remove them): {stale}"


# -- (c) relative imports ------------------------------------------------------------------------------------
def test_the_package_imports_itself_relatively():
    absolute = [found.where() for found in IMPORTS if not found.relative and in_package(found.target)]
    assert not absolute, ("absolute imports of the package (installed it is repro_mf, not src: use a relative "
                          "import):\n" + "\n".join(absolute))


def test_nothing_under_src_imports_tools():
    from_tools = [found.where() for found in IMPORTS if found.target.split(".")[0] == "tools"]
    assert not from_tools, "src/ imports tools/, which is not installed:\n" + "\n".join(from_tools)


# -- (d) the rooms' layers -------------------------------------------------------------------------------------
def layer_of(module: str) -> int:
    """The index in :data:`LAYERS` of ``module``'s layer (its longest listed prefix)."""
    best, rank = -1, None
    for index, (_, members) in enumerate(LAYERS):
        for member in members:
            if (module == member or module.startswith(member + ".")) and len(member) > best:
                best, rank = len(member), index
    assert rank is not None, f"{module} is in no layer of LAYERS: add it (or its package)"
    return rank


def test_every_module_has_a_layer():
    assert {module: layer_of(module) for module in MODULES}


def test_no_import_goes_up_a_layer_but_the_declared_ones():
    upward = []
    for found in IMPORTS:
        target = in_package(found.target)
        if target is None or target not in MODULES or (found.module, target) in UPWARD:
            continue
        if layer_of(target) > layer_of(found.module):
            upward.append(f"{found.where()}  ({LAYERS[layer_of(found.module)][0]} imports "
                          f"{LAYERS[layer_of(target)][0]})")
    assert not upward, "imports up a layer (move the code down, or declare the arrow in UPWARD):\n" + "\n".join(upward)
    stale = sorted(set(UPWARD) - {(found.module, in_package(found.target)) for found in IMPORTS})
    assert not stale, f"UPWARD entries no longer found (remove them): {stale}"


def test_the_layer_check_catches_an_arrow_up():
    assert layer_of("src.running.pool.workers") < layer_of("src.reproduction.homes") < layer_of("src.presentation.tables")
    assert layer_of("src.reproduction.runner") < layer_of("src.presentation.report") < layer_of("src.run")
    assert layer_of("src.methods.core.loop") == layer_of("src.protocol.cell") < layer_of("src.running.cells")


"""Every command of the fenced shell blocks of README.md and of the manual's pages (docs/*.md) runs as typed.

The commands are read from :data:`DOCUMENTS`, README.md and every Markdown page of ``docs/`` (not the pages
the build writes into ``docs/_generated/``): fenced blocks marked ``bash``, ``sh``, ``shell`` or ``console``
(in a ``console`` block only the lines after a ``$`` prompt; in an unmarked block only the lines that start
with one of :data:`COMMAND_WORDS`; a MyST directive's fence, e.g. ``{toctree}``, holds no shell), backslash
continuations joined, ``#`` comments and blank lines left out. Each command is one test case, its text the
test id (a command shown in two documents is one case). ``python`` is the interpreter running the tests;
``python -m src...`` runs from a temporary directory with the checkout on PYTHONPATH (as it runs from the
checkout), ``repro-mf`` is the console script beside that interpreter. ``/path/to/datasets`` stands for the
data mirror (the ``mirror`` fixture, also in ``REPRO_DATA_MIRROR``).

What "runs as typed" means, per kind of command (cheap, no computation):

``make TARGET [VAR=value ...]``
    ``make -n TARGET [VAR=value ...]`` from the checkout succeeds: the target exists and its recipe expands;
    each VAR's value appears in the printed recipe (the Makefile passes it on). A recipe line that runs a
    module of the checkout offering ``--dry-run`` (src.reproduce, src.explain) then runs with it, from a
    temporary directory: it exits with status 0 and every ``python -m MODULE`` it prints names a module
    that exists (what the target would launch). Nothing else of the recipe is run (``make`` itself would
    rebuild .venv when pyproject.toml or the lock changed).
``python -m src.run ...``, ``repro-mf ...``
    Run as typed with ``dry_run=true`` appended (the run checks everything and loads the data, computes
    nothing), ``paths.data_dir`` pointed at a data directory shared by the session (under a temporary
    directory, filled from the mirror), and ``hydra.run.dir`` / ``hydra.sweep.dir`` into the case's
    temporary directory unless the command sets them (relative ones land there anyway); exit status 0.
    Files a command names with ``dataset.path=`` are written first (small labelled data sets, .npz or .csv
    with the command's delimiter). A command that launches on a cluster (``hydra/launcher=submitit_slurm``)
    is composed only: ``--cfg=hydra`` instead of ``-m`` (Hydra allows one of them), which checks the
    overrides against the launcher's config without submitting anything.
``python -m src.data [NAME ...]``, ``python -m repro_mf.data ...``
    Run as typed from the session's directory (its ``data/`` is the session's data directory). With no
    name the module lists the data sets and exits with status 2 (src/data/__main__.py); a data set that
    takes long to build (``caltech101``, a minute of SIFT features) is marked ``slow``.
``python -m src.presentation.report <sweep directory>``
    The placeholder ``outputs/multirun/<date>`` is a real sweep made for it (KMeans on Yale, one k, one
    trial); the report must be written beside its results.
``python -m tools...``
    Run as typed from the checkout (tools/ is not installed).
``python -m src.reproduce ...``, ``python -m src.explain ...``, ``python -m src.benchmark ...``
    Run as typed with ``--dry-run`` added (unless it is there), from a temporary directory: every job is
    composed and checked, nothing is computed; exit status 0.
``python -m src.cluster FILE ...``
    Run as typed with ``--dry-run`` added, from a temporary directory holding a small partially labelled
    ``FILE`` of the command's format (its labels under the key ``--set dataset.y_key=...`` names): the file is
    read and checked, the candidates and fits counted, nothing fitted or written; exit status 0.
``eval "$(repro-mf -sc install=bash)"``; ``repro-mf method=n<Tab>``
    The eval runs in bash; the Tab completion asks Hydra's completion (``repro-mf -sc query=bash`` with
    ``COMP_LINE``) and must offer what the comment beside it (in the document that shows it) promises
    after ``->``.
``pip install``, ``cd``, ``export``
    Skipped: they set up an environment (tests/test_install.py installs a wheel in another directory; the
    tests set ``REPRO_DATA_MIRROR`` themselves).

Each case runs from an empty directory of its own. The cases start on the other core as soon as the
session's tests are known (:func:`start_in_background`, tests/background.py): a case runs and checks its
command there (:func:`check`), and the test raises what the check raised; a case not started yet when the test
is reached runs in this process. Two cases that start the same process (``make benchmark``'s recipe and
``python -m src.benchmark --dry-run``; the ``--help`` asked of a module by each ``make`` target that runs it)
share one run of it (:func:`once`): composing every job of every paper for a dry run takes a minute. A command
whose whole path another kept case or test already runs is marked ``slow`` (:data:`REPEATED`, each with the
test that covers it); ``make test-slow`` runs it.

A command of any other kind fails this test: say here how to run it. No fenced command is shown
failing on purpose today. ``dry_run=true`` is a key of the top-level config: without it Hydra stops with
"Could not override 'dry_run'", and the ``src.run`` / ``repro-mf`` cases fail.
"""

import functools
import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import background
import numpy as np
import pytest
import scipy.io

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
#: The documents whose commands are checked: the README and the manual's own pages (docs/*.md).
DOCUMENTS = [README, *sorted((REPO / "docs").glob("*.md"))]
BIN = Path(sys.executable).parent
SHELL_BLOCKS = {"bash", "sh", "shell", "console"}
COMMAND_WORDS = {"make", "python", "repro-mf", "pip", "cd", "export", "eval"}  # commands in an unmarked block
REQUIRED = ["python -m src.run method=ccf dataset=yale"]  # run even if the documents drop it
PLACEHOLDER_MIRROR = "/path/to/datasets"
SLOW_DATA = {"caltech101", "caltech101_rgb", "mnist"}  # python -m src.data NAME: builds for a minute or more
TIMEOUT = 900

pytestmark = pytest.mark.integration


# -- reading the documents ---------------------------------------------------------------------------------
def strip_comment(line: str) -> str:
    """The line without a trailing ``# comment`` (a ``#`` at the start of a word, outside quotes)."""
    quote = None
    for i, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def fenced_commands(text: str) -> list[str]:
    """The commands of the fenced shell blocks of a Markdown text, in order, each on one line."""
    commands, language, pending = [], None, ""
    for raw in text.splitlines():
        fence = re.match(r"^\s*```\s*(\S*)", raw)  # the info string: a language, or a MyST {directive}
        if fence:
            language = (fence.group(1) or "plain") if language is None else None
            pending = ""
            continue
        if language is None or language not in SHELL_BLOCKS | {"plain"}:
            continue
        line = raw.strip()
        if language == "plain" and not pending and line.split(" ")[0] not in COMMAND_WORDS:
            continue  # an unmarked block: only lines that start with a command
        if language == "console" and not pending:
            if not line.startswith("$"):
                continue  # output
            line = line[1:].strip()
        line = strip_comment(line)
        if line.endswith("\\"):
            pending += line[:-1].strip() + " "
            continue
        line = (pending + line).strip()
        pending = ""
        if line:
            commands.append(line)
    return commands


def documents_text() -> str:
    """README.md and the manual's pages, one after the other."""
    return "\n".join(path.read_text() for path in DOCUMENTS)


def readme_commands() -> list[str]:
    """The commands of every document, each once, in the order the documents show them, then REQUIRED."""
    commands = [command for path in DOCUMENTS for command in fenced_commands(path.read_text())]
    return list(dict.fromkeys([*commands, *(c for c in REQUIRED if c not in commands)]))


# -- how each kind runs --------------------------------------------------------------------------------------
SKIPPED = {
    "pip": "installs the project: tests/test_install.py builds a wheel and installs it in another directory",
    "cd": "the commands run from a temporary directory already",
    "export": "sets the data mirror: the tests set REPRO_DATA_MIRROR themselves (the mirror fixture)",
}


def kind(argv: list[str]) -> str:
    """The kind of a command (see the module docstring)."""
    if argv[0] in SKIPPED:
        return "skip"
    if argv[0] == "make":
        return "make"
    if argv[0] == "eval":
        return "eval"
    if any("<Tab>" in word for word in argv):
        return "completion"
    if argv[0] == "repro-mf" or argv[:3] in (["python", "-m", "src.run"], ["python", "-m", "repro_mf.run"]):
        return "run"
    if argv[:2] == ["python", "-m"] and argv[2] in ("src.data", "repro_mf.data"):
        return "data"
    if argv[:3] == ["python", "-m", "src.presentation.report"]:
        return "report"
    if argv[:2] == ["python", "-m"] and argv[2].startswith("tools."):
        return "tools"
    if argv[:3] in (["python", "-m", "src.reproduce"], ["python", "-m", "src.explain"],
                    ["python", "-m", "src.benchmark"]):
        return "pool"
    if argv[:3] == ["python", "-m", "src.cluster"]:
        return "cluster"
    return "unknown"


#: Commands whose path, end to end, a kept case or test runs already (each named here), marked ``slow``: the
#: dry runs of the pool compose every job of their papers with Hydra, a minute each.
REPEATED = {
    # the same pattern rule (reproduce-%) and the same `python -m src.reproduce cnmf --dry-run`, composing the same
    # 47 jobs, as the kept case test_readme_command_runs_as_typed[make reproduce-cnmf REPRODUCE_ARGS="--overrides
    # hydra/launcher=submitit_slurm hydra.launcher.partition=cpu hydra.launcher.timeout_min=240"]
    "make reproduce-cnmf": "test_readme_command_runs_as_typed[make reproduce-cnmf REPRODUCE_ARGS=...]",
    # `python -m src.reproduce all --dry-run`: its main() is run with the same arguments, its counts checked, by
    # the kept tests/test_reproduce.py::test_a_dry_run_counts_every_papers_cells; the pattern rule reproduce-% by
    # the kept case test_readme_command_runs_as_typed[make reproduce-cnmf REPRODUCE_ARGS=...]
    "make reproduce-all": "tests/test_reproduce.py::test_a_dry_run_counts_every_papers_cells",
    # the same pattern rule (explain-%) and `python -m src.explain all --dry-run`, which composes lcf's readings
    # among all the papers', in the kept case test_readme_command_runs_as_typed[make explain-all]
    "make explain-lcf": "test_readme_command_runs_as_typed[make explain-all]",
    # a multirun of the same two methods on the same two data sets into a given sweep directory, computed, and its
    # tables checked
    "python -m src.run -m method=kmeans,nmf dataset=orl,yale hydra.sweep.dir=outputs/multirun/my_sweep":
        "tests/test_run.py::test_multirun_in_parallel_then_one_table_per_dataset",
    # the report of a real multirun's directory, written beside its results: the same report.main on the same kind
    # of sweep (the placeholder's sweep is made for this case alone)
    "python -m src.presentation.report outputs/multirun/<date>":
        "tests/test_run.py::test_multirun_in_parallel_then_one_table_per_dataset",
    # a multirun over the same two relative files (.npz and .csv), computed, each job's file and rows checked
    "python -m src.run -m dataset=file dataset.path=a.npz,b.csv method=kmeans,nmf 'protocol.ks=[2,3]'":
        "tests/data/test_user_file.py::test_a_sweep_over_two_relative_files",
    # a multirun of NMF and CNMF under the CNMF paper's protocol (on Yale), computed, killed and resumed; ORL
    # loaded and checked by the dry multirun of the next entry's test
    "python -m src.run -m method=nmf,cnmf dataset=orl protocol=cnmf":
        "tests/test_resume.py::test_sigkill_then_two_concurrent_resumes_give_the_uninterrupted_results",
    # a dry multirun of methods on ORL and Yale with the same launcher, every job checked (its data loaded) and
    # its cells counted; NMF-KL's parameters are checked by its unit tests
    "python -m src.run -m method=kmeans,nmf,nmf_kl dataset=orl,yale":
        "tests/test_run.py::test_a_dry_multirun_checks_every_job_and_computes_nothing",
}


def case(command: str):
    argv = shlex.split(command)
    what = kind(argv)
    marks = [pytest.mark.skip(reason=SKIPPED[argv[0]])] if what == "skip" else []
    if what == "data" and SLOW_DATA & set(argv[3:]):
        marks.append(pytest.mark.slow)
    if command in REPEATED:
        marks.append(pytest.mark.slow)
    return pytest.param(command, marks=marks, id=command)


CASES = [case(command) for command in readme_commands()]


def environment(mirror: Path, base: dict | None = None) -> dict:
    """The environment of a command: ``base`` (default: this process's) without Hydra's variables, this
    interpreter's directory first on PATH, the checkout on PYTHONPATH, the mirror."""
    base = os.environ if base is None else base
    env = {key: value for key, value in base.items() if not key.startswith("HYDRA_")}
    env.update(PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}", PYTHONPATH=str(REPO), REPRO_DATA_MIRROR=str(mirror),
               HYDRA_FULL_ERROR="0")
    return env


def executable(argv: list[str], mirror: Path) -> list[str]:
    """argv with ``python`` as this interpreter, ``repro-mf`` as its console script, the placeholder mirror."""
    argv = [arg.replace(PLACEHOLDER_MIRROR, str(mirror)) for arg in argv]
    if argv[0] == "python":
        return [sys.executable, *argv[1:]]
    if argv[0] == "repro-mf":
        return [str(BIN / "repro-mf"), *argv[1:]]
    return argv


def run(argv: list[str], cwd: Path, mirror: Path, **extra) -> subprocess.CompletedProcess:
    """``argv`` run from ``cwd``, with :func:`environment` (and ``extra``) over the environment the session
    started with: the cases run in the background too, while other tests change this process's environment
    (tests/background.py, which kills the process if the session ends first)."""
    env = {**environment(mirror, background.environ()), **extra}
    return background.run(argv, cwd=cwd, env=env, timeout=TIMEOUT)


def failure(result: subprocess.CompletedProcess) -> str:
    return f"exit status {result.returncode}\n--- stdout\n{result.stdout[-3000:]}\n--- stderr\n{result.stderr[-3000:]}"


def given(argv: list[str], key: str) -> str | None:
    """The value of override ``key`` on a Hydra command line (the last one), else None."""
    values = [arg.partition("=")[2] for arg in argv if arg.partition("=")[0].lstrip("+~") == key]
    return values[-1] if values else None


def pool_dry_run(argv: list[str]) -> list[str]:
    """A pool command (src.reproduce, src.explain, src.benchmark) with ``--dry-run`` added unless it is there."""
    return [*argv, *([] if "--dry-run" in argv else ["--dry-run"])]


def write_data_files(argv: list[str], where: Path) -> None:
    """Small labelled data sets for the files named by ``dataset.path`` (4 classes of 8 samples, 10 features)."""
    paths = given(argv, "dataset.path")
    if not paths:
        return
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(4), 8)
    X = rng.random((32, 10)) + y[:, None] * 0.5
    delimiter = (given(argv, "dataset.delimiter") or ",").strip("'\"")
    for name in paths.split(","):
        path = where / name.strip("'\"")
        if path.suffix == ".npz":
            np.savez(path, X=X, y=y)
        elif path.suffix == ".csv":
            np.savetxt(path, np.column_stack([X, y]), delimiter=delimiter, fmt="%.6g")
        else:
            raise AssertionError(f"no sample data set for {path.name}: add its format to write_data_files")


def session_directory() -> Path:
    """The session's working directory for the data commands (made at first use); its data/ is every run's
    paths.data_dir."""
    def make() -> Path:
        root = background.directory("readme-session")
        (root / "data").mkdir()
        return root

    return background.result(("readme", "session directory"), make)


def once(argv: list[str], mirror: Path) -> tuple[subprocess.CompletedProcess, Path]:
    """The result of ``argv`` run from an empty directory of its own, and that directory; the same ``argv`` asked
    again (by another case) is not run again, and one started in the background is waited for. For the
    processes two cases start alike: a module's ``--help``, a dry run of the pool (see the module docstring)."""
    def fresh():
        where = background.directory("readme")
        return run(argv, where, mirror), where

    return background.result(("readme", tuple(argv), str(mirror)), fresh)


def dry_runs(argv: list[str], mirror: Path) -> list[tuple[list[str], subprocess.CompletedProcess, Path]]:
    """The dry runs a ``make`` case starts for its recipe (each ``python -m`` line of a module of the checkout
    that offers ``--dry-run``), after ``make -n`` and each module's ``--help``: ``(recipe line, result,
    directory)``."""
    result = run(["make", "-n", *argv[1:]], REPO, mirror)
    assert result.returncode == 0, failure(result)
    found = []
    for line in result.stdout.splitlines():
        words = shlex.split(line)
        if len(words) < 3 or not words[0].endswith("python") or words[1] != "-m" or not module_exists(words[2]):
            continue
        if not words[2].startswith(("src.", "tools.")):
            continue
        if "--dry-run" not in once([sys.executable, "-m", words[2], "--help"], mirror)[0].stdout:
            continue
        found.append((words, *once([sys.executable, *words[1:], "--dry-run"], mirror)))
    return found


def start_in_background(items):
    """Called by conftest.py once the session's tests are known: the selected cases (:func:`check`) start on
    the other core, in their order (tests/background.py); a case this process reaches before the background
    does runs here, so that two run at a time."""
    if not os.environ.get("REPRO_DATA_MIRROR") or not Path(os.environ["REPRO_DATA_MIRROR"]).is_dir():
        return  # no mirror: the cases skip (the mirror fixture, which conftest.py points at this variable)
    mirror = Path(os.environ["REPRO_DATA_MIRROR"])
    for item in items:
        command = item.callspec.params.get("command") if hasattr(item, "callspec") else None
        if command is not None and not item.get_closest_marker("skip"):
            background.submit(("case", command, str(mirror)), functools.partial(check, command, mirror))


def module_exists(name: str) -> bool:
    """Whether ``python -m name`` finds a module: src.* and repro_mf.* in the checkout, tools.* too."""
    parts = name.split(".")
    if parts[0] in ("src", "repro_mf", "tools"):
        base = REPO.joinpath("src" if parts[0] == "repro_mf" else parts[0], *parts[1:])
        return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # e.g. "__main__.run": __main__ is not a package
        return False


def run_make(argv, mirror):
    result = run(["make", "-n", *argv[1:]], REPO, mirror)
    assert result.returncode == 0, failure(result)
    assert "No rule to make target" not in result.stderr and result.stdout.strip()
    for assignment in (arg for arg in argv[1:] if "=" in arg):
        value = assignment.partition("=")[2]
        assert value in result.stdout, f"{assignment.partition('=')[0]} is not passed on by the recipe"
    for words, dry, where in dry_runs(argv, mirror):
        assert dry.returncode == 0, failure(dry)
        assert not list(where.rglob("results.csv")), "a dry run computed cells"
        launched = [shlex.split(printed)[2] for printed in dry.stdout.splitlines()  # src.explain's sweeps
                    if printed.startswith("python -m ") and len(printed.split()) > 2]
        missing = sorted({module for module in launched if not module_exists(module)})
        assert not missing, f"{shlex.join(words)} --dry-run would launch modules that do not exist: {missing}"


def run_hydra(argv, mirror, where, session):
    write_data_files(argv, where)
    program = 1 if argv[0] == "repro-mf" else 3  # repro-mf | python -m src.run
    argv = executable(argv, mirror)
    if given(argv, "hydra/launcher") == "submitit_slurm":  # a cluster launch: composed, not submitted
        argv = argv[:program] + [arg for arg in argv[program:] if arg not in ("-m", "--multirun")] + ["--cfg=hydra"]
    else:
        argv += ["dry_run=true", f"paths.data_dir={session / 'data'}"]
        argv += [f"{key}={where / folder}" for key, folder in (("hydra.run.dir", "run"),
                                                               ("hydra.sweep.dir", "multirun"))
                 if given(argv, key) is None]
    result = run(argv, where, mirror)
    assert result.returncode == 0, failure(result)
    assert not list(where.rglob("results.csv")), "a dry run computed cells"


def run_data(argv, mirror, session):
    result = run(executable(argv, mirror), session, mirror)
    names = [arg for arg in argv[3:] if not arg.startswith("-")]
    if names or "--help" in argv or "--list" in argv:
        assert result.returncode == 0, failure(result)
    else:  # no name: the data sets that can be fetched are listed, exit status 2 (src/data/__main__.py)
        assert result.returncode == 2, failure(result)
        assert "yale" in result.stdout and "caltech101" in result.stdout, failure(result)


def run_report(argv, mirror, where, session):
    sweep = where / "outputs" / "multirun" / "sweep"
    made = run([sys.executable, "-m", "src.run", "-m", "method=kmeans", "dataset=yale", "protocol.ks=[2]",
                "protocol.n_trials=1", f"paths.data_dir={session / 'data'}", f"hydra.sweep.dir={sweep}"],
               where, mirror)
    assert made.returncode == 0, "the sweep the report reads failed: " + failure(made)
    argv = [str(sweep.relative_to(where)) if re.search(r"<\w+>", arg) else arg for arg in argv]
    before = {path for path in sweep.rglob("*") if path.is_file()}
    result = run(executable(argv, mirror), where, mirror)
    assert result.returncode == 0, failure(result)
    assert {path for path in sweep.rglob("*") if path.is_file()} - before, "the report wrote nothing"


def partially_labelled(argv: list[str], where: Path) -> None:
    """The file a ``src.cluster`` command names, written in ``where``: three classes of 12 samples, a third of
    the labels known (-1 for the others), in the command's format, the labels under its ``dataset.y_key``."""
    rng = np.random.default_rng(0)
    y = np.repeat([1, 2, 3], 12)
    X = np.abs(rng.random((3, 6))[y - 1] + rng.normal(0, 0.1, (36, 6)))
    told = np.where(np.arange(36) % 3 == 0, y, -1)
    key = next((arg.split("=", 1)[1] for arg in argv if arg.startswith("dataset.y_key=")), "y")
    path = where / argv[3]
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".csv":
        np.savetxt(path, np.column_stack([X, told]), delimiter=",")
    elif path.suffix == ".mat":
        scipy.io.savemat(path, {"X": X, key: told.reshape(-1, 1).astype(float)})
    else:
        np.savez(path, X=X, **{key: told})


def run_completion(argv, mirror, where):
    line = " ".join(argv).split("<Tab>")[0]
    result = run(executable([argv[0], "-sc", "query=bash"], mirror), where, mirror, COMP_LINE=line,
                 COMP_POINT=str(len(line)))
    assert result.returncode == 0, failure(result)
    comment = next(raw for raw in documents_text().splitlines() if raw.strip().startswith(" ".join(argv)))
    promised = comment.partition("->")[2].replace("...", "").split()
    assert promised and set(promised) <= set(result.stdout.split()), failure(result)


def check(command: str, mirror: Path) -> None:
    """Run ``command`` as its kind says (module docstring) from an empty directory of its own, and check it."""
    argv = shlex.split(command)
    what = kind(argv)
    where = background.directory("case")
    if what == "make":
        run_make(argv, mirror)
    elif what == "run":
        run_hydra(argv, mirror, where, session_directory())
    elif what == "data":
        run_data(argv, mirror, session_directory())
    elif what == "report":
        run_report(argv, mirror, where, session_directory())
    elif what == "tools":
        result = run(executable(argv, mirror), REPO, mirror)
        assert result.returncode == 0, failure(result)
    elif what == "pool":
        result, where = once(executable(pool_dry_run(argv), mirror), mirror)
        assert result.returncode == 0, failure(result)
        assert not list(where.rglob("results.csv")), "a dry run computed cells"
    elif what == "cluster":
        partially_labelled(argv, where)
        before = set(where.rglob("*"))
        result = run(executable([*argv, "--dry-run"] if "--dry-run" not in argv else argv, mirror), where, mirror)
        assert result.returncode == 0, failure(result)
        assert set(where.rglob("*")) == before, "a dry run wrote something"
    elif what == "eval":
        result = run(["bash", "-c", command], where, mirror)
        assert result.returncode == 0 and not result.stderr.strip(), failure(result)
    elif what == "completion":
        run_completion(argv, mirror, where)
    else:
        pytest.fail(f"a command of a kind this test does not run: {command!r} (add it to the docstring)")


@pytest.mark.parametrize("command", CASES)
def test_readme_command_runs_as_typed(command, mirror):
    """:func:`check`, started in the background when the session's tests were known, else run here."""
    background.result(("case", command, str(mirror)), functools.partial(check, command, mirror))


def test_the_documents_have_commands_of_every_kind():
    kinds = {kind(shlex.split(command)) for command in readme_commands()}
    assert {"make", "run", "data"} <= kinds and "unknown" not in kinds


def test_each_repeated_command_is_shown_and_its_covering_test_exists():
    """A :data:`REPEATED` command is one the documents show, and the test named beside it is defined (a kept
    case of this module, or a test function of the file named), so that no command leaves ``make test``
    uncovered when either is renamed."""
    commands = set(readme_commands())
    assert set(REPEATED) <= commands, set(REPEATED) - commands
    for cover in REPEATED.values():
        name, _, case_id = cover.partition("[")
        if name == "test_readme_command_runs_as_typed":
            assert any(command.startswith(case_id.rstrip("]").removesuffix("...")) and command not in REPEATED
                       for command in commands), cover
        else:
            path, _, function = name.partition("::")
            assert f"def {function}(" in (REPO / path).read_text(), cover


def test_the_manual_pages_are_read():
    """The pages of docs/ are among the documents, and their commands among the cases."""
    pages = [path for path in DOCUMENTS if path.parent.name == "docs"]
    assert REPO / "docs" / "running.md" in pages and not any("_generated" in path.parts for path in DOCUMENTS)
    from_pages = {command for path in pages for command in fenced_commands(path.read_text())}
    assert "python -m src.data --list" in from_pages and 'eval "$(repro-mf -sc install=bash)"' in from_pages
    assert from_pages <= set(readme_commands())


def test_reading_fenced_blocks():
    text = "\n".join(["```bash", "make a   # comment", "python -m x \\", "    'b=[1,2]' # c", "```",
                      "```python", "print(1)  # not shell", "```", "```console", "$ repro-mf x=1",
                      "output line", "```", "```", "some text", "cd /tmp", "```",
                      "```{include} ../CHANGELOG.md", ":start-line: 2", "```", "make outside-a-block",
                      "```{toctree}", "install", "```"])
    assert fenced_commands(text) == ["make a", "python -m x 'b=[1,2]'", "repro-mf x=1", "cd /tmp"]
    assert strip_comment("a '#not' b # c") == "a '#not' b"

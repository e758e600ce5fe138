"""A real install: the packaging in pyproject.toml, where the configs are found (src/config_dir.py), and a wheel
installed outside the checkout, as the package ``repro_mf``, running ``python -m repro_mf.run``, ``python -m
repro_mf.data`` and ``repro-mf`` from another directory."""

import importlib
import json
import os
import shutil
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
import yaml

from src import config_dir

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]


# --- packaging (fast) -------------------------------------------------------------------------------------

def test_every_subpackage_the_configs_and_the_paper_homes_are_packaged():
    found = {".".join(("repro_mf", *path.parent.relative_to(REPO / "src").parts))
             for path in (REPO / "src").rglob("__init__.py") if "__pycache__" not in path.parts}
    assert set(SETUPTOOLS["packages"]) == found | {"repro_mf.conf", "repro_mf.papers"}
    assert SETUPTOOLS["package-dir"] == {"repro_mf": "src", "repro_mf.conf": "conf", "repro_mf.papers": "papers"}


@pytest.mark.parametrize("folder", ["conf", "papers"])
def test_every_file_of_conf_and_papers_is_package_data(folder):
    patterns = SETUPTOOLS["package-data"][f"repro_mf.{folder}"]
    shipped = {path for pattern in patterns for path in (REPO / folder).glob(pattern)}
    assert {path for path in (REPO / folder).rglob("*") if path.is_file()} == shipped


def test_the_console_script_is_the_command_line_of_src_run():
    module, _, function = PYPROJECT["project"]["scripts"]["repro-mf"].partition(":")
    assert module == "repro_mf.run"
    assert callable(getattr(importlib.import_module(module.replace("repro_mf", "src", 1)), function))


# --- where the configs are (fast) -------------------------------------------------------------------------

def test_a_checkout_uses_its_top_level_conf_and_papers():
    assert config_dir.CONF_DIR == REPO / "conf"
    assert (config_dir.CONF_DIR / "config.yaml").is_file()
    assert config_dir.PAPERS_DIR == REPO / "papers"
    assert (config_dir.PAPERS_DIR / "cnmf" / "reproduce.yaml").is_file()


def package_in(root: Path, checkout: bool) -> Path:
    package = root / "src"
    (package / "conf").mkdir(parents=True)
    (root / "conf").mkdir()
    (root / "conf" / "config.yaml").write_text("seed: 0\n")
    if checkout:
        (root / "pyproject.toml").write_text("[project]\n")
    return package


def test_the_checkout_conf_beside_the_package_wins(tmp_path):
    package = package_in(tmp_path, checkout=True)
    assert config_dir.find_conf_dir(package) == tmp_path / "conf"
    assert config_dir.find_papers_dir(package) == tmp_path / "papers"


def test_an_installed_package_uses_its_own_conf(tmp_path):
    # site-packages may hold an unrelated top-level conf/: without pyproject.toml beside it, it is not ours
    package = package_in(tmp_path, checkout=False)
    assert config_dir.find_conf_dir(package) == tmp_path / "src" / "conf"
    assert config_dir.find_papers_dir(package) == tmp_path / "src" / "papers"


# --- a wheel installed outside the checkout (integration) -------------------------------------------------

def builds_wheels_offline() -> bool:
    """Whether this environment's setuptools builds the wheel by itself, so that the build needs no package
    index: 77 or later, which reads the SPDX ``license`` of pyproject.toml (and needs no ``wheel`` package)."""
    try:
        major, minor = (int(part) for part in metadata.version("setuptools").split(".")[:2])
    except (metadata.PackageNotFoundError, ValueError):
        return False
    return (major, minor) >= (77, 0)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A wheel built from a copy of the checkout (the checkout gets no build/), installed with ``--target``."""
    root = tmp_path_factory.mktemp("install")
    source = root / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):  # LICENSE: pyproject.toml's license-files
        shutil.copy2(REPO / name, source / name)
    for name in ("src", "conf", "papers"):
        shutil.copytree(REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    isolation = ["--no-build-isolation"] if builds_wheels_offline() else []  # else pip fetches setuptools
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip[:3], "wheel", *pip[3:], str(source), "--no-deps", *isolation, "-w", str(root / "dist")],
                   cwd=root, check=True, timeout=300)
    wheel, = (root / "dist").glob("repro_mf-*.whl")
    site = root / "site"
    subprocess.run([*pip[:3], "install", *pip[3:], "--no-deps", "--no-index", "--target", str(site), str(wheel)],
                   cwd=root, check=True, timeout=120)
    elsewhere = root / "elsewhere"
    elsewhere.mkdir()
    return site, elsewhere


def run_installed(installed, *args, **env):
    """``args`` run from a directory outside the checkout, with only the install target on PYTHONPATH."""
    site, elsewhere = installed
    environment = {**os.environ, "PYTHONPATH": str(site), **env}
    return subprocess.run(list(args), cwd=elsewhere, env=environment, capture_output=True, text=True, timeout=120)


@pytest.mark.integration  # builds and installs a wheel: ~10 s
def test_the_installed_copy_is_imported_with_its_own_configs(installed):
    site, _ = installed
    probe = ("import json, sys, repro_mf, repro_mf.config_dir as c; "
             "print(json.dumps([repro_mf.__file__, str(c.CONF_DIR), str(c.PAPERS_DIR), sys.path, "
             "__import__('importlib.util').util.find_spec('src') is None]))")
    done = run_installed(installed, sys.executable, "-c", probe)
    assert done.returncode == 0, done.stderr
    module, conf, homes, path, no_src = json.loads(done.stdout)
    assert Path(module).resolve().is_relative_to(site.resolve())
    assert Path(conf).resolve() == (site / "repro_mf" / "conf").resolve() and (Path(conf) / "config.yaml").is_file()
    assert (Path(conf) / "experiment" / "benchmark" / "labels10.yaml").is_file()
    # the paper homes ship too, every file of papers/ (the reproduce and benchmark commands read them)
    assert Path(homes).resolve() == (site / "repro_mf" / "papers").resolve()
    ours = {p.relative_to(REPO / "papers") for p in (REPO / "papers").rglob("*") if p.is_file()}
    assert {p.relative_to(homes) for p in Path(homes).rglob("*") if p.is_file()} == ours
    assert no_src and not (site / "src").exists()  # no top-level `src` for another project to overwrite
    assert not any(entry and Path(entry).resolve() in (REPO, REPO / "src") for entry in path)


@pytest.mark.integration  # one tiny run of the installed copy: ~5 s
def test_the_installed_copy_runs_from_another_directory(installed, mirror):
    site, elsewhere = installed
    run, cache = site.parent / "run", site.parent / "cache"
    done = run_installed(installed, sys.executable, "-m", "repro_mf.run", "method=nmf", "dataset=yale",
                         "protocol.ks=[2]", "protocol.n_trials=1", "method.params.stopping=fixed",
                         "method.params.n_starts=1", "method.params.max_iter=20", f"paths.mirror={mirror}",
                         f"hydra.run.dir={run}", XDG_CACHE_HOME=str(cache))
    assert done.returncode == 0, done.stderr
    assert len((run / "results.csv").read_text().splitlines()) == 2  # the header and the one cell
    sources = yaml.safe_load((run / ".hydra" / "hydra.yaml").read_text())["hydra"]["runtime"]["config_sources"]
    main, = (source["path"] for source in sources if source["provider"] == "main")
    assert Path(main).resolve() == (site / "repro_mf" / "conf").resolve()
    # installed, paths.data_dir is the user's cache (pooch.os_cache: $XDG_CACHE_HOME/repro-mf on Linux), not ./data
    if sys.platform.startswith("linux"):
        assert (cache / "repro-mf" / "raw" / "Yale_32x32.mat").is_file()
    assert not (elsewhere / "data").exists()


@pytest.mark.integration
def test_the_installed_data_command_helps_and_refuses_a_misspelled_name(installed):
    done = run_installed(installed, sys.executable, "-m", "repro_mf.data", "--help")
    assert done.returncode == 0 and "yale" in done.stdout and "usage" in done.stdout
    done = run_installed(installed, sys.executable, "-m", "repro_mf.data", "yael")
    assert done.returncode == 2 and not done.stdout
    assert done.stderr.strip().count("\n") == 0 and "did you mean 'yale'" in done.stderr
    done = run_installed(installed, sys.executable, "-m", "repro_mf.data")
    assert done.returncode == 2 and all(name in done.stdout for name in ("orl", "yale", "coil20"))


@pytest.mark.integration
def test_the_console_script_installs_and_answers_tab_completion(installed):
    site, _ = installed
    script = site / "bin" / "repro-mf"
    done = run_installed(installed, str(script), "-sc", "install=bash")
    assert done.returncode == 0, done.stderr
    assert "hydra_bash_completion" in done.stdout and done.stdout.rstrip().endswith("repro-mf")
    done = run_installed(installed, str(script), "-sc", "query=bash", COMP_LINE="repro-mf method=nm")
    assert done.returncode == 0, done.stderr
    assert "method=nmf" in done.stdout.split()
    done = run_installed(installed, str(script), "method=nmff")
    assert done.returncode == 2 and "method='nmff' is not one of" in done.stderr


@pytest.mark.integration
def test_the_installed_copy_knows_its_version_and_carries_its_licence(installed):
    site, _ = installed
    done = run_installed(installed, str(site / "bin" / "repro-mf"), "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"repro-mf {PYPROJECT['project']['version']}\n"
    dist_info, = site.glob("repro_mf-*.dist-info")
    assert "License-Expression: BSD-3-Clause" in (dist_info / "METADATA").read_text()
    assert [path.name for path in dist_info.rglob("LICENSE")] == ["LICENSE"]

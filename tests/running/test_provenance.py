"""src.running.provenance: the code fingerprint follows the result-affecting sources; the record is complete and names the
release, as the report footer does."""

import json
import shutil

import src
from src.running import provenance

REQUIRED = ("version", "started", "ended", "command", "overrides", "git", "code_fingerprint", "python", "platform",
            "cpu_count", "cores_available", "blas", "data_files", "packages")


def copy_sources(tmp_path):
    root = tmp_path / "src"
    shutil.copytree(provenance.SRC, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def test_fingerprint_changes_with_a_result_source_and_a_numerical_package(tmp_path):
    root = copy_sources(tmp_path)
    packages = {"numpy": "2.0.0"}
    before = provenance.fingerprint_of(root, packages)
    assert provenance.fingerprint_of(root, packages) == before
    with open(root / "methods" / "nmf.py", "a") as handle:
        handle.write("\n# an edit\n")
    edited = provenance.fingerprint_of(root, packages)
    assert edited != before
    assert provenance.fingerprint_of(root, {"numpy": "2.0.1"}) != edited


def test_fingerprint_follows_the_folders_that_compute_a_cell(tmp_path):
    root = copy_sources(tmp_path)
    before = provenance.fingerprint_of(root, {})
    for name in ("presentation/report.py", "presentation/tables.py", "run.py", "running/sweep.py"):
        with open(root / name, "a") as handle:
            handle.write("\n# wording\n")
    assert provenance.fingerprint_of(root, {}) == before
    sources = {path.relative_to(root).parts[0] for path in provenance.result_sources(root)}
    assert sources == set(provenance.RESULT_FOLDERS) == {"methods", "data", "protocol"}
    with open(root / "protocol" / "clustering.py", "a") as handle:
        handle.write("\n# a change in a folder that computes\n")
    assert provenance.fingerprint_of(root, {}) != before


def test_record_has_every_field_and_renders_as_a_footer(tmp_path):
    record = provenance.collect("2026-01-01T00:00:00+00:00", "2026-01-01T00:01:00+00:00", ["method=nmf"])
    assert all(key in record for key in REQUIRED)
    assert record["overrides"] == ["method=nmf"]
    git = record["git"]  # a checkout: its commit and state; a copy without .git says so
    assert (len(git["commit"]) == 40 and git["dirty"] in (True, False)) or git["commit"].startswith("unknown")
    assert record["packages"]["numpy"] and record["cores_available"] >= 1
    assert all("num_threads" in lib for lib in record["blas"])
    path = provenance.write(tmp_path, record)
    assert provenance.read(path) == json.loads(json.dumps(record, default=str))
    lines = provenance.markdown(record, [record])
    assert lines[0] == "## Provenance"
    text = "\n".join(lines)
    assert record["git"]["commit"] in text and record["code_fingerprint"] in text and "numpy" in text


def test_the_record_and_the_footer_name_the_release():
    record = provenance.collect("2026-01-01T00:00:00+00:00")
    assert record["version"] == src.__version__
    lines = provenance.markdown(record)
    assert lines[:3] == ["## Provenance", "", f"- repro-mf version {src.__version__}."]
    assert provenance.markdown({**record, "version": "0.2.0"})[2] == "- repro-mf version 0.2.0."


def test_outside_a_checkout_the_commit_is_unknown(tmp_path):
    assert provenance.git_state(tmp_path) == {"commit": "unknown (not a git checkout)", "dirty": None,
                                              "changed_files": []}


def test_unreadable_record_reads_as_none(tmp_path):
    (tmp_path / provenance.FILE).write_text("{half")
    assert provenance.read(tmp_path / provenance.FILE) is None
    assert provenance.read(tmp_path / "missing.json") is None

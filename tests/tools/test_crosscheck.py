"""Ours against the golden fixtures of Deng Cai's reference code (written by ``python -m tools.crosscheck
--write-fixtures`` from GNU Octave runs); no Octave needed here.

Each case is rebuilt from its description in tests/fixtures/crosscheck/cases.json (data subset from the mirror,
seeded initial factors; the sha256 of the inputs must match, so that a changed data file or random generator
is told apart from a changed solver), ours is run and compared as the cross-check does, at ten times its
tolerances (rounding differs between BLAS libraries): factors 1e-9 relative after 50 iterations or at the
stopping rule, objective histories 1e-7, graphs and metrics 1e-11; iteration counts and chosen starts equal.
"""

import numpy as np
import pooch
import pytest

from src import methods
from tools.crosscheck import fixtures
from tools.crosscheck.cases import Inputs, all_cases, build_inputs, compare, load_subset, our_outputs, partial_labels
from tools.crosscheck.reference import REFERENCE_FILES, REFERENCE_MIRROR_ENV, fetch_reference, reference_mirror
from src.errors import DataError

CASES = {case.name: case for case in all_cases()}
INDEX = fixtures.read_index()


def test_every_case_has_a_fixture_with_the_same_description():
    assert [entry["case"]["name"] for entry in INDEX] == list(CASES)
    for entry in INDEX:
        assert entry["case"] == fixtures.describe(CASES[entry["case"]["name"]]), (
            f"case {entry['case']['name']!r} changed since its fixture was written: rerun "
            f"`make crosscheck CROSSCHECK_ARGS=--write-fixtures`")


@pytest.mark.parametrize("entry", INDEX, ids=[e["file"].removesuffix(".npz") for e in INDEX])
def test_ours_matches_the_reference_outputs(entry, mirror, data_dir):
    case = CASES[entry["case"]["name"]]
    if case.stopping != "fixed" and "stopping" not in methods.parameter_names(methods.REGISTRY[case.method]):
        pytest.skip("this src.methods has no stopping rule / multi-start yet")
    reference = fixtures.read_outputs(entry)
    if case.kind == "metrics":  # the stored clusterings are the inputs: KMeans is not rerun
        X_rows, y = load_subset(case.subset, data_dir, mirror)
        inputs = Inputs(X_rows, y, partial_labels(y, case.subset.labelled_per_class), [], reference["labels"])
    else:
        inputs = build_inputs(case, data_dir, mirror)
    assert inputs.digest() == entry["inputs_sha256"], "the inputs (data subset or initial factors) changed"
    rows = compare(case, our_outputs(case, inputs), reference)
    for row in rows:
        if row.known:
            assert not row.passed, (f"{case.name}: the known difference is gone ({row.what}: {row.difference:.3g}); "
                                    f"drop its note in tools/crosscheck/cases.py and rewrite the fixtures")
            continue
        tolerance = 10 * row.tolerance
        assert np.isfinite(row.difference) and row.difference <= tolerance, (
            f"{case.name}: {row.what} differs from Cai's reference by {row.difference:.3g} (tolerance {tolerance:.0e})")


def test_reference_mirror_is_found_beside_the_data_mirror(tmp_path, monkeypatch):
    (tmp_path / "reference" / "MatlabFunc" / "MatrixFactorization").mkdir(parents=True)
    (tmp_path / "datasets").mkdir()
    monkeypatch.delenv(REFERENCE_MIRROR_ENV, raising=False)
    monkeypatch.setenv("REPRO_DATA_MIRROR", str(tmp_path / "datasets"))
    assert reference_mirror() == tmp_path / "reference" / "MatlabFunc"
    monkeypatch.setenv(REFERENCE_MIRROR_ENV, str(tmp_path / "elsewhere"))
    assert reference_mirror() == tmp_path / "elsewhere"
    monkeypatch.delenv(REFERENCE_MIRROR_ENV)
    monkeypatch.delenv("REPRO_DATA_MIRROR")
    assert reference_mirror() is None  # download from the pinned upstream commit


def test_reference_files_are_hash_checked(tmp_path):
    good = tmp_path / "good"
    for index, path in enumerate(REFERENCE_FILES):
        (good / path).parent.mkdir(parents=True, exist_ok=True)
        (good / path).write_text(f"% file {index}\n")
    fake = {path: pooch.file_hash(str(good / path)) for path in REFERENCE_FILES}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("tools.crosscheck.reference.REFERENCE_FILES", fake)
        root = fetch_reference(tmp_path / "data", good)
        target = root / "Tools" / "bestMap.m"
        assert target.read_text() == (good / "Tools" / "bestMap.m").read_text()
        target.write_text("% tampered\n")  # a cached copy that fails its hash is fetched again
        fetch_reference(tmp_path / "data", good)
        assert target.read_text() == (good / "Tools" / "bestMap.m").read_text()
        (good / "Tools" / "EuDist2.m").write_text("% not the pinned file\n")
        with pytest.raises(DataError, match="sha256"):
            fetch_reference(tmp_path / "other", good)
        assert not (tmp_path / "other" / "reference" / "Tools" / "EuDist2.m").exists()

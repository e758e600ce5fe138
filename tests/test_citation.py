"""CITATION.cff: valid under the Citation File Format 1.2.0 schema (checked by cffconvert, the format's own
validator), naming the release of pyproject.toml and of the newest CHANGELOG.md entry, and asking, in its
message and its references, that the five papers and Deng Cai's reference code be cited beside it."""

import re
import tomllib
from pathlib import Path

import pytest
import yaml
from cffconvert import Citation

REPO = Path(__file__).resolve().parents[1]
CITATION = REPO / "CITATION.cff"
VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]

PAPERS = {"CNMF": (2012, "Constrained"), "CCF": (2014, "Constrained"), "LCF": (2014, "Local"),
          "FNMF": (2014, "Farness"), "PCGNMF": (2015, "Pairwise")}
"""Each reproduced paper as (year, a word of its title) that picks out its entry in ``references``."""

REFERENCE_CODE = "https://github.com/ZJULearning/MatlabFunc"


def citation() -> dict:
    return yaml.safe_load(CITATION.read_text())


def test_the_citation_file_is_valid_cff():
    Citation(CITATION.read_text()).validate()  # raises on the first key the schema refuses, naming it


def test_the_validator_refuses_a_citation_it_should():
    # the check above means something: the same file without its authors is no valid CFF
    without_authors = re.sub(r"^authors:\n(  .*\n)+", "", CITATION.read_text(), count=1, flags=re.MULTILINE)
    assert "authors" not in yaml.safe_load(without_authors)
    with pytest.raises(Exception, match="'authors' is a required property"):  # jsonschema's ValidationError
        Citation(without_authors).validate()


def test_the_citation_names_the_version_of_pyproject_and_the_changelog():
    record = citation()
    assert record["version"] == VERSION
    newest = re.search(r"^## \[(?P<version>[^\]]+)\] - (?P<date>\d{4}-\d{2}-\d{2})$",
                       (REPO / "CHANGELOG.md").read_text(), flags=re.MULTILINE)
    assert newest is not None, "CHANGELOG.md has no '## [version] - YYYY-MM-DD' entry"
    assert (newest["version"], newest["date"]) == (VERSION, record["date-released"])
    assert record["license"] == tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["license"]


def test_the_references_cover_the_five_papers_and_the_reference_code():
    references = citation()["references"]
    for paper, (year, word) in PAPERS.items():
        found = [ref["title"] for ref in references
                 if ref.get("year") == year and word.lower() in ref["title"].lower().split()]
        assert len(found) == 1, f"{paper}: {len(found)} references from {year} with {word!r} in the title: {found}"
    code = [ref for ref in references if ref["type"] == "software"]
    assert [ref.get("repository-code") for ref in code] == [REFERENCE_CODE]
    assert [author.get("family-names") for author in code[0]["authors"]] == ["Cai"]


def test_the_message_asks_to_cite_the_papers_and_the_code_beside_it():
    message = citation()["message"]
    assert all(paper in message for paper in PAPERS) and "Deng Cai" in message and "references" in message

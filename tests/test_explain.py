"""src.explain: readings declared per paper, each computed on the primary trials, effects on every number."""

import json

import numpy as np
import pandas as pd
import pytest
import yaml

from src import explain
from src.presentation import explain_report
from src.reproduction import readings
from src.reproduction import homes as papers
from src.running import provenance
from src.errors import ConfigError
from helpers import fake_rows, make_home

READINGS = {
    "primary": "the toy's primary reading",
    "readings": {
        "argmax": {"question": "cluster labels", "label": "alternative", "source": "l.3", "readout": "argmax"},
        "alpha_1": {"question": "GNMF strength", "label": "alternative", "source": "l.4",
                    "family_value": {"family": "GNMF", "value": 1}},
        "alpha_oracle": {"question": "GNMF strength", "label": "oracle", "source": "l.4",
                         "oracle_per_k": {"family": "GNMF", "estimator": "gnmf", "param": "alpha"}},
        "refit": {"question": "stopping", "label": "text", "source": "l.5", "quote": "within 20 iterations",
                  "sweeps": [["method=nmf", "method.params.max_iter=20"]]},
    },
}


@pytest.fixture
def toy(tmp_path, monkeypatch):
    home = make_home(tmp_path)
    (home / "toy" / "readings.yaml").write_text(yaml.safe_dump(READINGS, sort_keys=False))
    monkeypatch.setattr(papers, "HOME", home)
    outputs, out = tmp_path / "outputs", tmp_path / "explain"
    (outputs / "toy").mkdir(parents=True)
    primary = pd.concat([fake_rows("yale", "NMF", "nmf", 0.52, acc_argmax=0.49, nmi_argmax=0.49),
                         fake_rows("yale", "CNMF", "cnmf", 0.60, seed=1, acc_argmax=0.61, nmi_argmax=0.6),
                         fake_rows("yale", "GNMF(alpha=100)", "gnmf", 0.55, seed=2, param_alpha=100),
                         fake_rows("yale", "GNMF(alpha=1)", "gnmf", 0.71, seed=3, param_alpha=1)])
    primary.to_csv(outputs / "toy" / "results.csv", index=False)
    refit = out / "toy" / "refit" / "runs" / "yale_NMF"
    refit.mkdir(parents=True)
    fake_rows("yale", "NMF", "nmf", 0.40, seed=7).to_csv(refit / "results.csv", index=False)
    paper = papers.load("toy", home)
    readings.mark_done(out / "toy", readings.load_readings(paper)[1][-1])
    return paper, outputs, out


def test_readings_are_declared_with_label_source_and_how(toy):
    paper, _, out = toy
    primary, declared = readings.load_readings(paper)
    assert primary == "the toy's primary reading"
    assert [r.name for r in declared] == ["argmax", "alpha_1", "alpha_oracle", "refit"]
    refit = declared[-1]
    assert refit.quote == "within 20 iterations"
    home = readings.readings_home(paper, declared, out / "toy")  # the pool's home: every reading's sweeps
    assert home.name == "toy" and home.sweep_overrides() == [
        ["experiment=toy", "method=nmf", "method.params.max_iter=20",
         f"hydra.sweep.dir={out / 'toy' / 'refit' / 'runs' / '1'}"]]
    assert readings.readings_home(paper, declared[:-1], out / "toy") is None  # nothing new to fit


@pytest.mark.parametrize("entry, match", [
    ({"question": "q", "label": "guess", "source": "s", "readout": "argmax"}, "label='guess'"),
    ({"question": "q", "label": "text", "source": "s"}, "nothing to compute"),
    ({"question": "q", "label": "text", "source": "s", "readout": "median"}, "readout='median'"),
    ({"question": "q", "label": "alternative", "source": "s",
      "oracle_per_k": {"family": "GNMF", "estimator": "gnmf", "param": "alpha"}}, "labelled 'alternative'"),
    ({"question": "q", "label": "text", "source": "s", "sweeps": ["method=nmf"]}, "sweeps must be"),
])
def test_bad_readings_are_one_line_errors(toy, entry, match):
    paper, _, _ = toy
    (paper.home / "readings.yaml").write_text(yaml.safe_dump({"readings": {"bad": entry}}))
    with pytest.raises(ConfigError, match=match):
        readings.load_readings(paper)


def test_each_reading_changes_what_it_should_and_nothing_else(toy):
    paper, outputs, out = toy
    report = explain_report.explain_paper(paper, outputs, out)
    effects = pd.read_csv(out / "toy" / "readings.csv").set_index(["reading", "key"])
    nmf, gnmf = "yale: NMF AC, average over k", "yale: GNMF AC, average over k"
    gain = "yale: CNMF over NMF, AC gain (l.1)"
    assert effects.loc[("argmax", nmf), "ours"] == pytest.approx(49.0)  # the readout replaces the assignment
    assert effects.loc[("argmax", gnmf), "effect"] == pytest.approx(0.0)  # no argmax readout: unchanged
    assert effects.loc[("alpha_1", gnmf), "ours"] == pytest.approx(71.0, abs=0.5)
    assert effects.loc[("alpha_1", gnmf), "verdict"] == "agrees"  # the paper's 70 comes back under alpha = 1
    assert effects.loc[("alpha_1", nmf), "effect"] == pytest.approx(0.0)
    assert effects.loc[("alpha_oracle", gnmf), "ours"] == pytest.approx(71.0, abs=0.5)  # best per k
    assert effects.loc[("refit", nmf), "ours"] == pytest.approx(40.0, abs=0.5)  # the new fits replace NMF's cells
    assert effects.loc[("refit", gnmf), "effect"] == pytest.approx(0.0)
    assert effects.loc[("refit", gain), "effect"] == pytest.approx(12.0, abs=1.0)  # the gain moves with NMF
    text = report.read_text()
    assert "alpha_1 (alternative)** brings 1 of the" in text and "| refit | stopping | text |" in text
    assert "| 2 |" in text and "none (no new fit)" in text  # the refit's 12 rows of 0.1 + 0.1 s
    assert "The text: \"within 20 iterations\"" in text


def test_no_reading_judges_the_references_rows(toy):
    """The references' rows, in the primary run or a reading's fits, change no reading's numbers (issue 69):
    above every method of the toy, they would be the "best other" of a gain if a reading read them."""
    paper, outputs, out = toy
    published = yaml.safe_load(paper.published.read_text())
    published["claims"].append({"dataset": "yale", "method": "CNMF", "baseline": "best other", "metric": "acc",
                                "gain": 2.0, "source": "l.9"})
    paper.published.write_text(yaml.safe_dump(published))
    explain_report.explain_paper(paper, outputs, out)
    plain = pd.read_csv(out / "toy" / "readings.csv")
    references = pd.concat([fake_rows("yale", "LabelSpreading", "label_spreading", 0.9, seed=8),
                            fake_rows("yale", "kNN", "knn", 0.85, seed=9)])
    merged = outputs / "toy" / "results.csv"
    pd.concat([pd.read_csv(merged), references]).to_csv(merged, index=False)
    refit = out / "toy" / "refit" / "runs" / "yale_references"
    refit.mkdir()
    references.to_csv(refit / "results.csv", index=False)
    explain_report.explain_paper(paper, outputs, out)
    pd.testing.assert_frame_equal(pd.read_csv(out / "toy" / "readings.csv"), plain)


def test_the_report_shows_the_forest_with_the_readings_and_what_each_reading_brings_back(toy):
    paper, outputs, out = toy
    text = explain_report.explain_paper(paper, outputs, out).read_text()
    assert (out / "toy" / "forest.png").is_file() and "](forest.png)" in text
    assert "Readings bring 1 of the numbers that do not agree to agrees: alpha_1 (1), alpha_oracle (1)." in text
    assert "<summary><b>alpha_1</b> (alternative): brings 1 to <i>agrees</i>, moves 0 off it</summary>" in text
    assert "| yale: GNMF AC, average over k | onto agrees | 70.00 | 55.05 (-14.95) differs | 70.9" in text
    assert "<summary><b>refit</b> (text): brings 0 to <i>agrees</i>, moves 2 off it</summary>" in text
    folded = text[text.index("<details><summary>The table: 4 numbers"):]
    assert "| number | paper | primary | argmax | alpha_1 |" in folded and "</details>" in folded
    assert "<details><summary>The numbers, reading by reading</summary>" in text


def test_the_provenance_lists_the_primary_runs_and_the_readings_fits(toy):
    paper, outputs, out = toy
    primary_run = {**provenance.collect(provenance.now(), provenance.now()), "command": "python -m src.run primary"}
    provenance.write(outputs / "toy", {"runs": [primary_run]})  # as the paper report records its runs
    refit_run = {**provenance.collect(provenance.now(), provenance.now()), "command": "python -m src.run refit"}
    provenance.write(out / "toy" / "refit" / "runs" / "yale_NMF", refit_run)
    text = explain_report.explain_paper(paper, outputs, out).read_text()
    assert "- The results come from 2 run directories:" in text
    assert "`python -m src.run primary`" in text and "`python -m src.run refit`" in text
    recorded = provenance.read(out / "toy" / provenance.FILE)
    assert [run["command"] for run in recorded["runs"]] == ["python -m src.run primary", "python -m src.run refit"]


@pytest.mark.integration
def test_missing_primary_run_is_one_line_and_unfinished_readings_are_reported_as_not_run(toy, tmp_path):
    paper, outputs, out = toy
    with pytest.raises(explain.UserError, match="run make reproduce-toy first"):
        explain_report.primary_frame(paper, tmp_path / "nowhere")
    assert "| refit | stopping | text |" in explain_report.explain_paper(paper, outputs, out).read_text()
    (out / "toy" / "refit" / readings.DONE).write_text('{"sweeps": [["method=nmf"]], "seconds": 1}')  # other sweeps
    text = explain_report.explain_paper(paper, outputs, out).read_text()
    assert "not run | | | | | | - |" in text
    effects = pd.read_csv(out / "toy" / "readings.csv")
    assert (effects[effects["reading"] == "refit"]["verdict"] == "not run").all()


def test_main_reports_only_and_rebuilds_the_scorecard(toy, monkeypatch, tmp_path):
    paper, outputs, out = toy
    assert explain.main(["toy", "--report-only", "--outputs", str(outputs), "--out", str(out)]) == 0
    assert (out / "toy" / "report.md").is_file()
    assert explain.main(["toy", "all"]) == 2
    assert np.isfinite(pd.read_csv(out / "toy" / "readings.csv")["effect"]).all()


def test_the_primary_runs_are_composed_as_sources_only_where_they_may_be_on_disk(tmp_path, monkeypatch):
    """With no outputs/reproduce and no paths.output_dir override no primary cell can be copied: the readings'
    pool gets no sources, and the primary jobs are not composed (as the benchmark's)."""
    monkeypatch.chdir(tmp_path)
    given = []
    monkeypatch.setattr(explain, "fit_readings",
                        lambda homes, plans, out, sources, *rest, **options: given.append([p.name for p in sources]))
    monkeypatch.setattr(explain.signal, "signal", lambda *args: None)  # this process keeps its SIGTERM
    assert explain.main(["lcf", "--dry-run"]) == 0
    assert explain.main(["lcf", "--dry-run", "--overrides", "paths.output_dir=/elsewhere"]) == 0
    (tmp_path / "outputs" / "reproduce").mkdir(parents=True)
    assert explain.main(["lcf", "--dry-run"]) == 0
    assert given == [[], ["lcf"], ["lcf"]]


REAL = [name for name in papers.names() if (papers.HOME / name / readings.FILE).is_file()]


@pytest.mark.parametrize("name", REAL)
def test_every_declared_reading_of_the_papers_loads_with_its_families(name):
    """Each paper's readings load and name families its published numbers have. That every job of every
    reading composes with the paper's experiment and gives estimators whose parameters pass their checks (so
    explain-all cannot fail late) is what the dry run of ``make explain-all`` checks of each job
    (src.running.pool.dry_run_summary); tests/test_readme_commands.py runs it as the README types it."""
    paper = papers.load(name)
    primary, declared = readings.load_readings(paper)
    assert primary and declared
    families = yaml.safe_load(paper.published.read_text()).get("families", {})
    for reading in declared:
        for spec in (reading.family_value, reading.oracle_per_k):
            assert spec is None or spec["family"] in families


@pytest.mark.integration
def test_the_readings_sweeps_run_in_one_pool_and_copy_the_primary_cells_they_equal(tmp_path, monkeypatch):
    """A reading's sweep that asks for the primary run's own settings computes nothing (its cells are copied
    from outputs/reproduce/), one that changes a setting computes its cells; both are marked done."""
    import src.running.pool as pool
    from helpers import in_process, toy_papers

    monkeypatch.setattr(pool, "run_local", in_process())
    chosen, overrides = toy_papers(tmp_path, ("toy",))
    pool.run_pool(chosen, overrides, 1)  # the primary run: 3 methods x 2 k x 2 trials
    paper = chosen[0]
    out = tmp_path / "outputs" / "explain"
    same = readings.Reading("same", "q", "alternative", "s", sweeps=(("method=nmf", "solver.max_iter=20"),))
    other = readings.Reading("other", "q", "alternative", "s", sweeps=(("method=nmf", "protocol.kmeans_restarts=2"),))
    plans = {"toy": [same, other]}
    home = readings.readings_home(paper, plans["toy"], out / "toy")
    readings.fit_readings([home], plans, out, chosen, overrides, workers=1)
    summary = json.loads((out / "schedule.json").read_text())
    assert summary["copied"] == 4 and summary["computed"] == 4  # NMF's 4 cells copied, 4 fitted anew
    for reading in (same, other):
        assert readings.done_record(out / "toy", reading) is not None
        rows = pd.read_csv(next(readings.runs_dir(out / "toy", reading).rglob("results.csv")))
        assert len(rows) == 4 and set(rows["estimator"]) == {"nmf"}
    primary = pd.read_csv(next((tmp_path / "outputs/reproduce/toy/runs").glob("*NMF*/results.csv")))
    copied = pd.read_csv(next(readings.runs_dir(out / "toy", same).rglob("results.csv")))
    assert np.allclose(copied.sort_values(["k", "trial"])["acc"], primary.sort_values(["k", "trial"])["acc"])

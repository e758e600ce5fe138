"""src.presentation.paper_report: a paper's report shows its forest plot with the scorecard's verdicts."""

import pandas as pd
import yaml

from helpers import fake_rows, make_home
from src.presentation import paper_report, scorecard
from src.presentation.verdict_figures import FOREST


def toy_run(tmp_path, name="toy"):
    """A paper home ``toy`` (helpers.make_home) and one run of its methods, as a reproduction leaves it."""
    home = make_home(tmp_path)
    runs = tmp_path / "outputs" / name / "runs" / "yale"
    runs.mkdir(parents=True)
    frame = pd.concat([fake_rows("yale", "NMF", "nmf", 0.52),
                       fake_rows("yale", "CNMF", "cnmf", 0.60, seed=1),
                       fake_rows("yale", "GNMF(alpha=100)", "gnmf", 0.55, seed=2, param_alpha=100),
                       fake_rows("yale", "GNMF(alpha=1)", "gnmf", 0.71, seed=3, param_alpha=1)])
    frame.assign(seed=0, config_hash="h", code_fingerprint="c").to_csv(runs / "results.csv", index=False)
    return home, tmp_path / "outputs" / name


def test_the_report_shows_the_forest_plot_with_the_scorecards_verdicts(tmp_path, monkeypatch):
    """A single paper's reproduction builds no scorecard: its report draws the forest itself, with the verdicts
    the scorecard gives (Holm over every paper on disk), and the scorecard redraws the same figure later."""
    home, out = toy_run(tmp_path)
    text = paper_report.build("toy", [out / "runs"], out, home=home).read_text()
    assert (out / FOREST).is_file()
    section = text[text.index("## Every published number against ours"):]
    assert f"]({FOREST})" in section and "![4 published numbers on yale" in section
    assert "Holm-adjusted over every number of the papers reproduced" in section
    assert text.index("## Every published number against ours") < text.index("## Provenance")
    rows, compared = paper_report.scorecard_rows("toy", out / "results.csv", out.parent, home)
    monkeypatch.setattr(scorecard.papers, "HOME", home)
    scorecard.build(out.parent, home=home, explain=tmp_path / "explain")
    table = pd.read_csv(out.parent / "scorecard.csv")
    assert compared == 4 and list(rows["verdict"]) == list(table["verdict"])  # the scorecard's verdicts


def test_another_papers_numbers_enter_the_holm_adjustment_and_a_broken_one_is_left_out(tmp_path, caplog):
    home, out = toy_run(tmp_path)
    paper_report.build("toy", [out / "runs"], out, home=home)
    (home / "toy2").mkdir()
    (home / "toy2" / "reproduce.yaml").write_text("sweeps: [[]]\n")
    (home / "toy2" / "published.yaml").write_text((home / "toy" / "published.yaml").read_text())
    (out.parent / "toy2").mkdir()
    pd.read_csv(out / "results.csv").to_csv(out.parent / "toy2" / "results.csv", index=False)
    rows, compared = paper_report.scorecard_rows("toy", out / "results.csv", out.parent, home)
    assert len(rows) == 4 and compared == 8  # Holm over both papers' numbers, the rows of toy alone
    published = yaml.safe_load((home / "toy2" / "published.yaml").read_text())
    published["families"]["GNMF"]["value"] = 3  # no run with alpha = 3: toy2 cannot be read
    (home / "toy2" / "published.yaml").write_text(yaml.safe_dump(published))
    rows, compared = paper_report.scorecard_rows("toy", out / "results.csv", out.parent, home)
    assert compared == 4 and "toy2: left out of the verdicts' Holm adjustment" in caplog.text


def test_a_paper_without_a_comparable_number_gets_no_plot_and_no_link(tmp_path):
    home, out = toy_run(tmp_path)
    (out / FOREST).parent.mkdir(parents=True, exist_ok=True)
    (out / FOREST).write_bytes(b"an earlier run's figure")
    (home / "toy" / "published.yaml").write_text(yaml.safe_dump({"paper": "Toy", "families": {
        "GNMF": {"estimator": "gnmf", "param": "alpha", "value": 100}}}))
    text = paper_report.build("toy", [out / "runs"], out, home=home).read_text()
    assert FOREST not in text and not (out / FOREST).exists()

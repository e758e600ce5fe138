"""src.presentation.scorecard: published numbers beside ours, verdicts with Holm-adjusted tests, causes where known."""

import numpy as np
import pandas as pd
import yaml

from helpers import fake_rows, make_home
from src.presentation import scorecard


def build_toy(tmp_path, monkeypatch, effects=None):
    home = make_home(tmp_path)
    monkeypatch.setattr(scorecard.papers, "HOME", home)
    outputs, explain = tmp_path / "outputs", tmp_path / "explain"
    (outputs / "toy").mkdir(parents=True)
    frame = pd.concat([fake_rows("yale", "NMF", "nmf", 0.52),
                       fake_rows("yale", "CNMF", "cnmf", 0.60, seed=1),
                       fake_rows("yale", "GNMF(alpha=100)", "gnmf", 0.55, seed=2, param_alpha=100),
                       fake_rows("yale", "GNMF(alpha=1)", "gnmf", 0.71, seed=3, param_alpha=1)])
    frame.to_csv(outputs / "toy" / "results.csv", index=False)
    if effects is not None:
        (explain / "toy").mkdir(parents=True)
        pd.DataFrame(effects).to_csv(explain / "toy" / scorecard.READINGS, index=False)
    text = scorecard.build(outputs, home=home, explain=explain).read_text()
    return text, {line.split(" | ")[2]: line for line in text.splitlines() if line.startswith("| toy |")}


def test_scorecard_rows_verdicts_and_causes(tmp_path, monkeypatch):
    text, lines = build_toy(tmp_path, monkeypatch)
    nmf = lines["NMF AC, average over k"]  # 2 points off with about 1 point of noise over 12 trials
    assert "| 50.00 | 52.0" in nmf and "| agrees | agrees |" in nmf
    gnmf = lines["GNMF AC, average over k"]  # alpha = 100 stands for the family, not the better alpha = 1
    assert "| 70.00 | 55.0" in gnmf and "| differs | differs |" in gnmf
    assert "a known reason (verified by a run)" in gnmf and "no reading run: make explain-toy" in gnmf
    gain = lines["CNMF over NMF, AC gain (l.1)"]  # ours about +8 against the paper's +5
    assert "| agrees | reproduced (p Holm" not in gain and "| reproduced" in gain
    assert "| differs |" in lines["NMF over CNMF, AC gain (l.2)"]
    assert "over all 4 numbers of this scorecard" in text
    assert "| average | 2 | 1 | 1 | 0 | 0 | agrees 1, differs 1 |" in text
    assert "## Provenance" in text
    table = pd.read_csv(tmp_path / "outputs" / "scorecard.csv")
    assert set(table["verdict"]) <= {"agrees", "differs", "can't tell"} and len(table) == 4


def test_cause_names_the_readings_tried_and_which_bring_a_number_back(tmp_path, monkeypatch):
    key = "yale: GNMF AC, average over k"
    effects = [{"key": key, "reading": "alpha_1", "label": "alternative", "effect": 16.0, "verdict": "agrees"},
               {"key": key, "reading": "argmax", "label": "alternative", "effect": -1.0, "verdict": "differs"},
               {"key": "yale: NMF over CNMF, AC gain (l.2)", "reading": "argmax", "label": "alternative",
                "effect": 0.5, "verdict": "differs"}]
    _, lines = build_toy(tmp_path, monkeypatch, effects)
    gnmf = lines["GNMF AC, average over k"]
    assert "agrees under: alpha_1 (alternative)" in gnmf
    assert "alpha_1 (alternative) +16.00 -> agrees" in gnmf and "argmax (alternative) -1.00 -> differs" in gnmf
    assert "unknown (no reading changes its verdict)" in lines["NMF over CNMF, AC gain (l.2)"]


def test_a_number_lost_in_the_noise_says_so_and_unknown_is_kept_for_real_differences():
    from src.presentation.verdicts import compare
    published = {"causes": []}
    # paper 60 +- 15 over 10 trials, ours 58 +- 15 over 10: the 90% interval is about +-11.6 points
    noisy = {"verdict": "can't tell", "comparison": compare(58, 15, 10, 60, 15, 10), "dataset": "yale",
             "number": "LCF AC, k=2", "key": "yale: LCF AC, k=2", "paper": "lcf"}
    effects = pd.DataFrame([{"key": noisy["key"], "reading": "argmax", "label": "alternative", "effect": 1.0,
                             "verdict": "can't tell"}])
    cause = scorecard.cause_text(noisy, published, effects)
    assert "the noise" in cause and "+-11." in cause and "unknown" not in cause
    assert scorecard.cause_kind(cause) == "noise"
    differs = {**noisy, "verdict": "differs", "comparison": compare(40, 2, 10, 60, 2, 10)}
    effects["verdict"] = "differs"
    cause = scorecard.cause_text(differs, published, effects)
    assert "unknown (no reading changes its verdict)" in cause and scorecard.cause_kind(cause) == "unknown"

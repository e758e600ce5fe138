"""src.presentation.scorecard: published numbers beside ours, verdicts with Holm-adjusted tests, causes where known."""

import pandas as pd

from helpers import fake_rows, make_home
from src.presentation import scorecard
from src.presentation.verdicts import TOO_FEW_TRIALS


def build_toy(tmp_path, monkeypatch, effects=None, trials=6):
    home = make_home(tmp_path)
    monkeypatch.setattr(scorecard.papers, "HOME", home)
    outputs, explain = tmp_path / "outputs", tmp_path / "explain"
    (outputs / "toy").mkdir(parents=True)
    frame = pd.concat([fake_rows("yale", "NMF", "nmf", 0.52, trials=trials),
                       fake_rows("yale", "CNMF", "cnmf", 0.60, seed=1, trials=trials),
                       fake_rows("yale", "GNMF(alpha=100)", "gnmf", 0.55, seed=2, trials=trials, param_alpha=100),
                       fake_rows("yale", "GNMF(alpha=1)", "gnmf", 0.71, seed=3, trials=trials, param_alpha=1)])
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
    assert gnmf.endswith("| known: a known reason (verified) |")  # the short cause; the rest is folded below
    assert "- **toy, yale: GNMF AC, average over k** (differs): a known reason (verified by a run)" in text
    assert "no reading run: make explain-toy" in text
    gain = lines["CNMF over NMF, AC gain (l.1)"]  # ours about +8 against the paper's +5
    assert "| agrees | reproduced (p Holm" not in gain and "| reproduced" in gain
    assert "| differs |" in lines["NMF over CNMF, AC gain (l.2)"]
    assert "over all 4 numbers of this scorecard" in text
    assert "| average | 2 | 1 | 1 | 0 | 0 | agrees 1, differs 1 |" in text
    assert "## Provenance" in text
    table = pd.read_csv(tmp_path / "outputs" / "scorecard.csv")
    assert set(table["verdict"]) <= {"agrees", "differs", "can't tell"} and len(table) == 4
    assert "![4 published numbers against ours: " in text  # the figure, with its alternative text in numbers
    assert (tmp_path / "outputs" / "published_vs_ours.png").is_file()
    assert (tmp_path / "outputs" / "toy" / "forest.png").is_file()
    assert not (tmp_path / "explain" / "toy" / "forest.png").exists()  # no readings: no forest with readings


def test_with_one_trial_the_scorecard_shows_our_numbers_and_needs_two_trials_for_a_verdict(tmp_path, monkeypatch):
    text, lines = build_toy(tmp_path, monkeypatch, trials=1)
    table = pd.read_csv(tmp_path / "outputs" / "scorecard.csv")
    assert len(table) == 4 and set(table["verdict"]) == {TOO_FEW_TRIALS}
    assert table["ours"].notna().all() and table["difference"].notna().all()  # the numbers are there
    assert table["ci90 low"].isna().all() and table["p_holm"].isna().all()  # no interval, no test
    assert TOO_FEW_TRIALS in lines["NMF AC, average over k"]
    assert "**toy: Every (data set, method, k) of this run has a single trial" in text
    assert f"| not run | {TOO_FEW_TRIALS} | old rule |" in text and "| average | 2 | 0 | 0 | 0 | 0 | 2 |" in text
    assert "Causes of the numbers that differ or can't tell: none." in text  # no cause without a verdict

def test_cause_names_the_readings_that_bring_a_number_back_in_a_few_words(tmp_path, monkeypatch):
    key = "yale: GNMF AC, average over k"
    effects = [{"key": key, "reading": "alpha_1", "label": "alternative", "effect": 16.0, "verdict": "agrees"},
               {"key": key, "reading": "argmax", "label": "alternative", "effect": -1.0, "verdict": "differs"},
               {"key": key, "reading": "refit", "label": "text", "effect": 0.0, "verdict": "not run"},
               {"key": "yale: NMF over CNMF, AC gain (l.2)", "reading": "argmax", "label": "alternative",
                "effect": 0.5, "verdict": "differs"}]
    text, lines = build_toy(tmp_path, monkeypatch, effects)
    assert lines["GNMF AC, average over k"].endswith("| alpha_1 (alternative) brings it back |")
    assert "alpha_1 (alternative) +16.00 -> agrees" in text and "argmax (alternative) -1.00 -> differs" in text
    assert lines["NMF over CNMF, AC gain (l.2)"].endswith("| unknown: no reading changes its verdict |")
    assert "<details><summary>Why, number by number" in text and "</details>" in text
    assert (tmp_path / "explain" / "toy" / "forest.png").is_file()  # the forest with the readings


def test_the_csv_holds_every_interval_p_value_and_reading_of_the_long_cause(tmp_path, monkeypatch):
    """scorecard.csv loads with pandas and holds as columns what the old cause text held in words."""
    key = "yale: GNMF AC, average over k"
    effects = [{"key": key, "reading": "alpha_1", "label": "alternative", "effect": 16.0, "verdict": "agrees"},
               {"key": key, "reading": "argmax", "label": "alternative", "effect": -1.0, "verdict": "differs"},
               {"key": key, "reading": "refit", "label": "text", "effect": None, "verdict": "not run"}]
    build_toy(tmp_path, monkeypatch, effects)
    table = pd.read_csv(tmp_path / "outputs" / "scorecard.csv").set_index("key")
    for column in ("ci90 low", "ci90 high", "ci95 low", "ci95 high", "se", "df", "p zero", "p equivalent", "p_holm"):
        assert pd.api.types.is_float_dtype(table[column]), column
    gnmf = table.loc[key]
    assert gnmf["ci95 low"] < gnmf["ci90 low"] < gnmf["difference"] < gnmf["ci90 high"] < gnmf["ci95 high"]
    assert gnmf["reading:alpha_1 effect"] == 16.0 and gnmf["reading:alpha_1 verdict"] == "agrees"
    assert gnmf["reading:alpha_1 label"] == "alternative" and gnmf["reading:argmax effect"] == -1.0
    assert "reading:refit effect" not in table  # not run: no column
    assert gnmf["brought back by"] == "alpha_1 (alternative)" and gnmf["readings tried"] == 2
    assert gnmf["cause kind"] == "a reading brings it back" and gnmf["recorded cause"].startswith("a known reason")
    assert "agrees under: alpha_1 (alternative)" in gnmf["cause detail"]  # the old long text, kept
    assert table["cause"].fillna("").str.len().max() <= scorecard.SHORT_CAUSE
    gain = table.loc["yale: CNMF over NMF, AC gain (l.1)"]
    assert 0 <= gain["wilcoxon p"] <= gain["wilcoxon p (Holm)"] <= 1 and gain["baseline"] == "NMF"


def noisy_row(**change):
    """A can't-tell number of a toy LCF table, paper 60 +- 15 over 10 trials, ours 58 +- 15 over 10: the 90%
    interval is about +-11.6 points."""
    from src.presentation.verdicts import compare
    row = {"verdict": "can't tell", "comparison": compare(58, 15, 10, 60, 15, 10), "dataset": "yale",
           "number": "LCF AC, k=2", "key": "yale: LCF AC, k=2", "paper": "lcf"}
    return {**row, **change}


def effects_of(*readings):
    return pd.DataFrame([{"key": "yale: LCF AC, k=2", "reading": name, "label": label, "effect": effect,
                          "verdict": verdict} for name, label, effect, verdict in readings])


def test_a_number_lost_in_the_noise_says_so_and_unknown_is_kept_for_real_differences():
    from src.presentation.verdicts import compare
    published = {"causes": []}
    effects = effects_of(("argmax", "alternative", 1.0, "can't tell"))
    cause = scorecard.cause_text(noisy_row(), published, effects)
    assert cause.startswith("noise: 90% interval +-11.") and scorecard.cause_kind(cause) == "noise"
    assert "the noise" in scorecard.cause_detail(noisy_row(), published, effects)
    differs = noisy_row(verdict="differs", comparison=compare(40, 2, 10, 60, 2, 10))
    effects["verdict"] = "differs"
    cause = scorecard.cause_text(differs, published, effects)
    assert cause == "unknown: no reading changes its verdict" and scorecard.cause_kind(cause) == "unknown"
    assert "unknown (no reading changes its verdict)" in scorecard.cause_detail(differs, published, effects)
    cause = scorecard.cause_text(differs, published, None)
    assert cause == "unknown: no reading run (make explain-lcf)" and scorecard.cause_kind(cause) == "unknown"


def test_every_kind_of_short_cause_is_short_and_its_kind_is_read_back():
    from src.presentation.verdicts import compare
    recorded = {"causes": [{"dataset": "*", "method": "LCF", "cause": "our LCF is not the paper's: a long "
                            "explanation, with clauses", "verified_by": "a test"}]}
    near = noisy_row(comparison=compare(58, 5, 10, 60, 5, 10))  # +-3.9 around -2: reaches past -5 by the gap
    differs = noisy_row(verdict="differs", comparison=compare(40, 2, 10, 60, 2, 10))
    many = [(f"reading_number_{i}", "alternative", 1.0, "agrees") for i in range(6)]
    cases = [
        (noisy_row(), {"causes": []}, effects_of(("eq41", "text", 3.0, "agrees"), ("best", "oracle", 4.0, "agrees")),
         "eq41 (text) brings it back", "a reading brings it back"),
        (noisy_row(), {"causes": []}, effects_of(("best", "oracle", 4.0, "agrees")),
         "only an oracle brings it back: best (oracle)", "a reading brings it back"),
        (noisy_row(), {"causes": []}, effects_of(*many), None, "a reading brings it back"),
        (differs, recorded, None, "known: our LCF is not the paper's (verified)", "known cause"),
        (near, {"causes": []}, None, "near the margin: -2.0 +-3.9", "near the margin"),
        (differs, {"causes": []}, effects_of(("raw", "text", 12.5, "can't tell"), ("once", "alternative", -1.0,
                                                                                  "can't tell")),
         "readings move it: raw +12.5 (to can't tell)", "readings move it"),
    ]
    for row, published, effects, expected, kind in cases:
        cause = scorecard.cause_text(row, published, effects)
        assert expected is None or cause == expected
        assert len(cause) <= scorecard.SHORT_CAUSE and scorecard.cause_kind(cause) == kind, cause
    assert "more bring it back" in scorecard.cause_text(noisy_row(), {"causes": []}, effects_of(*many))
    assert scorecard.cause_kind("") == ""

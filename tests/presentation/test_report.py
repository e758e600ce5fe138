"""Tables and figures rebuilt from results.csv files, never recomputed."""

import numpy as np
import pandas as pd
import pytest

from src.presentation import report
from src.presentation.tables import paper_table, summarize


def fake_results(dataset, methods, ks=(2, 3), trials=3, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for method in methods:
        for k in ks:
            for t in range(trials):
                rows.append({"dataset": dataset, "method": method, "estimator": method.lower(), "k": k, "trial": t,
                             "seed": 0, "acc": rng.random(), "nmi": rng.random(), "n_iter": 10, "fit_seconds": 0.1})
    return pd.DataFrame(rows)


def test_avg_row_is_mean_of_means_and_mean_of_stds():
    frame = fake_results("toy", ["NMF"])
    mean, std = summarize(frame, "acc")
    per_k = frame.groupby("k")["acc"]
    assert mean.loc["Avg", "NMF"] == pytest.approx(per_k.mean().mean() * 100)
    assert std.loc["Avg", "NMF"] == pytest.approx(per_k.std(ddof=1).mean() * 100)
    assert mean.loc["2", "NMF"] == pytest.approx(frame[frame.k == 2].acc.mean() * 100)


def test_table_layout_has_ac_and_nmi_blocks():
    table = paper_table(fake_results("toy", ["KMeans", "NMF"]), ["KMeans", "NMF"])
    assert list(table.columns) == ["KMeans", "NMF"]
    assert list(table.index.get_level_values("block").unique()) == ["Accuracy (%)",
                                                                    "Normalized mutual information (%)"]
    assert list(table.loc["Accuracy (%)"].index) == ["2", "3", "Avg"]
    assert "±" in table.iloc[0, 0]


def test_report_merges_runs_into_one_table_per_dataset(tmp_path):
    for i, (dataset, method) in enumerate([("orl", "NMF"), ("orl", "KMeans"), ("yale", "NMF"), ("yale", "KMeans")]):
        run = tmp_path / "multirun" / str(i)
        run.mkdir(parents=True)
        fake_results(dataset, [method], seed=i).to_csv(run / "results.csv", index=False)
    out = tmp_path / "report"
    assert report.main([str(tmp_path / "multirun"), "--out", str(out)]) == 0
    for dataset in ("orl", "yale"):
        text = (out / f"table_{dataset}.md").read_text()
        assert "KMeans" in text and "NMF" in text
        assert (out / f"table_{dataset}.tex").exists() and (out / f"figure_{dataset}.png").stat().st_size > 0
        assert (out / f"table_{dataset}.csv").exists()
    merged = pd.read_csv(out / "results.csv")
    assert len(merged) == 4 * 2 * 3


def test_report_without_results_fails_cleanly(tmp_path):
    assert report.main([str(tmp_path)]) == 2


def test_report_refuses_one_label_under_two_settings_with_one_line(tmp_path, caplog):
    for name, alpha in (("a", 1.0), ("b", 10.0)):
        run = tmp_path / "runs" / name
        run.mkdir(parents=True)
        fake_results("yale", ["GNMF"]).assign(param_alpha=alpha, config_hash=f"hash{name}",
                                              code_fingerprint="c0de").to_csv(run / "results.csv", index=False)
    with caplog.at_level("ERROR"):
        assert report.main([str(tmp_path / "runs"), "--out", str(tmp_path / "out")]) == 2
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and "yale/GNMF" in errors[0] and "\n" not in errors[0]
    assert not (tmp_path / "out" / "table_yale.md").exists()


def test_paper_report_ends_with_the_provenance_of_report_and_runs(tmp_path):
    from src.running import provenance
    from src.presentation import paper_report

    runs = tmp_path / "runs"
    for i, method in enumerate(["NMF", "CNMF"]):
        run = runs / method
        run.mkdir(parents=True)
        fake_results("yale", [method], seed=i).assign(config_hash=f"h{i}", code_fingerprint="c0de",
                                                      kmeans_seconds=0.1).to_csv(
            run / "results.csv", index=False)
        provenance.write(run, provenance.collect("2026-01-0%dT00:00:00+00:00" % (i + 1), overrides=[f"m={i}"]))
    path = paper_report.build("cnmf", [runs], tmp_path)
    text = path.read_text()
    footer = text[text.index("## Provenance"):]
    assert "\n## " not in footer  # the last section
    assert provenance.git_state()["commit"] in footer and "2 run(s)" in footer
    assert provenance.code_fingerprint() in footer
    record = provenance.read(tmp_path / provenance.FILE)
    assert len(record["runs"]) == 2 and len(record["sources"]) == 2


def test_holm_adjustment_matches_the_step_down_definition():
    from src.presentation.paper_report import holm

    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    rng = np.random.default_rng(0)
    p = rng.random(12) ** 3
    adjusted = holm(list(p))
    order = np.argsort(p)
    for rank, index in enumerate(order):  # max over the smaller p-values of min(1, (m - rank) p)
        expected = max(min(1.0, (12 - r) * p[order[r]]) for r in range(rank + 1))
        assert adjusted[index] == pytest.approx(expected)
    assert all(a >= b for a, b in zip(adjusted, p))


def test_tuned_family_stands_by_its_label_free_value_not_the_oracles_pick():
    from src.errors import ConfigError
    from src.presentation.paper_report import choose_tuned

    frames = []
    for alpha, shift in ((1, 0.3), (100, 0.0)):  # alpha = 1 scores higher: an oracle would pick it
        rows = fake_results("yale", [f"GNMF(alpha={alpha})"]).assign(estimator="gnmf", param_alpha=alpha)
        frames.append(rows.assign(acc=rows["acc"] * 0.5 + shift))
    frames.append(fake_results("yale", ["NMF"]))
    frame = pd.concat(frames, ignore_index=True)
    table, chosen = choose_tuned(frame, {"GNMF": {"estimator": "gnmf", "param": "alpha", "value": 100}})
    assert chosen[0]["chosen"] == "GNMF(alpha=100)" and chosen[0]["oracle"] == "GNMF(alpha=1)"
    gnmf = table[table["method"] == "GNMF"]
    assert (gnmf["param_alpha"] == 100).all() and len(gnmf) == len(frames[1])
    assert set(table["method"]) == {"GNMF", "NMF"}
    with pytest.raises(ConfigError, match="no run with alpha=10 "):
        choose_tuned(frame, {"GNMF": {"estimator": "gnmf", "param": "alpha", "value": 10}})


def test_protocol_line_names_trials_and_labels():
    rows = fake_results("yale", ["KMeans", "CNMF"]).assign(protocol_labels_mode="fraction",
                                                          protocol_labels_fraction=0.1, protocol_rank_offset=1,
                                                          protocol_kmeans_metric="cosine",
                                                          protocol_score_on="unlabelled")
    line = report.describe_protocol(rows)
    assert line == ("3 trials per k; 10% of each class labelled; rank k + 1; KMeans with cosine distance; "
                    "scored on unlabelled samples")
    assert report.describe_protocol(fake_results("yale", ["NMF"])) == "3 trials per k"
    orl = fake_results("orl", ["NMF"]).assign(protocol_labels_mode="per_class", protocol_labels_per_class=2)
    assert "2 labelled per class" in report.describe_protocol(orl)


def test_report_tables_hold_numbers_in_csv_and_escaped_latex(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    fake_results("yale", ["KMeans", "NMF"]).assign(protocol_labels_mode="none").to_csv(run / "results.csv",
                                                                                       index=False)
    assert report.main([str(run), "--out", str(tmp_path / "out")]) == 0
    csv = pd.read_csv(tmp_path / "out" / "table_yale.csv")
    assert list(csv.columns) == ["metric", "k", "KMeans mean", "KMeans std", "NMF mean", "NMF std"]
    assert csv["KMeans mean"].dtype == float and list(csv["k"].iloc[:3]) == ["2", "3", "Avg"]
    tex = (tmp_path / "out" / "table_yale.tex").read_text()
    assert r"in \% (3 trials per k; no labels)" in tex and r"\toprule" in tex
    assert "± " in (tmp_path / "out" / "table_yale.md").read_text()

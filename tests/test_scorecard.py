"""src.scorecard: published numbers beside ours, verdicts with Holm-adjusted tests, causes where known."""

import numpy as np
import pandas as pd
import yaml

from src import scorecard


def fake_rows(dataset, method, estimator, mean, ks=(2, 3), trials=6, seed=0, **columns):
    rng = np.random.default_rng(seed)
    return pd.DataFrame([{"dataset": dataset, "method": method, "estimator": estimator, "k": k, "trial": t,
                          "acc": mean + 0.01 * rng.standard_normal(), "nmi": mean, "fit_seconds": 0.1,
                          "kmeans_seconds": 0.1, **columns} for k in ks for t in range(trials)])


def make_home(tmp_path):
    home = tmp_path / "paper"
    (home / "toy").mkdir(parents=True)
    (home / "toy" / "reproduce.yaml").write_text("prefetch: [yale]\nsweeps: [[]]\n")
    (home / "toy" / "experiment.yaml").write_text("# @package _global_\n# Run with: make reproduce-toy\n")
    published = {"paper": "Toy", "families": {"GNMF": {"estimator": "gnmf", "param": "alpha", "value": 100}},
                 "claims": [{"dataset": "yale", "method": "CNMF", "baseline": "NMF", "metric": "acc", "gain": 5.0,
                             "source": "l.1"},
                            {"dataset": "yale", "method": "NMF", "baseline": "CNMF", "metric": "acc", "gain": 1.0,
                             "source": "l.2"}],
                 "published_averages": [{"dataset": "yale", "metric": "acc", "NMF": 50.0, "GNMF": 70.0}],
                 "causes": [{"dataset": "yale", "method": "GNMF", "cause": "a known reason", "verified_by": "a run"}]}
    (home / "toy" / "published.yaml").write_text(yaml.safe_dump(published))
    return home


def test_scorecard_rows_verdicts_and_causes(tmp_path, monkeypatch):
    home = make_home(tmp_path)
    monkeypatch.setattr(scorecard.papers, "HOME", home)
    outputs = tmp_path / "outputs"
    (outputs / "toy").mkdir(parents=True)
    frame = pd.concat([fake_rows("yale", "NMF", "nmf", 0.52),
                       fake_rows("yale", "CNMF", "cnmf", 0.60, seed=1),
                       fake_rows("yale", "GNMF(alpha=100)", "gnmf", 0.55, seed=2, param_alpha=100),
                       fake_rows("yale", "GNMF(alpha=1)", "gnmf", 0.71, seed=3, param_alpha=1)])
    frame.to_csv(outputs / "toy" / "results.csv", index=False)
    text = scorecard.build(outputs, home=home, demo=False).read_text()
    lines = {line.split(" | ")[2]: line for line in text.splitlines() if line.startswith("| toy |")}
    nmf = lines["NMF AC, average over k"]
    assert "| 50.00 | 52.0" in nmf and "agrees" in nmf  # within 5 points
    gnmf = lines["GNMF AC, average over k"]  # alpha = 100 stands for the family, not the better alpha = 1
    assert "| 70.00 | 55.0" in gnmf and "differs" in gnmf and "a known reason (verified by a run)" in gnmf
    assert "reproduced (p Holm" in lines["CNMF over NMF, AC gain (l.1)"]
    assert "not reproduced" in lines["NMF over CNMF, AC gain (l.2)"] and "unknown" in lines["NMF over CNMF, AC gain (l.2)"]
    assert "the 2 tests are adjusted together with Holm's method" in text
    assert "## Provenance" in text

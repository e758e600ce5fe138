"""The label methods against the references: kinds from the registry, the answer's standing, the section's
numbers against independent computations (pandas means, scipy's Wilcoxon), and the readouts' verdicts."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import wilcoxon

from src.presentation import references_report as report
from src.presentation.ranking import ranking_over
from src.presentation.verdicts import holm

#: (label, estimator, typical AC, typical classes given back, readouts' typical classes given back)
METHODS = (("CNMF", "cnmf", 0.60, 0.55, 0.62), ("SDA", "sda", 0.70, 0.66, 0.68), ("NMF", "nmf", 0.58, 0.50, 0.60),
           ("LabelSpreading", "label_spreading", 0.75, 0.72, None), ("kNN", "knn", 0.72, 0.64, None))


def track(seed: int = 0, datasets=("orl", "yale"), ks=range(2, 8), trials: int = 4) -> pd.DataFrame:
    """A toy label track: each method's AC and classes given back near its typical values; the methods with a
    representation read out by both classifiers."""
    rng = np.random.default_rng(seed)
    rows = []
    for dataset in datasets:
        for k in ks:
            for trial in range(trials):
                for label, estimator, acc, given, readout in METHODS:
                    row = {"dataset": dataset, "method": label, "label": label, "estimator": estimator, "k": k,
                           "trial": trial, "acc": acc + rng.normal(0, 0.01), "nmi": acc - 0.1,
                           "given_unlabelled": given + rng.normal(0, 0.01)}
                    if readout is not None:
                        row["given_nearest_labelled"] = readout + rng.normal(0, 0.01)
                        row["given_spread_labelled"] = readout + 0.05 + rng.normal(0, 0.01)
                    rows.append(row)
    return pd.DataFrame(rows)


def test_a_methods_kind_comes_from_the_registry():
    assert report.kind("label_spreading") == report.kind("knn") == report.REFERENCE
    assert report.kind("cnmf") == report.kind("sda") == report.LABEL
    assert report.kind("nmf") == report.kind("no.such:Method") == report.LABEL_FREE
    assert report.of_kind(track(), report.REFERENCE) == ["LabelSpreading", "kNN"]


def test_each_label_method_meets_the_best_reference_by_the_rankings_tests():
    frame = track()
    ranking = ranking_over(frame, "acc")
    lines = report.against_table(ranking, ["CNMF", "SDA"], ["LabelSpreading", "kNN"], "AC")
    assert "LabelSpreading's" in lines[0]  # the better reference by its mean
    row = next(line for line in lines if line.startswith("| SDA |"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    sda = frame[frame["method"] == "SDA"].groupby(["dataset", "k"])["acc"].mean().mean()
    spread = frame[frame["method"] == "LabelSpreading"].groupby(["dataset", "k"])["acc"].mean().mean()
    assert float(cells[1]) == pytest.approx(100 * sda, abs=0.051)
    assert float(cells[3]) == pytest.approx(100 * (sda - spread), abs=0.051)
    assert cells[5] == "worse" and float(cells[8]) > 0.95  # 5 points below, 12 blocks: decided both ways


def test_the_answer_gives_the_references_standing_by_both_scores():
    frame = track()
    text = " ".join(report.answer_lines(frame, ranking_over(frame, "acc")))
    assert "LabelSpreading is in the first group" in text and "kNN is below 1 (LabelSpreading)" in text
    assert "By the classes given back" in text
    assert report.answer_lines(frame[~frame["estimator"].isin(["knn", "label_spreading"])],
                               ranking_over(frame, "acc")) == []
    assert "Tuned by the same rule" not in text and "until their tuned cells ship" not in text  # no tuned run
    untuned = frame[~frame["estimator"].isin(["knn", "label_spreading"])]
    left_out = " ".join(report.answer_lines(frame, ranking_over(frame, "acc"), ranking_over(untuned, "acc")))
    assert "until their tuned cells ship, the tuned ranking leaves them out" in left_out
    held = " ".join(report.answer_lines(frame, ranking_over(frame, "acc"), ranking_over(frame, "acc")))
    assert "Tuned by the same rule on the labels they may see, by AC: LabelSpreading is in the first group" in held


def test_a_readout_is_tested_against_the_same_classifier_on_the_samples():
    frame = track()
    table = report.readout_rows(frame).set_index(["method", "readout"])
    assert set(table.index) == {(m, r) for m in ("CNMF", "SDA", "NMF") for r in ("nearest_labelled", "spread_labelled")}
    cnmf, knn = frame[frame["method"] == "CNMF"], frame[frame["method"] == "kNN"]
    read = cnmf.groupby(["dataset", "k"])["given_nearest_labelled"].mean()
    samples = knn.groupby(["dataset", "k"])["given_unlabelled"].mean()
    row = table.loc[("CNMF", "nearest_labelled")]
    assert row["in_representation"] == pytest.approx(read.mean())
    assert row["on_samples"] == pytest.approx(samples.mean())
    assert row["p"] == pytest.approx(wilcoxon(read - samples).pvalue)
    assert table["p_holm"].tolist() == pytest.approx(holm(table["p"].tolist()))
    assert report.helps(row) == "hurts"  # 0.62 in CNMF's representation against the samples' 0.64
    assert report.helps(table.loc[("SDA", "spread_labelled")]) == "helps"  # 0.73 against LabelSpreading's 0.72
    text = " ".join(report.readout_lines(report.readout_rows(frame)))
    assert "kNN (nearest_labelled) in a label method's representation: helps for SDA; hurts for CNMF." in text


def test_the_readmes_row_names_the_references_standing_in_a_few_words():
    frame = track()
    ranking = ranking_over(frame, "acc")
    assert report.in_words(frame, ranking) == "references: LabelSpreading in the first group, kNN below 1"
    assert report.in_words(frame[frame["estimator"] != "knn"].drop(columns=[]), None) == ""

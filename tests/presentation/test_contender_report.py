"""The report of a contender run, built from tiny synthetic tracks: a contender better (or worse) than the
family in every cell is placed first (or last) and named against the methods it beats (or loses to); without
contenders the report names the method to use; the figures, notes and cost are written; the critical-difference
diagram highlights methods on request and keeps its CD label clear of the tick labels."""

import re

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from src.presentation import ranking
from src.presentation.contender_report import build, name_some, ordinal
from src.presentation.figures import figure_metrics_vs_k

FAMILY = {"GNMF": 0.60, "NMF": 0.55, "CNMF": 0.50, "KMeans": 0.45}  # each method's typical AC
FIT_SECONDS = {"GNMF": 2.0, "NMF": 1.0, "CNMF": 3.0, "KMeans": 0.5, "MyNMF": 4.0}
KS = range(2, 10)  # 2 data sets x 8 k = 16 blocks: enough for a Holm-adjusted Wilcoxon test to separate


def cells(contender: str | None, margin: float, datasets=("orl", "yale"), trials: int = 5, labels: bool = False,
          family=FAMILY, seed: int = 0) -> pd.DataFrame:
    """Every cell of one track: the family's AC near its typical value, the contender ``margin`` above the
    best family method of each cell (below the worst when negative); NMI follows AC."""
    rng = np.random.default_rng(seed)
    rows = []
    for dataset in datasets:
        for k in KS:
            for trial in range(trials):
                acc = {m: float(np.clip(typical + rng.normal(0, 0.03), 0, 1)) for m, typical in family.items()}
                if contender:
                    acc[contender] = (max(acc.values()) + margin if margin > 0 else min(acc.values()) + margin)
                for method, value in acc.items():
                    rows.append({"dataset": dataset, "method": method, "label": method,
                                 "estimator": method.lower(), "k": k, "trial": trial, "acc": value,
                                 "nmi": 0.9 * value, "fit_seconds": FIT_SECONDS.get(method, 1.0),
                                 "kmeans_seconds": 0.5})
    frame = pd.DataFrame(rows)
    if labels:
        frame["acc_unlabelled"], frame["nmi_unlabelled"] = frame["acc"] - 0.02, frame["nmi"] - 0.02
    return frame


def opening_of(report: str, method: str) -> str:
    """The opening of ``method`` (its name in bold, then one item per track and scoring), on one line."""
    start = report.index(f"**{method}**")
    head, items = report[start:].split("\n\n", 2)[:2]
    return " ".join(f"{head} {items}".split())


def linked_images(report: str) -> list[str]:
    return re.findall(r"!\[[^\]]*\]\(([^)]+)\)", report)


@pytest.fixture(scope="module")
def best(tmp_path_factory):
    out = tmp_path_factory.mktemp("best")
    frames = {"unsupervised": cells("MyNMF", 0.1), "labels10": cells("MyNMF", 0.1, labels=True, seed=1)}
    cost = {"cells_computed": 160, "cells_shipped": 640, "wall_seconds": 75.0, "workers": 2}
    path = build(out / "report", frames, ["MyNMF"], title="MyNMF against the family", twins={"MyNMF": "NMF"},
                 notes=["caltech101: the shipped family cells were computed on other data; left out"], cost=cost)
    return path, path.read_text()


@pytest.fixture(scope="module")
def worst(tmp_path_factory):
    out = tmp_path_factory.mktemp("worst")
    path = build(out, {"unsupervised": cells("MyNMF", -0.1)}, ["MyNMF"], title="A weak contender")
    return path.read_text()


@pytest.fixture(scope="module")
def your_data(tmp_path_factory):
    """One data set of the user's, no contender: GNMF and LCF equal in every cell but three, where LCF is a
    little lower (so that GNMF ranks first and no test separates the two); NMF and KMeans clearly below."""
    frame = cells(None, 0, datasets=("mine",), family={"GNMF": 0.6, "NMF": 0.45, "KMeans": 0.35})
    gnmf = frame[frame["method"] == "GNMF"].copy()
    lcf = gnmf.assign(method="LCF", label="LCF", estimator="lcf")
    lcf.iloc[:3, lcf.columns.get_loc("acc")] -= 0.001
    frame = pd.concat([frame, lcf], ignore_index=True)
    out = tmp_path_factory.mktemp("mine")
    path = build(out, {"unsupervised": frame}, [], title="Your data against the family")
    return out, path.read_text()


def test_the_report_opens_with_the_contender_first_of_all(best):
    path, report = best
    assert path.name == "report.md" and path.is_file()
    assert report.startswith("# MyNMF against the family\n\n**MyNMF** (extends NMF), in each track and scoring:")
    opening = opening_of(report, "MyNMF")
    first = opening.split("- Unsupervised track (every sample): ", 1)[1].split(" - ", 1)[0]
    assert first.startswith("1st of 5 by the pairwise tests (mean AC rank 1.00)")
    beaten = first.split("significantly better than ", 1)[1].split(", worse than", 1)[0]
    assert sorted(re.split(r", | and ", beaten)) == sorted(FAMILY)
    assert "worse than none" in first and "not separated from 0" in first
    assert "against its twin NMF: significantly better" in first
    # both scorings of the label track are in the opening too
    assert ("Semi-supervised track, 10% labelled (the unlabelled samples only): 1st of 5 by the pairwise tests "
            "(mean AC rank 1.00)") in opening


def test_the_rank_tables_put_the_contender_in_bold_above_the_family(best):
    _, report = best
    unsupervised = report.split("### Unsupervised track, scored on every sample", 1)[1].split("\n### ", 1)[0]
    rows = [line for line in unsupervised.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows[0].startswith("| method | orl | yale | mean rank | better than | worse than |")
    assert rows[1].startswith("| **MyNMF** |") and rows[1].endswith("| 1.00 | 4 | 0 |")
    assert "### Semi-supervised track, 10% labelled, scored on the unlabelled samples only" in report


def test_the_figures_linked_are_written(best):
    path, report = best
    images = linked_images(report)
    for name in ("unsupervised_all_cd_acc.png", "unsupervised_all_cd_nmi.png", "labels10_unlabelled_cd_acc.png",
                 "unsupervised_k_orl.png", "labels10_k_yale.png"):
        assert name in images
    for image in images:
        assert (path.parent / image).stat().st_size > 1000, image


def test_the_notes_and_the_cost_are_printed(best):
    _, report = best
    assert "- caltech101: the shipped family cells were computed on other data; left out" in report
    cost = report.split("## Cost", 1)[1]
    assert "160 cells computed by this run and 640 shipped family cells reused" in cost and "2 worker(s)" in cost
    orl = next(line for line in cost.splitlines() if line.startswith("| orl |"))
    # MyNMF 4 + 0.5 s per cell; the family 1, 1.5, 2.5, 3.5: median 2, slowest CNMF
    assert orl.startswith("| orl | 4.50 (") and orl.endswith("| 2.00 | 3.50 (CNMF) |")


def test_the_prose_lines_stay_under_120_characters(best):
    _, report = best
    long = [line for line in report.splitlines() if len(line) > 120 and not line.startswith("|")]
    assert not long


def test_a_contender_worse_than_the_family_is_said_to_be(worst):
    opening = opening_of(worst, "MyNMF")
    assert "5th of 5 by the pairwise tests (mean AC rank 5.00)" in opening
    assert "significantly better than no family method" in opening
    losing = opening.split("worse than ", 1)[1].split(";", 1)[0]
    assert sorted(re.split(r", | and ", losing)) == sorted(FAMILY)


def test_a_contender_missing_a_data_set_or_a_track_is_ranked_where_it_ran(tmp_path):
    three = cells("MyNMF", 0.1, datasets=("orl", "yale", "coil20"))
    partial = three[(three["method"] != "MyNMF") | (three["dataset"] != "coil20")]
    report = build(tmp_path, {"unsupervised": partial, "labels10": cells(None, 0, labels=True)}, ["MyNMF"],
                   title="partial").read_text()
    opening = opening_of(report, "MyNMF")
    assert "1st of 5 by the pairwise tests over the 2 data sets it ran on (orl, yale) (mean AC rank 1.00)" in opening
    assert "- Semi-supervised track, 10% labelled: not run." in opening
    table = report.split("### Unsupervised track, scored on every sample", 1)[1]
    # no cells on coil20 (the first column), so not ranked over all three data sets
    assert re.search(r"\| \*\*MyNMF\*\* \| - \| [0-9.]+ \| [0-9.]+ \| - \| - \| - \|", table)


def test_without_contenders_the_report_names_the_method_to_use(your_data):
    out, report = your_data
    opening = report.split("\n## ", 1)[0]
    assert ("- Unsupervised track (every sample): use **GNMF** (no Wilcoxon-Holm test finds a method better than "
            "it; better than 2 of 3 over") in " ".join(opening.split())
    assert "(k, trial) blocks of mine" in opening
    assert "; no test separates it from LCF, unbeaten too." in " ".join(opening.split())
    assert "**" not in report.split("## Unsupervised track", 1)[1].split("### ", 1)[0]  # nothing in bold
    for image in linked_images(report):
        assert (out / image).is_file()


def test_without_contenders_methods_no_test_tells_apart_are_not_recommended(tmp_path):
    frame = cells(None, 0, datasets=("mine",), family={"GNMF": 0.6, "NMF": 0.6, "KMeans": 0.6})
    frame["acc"] = 0.7  # every method finds the same partitions
    report = build(tmp_path, {"unsupervised": frame}, [], title="Too easy").read_text()
    opening = " ".join(report.split("\n## ", 1)[0].split())
    assert "no method stands out (Friedman p = 1" in opening and "use **" not in opening


def test_a_track_without_a_column_the_report_reads_is_refused(tmp_path):
    with pytest.raises(ValueError, match="fit_seconds"):
        build(tmp_path, {"unsupervised": cells("MyNMF", 0.1).drop(columns="fit_seconds")}, ["MyNMF"], title="x")


def test_places_and_lists_read_as_words():
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 102)] == \
        ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "102nd"]
    assert name_some(["A"]) == "A" and name_some(["A", "B", "C"]) == "A, B and C"
    assert name_some([f"M{i}" for i in range(8)]) == "M0, M1, M2, M3, M4 and 3 more"


# --- the diagram and the figure the report draws ----------------------------------------------------------------

def ranking_of(n_methods: int, seed: int = 0) -> ranking.Ranking:
    rng = np.random.default_rng(seed)
    columns = [f"M{i}" for i in range(n_methods)]
    return ranking.rank_methods(pd.DataFrame(rng.normal(size=(40, n_methods)) + np.linspace(0, 2, n_methods),
                                             columns=columns))


def test_the_cd_diagram_without_highlight_draws_every_method_alike(tmp_path):
    ranked = ranking_of(5)
    assert ranking.cd_diagram(ranked, tmp_path / "plain.png", "plain").stat().st_size > 1000
    fig = ranking.cd_figure(ranked, "plain")
    names = [t for t in fig.axes[0].texts if not t.get_text().startswith("CD")]
    assert len(names) == 5 and {t.get_fontweight() for t in names} == {"normal"}
    assert len({t.get_color() for t in names}) == 5  # a colour each, as before


def test_the_cd_diagram_highlights_the_methods_asked_for(tmp_path):
    ranked = ranking_of(5)
    assert ranking.cd_diagram(ranked, tmp_path / "marked.png", "marked", highlight=["M2", "absent"]).is_file()
    fig = ranking.cd_figure(ranked, "marked", highlight=["M2"])
    names = {t.get_text(): t for t in fig.axes[0].texts if not t.get_text().startswith("CD")}
    marked = [t for text, t in names.items() if re.search(r"(^| )M2( |$)", text)]
    assert len(marked) == 1 and marked[0].get_fontweight() == "bold"
    assert marked[0].get_color() == ranking.HIGHLIGHT_COLOR
    assert {t.get_color() for t in names.values() if t is not marked[0]} == {ranking.OTHERS_COLOR}


@pytest.mark.parametrize("n_methods", [3, 19])
def test_the_cd_label_stands_clear_of_the_tick_labels(n_methods):
    fig = ranking.cd_figure(ranking_of(n_methods), "a title")
    fig.draw_without_rendering()
    ax = fig.axes[0]
    label = next(t for t in ax.texts if t.get_text().startswith("CD = "))
    box = label.get_window_extent()
    ticks = [t.get_window_extent() for t in ax.xaxis.get_ticklabels(which="major") if t.get_text()]
    assert ticks and not any(box.overlaps(tick) for tick in ticks)
    assert box.y0 > max(tick.y1 for tick in ticks)
    title = next(t for t in fig.texts if t.get_text() == "a title")
    assert title.get_window_extent().y0 > box.y1


def test_the_figure_against_k_draws_the_background_grey_and_without_legend():
    frame = cells("MyNMF", 0.1, datasets=("orl",))
    fig = figure_metrics_vs_k(frame, "toy", ["MyNMF", "GNMF"], background=["NMF", "CNMF", "KMeans"], thick=["MyNMF"])
    try:
        ax = fig.axes[0]
        legend = [text.get_text() for text in fig.legends[0].get_texts()]
        assert legend == ["MyNMF", "GNMF"]
        grey = [line for line in ax.get_lines() if line.get_label().startswith("_")]
        assert len(grey) == 3 and {line.get_color() for line in grey} == {"0.8"}
        widths = {line.get_label(): line.get_linewidth() for line in ax.get_lines()}
        assert widths["MyNMF"] > widths["GNMF"] > widths["_NMF"]
        assert len(ax.collections) == 2  # bands for the two followed methods only
    finally:
        plt.close(fig)


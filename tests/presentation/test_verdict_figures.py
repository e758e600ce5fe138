"""src.presentation.verdict_figures: every published number against ours, and each paper's forest plot."""

import numpy as np
import pandas as pd
import pytest
from matplotlib.lines import Line2D

from src.presentation import verdict_figures as vf


def number(paper, dataset, kind, method, paper_value, ours, half, verdict, metric="AC", k=None, baseline=None):
    """A scorecard row as scorecard.csv holds it: ours - paper with a 90% interval of +-``half``."""
    difference = ours - paper_value
    name = {"per-k cell": f"{method} {metric}, table, k = {k}", "average": f"{method} {metric}, average over k",
            "quoted gain": f"{method} over {baseline}, {metric} gain (l.1)"}[kind]
    return {"paper": paper, "dataset": dataset, "kind": kind, "number": name, "key": f"{dataset}: {name}",
            "metric": metric, "method": method, "k": k, "baseline": baseline, "paper value": paper_value,
            "ours": ours, "difference": difference, "ci90 low": difference - half, "ci90 high": difference + half,
            "verdict": verdict}


def scorecard_table():
    rows = [number("lcf", "yale", "per-k cell", "LCF", 60.0, 58.0, 9.0, "can't tell", k=2),
            number("lcf", "yale", "per-k cell", "LCF", 55.0, 54.0, 2.0, "agrees", k=3),
            number("lcf", "yale", "average", "LCF", 57.5, 56.0, 3.0, "agrees"),
            number("lcf", "orl", "average", "LCF", 78.4, 62.2, 2.5, "differs"),
            number("lcf", "orl", "average", "NMF", 66.0, 77.3, 2.0, "differs", metric="NMI"),
            number("cnmf", "yale", "quoted gain", "CNMF", 5.0, 9.0, 1.5, "differs", baseline="NMF"),
            number("cnmf", "yale", "quoted gain", "CNMF", 4.0, 3.0, 6.0, "can't tell", metric="NMI", baseline="NMF"),
            {**number("cai", "coil20", "average", "GNMF", 87.6, 87.6, 1.0, "agrees"), "ours": None,
             "verdict": "not run"}]
    return pd.DataFrame(rows)


def plotted(ax) -> list[tuple[float, float]]:
    """The (x, y) of every marker drawn on ``ax``."""
    return [(float(x), float(y)) for line in ax.get_lines() if line.get_marker() not in ("None", None, "")
            for x, y in zip(line.get_xdata(), line.get_ydata())]


def test_points_put_the_papers_value_across_ours_up_and_our_interval_around_ours():
    points = vf.points(scorecard_table()).set_index("key")
    assert len(points) == 7  # the number not run is left out
    orl = points.loc["orl: LCF AC, average over k"]
    assert (orl["x"], orl["y"]) == (78.4, 62.2) and orl["panel"] == "levels"
    assert orl["low"] == pytest.approx(62.2 - 2.5) and orl["high"] == pytest.approx(62.2 + 2.5)
    assert points.loc["yale: CNMF over NMF, AC gain (l.1)", "panel"] == "gains"


def test_the_front_figure_draws_levels_and_gains_apart_with_every_verdict():
    table = scorecard_table()
    fig = vf.figure_published_vs_ours(table)
    levels, gains = fig.axes[0], fig.axes[1]
    assert (78.4, 62.2) in plotted(levels) and (5.0, 9.0) in plotted(gains)
    assert (5.0, 9.0) not in plotted(levels) and len(plotted(levels)) == 5 and len(plotted(gains)) == 2
    styles = {(line.get_color(), line.get_fillstyle()) for line in levels.get_lines() if line.get_marker() != "None"}
    assert {(vf.STYLE[v]["color"], vf.STYLE[v]["fillstyle"]) for v in vf.VERDICTS} <= styles
    assert fig.get_suptitle() == "7 published numbers against ours:\n2 agree, 3 differ, 2 can't tell"
    legends = [text.get_text() for ax in fig.axes for legend in ax.findobj(lambda a: hasattr(a, "get_texts"))
               for text in legend.get_texts()]
    assert "LCF (5)" in legends and "agrees (2)" in legends


def test_the_front_figures_alternative_text_says_what_it_shows_in_numbers():
    text = vf.published_vs_ours_alt(scorecard_table())
    assert text.startswith("7 published numbers against ours: 2 agree, 3 differ, 2 can't tell (LCF 2 agree, "
                           "2 differ, 1 can't tell; CNMF 0 agree, 1 differ, 1 can't tell).")
    assert "5 table values: ours below the paper's for 4, above for 1" in text
    assert "2 quoted gains: ours below the paper's for 1, above for 1" in text


def test_a_changed_number_moves_its_point(tmp_path):
    table = scorecard_table()
    before = vf.plot_published_vs_ours(table, tmp_path / "front.png").set_index("key")
    table.loc[3, ["ours", "difference"]] = [70.0, 70.0 - 78.4]
    after = vf.plot_published_vs_ours(table, tmp_path / "front.png").set_index("key")
    key = "orl: LCF AC, average over k"
    assert before.loc[key, "y"] == pytest.approx(62.2) and after.loc[key, "y"] == pytest.approx(70.0)
    assert (tmp_path / "front.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_forest_panels_follow_the_papers_tables_and_rows_are_labelled_briefly():
    rows = scorecard_table()
    lcf = rows[rows["paper"] == "lcf"]
    titles = [(dataset, title, list(group["key"])) for dataset, title, group in vf.forest_panels(lcf)]
    assert [t[1] for t in titles] == ["yale, AC (tables)", "orl, AC (averages over k)", "orl, NMI (averages over k)"]
    assert [vf.row_label(row) for _, row in lcf.iterrows()] == ["LCF k=2", "LCF k=3", "LCF avg", "LCF avg",
                                                                 "NMF avg"]
    cnmf = rows[rows["paper"] == "cnmf"]
    assert [t for _, t, _ in vf.forest_panels(cnmf)] == ["yale, quoted gains"]
    assert vf.row_label(cnmf.iloc[0]) == "CNMF over NMF, AC"


def test_the_forest_draws_each_difference_its_interval_and_the_readings_that_bring_it_back():
    rows = scorecard_table()
    lcf = rows[rows["paper"] == "lcf"]
    effects = pd.DataFrame([
        {"key": "orl: LCF AC, average over k", "reading": "tight_stopping", "label": "alternative", "effect": 14.0,
         "verdict": "agrees"},
        {"key": "orl: LCF AC, average over k", "reading": "eq41", "label": "text", "effect": -3.0,
         "verdict": "differs"},
        {"key": "yale: LCF AC, average over k", "reading": "argmax", "label": "alternative", "effect": 1.0,
         "verdict": "agrees"}])  # agrees already: nothing to bring back
    marks = vf.reading_marks(lcf, effects)
    assert list(marks["reading"]) == ["tight_stopping"]
    assert marks["at"].iloc[0] == pytest.approx(62.2 - 78.4 + 14.0)
    fig = vf.figure_forest(lcf, effects, title="LCF")
    orl = next(ax for ax in fig.axes if ax.get_title(loc="left").startswith("orl, AC"))
    assert plotted(orl) == [(pytest.approx(62.2 - 78.4), 0.0)]
    assert [text.get_text() for text in orl.texts if text.get_text()] == ["tight_stopping (alternative)"]
    arrows = [child for child in orl.get_children() if type(child).__name__ == "Annotation"]
    assert len(arrows) == 1 and arrows[0].xy[0] == pytest.approx(62.2 - 78.4 + 14.0)
    assert [t.get_text() for t in orl.get_yticklabels()] == ["LCF avg"]
    assert "Readings bring 1 of the numbers" in vf.forest_alt(lcf, effects)


def test_a_forest_grows_with_its_rows_and_splits_its_data_sets_into_columns():
    cells = [number("lcf", dataset, "per-k cell", method, 50.0, 51.0, 8.0, "can't tell", metric=metric, k=k)
             for dataset in ("yale", "orl") for metric in ("AC", "NMI") for method in ("NMF", "LCF")
             for k in range(2, 11)]
    many = vf.figure_forest(pd.DataFrame(cells))
    few = vf.figure_forest(pd.DataFrame(cells[:9]))
    assert many.get_figheight() > 2.5 * few.get_figheight()
    assert len(many.subfigs) == 2 and len(few.subfigs) == 1  # 72 rows: one column per data set
    heights = {round(ax.get_position().height / len(ax.get_yticks()), 4) for sub in many.subfigs
               for ax in sub.axes if ax.get_yticks().size}
    assert len(heights) == 1  # every panel gives its rows the same height


def test_no_comparable_number_means_no_forest_and_an_earlier_one_removed(tmp_path):
    rows = scorecard_table()
    path = tmp_path / "forest.png"
    path.write_bytes(b"old")
    assert vf.plot_forest(rows[rows["paper"] == "cai"], path) is False and not path.exists()
    assert vf.plot_forest(rows[rows["paper"] == "lcf"], path) is True and path.stat().st_size > 1000


def test_readings_are_named_label_free_first_within_their_room():
    marks = pd.DataFrame({"reading": ["best", "argmax", "eq41", "kmeans_once"],
                          "label": ["oracle", "alternative", "text", "alternative"]})
    assert vf.readings_text(marks.iloc[:2], characters=40) == "argmax (alternative), best (oracle)"
    assert vf.readings_text(marks.iloc[:2]) == "argmax (alternative) +1 more"  # 35 characters would not fit
    assert vf.readings_text(marks, characters=45) == "eq41 (text), argmax (alternative) +2 more"
    assert vf.readings_text(marks, characters=200).count("(") == 4


def test_every_verdict_has_its_own_colour_and_fill_and_every_paper_its_shape():
    assert len({(s["color"], s["fillstyle"]) for s in vf.STYLE.values()}) == 3
    assert len({s["fillstyle"] for s in vf.STYLE.values()}) == 3  # apart in grey print too
    assert len(set(vf.SHAPES.values())) == len(vf.SHAPES) and vf.shape("newpaper") == vf.shape("newpaper")
    assert all(isinstance(Line2D([], [], marker=vf.shape(p)), Line2D) for p in ("cnmf", "x"))
    assert np.isfinite(vf.DPI)

"""src.presentation.paper_report: a paper's report shows its forest plot with the scorecard's verdicts, and the
references beside the paper's method in a section of their own, never in its tables, claims or verdicts."""

import numpy as np
import pandas as pd
import yaml
from scipy.stats import wilcoxon

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


# -- the references beside the paper (issue 69): an extra, in a section of its own ------------------------------------
def with_directions(home, **extra):
    """The toy paper's published.yaml with its own method (CNMF, ``directions``) and ``extra`` keys."""
    path = home / "toy" / "published.yaml"
    published = yaml.safe_load(path.read_text())
    published["directions"] = {"datasets": ["yale"], "methods": ["CNMF"], "baselines": ["NMF"]}
    path.write_text(yaml.safe_dump({**published, **extra}))


def reference_rows(dataset="yale"):
    """Two references' rows on the toy's trials, above the toy's methods: a "best other" would pick one."""
    rows = pd.concat([fake_rows(dataset, "LabelSpreading", "label_spreading", 0.80, seed=4),
                      fake_rows(dataset, "kNN", "knn", 0.75, seed=5)])
    return rows.assign(given_unlabelled=rows["acc"] - 0.03, seed=0, config_hash="h", code_fingerprint="c")


def section_text(text, heading):
    """The text of the report's section ``heading`` up to the next one."""
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start:] if end < 0 else text[start:end]


def test_the_references_change_none_of_the_papers_tables_claims_verdicts_or_rankings(tmp_path):
    """The same runs with and without the references' rows give the same merged rows, tables, claims, verdicts
    and ranking: the references are set apart before anything reads the runs, even as a "best other"."""
    home, out = toy_run(tmp_path)
    with_directions(home, claims=yaml.safe_load((home / "toy" / "published.yaml").read_text())["claims"] + [
        {"dataset": "yale", "method": "CNMF", "baseline": "best other", "metric": "acc", "gain": 2.0,
         "source": "l.3"}])
    plain = paper_report.build("toy", [out / "runs"], out, home=home).read_text()
    kept = {name: (out / name).read_text() for name in ("table_yale.csv", "table_yale.md", "table_yale_grid.csv")}
    merged = pd.read_csv(out / "results.csv")
    rows, compared = paper_report.scorecard_rows("toy", out / "results.csv", out.parent, home)
    assert not (out / paper_report.REFERENCES_FILE).exists()
    (out / "runs" / "references").mkdir()
    reference_rows().to_csv(out / "runs" / "references" / "results.csv", index=False)
    text = paper_report.build("toy", [out / "runs"], out, home=home).read_text()
    assert {name: (out / name).read_text() for name in kept} == kept
    # the same rows and columns (the runs' union orders the columns by the files read first)
    pd.testing.assert_frame_equal(pd.read_csv(out / "results.csv")[list(merged)], merged)
    assert set(pd.read_csv(out / "results.csv")) == set(merged)
    again, compared_again = paper_report.scorecard_rows("toy", out / "results.csv", out.parent, home)
    pd.testing.assert_frame_equal(again.reset_index(drop=True), rows.reset_index(drop=True))
    assert compared_again == compared
    for heading in ("## Our tables", "## The paper's quoted gains, beside ours", "## Direction of the main claims",
                    "## Ranking"):
        assert section_text(text, heading) == section_text(plain, heading), heading
    assert "LabelSpreading" not in text.replace(section_text(text, paper_report.REFERENCES_HEADING), "")
    assert len(pd.read_csv(out / paper_report.REFERENCES_FILE)) == len(reference_rows())
    # a merged results.csv that holds them (written by hand, or before they were set apart) is read without them
    pd.concat([merged, reference_rows()]).to_csv(tmp_path / "merged.csv", index=False)
    numbers = paper_report.paper_numbers("toy", tmp_path / "merged.csv", home)
    assert [(r["key"], r["ours"]) for r in numbers] == \
        [(r["key"], r["ours"]) for r in paper_report.paper_numbers("toy", out / "results.csv", home)]
    best_other = [r for r in numbers if r["kind"] == "quoted gain" and r["baseline"] == "best other"][0]
    assert best_other["wilcoxon"]["baseline"] == "GNMF"  # the best of the paper's methods, not a reference


def test_the_references_section_gives_the_means_and_the_paired_tests_of_its_frame():
    """The section's numbers, computed again here: the means with pandas, the one-sided Wilcoxon p-values with
    scipy, Holm's adjustment over the section's four tests by hand."""
    rng = np.random.default_rng(7)
    cells = pd.DataFrame([{"dataset": "yale", "k": k, "trial": t} for k in (2, 3, 4) for t in range(5)])
    levels = {"CCF": (0.60, "ccf"), "LabelSpreading": (0.70, "label_spreading"), "kNN": (0.66, "knn")}
    frame = pd.concat([cells.assign(method=m, estimator=e, acc=level + 0.03 * rng.standard_normal(len(cells)),
                                    nmi=0.5 + 0.03 * rng.standard_normal(len(cells)),
                                    given_unlabelled=level - 0.05 + 0.03 * rng.standard_normal(len(cells)))
                       for m, (level, e) in levels.items()], ignore_index=True)
    table_rows, references = paper_report.split_references(frame)
    published = {"directions": {"datasets": ["yale"], "methods": ["CCF", "CF"], "baselines": ["CF"]}}
    lines = paper_report.references_section(table_rows, references, published)
    assert lines[0] == paper_report.REFERENCES_HEADING and "the paper did not compare CCF with a classifier" in \
        lines[2] and "an extra" in lines[2].lower()
    for method in levels:
        rows = frame[frame["method"] == method]
        ac, nmi, given = (100 * rows.groupby("k")[c].mean().mean() for c in ("acc", "nmi", "given_unlabelled"))
        best = ", best" if method == "LabelSpreading" else ""
        label = method if method == "CCF" else f"{method} (reference{best})"
        assert f"| yale | {label} | {ac:.2f} | {nmi:.2f} | {given:.2f} | 15 |" in lines
    pivot = frame.pivot_table(index=["k", "trial"], columns="method", values=["acc", "nmi"])
    p = {}
    for metric in ("acc", "nmi"):
        differences = pivot[metric]["CCF"] - pivot[metric]["LabelSpreading"]
        p[metric] = [wilcoxon(differences, alternative=side).pvalue for side in ("greater", "less")]
    flat = sorted((value, key) for key, pair in p.items() for value in pair)
    adjusted, running = {}, 0.0
    for i, (value, key) in enumerate(flat):
        running = max(running, min(1.0, (len(flat) - i) * value))
        adjusted[(key, value)] = running
    sentence = [line for line in lines if line.startswith("- **yale**")][0]
    for metric, name in (("acc", "AC"), ("nmi", "NMI")):
        gain = 100 * (frame[frame["method"] == "CCF"].groupby("k")[metric].mean().mean()
                      - frame[frame["method"] == "LabelSpreading"].groupby("k")[metric].mean().mean())
        greater, less = (adjusted[(metric, value)] for value in p[metric])
        word = "better than" if gain > 0 and greater < 0.05 else "worse than" if gain < 0 and less < 0.05 else \
            "not separated from"
        shown = greater if gain > 0 else less
        assert f"{word} {'LabelSpreading, the best reference,' if metric == 'acc' else 'it'} in {name} " \
               f"({gain:+.2f} points, p (Holm) = {shown:.3g}, 15 pairs)" in sentence
    assert "worse than LabelSpreading" in sentence  # ten points below it, on fifteen pairs


def test_without_references_rows_the_report_has_no_such_section(tmp_path):
    home, out = toy_run(tmp_path)
    with_directions(home)
    (out / paper_report.REFERENCES_FILE).write_text("an earlier build's references\n")
    text = paper_report.build("toy", [out / "runs"], out, home=home).read_text()
    assert paper_report.REFERENCES_HEADING not in text and not (out / paper_report.REFERENCES_FILE).exists()
    assert paper_report.references_section(pd.read_csv(out / "results.csv"), pd.read_csv(out / "results.csv").iloc[:0],
                                           {"directions": {"methods": ["CNMF"]}}) == []

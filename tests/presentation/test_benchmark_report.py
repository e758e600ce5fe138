"""The family benchmark's report, built from a toy track's runs: the tables are the rows' means, each
scoring is ranked, the papers' claims are decided or marked not run, and the cost is counted."""

import re
import shutil

import numpy as np
import pandas as pd
import pytest
from helpers import in_process, toy_benchmark, toy_papers

import src.running.pool as pool
from src.presentation import benchmark_report
from src.presentation.benchmark_report import short_name


@pytest.fixture(scope="module")
def toy_report(tmp_path_factory):
    root = tmp_path_factory.mktemp("benchmark")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pool, "run_local", in_process())
        reproduction, overrides = toy_papers(root, ("toy",))
        pool.run_pool(reproduction, overrides, 1)
        out = root / "outputs/benchmark"
        pool.run_pool([toy_benchmark(root)], overrides, 1, out, sources=reproduction)
    shutil.move(out / "toylabels", out / "labels10")  # the report reads the project's track names
    home = root / "homes"
    for track in ("labels10", "unsupervised"):
        (home / track).mkdir(parents=True)
        (home / track / "reproduce.yaml").write_text("sweeps:\n  - []\n")
    return out, benchmark_report.build(out, home).read_text()


def test_a_method_is_named_without_its_parameters():
    assert short_name("GNMF(alpha=100.0)") == "GNMF" and short_name("CNMF-KL") == "CNMF-KL"


@pytest.mark.integration
def test_the_tables_hold_the_rows_means_under_both_scorings(toy_report):
    out, report = toy_report
    frame = pd.concat(pd.read_csv(path) for path in sorted((out / "labels10/runs").glob("*/results.csv")))
    assert "scored on every sample" in report and "scored on the unlabelled samples only" in report
    for column in ("acc", "acc_unlabelled"):
        for method, value in (frame.groupby("method")[column].mean() * 100).items():
            assert re.search(rf"\| {method} \| \**{value:.1f}\**", report), (column, method)
    assert "Kendall's tau between the mean AC ranks of the two scorings" in report
    assert (out / "labels10_all_cd_yale_acc.png").stat().st_size > 1000
    assert (out / "labels10_figure_yale.png").is_file()
    assert "Unsupervised track (not run)" in report


@pytest.mark.integration
def test_the_mean_tables_count_better_and_worse_and_name_the_first_group(toy_report):
    _, report = toy_report
    table = report.split("#### Mean AC", 1)[1].split("\n#### ", 1)[0]
    assert "| method | yale | mean rank | better than | worse than |" in table and "| groups |" not in table
    rows = [line for line in table.splitlines() if re.match(r"\| \w", line) and "mean rank" not in line]
    assert len(rows) == 4 and all(re.search(r"\| [\d.]+ \| \d+ \| \d+ \|$", row) for row in rows)
    assert re.search(r"^(\*\*\S+\*\* \(better than \d of 3, mean AC [\d.]+\) is first: no Wilcoxon-Holm|"
                     r"The first group is the \d methods that no Wilcoxon-Holm)", table, re.M)
    assert "in colour, with mean ± std bands, the first 3 methods by the pairwise AC tests" in report
    assert "each paper's own method (CNMF; marked 'paper')" in report


@pytest.mark.integration
def test_each_papers_claim_is_decided_or_marked_not_run(toy_report):
    _, report = toy_report
    claims = report.split("## The papers' claims against the whole family", 1)[1].split("\n## ", 1)[0]
    cnmf = [line for line in claims.splitlines() if line.startswith("| cnmf |")]
    assert cnmf and re.search(r"\| (holds|contradicted|undecided) \|", cnmf[0])
    assert "| lcf | unsupervised | LCF | - | not run |" in claims
    assert "| pcgnmf |" in claims and "not run" in [line for line in claims.splitlines() if "| pcgnmf |" in line][0]


@pytest.mark.integration
def test_the_cost_counts_the_cells_copied_from_the_reproduction(toy_report):
    _, report = toy_report
    assert "16 cells: 4 computed, 0 shared between tracks (computed once), 12 copied" in report


@pytest.mark.integration
def test_the_provenance_names_the_runs_the_tables_come_from(toy_report):
    out, report = toy_report
    runs = sorted((out / "labels10/runs").glob("*/results.csv"))
    provenance = report.split("## Provenance", 1)[1]
    assert f"- The results come from {len(runs)} run directories:" in provenance and len(runs) > 0
    assert "- Commands of the runs:" in provenance and "  - `" in provenance.split("- Commands of the runs:")[1]


@pytest.mark.integration
def test_the_front_page_gets_a_row_for_the_benchmark(toy_report):
    from src.presentation import front_page

    out, report = toy_report
    row = front_page.benchmark_row(out)
    assert row.startswith("| **the family** | `make benchmark` |")
    assert "(4 cells computed, 12 copied from the reproduction) |" in row  # none on disk before the run
    leader = re.search(r"\| 1 \| ([\w-]+) \| [\d.]+ \| [\d.]+ \| \d+ \| \d+ \|",
                       report.split("#### AC, over all", 1)[1]).group(1)  # first placed by the pairwise tests
    assert re.search(rf"semi-supervised track, 10% labelled: ({leader} first|first group {leader}\b)", row)
    assert front_page.benchmark_row(out / "absent") is None


def test_a_label_tracks_label_free_methods_are_said_to_share_the_unsupervised_tracks_cells():
    cells = [{"dataset": "orl", "label": label, "method": label, "estimator": estimator, "k": 2, "trial": trial,
              "acc": acc, "nmi": 0.5} for label, estimator, trial, acc in
             (("NMF", "nmf", 0, 0.7), ("NMF", "nmf", 1, 0.8), ("CNMF", "cnmf", 0, 0.9), ("kNN", "knn", 0, 0.9))]
    track = pd.DataFrame(cells)
    alone = track[(track["estimator"] == "nmf") & (track["trial"] == 0)].copy()
    text = " ".join(benchmark_report.shared_note(track, alone))
    # CNMF takes labels, kNN is a reference: neither is counted
    assert "1 label-free methods" in text and "1 of their 2 cells serve both tracks" in text
    assert "0 of their 2 cells" in " ".join(benchmark_report.shared_note(track, None))
    assert benchmark_report.shared_note(track[track["estimator"].isin(["cnmf", "knn"])], alone) == []


def track(typical: dict, datasets=("orl", "yale"), ks=range(2, 10), trials: int = 5, seed: int = 0) -> pd.DataFrame:
    """Every cell of a toy track: each method's AC near its ``typical`` value, NMI following it."""
    rng = np.random.default_rng(seed)
    rows = [{"dataset": dataset, "method": method, "label": method, "estimator": method.lower(), "k": k,
             "trial": trial, "acc": float(np.clip(value + rng.normal(0, 0.01), 0, 1)), "nmi": 0.9 * value}
            for dataset in datasets for k in ks for trial in range(trials) for method, value in typical.items()]
    return pd.DataFrame(rows)


def test_the_rank_table_counts_the_methods_each_one_is_significantly_better_and_worse_than():
    # A and B too close to be separated; every other pair 10 points apart: 16 (data set, k) blocks separate them
    frame = track({"A": 0.80, "B": 0.80, "C": 0.60, "D": 0.40})
    ranking = benchmark_report.ranking_over(frame, "acc")
    lines = benchmark_report.means_table(frame, "acc", ranking)
    assert lines[0] == "| method | orl | yale | mean rank | better than | worse than |"
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:6]]
    assert {row[0]: row[-2:] for row in cells} == {"A": ["2", "0"], "B": ["2", "0"], "C": ["1", "2"],
                                                  "D": ["0", "3"]}
    assert set(ranking.leaders) == {"A", "B"} and ranking.order[2:] == ("C", "D")
    assert lines[-1].startswith("The first group is the 2 methods that no Wilcoxon-Holm test (alpha = 0.05) finds "
                                "any method better than: **")
    assert "of the other 3 ranked methods" in " ".join(lines)
    # a method run on one data set only is listed, unranked
    partial = pd.concat([frame, track({"E": 0.9}, datasets=("orl",))])
    table = benchmark_report.rank_table(partial, "acc", benchmark_report.ranking_over(partial, "acc"))
    assert re.fullmatch(r"\| E \| \*\*\d+\.\d\*\* \| - \| - \| - \| - \|", table[-1])


def test_the_first_group_of_a_method_every_test_separates_is_it_alone():
    frame = track({"A": 0.9, "B": 0.7, "C": 0.5})
    ranking = benchmark_report.ranking_over(frame, "acc")
    assert ranking.leaders == ("A",)
    (line,) = benchmark_report.answer_lines(ranking, "NMI")
    assert re.fullmatch(r"\*\*A\*\* \(better than 2 of 2, mean NMI (89\.\d|90\.\d)\) is first: no Wilcoxon-Holm test "
                        r"\(alpha = 0\.05\) finds any method better than it\.", line)


def test_a_figure_against_k_colours_the_first_three_and_the_papers_methods_only(monkeypatch, tmp_path):
    import matplotlib.pyplot as plt

    from src.presentation.figures import figure_metrics_vs_k

    typical = {"GNMF": 0.9, "NMF": 0.8, "CF": 0.7, "KMeans": 0.6, "CNMF": 0.5, "SemiGNMF": 0.4, "LCF": 0.85}
    frame = track(typical, datasets=("orl",))
    figures = []
    monkeypatch.setattr(benchmark_report, "plot_metrics_vs_k",
                        lambda rows, title, path, methods=None, caption=None, **kw:
                        figures.append(figure_metrics_vs_k(rows, title, methods, caption, **kw)))
    assert benchmark_report.in_colour(frame) == {"GNMF": "GNMF (#1)", "LCF": "LCF (#2, paper)", "NMF": "NMF (#3)",
                                                 "CNMF": "CNMF (#6, paper)"}
    benchmark_report.k_figure(frame, "toy", tmp_path / "toy.png")
    fig, = figures
    try:
        ax = fig.axes[0]
        assert [t.get_text() for t in fig.legends[0].get_texts()] == ["GNMF (#1)", "LCF (#2, paper)", "NMF (#3)",
                                                                        "CNMF (#6, paper)"]
        grey = sorted(line.get_label() for line in ax.get_lines() if line.get_color() == "0.8")
        assert grey == ["_CF", "_KMeans", "_SemiGNMF"]  # thin, grey, out of the legend
        assert len(ax.collections) == 4  # a band for each coloured method only
        widths = {line.get_label(): line.get_linewidth() for line in ax.get_lines()}
        assert widths["NMF (#3)"] > widths["CNMF (#6, paper)"] > widths["_CF"]  # the leaders thick
        assert "the other 3 methods" in fig._supxlabel.get_text()
    finally:
        plt.close(fig)


def mean_rank_trap(good: int = 40, bad: int = 9, seed: int = 0) -> pd.DataFrame:
    """A constructed benchmark on which the mean ranks and the pairwise tests disagree: W wins ``good`` of the
    (data set, k) blocks by 15 points and falls to last, 11 points down, in ``bad`` of them; M is second in
    every block W wins and first in the others; four fillers sit between. M has the better mean rank, and the
    test of the two finds W better."""
    rng = np.random.default_rng(seed)
    rows = []
    for block in range(good + bad):
        values = {"W": 0.95 if block < good else 0.69, "M": 0.80,
                  **{f"F{i}": 0.71 + 0.02 * i for i in range(4)}}
        for method, value in values.items():
            rows.append({"dataset": f"d{block:02d}", "method": method, "label": method, "estimator": method.lower(),
                         "k": 2, "trial": 0, "acc": value + rng.uniform(-0.004, 0.004), "nmi": value})
    return pd.DataFrame(rows)


def test_the_answer_names_the_method_the_pairwise_tests_name_where_the_mean_ranks_disagree():
    from src.presentation import front_page

    frame = mean_rank_trap()
    ranking = benchmark_report.ranking_over(frame, "acc")
    assert ranking.methods[0] == "M" and ranking.better("W", "M")  # the trap is set: M first by mean rank
    assert ranking.leaders == ("W",) and ranking.order[:2] == ("W", "M")
    lines = benchmark_report.means_table(frame, "acc", ranking)
    assert lines[2].startswith("| W |")  # the table's first row is the first group's
    assert lines[-2].startswith("**W** (better than 5 of 5, mean AC ") and "is first" in lines[-2]
    assert lines[-1].startswith("Mean ranks and pairwise tests disagree: M has the best mean rank (")
    assert "finds W significantly better than M" in lines[-1] and "W is higher in 40 of 49 blocks" in lines[-1]
    assert front_page.first_words(ranking) == "W first, better than every other (M has the best mean rank, but W beats it)"
    claim = benchmark_report.claim_verdict(ranking, ["W"], [m for m in ranking.methods if m != "W"])
    assert claim.verdict == "holds"  # no mean-rank condition: W is better than each in its own test
    assert benchmark_report.claim_verdict(ranking, ["M"], ["W"]).verdict == "contradicted"


def test_where_the_mean_ranks_agree_with_the_tests_no_disagreement_is_said():
    ranking = benchmark_report.ranking_over(track({"A": 0.9, "B": 0.7, "C": 0.5}), "acc")
    assert benchmark_report.disagreements(ranking) == [] and len(benchmark_report.answer_lines(ranking, "AC")) == 1


def test_the_references_left_out_of_the_tuned_rankings_are_the_ones_without_tuned_rows():
    fixed = pd.DataFrame({"method": ["SDA", "LabelSpreading", "kNN"], "estimator": ["sda", "label_spreading", "knn"]})
    tuned_with = pd.DataFrame({"method": ["SDA", "kNN"]})
    sentence = benchmark_report.untuned_sentence({"labels10": fixed}, {"labels10": (tuned_with, None)})
    assert sentence == " LabelSpreading, a reference without shipped tuned cells, is left out of the tuned rankings."
    both = pd.DataFrame({"method": ["SDA", "kNN", "LabelSpreading"]})
    assert benchmark_report.untuned_sentence({"labels10": fixed}, {"labels10": (both, None)}) == ""
    assert "LabelSpreading, kNN, references" in benchmark_report.untuned_sentence(
        {"labels10": fixed}, {"labels10": (pd.DataFrame({"method": ["SDA"]}), None)})

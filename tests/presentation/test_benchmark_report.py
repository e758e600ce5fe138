"""The family benchmark's report, built from a toy track's runs: the tables are the rows' means, each
scoring is ranked, the papers' claims are decided or marked not run, and the cost is counted."""

import re
import shutil

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
    leader = re.search(r"\| (\w+) \| [\d.]+ \| [\d.]+ \| a \|", report.split("#### AC, over all", 1)[1]).group(1)
    assert f"semi-supervised track, 10% labelled: {leader} first" in row
    assert front_page.benchmark_row(out / "absent") is None


def test_a_label_tracks_references_are_checked_against_the_unsupervised_track():
    cells = [{"dataset": "orl", "label": label, "method": label, "estimator": estimator, "k": 2, "trial": trial,
              "acc": acc, "nmi": 0.5} for label, estimator, trial, acc in
             (("NMF", "nmf", 0, 0.7), ("NMF", "nmf", 1, 0.8), ("CNMF", "cnmf", 0, 0.9))]
    track = pd.DataFrame(cells)
    alone = track[track["estimator"] == "nmf"].copy()
    text = " ".join(benchmark_report.references_check(track, alone))
    assert "1 unsupervised references" in text and "2 of their 2 cells" in text  # CNMF takes labels: not checked
    alone.loc[alone["trial"] == 1, "acc"] = 0.75  # a reference that clustered otherwise is counted out
    assert "1 of their 2 cells" in " ".join(benchmark_report.references_check(track, alone))
    assert benchmark_report.references_check(track, None) == []

"""Cells another command computed: copied into the jobs that ask for them when their settings, trials and
code are equal, and computed again when the code differs."""

import json

import pandas as pd
import pytest
from helpers import in_process, toy_benchmark, toy_papers

import src.running.pool as pool
from src.running.pool import schedule

pytestmark = pytest.mark.integration  # each test runs pools of toy papers, several seconds

SCORES = ["acc", "nmi", "n_iter", "objective", "acc_unlabelled", "nmi_unlabelled"]


def rows(folder) -> pd.DataFrame:
    found = [json.loads(path.read_text()) for path in sorted(folder.rglob("cells/*.json"))]
    return pd.DataFrame(found).set_index(["method", "k", "trial"]).sort_index()


def test_a_benchmark_copies_the_reproductions_cells_and_computes_only_the_rest(tmp_path, monkeypatch):
    monkeypatch.setattr(pool, "run_local", in_process())
    reproduction, overrides = toy_papers(tmp_path, ("toy",))
    pool.run_pool(reproduction, overrides, 1, tmp_path / "reproduce-record")
    track = toy_benchmark(tmp_path)
    assert track.experiment == "experiment=benchmark/toylabels"
    dry = pool.run_pool([track], overrides, 1, dry_run=True, sources=reproduction)
    assert dry["copied"] == 12 and dry["to_compute"] == 16
    summary = pool.run_pool([track], overrides, 1, tmp_path / "record", sources=reproduction)
    assert summary["copied"] == 12 and summary["computed"] == 4  # KMeans, NMF, CNMF copied; CF computed
    ours, theirs = rows(tmp_path / "outputs/benchmark"), rows(tmp_path / "outputs/reproduce")
    pd.testing.assert_frame_equal(ours.loc[theirs.index, SCORES], theirs[SCORES])
    job = tmp_path / "outputs/benchmark/toylabels/runs/yale_NMF"
    assert json.loads((job / "provenance.json").read_text())["cells_reused"] == 4
    assert len(pd.read_csv(job / "results.csv")) == 4  # read back like the job's own rows
    table, _ = schedule.cell_table(tmp_path / "record")
    copied = table[table["status"] == "reused"]
    assert len(copied) == 12 and copied["shared_with"].str.contains("reproduce/toy/runs").all()
    assert (table.loc[table["method"] == "CF", "status"] == "computed").all()


def test_a_cell_computed_by_other_code_is_not_copied(tmp_path, monkeypatch):
    monkeypatch.setattr(pool, "run_local", in_process())
    reproduction, overrides = toy_papers(tmp_path, ("toy",))
    pool.run_pool(reproduction, overrides, 1)
    for path in (tmp_path / "outputs/reproduce/toy/runs/yale_NMF/cells").glob("*.json"):
        row = json.loads(path.read_text())
        path.write_text(json.dumps({**row, "code_fingerprint": "other code"}))
    summary = pool.run_pool([toy_benchmark(tmp_path, "kmeans,nmf")], overrides, 1, sources=reproduction)
    assert summary["copied"] == 4 and summary["computed"] == 4  # KMeans copied, NMF computed again


def test_one_clustering_serves_an_unsupervised_and_a_label_track_in_one_command_and_across_commands(
        tmp_path, monkeypatch):
    monkeypatch.setattr(pool, "run_local", in_process())
    _, overrides = toy_papers(tmp_path, ("toy",))
    alone = toy_benchmark(tmp_path, "kmeans,nmf", "toyalone", "unsupervised")
    labelled = toy_benchmark(tmp_path, "kmeans,nmf,cnmf", "toylabels")
    summary = pool.run_pool([alone, labelled], overrides, 1, tmp_path / "record")
    assert summary["cells"] == 20 and summary["computed"] == 12 and summary["shared"] == 8  # CNMF reads labels
    ours, theirs = rows(tmp_path / "outputs/benchmark/toylabels"), rows(tmp_path / "outputs/benchmark/toyalone")
    common = ["acc", "nmi", "ari", "n_iter", "objective", "partition"]
    pd.testing.assert_frame_equal(ours.loc[theirs.index, common], theirs[common])  # one clustering
    assert "acc_unlabelled" not in theirs and (theirs["n_labelled"] == 0).all()
    assert ours["acc_unlabelled"].notna().all() and (ours["n_labelled"] > 0).all()  # each track's own scoring

    again = tmp_path / "again"  # a later command adds the label track: the unsupervised cells on disk serve it
    _, overrides = toy_papers(again, ("toy",))
    alone = toy_benchmark(again, "kmeans,nmf", "toyalone", "unsupervised")
    labelled = toy_benchmark(again, "kmeans,nmf,cnmf", "toylabels")
    pool.run_pool([alone], overrides, 1)
    summary = pool.run_pool([labelled], overrides, 1, sources=[alone])
    assert summary["copied"] == 8 and summary["computed"] == 4
    copied = rows(again / "outputs/benchmark/toylabels")
    numbers = ["acc", "nmi", "ari", "acc_unlabelled", "nmi_unlabelled", "ari_unlabelled", "n_labelled", "partition"]
    pd.testing.assert_frame_equal(copied[numbers], ours[numbers])  # scored from the partition as if computed

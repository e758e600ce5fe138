"""src.presentation.front_page: the README's results table and the snapshot, from a reproduction's outputs."""

import json

import pandas as pd
import pytest
import yaml

from src.errors import UserError
from src.running.pool import schedule
from src.presentation import front_page
from src.reproduction import shipped


def outputs_of(tmp_path):
    """A finished toy reproduction: two papers, a scorecard, a schedule, reports with a figure, provenance."""
    home = tmp_path / "paper"
    for name, own in (("lcf", ["LCF"]), ("pcgnmf", ["PCGNMF"])):
        (home / name).mkdir(parents=True)
        (home / name / "reproduce.yaml").write_text("sweeps: [[]]\n")
        (home / name / "published.yaml").write_text(yaml.safe_dump({"directions": {"methods": own}}))
    out = tmp_path / "reproduce"
    for name in ("lcf", "pcgnmf"):
        (out / name).mkdir(parents=True)
        (out / name / "report.md").write_text(f"# {name}\n\n![fig](figure.png)\n")
        (out / name / "figure.png").write_bytes(b"png")
    (out / "all").mkdir()
    (out / "all" / "wall_seconds.txt").write_text("1800\n")
    (out / "README.md").write_text("# Scorecard\n")
    (tmp_path / "explain" / "lcf").mkdir(parents=True)
    (tmp_path / "explain" / "lcf" / "report.md").write_text("# readings of lcf\n")
    rows = [  # LCF on ORL comes back under a label-free reading, on Yale only under an oracle
        {"paper": "lcf", "dataset": "orl", "kind": "average", "number": "LCF AC, average over k", "verdict": "differs",
         "ours": 62.2, "paper value": 78.4, "cause": "agrees under: tight_stop (alternative); readings tried: x"},
        {"paper": "lcf", "dataset": "yale", "kind": "average", "number": "LCF AC, average over k",
         "verdict": "differs", "ours": 51.9, "paper value": 58.0, "cause": "agrees under: best_subrun (oracle)"},
        {"paper": "lcf", "dataset": "yale", "kind": "average", "number": "NMF AC, average over k",
         "verdict": "agrees", "ours": 50.0, "paper value": 51.0, "cause": ""},
        {"paper": "lcf", "dataset": "yale", "kind": "per-k cell", "number": "LCF AC, k=2", "verdict": "can't tell",
         "ours": 80.0, "paper value": 84.0, "cause": "the noise: ..."}]
    pd.DataFrame(rows).to_csv(out / "scorecard.csv", index=False)
    job = "outputs/reproduce/lcf/runs/yale_LCF"  # as schedule.csv records it
    cells = pd.DataFrame([{"paper": "lcf", "job": job, "k": 2, "status": "computed", "seconds": 600.0},
                          {"paper": "lcf", "job": job, "k": 2, "status": "shared", "seconds": 60.0},
                          {"paper": "pcgnmf", "job": job, "k": 3, "status": "reused", "seconds": 120.0},
                          {"paper": "pcgnmf", "job": job, "k": 3, "status": "failed", "seconds": 999.0}])
    cells.to_csv(out / "schedule.csv", index=False)
    (out / "schedule.json").write_text(json.dumps({"workers": 2, "cores": 2, "computed": 3, "wall_seconds": 1700}))
    run = out / "lcf" / "runs" / "yale_LCF"
    run.mkdir(parents=True)
    (run / "provenance.json").write_text(json.dumps({"git": {"commit": "abcdef0123", "dirty": False},
                                                     "machine": "x86_64", "hostname": "box", "cores_available": 2,
                                                     "ended": "2026-11-26T12:00:00+00:00"}))
    (out / "provenance.json").write_text(json.dumps({"git": {"commit": "1234567890", "dirty": False}}))
    return home, out


def test_the_table_is_written_from_the_outputs_with_its_stamp(tmp_path):
    home, out = outputs_of(tmp_path)
    lines = front_page.table(out, home)
    text = "\n".join(lines)
    lcf = next(line for line in lines if line.startswith("| LCF"))
    assert "`make reproduce-lcf`" in lcf and "| 11 min (~6 min) |" in lcf  # 660 s of work, 2 cores
    assert "| 4 | 1 / 2 / 1 |" in lcf
    assert "On orl LCF comes back under tight_stop (alternative)" in lcf
    assert "on yale LCF is reached only by an oracle (best_subrun)" in lcf
    assert "[report](docs/results/lcf/report.md)" in lcf
    pcgnmf = next(line for line in lines if line.startswith("| PCGNMF"))
    assert "| 0 | - |" in pcgnmf and "No published number" in pcgnmf
    assert "**30 min wall** on 2 cores" in text
    assert ("cells computed at commit abcdef0 on x86_64 box, 2 cores, finished 2026-11-26T12:00:00+00:00; "
            "reports written at commit 1234567") in text


def test_the_readme_part_between_the_markers_is_replaced_and_the_snapshot_copied(tmp_path):
    home, out = outputs_of(tmp_path)
    readme = f"# title\n\n{front_page.START}\nold table\n{front_page.END}\n\nthe rest\n"
    new = front_page.replace_between(readme, front_page.table(out, home))
    assert "old table" not in new and new.endswith(f"{front_page.END}\n\nthe rest\n")
    assert front_page.replace_between(new, front_page.table(out, home)) == new  # same outputs, same text
    copied = front_page.snapshot(out, tmp_path / "docs" / "results")
    names = sorted(p.relative_to(tmp_path / "docs" / "results").as_posix() for p in copied)
    assert names == ["README.md", "cell_costs.csv", "explain/lcf/report.md", "lcf/figure.png", "lcf/report.md",
                     "pcgnmf/figure.png", "pcgnmf/report.md", "scorecard.csv"]
    costs = schedule.published_costs(tmp_path / "docs" / "results" / "cell_costs.csv")
    assert costs == {("reproduce/lcf/runs/yale_LCF", 2): 330.0, ("reproduce/lcf/runs/yale_LCF", 3): 120.0}
    assert schedule.prior_seconds(costs, tmp_path / "elsewhere" / "reproduce" / "lcf" / "runs" / "yale_LCF", 3) == 120
    with pytest.raises(UserError, match="no .*markers"):
        front_page.replace_between("# no markers\n", [])


def test_without_a_reproduction_it_says_what_to_run(tmp_path):
    with pytest.raises(UserError, match="run make reproduce-all first"):
        front_page.table(tmp_path, tmp_path)


@pytest.mark.parametrize("copied, reused, note", [
    (0, 0, "0 copied from the reproduction)"),
    (0, 17000, "0 copied from the reproduction, 17,000 on disk from an earlier run)"),
    (2670, 2670, "2,670 copied from the reproduction)"),  # the copies are counted among the reused cells
    (2670, 2700, "2,670 copied from the reproduction, 30 on disk from an earlier run)")])
def test_the_benchmark_row_says_when_its_run_found_cells_of_an_earlier_one(tmp_path, monkeypatch, copied, reused,
                                                                            note):
    """A resumed benchmark's wall time is not a fresh clone's: the row says how many cells were on disk already."""
    (tmp_path / "report.md").write_text("# benchmark\n")
    (tmp_path / "wall_seconds.txt").write_text("2400\n")
    summary = {"computed": 5230, "copied": copied, "reused": reused, "workers": 2}
    monkeypatch.setattr(schedule, "cell_table", lambda folder: (pd.DataFrame(), summary))
    monkeypatch.setattr(front_page.benchmark_report, "load_track", lambda runs: None)
    row = front_page.benchmark_row(tmp_path)
    assert "**40 min wall** on 2 cores (5,230 cells computed, " + note in row


def test_a_benchmark_run_in_pieces_gives_the_sum_of_its_pieces_each_named(tmp_path, monkeypatch):
    """The row of a run done in pieces (runner.pieces) is the sum of the pieces' wall times, never the last's."""
    from src.reproduction import runner

    (tmp_path / "report.md").write_text("# benchmark\n")
    (tmp_path / "wall_seconds.txt").write_text("600\n")  # the last piece's own
    runner.add_piece(tmp_path, "python -m src.benchmark --tune --datasets yale orl", 2400,
                     {"computed": 30000, "copied": 0, "reused": 0, "workers": 2})
    runner.add_piece(tmp_path, "python -m src.benchmark --tune --datasets coil20", 1200,
                     {"computed": 4000, "copied": 0, "reused": 0, "workers": 2}, stopped=True)
    runner.add_piece(tmp_path, "python -m src.benchmark --tune --datasets coil20", 600,
                     {"computed": 9000, "copied": 0, "reused": 4000, "workers": 2})
    monkeypatch.setattr(schedule, "cell_table", lambda folder: (pd.DataFrame(), {"computed": 9000, "workers": 2}))
    monkeypatch.setattr(front_page.benchmark_report, "load_track", lambda runs: None)
    row = front_page.benchmark_row(tmp_path)
    assert "**70 min wall** on 2 cores, the sum of its 3 pieces (`--tune --datasets yale orl` 40 min; " \
           "`--tune --datasets coil20` 20 min (stopped); `--tune --datasets coil20` 10 min; 43,000 cells computed, " \
           "0 copied from the reproduction)" in row


def toy_benchmark(tmp_path):
    """Each track's runs of a toy benchmark on a data file of its own (X, y)."""
    import numpy as np
    from src.reproduction import contenders
    X, y = np.random.default_rng(0).random((6, 3)), np.array([0, 0, 0, 1, 1, 1])
    np.savez(tmp_path / "toy.npz", X=X, y=y)
    dataset = yaml.safe_load((front_page.papers.CONF_DIR / "dataset" / "file.yaml").read_text())
    dataset.update(path=str(tmp_path / "toy.npz"), name="toy")
    for track in contenders.TRACKS:
        run = tmp_path / "benchmark" / track / "runs" / "toy_NMF"
        run.mkdir(parents=True)
        (run / "config.yaml").write_text(yaml.safe_dump({"dataset": dataset, "seed": 0, "paths": {
            "data_dir": str(tmp_path / "data"), "mirror": None}}))
        pd.DataFrame({"dataset": "toy", "method": "NMF", "estimator": "nmf", "k": [2, 2], "trial": [0, 1],
                      "seed": 0, "acc": [0.5, 1.0], "nmi": [0.0, 1.0], "config_hash": "c",
                      "code_fingerprint": "f"}).to_csv(run / "results.csv", index=False)
    return X, y


def test_make_results_ships_the_family_cells_of_a_finished_benchmark(tmp_path, monkeypatch):
    """Each track's runs of a toy benchmark on a data file of its own -> the shipped file, with the data's digest;
    without a reproduction beside it, the README and the snapshot are left alone and the status is 0."""
    from src.reproduction import contenders, shipped

    X, y = toy_benchmark(tmp_path)
    monkeypatch.setattr(front_page, "track_datasets", lambda track: ["toy"])
    readme = tmp_path / "README.md"
    readme.write_text("unchanged\n")
    assert front_page.main(["--outputs", str(tmp_path / "reproduce"), "--readme", str(readme), "--snapshot",
                            str(tmp_path / "snapshot"), "--shipped", str(tmp_path / "cells.csv.gz")]) == 0
    cells = shipped.load(tmp_path / "cells.csv.gz")
    assert list(cells.columns) == list(shipped.COLUMNS) and len(cells) == 6
    assert sorted(set(cells["track"])) == sorted(contenders.TRACKS)
    assert set(cells["data_sha256"]) == {shipped.data_digest(X, y)}
    assert readme.read_text() == "unchanged\n" and not (tmp_path / "snapshot").exists()


def test_make_results_keeps_the_shipped_cells_whole_after_a_piece_of_the_benchmark(tmp_path, monkeypatch, caplog):
    """A benchmark run on some of its data sets (a piece, --datasets) does not replace the shipped cells; with no
    reproduction beside it there is nothing to publish (status 2, one line)."""
    caplog.set_level("INFO")
    toy_benchmark(tmp_path)
    monkeypatch.setattr(front_page, "track_datasets", lambda track: ["toy", "other"])
    readme = tmp_path / "README.md"
    readme.write_text("unchanged\n")
    assert front_page.main(["--outputs", str(tmp_path / "reproduce"), "--readme", str(readme), "--snapshot",
                            str(tmp_path / "snapshot"), "--shipped", str(tmp_path / "cells.csv.gz")]) == 2
    assert not (tmp_path / "cells.csv.gz").exists() and readme.read_text() == "unchanged\n"
    assert any("lacks labels10/other" in r.getMessage() for r in caplog.records)


def with_intervals(out, ours_orl=62.2):
    """Rewrite the toy's scorecard as the scorecard writes it now: intervals, ``brought back by``, ``readings
    tried``, short causes; ours on ORL is ``ours_orl``."""
    scores = pd.read_csv(out / "scorecard.csv")
    scores.loc[0, "ours"] = ours_orl
    scores["key"] = scores["dataset"] + ": " + scores["number"]
    scores["difference"] = scores["ours"] - scores["paper value"]
    scores["ci90 low"], scores["ci90 high"] = scores["difference"] - 3.0, scores["difference"] + 3.0
    scores["brought back by"] = ["tight_stop (alternative)", "best_subrun (oracle)", None, None]
    scores["readings tried"] = [2, 1, 0, 0]
    scores["cause"] = ["tight_stop (alternative) brings it back", "only an oracle brings it back: best_subrun",
                       None, "noise: 90% interval +-9.8"]
    scores.to_csv(out / "scorecard.csv", index=False)


def make_results(tmp_path, out, monkeypatch):
    """``make results`` on the toy outputs into a README and a docs index of tmp_path; returns both texts."""
    readme, index = tmp_path / "README.md", tmp_path / "docs" / "index.md"
    readme.write_text(f"# title\n\n{front_page.START}\nold table\n{front_page.END}\n")
    index.parent.mkdir(exist_ok=True)
    index.write_text(f"# docs\n\n{front_page.START}\nno figure yet\n{front_page.END}\n\n## more\n")
    assert front_page.main(["--outputs", str(out), "--readme", str(readme), "--index", str(index), "--snapshot",
                            str(tmp_path / "docs" / "results"), "--shipped", str(tmp_path / "cells.csv.gz")]) == 0
    return readme.read_text(), index.read_text()


def test_make_results_redraws_the_front_figure_from_the_outputs_and_a_changed_number_moves_its_point(
        tmp_path, monkeypatch):
    from src.presentation import verdict_figures
    home, out = outputs_of(tmp_path)
    monkeypatch.setattr(front_page.papers, "HOME", home)
    drawn = []
    draw = verdict_figures.figure_published_vs_ours
    monkeypatch.setattr(verdict_figures, "figure_published_vs_ours", lambda table: drawn.append(draw(table)) or drawn[-1])

    def points():  # every marker of the table values' panel, as drawn
        return [(float(x), float(y)) for line in drawn[-1].axes[0].get_lines() if line.get_marker() != "None"
                for x, y in zip(line.get_xdata(), line.get_ydata())]

    with_intervals(out)
    readme, index = make_results(tmp_path, out, monkeypatch)
    figure = tmp_path / "docs" / "results" / "published_vs_ours.png"
    assert figure.read_bytes()[:4] == b"\x89PNG"
    alt = "4 published numbers against ours: 1 agree, 2 differ, 1 can't tell (LCF 1 agree, 2 differ, 1 can't tell)."
    assert f"![{alt}" in readme and f"]({tmp_path}/docs/results/published_vs_ours.png)" in readme
    assert readme.index("published_vs_ours.png") < readme.index("| LCF (TNNLS 2014)")  # above the table
    assert "On orl LCF comes back under tight_stop (alternative)" in readme  # from the brought back by column
    assert f"![{alt}" in index and "](results/published_vs_ours.png)" in index and index.endswith("\n\n## more\n")
    assert (78.4, pytest.approx(62.2)) in points()
    with_intervals(out, ours_orl=70.0)
    readme, _ = make_results(tmp_path, out, monkeypatch)
    assert (78.4, pytest.approx(70.0)) in points() and (78.4, pytest.approx(62.2)) not in points()
    assert len(drawn) == 2


def test_an_older_scorecard_without_intervals_gets_no_figure_and_says_how_to_get_one(tmp_path, monkeypatch, caplog):
    home, out = outputs_of(tmp_path)
    monkeypatch.setattr(front_page.papers, "HOME", home)
    readme, index = make_results(tmp_path, out, monkeypatch)
    assert "published_vs_ours.png" not in readme + index and "has no ci90 columns" in caplog.text
    assert "The figure of every published number against ours appears here" in index
    assert "On orl LCF comes back under tight_stop (alternative)" in readme  # the old causes still read


def test_the_snapshot_copies_the_forest_plots_the_scorecards_figure_and_its_csv(tmp_path):
    home, out = outputs_of(tmp_path)
    (out / "published_vs_ours.png").write_bytes(b"png")
    (out / "scorecard.csv").write_text("paper,number\nlcf,LCF AC\n")
    (out / "lcf" / "forest.png").write_bytes(b"png")
    (tmp_path / "explain" / "lcf" / "forest.png").write_bytes(b"png")
    copied = front_page.snapshot(out, tmp_path / "snapshot")
    names = {p.relative_to(tmp_path / "snapshot").as_posix() for p in copied}
    assert {"published_vs_ours.png", "scorecard.csv", "lcf/forest.png", "explain/lcf/forest.png"} <= names


def test_a_paper_whose_readings_have_not_run_says_so_rather_than_under_any_reading(tmp_path):
    home = tmp_path / "papers"
    (home / "ccf").mkdir(parents=True)
    (home / "ccf" / "published.yaml").write_text(yaml.safe_dump({"directions": {"methods": ["CCF"]}}))
    gains = pd.DataFrame([{"paper": "ccf", "dataset": dataset, "kind": "quoted gain", "verdict": "differs",
                           "number": "CCF over CF, AC gain (l.1)", "ours": 1.0, "paper value": 9.0,
                           "brought back by": None, "readings tried": tried} for dataset, tried in
                          (("yale", 0), ("coil20", 0))])
    assert front_page.finding("ccf", gains, home) == ("None of its 2 quoted AC gains (yale, coil20) comes back; "
                                                      "its readings have not run yet.")
    gains["readings tried"] = 3
    assert front_page.finding("ccf", gains, home).endswith("comes back under any reading.")


def finished_benchmark(folder, monkeypatch):
    """A toy benchmark's outputs: its report, one figure, its schedule and wall time (no runs: the tracks read
    as empty)."""
    folder.mkdir(parents=True)
    (folder / "report.md").write_text("# the family\n")
    (folder / "answer_labels30.png").write_bytes(b"png")
    (folder / "wall_seconds.txt").write_text("600\n")
    job = "outputs/benchmark/labels30/runs/yale_NMF"
    pd.DataFrame([{"job": job, "k": 2, "status": "computed", "seconds": 3.0, "start": 10.0, "end": 14.0},
                  {"job": job, "k": 3, "status": "computed", "seconds": 5.0, "start": 20.0, "end": 26.0}]
                 ).to_csv(folder / schedule.SCHEDULE, index=False)
    (folder / "schedule.json").write_text(json.dumps({"workers": 2, "computed": 2, "reused": 0, "copied": 0}))
    monkeypatch.setattr(front_page.benchmark_report, "load_track", lambda runs: None)


def test_a_benchmark_without_a_reproduction_is_published_alone(tmp_path, monkeypatch):
    """The family's row, its report and figures and its costs are replaced; the papers' rows, their snapshot
    and the other costs stay."""
    finished_benchmark(tmp_path / "benchmark", monkeypatch)
    target = tmp_path / "docs" / "results"
    (target / "benchmark").mkdir(parents=True)
    (target / "benchmark" / "gone.png").write_bytes(b"old")
    (target / "lcf").mkdir()
    (target / "lcf" / "report.md").write_text("# lcf, kept\n")
    pd.DataFrame({"job": ["benchmark/labels30/runs/yale_NMF", "reproduce/lcf/runs/yale_LCF"], "k": [2, 2],
                  "seconds": [99.0, 7.5]}).to_csv(target / front_page.COSTS, index=False)
    readme = tmp_path / "README.md"
    readme.write_text(f"# title\n{front_page.START}\n| paper |\n| LCF | x |\n| **all of them** | y |\n"
                      f"| **the family** | `make benchmark` | old |\n\n<sub>stamp</sub>\n{front_page.END}\nrest\n")
    front_page.publish_benchmark(tmp_path / "benchmark", target, readme)
    text = readme.read_text()
    assert "old |" not in text and "| LCF | x |\n| **all of them** | y |\n| **the family** |" in text
    assert "**10 min wall** on 2 cores (2 cells computed" in text and text.endswith("<sub>stamp</sub>\n"
                                                                                    f"{front_page.END}\nrest\n")
    assert sorted(p.name for p in (target / "benchmark").iterdir()) == ["answer_labels30.png", "report.md"]
    assert (target / "lcf" / "report.md").read_text() == "# lcf, kept\n"
    costs = pd.read_csv(target / front_page.COSTS).set_index(["job", "k"])["seconds"]
    assert costs[("benchmark/labels30/runs/yale_NMF", 2)] == pytest.approx(4.0)  # the worker's seconds, not 99
    assert costs[("benchmark/labels30/runs/yale_NMF", 3)] == pytest.approx(6.0)
    assert costs[("reproduce/lcf/runs/yale_LCF", 2)] == pytest.approx(7.5)


def test_a_table_without_the_familys_row_gets_it_after_the_reproductions(tmp_path):
    text = f"{front_page.START}\n| **all of them** | y |\n\n<sub>s</sub>\n{front_page.END}\n"
    assert front_page.with_benchmark_row(text, "| **the family** | z |") == (
        f"{front_page.START}\n| **all of them** | y |\n| **the family** | z |\n\n<sub>s</sub>\n{front_page.END}\n")
    with pytest.raises(UserError, match="no row of make reproduce-all"):
        front_page.with_benchmark_row(f"{front_page.START}\n{front_page.END}\n", "| **the family** | z |")


def test_without_a_benchmark_report_nothing_is_published(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("unchanged\n")
    assert front_page.publish_benchmark(tmp_path / "benchmark", tmp_path / "docs", readme) == []
    assert readme.read_text() == "unchanged\n" and not (tmp_path / "docs").exists()


def test_a_tuned_benchmarks_row_names_its_command_and_each_label_tracks_tuned_first(tmp_path, monkeypatch):
    """With the tuned tables there, the row's command is ``--tune`` and each label track says who is first
    tuned; the unsupervised track, where nothing is chosen, says nothing of it."""
    from types import SimpleNamespace
    (tmp_path / "report.md").write_text("# benchmark\n")
    monkeypatch.setattr(schedule, "cell_table", lambda folder: (pd.DataFrame(), {"computed": 10, "workers": 2}))
    monkeypatch.setattr(front_page.benchmark_report, "load_track", lambda runs: "fixed")
    monkeypatch.setattr(front_page.tuning_report, "read", lambda folder, tracks: {t: ("rows", "searched")
                                                                                   for t in tracks})
    monkeypatch.setattr(front_page.tuning_report, "tuned_frame", lambda rows, frame: "tuned")
    first = {"fixed": ["CNMF", "SDA"], "tuned": ["SDA", "CNMF"]}

    def ranked(frame, metric):  # the first of each beats the second; the mean ranks agree
        order = first[frame]
        return SimpleNamespace(methods=tuple(order), leaders=tuple(order[:1]), better=lambda a, b: a == order[0],
                               beats=lambda m: order[1:] if m == order[0] else [])
    monkeypatch.setattr(front_page.references_report, "in_words", lambda frame, ranking: "")  # no references
    monkeypatch.setattr(front_page.benchmark_report, "ranking_over", ranked)
    row = front_page.benchmark_row(tmp_path)
    assert row.startswith("| **the family** | `python -m src.benchmark --tune` |")
    assert row.count("CNMF first, better than every other at fixed settings, SDA first, better than every other "
                     "with every method tuned alike") == 2
    assert "unsupervised track: CNMF first, better than every other." in row
    assert "By the pairwise AC tests (Wilcoxon-Holm)" in row


def test_a_benchmark_laid_out_from_the_shipped_cells_gets_a_row_without_a_cost(tmp_path, monkeypatch):
    """No schedule, no wall time: the row says where its cells come from, never a run's time."""
    from types import SimpleNamespace
    (tmp_path / "report.md").write_text("# benchmark\n")
    monkeypatch.setattr(front_page.benchmark_report, "load_track", lambda runs: "fixed")
    monkeypatch.setattr(front_page.tuning_report, "read", lambda folder, tracks: {})
    monkeypatch.setattr(front_page.references_report, "in_words", lambda frame, ranking: "")  # no references
    monkeypatch.setattr(front_page.benchmark_report, "ranking_over", lambda frame, metric: SimpleNamespace(
        methods=("B", "A"), leaders=("A",), better=lambda a, b: a == "A", beats=lambda m: ["B"] if m == "A" else [],
        mean_ranks={"B": 1.4, "A": 1.6}))
    assert front_page.benchmark_row(tmp_path) is None  # neither a run's schedule nor a lay-out
    (tmp_path / shipped.UNPACKED).write_text('{"files": {}, "code_fingerprints": []}\n')
    row = front_page.benchmark_row(tmp_path)
    assert row.startswith("| **the family** | `make benchmark` | cells shipped in `papers/benchmark/` (their run's "
                          "cost: [performance](docs/performance.md)) | - | - |")
    assert "unsupervised track: A first, better than every other (B has the best mean rank, but A beats it)" in row
    assert "wall" not in row


def test_a_time_is_given_in_hours_and_minutes_from_two_hours_on():
    assert [front_page.minutes(s) for s in (45, 90, 6000, 7170, 13500)] == \
        ["45 s", "2 min", "100 min", "2 h 0 min", "3 h 45 min"]

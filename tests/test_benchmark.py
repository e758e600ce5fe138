"""The family benchmark's entry point and its room (src/tuning/benchmark.py): its tracks, what it may copy,
and one line for what is missing."""

import pytest

from src import benchmark
from src.presentation import benchmark_report
from src.tuning import benchmark as room
from src.reproduction import homes as papers
from src.reproduction import rounds, runner
from src.running.pool import schedule


def test_the_tracks_are_the_homes_of_papers_benchmark():
    assert papers.names(benchmark_report.HOME) == ["labels10", "labels30", "unsupervised"]
    track = papers.load("labels30", benchmark_report.HOME, "benchmark")
    assert track.experiment == "experiment=benchmark/labels30"
    assert track.experiment_file().is_file() and track.home == benchmark_report.HOME / "labels30"
    assert benchmark_report.SECOND_OPINION.is_file()
    assert set(benchmark_report.CLAIMS) == set(papers.names()) - {"cai"}  # every paper with a claim has a track
    assert {track for track, _ in benchmark_report.CLAIMS.values()} <= set(papers.names(benchmark_report.HOME))


def test_datasets_narrow_the_familys_own_sweeps():
    track = papers.load("labels30", benchmark_report.HOME, "benchmark")
    assert room.narrowed(track, None) is track
    assert room.narrowed(track, ["yale"]).sweeps == (("dataset=yale",), ("dataset=yale", "method=ntf"))
    assert room.narrowed(track, ["yale", "caltech101"]).sweeps[1] == ("dataset=yale", "method=ntf")
    assert room.narrowed(track, ["caltech101"]).sweeps == (("dataset=caltech101",),)  # NTF: images only


def test_methods_narrow_the_familys_own_sweeps_to_those_named():
    track = papers.load("labels30", benchmark_report.HOME, "benchmark")
    runs = ["sda", "knn", "label_spreading"]
    assert room.of_methods(track, runs, None) is track
    assert room.of_methods(track, runs, ["knn", "label_spreading"]).sweeps == (("method=knn,label_spreading",),)
    assert room.of_methods(track, runs, ["ntf"]).sweeps == (("dataset=orl,yale,coil20,mnist1000", "method=ntf"),)
    both = room.of_methods(room.narrowed(track, ["yale"]), runs, ["sda", "ntf"])
    assert both.sweeps == (("dataset=yale", "method=sda"), ("dataset=yale", "method=ntf"))
    assert room.of_methods(track, runs, ["cnmf"]).sweeps == ()  # not among the experiment's methods


def test_it_copies_from_the_reproduction_only_where_one_can_be(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no outputs/reproduce here
    assert room.sources([]) == []
    assert [p.name for p in room.sources(["paths.output_dir=/elsewhere"])] == \
        [p.name for p in papers.in_order()]
    (tmp_path / "outputs/reproduce").mkdir(parents=True)
    assert len(room.sources([])) == len(papers.names())


def test_the_old_selection_of_a_track_in_overrides_is_read_as_the_new_with_one_warning(tmp_path, monkeypatch,
                                                                                      caplog):
    monkeypatch.chdir(tmp_path)  # no reproduction to copy from: no paper's jobs composed
    given = []
    monkeypatch.setattr(rounds, "run_pool", lambda chosen, overrides, *rest, **options: given.append(overrides))
    monkeypatch.setattr(benchmark.signal, "signal", lambda *args: None)  # this process keeps its SIGTERM
    with caplog.at_level("WARNING"):
        assert benchmark.main(["--tracks", "labels10", "--dry-run",
                               "--overrides", "+benchmark/labels30=experiment"]) == 0
    assert given == [["experiment=benchmark/labels30"]]
    assert [r.getMessage() for r in caplog.records if r.levelname == "WARNING"] == \
        ["+benchmark/labels30=experiment is deprecated and will be removed in the next release: "
         "write experiment=benchmark/labels30"]


def test_the_pool_is_handed_the_jobs_tables_and_figure(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    given = []
    monkeypatch.setattr(rounds, "run_pool", lambda chosen, overrides, *rest, **options: given.append(options))
    monkeypatch.setattr(benchmark.signal, "signal", lambda *args: None)  # this process keeps its SIGTERM
    written = []
    monkeypatch.setattr(benchmark, "write_reports", lambda frame, out: written.append(out) or [out])
    benchmark.main(["--tracks", "labels10", "--dry-run"])
    job_report = given[0]["job_report"]
    assert job_report(None, tmp_path / "labels10" / "runs" / "yale_NMF") == [tmp_path / "labels10" /
                                                                            "runs" / "yale_NMF"]
    # a tuned setting's or fold's job writes none: the tuned report reads them whole
    assert job_report(None, tmp_path / "tuned" / "labels10" / "folds" / "0" / "yale_SDA") == []
    assert len(written) == 1


def test_a_stopped_run_is_recorded_as_a_stopped_piece(tmp_path, monkeypatch):
    """A piece stopped before its end (SIGTERM, Ctrl-C) spent its time: pieces.json names it, stopped, with the
    cells its pool finished, so that the whole's sum counts it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(benchmark.signal, "signal", lambda *args: None)  # this process keeps its SIGTERM

    def stopped(chosen, overrides, workers, out, **options):
        schedule.write_record(out, [{"paper": "labels10"}], {"computed": 7, "copied": 0, "reused": 0, "workers": 2})
        raise KeyboardInterrupt

    monkeypatch.setattr(rounds, "run_pool", stopped)
    assert benchmark.main(["--tracks", "labels10", "--datasets", "yale"]) == 130
    [piece] = runner.pieces(tmp_path / "outputs" / "benchmark")
    assert piece["stopped"] and piece["computed"] == 7
    assert piece["command"] == "python -m src.benchmark --tracks labels10 --datasets yale"
    assert not (tmp_path / "outputs" / "benchmark" / runner.WALL).exists()  # it never looks finished


def test_a_report_without_runs_is_one_line_and_status_1(tmp_path, monkeypatch, caplog):
    monkeypatch.chdir(tmp_path)
    with caplog.at_level("ERROR"):
        assert benchmark.main(["--report-only"]) == 1
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and "run `make benchmark` first" in errors[0]


@pytest.mark.parametrize("argv, message", [
    (["--grid", "alpha=1,10"], "--grid tunes a --method"),
    (["--tune", "--method", "fixtures.outside.estimators:PlainNMF"], "--tune tunes the family's own benchmark"),
    (["--methods", "knn"], "--methods narrows a tuned run"),
])
def test_tune_and_grid_given_where_they_do_not_apply_are_one_line_and_status_2(tmp_path, monkeypatch, caplog, argv,
                                                                               message):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(benchmark.signal, "signal", lambda *args: None)
    with caplog.at_level("ERROR"):
        assert benchmark.main(argv) == 2
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and errors[0].startswith(message)
    assert not (tmp_path / "outputs").exists()

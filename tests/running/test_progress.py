"""src.running.progress: a line per k of a run, a line per job of a multirun with the sweep's counter across processes,
durations and the time left as a person says them."""

import json
import logging

from src.running import progress


def test_duration_and_time_left_read_as_a_person_says_them():
    assert [progress.duration(s) for s in (0.4, 35, 59.4, 60, 89, 361, 594, 596, 1510, 3599, 3600, 7500)] == \
        ["0 s", "35 s", "59 s", "1 min", "1 min 30 s", "6 min", "9 min 50 s", "10 min", "25 min", "1 h 00 min",
         "1 h 00 min", "2 h 05 min"]
    assert progress.time_left(60, 2, 3) == "1 min so far, about 1 min 30 s left"  # 30 s per job, 3 jobs left
    assert progress.time_left(60, 2, 4) == "1 min so far, about 2 min left"


def seconds_said(said: str) -> int:
    """A duration as :func:`progress.duration` says it, read back into seconds."""
    units = {"h": 3600, "min": 60, "s": 1}
    parts = said.split()
    return sum(int(value) * units[unit] for value, unit in zip(parts[::2], parts[1::2]))


def test_a_duration_said_is_within_a_tenth_of_it():
    """The rounding alone never puts a time left a quarter off: at most 5 s in a minute, 30 s in ten."""
    assert seconds_said("2 h 05 min") == 7500 and seconds_said("1 min 30 s") == 90
    for seconds in range(1, 20000):
        said = progress.duration(seconds)
        assert abs(seconds_said(said) - seconds) <= max(0.5, 0.085 * seconds), (seconds, said)


def job_lines(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "src.running.progress" and r.getMessage().startswith("[")]


def test_the_job_counter_counts_this_launchs_jobs_across_processes(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="src.running.progress")
    progress.start_progress(tmp_path, 3)
    progress.finish_job(tmp_path, 1, "yale NMF", 35, "mean AC 0.620 NMI 0.710 over 4 cells, 4 computed", True)
    progress.finish_job(tmp_path, 0, "yale KMeans", 2, "see the error above", False, failed=True)
    progress.finish_job(tmp_path, 2, "orl NMF", 40, "4 computed", True)
    first, second, third = job_lines(caplog)
    assert first.startswith("[1/3] yale NMF done in 35 s (mean AC 0.620") and first.endswith("left")
    assert "about" in first and second.startswith("[2/3] yale KMeans failed after 2 s")
    assert third.startswith("[3/3] orl NMF done in 40 s") and third.endswith("in all")
    # a resumed launch into the same directory: the jobs of the earlier launch are not counted
    caplog.clear()
    progress.start_progress(tmp_path, 3)
    progress.finish_job(tmp_path, 0, "yale KMeans", 0.1, "all reused", False)
    progress.finish_job(tmp_path, 1, "yale NMF", 0.1, "all reused", False)
    lines = job_lines(caplog)
    assert lines[0].startswith("[1/3]") and lines[1].startswith("[2/3]"), lines
    assert all(line.endswith("time left not known yet") for line in lines)  # no rate from reused jobs
    jobs, seconds = progress.since_launch(tmp_path)
    assert jobs == 3 and 0 <= seconds < 60
    assert progress.since_launch(tmp_path / "elsewhere") is None


def test_a_jobs_line_says_what_its_results_give(tmp_path):
    (tmp_path / "results.csv").write_text("dataset,method,acc,nmi\nyale,NMF,0.5,0.25\nyale,NMF,0.7,0.35\n"
                                          "orl,NMF,0.1,0.1\n")
    (tmp_path / "provenance.json").write_text(json.dumps({"cells_computed": 2}))
    assert progress.run_outcome(tmp_path, "yale", "NMF") == ("mean AC 0.600 NMI 0.300 over 2 cells, 2 computed",
                                                            True)
    (tmp_path / "provenance.json").write_text(json.dumps({"cells_computed": 0}))
    assert progress.run_outcome(tmp_path, "yale", "NMF")[1] is False
    assert progress.run_outcome(tmp_path / "none", "yale", "NMF")[0] == "no results read"


def test_run_progress_logs_a_line_per_k_with_the_cells_done(caplog):
    caplog.set_level(logging.INFO, logger="src.running.progress")
    cells = [(2, 0), (2, 1), (3, 0), (3, 1)]
    run = progress.RunProgress("yale/NMF", cells, todo=cells[1:], every=float("inf"))
    for (k, trial), acc in zip(cells, (0.5, 0.7, 0.4, 0.6)):
        run.update(k, trial, {"acc": acc, "nmi": acc / 2})
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2, lines
    assert lines[0].startswith("[yale/NMF] k=2 done: 2/4 cells (1 reused), AC 0.600 NMI 0.300 at k=2;")
    assert lines[0].endswith("left") and lines[1].endswith("in all") and "4/4 cells" in lines[1]

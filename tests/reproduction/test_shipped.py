"""The family's cells shipped with the repository (src/reproduction/shipped.py, papers/benchmark/family_cells.csv.gz)."""

import gzip
import hashlib
import json

import numpy as np
import pandas as pd
import pytest

from src.reproduction import contenders, shipped
from src.protocol.partition import encode
from src.protocol.trials import make_trial
from src.running.cells import compute_cell, open_run
from src.running.results import result_row
from src.running.pool import plan_jobs
from src.running.settings import thaw


def test_the_digest_tells_data_apart_and_reads_sparse_as_dense():
    from scipy import sparse
    X, y = np.arange(12.0).reshape(4, 3), np.array([0, 0, 1, 1])
    assert shipped.data_digest(X, y) == shipped.data_digest(sparse.csr_matrix(X), y)
    assert shipped.data_digest(X, y) != shipped.data_digest(X + 1e-12 * (X == 5), y)
    assert shipped.data_digest(X, y) != shipped.data_digest(X, y[::-1])


def test_the_same_cells_give_the_same_bytes_and_load_back(tmp_path):
    cells = pd.DataFrame({"track": ["unsupervised"] * 2, "dataset": ["yale"] * 2, "acc": [0.1 + 0.2, 1 / 3]})
    first, second = shipped.write(cells, tmp_path / "a.csv.gz"), shipped.write(cells, tmp_path / "b.csv.gz")
    assert first.read_bytes() == second.read_bytes()
    assert gzip.decompress(first.read_bytes()).decode().splitlines()[0] == "track,dataset,acc"
    pd.testing.assert_frame_equal(shipped.load(first), cells)  # every float to the last bit
    with pytest.raises(FileNotFoundError, match="make results"):
        shipped.load(tmp_path / "missing.csv.gz")


@pytest.fixture(scope="module")
def family():
    if not shipped.FILE.is_file():
        pytest.fail(f"{shipped.FILE} is missing: it ships with the repository (make benchmark, make results)")
    return shipped.load()


def test_the_shipped_file_is_small_and_holds_every_cell_of_every_track(family):
    assert shipped.FILE.stat().st_size < 10e6  # with every cell's partition
    assert list(family.columns) == list(shipped.COLUMNS)
    assert set(family["track"]) == set(contenders.TRACKS)
    assert set(family["dataset"]) == set(contenders.DATASETS)
    assert not family.duplicated(["track", "dataset", "label", "k", "trial"]).any()
    counts = family.groupby(["track", "dataset", "method"]).size()
    assert set(counts) == {90}  # k = 2..10, 10 trials: no job half there
    for track in contenders.LABEL_TRACKS:
        assert family.loc[family["track"] == track, ["acc_unlabelled", "nmi_unlabelled"]].notna().all().all()
    assert family[["acc", "nmi"]].stack().between(0, 1).all() and family["ari"].between(-1, 1).all()
    assert family["partition"].str.startswith("a").all()  # every cell keeps its partition, read back as text
    assert family.groupby("dataset")["data_sha256"].nunique().eq(1).all()
    assert family["seed"].eq(0).all() and family["code_fingerprint"].nunique() == 1


def recompute(family, track, dataset, method, cells, mirror, data_dir):
    """Recompute the shipped ``cells`` ((k, trial) pairs) of one track, data set and method; returns
    (shipped rows, recomputed (acc, nmi, objective, ari, partition) per cell)."""
    home = contenders.Sweeps(track, ((f"experiment=benchmark/{track}", f"dataset={dataset}", f"method={method}",
                                      f"paths.mirror={mirror}", f"paths.data_dir={data_dir}"),))
    job = plan_jobs([home], [])[0]
    run = open_run(job.spec, data_dir / "unused")
    rows = family[(family["track"] == track) & (family["dataset"] == dataset)
                  & (family["estimator"] == method)].set_index(["k", "trial"])
    found = {}
    for k, trial in cells:
        cell = compute_cell(job.spec, run.prepared.dataset, k, trial).chosen
        found[k, trial] = (cell.acc, cell.nmi, cell.objective, cell.ari, encode(cell.partition))
    digest = shipped.data_digest(run.prepared.dataset.X, run.prepared.dataset.y)
    return rows, found, digest


def check_slice(rows, found, digest):
    assert rows["data_sha256"].iloc[0] == digest  # the same data as the shipped cells saw
    for (k, trial), (acc, nmi, objective, ari, partition) in found.items():
        row = rows.loc[(k, trial)]
        assert acc == pytest.approx(row["acc"], abs=1e-12) and nmi == pytest.approx(row["nmi"], abs=1e-9)
        assert objective == pytest.approx(row["objective"], rel=1e-6)
        assert ari == pytest.approx(row["ari"], abs=1e-9) and partition == row["partition"]  # the kept clustering


def test_a_slice_of_the_shipped_cells_recomputed_finds_the_same_numbers(family, mirror, data_dir):
    """Unsupervised track, NMF on Yale: four of its 90 cells recomputed here (the whole slice: test_slow's)."""
    check_slice(*recompute(family, "unsupervised", "yale", "nmf", [(2, 0), (3, 1), (5, 2), (10, 9)], mirror,
                           data_dir))


def test_a_reference_of_a_label_track_scored_from_the_unsupervised_tracks_cell_finds_the_shipped_numbers(
        family, mirror, data_dir):
    """One clustering, every track: NMF's unsupervised cell, scored for each label track's trial from its
    partition, gives that track's shipped cell, both scorings (every sample, the unlabelled ones only)."""
    home = contenders.Sweeps("unsupervised", (("experiment=benchmark/unsupervised", "dataset=yale", "method=nmf",
                                              f"paths.mirror={mirror}", f"paths.data_dir={data_dir}"),))
    job = plan_jobs([home], [])[0]
    run = open_run(job.spec, data_dir / "unused")
    dataset = run.prepared.dataset
    for k, trial in [(3, 4), (7, 8)]:
        cell = compute_cell(job.spec, dataset, k, trial)
        for track, fraction in (("labels10", 0.1), ("labels30", 0.3)):
            labels = {"mode": "fraction", "fraction": fraction}
            row = result_row(dataset.name, job.spec.method, 0, cell,
                             trial=make_trial(dataset.y, dataset.name, k, trial, 0, labels))
            shipped_row = family[(family["track"] == track) & (family["dataset"] == "yale")
                                 & (family["estimator"] == "nmf")].set_index(["k", "trial"]).loc[(k, trial)]
            for column in ("acc", "nmi", "acc_unlabelled", "nmi_unlabelled"):
                assert row[column] == pytest.approx(shipped_row[column], abs=1e-9), (track, k, trial, column)


@pytest.mark.slow
def test_the_whole_slice_recomputed_finds_the_same_numbers(family, mirror, data_dir):
    cells = [(k, t) for k in range(2, 11) for t in range(10)]
    check_slice(*recompute(family, "labels10", "yale", "cnmf", cells, mirror, data_dir))


def test_the_local_data_of_the_pixel_data_sets_are_those_the_family_saw(family, mirror, data_dir):
    """The shipped digests of the data sets read from fixed files (not built on this machine, as Caltech-101's
    bag of words is) equal the digests of the same data loaded here."""
    jobs = plan_jobs([contenders.Sweeps("unsupervised", (("experiment=benchmark/unsupervised",
                                                          "dataset=orl,yale,coil20", "method=nmf",
                                                          f"paths.mirror={mirror}", f"paths.data_dir={data_dir}"),))],
                     [])
    local = shipped.local_digests({j.spec.dataset.name: thaw(j.spec.dataset.config) for j in jobs}, data_dir, mirror)
    assert contenders.mismatched(family[family["dataset"].isin(local)], local) == {}
    assert hashlib.sha256(b"").hexdigest() not in local.values()


@pytest.fixture(scope="module")
def tuned():
    found = shipped.load_tuned()
    if found is None:
        pytest.fail(f"{shipped.TUNED_FILE} is missing: it ships with the repository (--tune, then make results)")
    return found


@pytest.fixture(scope="module")
def settings():
    """The shipped settings file, or None before a tuned run ships it."""
    return shipped.load_settings()


@pytest.fixture(scope="module")
def replayed(settings):
    """The settings file replayed by the rule's own code (:func:`src.tuning.growth.replay`): each track's
    searched settings, the grids as they grew and the last choices; None when no settings file ships."""
    from src.tuning import growth
    from src.tuning.homes import family_grids

    if settings is None:
        return None
    tracks = sorted(settings["track"].unique())
    searched = {track: rows.drop(columns="track") for track, rows in settings.groupby("track")}
    grown, _, last = growth.replay(searched, family_grids(tracks), tracks)
    return searched, grown, last


def test_the_tuned_file_is_small_and_each_row_says_how_its_setting_was_chosen(tuned):
    from src.choice.entrants import ENTRANTS
    from src.tuning.selection import REASONS

    assert shipped.TUNED_FILE.stat().st_size < 3e6
    assert list(tuned.columns) == list(shipped.TUNED_COLUMNS)
    assert not tuned["method"].isin(ENTRANTS).any()  # the choice's entrants ship apart
    assert set(tuned["selection"]) <= set(REASONS) - {"nothing to tune"}
    assert not tuned.duplicated(["track", "dataset", "method", "k", "trial"]).any()
    assert tuned.loc[tuned["track"] == "unsupervised", "selection"].isin(["oracle", "tie"]).all()
    kept = tuned["selection"].isin(["tie", "too few"])
    assert (tuned.loc[kept, "setting"] == tuned.loc[kept, "default_setting"]).all()


def tuned_trial(grid, track, dataset, estimator, k, trial, mirror, data_dir) -> pd.DataFrame:
    """The rule run again on one trial: every setting's cell of ``grid`` (the grid as it grew) recomputed (and
    a label method's folds), as a track's rows, then :func:`src.tuning.selection.select`; returns its tuned row."""
    from src.tuning import selection
    from src.tuning.grids import setting_label, settings

    cells, folds = [], []
    fraction = {"labels10": 0.1, "labels30": 0.3}[track]
    for setting in settings(grid):
        parts = [((), cells)] + ([((f"++protocol.labels.folds={selection.FOLDS}", f"++protocol.labels.fold={f}"),
                                   folds) for f in range(selection.FOLDS)] if selection.takes_labels(estimator) else [])
        for extra, into in parts:
            values = (f"method.params.{p}={v}" for p, v in setting.items())
            label = contenders.quoted(setting_label(grid, setting))
            home = contenders.Sweeps(track, ((f"experiment=benchmark/{track}", f"dataset={dataset}",
                                              f"method={estimator}", *values, f"method.label={label}", *extra,
                                              f"paths.mirror={mirror}", f"paths.data_dir={data_dir}"),))
            job = plan_jobs([home], [])[0]
            run = open_run(job.spec, data_dir / "unused")
            cell = compute_cell(job.spec, run.prepared.dataset, k, trial).chosen
            labels = thaw(job.spec.protocol.labels)
            into.append({"dataset": dataset, "method": grid.label, "estimator": estimator, "k": k, "trial": trial,
                         "seed": job.spec.seed, "acc": cell.acc, "params": json.dumps(thaw(job.spec.method.params)),
                         "partition": encode(cell.partition), "fold": labels.get("fold"),
                         **{f"protocol_labels_{key}": value for key, value in labels.items()}})
            y = run.prepared.dataset.y
    assert labels["fraction"] == fraction
    found = selection.select(pd.DataFrame(cells), pd.DataFrame(folds) if folds else None, grid,
                             selection.Trials(lambda name: y))
    return found.iloc[0]


@pytest.mark.parametrize("estimator, reason", [("gnmf", "labelled"), ("semignmf", "cross-validated")])
def test_a_tuned_trial_recomputed_chooses_the_shipped_setting(tuned, replayed, mirror, data_dir, estimator, reason):
    """One trial of each rule (a method without labels scored on the labelled samples, a label method
    cross-validated), the first shipped one whose setting moved off the default: recomputed, the same
    setting is chosen on the same score, and its cell has the shipped AC."""
    rows = tuned[(tuned["estimator"] == estimator) & (tuned["selection"] == reason) & (tuned["dataset"] == "yale")
                 & (tuned["setting"] != tuned["default_setting"])]
    assert not rows.empty
    row = rows.sort_values(["track", "k", "trial"]).iloc[0]
    from src.tuning.grids import family_grid

    grid = family_grid(estimator) if replayed is None else replayed[1].grid(row["track"], "yale", estimator)
    found = tuned_trial(grid, row["track"], "yale", estimator, int(row["k"]), int(row["trial"]), mirror, data_dir)
    assert found["setting"] == row["setting"] and found["selection"] == reason
    assert found["validation_acc"] == pytest.approx(row["validation_acc"], abs=1e-12)
    assert found["acc"] == pytest.approx(row["acc"], abs=1e-12)


def test_the_shipped_cells_laid_out_read_back_as_the_tracks_runs_and_tuned_rows(family, tuned, settings, tmp_path):
    """A slice of the shipped files laid out as a benchmark folder: each track's runs hold its cells (method
    by short name, label full), the tuned rows are the tuned family's, the searched settings are absent without
    a settings file and its slice with one, and the marker names the files read; a lay-out replaces the one
    before."""
    from src.reproduction.shipped import load_track
    from src.tuning import tables

    keep = lambda frame: frame[frame["dataset"].eq("yale") & frame["k"].le(3)]  # noqa: E731
    family_path = shipped.write(keep(family), tmp_path / "family.csv.gz")
    tuned_path = shipped.write(keep(tuned), tmp_path / "tuned.csv.gz")
    (tmp_path / "out" / "stale").mkdir(parents=True)
    out = shipped.unpack(tmp_path / "out", family_path, tuned_path, tmp_path / "no_settings.csv.gz")
    assert not (out / "stale").exists()
    for track, rows in keep(family).groupby("track"):
        found = load_track(out / track / "runs")
        assert len(found) == len(rows) and set(found["method"]) == set(rows["method"])
        assert set(found["label"]) == set(rows["label"])
        pd.testing.assert_series_equal(found.sort_values(["method", "k", "trial"])["acc"].reset_index(drop=True),
                                       rows.sort_values(["method", "k", "trial"])["acc"].reset_index(drop=True))
        rows_tuned, searched = tables.read(out, track)
        untuned_references = (set(rows.loc[rows["estimator"].map(shipped.reference_estimator), "method"])
                              - set(keep(tuned).query("track == @track")["method"]))  # no tuned rows ship
        assert searched is None
        assert set(rows_tuned["method"]) == set(rows["method"]) - untuned_references
    record = shipped.unpacked(out)
    assert set(record["files"]) == {str(family_path), str(tuned_path)}
    assert record["files"][str(family_path)] == hashlib.sha256(family_path.read_bytes()).hexdigest()
    assert shipped.unpacked(tmp_path) is None
    if settings is not None:  # with the settings file, each track's searched settings are its slice of it
        settings_path = shipped.write(keep(settings), tmp_path / "settings.csv.gz")
        out = shipped.unpack(tmp_path / "out", family_path, tuned_path, settings_path)
        for track, rows in keep(settings).groupby("track"):
            assert len(tables.read(out, track)[1]) == len(rows)
        assert str(settings_path) in shipped.unpacked(out)["files"]


def test_the_shipped_tuned_cells_laid_out_beside_a_runs_cells_join_its_fixed_rows(family, tuned, tmp_path):
    """A run's folder (here the shipped slice laid out, its marker removed) gains the shipped tuned rows, each
    untuned method's row from the run's own cells and no row of a reference without tuned cells; the marker
    names the tuned file and the tuned cells' code."""
    from src.tuning import tables

    keep = lambda frame: frame[frame["dataset"].eq("yale") & frame["k"].le(3)]  # noqa: E731
    tuned_path = shipped.write(keep(tuned), tmp_path / "tuned.csv.gz")
    out = shipped.unpack(tmp_path / "run", shipped.write(keep(family), tmp_path / "family.csv.gz"),
                         tmp_path / "no_tuned.csv.gz")
    (out / shipped.UNPACKED).unlink()
    assert not (out / "tuned").exists()
    record = shipped.tuned_beside(out, tuned_path, tmp_path / "no_settings.csv.gz")
    assert json.loads(record.read_text())["files"] == {str(tuned_path): hashlib.sha256(tuned_path.read_bytes()).hexdigest()}
    for track, rows in keep(family).groupby("track"):
        rows_tuned, _ = tables.read(out, track)
        methods = set(rows_tuned["method"])
        references = rows["estimator"].map(shipped.reference_estimator)
        with_tuned = set(keep(tuned).query("track == @track")["method"])
        assert methods == set(rows.loc[~references, "method"]) | (set(rows.loc[references, "method"]) & with_tuned)
        fixed = rows_tuned[rows_tuned["selection"] == "nothing to tune"]
        assert not fixed["method"].isin(rows.loc[references, "method"]).any()  # a reference's row is a tuned one
        assert len(fixed) == len(rows[rows["method"].isin(fixed["method"].unique())])
    assert shipped.tuned_beside(out, tmp_path / "none.csv.gz") is None


def test_every_shipped_tuned_choice_is_re_derived_from_the_shipped_settings_alone(tuned, replayed):
    """The settings file (every setting's scores, ``make results``) replayed by the rule's own code
    (:func:`src.tuning.growth.replay`, the grids grown as the run grew them) chooses every shipped tuned row's
    setting, for the same reason."""
    if replayed is None:
        pytest.skip(f"{shipped.SETTINGS_FILE} does not ship yet: the tuned benchmark's next run writes it "
                    "(python -m src.benchmark --tune, then make results)")
    assert shipped.SETTINGS_FILE.stat().st_size < 25e6
    _, _, last = replayed
    derived = pd.concat([rows.assign(track=track) for track, rows in last.items()], ignore_index=True)
    both = tuned.merge(derived, on=["track", "dataset", "method", "k", "trial"], suffixes=("", "_derived"))
    assert len(both) == len(tuned)
    assert (both["setting"] == both["setting_derived"]).all()
    assert (both["selection"] == both["selection_derived"]).all()


def test_a_tuned_run_of_some_methods_takes_the_place_of_their_rows_alone(tmp_path):
    """``--tune --methods knn``: knn's rows of the run's track are replaced, every other row kept as it shipped."""
    def rows(track, estimator, acc):
        return pd.DataFrame({"track": track, "dataset": "yale", "method": estimator.upper(), "estimator": estimator,
                             "k": 2, "trial": [0, 1], "acc": acc, "setting": "n_neighbors=3",
                             "selection": "cross-validated"})

    old = pd.concat([rows("labels10", "knn", 0.1), rows("labels30", "knn", 0.2), rows("labels10", "sda", 0.3)])
    shipped.write(old.reindex(columns=list(shipped.TUNED_COLUMNS)), tmp_path / "tuned.csv.gz")
    shipped.write(old, tmp_path / "settings.csv.gz")
    new = rows("labels10", "knn", 0.9).drop(columns="track")
    tuned_path, settings_path = shipped.join_tuned({"labels10": (new, new)}, ["knn"], {"yale": "abc"},
                                                   tmp_path / "tuned.csv.gz", tmp_path / "settings.csv.gz")
    for found in (shipped.load_tuned(tuned_path), shipped.load_settings(settings_path)):
        assert len(found) == 6 and not found.duplicated(["track", "estimator", "trial"]).any()
        by = found.groupby(["track", "estimator"])["acc"].unique().map(list).to_dict()
        assert by == {("labels10", "knn"): [0.9], ("labels30", "knn"): [0.2], ("labels10", "sda"): [0.3]}
    joined = shipped.load_tuned(tuned_path).query("estimator == 'knn' and track == 'labels10'")
    assert set(joined["data_sha256"]) == {"abc"}  # the data the run saw


@pytest.mark.parametrize("suffix", [".csv.gz", ".csv.xz"])
def test_a_shipped_file_reads_back_as_written_and_the_same_rows_give_the_same_bytes(tmp_path, suffix):
    rows = pd.DataFrame({"dataset": ["yale", "orl"], "partition": ["aab.", "ba"], "acc": [0.5, 1 / 3]})
    first, second = shipped.write(rows, tmp_path / f"a{suffix}"), shipped.write(rows, tmp_path / f"b{suffix}")
    assert first.read_bytes() == second.read_bytes()
    pd.testing.assert_frame_equal(pd.read_csv(first), rows)

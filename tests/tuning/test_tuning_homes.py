"""What --tune adds to the benchmark's cells (src/tuning/homes.py): every other setting once, a label method's folds
where they can score, and for a method with nothing to tune its folds only, in the label tracks."""

from pathlib import Path

import numpy as np

from src.tuning import homes
from src.tuning.grids import Grid
from src.tuning.selection import FOLDS, MIN_VALIDATION


def test_folds_are_fitted_only_at_the_k_where_a_fold_can_score_enough_samples():
    y = np.repeat(np.arange(15), 11)  # Yale: 15 classes of 11
    assert homes.scored_ks(y, {"mode": "fraction", "fraction": 0.3}, range(2, 11)) == list(range(4, 11))
    assert homes.scored_ks(y, {"mode": "fraction", "fraction": 0.1}, range(2, 11)) == [10]
    uneven = np.concatenate([np.repeat(0, 100), np.repeat(np.arange(1, 6), 4)])  # one large class
    assert homes.scored_ks(uneven, {"mode": "fraction", "fraction": 0.1}, [2, 3]) == [2, 3]  # 10 + 1 labels
    for k in homes.scored_ks(y, {"mode": "per_class", "per_class": 2}, range(2, 11)):
        assert 2 * k // FOLDS >= MIN_VALIDATION


def test_the_homes_hold_each_other_setting_once_and_a_label_methods_folds():
    unsupervised = Grid("gnmf", "GNMF", {"alpha": 100.0}, {"alpha": (1.0, 10.0, 100.0, 1000.0)})
    labelled = Grid("semignmf", "SemiGNMF", {"alpha": 100.0}, {"alpha": (1.0, 100.0)})
    nothing = Grid("nmf", "NMF", {}, {})
    found = homes.tuned_homes([(unsupervised, ["yale", "orl"]), (labelled, ["yale", "orl"]), (nothing, ["yale"])],
                              ["unsupervised", "labels30"], ["yale"], Path("out"), fold_ks=lambda t, d: [4, 5])
    by_track = {home.name: home.sweeps for home in found}
    assert set(by_track) == {"tuned unsupervised", "tuned labels30"}
    unsup = by_track["tuned unsupervised"]
    assert len(unsup) == 3 and all("dataset=yale" in sweep for sweep in unsup)  # GNMF's three other settings
    assert all('method.label="GNMF(alpha=' in " ".join(sweep) for sweep in unsup)
    labels = by_track["tuned labels30"]
    folds = [sweep for sweep in labels if f"++protocol.labels.folds={FOLDS}" in sweep]
    assert len(labels) == 3 + 1 + len(folds) and len(folds) == 2 * FOLDS  # SemiGNMF: both settings, each fold
    assert all("protocol.ks=[4,5]" in sweep for sweep in folds)
    assert {sweep[-1] for sweep in folds} == {f'hydra.sweep.dir="out/tuned/labels30/folds/{f}"' for f in range(FOLDS)}


def test_a_label_method_with_nothing_to_tune_gets_its_folds_only_and_only_in_the_label_tracks():
    """Its folds are what the choice among every method scores it by (src/choice/fold_fits.py refits them with their partitions)."""
    hard = Grid("cnmf", "CNMF", {}, {})
    found = homes.tuned_homes([(hard, ["yale"])], ["unsupervised", "labels10"], ["yale"], Path("out"),
                              fold_ks=lambda t, d: [10])
    assert [home.name for home in found] == ["tuned labels10"]
    sweeps = found[0].sweeps
    assert len(sweeps) == FOLDS and all("protocol.ks=[10]" in sweep and "method=cnmf" in sweep for sweep in sweeps)
    assert all('method.label="CNMF"' in sweep for sweep in sweeps)
    assert {sweep[-1] for sweep in sweeps} == {f'hydra.sweep.dir="out/tuned/labels10/folds/{f}"' for f in range(FOLDS)}


def test_a_persons_file_runs_in_sweeps_of_its_own_and_a_folds_k_comes_after_the_files():
    """``--dataset mine.npz --tune``: the file is chosen by its own overrides, never joined with another data set,
    and a fold sweep's k follows the file's k, so it is the one Hydra keeps."""
    grid = Grid("semignmf", "SemiGNMF", {"alpha": 100.0}, {"alpha": (1.0, 100.0)})
    mine = ["dataset=file", 'dataset.path="/data/mine.npz"', "protocol.ks=[2,3,4]"]
    assert homes.choosing(["yale", "mine", "orl"], {"mine": mine}) == [("dataset=yale,orl",), tuple(mine)]
    found = homes.tuned_homes([(grid, ["yale", "mine"])], ["labels30"], ["yale", "mine"], Path("out"),
                              fold_ks=lambda t, d: [3, 4], given={"mine": mine})
    sweeps = found[0].sweeps
    other = [sweep for sweep in sweeps if "++protocol.labels.folds=2" not in sweep]
    assert sorted(sweep[1] for sweep in other) == ["dataset=file", "dataset=yale"]  # alpha=1.0, one sweep each
    for sweep in sweeps:
        if "dataset=file" in sweep and "++protocol.labels.folds=2" in sweep:
            assert sweep.index("protocol.ks=[3,4]") > sweep.index("protocol.ks=[2,3,4]")


def test_only_keeps_the_grids_of_the_methods_it_names():
    everything = homes.family_grids(["labels10"])
    assert {"label_spreading", "knn", "sda", "ntf"} <= set(everything)
    assert set(homes.family_grids(["labels10"], ["knn", "label_spreading"])) == {"knn", "label_spreading"}
    assert homes.family_grids(["unsupervised"], ["knn"]) == {}  # the unsupervised track runs no reference
    assert homes.family_grids(["labels10"], ["knn"])["knn"] == everything["knn"]

"""The benchmark's fold fits (src.choice.fold_fits) and the entrants the rule chooses from them
(src.choice.entrants): the class text, the plan, the reproduction of the shipped fold scores, the score
of a candidate on a constructed trial, and a choice that no unknown sample's class moves."""

import logging
import warnings

import numpy as np
import pandas as pd
import pytest

from src.choice import entrants, fold_fits
from src.errors import UserError
from src.methods.core.validation import UNLABELLED
from src.protocol.trials import Trial
from src.reproduction import shipped
from src.running import provenance


def test_class_text_keeps_the_classes():
    classes = np.array([3, 0, -1, 2, 2, 61])
    assert fold_fits.class_text(classes)[2] == fold_fits.NONE
    np.testing.assert_array_equal(fold_fits.classes_of(fold_fits.class_text(classes)), classes)
    with pytest.raises(ValueError, match="at most 62 classes"):
        fold_fits.class_text([62])


def test_a_setting_keeps_whole_numbers_whole():
    assert fold_fits.typed_setting("n_neighbors=7,alpha=0.2") == {"n_neighbors": 7, "alpha": 0.2}
    assert isinstance(fold_fits.typed_setting("n_neighbors=7")["n_neighbors"], int)
    assert fold_fits.typed_setting("") == {}


@pytest.fixture(scope="module")
def yale():
    specs = fold_fits.schemes(fold_fits.LABEL_TRACKS, "yale")
    return specs, np.repeat(np.arange(15), 11)


def settings_rows(estimator, method, setting, ks, tracks=fold_fits.LABEL_TRACKS):
    return pd.DataFrame([{"track": t, "dataset": "yale", "method": method, "estimator": estimator,
                          "setting": setting, "k": k, "trial": n} for t in tracks for k in ks for n in range(3)])


def test_the_plan_fits_a_label_method_per_fold_and_a_label_free_one_once(yale):
    specs, y = yale
    settings = pd.concat([settings_rows("sda", "SDA", "alpha=0.1,beta=0.1", [2, 10]),
                          settings_rows("nmf", "NMF", "", [2, 10])])
    tasks = fold_fits.plan("yale", settings, y, specs)
    # Yale at 10% labels one sample a class: only k = 10 deals five a fold; at 30% every k of ours does
    sda = [t for t in tasks if t.estimator == "sda"]
    assert sorted({(t.told, t.k) for t in sda}) == sorted(
        {((track, fold), k) for track, ks in (("labels10", [10]), ("labels30", [2, 10])) for k in ks
         if k in fold_fits.scored_ks(y, dict(specs[track].protocol.labels), specs[track].protocol.ks)
         for fold in (0, 1, fold_fits.ALL)})
    assert all(t.reads == (t.told,) and t.trials == (0, 1, 2) for t in sda)
    nmf = [t for t in tasks if t.estimator == "nmf"]
    assert all(t.told == ("", fold_fits.ALL) for t in nmf)
    at_ten = next(t for t in nmf if t.k == 10)
    assert set(at_ten.reads) == {(track, fold) for track in fold_fits.LABEL_TRACKS for fold in (0, 1, fold_fits.ALL)}
    assert len({t.key for t in tasks}) == len(tasks)


def share(specs, task):
    """What a piece's workers share (as :func:`src.choice.fold_fits.run_piece` sets it), for ``task`` alone."""
    fold_fits._SHARED.update(dataset=fold_fits.load_of(specs), specs=specs, fingerprint=provenance.code_fingerprint(),
                             methods=fold_fits.method_specs([task]))


def test_a_fold_fit_reproduces_its_shipped_score(yale, tmp_path):
    """LabelSpreading's fold fits on Yale (k = 10) give the held-out AC the tuned run shipped."""
    specs, _ = yale
    settings = shipped.load_settings()
    if settings is None:
        pytest.skip("no settings file ships")
    task = fold_fits.Task("yale", "LabelSpreading", "label_spreading", "n_neighbors=7,alpha=0.2", 10,
                          (0, 1, 2), ("labels30", 0), (("labels30", 0),))
    share(specs, task)
    part = tmp_path / "part.jsonl"
    assert fold_fits.fit_task(task, part) == 3
    assert fold_fits.fit_task(task, part) == 0  # resumed: nothing left
    rows = pd.DataFrame(fold_fits.read_part(part, provenance.code_fingerprint()))
    found = settings[(settings["track"] == "labels30") & (settings["dataset"] == "yale")
                     & (settings["estimator"] == "label_spreading") & (settings["k"] == 10)
                     & (settings["setting"] == task.setting)].set_index("trial")
    np.testing.assert_allclose(rows["validation_acc"], found.loc[[0, 1, 2], "validation_acc_fold0"], atol=1e-9)
    assert all(len(text) == 110 for text in rows["partition"])


def test_what_a_readout_warns_is_logged_with_its_trial_never_shown(yale, tmp_path, monkeypatch, caplog):
    """NMF's readouts by a fold's labels (Yale, k = 2): a warning of theirs is caught and said in the trial's
    log line, as the fit's own are; shown, it would fail this test (warnings are errors here)."""
    specs, _ = yale
    task = fold_fits.Task("yale", "NMF", "nmf", "", 2, (0,), ("", fold_fits.ALL), (("labels30", 0),))
    share(specs, task)
    real = fold_fits.readout_labels

    def warning_readout(*args):
        warnings.warn("a readout's own", UserWarning)
        return real(*args)
    monkeypatch.setattr(fold_fits, "readout_labels", warning_readout)
    with caplog.at_level(logging.WARNING, logger=fold_fits.__name__):
        assert fold_fits.fit_task(task, tmp_path / "part.jsonl") == 1
    said = [r.getMessage() for r in caplog.records if r.name == fold_fits.__name__]
    assert len(said) == 1 and "NMF (its one setting) at k=2, trial 0 warned" in said[0]
    assert '"message": "a readout\'s own", "count": 2' in said[0]  # both readouts by the labels
    row = fold_fits.read_part(tmp_path / "part.jsonl", provenance.code_fingerprint())[0]
    assert all(len(row[name]) == 22 for name in fold_fits.LABEL_READOUTS)


def test_a_part_cut_short_or_of_other_code_is_fitted_again(tmp_path):
    part = tmp_path / "part.jsonl"
    part.write_text('{"trial": 0, "code_fingerprint": "a"}\n{"trial": 1, "code_fingerprint": "b"}\n{"trial": 2, "co')
    assert [row["trial"] for row in fold_fits.read_part(part, "a")] == [0]


def test_pieces_of_different_code_are_refused(tmp_path):
    for name, code in (("yale", "a"), ("orl", "b")):
        shipped.write(pd.DataFrame([{c: "" for c in fold_fits.COLUMNS} | {"dataset": name, "code_fingerprint": code,
                                                                           "validation_acc": 0.5}]),
                      tmp_path / f"{name}{fold_fits.SUFFIX}")
    with pytest.raises(UserError, match="different code"):
        fold_fits.load(folder=tmp_path)
    assert len(fold_fits.load(["yale"], folder=tmp_path)) == 1
    assert fold_fits.load(folder=tmp_path / "none") is None


def constructed():
    """A trial of 8 samples, 2 classes, 4 known (two a fold), and the fold fits of two candidates: a
    reference that gives every sample its right class, and NMF whose clusters are the classes renamed."""
    y_true = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    known = np.array([0, 1, 4, 5])
    y_partial = np.full(8, UNLABELLED)
    y_partial[known] = y_true[known]

    def trial(hidden):
        told = y_partial.copy()
        told[hidden] = UNLABELLED
        return Trial(2, 0, np.arange(8), y_true, told, 0, 0)
    full, folds = trial([]), [trial([0, 4]), trial([1, 5])]
    swapped = 1 - y_true  # cluster 1 is class 0: the told labels must name it
    rows = []
    for fold in (0, 1, fold_fits.ALL):
        rows.append({"method": "LabelSpreading", "estimator": "label_spreading", "setting": "", "fold": fold,
                     "partition": fold_fits.class_text(y_true), "nearest_labelled": "", "spread_labelled": ""})
        rows.append({"method": "NMF", "estimator": "nmf", "setting": "", "fold": fold,
                     "partition": fold_fits.class_text(swapped), "nearest_labelled": fold_fits.class_text(y_true),
                     "spread_labelled": fold_fits.class_text(1 - y_true)})
    return pd.DataFrame(rows), full, folds


def test_a_candidate_is_scored_on_the_samples_its_fit_was_not_told():
    rows, full, folds = constructed()
    candidates = entrants.candidates_of(rows, label_free=False)
    names = [c.name for c in candidates]
    assert names == ["LabelSpreading", "NMF", "NMF + nearest labelled", "NMF + label spreading"]
    right = entrants.correct(rows, candidates, full, folds)
    assert right.shape == (4, 4)  # candidates x known samples
    np.testing.assert_array_equal(right[0], 1)
    np.testing.assert_array_equal(right[2], 1)
    np.testing.assert_array_equal(right[3], 0)
    # NMF's clusters, named by the other fold's told samples, give every held-out one its class
    np.testing.assert_array_equal(right[1], 1)
    acc, mutual, given = entrants.test_scores(rows, candidates[1], full)
    assert acc == pytest.approx(1.0) and mutual == pytest.approx(1.0) and given == pytest.approx(1.0)
    acc, mutual, given = entrants.test_scores(rows, candidates[3], full)  # label spreading gave every class wrong
    assert acc == pytest.approx(1.0) and given == pytest.approx(0.0)  # AC maps the classes by the truth
    assert [c.name for c in entrants.candidates_of(rows, label_free=True)] == ["NMF"]


def test_no_unknown_class_moves_the_score():
    rows, full, folds = constructed()
    candidates = entrants.candidates_of(rows, label_free=False)
    before = entrants.correct(rows, candidates, full, folds)
    y_true = full.y_true.copy()
    y_true[full.y_partial == UNLABELLED] = 1 - y_true[full.y_partial == UNLABELLED]
    moved = Trial(2, 0, full.index, y_true, full.y_partial, 0, 0)
    np.testing.assert_array_equal(entrants.correct(rows, candidates, moved, folds), before)

"""The tuning rule (src/tuning/selection.py) and the folds it deals (src/protocol/trials.py): the choice reads only
the labels a method may see; ties and too few labelled samples keep the default; the oracle reads the test labels."""

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from src.methods.core.validation import UNLABELLED
from src.protocol.metrics import accuracy
from src.protocol.partition import encode
from src.protocol.trials import fold_of, make_trial
from src.tuning import selection
from src.tuning.grids import Grid

Y = np.repeat(np.arange(4), 12)  # 4 classes of 12 samples
SCHEME = {"mode": "fraction", "fraction": 0.3}  # 3 labelled a class
SEED = 7
GRID = Grid("gnmf", "GNMF", {"alpha": 10.0}, {"alpha": (1.0, 10.0, 100.0)})


def test_folds_deal_every_labelled_sample_once_and_balance_the_classes():
    trial = make_trial(Y, "toy", 4, 0, SEED, SCHEME)
    fold = fold_of(trial.y_partial, 2, np.random.default_rng(0))
    labelled = trial.y_partial != UNLABELLED
    assert (fold[~labelled] == -1).all() and set(fold[labelled]) == {0, 1}
    counts = np.bincount(fold[labelled], minlength=2)
    assert abs(counts[0] - counts[1]) <= 1
    for c in range(4):  # each class's labels spread over both folds
        assert set(fold[trial.y_partial == c]) == {0, 1}


def test_a_fold_hides_its_samples_and_leaves_the_trial_otherwise_as_it_is():
    full = make_trial(Y, "toy", 3, 1, SEED, SCHEME)
    hidden = []
    for f in range(2):
        told = make_trial(Y, "toy", 3, 1, SEED, {**SCHEME, "folds": 2, "fold": f})
        assert (told.index == full.index).all() and (told.y_true == full.y_true).all()
        assert (told.init_seed, told.kmeans_seed) == (full.init_seed, full.kmeans_seed)
        kept = told.y_partial != UNLABELLED
        assert (told.y_partial[kept] == full.y_partial[kept]).all()
        hidden.append((full.y_partial != UNLABELLED) & ~kept)
    assert not (hidden[0] & hidden[1]).any()
    assert ((hidden[0] | hidden[1]) == (full.y_partial != UNLABELLED)).all()


def rows_for(partitions: dict, scheme=SCHEME, k=4, trial=0, y=Y, estimator="gnmf", **extra) -> pd.DataFrame:
    """One row per setting (alpha -> predicted clusters) of one trial, as a track's rows read."""
    full = make_trial(y, "toy", k, trial, SEED, {key: v for key, v in scheme.items() if key not in ("folds", "fold")})
    out = []
    for alpha, predicted in partitions.items():
        row = {"dataset": "toy", "method": "GNMF", "estimator": estimator, "k": k, "trial": trial, "seed": SEED,
               "acc": accuracy(full.y_true, predicted), "params": json.dumps({"alpha": alpha, "n_neighbors": 5}),
               "partition": encode(predicted), "n_samples": full.n_samples, **extra}
        row.update({f"protocol_labels_{key}": value for key, value in scheme.items()})
        out.append(row)
    return pd.DataFrame(out)


def spoiled(y_true, wrong, rng):
    """``y_true`` with the samples ``wrong`` given other classes."""
    out = y_true.copy()
    out[wrong] = (out[wrong] + 1 + rng.integers(0, 2, wrong.sum())) % (y_true.max() + 1)
    return out


def three_settings(trial):
    """alpha=1.0: right on every labelled sample, wrong on many others; 10.0 (default): one labelled error;
    100.0: two labelled errors, right on every other sample (the test labels' favourite)."""
    rng = np.random.default_rng(1)
    labelled = np.flatnonzero(trial.y_partial != UNLABELLED)
    free = trial.y_partial == UNLABELLED
    best_told = spoiled(trial.y_true, free & (rng.random(free.size) < 0.5), rng)
    default = trial.y_true.copy()
    default[labelled[:1]] = (default[labelled[:1]] + 1) % trial.k
    default = spoiled(default, free & (rng.random(free.size) < 0.2), rng)
    best_test = trial.y_true.copy()
    best_test[labelled[:2]] = (best_test[labelled[:2]] + 1) % trial.k
    return {1.0: best_told, 10.0: default, 100.0: best_test}


class HiddenChanged(selection.Trials):
    """Trials whose unlabelled samples have other classes (what the method may not see changed)."""

    def of(self, dataset, k, trial, seed, scheme):
        found = super().of(dataset, k, trial, seed, scheme)
        plain = {key: v for key, v in scheme.items() if key not in ("folds", "fold")}
        full = super().of(dataset, k, trial, seed, plain)
        free = full.y_partial == UNLABELLED
        return replace(found, y_true=np.where(free, (found.y_true + 2) % k, found.y_true))


def test_an_unsupervised_methods_choice_reads_only_the_labelled_samples():
    trial = make_trial(Y, "toy", 4, 0, SEED, SCHEME)
    cells = rows_for(three_settings(trial))
    chosen = selection.select(cells, None, GRID, selection.Trials(lambda name: Y))
    assert chosen["params"].map(lambda p: json.loads(p)["alpha"]).tolist() == [1.0]
    assert chosen["selection"].tolist() == ["labelled"] and chosen["validation_acc"].iloc[0] == 1.0
    again = selection.select(cells, None, GRID, HiddenChanged(lambda name: Y))
    assert again["setting"].tolist() == chosen["setting"].tolist()
    # the oracle reads the test labels: it takes alpha = 100 here, which the rule could not see
    assert selection.oracle(cells, GRID)["setting"].tolist() == ["alpha=100.0"]


def test_a_label_methods_choice_is_cross_validated_on_the_hidden_folds_only():
    scheme = {**SCHEME, "folds": 2}
    trial = make_trial(Y, "toy", 4, 0, SEED, SCHEME)
    cells = rows_for(three_settings(trial), estimator="semignmf")
    folds = []
    for f in range(2):
        told = make_trial(Y, "toy", 4, 0, SEED, {**scheme, "fold": f})
        hidden = (trial.y_partial != UNLABELLED) & (told.y_partial == UNLABELLED)
        guesses = {}
        for alpha, wrong in ((1.0, 0), (10.0, 1), (100.0, 2)):  # errors on the fold's hidden samples
            predicted = trial.y_true.copy()
            predicted[np.flatnonzero(hidden)[:wrong]] += 1
            predicted[trial.y_partial == UNLABELLED] = 0  # what the unlabelled samples get does not matter
            guesses[alpha] = predicted % 4
        folds.append(rows_for(guesses, scheme={**scheme, "fold": f}, estimator="semignmf").assign(fold=f))
    folds = pd.concat(folds, ignore_index=True)
    chosen = selection.select(cells, folds, GRID, selection.Trials(lambda name: Y))
    assert chosen["setting"].tolist() == ["alpha=1.0"] and chosen["selection"].tolist() == ["cross-validated"]
    assert chosen["acc"].iloc[0] == cells.loc[0, "acc"]  # the chosen setting's cell with every label
    again = selection.select(cells, folds, GRID, HiddenChanged(lambda name: Y))
    assert again["setting"].tolist() == ["alpha=1.0"]


def test_a_tie_keeps_the_default():
    trial = make_trial(Y, "toy", 4, 0, SEED, SCHEME)
    same = {alpha: trial.y_true for alpha in (1.0, 10.0, 100.0)}
    chosen = selection.select(rows_for(same), None, GRID, selection.Trials(lambda name: Y))
    assert chosen["setting"].tolist() == ["alpha=10.0"] and chosen["selection"].tolist() == ["tie"]


def test_too_few_labelled_samples_keep_the_default():
    scheme = {"mode": "per_class", "per_class": 2}  # k = 2: four labelled samples, fewer than MIN_VALIDATION
    trial = make_trial(Y, "toy", 2, 0, SEED, scheme)
    assert trial.n_labelled < selection.MIN_VALIDATION
    cells = rows_for(three_settings(trial), scheme=scheme, k=2)
    chosen = selection.select(cells, None, GRID, selection.Trials(lambda name: Y))
    assert chosen["setting"].tolist() == ["alpha=10.0"] and chosen["selection"].tolist() == ["too few"]


@pytest.mark.parametrize("scores, counts, expected", [
    ({"a=1": 0.9, "a=2": 0.8}, 10, ("a=1", None)), ({"a=1": 0.9, "a=2": 0.9}, 10, ("a=2", "tie")),
    ({"a=1": 0.9, "a=2": 0.8}, 4, ("a=2", "too few")), ({"a=1": float("nan"), "a=2": 0.8}, 10, ("a=2", "too few")),
    ({"a=1": 0.9, "a=2": 0.8, "a=3": 0.9}, 10, ("a=2", "tie")),
])
def test_choose(scores, counts, expected):
    """The rule on one trial's scores: the best alone; the default on a tie, a missing score or too few."""
    per = pd.DataFrame({"dataset": "toy", "method": "M", "k": 2, "trial": 0, "setting": list(scores),
                        "validation_acc": list(scores.values()), "n_validation": counts})
    found = selection.choose(per, "a=2")
    assert len(found) == 1 and (found["setting"].iloc[0], found["selection"].iloc[0]) == expected


def test_choose_is_per_trial_and_in_the_trials_order():
    per = pd.DataFrame({"dataset": "toy", "method": "M", "k": 2, "trial": [1, 1, 0, 0], "setting": ["a", "b"] * 2,
                        "validation_acc": [0.5, 0.7, 0.9, 0.1], "n_validation": 10})
    found = selection.choose(per, "a")
    assert found["trial"].tolist() == [0, 1] and found["setting"].tolist() == ["a", "b"]


def test_a_method_without_labels_is_also_scored_on_each_folds_samples():
    """Its per-fold scores (what a choice among every method reads, beside a label method's folds) are its
    clustering's AC on the samples each fold hides, which together are the trial's labelled samples."""
    trial = make_trial(Y, "toy", 4, 0, SEED, SCHEME)
    cells = rows_for(three_settings(trial))
    per = selection.validated(cells, GRID, selection.Trials(lambda name: Y)).set_index("setting")
    for alpha, predicted in three_settings(trial).items():
        row = per.loc[f"alpha={alpha}"]
        assert row["n_validation_fold0"] + row["n_validation_fold1"] == row["n_validation"] == trial.n_labelled
        for fold in range(2):
            told = make_trial(Y, "toy", 4, 0, SEED, {**SCHEME, "folds": 2, "fold": fold})
            hidden = (trial.y_partial != UNLABELLED) & (told.y_partial == UNLABELLED)
            assert row[f"validation_acc_fold{fold}"] == accuracy(trial.y_true[hidden], predicted[hidden])

"""The gate an outside estimator passes before any cell (src/running/gate.py), and the cell time limit."""

import logging
import time

import numpy as np
import pytest

from src.running import gate
from src.running.pool.workers import CellTimeLimit, time_limit

MODULE = "fixtures.outside.estimators"


def test_a_good_factorization_passes_and_is_described():
    passed = gate.check(f"{MODULE}:PlainNMF")
    assert passed == gate.Passed(f"{MODULE}:PlainNMF", False, False, None)


def test_a_label_method_that_reads_its_labels_passes():
    assert gate.check(f"{MODULE}:LabelNMF").reads_labels is True


def test_a_method_that_clusters_directly_passes():
    assert gate.check(f"{MODULE}:Clusterer").clusters_directly


def test_a_label_method_that_ignores_its_labels_is_named_with_a_warning(caplog):
    with caplog.at_level(logging.WARNING):
        passed = gate.check(f"{MODULE}:DeafLabelNMF")
    assert passed.needs_labels and passed.reads_labels is False
    assert any("ignores them" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("name, check", [
    ("no_such_package.module:Thing", "import"),
    (f"{MODULE}:Missing", "import"),
    (f"{MODULE}:NotAnEstimator", "estimator"),
    (f"{MODULE}:NoRank", "estimator"),
    (f"{MODULE}:Raises", "fit"),
    (f"{MODULE}:GivesNaN", "output"),
    (f"{MODULE}:WrongShape", "output"),
    (f"{MODULE}:Unseeded", "seed"),
    (f"{MODULE}:SecretlyLabelled", "labels"),
])
def test_each_bad_estimator_fails_its_check_on_one_line(name, check):
    with pytest.raises(gate.GateFailed) as caught:
        gate.check(name)
    message = str(caught.value)
    assert message.startswith(f"{check}: ") and "\n" not in message and "; " in message  # what, then what to change


def test_a_fit_that_never_returns_fails_at_the_time_limit():
    started = time.monotonic()
    with pytest.raises(gate.GateFailed, match="^fit: .*did not return within 1 s"):
        gate.check(f"{MODULE}:Hangs", seconds=1)
    assert time.monotonic() - started < 30  # stopped, not waited for


def test_the_time_limit_leaves_code_that_finishes_alone_and_is_removed_after():
    with time_limit(5):
        total = sum(range(1000))
    assert total == 499500
    with pytest.raises(CellTimeLimit):
        with time_limit(0.2):
            while True:
                time.sleep(0.01)
    time.sleep(0.3)  # no timer left behind to go off here


def test_the_tiny_problem_has_two_labellings_of_every_class():
    X, y, y_partial, y_other = gate.tiny_problem()
    assert X.shape == (40, 20) and (X >= 0).all() and np.allclose(np.linalg.norm(X, axis=1), 1)
    for labels in (y_partial, y_other):
        assert sorted(np.bincount(labels[labels >= 0]).tolist()) == [2, 2, 2, 2]
    assert not np.array_equal(y_partial, y_other)

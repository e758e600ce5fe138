"""scikit-learn's check_estimator on every registered method (tools.estimator_checks), at a user's settings (two
starts, max_iter=300, the defaults otherwise): every check passes but the ones declared, with their reason, in
EXPECTED_FAILED_CHECKS, and every declared one does fail."""

import pytest

from src import methods
from tools import estimator_checks

#: scikit-learn's checks of every method, a quarter of a minute at the end of the suite: run in a pytest
#: process of its own on the other core (conftest.py).
IN_ITS_OWN_PROCESS = True

FAST = {"kmeans", "nmf", "nmf_ncw", "ntf", "copkmeans", "sda", "cnmf"}
"""A few structurally different methods run in the fast suite (about 3 s); the rest (about 10 s) are integration."""


@pytest.mark.parametrize("name", methods.NAMES)
def test_the_checks_run_at_a_users_settings(name):
    """Only the starts and the iterations are reduced (and the seed set, as the checks set it); every other
    parameter is the class default, but NTF's image shape (it has none) and COP-KMeans' 3 clusters."""
    defaults = methods.REGISTRY[name]().get_params()
    params = estimator_checks.checked_estimator(name).get_params()
    changed = {key: value for key, value in params.items() if value != defaults[key]}
    allowed = {"n_starts": 2, "max_iter": 300, "random_state": 0, **estimator_checks.CHECK_OVERRIDES.get(name, {})}
    assert changed.items() <= allowed.items(), changed
    assert set(estimator_checks.CHECK_OVERRIDES) == {"ntf", "copkmeans"}


@pytest.mark.parametrize("name", [name if name in FAST else pytest.param(name, marks=pytest.mark.integration)
                                  for name in methods.NAMES])
def test_check_estimator(name):
    results = estimator_checks.run_checks(name)
    failed = {r["check_name"]: f"{type(r['exception']).__name__}: {r['exception']}" for r in results
              if r["status"] == "failed"}
    assert not failed, failed
    stale = sorted({r["check_name"] for r in results if r["expected_to_fail"] and r["status"] == "passed"})
    assert not stale, f"declared as expected failures but passing: {stale}"
    summary = estimator_checks.summary(results)
    assert summary["passed"] >= 30
    assert set(summary["expected"]) == set(estimator_checks.checked_estimator(name).expected_failed_checks())


def test_expected_failures_name_real_checks_and_classes():
    from sklearn.utils import estimator_checks as sk

    classes = {cls.__name__ for cls in methods.REGISTRY.values()}
    assert set(estimator_checks.EXPECTED_FAILED_CHECKS) <= classes
    for checks in estimator_checks.EXPECTED_FAILED_CHECKS.values():
        for check, reason in checks.items():
            assert hasattr(sk, check) and len(reason) > 20


def test_results_table_has_a_row_per_method():
    summaries = {"nmf": {"passed": 47, "xfail": 0, "skipped": 1, "failed": [], "expected": {}},
                 "gnmf": {"passed": 46, "xfail": 1, "skipped": 1, "failed": [],
                          "expected": {"check_methods_subset_invariance": "the graph"}}}
    table = estimator_checks.results_table(summaries)
    assert table.splitlines()[2] == "| nmf | 47 | 0 | 1 | none | none |"
    assert table.splitlines()[3] == "| gnmf | 46 | 1 | 1 | none | `check_methods_subset_invariance`: the graph |"

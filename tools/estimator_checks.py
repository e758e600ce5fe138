"""scikit-learn's estimator checks for every registered method, at a user's settings, and the expected failures.

:func:`checked_estimator` builds a method as a user would run it, only the starts and the iterations reduced
for speed (:data:`CHECK_PARAMS`: two starts, ``max_iter=300``; the class defaults otherwise: the reference
stopping rule, ``n_components=2``, ...); :data:`EXPECTED_FAILED_CHECKS` collects, per class, each check of
``sklearn.utils.estimator_checks`` that cannot hold for it and why, as the class declares it
(``est.expected_failed_checks()``); :func:`run_checks` runs the whole suite on one method and
:func:`results_table` writes the outcome as a Markdown table (``python -m tools.estimator_checks [method ...]``
prints it; about 15 seconds for all).

>>> from sklearn.utils.estimator_checks import check_estimator
>>> est = checked_estimator("nmf")
>>> results = check_estimator(est, expected_failed_checks=est.expected_failed_checks(), on_fail=None)

At these settings ``check_transformer_general`` (and ``check_transformer_data_not_an_array``), which compare
``fit_transform(X)`` (the fit's own coefficients) with ``transform(X)`` (coefficients solved anew with the
fitted basis fixed) to 0.01, fail for most factorizations: on the check's data (30 samples of 3 features in
two tight blobs on a line, rank 2) the fit stops before its coefficients have converged. Each such class
declares the check with what happens for it (:func:`src.methods.core.estimator.fit_stops_short`, CF's and
LCF's own reasons on the mixed-sign data they are given); a fit run to convergence and ``transform`` agree
(tests/methods/core/test_estimator.py).
"""

import logging
import warnings
from collections import Counter

from src.methods import NAMES, REGISTRY, make, parameter_names

CHECK_PARAMS = {"n_starts": 2, "max_iter": 300, "random_state": 0}
"""The settings every check runs with (each method takes those of its parameters it has): two starts and at most
300 iterations instead of the defaults' 10 and 10,000, for speed; every other parameter at its default.
``random_state=0`` is the seed scikit-learn's checks set themselves (``set_random_state``), given for the
checks that do not."""

CHECK_OVERRIDES = {
    "ntf": {"image_shape": (1, 3)},  # NTF has no default shape: 1 x 3 images, the width of most of the checks' data
    "copkmeans": {"n_components": 3},  # check_clustering asks for the 3 blobs it draws
}
"""Per-method additions to :data:`CHECK_PARAMS`: NTF's image shape, COP-KMeans' number of clusters."""

EXPECTED_FAILED_CHECKS: dict[str, dict[str, str]] = {
    cls.__name__: dict(cls._expected_failed_checks) for cls in REGISTRY.values() if cls._expected_failed_checks
}
"""Class name -> {check name: why it cannot pass}, as each class declares it (``_expected_failed_checks``, also
given by ``est.expected_failed_checks()``). Checks not listed pass (or are skipped by scikit-learn)."""


def checked_estimator(name: str):
    """The method registered as ``name`` with :data:`CHECK_PARAMS` and its :data:`CHECK_OVERRIDES`, defaults
    otherwise."""
    valid = parameter_names(REGISTRY[name])
    params = {key: value for key, value in CHECK_PARAMS.items() if key in valid}
    return make(name, **{**params, **CHECK_OVERRIDES.get(name, {})})


def run_checks(name: str) -> list[dict]:
    """Run ``check_estimator`` on method ``name`` (on_fail=None); return its list of results."""
    from sklearn.utils.estimator_checks import check_estimator

    estimator = checked_estimator(name)
    disabled = logging.root.manager.disable
    logging.disable(logging.WARNING)  # the checks fit one sample, more clusters than classes, ...: expected
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return check_estimator(estimator, expected_failed_checks=estimator.expected_failed_checks(),
                                   on_fail=None, on_skip=None)
    finally:
        logging.disable(disabled)


def summary(results: list[dict]) -> dict:
    """Counts by status and the expected failures with their reasons, of one method's results."""
    counts = Counter(result["status"] for result in results)
    reasons = {}
    for result in results:
        if result["expected_to_fail"]:
            reasons[result["check_name"]] = result["expected_to_fail_reason"]
    failed = sorted({result["check_name"] for result in results if result["status"] == "failed"})
    return {"passed": counts["passed"], "xfail": counts["xfail"], "skipped": counts["skipped"],
            "failed": failed, "expected": reasons}


def results_table(summaries: dict[str, dict]) -> str:
    """Markdown table, one row per method: checks passed, expected to fail, skipped, failed; the reasons."""
    lines = ["| method | passed | expected failures | skipped | failed | why the expected failures fail |",
             "|---|---:|---:|---:|---|---|"]
    for name in (n for n in NAMES if n in summaries):
        s = summaries[name]
        reasons: dict[str, list[str]] = {}
        for check, reason in s["expected"].items():
            reasons.setdefault(reason, []).append(f"`{check}`")
        expected = "; ".join(f"{', '.join(checks)}: {reason}" for reason, checks in reasons.items()) or "none"
        failed = ", ".join(f"`{check}`" for check in s["failed"]) or "none"
        lines.append(f"| {name} | {s['passed']} | {s['xfail']} | {s['skipped']} | {failed} | {expected} |")
    return "\n".join(lines) + "\n"


def main(names=None) -> str:
    """Run the checks on ``names`` (default: every method) and return the Markdown table of the outcome."""
    return results_table({name: summary(run_checks(name)) for name in names or NAMES})


if __name__ == "__main__":  # python -m tools.estimator_checks [method ...]
    import sys

    sys.stdout.write(main(sys.argv[1:]))

"""scikit-learn's estimator checks for every registered method: a fast configuration and the expected failures.

:func:`checked_estimator` builds a method with the small settings the checks run with (:data:`CHECK_PARAMS`);
:data:`EXPECTED_FAILED_CHECKS` collects, per class, each check of ``sklearn.utils.estimator_checks`` that
cannot hold for it and why, as the class declares it (``est.expected_failed_checks()``);
:func:`run_checks` runs the whole suite on one method and :func:`results_table` writes the outcome as a
Markdown table (``python -m tools.estimator_checks [method ...]`` prints it; about a minute for all).

>>> from sklearn.utils.estimator_checks import check_estimator
>>> est = checked_estimator("nmf")
>>> results = check_estimator(est, expected_failed_checks=est.expected_failed_checks(), on_fail=None)

Why ``n_components=1``: ``check_transformer_general`` compares ``fit_transform(X)`` (the fit's own V) with
``transform(X)`` (V solved anew with the fitted U fixed) to 0.01. At rank 2 on the check's data (30 samples,
2 features: X = U V^T has a continuum of exact nonnegative solutions) the multiplicative fit is still
moving along that continuum after thousands of iterations, and an entry that tends to 0 does so only as
1/t; at rank 1 the fit converges fast and both agree. The properties of ``transform`` at higher rank are
tested in ``tests/test_estimators.py``.
"""

import logging
import warnings
from collections import Counter

from src.methods import NAMES, REGISTRY, make

CHECK_PARAMS = {"n_components": 1, "max_iter": 100, "n_starts": 2, "min_iter": 5, "stopping": "fixed",
                "random_state": 0, "n_restarts": 2}
"""The settings every check runs with (each method takes those of its parameters it has): one component,
two starts of five iterations then 100 in all (exact iteration counts, so that the invariance checks compare
like with like), COP-KMeans with two restarts."""

CHECK_OVERRIDES = {
    "cf": {"max_iter": 1000},  # the checks' data have negative entries: CF's mixed-sign rules converge slowly
    "lcf": {"max_iter": 3000},
    "npnmf": {"max_iter": 300},  # mu = 100 on a graph of 30 samples: slow as well
    "ntf": {"image_shape": (1, 3)},  # 1 x 3 images: the width of most of the checks' data
    "copkmeans": {"n_components": 3},  # check_clustering asks for the 3 blobs it draws
}
"""Per-method changes to :data:`CHECK_PARAMS`: enough iterations for ``fit_transform`` and ``transform`` to
agree to 0.01 (``check_transformer_general``), NTF's image shape, COP-KMeans' number of clusters."""

EXPECTED_FAILED_CHECKS: dict[str, dict[str, str]] = {
    cls.__name__: dict(cls._expected_failed_checks) for cls in REGISTRY.values() if cls._expected_failed_checks
}
"""Class name -> {check name: why it cannot pass}, as each class declares it (``_expected_failed_checks``, also
given by ``est.expected_failed_checks()``). Checks not listed pass (or are skipped by scikit-learn)."""


def checked_estimator(name: str):
    """The method registered as ``name`` with :data:`CHECK_PARAMS` and its :data:`CHECK_OVERRIDES`."""
    valid = REGISTRY[name]._get_param_names()
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

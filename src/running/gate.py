"""The gate an estimator from outside the repository passes before any of its cells is computed.

A method named by its import path (:mod:`src.methods.outside`) is tried on a tiny labelled problem
(:func:`tiny_problem`: 40 samples of 4 classes, 20 nonnegative features, 2 labelled per class) as the protocol
would call it, one check after another, cheapest first:

1. ``import``: the module imports and has the class;
2. ``estimator``: the class builds with the protocol's rank and seed (``n_components``, ``random_state``
   where it takes one) and is a scikit-learn estimator (``get_params``, ``fit``, and ``fit_transform`` or
   ``fit_predict``);
3. ``fit``: it fits within the time limit without raising;
4. ``output``: what it gives is finite and of shape (n, k) for a representation, (n,) for a clustering;
5. ``seed``: the same ``random_state`` gives the same output twice;
6. ``labels``: a method that says it takes labels (``needs_labels = True``) gives another output when the
   labels change; one that does not is let through with a warning, named as one that ignores them. A method
   that does not say so must not read them (in a label track it would be told classes as a reference that
   is scored as taking none).

A failed check raises :class:`GateFailed`, one line naming the check and what to change; the command exits
with status 2 before anything is written.
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass

import numpy as np

from .. import methods
from ..errors import UserError, one_line
from ..methods.core.validation import UNLABELLED
from ..protocol.cell import check_output, clusters_directly, method_params
from .pool.workers import CellTimeLimit, time_limit

logger = logging.getLogger(__name__)

#: Seconds the tiny problem's fit may take before the gate calls it hung.
GATE_SECONDS = 60.0


class GateFailed(UserError):
    """An outside estimator failed a check of the gate (the message names the check and what to change)."""


@dataclass(frozen=True)
class Passed:
    """What the gate learned of an estimator: whether it clusters directly, whether it says it takes labels,
    and whether it gave another output when the labels changed (None when it takes none)."""

    name: str
    clusters_directly: bool
    needs_labels: bool
    reads_labels: bool | None


def tiny_problem(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(X, y, y_partial, y_other)``: 40 unit-norm samples of 4 classes in 20 nonnegative features (each class
    its own 5 features, plus noise), the true classes, 2 labelled samples per class (-1 elsewhere), and
    another labelling of other samples with the classes permuted (what a label method must react to)."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(4), 10)
    X = 0.1 * rng.random((40, 20))
    for c in range(4):
        X[y == c, 5 * c:5 * c + 5] += rng.random((10, 5))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y_partial = np.full(40, UNLABELLED)
    y_other = np.full(40, UNLABELLED)
    for c in range(4):
        members = np.flatnonzero(y == c)
        y_partial[members[:2]] = c
        y_other[members[-2:]] = (c + 1) % 4
    return X, y, y_partial, y_other


def fail(check: str, what: str, change: str) -> GateFailed:
    return GateFailed(f"{check}: {what}; {change}")


def imported(name: str) -> type:
    """The class at the import path ``name`` (check 1): a module that does not import, or lacks the class, is
    a :class:`GateFailed` line (what the import said, and what to change)."""
    try:
        return methods.estimator_class(name)
    except UserError as exc:
        raise GateFailed(f"import: {exc}") from None


def run_once(name: str, params: dict, X, y_partial, direct: bool, seconds: float) -> np.ndarray:
    """One fit of ``name`` on the tiny problem as a cell calls it; its output checked (``fit`` and ``output``)."""
    model = methods.make(name, **params)
    try:
        with time_limit(seconds), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            output = model.fit_predict(X, y_partial) if direct else model.fit_transform(X, y_partial)
        if caught:  # on a 40-sample problem a warning (too few iterations, say) is noise: one line, not a page
            logger.debug("gate: %s warned %d time(s), first: %s", name, len(caught),
                         one_line(caught[0].message, 160))
    except CellTimeLimit:
        raise fail("fit", f"{name} did not return within {seconds:g} s on a {X.shape[0]} x {X.shape[1]} problem",
                   "make it stop (max_iter) or raise the limit with --cell-timeout") from None
    except Exception as exc:  # noqa: BLE001 - the estimator's own error, on one line
        raise fail("fit", f"{name}.fit raised {one_line(exc, 160)}", "fix the estimator's fit") from None
    try:
        check_output(output, X.shape[0], direct)
    except ValueError as exc:
        raise fail("output", f"{name}: {exc}", "return a finite (n_samples, n_components) representation from "
                   "fit_transform, or one label per sample from fit_predict") from None
    output = np.asarray(output.toarray() if hasattr(output, "toarray") else output)
    k = params.get("n_components")
    if not direct and output.shape[1] != k:
        raise fail("output", f"{name}.fit_transform gave {output.shape[1]} columns for n_components={k}",
                   "return one column per component (the protocol sets the rank through n_components)")
    return output


def same(a: np.ndarray, b: np.ndarray, direct: bool) -> bool:
    """Whether two outputs are the same: equal partitions for clusterings, equal values to a relative 1e-9
    for representations (one machine and one seed: any difference is the seed's doing)."""
    if direct:
        pairs = set(zip(a.tolist(), b.tolist()))
        return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-9, atol=1e-12)


def check(name: str, params: dict | None = None, seconds: float | None = None) -> Passed:
    """Run the gate (the module docstring's checks) on the estimator ``name`` with its configured ``params``;
    returns what it learned, or raises :class:`GateFailed` on the first check that fails."""
    seconds = seconds or GATE_SECONDS
    cls = imported(name)
    for attribute in ("get_params", "fit"):
        if not callable(getattr(cls, attribute, None)):
            raise fail("estimator", f"{name} has no {attribute}()",
                       "derive it from sklearn.base.BaseEstimator and give it fit(X, y)")
    direct = clusters_directly(cls)
    if not direct and not callable(getattr(cls, "fit_transform", None)):
        raise fail("estimator", f"{name} has neither fit_transform nor fit_predict",
                   "give it fit_transform (a representation) or fit_predict (a clustering)")
    X, _, y_partial, y_other = tiny_problem()
    try:
        cell = method_params(name, dict(params or {}), 4, 0)
        methods.make(name, **cell).get_params()
    except UserError as exc:
        raise fail("estimator", str(exc), "take n_components (the rank) and random_state in __init__") from None
    except Exception as exc:  # noqa: BLE001 - its constructor or get_params raised
        raise fail("estimator", f"{name}(...) or its get_params raised {one_line(exc, 160)}",
                   "store each __init__ parameter as an attribute of the same name (scikit-learn's rule)") from None
    first = run_once(name, cell, X, y_partial, direct, seconds)
    second = run_once(name, cell, X, y_partial, direct, seconds)
    if not same(first, second, direct):
        seeded = "with the same random_state" if "random_state" in cell else "twice on the same data"
        raise fail("seed", f"{name} gave another output {seeded}",
                   "draw every random number from random_state (check_random_state), not from a global state")
    needs = bool(getattr(cls, "needs_labels", False))
    reads = not same(first, run_once(name, cell, X, y_other, direct, seconds), direct)
    if needs and not reads:
        logger.warning("%s says it takes labels (needs_labels = True) but gave the same output when the labels "
                       "changed: read its ranks as those of a method that ignores them", name)
    if not needs and reads:
        raise fail("labels", f"{name} gave another output when the labels changed but does not say it takes "
                   "labels", "set needs_labels = True (it then runs in the label tracks) or leave y unread "
                   "(it then runs in every track, as the family's unsupervised methods)")
    return Passed(name, direct, needs, reads if needs else None)

"""The one iteration loop shared by every multiplicative-update method: starts, updates, stopping.

A method supplies two callables over its factor dictionary: ``update(factors)`` performs one full sweep of
its multiplicative rules in place, and ``objective(factors)`` evaluates the paper's objective (the value
Deng Cai's ``CalculateObj`` returns: the squared Frobenius error or the KL divergence, plus the graph or
label terms). :func:`solve` runs the reference code's protocol (``GNMF_Multi.m``, ``LCCF_Multi.m``,
``GNMF_KL_Multi.m``):

1. **Starts.** With several initializations, each is updated ``min_iter`` times and its objective is
   evaluated once; the first one with the strictly lowest objective goes on (the others are dropped). With
   one initialization (e.g. factors given by the caller) there is no selection and no ``min_iter``.
2. **Iterating the kept start**, under one of two stopping rules:

   * ``"reference"``: after every update the objective f_t enters a running mean
     m_t = 0.1 m_{t-1} + 0.9 f_t, started at m = 10 f_0 (f_0: the objective where tracking begins), and the
     loop stops once (m_t - f_t) / m_t <= ``tol`` (Cai's ``maxErr <= error``, default 1e-5). ``max_iter``
     caps the iterations (Cai's code has no cap); reaching it without meeting the rule is reported
     (``converged=False``, and the estimator raises scikit-learn's ``ConvergenceWarning``). As in the
     reference code, if the kept start ends no lower than where it was chosen, the chosen factors are
     returned instead.
   * ``"fixed"``: exactly ``max_iter`` iterations in all (the papers' "200 iterations"); ``tol`` is not used.

Iterations are counted as the reference code counts them: ``n_iter`` = the ``min_iter`` updates of the kept
start (when there was a selection) plus the updates after it. The history holds the objective where tracking
begins (after the selection; for one start under the reference rule, at the initial factors) and after
every later update; under ``"fixed"`` with one start it holds the objective after every update.
"""

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

logger = logging.getLogger(__name__)

Factors = dict[str, np.ndarray]
STOPPING = ("reference", "fixed")
MEAN_FIT_RATIO = 0.1  # Cai's meanFitRatio


@dataclass(frozen=True)
class Stopping:
    """When :func:`solve` stops (see the module docstring)."""

    rule: str = "reference"
    max_iter: int = 10_000
    min_iter: int = 30
    tol: float = 1e-5


@dataclass
class Solution:
    """What :func:`solve` returns."""

    factors: Factors
    history: list[float]
    n_iter: int
    converged: bool | None  # None under the "fixed" rule
    best_start: int = 0
    start_objectives: list[float] = field(default_factory=list)


def _select(starts: list[Factors], update, objective, n_updates: int) -> tuple[int, list[float]]:
    """Update every start ``n_updates`` times; return the index of the lowest objective and all objectives."""
    values = []
    for factors in starts:
        for _ in range(n_updates):
            update(factors)
        values.append(objective(factors))
    best = 0
    for index, value in enumerate(values):
        if value < values[best]:  # strictly lower: the first of equal objectives is kept, as Cai's code does
            best = index
    return best, values


def solve(starts: Iterable[Factors], update: Callable[[Factors], None], objective: Callable[[Factors], float],
          stopping: Stopping) -> Solution:
    """Run the multi-start protocol and the stopping rule of ``stopping`` (see the module docstring).

    Parameters
    ----------
    starts : iterable of dict of str to ndarray
        The initial factors of each start; updated in place.
    update, objective : callable
        One sweep of the method's multiplicative rules, in place; the method's objective.
    stopping : Stopping
        Rule, ``max_iter``, ``min_iter`` and ``tol``.

    Returns
    -------
    Solution
        The kept factors, the objective history, the iteration count, whether the reference rule was met,
        the index of the kept start and each start's objective after the selection (empty for one start).
    """
    starts = list(starts)
    if len(starts) > 1:
        n_select = min(stopping.min_iter, stopping.max_iter)
        best, values = _select(starts, update, objective, n_select)
        factors, n_iter, history = starts[best], n_select, [values[best]]
    else:
        factors, n_iter, best, values = starts[0], 0, 0, []
        history = [objective(factors)] if stopping.rule == "reference" else []
    if stopping.rule == "fixed":
        while n_iter < stopping.max_iter:
            update(factors)
            n_iter += 1
            history.append(objective(factors))
        return Solution(factors, history, n_iter, None, best, values)

    chosen = {name: value.copy() for name, value in factors.items()} if values else None
    mean_fit = 10 * history[0]
    converged = False
    while n_iter < stopping.max_iter:
        update(factors)
        n_iter += 1
        value = objective(factors)
        history.append(value)
        mean_fit = MEAN_FIT_RATIO * mean_fit + (1 - MEAN_FIT_RATIO) * value
        if mean_fit == 0 or not (mean_fit - value) / mean_fit > stopping.tol:  # Cai: while maxErr > error
            converged = True  # (a NaN ratio stops too, as in Cai's loop)
            break
    if chosen is not None and not history[-1] < history[0]:  # Cai: the continued start must end lower
        factors, n_iter, history = chosen, min(stopping.min_iter, stopping.max_iter), history[:1]
    logger.debug("start %d of %d kept; %d iterations, objective %.6g -> %.6g, converged %s", best,
                 max(len(values), 1), n_iter, history[0], history[-1], converged)
    return Solution(factors, history, n_iter, converged, best, values)

"""The one iteration loop shared by every multiplicative-update method: starts, updates, stopping.

A method supplies two callables over its factor dictionary: ``update(factors)`` performs one full sweep of
its multiplicative rules in place, and ``objective(factors)`` evaluates the paper's objective (the value
Deng Cai's ``CalculateObj`` returns: the squared Frobenius error or the KL divergence, plus the graph or
label terms). Every factor is a **stack** of starts, shape (s, p, k): the starts advance together, each
product with the data matrix serving all of them at once (:mod:`.products`), and ``objective`` returns one
value per start, shape (s,). :func:`solve` runs the reference code's protocol (``GNMF_Multi.m``,
``LCCF_Multi.m``, ``GNMF_KL_Multi.m``):

1. **Starts.** With several initializations, all are updated ``min_iter`` times (together) and their
   objectives are evaluated once; the first one with the strictly lowest objective goes on (the others are
   dropped). With one initialization (e.g. factors given by the caller) there is no selection and no
   ``min_iter``.
2. **Iterating the kept start** (a stack of one), under one of two stopping rules:

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

Products that an update computes and the objective needs (or the reverse) go through a :class:`Handoff`.
A ``callback`` sees every pass (:class:`Pass`): the benchmark times iterations with it.
"""

import logging
from collections.abc import Callable
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


@dataclass(frozen=True)
class Pass:
    """What a ``callback`` of :func:`solve` is given after every update of the factors.

    Attributes
    ----------
    phase : {"select", "iterate"}
        The starts advancing together before the selection, or the kept start after it.
    iteration : int
        Updates done so far in this phase.
    n_starts : int
        Starts this update advanced.
    objective : float or None
        The kept start's objective after this update (None during the selection, where it is not
        evaluated).
    """

    phase: str
    iteration: int
    n_starts: int
    objective: float | None


@dataclass
class Solution:
    """What :func:`solve` returns: the kept start's factors as (p x k) matrices, and how it got there."""

    factors: Factors
    history: list[float]
    n_iter: int
    converged: bool | None  # None under the "fixed" rule
    best_start: int = 0
    start_objectives: list[float] = field(default_factory=list)


class Handoff:
    """A product computed by ``update`` for ``objective`` (or the reverse), valid for the factors it names.

    ``keep(value, *factors)`` stores a product with the factor arrays it was computed from; ``take(*factors)``
    returns it (once) if those are the same arrays, else None. The loop calls ``update`` and ``objective``
    on the same arrays, mutated in place, so identity says "computed for these factors" provided every
    ``update`` takes (or :meth:`clear`-s) the handoff before changing them; a stack sliced or copied by the
    loop (the kept start) is a new array and gets a fresh product.
    """

    def __init__(self):
        self.clear()

    def keep(self, value, *factors: np.ndarray) -> None:
        """Store ``value``, the product computed from the arrays ``factors``."""
        self._value, self._factors = value, factors

    def take(self, *factors: np.ndarray):
        """The stored product if it was computed from these very arrays, else None; either way it is dropped."""
        value, kept = self._value, self._factors
        self.clear()
        if len(kept) == len(factors) and all(a is b for a, b in zip(kept, factors)):
            return value
        return None

    def clear(self) -> None:
        """Drop the stored product (an update that changes the factors without taking it calls this)."""
        self._value, self._factors = None, ()


def _first_lowest(values: np.ndarray) -> int:
    """Index of the first strictly lowest value (NaN never wins), as Cai's selection loop picks it."""
    best = 0
    for index, value in enumerate(values):
        if value < values[best]:
            best = index
    return best


def _kept(factors: Factors, index: int) -> Factors:
    """Start ``index`` of the stacks as a stack of one (own, contiguous copies)."""
    return {name: np.ascontiguousarray(value[index:index + 1]) for name, value in factors.items()}


def solve(factors: Factors, update: Callable[[Factors], None], objective: Callable[[Factors], np.ndarray],
          stopping: Stopping, callback: Callable[[Pass], None] | None = None) -> Solution:
    """Run the multi-start protocol and the stopping rule of ``stopping`` (see the module docstring).

    Parameters
    ----------
    factors : dict of str to ndarray of shape (s, p, k)
        The initial factors of the s starts, stacked; updated in place.
    update, objective : callable
        One sweep of the method's multiplicative rules over every start, in place; the method's objective
        per start, shape (s,).
    stopping : Stopping
        Rule, ``max_iter``, ``min_iter`` and ``tol``.
    callback : callable, optional
        Called with a :class:`Pass` after every update.

    Returns
    -------
    Solution
        The kept factors, the objective history, the iteration count, whether the reference rule was met,
        the index of the kept start and each start's objective after the selection (empty for one start).
    """
    report = callback or (lambda _: None)
    n_starts = len(next(iter(factors.values())))
    if n_starts > 1:
        n_select = min(stopping.min_iter, stopping.max_iter)
        for t in range(n_select):
            update(factors)
            report(Pass("select", t + 1, n_starts, None))
        values = [float(v) for v in objective(factors)]
        best = _first_lowest(values)
        factors, n_iter, history = _kept(factors, best), n_select, [values[best]]
    else:
        n_iter, best, values = 0, 0, []
        history = [float(objective(factors)[0])] if stopping.rule == "reference" else []

    def step() -> float:
        nonlocal n_iter
        update(factors)
        n_iter += 1
        value = float(objective(factors)[0])
        history.append(value)
        report(Pass("iterate", n_iter, 1, value))
        return value

    if stopping.rule == "fixed":
        while n_iter < stopping.max_iter:
            step()
        return Solution(_single(factors), history, n_iter, None, best, values)

    chosen = {name: value.copy() for name, value in factors.items()} if values else None
    mean_fit = 10 * history[0]
    converged = False
    while n_iter < stopping.max_iter:
        value = step()
        mean_fit = MEAN_FIT_RATIO * mean_fit + (1 - MEAN_FIT_RATIO) * value
        if mean_fit == 0 or not (mean_fit - value) / mean_fit > stopping.tol:  # Cai: while maxErr > error
            converged = True  # (a NaN ratio stops too, as in Cai's loop)
            break
    if chosen is not None and not history[-1] < history[0]:  # Cai: the continued start must end lower
        factors, n_iter, history = chosen, min(stopping.min_iter, stopping.max_iter), history[:1]
    logger.debug("start %d of %d kept; %d iterations, objective %.6g -> %.6g, converged %s", best,
                 max(len(values), 1), n_iter, history[0], history[-1], converged)
    return Solution(_single(factors), history, n_iter, converged, best, values)


def _single(factors: Factors) -> Factors:
    """A stack of one start as plain (p x k) matrices."""
    return {name: value[0] for name, value in factors.items()}


def per_start(update: Callable[[Factors], None], objective: Callable[[Factors], float]):
    """Rules written for one start's (p x k) factors, applied to each start of a stack in turn.

    For a method whose rules do not take stacks: the starts then cost what separate fits cost. The views of
    each start are made once per stack, so a :class:`Handoff` between the rules still finds its arrays.
    """
    views: dict[int, tuple[np.ndarray, list[Factors]]] = {}

    def starts(factors: Factors) -> list[Factors]:
        key = id(next(iter(factors.values())))
        first = next(iter(factors.values()))
        if key not in views or views[key][0] is not first:
            views.clear()
            n = len(first)
            views[key] = (first, [{name: value[i] for name, value in factors.items()} for i in range(n)])
        return views[key][1]

    def stacked_update(factors: Factors) -> None:
        for single in starts(factors):
            update(single)

    def stacked_objective(factors: Factors) -> np.ndarray:
        return np.array([objective(single) for single in starts(factors)])

    return stacked_update, stacked_objective

"""The one iteration loop shared by every multiplicative-update method.

A method supplies two callables over its factor dictionary: ``update(factors)`` performs one full sweep of
its multiplicative rules in place, and ``objective(factors)`` evaluates the paper's objective. The loop
records the objective after every iteration and stops after ``max_iter`` iterations, or earlier when
``tol > 0`` and the relative decrease of the objective falls below ``tol``.
"""

import logging
from collections.abc import Callable

import numpy as np

logger = logging.getLogger(__name__)

Factors = dict[str, np.ndarray]


def iterate(
    factors: Factors,
    update: Callable[[Factors], None],
    objective: Callable[[Factors], float],
    max_iter: int,
    tol: float = 0.0,
) -> tuple[Factors, list[float]]:
    """Run ``update`` until ``max_iter`` iterations or until the objective stops decreasing.

    Parameters
    ----------
    factors : dict of str to ndarray
        Initial factors; updated in place.
    update : callable
        ``update(factors)`` applies one iteration of the method's update rules in place.
    objective : callable
        ``objective(factors)`` returns the method's objective value.
    max_iter : int
        Maximum number of iterations.
    tol : float, default=0.0
        Stop when ``(previous - current) / max(|initial|, tiny) < tol``. With ``tol=0`` exactly
        ``max_iter`` iterations are run, as the papers do.

    Returns
    -------
    factors : dict of str to ndarray
        The final factors (the same objects that were passed in).
    history : list of float
        The objective after each iteration; ``len(history)`` is the number of iterations run.
    """
    initial = previous = objective(factors)
    scale = max(abs(initial), np.finfo(float).tiny)
    history: list[float] = []
    for _ in range(max_iter):
        update(factors)
        current = objective(factors)
        history.append(current)
        if tol > 0 and (previous - current) / scale < tol:
            break
        previous = current
    logger.debug("stopped after %d iterations, objective %.6g -> %.6g", len(history), initial, previous)
    return factors, history

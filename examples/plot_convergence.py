"""
How the solvers converge: objective against iterations and against seconds
===========================================================================

Every iterative method runs Deng Cai's stopping rule (``tol=1e-5`` on a running mean of the objective) and
records its objective after every update in ``objective_history_``. The estimators record no times, so
this example times the updates itself: ``fit`` takes a ``callback`` that is called after every update,
and the callback notes the clock. You learn how many iterations each method needs on the Yale faces, and
what an iteration costs.
"""

# %%
# Fit each method from one random start
# -------------------------------------
# The 165 Yale faces (15 people, rank 15). One start (``n_starts=1``) so that the history holds every
# update from the first; the reference rule stops each fit. CNMF gets one labelled face per person (the
# CNMF paper's 10%).
import time

import matplotlib.pyplot as plt
import numpy as np

from src import methods
from src.data.named import load_named

yale = load_named("yale")
X, y = yale.X, yale.y
rng = np.random.default_rng(0)
y_partial = np.full_like(y, -1)
for person in range(yale.n_classes):
    y_partial[rng.choice(np.flatnonzero(y == person))] = person

runs = {}
for name in ["nmf", "gnmf", "cnmf", "cf"]:
    model = methods.make(name, n_components=yale.n_classes, n_starts=1, max_iter=2000,
                         random_state=0)
    clock = []
    start = time.perf_counter()
    model.fit(X, y_partial,
              callback=lambda update: clock.append(time.perf_counter() - start))
    runs[type(model).__name__] = (model.objective_history_, np.array(clock))
    print(f"{name}: {model.n_iter_} iterations, converged {model.converged_}, "
          f"{clock[-1]:.2f} s")

# %%
# How far each objective is above its final value
# ------------------------------------------------
# The objectives have different terms and scales (GNMF's graph term is huge at a random start), so each
# curve shows ``f_t / f_final - 1``, which reaches 0 at the last update (not drawn on the log scale).
# ``objective_history_[t]`` is the objective after update *t* (entry 0: at the start); the clock is read
# after each update, the objective's evaluation included (GNMF's first update also pays for building its
# neighbour graph).
fig, (by_iteration, by_second) = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
for label, (history, seconds) in runs.items():
    excess = history[1:-1] / history[-1] - 1
    by_iteration.plot(np.arange(1, len(history) - 1), excess, label=label)
    by_second.plot(seconds[:-1], excess, label=label)
by_iteration.set(xscale="log", yscale="log", xlabel="iteration",
                 ylabel="objective / final objective - 1")
by_second.set(xscale="log", xlabel="seconds since fit() was called")
by_iteration.legend()
fig.suptitle("Yale, rank 15, one start, Cai's stopping rule")
fig.tight_layout()
plt.show()

# %%
# CF and its relatives iterate on the coefficients of the samples (an n x n kernel), so they need more
# iterations and more time per iteration than NMF here. The same rule stops every method; a method at its
# ``max_iter`` cap instead raises scikit-learn's ``ConvergenceWarning``.

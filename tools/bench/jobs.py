"""The measurements :mod:`tools.bench` runs in a child process (:func:`.measure.run_in_child`).

Each job reads its data set from the ``.npz`` file the parent wrote (:func:`.data.save`), runs under
``threadpool_limits(threads)`` and returns a plain dict. The parent passes the method's parameters and
the protocol settings, so a child needs no config.
"""

from __future__ import annotations

import math

from threadpoolctl import threadpool_limits

from src.protocol.cell import fit_and_cluster
from src.protocol.trials import make_trial
from src.running.settings import MethodSpec, freeze, protocol_spec
from .data import LABEL_FRACTION, load_saved
from .facts import build, facts
from .measure import timed_fit


def fit_job(path: str, name: str, params: dict, rank: int, seed: int, iters: int, cap_s: float | None,
            threads: int) -> dict:
    """A fit of exactly ``iters`` iterations from one start, timed through its callback; stopped at ``cap_s``."""
    data = load_saved(path)
    model = build(name, rank, seed, data.image_shape, params, stopping="fixed", max_iter=iters, n_starts=1)
    with threadpool_limits(limits=threads):
        timing = timed_fit(model, data.X, data.labels(facts(name).needs_labels), cap_s)
    return timing.as_dict()


def protocol_job(path: str, name: str, params: dict, protocol: dict, seed: int, threads: int) -> dict:
    """One protocol trial over every class and sample: the method's fit, then the protocol's KMeans.

    For the ``kmeans`` method that is KMeans best of ``protocol["kmeans_restarts"]`` on the raw samples.
    """
    data = load_saved(path)
    n_classes = int(data.y.max()) + 1
    labels = {"mode": "fraction", "fraction": LABEL_FRACTION} if facts(name).needs_labels else {"mode": "none"}
    trial = make_trial(data.y, data.name, n_classes, 0, seed, labels)
    method = MethodSpec(name=name, label=name, params=freeze(params))
    with threadpool_limits(limits=threads):
        fit = fit_and_cluster(data.X, method, trial, protocol_spec(protocol, data.name), trial.init_seed,
                              data.image_shape)
    seconds = fit.fit_seconds + (0.0 if math.isnan(fit.kmeans_seconds) else fit.kmeans_seconds)
    return {"seconds": seconds, "fit_s": fit.fit_seconds, "kmeans_s": fit.kmeans_seconds,
            "acc": fit.acc, "nmi": fit.nmi, "n_samples": trial.n_samples}

"""The papers' clustering protocol: k classes, partial labels, factorize, KMeans best of n, score.

Paired design: a trial's class subset, labelled points, initial-factor seed and KMeans seed are drawn from
``SeedSequence(seed, spawn_key=(crc32(dataset), k, trial))``. They depend only on (seed, dataset, k,
trial), never on the method or on the order in which cells run, so every method in a table sees the same
trials and the same seed always gives the same numbers.
"""

import logging
import math
import time
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .. import methods
from .clustering import INITS, METRICS, best_kmeans
from ..errors import ConfigError
from .metrics import accuracy, nmi
from ..methods.core.estimator import UNLABELLED, check_data, check_positive_int

logger = logging.getLogger(__name__)

LABEL_MODES = ("none", "fraction", "per_class")
SCORE_ON = ("all", "unlabelled")
ASSIGNMENTS = ("kmeans", "argmax")
#: Extra cluster assignments a cell can record beside its primary one (``protocol.readouts``), each from the
#: same fitted representation: the largest coefficient, one KMeans run, the best of 10 runs by objective.
READOUTS = {"argmax": None, "kmeans_once": 1, "kmeans_best10": 10}


@dataclass(frozen=True)
class Trial:
    """The samples, partial labels and seeds of one (dataset, k, trial) cell, shared by all methods."""

    k: int
    trial: int
    index: np.ndarray  # (n_k,) rows of the data set taken
    y_true: np.ndarray  # (n_k,) classes renumbered 0..k-1
    y_partial: np.ndarray  # (n_k,) y_true on labelled samples, -1 elsewhere
    init_seed: int
    kmeans_seed: int


def label_counts(class_sizes: np.ndarray, labels: Mapping) -> np.ndarray:
    """Number of labelled samples per class under ``labels`` (keys mode, fraction, per_class).

    ``fraction`` labels floor(fraction * n_c) samples of a class of size n_c, and at least one.
    ``per_class`` labels the same count in every class.
    """
    mode = labels["mode"]
    if mode == "none":
        return np.zeros_like(class_sizes)
    if mode == "fraction":
        return np.maximum(1, np.floor(labels["fraction"] * class_sizes + 1e-9).astype(np.int64))
    return np.minimum(labels["per_class"], class_sizes)


def make_trial(y: np.ndarray, dataset: str, k: int, trial: int, seed: int, labels: Mapping) -> Trial:
    """Draw the classes, labelled points and seeds of one cell (see the module docstring)."""
    sequence = np.random.SeedSequence(seed, spawn_key=(zlib.crc32(dataset.encode()), k, trial))
    class_seq, label_seq, init_seq, kmeans_seq = sequence.spawn(4)
    classes = np.sort(np.random.default_rng(class_seq).choice(np.unique(y), size=k, replace=False))
    index = np.flatnonzero(np.isin(y, classes))
    y_true = np.searchsorted(classes, y[index])
    counts = label_counts(np.bincount(y_true, minlength=k), labels)
    rng = np.random.default_rng(label_seq)
    y_partial = np.full_like(y_true, UNLABELLED)
    for c in range(k):
        members = np.flatnonzero(y_true == c)
        chosen = rng.choice(members, size=counts[c], replace=False)
        y_partial[chosen] = c
    return Trial(
        k=k,
        trial=trial,
        index=index,
        y_true=y_true,
        y_partial=y_partial,
        init_seed=int(init_seq.generate_state(1)[0]),
        kmeans_seed=int(kmeans_seq.generate_state(1)[0]),
    )


def check_protocol(protocol: Mapping, n_classes: int, min_class_size: int) -> None:
    """Raise :class:`ConfigError` naming the first bad protocol value."""
    ks = protocol["ks"]
    if isinstance(ks, (str, bytes)) or not isinstance(ks, Sequence):
        raise ConfigError(f"protocol.ks={ks!r} must be a list of numbers of classes, e.g. [2,3,4]")
    ks = list(ks)
    if not ks:
        raise ConfigError("protocol.ks is empty; give at least one number of classes")
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, int) or not 2 <= k <= n_classes:
            raise ConfigError(f"protocol.ks contains {k!r}; each k must be an integer in [2, {n_classes}] "
                              f"(the data set has {n_classes} classes)")
    for key in ("n_trials", "kmeans_restarts"):
        check_positive_int(f"protocol.{key}", protocol[key])
    offset = protocol["rank_offset"]
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise ConfigError(f"protocol.rank_offset={offset!r} must be an integer >= 0")
    check_positive_int("protocol.subruns", protocol.get("subruns", 1))
    if protocol.get("subrun_choice", "objective") not in SUBRUN_CHOICES:
        raise ConfigError(f"protocol.subrun_choice={protocol['subrun_choice']!r} is not one of "
                          f"{', '.join(SUBRUN_CHOICES)}")
    if protocol.get("score_on", "all") not in SCORE_ON:
        raise ConfigError(f"protocol.score_on={protocol['score_on']!r} is not one of {', '.join(SCORE_ON)}")
    for key, choices in (("kmeans_metric", METRICS), ("kmeans_init", INITS), ("assign", ASSIGNMENTS)):
        if protocol.get(key, choices[0]) not in choices:
            raise ConfigError(f"protocol.{key}={protocol[key]!r} is not one of {', '.join(choices)}")
    readouts = protocol.get("readouts", [])
    if isinstance(readouts, (str, bytes)) or not isinstance(readouts, Sequence) or \
            any(name not in READOUTS for name in readouts):
        raise ConfigError(f"protocol.readouts={readouts!r} must be a list of names from {', '.join(READOUTS)}")
    labels = protocol["labels"]
    if not isinstance(labels, Mapping):
        raise ConfigError(f"protocol.labels={labels!r} must be a mapping with keys mode, fraction, per_class")
    if labels.get("mode") not in LABEL_MODES:
        raise ConfigError(f"protocol.labels.mode={labels.get('mode')!r} is not one of {', '.join(LABEL_MODES)}")
    if labels["mode"] == "fraction":
        fraction = labels["fraction"]
        if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction <= 1:
            raise ConfigError(f"protocol.labels.fraction={fraction!r} must be in (0, 1]")
    if labels["mode"] == "per_class":
        per_class = check_positive_int("protocol.labels.per_class", labels["per_class"])
        if per_class > min_class_size:
            raise ConfigError(
                f"protocol.labels.per_class={per_class} exceeds the smallest class size ({min_class_size})")


def method_params(name: str, params: Mapping, rank: int, init_seed: int, image_shape=None) -> dict:
    """Constructor parameters of method ``name`` for one cell.

    The config's parameters, plus what the protocol supplies when the estimator takes it: the rank
    (``n_components``), the trial's ``random_state`` and the data set's ``image_shape``.
    """
    accepted = methods.REGISTRY[name]._get_param_names() if name in methods.REGISTRY else ()
    cell = dict(params, n_components=rank)
    if "random_state" in accepted:
        cell["random_state"] = init_seed
    if "image_shape" in accepted and cell.get("image_shape") is None:
        cell["image_shape"] = image_shape
    return cell


SUBRUN_CHOICES = ("objective", "accuracy")


def subrun_seed(init_seed: int, subrun: int) -> int:
    """Initial-factor seed of sub-run ``subrun`` of a trial; sub-run 0 uses the trial's own seed."""
    if subrun == 0:
        return init_seed
    return int(np.random.SeedSequence([init_seed, subrun]).generate_state(1)[0])


def readout_seed(kmeans_seed: int, restarts: int) -> np.random.SeedSequence:
    """Seed of the extra KMeans readout with ``restarts`` runs: its own stream, apart from the primary's."""
    return np.random.SeedSequence([kmeans_seed, restarts])


def largest_coefficient(representation, rank: int) -> np.ndarray | None:
    """Each sample's largest coefficient (the argmax of its row), or None where that is no clustering.

    The representation is V after Deng Cai's NormalizeUV (the basis's columns at unit norm, V scaled to
    match), the convention of every factorization's ``embedding_``; the argmax of a row is the cluster
    Xu, Liu and Gong read off NMF and CF. Only a nonnegative representation of the factorization's
    ``rank`` has a meaningful largest coefficient: a mixed-sign one (SDA) or the raw features (the KMeans
    baseline, even on nonnegative pixels) give None.
    """
    Z = np.asarray(representation)
    if Z.ndim != 2 or Z.shape[1] != rank or Z.min(initial=0.0) < 0:
        return None
    return Z.argmax(axis=1)


def fit_and_cluster(X, method: Mapping, trial: Trial, protocol: Mapping, init_seed: int, image_shape=None) -> dict:
    """One factorization of a trial's samples followed by the protocol's KMeans; scores and costs.

    A method that clusters by itself (class attribute ``clusters_directly``, e.g. COP-KMeans) is asked
    for k clusters through ``fit_predict`` and the protocol's KMeans is skipped. ``protocol.score_on`` =
    "unlabelled" scores only the unlabelled samples (the CCF paper's "the others for testing"); "all"
    scores every sample of the trial, labelled ones included.

    ``protocol.assign`` picks the cluster labels that ``acc`` and ``nmi`` score: "kmeans" (the best of
    ``kmeans_restarts`` KMeans runs on the representation, the papers' protocol) or "argmax" (each
    sample's largest coefficient, :func:`largest_coefficient`; methods without a nonnegative
    representation keep KMeans). ``protocol.readouts`` names extra assignments of the same fit, scored
    into ``acc_<name>`` and ``nmi_<name>`` (NaN where one does not apply): "argmax", "kmeans_once" (one
    KMeans run) and "kmeans_best10" (the best of 10 by objective), each KMeans readout on its own seed
    stream (:func:`readout_seed`), so the primary numbers do not depend on which readouts are asked for.
    """
    direct = getattr(methods.REGISTRY.get(method["name"]), "clusters_directly", False)
    rank = trial.k if direct else trial.k + protocol["rank_offset"]
    model = methods.make(method["name"], **method_params(method["name"], method["params"], rank, init_seed, image_shape))
    start = time.perf_counter()
    if direct:
        predicted = model.fit_predict(X[trial.index], trial.y_partial)
    else:
        representation = model.fit_transform(X[trial.index], trial.y_partial)
    fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    kmeans_objective = math.nan
    scored = trial.y_partial == UNLABELLED if protocol.get("score_on", "all") == "unlabelled" else slice(None)
    extra = {}
    if not direct:
        argmax = largest_coefficient(representation, rank)
        if protocol.get("assign", "kmeans") == "argmax" and argmax is not None:
            predicted = argmax
        else:
            predicted, kmeans_objective = best_kmeans(
                representation, trial.k, protocol["kmeans_restarts"], protocol["kmeans_metric"],
                trial.kmeans_seed, protocol["kmeans_init"])
        for name in protocol.get("readouts", []):
            if READOUTS[name] is None:
                labels = argmax
            else:
                labels, _ = best_kmeans(representation, trial.k, READOUTS[name], protocol["kmeans_metric"],
                                        readout_seed(trial.kmeans_seed, READOUTS[name]), protocol["kmeans_init"])
            extra[f"acc_{name}"] = math.nan if labels is None else accuracy(trial.y_true[scored], labels[scored])
            extra[f"nmi_{name}"] = math.nan if labels is None else nmi(trial.y_true[scored], labels[scored])
    kmeans_seconds = time.perf_counter() - start
    history = model.objective_history_
    return {
        "acc": accuracy(trial.y_true[scored], predicted[scored]),
        "nmi": nmi(trial.y_true[scored], predicted[scored]),
        "rank": rank,
        "n_iter": int(model.n_iter_),
        "converged": getattr(model, "converged_", None),  # None: fixed iterations, or no iterative solver
        "objective": float(history[-1]) if len(history) else math.nan,
        "kmeans_objective": kmeans_objective,
        "fit_seconds": fit_seconds,
        "kmeans_seconds": kmeans_seconds,
        **extra,
    }


def run_cell(X: np.ndarray, dataset: str, method: Mapping, trial: Trial, protocol: Mapping, seed: int,
             image_shape=None) -> dict:
    """Run one (dataset, method, k, trial) cell and return its tidy row.

    With ``protocol.subruns`` = s > 1 (the LCF paper's "ten subruns with different initializations and we
    chose the best result"), the factorization is repeated from s initial-factor seeds and the row reports
    the sub-run chosen by ``protocol.subrun_choice``: "objective" (the lowest final factorization
    objective, or KMeans objective for methods without one; uses no labels) or "accuracy" (the highest
    accuracy, an oracle that looks at the true labels, NMI taken from the same sub-run). Both choices are
    recorded in the columns ``acc_by_objective``, ``nmi_by_objective``, ``acc_by_accuracy``,
    ``nmi_by_accuracy``; times are summed over the sub-runs.
    """
    n_subruns = protocol.get("subruns", 1)
    runs = [fit_and_cluster(X, method, trial, protocol, subrun_seed(trial.init_seed, j), image_shape)
            for j in range(n_subruns)]
    by_objective = min(runs, key=lambda r: r["objective"] if not math.isnan(r["objective"]) else r["kmeans_objective"])
    by_accuracy = max(runs, key=lambda r: r["acc"])
    chosen = by_accuracy if protocol.get("subrun_choice", "objective") == "accuracy" else by_objective
    row = {
        "dataset": dataset,
        "method": method["label"],
        "estimator": method["name"],
        "k": trial.k,
        "trial": trial.trial,
        "seed": seed,
        **chosen,
        "n_samples": int(trial.index.size),
        "n_labelled": int((trial.y_partial != UNLABELLED).sum()),
        "fit_seconds": sum(r["fit_seconds"] for r in runs),
        "kmeans_seconds": sum(r["kmeans_seconds"] for r in runs),
    }
    if n_subruns > 1:
        row.update(subruns=n_subruns, acc_by_objective=by_objective["acc"], nmi_by_objective=by_objective["nmi"],
                   acc_by_accuracy=by_accuracy["acc"], nmi_by_accuracy=by_accuracy["nmi"])
    return row


def check_method(method: Mapping, X: np.ndarray | None = None, image_shape=None) -> None:
    """Validate a method config (name and parameters) and, given ``X``, the data it will see.

    Without ``X`` the parameters are checked before any data are read: a shape that only the data give
    (NTF's ``image_shape``) stands in as (1, 1) and is checked, with the data, by the call with ``X``.
    """
    shape = image_shape if X is not None else (1, 1)
    model = methods.make(method["name"], **method_params(method["name"], method["params"], 2, 0, shape))
    model.check_params()
    if X is not None:
        check_data(X, getattr(model, "nonnegative_data", False))

"""One cell of the papers' clustering protocol: factorize a trial's samples, cluster, score.

A cell is one (dataset, method, k, trial): the trial (:mod:`.trials`) gives the samples, the partial labels
and the seeds; :func:`fit_and_cluster` fits the method and assigns clusters, :func:`run_cell` repeats that
over the protocol's sub-runs and keeps one. What a cell gives is typed (:class:`Fit`, :class:`Cell`); the
row written to ``cells/`` and ``results.csv`` is made from it by :func:`src.running.results.result_row`, the one
place that names the columns.

The protocol asks an estimator only for what it has: ``n_iter_``, ``objective_history_`` and ``converged_``
are read where the estimator sets them. A method without an iteration count (the KMeans baseline, SDA) is
recorded with 0 iterations, one without an objective history (also COP-KMeans) with objective NaN, one
without a convergence flag with None.
"""

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from .. import methods
from ..methods.core.validation import UNLABELLED
from .clustering import best_kmeans
from .metrics import accuracy, nmi
from .partition import given_back, labels_some, scores
from .trials import Trial

#: Which samples AC and NMI are computed on (``protocol.score_on``).
SCORE_ON = ("all", "unlabelled")
#: How the scored cluster labels are assigned (``protocol.assign``).
ASSIGNMENTS = ("kmeans", "argmax")
#: Which sub-run a cell reports (``protocol.subrun_choice``).
SUBRUN_CHOICES = ("objective", "accuracy")
#: Extra cluster assignments a cell can record beside its primary one (``protocol.readouts``), each from the
#: same fitted representation: the largest coefficient, one KMeans run, the best of 10 runs by objective.
READOUTS = {"argmax": None, "kmeans_once": 1, "kmeans_best10": 10}
#: Readouts by the labels (``protocol.readouts`` too): the representation read by a reference of the label
#: tracks (:mod:`src.methods.references`, at its fixed default) trained on the trial's labelled samples, as a
#: person would classify in a factorization's space: the nearest labelled neighbour (SDA's paper's own
#: protocol) and label spreading on it. The same classifier on the samples themselves is the reference's cell.
LABEL_READOUTS = {"nearest_labelled": "knn", "spread_labelled": "label_spreading"}
#: Every readout's name.
READOUT_NAMES = (*READOUTS, *LABEL_READOUTS)


@dataclass(frozen=True)
class Fit:
    """One factorization of a trial's samples and its cluster assignment: scores and costs.

    ``readouts`` maps each name of ``protocol.readouts`` to its scores (``acc``, ``nmi`` and, in a trial with
    labelled and unlabelled samples, ``given``: :func:`readout_scores`), NaN where it does not apply.
    ``partition`` is the scored assignment itself, one cluster per sample of the trial (its order), which
    every other score can be computed from (:mod:`.partition`). ``representation`` is the fitted
    representation (None for a method that clusters by itself), kept in memory so that a run sharing the
    cell with other labelled samples reads it out by its own labels (:func:`readouts_for`); no row keeps it.
    """

    acc: float
    nmi: float
    ari: float
    partition: np.ndarray  # (n_samples,) the cluster of each sample of the trial
    rank: int
    n_iter: int
    converged: bool | None  # None: fixed iterations, or no iterative solver
    objective: float  # the factorization's final objective; NaN for a method without one
    kmeans_objective: float  # NaN when no KMeans ran (argmax, a method that clusters by itself)
    fit_seconds: float
    kmeans_seconds: float
    readouts: Mapping[str, Mapping[str, float]]
    representation: np.ndarray | None = field(default=None, repr=False, compare=False)  # (n_samples, r)


@dataclass(frozen=True)
class Cell:
    """A cell's trial and its sub-runs' fits: the one reported and the choice by each rule, and which of the
    trial's samples its scores read (``protocol.score_on``)."""

    trial: Trial
    score_on: str
    fits: tuple[Fit, ...]  # one per sub-run, sub-run 0 first
    chosen: Fit  # the one the row reports (``protocol.subrun_choice``)
    by_objective: Fit
    by_accuracy: Fit


def method_params(name: str, params: Mapping, rank: int, init_seed: int, image_shape=None) -> dict:
    """Constructor parameters of method ``name`` for one cell.

    The config's parameters, plus what the protocol supplies when the estimator takes it: the rank
    (``n_components``), the trial's ``random_state`` and the data set's ``image_shape``.
    """
    accepted = methods.parameter_names(methods.estimator_class(name))
    cell = dict(params, n_components=rank)
    if "random_state" in accepted:
        cell["random_state"] = init_seed
    if "image_shape" in accepted and cell.get("image_shape") is None:
        cell["image_shape"] = image_shape
    return cell


def clusters_directly(cls) -> bool:
    """Whether the estimator class ``cls`` gives a clustering rather than a representation: it says so
    (``clusters_directly = True``, COP-KMeans) or has ``fit_predict`` and no ``fit_transform``."""
    return bool(getattr(cls, "clusters_directly", False)) or \
        (hasattr(cls, "fit_predict") and not hasattr(cls, "fit_transform"))


def check_output(output, n_samples: int, direct: bool) -> None:
    """Refuse a fit's output that no protocol step can read: a representation that is not (n_samples, r)
    or holds NaN or infinite values, a clustering that is not one label per sample. The message is the cell
    failure a run names (with its data set, k and trial)."""
    if hasattr(output, "toarray"):
        output = output.toarray()
    output = np.asarray(output)
    if output.shape[:1] != (n_samples,) or output.ndim != (1 if direct else 2):
        what, wanted = ("fit_predict", f"({n_samples},)") if direct else ("fit_transform", f"({n_samples}, n_components)")
        raise ValueError(f"{what} returned shape {output.shape}, not {wanted}")
    if output.dtype.kind in "fc" and not np.isfinite(output).all():
        bad = int((~np.isfinite(output)).sum())
        raise ValueError(f"{'fit_predict' if direct else 'fit_transform'} returned {bad} NaN or infinite value(s)")


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


def readout_labels(name: str, representation, argmax, trial: Trial, protocol) -> np.ndarray | None:
    """The assignment of the readout ``name`` (:data:`READOUT_NAMES`) of one fit's ``representation``
    (n_samples, r), or None where it does not apply: the largest coefficient (``argmax``, None for a
    representation without one), KMeans on its own seed stream (:func:`readout_seed`), or a reference's classes
    in the representation, told the trial's labels (None for a trial that labels no sample)."""
    if name in LABEL_READOUTS:
        if not (trial.y_partial != UNLABELLED).any():
            return None
        reference = methods.make(LABEL_READOUTS[name], n_components=trial.k)
        return np.asarray(reference.fit_predict(representation, trial.y_partial))
    if READOUTS[name] is None:
        return argmax
    labels, _ = best_kmeans(representation, trial.k, READOUTS[name], protocol.kmeans_metric,
                            readout_seed(trial.kmeans_seed, READOUTS[name]), protocol.kmeans_init)
    return labels


def readout_scores(trial: Trial, labels, scored) -> dict[str, float]:
    """A readout's AC and NMI on the ``scored`` samples and, in a trial with labelled and unlabelled samples,
    the classes it gives back (``given``: :func:`.partition.given_back`); NaN where it did not apply."""
    both = labels_some(trial)
    if labels is None:
        return {"acc": math.nan, "nmi": math.nan, **({"given": math.nan} if both else {})}
    return {"acc": accuracy(trial.y_true[scored], labels[scored]), "nmi": nmi(trial.y_true[scored], labels[scored]),
            **({"given": given_back(trial, labels)} if both else {})}


def final_objective(model) -> float:
    """The last value of the estimator's objective history, or NaN if it keeps none (or an empty one)."""
    history = getattr(model, "objective_history_", None)
    return float(history[-1]) if history is not None and len(history) else math.nan


def fit_and_cluster(X, method, trial: Trial, protocol, init_seed: int, image_shape=None) -> Fit:
    """One factorization of a trial's samples followed by the protocol's KMeans; scores and costs.

    ``method`` is a :class:`src.running.settings.MethodSpec` (its name and parameters are read), ``protocol`` a
    :class:`src.running.settings.ProtocolSpec`; the estimator gets the rank, ``init_seed`` and ``image_shape``
    where it takes them (:func:`method_params`).

    A method that clusters by itself (class attribute ``clusters_directly``, e.g. COP-KMeans) is asked
    for k clusters through ``fit_predict`` and the protocol's KMeans is skipped. ``protocol.score_on`` =
    "unlabelled" scores only the unlabelled samples (the CCF paper's "the others for testing"); "all"
    scores every sample of the trial, labelled ones included, as the CNMF paper does. A point whose class
    a method was told flatters it, so when the trial has labelled samples and all are scored, the same
    assignment is also scored on the unlabelled samples alone, from ``Fit.partition``, when the row is written
    (:func:`.partition.unlabelled_scores`).

    ``protocol.assign`` picks the cluster labels that ``acc`` and ``nmi`` score: "kmeans" (the best of
    ``kmeans_restarts`` KMeans runs on the representation, the papers' protocol) or "argmax" (each
    sample's largest coefficient, :func:`largest_coefficient`; methods without a nonnegative
    representation keep KMeans). ``protocol.readouts`` names extra assignments of the same fit, scored
    into ``Fit.readouts`` (NaN where one does not apply): "argmax", "kmeans_once" (one KMeans run)
    and "kmeans_best10" (the best of 10 by objective), each KMeans readout on its own seed stream
    (:func:`readout_seed`), so the primary numbers do not depend on which readouts are asked for; and the
    readouts by the labels (:data:`LABEL_READOUTS`), "nearest_labelled" and "spread_labelled".
    """
    direct = clusters_directly(methods.estimator_class(method.name))
    rank = trial.k if direct else trial.k + protocol.rank_offset
    model = methods.make(method.name, **method_params(method.name, method.params, rank, init_seed, image_shape))
    start = time.perf_counter()
    if direct:
        predicted = model.fit_predict(X[trial.index], trial.y_partial)
    else:
        representation = model.fit_transform(X[trial.index], trial.y_partial)
    fit_seconds = time.perf_counter() - start
    check_output(representation if not direct else predicted, len(trial.index), direct)
    start = time.perf_counter()
    kmeans_objective = math.nan
    scored = trial.y_partial == UNLABELLED if protocol.score_on == "unlabelled" else slice(None)
    readouts = {}
    if not direct:
        argmax = largest_coefficient(representation, rank)
        if protocol.assign == "argmax" and argmax is not None:
            predicted = argmax
        else:
            predicted, kmeans_objective = best_kmeans(
                representation, trial.k, protocol.kmeans_restarts, protocol.kmeans_metric,
                trial.kmeans_seed, protocol.kmeans_init)
        for name in protocol.readouts:
            readouts[name] = readout_scores(trial, readout_labels(name, representation, argmax, trial, protocol),
                                            scored)
    kmeans_seconds = time.perf_counter() - start
    predicted = np.asarray(predicted)
    scored_ones = scores(trial.y_true, predicted, scored)
    return Fit(
        acc=scored_ones["acc"],
        nmi=scored_ones["nmi"],
        ari=scored_ones["ari"],
        partition=predicted,
        rank=rank,
        n_iter=int(getattr(model, "n_iter_", 0)),
        converged=getattr(model, "converged_", None),
        objective=final_objective(model),
        kmeans_objective=kmeans_objective,
        fit_seconds=fit_seconds,
        kmeans_seconds=kmeans_seconds,
        readouts=readouts,
        representation=None if direct else np.asarray(representation),
    )


def readouts_for(cell: Cell, trial: Trial, names, score_on: str) -> dict[str, Mapping[str, float]]:
    """The readouts ``names`` of ``cell``'s reported fit as a run with ``trial`` records them.

    A cell of a method that takes no labels serves every label track (:func:`src.running.pool.jobs.sharing_key`
    leaves the readouts by the labels out): its KMeans and largest-coefficient readouts are the same in each,
    while a readout by the labels (:data:`LABEL_READOUTS`) reads the representation with the labelled samples of
    the run's own ``trial``, and is computed here again when those differ from the cell's own. ``score_on`` is
    the run's ``protocol.score_on``. A method that clusters by itself has no readouts.
    """
    chosen = cell.chosen
    if chosen.representation is None:
        return {}
    same = np.array_equal(trial.y_partial, cell.trial.y_partial)
    scored = trial.y_partial == UNLABELLED if score_on == "unlabelled" else slice(None)
    out = {}
    for name in names:
        if name in chosen.readouts and (same or name not in LABEL_READOUTS):
            out[name] = chosen.readouts[name]
        elif name in LABEL_READOUTS:
            out[name] = readout_scores(trial, readout_labels(name, chosen.representation, None, trial, None), scored)
    return out


def run_cell(X: np.ndarray, method, trial: Trial, protocol, image_shape=None) -> Cell:
    """Run one (dataset, method, k, trial) cell: its sub-runs and the one it reports (specs as in
    :func:`fit_and_cluster`).

    With ``protocol.subruns`` = s > 1 (the LCF paper's "ten subruns with different initializations and we
    chose the best result"), the factorization is repeated from s initial-factor seeds and the cell reports
    the sub-run chosen by ``protocol.subrun_choice``: "objective" (the lowest final factorization
    objective, or KMeans objective for methods without one; uses no labels) or "accuracy" (the highest
    accuracy, an oracle that looks at the true labels, NMI taken from the same sub-run). Both choices are
    kept (``Cell.by_objective``, ``Cell.by_accuracy``).
    """
    fits = tuple(fit_and_cluster(X, method, trial, protocol, subrun_seed(trial.init_seed, j), image_shape)
                 for j in range(protocol.subruns))
    by_objective = min(fits, key=lambda f: f.objective if not math.isnan(f.objective) else f.kmeans_objective)
    by_accuracy = max(fits, key=lambda f: f.acc)
    chosen = by_accuracy if protocol.subrun_choice == "accuracy" else by_objective
    return Cell(trial=trial, score_on=protocol.score_on, fits=fits, chosen=chosen, by_objective=by_objective,
                by_accuracy=by_accuracy)

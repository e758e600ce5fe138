"""The choice among every method as a scikit-learn estimator: fit on ``X`` and ``y`` with -1 for an unknown label.

:class:`FamilyChoice` runs the choice of :mod:`.choice` on the labels at hand: every family method at every
setting of its declared grid is scored by its mean AC over folds of the known labels (a label method fitted
without the fold's labels, a method without labels scored with its one clustering on the same samples), over
``n_repeats`` deals of the folds so that the choice's noise shows; the best is chosen (:func:`.choice.choose_trial`,
the one home of the rule), then fitted on every sample with every known label. Its clusters are mapped to the
known classes (the best one-to-one map on the known samples), so every sample gets a class back.

Each fit is the protocol's: the method's factorization at rank k (the number of known classes unless told),
then the best of ``kmeans_restarts`` KMeans runs on the representation (a method that clusters by itself,
COP-KMeans, clusters). The method's parameters are its config's (``conf/method/<name>.yaml``), the tuned one
set to the setting. Everything random flows from ``random_state`` through :class:`numpy.random.SeedSequence`.
"""

from __future__ import annotations

import functools
import inspect
import logging

import numpy as np
import pandas as pd
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import column_or_1d, validate_data

from .. import methods, resolvers
from ..config_dir import CONF_DIR
from ..methods.core.validation import UNLABELLED
from ..protocol.cell import clusters_directly, method_params
from ..protocol.clustering import best_kmeans
from ..protocol.metrics import accuracy
from ..protocol.partition import class_of_clusters
from ..protocol.trials import fold_of
from . import choice, selection
from .grids import Grid, contender_grid, family_grid, setting_text, settings
from .homes import track_methods

logger = logging.getLogger(__name__)


def family_methods() -> list[str]:
    """The registry names of the family methods a label track runs (NTF, for images only, left out)."""
    return [name for name in track_methods("labels30") if name != "ntf"]


@functools.lru_cache(maxsize=None)
def composed_method(name: str) -> dict:
    """The ``method`` node of the family method ``name`` as its config composes it, resolved (its label, and its
    parameters with its solver's)."""
    resolvers.register()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        config = compose(config_name="config", overrides=[f"method={name}"])
    return OmegaConf.to_container(config.method, resolve=True)


def config_params(name: str) -> dict:
    """The parameters of the family method ``name`` as its config composes them (its solver's included)."""
    return dict(composed_method(name)["params"])


def cluster(X, name: str, params: dict, y_told: np.ndarray, k: int, seeds: np.random.SeedSequence,
            kmeans_restarts: int):
    """One fit of the method ``name`` at ``params`` on ``X`` (n_samples, n_features) told ``y_told`` (-1 for
    unknown), then the protocol's KMeans; returns the clusters (n_samples,) and the fitted estimator."""
    init_seed, kmeans_seed = (int(s.generate_state(1)[0]) for s in seeds.spawn(2))
    model = methods.make(name, **method_params(name, params, k, init_seed))
    if clusters_directly(methods.estimator_class(name)):
        return np.asarray(model.fit_predict(X, y_told)), model
    representation = model.fit_transform(X, y_told)
    clusters, _ = best_kmeans(representation, k, kmeans_restarts, "euclidean", kmeans_seed)
    return np.asarray(clusters), model


def fit_task(X, name: str, params: dict, y_told: np.ndarray, blind: bool, k: int, seeds: np.random.SeedSequence,
             kmeans_restarts: int):
    """One fit of the choice's scoring (:func:`cluster`; ``blind``: told no label, a label-free method's one
    fit of a deal): its clusters, or the error's text where it failed, so that a failing candidate costs its
    own score and never the choice."""
    try:
        return cluster(X, name, params, np.full_like(y_told, UNLABELLED) if blind else y_told, k, seeds,
                       kmeans_restarts)[0]
    except Exception as exc:  # any error of the method's: its score is missing, the others stand
        return f"{type(exc).__name__}: {' '.join(str(exc).split())}"


def mapped_accuracy(clusters: np.ndarray, y_partial: np.ndarray, held: np.ndarray) -> float:
    """The share of the ``held`` samples whose class is right when each cluster takes the class the other known
    samples give it (:func:`src.protocol.partition.class_of_clusters` of ``y_partial`` without the held samples'
    labels), as ``FamilyChoice.labels_`` classes the unknown samples. Unlike the held-out AC, whose one-to-one map is
    the best for the held samples themselves, no held label chooses the map: with few known samples a class
    the AC is optimistic, and this is what the classes given back score."""
    told = np.where(held, UNLABELLED, y_partial)
    if not (told != UNLABELLED).any():
        return float("nan")
    return float(np.mean(class_of_clusters(clusters, told)[clusters[held]] == y_partial[held]))



class FamilyChoice(ClusterMixin, BaseEstimator):
    """Choose a method of the family and its setting on the known labels, then cluster every sample.

    Parameters
    ----------
    n_clusters : int, optional
        The number of clusters (and the factorizations' rank); default the number of known classes.
    methods : sequence of str, optional
        The candidates: registry names, or import paths of outside estimators (``package.module:Class``, as
        ``--method`` takes them; run them through the gate first, :func:`src.tuning.gated`). Default every
        family method of a label track but NTF.
    grids : mapping of str to mapping, optional
        Per method, ``{parameter: values}``: a family method's replace its declared grid (``tune`` in its
        config), an outside estimator's are its grid.
    params : mapping of str to mapping, optional
        Per outside estimator, its constructor parameters besides its grid's.
    n_folds : int, default 2
        The folds of the known labels (stratified by class), as the benchmark's rule. A class with one known
        sample is told in every fold and never scored.
    n_repeats : int, default 1
        Deals of the folds (each from its own seed); a candidate's score is the mean over every fold of every
        deal.
    kmeans_restarts : int, default 20
        KMeans runs on each representation, the best kept (the protocol's 20).
    prior : sequence of str, optional
        Methods (their short names, ``GNMF``) best first: breaks a tie at the best score and chooses where a
        fold has too few samples to score (:mod:`.choice`). Default: the order of ``methods`` as given.
    random_state : int, default 0
        The seed every fold deal and fit is drawn from.
    n_jobs : int, optional
        Fits run at once (joblib, as scikit-learn's ``n_jobs``; None: one). The result does not depend on it.

    Attributes
    ----------
    cv_results_ : dict of arrays
        As :class:`sklearn.model_selection.GridSearchCV` gives it: ``params`` (each with its ``method``),
        ``param_method``, ``mean_test_score``, ``std_test_score``, ``split<i>_test_score``, ``rank_test_score``,
        and ``n_scored`` (the fewest samples a fold scored).
    best_index_ : int
    best_method_ : str
        The registry name of the chosen method.
    best_params_ : dict
        The chosen setting (the tuned parameters only).
    best_score_ : float
        Its mean held-out AC.
    selection_ : str
        Why it was chosen (a key of :data:`.choice.REASONS`).
    best_estimator_ : estimator
        The chosen method fitted on every sample with every known label.
    clusters_ : ndarray of shape (n_samples,)
        Each sample's cluster.
    labels_ : ndarray of shape (n_samples,)
        Each sample's class: its cluster's (the best one-to-one map on the known samples), in the values of
        ``y``; a sample whose cluster has no known sample gets -1.
    classes_ : ndarray
        The known classes.

    References
    ----------
    T. Van Craenendonck, H. Blockeel, "Constraint-based clustering selection", Machine Learning 106(9-10),
    pp. 1497-1521, 2017.
    """

    def __init__(self, n_clusters=None, methods=None, grids=None, params=None, n_folds=2, n_repeats=1,
                 kmeans_restarts=20, prior=None, random_state=0, n_jobs=None):
        self.n_clusters = n_clusters
        self.methods = methods
        self.grids = grids
        self.params = params
        self.n_folds = n_folds
        self.n_repeats = n_repeats
        self.kmeans_restarts = kmeans_restarts
        self.prior = prior
        self.random_state = random_state
        self.n_jobs = n_jobs

    def candidates(self) -> list[tuple[str, str, dict, bool]]:
        """Every (short name, registry name or import path, setting, whether it is the default) the choice
        scores."""
        found = []
        for name in self.methods or family_methods():
            grid = self.grid(name)
            for setting in settings(grid):
                found.append((grid.label, name, setting, setting == dict(grid.defaults)))
        return found

    def grid(self, name: str) -> Grid:
        """The grid of a candidate method: a family method's declared one (its values replaced where ``grids``
        gives them); an outside estimator's (an import path) from ``grids`` and ``params``, labelled with its
        class name (:func:`.grids.contender_grid`)."""
        given = (self.grids or {}).get(name)
        if name in methods.REGISTRY:
            grid = family_grid(name)
            return grid.with_values({p: tuple(v) for p, v in given.items()}) if given else grid
        cls = methods.estimator_class(name)
        defaults = {p.name: p.default for p in inspect.signature(cls).parameters.values()
                    if p.default is not inspect.Parameter.empty}
        return contender_grid(name, cls.__name__, self.base_params(name), given or {}, methods.parameter_names(cls),
                              defaults)

    def base_params(self, name: str) -> dict:
        """A candidate's parameters but its grid's: a family method's config's, an outside one's ``params``."""
        return config_params(name) if name in methods.REGISTRY else dict((self.params or {}).get(name, {}))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True  # the known labels choose
        return tags

    def fit(self, X, y=None, progress=None):
        """Score every candidate on folds of the known labels of ``y`` (n_samples,; -1 unknown), choose, fit
        the choice on every sample; ``X`` is (n_samples, n_features), non-negative for the factorizations.
        ``progress(name)``, where given, is called as each scoring fit ends, with its method's registry name."""
        X = validate_data(self, X, dtype=np.float64)
        if X.shape[0] < 2:
            raise ValueError(f"n_samples={X.shape[0]}: choosing needs at least 2 samples")
        y_partial, self.classes_ = self._labels(y, X.shape[0])
        k = self.clusters_for(y_partial)
        deals = [self._deal(y_partial, deal) for deal in range(self.n_repeats)]
        found = self.candidates()
        tasks = self._tasks(found)
        running = Parallel(n_jobs=self.n_jobs, return_as="generator")(
            delayed(fit_task)(X, found[c][1], {**self.base_params(found[c][1]), **found[c][2]},
                              y_partial if fold is None else np.where(deals[deal] == fold, UNLABELLED, y_partial),
                              fold is None, k, self._seed(1, deal, -1 if fold is None else fold),
                              self.kmeans_restarts)
            for c, deal, fold in tasks)
        clusters = {}
        for task, got in zip(tasks, running):
            clusters[task] = got
            if progress is not None:
                progress(found[task[0]][1])
        rows, splits, classed = [], [], []
        for c, (label, name, setting, default) in enumerate(found):
            scores, mapped, counts, failed = [], [], [], None
            for deal in range(self.n_repeats):
                for fold in range(self.n_folds):
                    held = deals[deal] == fold
                    got = clusters[(c, deal, fold)] if (c, deal, fold) in clusters else clusters[(c, deal, None)]
                    failed = got if isinstance(got, str) else failed
                    scored = not isinstance(got, str) and held.any()
                    scores.append(accuracy(y_partial[held], got[held]) if scored else np.nan)
                    mapped.append(mapped_accuracy(got, y_partial, held) if scored else np.nan)
                    counts.append(int(held.sum()))
            if failed:
                logger.warning("%s at %s failed (%s); it is left out of the choice", name, setting, failed)
            scores = np.array(scores, dtype=float)
            rows.append({"method": label, "estimator": name, "setting": setting_text(setting), "default": default,
                         "score": float(np.mean(scores)) if not np.isnan(scores).any() else np.nan,
                         "n_scored": int(min(counts)), "params": setting})
            splits.append(scores)
            classed.append(mapped)
        table = pd.DataFrame(rows)
        table["chosen"] = self._own_choices(table)
        picked, self.selection_ = choice.choose_trial(table, list(self.prior or dict.fromkeys(table["method"])))
        self.best_index_ = int(picked.name)
        self.best_method_, self.best_params_ = picked["estimator"], dict(picked["params"])
        self.best_score_ = float(picked["score"])
        self.cv_results_ = self._results(table, np.array(splits), np.array(classed, dtype=float))
        params = {**self.base_params(self.best_method_), **self.best_params_}
        self.clusters_, self.best_estimator_ = cluster(X, self.best_method_, params, y_partial, k, self._seed(2),
                                                       self.kmeans_restarts)
        mapped = class_of_clusters(self.clusters_, y_partial)[self.clusters_]
        self.labels_ = np.where(mapped == UNLABELLED, UNLABELLED, self.classes_[np.maximum(mapped, 0)])
        return self

    def _tasks(self, found: list) -> list[tuple[int, int, int | None]]:
        """Each scoring fit as (candidate, deal, fold): a label method once per fold of each deal, a method
        without labels once per deal (fold None: told no label, scored on every fold). In the order they run:
        deal by deal, fold by fold (a method without labels with the first), and the candidates of each in an
        order drawn from ``random_state`` (key (3,)), so that the fits done at any moment are a fair sample of
        the candidates and the pace so far holds for the fits left (the time left of
        :class:`src.tuning.your_data.FitProgress`); in the candidates' order, the first methods' fits would
        set the pace of all. No result depends on the order: each fit's seed is its own (:meth:`_seed`)."""
        place = np.argsort(np.random.default_rng(self._seed(3)).permutation(len(found)))
        tasks = [(c, deal, fold) for c, (_, name, _, _) in enumerate(found) for deal in range(self.n_repeats)
                 for fold in (range(self.n_folds) if selection.takes_labels(name) else [None])]
        return sorted(tasks, key=lambda task: (task[1], task[2] or 0, place[task[0]]))

    def fits(self) -> list[str]:
        """The registry name of each scoring fit, in order (``_tasks``; the chosen one's final fit not
        counted)."""
        found = self.candidates()
        return [found[c][1] for c, _, _ in self._tasks(found)]

    def _seed(self, *key: int) -> np.random.SeedSequence:
        """The seed of one use, from ``random_state`` and its key: (0, deal) deals the folds, (1, deal, fold)
        starts every candidate's fit of that fold (-1: a label-free fit, the deal's one), (2,) the final fit,
        (3,) the order the fits run in (:meth:`_tasks`).
        Every candidate of a fold starts alike, as every method of a benchmark trial does."""
        return np.random.SeedSequence(self.random_state, spawn_key=tuple(k % 2**32 for k in key))

    def _deal(self, y_partial: np.ndarray, deal: int) -> np.ndarray:
        """The fold of each known sample in deal ``deal`` (-1: never held out), stratified by class
        (:func:`fold_of`); a class with one known sample is told in every fold and never scored."""
        folds = fold_of(y_partial, self.n_folds, np.random.default_rng(self._seed(0, deal)))
        classes, counts = np.unique(y_partial[y_partial != UNLABELLED], return_counts=True)
        folds[np.isin(y_partial, classes[counts == 1])] = -1
        return folds

    def clusters_for(self, y) -> int:
        """The clusters a fit on the labels ``y`` (n_samples,; -1 unknown) makes: ``n_clusters``, else one a
        known class."""
        y = np.asarray(y)
        return int(self.n_clusters or np.unique(y[y != UNLABELLED]).size)

    def _labels(self, y, n_samples: int) -> tuple[np.ndarray, np.ndarray]:
        """``y`` as classes 0..c-1 with -1 for unknown, and the known classes; refuses what cannot be chosen on."""
        if y is None:
            raise ValueError("FamilyChoice requires y to be passed, but the target y is None: give the known "
                             "labels, -1 for an unknown one")
        y = column_or_1d(np.asarray(y), warn=True)
        if y.shape[0] != n_samples:
            raise ValueError(f"y has {y.shape[0]} labels for {n_samples} samples")
        if not (np.issubdtype(y.dtype, np.integer) or (np.issubdtype(y.dtype, np.floating)
                                                       and np.all(np.isfinite(y)) and np.all(y == np.round(y)))):
            raise ValueError("Unknown label type: the labels must be integers, -1 for an unknown one")
        y = y.astype(np.int64)
        known = y != UNLABELLED
        classes = np.unique(y[known])
        if classes.size < 2:
            raise ValueError(f"{'no label is known' if not known.any() else 'a single class is known'}: "
                             "choosing needs known labels of at least 2 classes")
        return np.where(known, np.searchsorted(classes, y), UNLABELLED), classes

    @staticmethod
    def _own_choices(table: pd.DataFrame) -> pd.Series:
        """Whether each row is its method's own rule's choice (:func:`.selection.choose` over its settings)."""
        per = table.assign(dataset="data", k=0, trial=0, validation_acc=table["score"],
                           n_validation=table["n_scored"])
        chosen = pd.Series(False, index=table.index)
        for method, rows in per.groupby("method", sort=False):
            default = rows.loc[rows["default"], "setting"].iloc[0]
            picked = selection.choose(rows, default)["setting"].iloc[0]
            chosen[rows.index[rows["setting"] == picked]] = True
        return chosen

    def _results(self, table: pd.DataFrame, splits: np.ndarray, classed: np.ndarray) -> dict:
        """``cv_results_`` from the candidates' table, their split scores (candidates, splits) and the same
        splits' accuracies of the classes as ``labels_`` gives them (:func:`mapped_accuracy`):
        ``mean_classed_score`` and ``split<i>_classed_score``."""
        mean = table["score"].to_numpy(dtype=float)
        rank = rankdata(np.where(np.isnan(mean), np.inf, -mean), method="min").astype(np.int32)  # ties share
        results = {"params": [{"method": e, **p} for e, p in zip(table["estimator"], table["params"])],
                   "param_method": np.array(table["estimator"], dtype=object),
                   "mean_test_score": mean,
                   "std_test_score": np.array([np.std(s) if np.isfinite(s).all() else np.nan for s in splits]),
                   "rank_test_score": rank, "n_scored": table["n_scored"].to_numpy()}
        results["mean_classed_score"] = np.array([np.mean(s) if np.isfinite(s).all() else np.nan for s in classed])
        for i in range(splits.shape[1] if splits.ndim == 2 else 0):
            results[f"split{i}_test_score"] = splits[:, i]
            results[f"split{i}_classed_score"] = classed[:, i]
        return results

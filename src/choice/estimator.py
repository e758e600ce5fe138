"""The choice among every method as a scikit-learn estimator: fit on ``X`` and ``y`` with -1 for an unknown label.

:class:`FamilyChoice` chooses on the labels at hand among its candidates (:mod:`src.choice`): every family
method at every setting of its declared grid, each with its readouts (:mod:`.readouts`), and the references of
the label tracks at theirs. Each candidate is scored by the classes it gives back to the held-out known samples
over folds of the known labels (a method that takes labels fitted without the fold's labels, a method without
labels fitted once a deal, told none, and read out with the other folds' labels), over ``n_repeats`` deals of
the folds; the rule (:mod:`.rule`) keeps the prior's candidate unless another is better by more than the noise
of choosing. The folds that choose are the benchmark's (two, dealt once), so that the rule runs on the evidence
the benchmark chose its level on. The chosen candidate and the best reference are then scored again on fresh
deals of more folds (three, dealt twice: each fit told two thirds of the labels rather than half), and on the
same deals told one fold's labels only; the learning curve through the two shares, read at every label
(:mod:`.learning_curve`), gives the estimate the report reads out. The chosen candidate is fitted on every
sample with every known label and read out, so every sample gets a class back, with its confidence.

Each fit is the protocol's: the method's factorization at rank k (the number of known classes unless told),
then the best of ``kmeans_restarts`` KMeans runs on the representation (a method that clusters by itself,
COP-KMeans, clusters; a reference classifies). The method's parameters are its config's
(``conf/method/<name>.yaml``), the tuned one set to the setting. Everything random flows from ``random_state``
through :class:`numpy.random.SeedSequence`.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import logging
import time
import warnings
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import column_or_1d, validate_data

from .. import methods, resolvers
from ..checks import is_integer, is_number
from ..config_dir import CONF_DIR
from ..methods.core.validation import UNLABELLED
from ..protocol.cell import clusters_directly, method_params
from ..protocol.clustering import best_kmeans
from ..protocol.metrics import accuracy
from ..protocol.trials import fold_of
from ..running import cell_warnings
from ..tuning.grids import Grid, contender_grid, family_grid, setting_text, settings
from ..tuning.homes import track_methods
from ..tuning.selection import FOLDS, takes_labels
from . import prior as priors
from . import learning_curve, rule
from .readouts import OWN, Fitted, candidate_name, classes, readouts_of

logger = logging.getLogger(__name__)

#: scikit-learn's guess that labels with more classes than half their samples (past 20) are a regression
#: target (:func:`sklearn.utils.multiclass.check_classification_targets`). A scoring fit is told a half or a
#: third of the known labels by design, so on a file with a few known a class every fold's classifier raises
#: it, on every method; the labels were checked to be classes (``FamilyChoice._labels``), so it says
#: nothing of the file, and the scoring fits do not keep it (:func:`fit_task`).
FEW_A_CLASS = r"The number of unique classes is greater than 50% of the number of samples"


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


def fit_once(X, name: str, params: dict, y_told: np.ndarray, k: int, seeds: np.random.SeedSequence,
             kmeans_restarts: int) -> Fitted:
    """One fit of the method ``name`` at ``params`` on ``X`` (n_samples, n_features) told ``y_told`` (-1 for
    unknown): a reference's classes, a clustering, or a representation and the protocol's KMeans on it."""
    init_seed, kmeans_seed = (int(s.generate_state(1)[0]) for s in seeds.spawn(2))
    model = methods.make(name, **method_params(name, params, k, init_seed))
    cls = methods.estimator_class(name)
    if getattr(cls, "reference", False):
        return Fitted(representation=X, model=model.fit(X, y_told))
    if clusters_directly(cls):
        return Fitted(clusters=np.asarray(model.fit_predict(X, y_told)), model=model)
    representation = np.asarray(model.fit_transform(X, y_told))
    clusters, _ = best_kmeans(representation, k, kmeans_restarts, "euclidean", kmeans_seed)
    return Fitted(np.asarray(clusters), representation, model)


def hidden(y_partial: np.ndarray, deal: np.ndarray, fold: int) -> np.ndarray:
    """The labels told when ``fold`` of the ``deal`` (each known sample's fold, -1 never held) is held out."""
    return np.where(deal == fold, UNLABELLED, y_partial)


def shown(y_partial: np.ndarray, deal: np.ndarray, fold: int) -> np.ndarray:
    """The labels told when only ``fold`` of the ``deal`` is told (and the samples never held): the estimate's
    second label count (:mod:`.learning_curve`)."""
    return np.where((deal == fold) | (deal < 0), y_partial, UNLABELLED)


def scored_by(deal: np.ndarray, fold: int, only: bool = False) -> np.ndarray:
    """The known samples the split of ``fold`` scores: the fold's own, held out (:func:`hidden`), or, its fit
    told ``only`` the fold's labels (:func:`shown`), every other fold's."""
    return (deal >= 0) & (deal != fold) if only else deal == fold


def fit_task(X, name: str, params: dict, y_partial: np.ndarray, deal: np.ndarray, fold: int | None, n_folds: int,
             readouts: tuple, k: int, seeds: np.random.SeedSequence, kmeans_restarts: int, only: bool = False):
    """One scoring fit (:func:`fit_once`) told every label but those of ``fold`` of the ``deal`` (``only``:
    those of ``fold`` alone, :func:`shown`), or none (``fold`` None: a method without labels, one fit a deal),
    read out (:func:`.readouts.classes`) for that fold, or for each of the ``n_folds``, with the same labels
    told. Returns ``{"clusters": ..., fold: {readout: classes}}`` (n_samples,) each, or the error's text where
    the fit failed, so that a failing candidate costs its own score and never the choice; what it warned
    (:func:`src.running.cell_warnings.recorded`: caught, never printed, as a benchmark cell's, but for
    :data:`FEW_A_CLASS`, the folds' own); and the seconds it took in its process (the time left's pace of its
    method)."""
    start = time.perf_counter()
    with cell_warnings.caught() as records:
        warnings.filterwarnings("ignore", message=FEW_A_CLASS, category=UserWarning)  # the folds' own (above)
        try:
            tell = shown if only else hidden
            told = np.full_like(y_partial, UNLABELLED) if fold is None else tell(y_partial, deal, fold)
            fitted = fit_once(X, name, params, told, k, seeds, kmeans_restarts)
            found = {"clusters": fitted.clusters}
            for held in (range(n_folds) if fold is None else [fold]):
                found[held] = {readout: classes(readout, fitted, tell(y_partial, deal, held), k)[0]
                               .astype(np.int32) for readout in readouts}
        except Exception as exc:  # any error of the method's: its score is missing, the others stand
            found = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
    return found, cell_warnings.recorded(records), time.perf_counter() - start


def keyed_fit_task(task: tuple, *args):
    """``task`` and what :func:`fit_task` returns for ``args``: the fits come back as they end, in any order."""
    return task, fit_task(*args)


@dataclass(frozen=True)
class Candidate:
    """One candidate of the choice: a method (its short ``label``, its registry ``name`` or import path) at a
    ``setting`` of its grid (``default`` if it is the grid's default), read out by ``readout``; ``fit`` is the
    index of the (method, setting) whose fits its readouts share."""

    label: str
    name: str
    setting: dict
    default: bool
    readout: str
    fit: int

    @property
    def title(self) -> str:
        """Its name in the report and the prior, its setting aside: ``SDA + nearest labelled``."""
        return candidate_name(self.label, self.readout)


class FamilyChoice(ClusterMixin, BaseEstimator):
    """Choose a candidate (a method, its setting and its readout) on the known labels, then class every sample.

    Parameters
    ----------
    n_clusters : int, optional
        The number of clusters (and the factorizations' rank); default the number of known classes.
    methods : sequence of str, optional
        The candidates' methods: registry names, or import paths of outside estimators
        (``package.module:Class``, as ``--method`` takes them; run them through the gate first,
        :func:`src.tuning.gated`). Default every family method of a label track but NTF, and the references.
    grids : mapping of str to mapping, optional
        Per method, ``{parameter: values}``: a family method's replace its declared grid (``tune`` in its
        config), an outside estimator's are its grid.
    params : mapping of str to mapping, optional
        Per outside estimator, its constructor parameters besides its grid's.
    n_folds : int, default 2
        The folds of the known labels that choose (stratified by class). A class with one known sample is told
        in every fold and never scored. Two, dealt once, as the benchmark's fold fits are
        (:data:`src.tuning.selection.FOLDS`): the rule's level and prior were chosen on that evidence, and
        more folds or deals would give the test more power than the level was chosen for.
    n_repeats : int, default 1
        Deals of the folds that choose (each from its own seed); a candidate's score is the mean over every
        fold of every deal.
    estimate_folds : int, default 3
        The folds of the estimate: the chosen candidate and the best reference are scored again on fresh deals
        (seeds of their own) of this many folds, so that the estimate is not the score that chose it (the
        winner's curse) and each fit is told more of the labels (two thirds at three), leaning less low. From
        three folds each deal is scored at a second label count too, each fit told one fold's labels only, and
        the estimate is read off the learning curve through the two at every label (:mod:`.learning_curve`).
    estimate_repeats : int, default 2
        Deals of the estimate's folds.
    kmeans_restarts : int, default 20
        KMeans runs on each representation, the best kept (the protocol's 20).
    prior : "shipped", sequence of str or None, default "shipped"
        The candidates best first, by name (``SDA + nearest labelled``, ``LabelSpreading``; a method's bare
        name is its clusters mapped), each at its method's default setting: the first is where the rule starts
        (:mod:`.rule`). "shipped": the shipped benchmark's order at the known share of the labels
        (:func:`.prior.shipped_prior`), by the mean or the regret as the benchmark's rule says
        (:func:`.prior.shipped_rule`). None, or a name no candidate has: the candidates' own order.
    alpha : "shipped" or float in (0, 1], default "shipped"
        The chance that noise alone moves the choice away from the prior's candidate, at most (:mod:`.rule`).
        "shipped": the level the benchmark's choice entrants chose on all their data sets
        (:func:`.prior.shipped_rule`; 0.05 where no rule ships).
    random_state : int, default 0
        The seed every fold deal and fit is drawn from.
    n_jobs : int, optional
        Fits run at once (joblib, as scikit-learn's ``n_jobs``; None: one). The result does not depend on it.

    Attributes
    ----------
    cv_results_ : dict of arrays
        As :class:`sklearn.model_selection.GridSearchCV` gives it: ``params`` (each with its ``method`` and
        ``readout``), ``param_method``, ``param_readout``, ``mean_test_score`` (the share of held-out known
        samples whose class came back right, the score that chooses), ``std_test_score``,
        ``split<i>_test_score``, ``rank_test_score``; beside them ``mean_ac_score`` and ``split<i>_ac_score``
        (the held-out AC, whose map is the best for the held-out samples themselves: a column, never the
        chooser), ``p_vs_prior`` (the rule's test against the prior's candidate) and ``n_scored`` (the fewest
        samples a fold scored).
    best_index_ : int
    best_method_ : str
        The registry name of the chosen method.
    best_params_ : dict
        The chosen setting (the tuned parameters only).
    best_readout_ : str
        How the chosen candidate's classes are read (:mod:`.readouts`).
    best_score_ : float
        Its share of held-out known samples classed right on the folds that chose.
    n_scored_ : int
        The known samples scored (each held out once a deal); a class with one known sample is never scored.
    estimates_ : dict of int to ndarray of shape (estimate_folds * estimate_repeats,)
        The estimate's splits: for the chosen candidate and the best reference (rows of ``cv_results_``), the
        share of each split's held-out samples classed right, on the fresh deals.
    few_estimates_ : dict of int to ndarray of shape (estimate_folds * estimate_repeats,)
        The same rows at the second label count: each split's fit told its fold's labels only, its share
        right on the other folds' known samples (empty below three estimate folds).
    estimate_intervals_ : dict of int to tuple of float
        The same rows' estimates, each ``(share, low, high)``: the share right read off the learning curve at
        every known label, with its 95% interval (:func:`.learning_curve.estimate`).
    estimate_ : float
        The chosen candidate's estimate, the share of ``estimate_intervals_``.
    reference_index_ : int or None
        The best reference (a classifier on the labels alone) by the score that chooses; None where the
        candidates hold none.
    prior_index_ : int
        The prior's candidate, where the rule started.
    prior_how_ : str or None
        How the shipped prior ordered the candidates (``"mean"`` or ``"regret"``); None for a prior given.
    alpha_ : float
        The rule's level.
    selection_ : str
        Why it was chosen (a key of :data:`.rule.REASONS`).
    best_estimator_ : estimator
        The chosen method fitted on every sample with every known label.
    clusters_ : ndarray of shape (n_samples,)
        Each sample's cluster (a reference's: its class).
    labels_ : ndarray of shape (n_samples,)
        Each sample's class, in the values of ``y`` (a known sample's own); -1 where none could be given.
    confidence_ : ndarray of shape (n_samples,)
        How sure the readout is of each class (:func:`.readouts.classes`); 1 for a known sample.
    classes_ : ndarray
        The known classes.
    warnings_ : list of str
        What the scoring fits warned, caught and counted: one line per method, category and first message.

    References
    ----------
    T. Van Craenendonck, H. Blockeel, "Constraint-based clustering selection", Machine Learning 106(9-10),
    pp. 1497-1521, 2017.

    G. C. Cawley and N. L. C. Talbot, "On over-fitting in model selection and subsequent selection bias in
    performance evaluation", Journal of Machine Learning Research 11, pp. 2079-2107, 2010.
    """

    def __init__(self, n_clusters=None, methods=None, grids=None, params=None, n_folds=FOLDS, n_repeats=1,
                 estimate_folds=3, estimate_repeats=2, kmeans_restarts=20, prior="shipped", alpha="shipped",
                 random_state=0, n_jobs=None):
        self.n_clusters = n_clusters
        self.methods = methods
        self.grids = grids
        self.params = params
        self.n_folds = n_folds
        self.n_repeats = n_repeats
        self.estimate_folds = estimate_folds
        self.estimate_repeats = estimate_repeats
        self.kmeans_restarts = kmeans_restarts
        self.prior = prior
        self.alpha = alpha
        self.random_state = random_state
        self.n_jobs = n_jobs

    def candidates(self) -> list[Candidate]:
        """Every candidate the choice scores: each method's settings, each with each of its readouts."""
        found, fit = [], 0
        for name in self.methods or family_methods():
            grid = self.grid(name)
            for setting in settings(grid):
                found += [Candidate(grid.label, name, setting, setting == dict(grid.defaults), readout, fit)
                          for readout in readouts_of(name)]
                fit += 1
        return found

    def grid(self, name: str) -> Grid:
        """The grid of a candidate method: a family method's declared one (its values replaced where ``grids``
        gives them); an outside estimator's (an import path) from ``grids`` and ``params``, labelled with its
        class name (:func:`src.tuning.grids.contender_grid`)."""
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

    def _prior_how(self, shipped: tuple[str, float]) -> str | None:
        """How the ``shipped`` rule's prior orders the candidates (``"mean"`` or ``"regret"``), None for a prior
        given."""
        return shipped[0] if isinstance(self.prior, str) and self.prior == "shipped" else None

    def prior_order(self, found: list[Candidate], known_share: float, how: str | None = None) -> list[int]:
        """The candidates' rows as the prior places them (``prior``, the shipped one ordered by ``how``):
        each name it gives, its default setting first, then its others in their order."""
        names = priors.shipped_prior(known_share, how) if how is not None else self.prior
        order = []
        for name in names or []:
            rows = [i for i, c in enumerate(found) if c.title == name]
            order += sorted(rows, key=lambda i: not found[i].default)
        return order

    def fit(self, X, y=None, progress=None):
        """Score every candidate on folds of the known labels of ``y`` (n_samples,; -1 unknown), choose, score
        the chosen one and the best reference again for the estimate, fit the choice on every sample; ``X`` is
        (n_samples, n_features), non-negative for the factorizations. ``progress(name, seconds)``, where
        given, is called as each scoring fit ends, with its method's registry name and the seconds it took;
        its ``expect(names)``, where it has one, as the estimate's fits start, with theirs (:meth:`fits`
        forecasts them before the choice); its ``prices`` (a registry name's expected seconds a fit), where
        it has them, order the fits: in rounds of one fit a method, the dearest method's first."""
        for name, lowest in (("n_folds", 2), ("n_repeats", 1), ("estimate_folds", 2), ("estimate_repeats", 1)):
            if not is_integer(getattr(self, name)) or getattr(self, name) < lowest:
                raise ValueError(f"{name}={getattr(self, name)!r} must be an integer of at least {lowest}")
        shipped = priors.shipped_rule()
        self.alpha_ = shipped[1] if isinstance(self.alpha, str) and self.alpha == "shipped" else self.alpha
        if not is_number(self.alpha_) or not 0.0 < self.alpha_ <= 1.0:
            raise ValueError(f"alpha={self.alpha!r} must be 'shipped' or a number in (0, 1]")
        self.prior_how_ = self._prior_how(shipped)
        X = validate_data(self, X, dtype=np.float64)
        if X.shape[0] < 2:
            raise ValueError(f"n_samples={X.shape[0]}: choosing needs at least 2 samples")
        y_partial, self.classes_ = self._labels(y, X.shape[0])
        k = self.clusters_for(y_partial)
        found = self.candidates()
        deals = [self._deal(y_partial, self.n_folds, (0, deal)) for deal in range(self.n_repeats)]
        prices = getattr(progress, "prices", None)
        fitted, said = self._split_fits(X, y_partial, k, self._plan(found, self.n_folds, self.n_repeats, prices),
                                        deals, self.n_folds, 1, progress)
        correct, splits, acs = self._scored(found, fitted, deals, y_partial, self.n_folds)
        self.n_scored_ = int(correct.shape[1])
        chosen = rule.choose(correct, self.prior_order(found, float(np.mean(y_partial != UNLABELLED)),
                                                       self.prior_how_), self.alpha_)
        self.best_index_, self.selection_, self.prior_index_ = chosen.index, chosen.why, chosen.start
        picked = found[self.best_index_]
        self.best_method_, self.best_params_, self.best_readout_ = picked.name, dict(picked.setting), picked.readout
        self.cv_results_ = self._results(found, splits, acs, chosen.pvalues, deals)
        self.best_score_ = float(self.cv_results_["mean_test_score"][self.best_index_])
        self.reference_index_ = best_reference(found, self.cv_results_["mean_test_score"])
        said += self._estimate(X, y_partial, k, found, progress, prices)
        self.warnings_ = cell_warnings.lines(pd.DataFrame(said), noun="fit")
        for line in self.warnings_:
            logger.info("%s", line)
        with cell_warnings.caught():  # the final fit's warnings were the scoring fits' too, and are said there
            fitted = fit_once(X, picked.name, {**self.base_params(picked.name), **picked.setting}, y_partial, k,
                              self._seed(2), self.kmeans_restarts)
            given, self.confidence_ = classes(picked.readout, fitted, y_partial, k)
        self.best_estimator_ = fitted.model
        self.clusters_ = np.asarray(fitted.clusters if fitted.clusters is not None else given)
        self.labels_ = np.where(given == UNLABELLED, UNLABELLED, self.classes_[np.maximum(given, 0)])
        return self

    def _plan(self, found: list[Candidate], n_folds: int, n_repeats: int, prices=None) -> tuple[list, list]:
        """The fits that score ``found`` on ``n_repeats`` deals of ``n_folds`` folds: their setups
        (:meth:`_setups`) and tasks in the order they run (:meth:`_tasks`, by ``prices``)."""
        setups = self._setups(found)
        return setups, self._tasks(setups, n_folds, n_repeats, prices)

    @staticmethod
    def _names(plan: tuple[list, list]) -> list[str]:
        """The registry name of each fit of a :meth:`_plan`, in the order they run."""
        setups, tasks = plan
        return [setups[f][0] for f, _, _ in tasks]

    def _split_fits(self, X, y_partial, k, plan, deals, n_folds, stage, progress, only=False):
        """Every fit of the ``plan`` (:meth:`_plan`) on ``deals`` of ``n_folds`` folds (each told every fold's
        labels but its own, or ``only`` its own: :func:`fit_task`), ``stage`` keying their seeds
        (:meth:`_seed`); returns them by (fit, deal, fold) and what each warned, in the plan's order. The
        fits come back as they end (a long one holds back no progress line of those after it)."""
        setups, tasks = plan
        running = Parallel(n_jobs=self.n_jobs, return_as="generator_unordered")(
            delayed(keyed_fit_task)((f, deal, fold), X, setups[f][0],
                                    {**self.base_params(setups[f][0]), **setups[f][1]}, y_partial, deals[deal], fold,
                                    n_folds, setups[f][2], k, self._seed(stage, deal, -1 if fold is None else fold),
                                    self.kmeans_restarts, only)
            for f, deal, fold in tasks)
        fitted, warned = {}, {}
        for task, (got, said, seconds) in running:
            fitted[task], warned[task] = got, said
            if progress is not None:
                progress(setups[task[0]][0], seconds)
        return fitted, [{"method": setups[task[0]][0], cell_warnings.COLUMN: warned[task]} for task in tasks]

    def estimated_rows(self) -> list[int]:
        """The candidates the estimate scores again (rows of ``cv_results_``): the chosen one, and the best
        reference unless it is the chosen one."""
        return [self.best_index_, *([] if self.reference_index_ in (None, self.best_index_) else
                                    [self.reference_index_])]

    def estimate_stages(self) -> tuple[bool, ...]:
        """The estimate's fits on each deal: told every fold's labels but one, then (from
        :data:`.learning_curve.FEWEST_FOLDS` folds) told one fold's only (``only``)."""
        return (False, True) if self.estimate_folds >= learning_curve.FEWEST_FOLDS else (False,)

    def _estimate(self, X, y_partial, k, found, progress, prices) -> list[dict]:
        """Score the chosen candidate and the best reference on fresh deals of ``estimate_folds`` folds (seeds
        keyed 4, 5 and 6, none the choosing folds' own), at two label counts (:meth:`estimate_stages`), their
        fits ordered by ``prices``: ``estimates_``, ``few_estimates_``, ``estimate_intervals_`` and
        ``estimate_``, read off the learning curve (:mod:`.learning_curve`). Returns what the fits warned."""
        rows = self.estimated_rows()
        subset = renumbered(found, rows)
        deals = [self._deal(y_partial, self.estimate_folds, (4, deal)) for deal in range(self.estimate_repeats)]
        plan = self._plan(subset, self.estimate_folds, self.estimate_repeats, prices)
        stages = self.estimate_stages()
        if progress is not None and hasattr(progress, "expect"):
            progress.expect(self._names(plan) * len(stages))
        said, scored = [], []
        for stage, only in enumerate(stages, start=5):
            fitted, warned = self._split_fits(X, y_partial, k, plan, deals, self.estimate_folds, stage, progress,
                                              only)
            said += warned
            scored.append(self._scored(subset, fitted, deals, y_partial, self.estimate_folds,
                                       "it has no estimate (NaN)", only)[:2])
        (many, splits), (few, few_splits) = scored[0], scored[-1]  # one count only: few is many, the slope 0
        self.estimates_ = {i: splits[j] for j, i in enumerate(rows)}
        self.few_estimates_ = {i: few_splits[j] for j, i in enumerate(rows)} if len(stages) > 1 else {}
        self.estimate_intervals_ = {i: learning_curve.estimate(learning_curve.extrapolated(
            many[j], few[j], self.estimate_folds)) for j, i in enumerate(rows)}
        self.estimate_ = self.estimate_intervals_[self.best_index_][0]
        return said

    @staticmethod
    def _scored(found: list[Candidate], fitted: dict, deals: list, y_partial: np.ndarray, n_folds: int,
                failing: str = "it is left out of the choice", only: bool = False):
        """From the scoring fits of ``deals`` of ``n_folds`` folds: each candidate's share of deals in which
        each scored sample came back right (candidates x scored samples, NaN for a candidate whose fit failed,
        logged with what ``failing`` costs), and per split (fold of a deal) its share right and its held-out
        AC. A split scores its fold's samples, or (fits told ``only`` their fold's labels, :func:`shown`) every
        other fold's, each sample then counted in ``n_folds - 1`` splits of a deal."""
        scored = deals[0] >= 0  # every deal holds out the same samples, each once
        correct = np.zeros((len(found), int(scored.sum())))
        splits = np.full((len(found), len(deals) * n_folds), np.nan)
        acs = splits.copy()
        for c, candidate in enumerate(found):
            failed = None
            for deal in range(len(deals)):
                for fold in range(n_folds):
                    got = fitted.get((candidate.fit, deal, fold), fitted.get((candidate.fit, deal, None)))
                    if isinstance(got, str):
                        failed = got
                        break
                    held = scored_by(deals[deal], fold, only)
                    given = got[fold][candidate.readout]
                    right = given == y_partial
                    correct[c] += right[scored] & held[scored]
                    split = deal * n_folds + fold
                    if held.any():
                        splits[c, split] = float(np.mean(right[held]))
                        labels = got["clusters"] if candidate.readout == "clusters" else given
                        acs[c, split] = accuracy(y_partial[held], labels[held])
                if failed:
                    break
            if failed:
                logger.warning("%s at %s failed (%s); %s", candidate.title,
                               setting_text(candidate.setting) or "its one setting", failed, failing)
                correct[c], splits[c], acs[c] = np.nan, np.nan, np.nan
        return correct / (len(deals) * (n_folds - 1 if only else 1)), splits, acs

    @staticmethod
    def _setups(found: list[Candidate]) -> list[tuple[str, dict, tuple]]:
        """Each fit's method, setting and the readouts its candidates read, by fit index."""
        setups = {}
        for candidate in found:
            name, setting, readouts = setups.get(candidate.fit, (candidate.name, candidate.setting, ()))
            setups[candidate.fit] = (name, setting, (*readouts, candidate.readout))
        return [setups[f] for f in sorted(setups)]

    def _tasks(self, setups: list, n_folds: int, n_repeats: int, prices=None) -> list[tuple[int, int, int | None]]:
        """Each scoring fit of ``n_repeats`` deals of ``n_folds`` folds as (fit, deal, fold): a method that
        takes labels once per fold of each deal, a method without labels once per deal (fold None: told no
        label, read out for every fold). In the order they run: in rounds, each one fit of every method with
        fits left, the dearest method first by ``prices`` (a registry name's expected seconds a fit; without
        them, the candidates' order), each method's own fits in an order drawn from ``random_state`` (key
        (3,)). So every method has run once by the end of the first round, and from then on the time left
        paces each by its own seconds (:class:`src.choice.your_data.FitProgress`); the dearest, which weigh
        most in it, are measured first. Drawn in one order of all the fits, the first tenth would leave about
        half the methods unmeasured, priced by the others. No result depends on the order: each fit's seed is
        its own (:meth:`_seed`)."""
        tasks = [(f, deal, fold) for f, (name, _, _) in enumerate(setups) for deal in range(n_repeats)
                 for fold in (range(n_folds) if takes_labels(name) else [None])]
        own = {name: [] for name, _, _ in setups}
        for i in np.random.default_rng(self._seed(3)).permutation(len(tasks)):
            own[setups[tasks[i][0]][0]].append(tasks[i])
        names = sorted(own, key=lambda name: -prices.get(name, 0.0)) if prices else list(own)
        return [task for round_ in itertools.zip_longest(*(own[name] for name in names)) for task in round_
                if task is not None]

    def fits(self, y=None) -> list[str]:
        """The registry name of each fit that scores (in the order they run without prices; the chosen one's
        final fit not counted): the fits that choose, then, given the labels ``y`` (n_samples,; -1 unknown), a
        forecast of the estimate's: the prior's candidate and the first reference the prior names, which the
        choice keeps unless the evidence moves it (:meth:`fit` tells its progress the fits it runs instead)."""
        found = self.candidates()
        names = self._names(self._plan(found, self.n_folds, self.n_repeats))
        if y is None:
            return names
        known_share = float(np.mean(np.asarray(y) != UNLABELLED))
        order = [*self.prior_order(found, known_share, self._prior_how(priors.shipped_rule())), *range(len(found))]
        rows = dict.fromkeys([order[0], *[i for i in order if found[i].readout == OWN][:1]])
        estimate = self._names(self._plan(renumbered(found, rows), self.estimate_folds, self.estimate_repeats))
        return names + estimate * len(self.estimate_stages())

    def _seed(self, *key: int) -> np.random.SeedSequence:
        """The seed of one use, from ``random_state`` and its key: (0, deal) deals the folds that choose,
        (1, deal, fold) starts every candidate's fit of that fold (-1: a label-free fit, the deal's one), (2,)
        the final fit, (3,) the order the fits run in (:meth:`_tasks`), (4, deal) the estimate's deals, (5, deal,
        fold) its fits told every other fold's labels and (6, deal, fold) those told the fold's own only.
        Every candidate of a fold starts alike, as every method of a benchmark trial does."""
        return np.random.SeedSequence(self.random_state, spawn_key=tuple(k % 2**32 for k in key))

    def _deal(self, y_partial: np.ndarray, n_folds: int, key: tuple[int, int]) -> np.ndarray:
        """The fold of each known sample in a deal of ``n_folds`` folds seeded by ``key`` (:meth:`_seed`; -1:
        never held out), stratified by class (:func:`fold_of`); a class with one known sample is told in every
        fold and never scored."""
        folds = fold_of(y_partial, n_folds, np.random.default_rng(self._seed(*key)))
        classes_, counts = np.unique(y_partial[y_partial != UNLABELLED], return_counts=True)
        folds[np.isin(y_partial, classes_[counts == 1])] = -1
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

    def _results(self, found: list[Candidate], splits: np.ndarray, acs: np.ndarray, pvalues: np.ndarray,
                 deals: list) -> dict:
        """``cv_results_`` from the candidates, their splits' shares right and held-out ACs (candidates x
        splits) and their p against the prior's candidate."""
        mean = np.array([np.mean(s) if np.isfinite(s).all() else np.nan for s in splits])
        rank = rankdata(np.where(np.isnan(mean), np.inf, -mean), method="min").astype(np.int32)  # ties share
        counts = [int((deal == fold).sum()) for deal in deals for fold in range(self.n_folds)]
        results = {"params": [{"method": c.name, "readout": c.readout, **c.setting} for c in found],
                   "param_method": np.array([c.name for c in found], dtype=object),
                   "param_readout": np.array([c.readout for c in found], dtype=object),
                   "mean_test_score": mean,
                   "std_test_score": np.array([np.std(s) if np.isfinite(s).all() else np.nan for s in splits]),
                   "rank_test_score": rank,
                   "mean_ac_score": np.array([np.mean(s) if np.isfinite(s).all() else np.nan for s in acs]),
                   "p_vs_prior": pvalues,
                   "n_scored": np.full(len(found), min(counts) if counts else 0)}
        for i in range(splits.shape[1]):
            results[f"split{i}_test_score"] = splits[:, i]
            results[f"split{i}_ac_score"] = acs[:, i]
        return results


def renumbered(found: list[Candidate], rows) -> list[Candidate]:
    """The candidates of ``rows`` (of ``found``), each fit its own, numbered from 0 (a plan of its own)."""
    return [replace(found[i], fit=j) for j, i in enumerate(rows)]


def best_reference(found: list[Candidate], scores) -> int | None:
    """The reference (a classifier on the labels alone) among ``found`` with the best of ``scores`` (one a
    candidate, NaN for a failed one; at a tie the first), or None where none has a score."""
    scores = np.asarray(scores, dtype=float)
    own = [i for i, c in enumerate(found) if c.readout == OWN and np.isfinite(scores[i])]
    return max(own, key=lambda i: (scores[i], -i)) if own else None

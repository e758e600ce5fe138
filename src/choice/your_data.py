"""Your partially labelled data, clustered: ``python -m src.cluster mine.npz`` (the command is its arguments and
:func:`run`).

The file is read as ``--dataset`` reads it (``dataset=file``, :mod:`src.data.user_file`: ``.npz``, ``.mat`` or
``.csv``, a sample per row), preprocessed as the benchmark's label tracks do (unit-norm samples), and a label
of -1 marks a sample whose class is unknown. The choice among every candidate (:class:`.estimator.FamilyChoice`,
the rule of :mod:`.rule`) runs on the known labels; the chosen candidate is then fitted on every sample and
read out, so every sample gets a class. Written into the output folder, all at once when everything is done (a
failed run leaves no half-written folder):

* ``labels.csv``: every sample (its row in the file), its given label or none, its predicted class, the
  readout's confidence in it, and its cluster;
* ``candidates.csv``: every candidate's held-out scores (``cv_results_``);
* ``report.md`` and its figure (:mod:`src.presentation.cluster_report`), and ``provenance.json``.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from importlib import import_module
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from hydra import compose, initialize_config_dir
from joblib import effective_n_jobs
from sklearn.utils.parallel import Parallel, delayed

from .. import resolvers
from ..config_dir import CONF_DIR
from ..data import load_dataset
from ..data.user_file import UNKNOWN
from ..errors import ConfigError, UserError
from ..methods import REGISTRY
from ..methods.core.validation import UNLABELLED
from ..reproduction import contenders as opened
from ..reproduction.contenders import quoted
from ..protocol.partition import decode
from ..reproduction import shipped
from ..resolvers import safe_name
from ..running import provenance
from ..running.pool.schedule import error_lines, forecast_errors, published_costs, sample_error
from ..running.progress import counted, duration, time_left
from ..tuning import gated
from ..tuning.grids import parse_grid, setting_text
from .estimator import FamilyChoice, composed_method, family_methods

logger = logging.getLogger(__name__)

#: Where the folders go unless ``--out`` says: ``outputs/cluster/<file stem>``.
OUTPUTS = Path("outputs") / "cluster"


@dataclass
class YourData:
    """A partially labelled file as the choice reads it."""

    name: str
    X: np.ndarray  # (n_samples, n_features), preprocessed
    y: np.ndarray  # (n_samples,) the file's labels as integers, -1 unknown
    files: tuple  # the file read, with its sha256 (provenance)

    @property
    def known(self) -> np.ndarray:
        return self.y != UNLABELLED

    def rank(self, estimator: FamilyChoice) -> int:
        """The clusters ``estimator`` fits on this file (:meth:`.estimator.FamilyChoice.clusters_for`)."""
        return estimator.clusters_for(self.y)


def read(path: str, overrides=()) -> YourData:
    """The file at ``path`` read as ``--dataset`` reads it, its -1 labels unknown; ``overrides`` are Hydra
    overrides of its ``dataset`` node (``dataset.y_key=labels``). A file without two known classes is refused
    on one line."""
    resolvers.register()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        config = compose(config_name="config", overrides=[
            "experiment=benchmark/labels30", "dataset=file",
            f"dataset.path={quoted(Path(path).expanduser().resolve())}", *overrides])
    data = load_dataset(config.dataset, config.paths.data_dir, config.paths.mirror, config.seed)
    names = np.asarray(data.class_names)[data.y]
    y = np.where(names == UNKNOWN, UNLABELLED, names.astype(np.int64))
    known = np.unique(y[y != UNLABELLED])
    if known.size < 2:  # no known label at all is the loader's own line
        raise UserError(f"{path}: a single class is known ({known[0]}): the choice needs known labels of at "
                        "least 2 classes")
    return YourData(data.name, data.X, y, data.files)


def notes(data: YourData) -> list[str]:
    """What the reader should know about the labels: how many are known, and the classes with one known
    sample, which train the label methods in every fold and are never scored."""
    classes, counts = np.unique(data.y[data.known], return_counts=True)
    found = [f"{data.name}: {data.X.shape[0]} samples, {data.X.shape[1]} features, {int(data.known.sum())} known "
             f"labels ({100 * data.known.mean():.0f}%) of {classes.size} classes"]
    single = classes[counts == 1]
    if single.size:
        found.append(f"class(es) {', '.join(map(str, single))} have one known sample each: it is told to the "
                     "label methods in every fold and never scored")
    return found


def labels_table(data: YourData, found: FamilyChoice) -> pd.DataFrame:
    """``labels.csv``: every sample, its given label (empty when unknown), its predicted class, the readout's
    confidence in it (:func:`src.choice.readouts.classes`; 1 for a known sample) and its cluster."""
    return pd.DataFrame({"sample": np.arange(data.y.size),
                         "given": pd.Series(data.y, dtype="Int64").where(data.known),
                         "predicted": pd.array(found.labels_, dtype="Int64"),
                         "confidence": np.round(found.confidence_, 4), "cluster": found.clusters_})


def candidates_table(found: FamilyChoice) -> pd.DataFrame:
    """``candidates.csv``: ``cv_results_`` a row per candidate, its setting as text."""
    results = dict(found.cv_results_)
    params = results.pop("params")
    table = pd.DataFrame({key: list(value) for key, value in results.items()})
    table.insert(1, "setting", [",".join(f"{k}={v}" for k, v in p.items() if k not in ("method", "readout"))
                                for p in params])
    return table


#: The track whose published cell costs price a fit (a fit on every sample, then the protocol's KMeans).
PRICED_TRACK = "labels30"


def trial_sizes() -> dict[tuple[str, int], int]:
    """The samples of a benchmark trial per (data set, k): the median length of the shipped KMeans cells'
    partitions of :data:`PRICED_TRACK`; empty where no cells ship."""
    family = shipped.load() if shipped.FILE.is_file() else None
    if family is None:
        return {}
    rows = family[(family["track"] == PRICED_TRACK) & (family["method"] == "KMeans")]
    sizes = rows.groupby(["dataset", "k"])["partition"].agg(lambda cells: int(np.median([len(decode(p))
                                                                                        for p in cells])))
    return {(str(d), int(k)): int(n) for (d, k), n in sizes.items()}


def priced(names, n_samples: int, n_clusters: int) -> dict[str, float]:
    """Seconds one fit of each method (registry names) is expected to take on ``n_samples`` samples at rank
    ``n_clusters``: its published cost of a benchmark cell (``docs/results/cell_costs.csv``: a fit and the
    protocol's KMeans, at its default setting) on the (data set, k) of :data:`PRICED_TRACK` nearest in trial
    size and k (the sum of their squared log ratios), scaled by both ratios, as an update's cost scales
    (samples x features x rank: :func:`src.running.pool.schedule.model_seconds`; the features are the
    benchmark's, about a thousand). A method without a published cost is priced as the median of the others.
    A guide: how many updates a fit makes is not known before it runs, and the time left corrects the price by
    the fits' own pace."""
    costs, sizes = published_costs(), trial_sizes()
    found = {}
    for name in set(names):
        if name not in REGISTRY:  # an outside estimator: no published cost
            continue
        label = safe_name(composed_method(name)["label"])
        known = [(n, k, costs[(f"benchmark/{PRICED_TRACK}/runs/{dataset}_{label}", k)])
                 for (dataset, k), n in sizes.items() if (f"benchmark/{PRICED_TRACK}/runs/{dataset}_{label}", k) in costs]
        if known:
            size, k, seconds = min(known, key=lambda item: (math.log(item[0] / n_samples) ** 2
                                                            + math.log(item[1] / n_clusters) ** 2))
            found[name] = seconds * (n_samples / size) * (n_clusters / k)
    fallback = float(np.median(list(found.values()))) if found else 1.0
    return {name: found.get(name, fallback) for name in names}


class FitProgress:
    """The progress of the choice's fits, one line every :data:`EVERY` seconds: fits done, work done (their
    prices, :func:`priced`), time left (:func:`src.running.progress.time_left`): the seconds the fits left
    will take in their processes, at the wall time each second of work begun has taken so far. A fit left of
    a method that has run is its method's mean seconds; one of a method that has not, its price at the median
    over the methods that have of their seconds to their price. So a price off for one method misleads only
    until that method has run, and one method's fits far dearer than their price do not set the pace of the
    others. The work begun is the fits done and, in each of the other ``workers`` processes, about one mean
    fit under way: the fits end one at a time, and with two processes the first to end has the other's as
    long again behind it (counting the fits done alone doubles the first forecasts). The fits may end in any
    order: the fits left are counted by method. The estimator reads ``prices`` to run the dearest
    methods' fits first (:meth:`.estimator.FamilyChoice.fit`). The clock starts once the processes are up
    (:func:`start_processes`): their start and imports are paid once, and would price every fit left. The
    ``clock`` is ``time.perf_counter`` unless a replay gives its own (``tools/fit_orders.py``).

    Each fit's forecast is kept (as the pool keeps its own: :meth:`src.running.pool.schedule.Forecast.record`),
    and the last fit records in ``errors`` how far it was from the time that remained at 10%, 25% and 50% of
    the fits and of the time (:func:`src.running.pool.schedule.forecast_errors`, logged at DEBUG), and how far
    the lines a person read before the end were (``errors["lines"]``; the time remaining is to the last fit,
    as the others'), said in one INFO line where any was read: how far to trust the lines. The command keeps
    ``errors`` in ``provenance.json``."""

    EVERY = 30.0

    def __init__(self, prices: dict[str, float], names: list[str], workers: int = 1, clock=time.perf_counter):
        self.prices, self.total, self.workers = prices, sum(prices[name] for name in names), workers
        self.left, self.count = Counter(names), len(names)  # the fits left of each method; all fits
        self.clock = clock
        self.done, self.fits, self.start = 0.0, 0, clock()
        self.said = self.start
        self.seconds: dict[str, list[float]] = {}  # each method's fits done: the seconds each took
        self.samples: list[list[float]] = []
        self.shown: list[int] = []  # the samples whose progress line said a time left
        self.errors: dict[str, list[dict]] = {}  # how far the forecasts were, once the last fit is done

    def seconds_left(self) -> tuple[float, float]:
        """The seconds the fits done took in their processes, and those the fits left will take (the class
        docstring)."""
        took = sum(map(sum, self.seconds.values()))
        ratios = [np.mean(s) / max(self.prices[name], 1e-9) for name, s in self.seconds.items()]
        ratio = float(np.median(ratios)) if ratios else 1.0
        left = sum(count * (np.mean(self.seconds[name]) if name in self.seconds else self.prices[name] * ratio)
                   for name, count in self.left.items())
        return took, float(left)

    def begun(self, took: float) -> float:
        """The seconds of work begun: ``took`` by the fits done, and one mean fit under way in each other
        process that still has a fit to run (the class docstring)."""
        under_way = min(self.workers - 1, self.count - self.fits)
        return took * (1 + under_way / self.fits) if self.fits else 0.0

    def expect(self, names: list[str]) -> None:
        """The fits left are ``names`` (the estimate's, once the choice is known), in place of the forecast's;
        a method without a price is priced as the dearest priced."""
        fallback = max(self.prices.values(), default=1.0)
        for name in names:
            self.prices.setdefault(name, fallback)
        self.total = self.done + sum(self.prices[name] for name in names)
        self.left, self.count = Counter(names), self.fits + len(names)

    def __call__(self, name: str, seconds: float | None = None) -> None:
        """One fit of the method ``name`` done, after ``seconds`` in its process (None: its price)."""
        self.done += self.prices[name]
        self.seconds.setdefault(name, []).append(self.prices[name] if seconds is None else seconds)
        self.fits += 1
        self.left[name] = max(self.left[name] - 1, 0)
        now = self.clock()
        elapsed, (took, left) = now - self.start, self.seconds_left()
        begun = self.begun(took)
        self.samples.append([elapsed, self.fits / self.count, self.done / self.total,
                             elapsed / begun * left if begun > 0 else None])
        if now - self.said >= self.EVERY or self.fits == self.count:
            self.said = now
            logger.info("[fits %d/%d, work %d%%] %s", self.fits, self.count, round(100 * self.done / self.total),
                        time_left(elapsed, begun, left))
            if self.fits < self.count and begun > 0:
                self.shown.append(len(self.samples) - 1)
        if self.fits == self.count:
            self.errors = {"forecast_errors": forecast_errors(self.samples, elapsed),
                           "forecast_errors_by_time": forecast_errors(self.samples, elapsed, by="time"),
                           "lines": [sample_error(self.samples[i], elapsed) for i in self.shown]}
            for line in error_lines(self.errors, unit="fits"):
                logger.debug("%s", line)  # ours more than the reader's: kept in provenance.json (time_left)
            level = logging.INFO if self.errors["lines"] else logging.DEBUG  # a line was read: how far to trust it
            logger.log(level, "%s", said_lines(self.errors["lines"]))


def said_lines(errors: list[dict]) -> str:
    """How far the time left of the progress lines before the end was (``errors``: their
    :func:`src.running.pool.schedule.sample_error`), as a line: ``the time left said on 3 lines before the end:
    -14% to +23% of the time that remained``."""
    if not errors:
        return "no progress line said a time left before the end"
    found = [100 * error["error"] for error in errors]
    return (f"the time left said on {counted(len(found), 'line')} before the end: {min(found):+.0f}% to "
            f"{max(found):+.0f}% of the time that remained")


def start_processes(n_jobs) -> None:
    """Start the processes the fits will run in (joblib's reusable pool, as :class:`FamilyChoice` calls it)
    and import the methods in each, before the time left's clock starts."""
    Parallel(n_jobs=n_jobs)(delayed(import_module)("src.choice.estimator") for _ in range(effective_n_jobs(n_jobs)))


def fit_with_progress(data: YourData, estimator: FamilyChoice, progress=FitProgress):
    """Fit ``estimator`` on ``data`` as the command does: its fits priced (:func:`priced`), the processes
    started, then a ``progress`` (:class:`FitProgress` or a subclass) of every fit. Returns the fitted
    estimator and the progress."""
    names = estimator.fits(data.y)
    prices = priced(names, data.X.shape[0], data.rank(estimator))
    start_processes(estimator.n_jobs)
    tracked = progress(prices, names, effective_n_jobs(estimator.n_jobs))
    return estimator.fit(data.X, data.y, progress=tracked), tracked


def dry_run(path: str, estimator: FamilyChoice, overrides=()) -> tuple[int, float]:
    """Read and check the file, count and price the fits (:func:`priced`); nothing is fitted or written.
    Returns the fits and their priced seconds."""
    data = read(path, overrides)
    for line in notes(data):
        logger.info("%s", line)
    names = estimator.fits(data.y)
    prices = priced(names, data.X.shape[0], data.rank(estimator))
    seconds = sum(prices[name] for name in names) + max(prices.values())  # the final fit: priced as the dearest
    jobs = effective_n_jobs(estimator.n_jobs)
    logger.info("dry run: %d candidates, %d fits (%d deal(s) of %d folds that choose, then the estimate's %d "
                "deal(s) of %d at %d label count(s)), about %s of fits, about %s on %d process(es) (priced from the "
                "benchmark's cells); nothing fitted, nothing written", len(estimator.candidates()), len(names) + 1,
                estimator.n_repeats, estimator.n_folds, estimator.estimate_repeats, estimator.estimate_folds,
                len(estimator.estimate_stages()), duration(seconds), duration(seconds / jobs), jobs)
    return len(names) + 1, seconds


def run(path: str, out: Path | None, estimator: FamilyChoice, report, overrides=()) -> Path:
    """Choose and cluster the file at ``path`` with ``estimator``; write the folder ``out`` (default
    ``outputs/cluster/<stem>``) all at once, ``report(folder, data, estimator, notes, seconds)`` writing its
    report; returns it."""
    started = provenance.now()
    data = read(path, overrides)
    out = Path(out) if out is not None else OUTPUTS / Path(path).stem
    try:  # the folder is checked before the fits: a bad --out costs no fit
        out.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    except OSError as exc:
        raise ConfigError(f"--out {out}: cannot make the folder ({exc.strerror})") from None
    said = notes(data)
    for line in said:
        logger.info("%s", line)
    start = time.perf_counter()
    try:
        found, progress = fit_with_progress(data, estimator)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    seconds = time.perf_counter() - start
    chosen = found.candidates()[found.best_index_]
    logger.info("chose %s at %s (%s), %.1f%% of the held-out known samples classed right (the estimate, on "
                "fresh folds: %.1f%%), in %.0f s", chosen.title, setting_text(chosen.setting) or "its one setting",
                found.selection_, 100 * found.best_score_, 100 * found.estimate_, seconds)
    try:
        labels_table(data, found).to_csv(staging / "labels.csv", index=False)
        candidates_table(found).to_csv(staging / "candidates.csv", index=False)
        report(staging, data, found, said, seconds)
        provenance.write(staging, provenance.collect(started, provenance.now(), data_files=data.files,
                                                     extra={"choice": {"method": found.best_method_,
                                                                       "params": found.best_params_,
                                                                       "readout": found.best_readout_,
                                                                       "selection": found.selection_,
                                                                       "prior_how": found.prior_how_,
                                                                       "alpha": found.alpha_,
                                                                       "score": found.best_score_,
                                                                       "estimate": found.estimate_},
                                                                            "time_left": progress.errors}))
        if out.exists():
            shutil.rmtree(out)
        staging.rename(out)
    except OSError as exc:  # a full disk, a folder that cannot be replaced: one line, nothing half-written
        shutil.rmtree(staging, ignore_errors=True)
        raise UserError(f"--out {out}: cannot write the results ({exc.strerror or exc})") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out


def estimator_of(args) -> FamilyChoice:
    """The choice the command line asks for: ``--methods`` (family methods, default all), ``--method`` outside
    estimators with ``--param`` and ``--grid``, through the gate as the benchmark's contenders
    (:func:`src.tuning.gated`; a refused one is one line before any fit), ``--folds``, ``--repeats``,
    ``--alpha`` (None: the shipped rule's level), ``--seed``, ``--jobs``."""
    if args.folds < 2 or args.repeats < 1:
        raise ConfigError(f"--folds {args.folds} --repeats {args.repeats}: the choice needs at least 2 folds and "
                          "1 deal of them")
    alpha = getattr(args, "alpha", None)
    if alpha is not None and not 0.0 < alpha <= 1.0:  # NaN fails both
        raise ConfigError(f"--alpha {alpha:g}: the rule's level must be in (0, 1]")
    names = list(args.methods or family_methods())
    params, grids = {}, {}
    if args.method:
        given = opened.parse_params(args.param)
        contenders, found, _ = gated([opened.resolve(spec, given) for spec in args.method],
                                     parse_grid(args.grid), None)
        for contender in contenders:
            names.append(contender.name)
            grid = found.get(contender.name)
            params[contender.name] = {p: v for p, v in contender.params.items() if grid is None or p not in grid.values}
            if grid is not None:
                grids[contender.name] = dict(grid.values)
    elif args.grid or args.param:
        raise ConfigError("--param and --grid set an outside estimator's parameters: give it with --method")
    return FamilyChoice(methods=names, grids=grids or None, params=params or None, n_folds=args.folds,
                        n_repeats=args.repeats, alpha="shipped" if alpha is None else alpha, random_state=args.seed,
                        n_jobs=args.jobs)


def cluster(args, report) -> Path | None:
    """The command's one call: its estimator (:func:`estimator_of`), then :func:`dry_run` or :func:`run`."""
    estimator = estimator_of(args)
    if args.dry_run:
        dry_run(args.file, estimator, args.set)
        return None
    return run(args.file, args.out, estimator, report, args.set)

"""The benchmark's fold fits with the classes they give back: what the choice's rule reads on the benchmark.

The shipped settings file (``papers/benchmark/tuned_settings.csv.gz``) scores each setting of each method by
its held-out AC over two folds of a trial's labelled samples, and keeps no partition. The rule of
:mod:`.rule` needs more: per held-out known sample, whether each candidate (a method at a setting, with a
readout, :mod:`.readouts`) gives it its right class when told only the other fold's labels. So for every
(label track, data set, k, trial) whose folds the tuned run fitted (:func:`src.tuning.homes.scored_ks`), and
for every (method, setting) of the settings file there, this module fits

* a method that takes labels three times: told fold 1's labels (fold 0 held out), told fold 0's, and told
  every label of the trial (``fold`` = :data:`ALL`: the fit whose classes a chosen candidate gives back);
* a method that takes none once, on the same samples: its clustering and representation serve every
  track's folds, each read out with that fold's told labels.

Each (fit, told labels) is one row: the clustering (``partition``, the class-keeping text of
:func:`class_text`) and, for a representation, the classes the two readouts by the labels give every
sample (``nearest_labelled``, ``spread_labelled``). A reference's partition is its own classes. The fold
deal, trials, seeds and settings are the tuned run's own (:mod:`src.protocol.trials`,
``protocol.labels.folds``), so a fold row's clustering scores the same held-out AC the settings file holds
where the code is the same (``validation_acc`` is kept beside it to show it).

The work goes in pieces, one a data set (``python -m src.benchmark --fold-fits yale orl``): each piece is
resumable (every fitted trial is appended to a part file under ``outputs/benchmark/fold_fits/<dataset>/``
as soon as it is done, so a killed run loses only the trials in progress), and a finished piece is written to
``papers/benchmark/fold_fits/<dataset>.csv.xz`` in one step (xz: :func:`src.reproduction.shipped.write`). Every row carries the code fingerprint
(:func:`src.running.provenance.code_fingerprint`); a piece of another fingerprint is refused by
:func:`load`, so the pieces that ship were all computed by the same numerical code.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import multiprocessing
import time
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from ..config_dir import PAPERS_DIR
from ..data import load_dataset
from ..errors import UserError
from ..methods.core.validation import UNLABELLED
from ..protocol.cell import LABEL_READOUTS, readout_labels, run_cell
from ..protocol.metrics import accuracy
from ..protocol.partition import ALPHABET
from ..protocol.trials import make_trial
from ..reproduction import shipped
from ..reproduction.contenders import LABEL_TRACKS, Sweeps
from ..running import cell_warnings, provenance
from ..running.pool import plan_jobs
from ..running.progress import counted, time_left
from ..running.settings import thaw
from ..tuning.grids import family_grid
from ..tuning.homes import family_overrides, scored_ks
from ..tuning.selection import FOLDS, takes_labels

logger = logging.getLogger(__name__)

#: Where the finished pieces ship, one file a data set.
FOLDER = PAPERS_DIR / "benchmark" / "fold_fits"
#: A piece's file name after its data set's.
SUFFIX = ".csv.xz"
#: The ``fold`` of a fit told every label of its trial.
ALL = -1
#: A sample without a class in :func:`class_text` (a readout that could give none).
NONE = "."
#: A row's columns, in order.
COLUMNS = ("track", "dataset", "method", "estimator", "setting", "k", "trial", "fold", "validation_acc",
           "partition", *LABEL_READOUTS, "seed", "code_fingerprint")


_CLASS_OF_BYTE = np.full(256, UNLABELLED, dtype=np.int64)
_CLASS_OF_BYTE[np.frombuffer(ALPHABET.encode("ascii"), dtype=np.uint8)] = np.arange(len(ALPHABET))


def class_text(classes) -> str:
    """Classes 0..61 (n_samples,; -1 none) as text, one character a sample, the classes kept as they are
    (unlike :func:`src.protocol.partition.encode`, which renumbers a partition)."""
    classes = np.asarray(classes, dtype=np.int64)
    if classes.size and classes.max() >= len(ALPHABET):
        raise ValueError(f"class {int(classes.max())} has no character: at most {len(ALPHABET)} classes")
    return "".join(NONE if c == UNLABELLED else ALPHABET[c] for c in classes.tolist())


def classes_of(text: str) -> np.ndarray:
    """The classes :func:`class_text` wrote (n_samples,; -1 none)."""
    return _CLASS_OF_BYTE[np.frombuffer(str(text).encode("ascii"), dtype=np.uint8)]


def typed_setting(text: str) -> dict:
    """A settings file's setting text as the method's parameters: ``"n_neighbors=7,alpha=0.2"`` as
    ``{"n_neighbors": 7, "alpha": 0.2}`` (whole numbers written without a point stay whole); "" is none."""
    setting = {}
    for part in filter(None, str(text).split(",")):
        name, _, value = part.partition("=")
        try:
            setting[name] = int(value)
        except ValueError:
            setting[name] = float(value)
    return setting


@dataclass(frozen=True)
class Task:
    """One method at one setting, at one k of a data set, over some trials: fitted as ``told`` says (a track's
    fold, :data:`ALL` labels, or none: a method that takes no labels, ``("", ALL)``), each fit read out with the
    labels of every (track, fold) in ``reads``."""

    dataset: str
    method: str
    estimator: str
    setting: str
    k: int
    trials: tuple[int, ...]
    told: tuple[str, int]
    reads: tuple[tuple[str, int], ...]

    @property
    def key(self) -> str:
        """The name of the task's part file."""
        text = json.dumps([self.estimator, self.setting, self.k, self.told, self.reads])
        return f"{self.estimator}_k{self.k}_{hashlib.sha1(text.encode()).hexdigest()[:12]}"


def schemes(tracks: Iterable[str], dataset: str) -> dict[str, dict]:
    """Each track's label scheme on ``dataset`` and its composed settings, from one Hydra start."""
    tracks = list(tracks)
    sweeps = tuple((f"experiment=benchmark/{t}", f"dataset={dataset}", "method=kmeans") for t in tracks)
    return {t: job.spec for t, job in zip(tracks, plan_jobs([Sweeps("fold fits", sweeps)], []))}


def load_of(specs: dict):
    """The data set of the label tracks' settings ``specs`` (:func:`schemes`), loaded as their runs load it."""
    spec = next(iter(specs.values()))
    return load_dataset(thaw(spec.dataset.config), spec.paths.data_dir, spec.paths.mirror, spec.seed)


def plan(dataset: str, settings: pd.DataFrame, y: np.ndarray, specs: dict) -> list[Task]:
    """The tasks of one piece (module docstring): per (method, setting, k) of the settings file's label tracks
    on ``dataset``, at the k whose folds the tuned run fitted."""
    tasks = []
    rows = settings[(settings["dataset"] == dataset) & settings["track"].isin(specs)].copy()
    rows["setting"] = rows["setting"].fillna("").astype(str)
    ks = {t: set(scored_ks(y, thaw(spec.protocol.labels), spec.protocol.ks)) for t, spec in specs.items()}
    labels = {name: takes_labels(name) for name in rows["estimator"].unique()}
    for (method, estimator, setting, k), found in rows.groupby(["method", "estimator", "setting", "k"], sort=True):
        on = sorted(t for t in found["track"].unique() if k in ks[t])
        if not on:
            continue
        trials = tuple(sorted(int(t) for t in found["trial"].unique()))
        if labels[estimator]:
            for track in on:
                for fold in (*range(FOLDS), ALL):
                    tasks.append(Task(dataset, method, estimator, setting, int(k), trials, (track, fold),
                                      ((track, fold),)))
        else:
            reads = tuple((track, fold) for track in on for fold in (*range(FOLDS), ALL))
            tasks.append(Task(dataset, method, estimator, setting, int(k), trials, ("", ALL), reads))
    return tasks


def scheme_of(spec, fold: int) -> dict:
    """The label scheme of a track's spec, fold ``fold`` of :data:`~src.tuning.selection.FOLDS` hidden
    (:data:`ALL`: none hidden)."""
    scheme = thaw(spec.protocol.labels)
    return scheme if fold == ALL else {**scheme, "folds": FOLDS, "fold": fold}


# What a forked worker reads: the piece's data set and the composed settings (set before the pool starts).
_SHARED: dict = {}


def _start_worker() -> None:
    threadpool_limits(limits=1)


def method_specs(tasks: list[Task]) -> dict[tuple[str, str, str], object]:
    """The settings of each (track, estimator, setting) the tasks fit, composed in one Hydra start: the track's
    experiment with the method as the tuned run composes it (:func:`src.tuning.homes.family_overrides`), no
    readout of its own (this module reads them out)."""
    wanted = sorted({(task.told[0] or task.reads[0][0], task.estimator, task.setting) for task in tasks})
    sweeps = tuple((f"experiment=benchmark/{track}", f"dataset={tasks[0].dataset}", "protocol.readouts=[]",
                    *family_overrides(family_grid(estimator), typed_setting(setting)))
                   for track, estimator, setting in wanted)
    return dict(zip(wanted, (job.spec for job in plan_jobs([Sweeps("fold fits", sweeps)], []))))


def fit_task(task: Task, part: Path) -> int:
    """Fit the trials of ``task`` not yet in its ``part`` file, each appended to it as soon as it is done;
    returns how many trials were fitted. What a fit and its readouts by the labels warn is caught and logged,
    one line a trial."""
    dataset, specs, fingerprint = _SHARED["dataset"], _SHARED["specs"], _SHARED["fingerprint"]
    done = set(int(row["trial"]) for row in read_part(part, fingerprint))
    track = task.told[0] or task.reads[0][0]
    spec = _SHARED["methods"][track, task.estimator, task.setting]
    fitted = 0
    for number in task.trials:
        if number in done:
            continue
        scheme = scheme_of(specs[track], task.told[1]) if task.told[0] else scheme_of(specs[track], ALL)
        trial = make_trial(dataset.y, dataset.name, task.k, number, spec.seed, scheme)
        with cell_warnings.caught() as records:  # said through logging, as a benchmark cell's are recorded
            chosen = run_cell(dataset.X, spec.method, trial, spec.protocol, dataset.image_shape).chosen
            lines = []
            for read_track, fold in task.reads:
                told = make_trial(dataset.y, dataset.name, task.k, number, spec.seed,
                                  scheme_of(specs[read_track], fold))
                row = {"track": read_track, "dataset": task.dataset, "method": task.method,
                       "estimator": task.estimator, "setting": task.setting, "k": task.k, "trial": number,
                       "fold": fold, "validation_acc": held_out_acc(told, chosen.partition, specs[read_track], fold),
                       "partition": class_text(chosen.partition), "seed": spec.seed, "code_fingerprint": fingerprint}
                for name in LABEL_READOUTS:
                    row[name] = (class_text(readout_labels(name, chosen.representation, None, told, None))
                                 if chosen.representation is not None else "")
                lines.append(json.dumps(row))
        if records:
            logger.warning("fold fits of %s: %s %s at k=%d, trial %d warned: %s", task.dataset, task.method,
                           task.setting or "(its one setting)", task.k, number, cell_warnings.recorded(records))
        with open(part, "a") as stream:
            stream.write("\n".join(lines) + "\n")
        fitted += 1
    return fitted


def held_out_acc(told, partition, spec, fold: int) -> float:
    """The clustering's AC on the samples held out of ``told`` (fold rows: the fold's labelled samples; the
    fit told every label: NaN), as the settings file's ``validation_acc_fold<f>`` reads it."""
    if fold == ALL:
        return math.nan
    full = make_trial(_SHARED["dataset"].y, _SHARED["dataset"].name, told.k, told.trial, spec.seed, scheme_of(spec, ALL))
    held = (full.y_partial != UNLABELLED) & (told.y_partial == UNLABELLED)
    return float(accuracy(full.y_true[held], np.asarray(partition)[held])) if held.any() else math.nan


def read_part(part: Path, fingerprint: str) -> list[dict]:
    """The rows of a part file written by this code (another fingerprint's are left out, to be fitted again);
    a last line cut short by a killed run is left out too."""
    if not part.is_file():
        return []
    rows = []
    for line in part.read_text().splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if row.get("code_fingerprint") == fingerprint:
            rows.append(row)
    return rows


def unit_costs(dataset: str) -> dict[str, float]:
    """Seconds a fit of each estimator is expected to take on ``dataset``: its fixed-setting cells' mean
    (fit and KMeans) in the shipped benchmark, or the mean of all where it has none. Only the time left reads
    them."""
    cells = shipped.load() if shipped.FILE.is_file() else pd.DataFrame()
    if cells.empty:
        return {}
    cells = cells[(cells["dataset"] == dataset) & (cells["track"] != "unsupervised")]
    return ((cells["fit_seconds"] + cells["kmeans_seconds"]).groupby(cells["estimator"]).mean()).to_dict()


def run_piece(dataset: str, out: Path, workers: int = 2) -> Path:
    """Fit one piece (module docstring) into ``out/fold_fits/<dataset>/`` and write it to
    ``papers/benchmark/fold_fits/<dataset>.csv.xz``; returns that file."""
    settings = shipped.load_settings()
    if settings is None:
        raise UserError(f"--fold-fits: no settings file ({shipped.SETTINGS_FILE}): run python -m src.benchmark "
                        "--tune first")
    specs = schemes(LABEL_TRACKS, dataset)
    loaded = load_of(specs)
    tasks = plan(dataset, settings, loaded.y, specs)
    folder = Path(out) / "fold_fits" / dataset
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--fold-fits: cannot make {folder}: {exc.strerror}") from None
    fingerprint = provenance.code_fingerprint()
    _SHARED.update(dataset=loaded, specs=specs, fingerprint=fingerprint,
                   methods=method_specs(tasks) if tasks else {})
    costs = unit_costs(dataset)
    typical = float(np.mean(list(costs.values()))) if costs else 1.0
    left = {task.key: [n for n in task.trials
                       if n not in {int(r["trial"]) for r in read_part(folder / f"{task.key}.jsonl", fingerprint)}]
            for task in tasks}
    cost = {task.key: costs.get(task.estimator, typical) * len(left[task.key]) for task in tasks}
    todo = [task for task in tasks if left[task.key]]
    total, done, started, last = sum(cost.values()), 0.0, time.monotonic(), 0.0
    logger.info("fold fits of %s: %s, %s of them done; %s to fit", dataset, counted(len(tasks), "task"),
                counted(len(tasks) - len(todo), "task"), counted(sum(len(left[t.key]) for t in todo), "fit"))
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_start_worker) as pool:
        futures = {pool.submit(fit_task, task, folder / f"{task.key}.jsonl"): task
                   for task in sorted(todo, key=lambda t: -cost[t.key])}
        for future in as_completed(futures):
            future.result()
            done += cost[futures[future].key]
            if time.monotonic() - last > 30 or done >= total:
                last = time.monotonic()
                logger.info("fold fits of %s: %.0f%% done, %s", dataset, 100 * done / total if total else 100,
                            time_left(last - started, done, total - done))
    rows = [row for task in tasks for row in read_part(folder / f"{task.key}.jsonl", fingerprint)]
    frame = pd.DataFrame(rows, columns=list(COLUMNS)).drop_duplicates(
        ["track", "estimator", "setting", "k", "trial", "fold"], keep="last")
    target = FOLDER / f"{dataset}{SUFFIX}"
    target.parent.mkdir(parents=True, exist_ok=True)
    shipped.write(frame.sort_values(["track", "method", "setting", "k", "trial", "fold"], kind="stable"), target)
    logger.info("fold fits of %s: %s written to %s", dataset, counted(len(frame), "row"), target)
    return target


def run(datasets: list[str], out: Path, workers: int = 2) -> int:
    """``python -m src.benchmark --fold-fits DATASET...``: each data set's piece in turn (:func:`run_piece`);
    one line and exit status 2 for bad input."""
    try:
        for dataset in datasets:
            run_piece(dataset, out, workers)
    except UserError as exc:
        logger.error("%s", exc)
        return 2
    return 0


def load(datasets: Iterable[str] | None = None, folder: Path = FOLDER) -> pd.DataFrame | None:
    """The shipped pieces (every data set's, or ``datasets``'), in one frame; None where none ships. Pieces of
    different code fingerprints are refused: the rule would compare fits of different code."""
    paths = sorted(Path(folder).glob(f"*{SUFFIX}"))
    if datasets is not None:
        paths = [p for p in paths if p.name.removesuffix(SUFFIX) in set(datasets)]
    if not paths:
        return None
    frame = pd.concat([pd.read_csv(p, dtype={"setting": str, "partition": str, **{n: str for n in LABEL_READOUTS}},
                                   keep_default_na=False, na_values={"validation_acc": [""]}) for p in paths],
                      ignore_index=True)
    prints = sorted(frame["code_fingerprint"].unique())
    if len(prints) > 1:
        raise UserError(f"the fold fits in {folder} were computed by different code ({', '.join(prints)}): "
                        "fit the older pieces again")
    return frame

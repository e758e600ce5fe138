"""The benchmark's choice entrants by the rule of :mod:`.rule`, recomputed from the shipped files alone.

Per trial of a label track (a data set, k and trial), from the fold fits (:mod:`.fold_fits`):

* **the candidates** are every (method, setting) of the settings file with each of its readouts
  (:func:`src.choice.readouts.readouts_of`), the references among them; ``Choice (label-free)`` keeps the
  clusters of the methods that take no labels (COBS's setting: the labels only choose and name the clusters);
* **the score** of a candidate is, per known sample of the trial, whether its class came back right from the
  fit told the other fold's labels only (:func:`correct`), the same measure for every kind of candidate;
* **the prior** is the shipped fixed-setting cells' order by the classes given back (:func:`.prior.order`)
  over the track's *other* data sets (leave one data set out), at each method's default setting;
* **the rule** (:func:`.rule.choose`) keeps the prior's candidate unless a one-sided Wilcoxon test over the
  known samples, Bonferroni-corrected over the candidates, finds another better (its p by the normal
  approximation with scipy's tie correction: the permutation test that ``python -m src.cluster`` runs on one
  file would take hours over the benchmark's trials).

The chosen candidate's fit told every label gives the entrant's numbers: AC on every sample and the classes
given back to the unknown ones (:func:`test_scores`). Where the tuned run fitted no folds (a k at which a fold
cannot hold :data:`~src.tuning.selection.MIN_VALIDATION` samples), the rule has no evidence and the prior's
candidate stands, scored by its shipped fixed-setting cell. Beside each entrant the **oracle** of the same
pool (the candidate with the best classes given back on the test labels) prices the regret.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..config_dir import PAPERS_DIR
from ..errors import UserError
from ..files import write_atomic
from ..methods.core.validation import UNLABELLED
from ..protocol.metrics import accuracy, nmi
from ..protocol.partition import class_of_clusters
from ..protocol.trials import make_trial
from ..reproduction import shipped
from ..reproduction.contenders import LABEL_TRACKS
from ..tuning.selection import FOLDS, takes_labels
from . import fold_fits
from . import prior as prior_module
from . import rule
from .fold_fits import ALL, classes_of, scheme_of, schemes
from .readouts import OWN, candidate_name, readouts_of

logger = logging.getLogger(__name__)

#: The entrants and whether their pool is label-free only.
ENTRANTS = {"Choice": False, "Choice (label-free)": True}
#: The shipped file of both entrants (``python -m src.benchmark --choice-entrants``), which the benchmark report
#: ranks with the family.
FILE = PAPERS_DIR / "benchmark" / "choice_entrants.csv.gz"
#: The rule's levels, among which each data set's is chosen on the other data sets (:func:`chosen_variant`).
LEVELS = (0.001, 0.01, 0.05, 0.2, 1.0)
#: Why a trial without folds was chosen: the rule had no evidence, the prior's candidate stands.
NO_FOLDS = "no folds: prior"
#: The columns of an entrant's row: a tuned row's own, then what was chosen, why and from what, the oracle of
#: the same pool (the candidate that gave back the most right classes, on the test), and the level.
ROW_COLUMNS = ("track", "dataset", "method", "estimator", "k", "trial", "acc", "nmi", "given_unlabelled",
               "chosen", "chosen_method", "chosen_estimator", "setting", "readout", "selection", "prior",
               "validation_acc", "n_validation", "oracle", "oracle_acc", "oracle_given", "n_candidates", "alpha",
               "prior_how", "level_chosen_on")
#: Its columns of numbers that may be missing (a trial without folds has no estimate and no oracle).
FLOATS = ("acc", "nmi", "given_unlabelled", "validation_acc", "oracle_acc", "oracle_given")
#: The shipped cells' columns of each readout's AC and classes given back (a fixed-setting cell's).
CELL_COLUMNS = {"clusters": ("acc", "given_unlabelled"), OWN: ("acc", "given_unlabelled"),
                "nearest_labelled": ("acc_nearest_labelled", "given_nearest_labelled"),
                "spread_labelled": ("acc_spread_labelled", "given_spread_labelled")}


def classes_by(row, readout: str, y_told: np.ndarray) -> np.ndarray:
    """The class of every sample (n_samples,) a fold-fit row gives by ``readout``, from ``y_told`` alone: its
    clusters mapped by the told labels (a reference's own classes map to themselves), or a classifier's."""
    if readout in ("clusters", OWN):
        clusters = classes_of(row["partition"])
        return class_of_clusters(clusters, y_told)[clusters]
    return classes_of(row[readout])


@dataclass(frozen=True)
class Candidate:
    """One candidate of a trial: a method at a setting, with a readout."""

    method: str
    estimator: str
    setting: str
    readout: str

    @property
    def name(self) -> str:
        return candidate_name(self.method, "clusters" if self.readout == OWN else self.readout)


def candidates_of(rows: pd.DataFrame, label_free: bool) -> list[Candidate]:
    """The candidates of one trial's fold-fit rows, in the rows' order of methods and settings."""
    found = []
    for (method, estimator, setting), _ in rows.groupby(["method", "estimator", "setting"], sort=True):
        if label_free and takes_labels(estimator):
            continue
        readouts = ("clusters",) if label_free and readouts_of(estimator) != (OWN,) else readouts_of(estimator)
        if label_free and readouts == (OWN,):
            continue  # a reference is no label-free method
        found += [Candidate(method, estimator, setting, r) for r in readouts]
    return found


def correct(rows: pd.DataFrame, candidates: Sequence[Candidate], full, folds: Sequence) -> np.ndarray:
    """Candidates x known samples of the trial (``full``): 1 where the candidate's fit told the other fold's
    labels gives the sample its right class, 0 where not, NaN where its fold fit is missing. ``folds``: the
    trial told each fold's complement (``src.choice.fold_fits.scheme_of``)."""
    known = np.flatnonzero(full.y_partial != UNLABELLED)
    where = {key: row for key, row in zip(zip(rows["estimator"], rows["setting"], rows["fold"]),
                                          rows.to_dict("records"))}
    out = np.full((len(candidates), known.size), np.nan)
    for fold, told in enumerate(folds):
        held = told.y_partial[known] == UNLABELLED
        for i, c in enumerate(candidates):
            row = where.get((c.estimator, c.setting, fold))
            if row is not None:
                out[i, held] = classes_by(row, c.readout, told.y_partial)[known[held]] == full.y_true[known[held]]
    return out


def test_scores(rows: pd.DataFrame, candidate: Candidate, full) -> tuple[float, float, float]:
    """A candidate's AC and NMI on every sample and its classes given back to the unknown ones, from its fit
    told every label (NaN each where that fit is missing). A classifier's readout is scored by its classes, a
    clustering by its clusters."""
    found = rows[(rows["estimator"] == candidate.estimator) & (rows["setting"] == candidate.setting)
                 & (rows["fold"] == ALL)]
    if found.empty:
        return np.nan, np.nan, np.nan
    row = found.iloc[0]
    given = classes_by(row, candidate.readout, full.y_partial)
    assigned = classes_of(row["partition"]) if candidate.readout in ("clusters", OWN) else given
    free = full.y_partial == UNLABELLED
    return (float(accuracy(full.y_true, assigned)), float(nmi(full.y_true, assigned)),
            float(np.mean(given[free] == full.y_true[free])))


def prior_order(cells: pd.DataFrame, track: str, excluded: Collection[str], label_free: bool,
                how: str = "mean") -> list[str]:
    """The prior's candidate names: :func:`.prior.order` (``how``) of the track's shipped cells on the data sets
    not ``excluded`` (for the label-free entrant: the clusters of methods that take no labels)."""
    others = cells[(cells["track"] == track) & ~cells["dataset"].isin(list(excluded))]
    if label_free:
        free = {e: not takes_labels(e) and readouts_of(e) != (OWN,) for e in others["estimator"].unique()}
        others = others[others["estimator"].map(free)][[c for c in others if c not in
                                                        ("given_nearest_labelled", "given_spread_labelled")]]
    return prior_module.order(others, how)


def defaults(settings: pd.DataFrame) -> dict[str, str]:
    """Each estimator's default setting text in the settings file."""
    rows = settings[settings["default"].astype(str).str.lower() == "true"]
    return rows.groupby("estimator")["setting"].first().fillna("").astype(str).to_dict()


@dataclass
class Scored:
    """One trial of a label track with its candidates scored once, to be chosen among under any prior and level
    (:func:`pick`). A trial without folds keeps, instead, its shipped fixed-setting scores by candidate name."""

    track: str
    dataset: str
    k: int
    trial: int
    candidates: list[Candidate] = field(default_factory=list)
    right: np.ndarray | None = None  # candidates x known samples (:func:`correct`)
    tests: list[tuple[float, float, float]] = field(default_factory=list)  # (AC, NMI, given back) each
    position: dict[str, int] = field(default_factory=dict)  # a name -> its row at the default setting
    fixed: dict[str, dict] = field(default_factory=dict)  # no folds: a name -> its shipped cell's scores
    oracle: int = -1  # the row that gave back the most right classes on the test
    pvalues: dict[int, np.ndarray] = field(default_factory=dict)  # the prior's row -> each row's p against it


def fixed_scores(cell_rows: pd.DataFrame) -> dict[str, dict]:
    """Each candidate's scores in a trial's shipped fixed-setting cells (its NMI only where the candidate is the
    clusters themselves: the cells keep no readout's NMI)."""
    found = {}
    for row in cell_rows.to_dict("records"):
        for readout, (acc, given) in CELL_COLUMNS.items():
            if readout == OWN or pd.isna(row.get(given)):
                continue
            found.setdefault(candidate_name(row["method"], readout), {
                "acc": float(row[acc]), "nmi": float(row["nmi"]) if acc == "acc" else np.nan,
                "given_unlabelled": float(row[given]), "chosen_method": row["method"],
                "chosen_estimator": row["estimator"], "readout": readout})
    return found


def score_trials(fits: pd.DataFrame, cells: pd.DataFrame, settings: pd.DataFrame, y: np.ndarray, specs: dict,
                 entrant: str = "Choice") -> list[Scored]:
    """Every trial of the label tracks of ``cells`` (the shipped cells) on the data set of ``fits`` (its fold
    fits, :func:`src.choice.fold_fits.load`), its candidates scored (:func:`correct`, :func:`test_scores`) for
    ``entrant``'s pool. ``specs``: each track's settings (:func:`src.choice.fold_fits.schemes`); ``y``: the
    data set's classes."""
    label_free = ENTRANTS[entrant]
    dataset = str(fits["dataset"].iloc[0])
    default_of = defaults(settings)
    out = []
    for track, spec in specs.items():
        blocks = cells[(cells["track"] == track) & (cells["dataset"] == dataset)]
        by_trial = {key: rows for key, rows in fits[fits["track"] == track].groupby(["k", "trial"])}
        for (k, number), cell_rows in blocks.groupby(["k", "trial"], sort=True):
            trial = Scored(track, dataset, int(k), int(number))
            rows = by_trial.get((k, number))
            if rows is None:  # no folds at this k: the shipped fixed-setting cells score the prior's candidate
                trial.fixed = fixed_scores(cell_rows)
                out.append(trial)
                continue
            full = make_trial(y, dataset, int(k), int(number), spec.seed, scheme_of(spec, ALL))
            folds = [make_trial(y, dataset, int(k), int(number), spec.seed, scheme_of(spec, f)) for f in range(FOLDS)]
            trial.candidates = candidates_of(rows, label_free)
            trial.right = correct(rows, trial.candidates, full, folds)
            trial.tests = [test_scores(rows, c, full) for c in trial.candidates]
            trial.oracle = int(np.nanargmax([given for *_, given in trial.tests]))
            trial.position = {c.name: i for i, c in enumerate(trial.candidates)
                              if c.setting == default_of.get(c.estimator, "")}
            out.append(trial)
    return out


def pick(trial: Scored, names: Sequence[str], alpha: float = rule.ALPHA) -> dict:
    """The entrant's row of a scored trial under the prior ``names`` at the rule's level ``alpha``: what was
    chosen, why, its test scores, the estimate, and the oracle (the candidate that gave back the most right
    classes on the test) beside it. The p values against each prior's candidate are computed once."""
    key = {"track": trial.track, "dataset": trial.dataset, "k": trial.k, "trial": trial.trial, "alpha": alpha}
    if trial.right is None:
        name = next((n for n in names if n in trial.fixed), None)
        if name is None:
            raise ValueError(f"{trial.track} {trial.dataset} k={trial.k} trial {trial.trial}: no shipped cell of "
                             "the prior's candidates")
        return {**key, **trial.fixed[name], "chosen": name, "chosen_method": trial.fixed[name]["chosen_method"],
                "setting": "", "selection": NO_FOLDS, "prior": name, "validation_acc": np.nan, "n_validation": 0,
                "oracle": "", "oracle_acc": np.nan, "oracle_given": np.nan, "n_candidates": 0}
    order = [trial.position[n] for n in names if n in trial.position]
    start, why = rule.start_of(trial.right, order)
    if start not in trial.pvalues:
        trial.pvalues[start] = rule.pvalues_against(trial.right, start, method="approx")
    picked = rule.decide(trial.right, start, why, trial.pvalues[start], alpha, order)
    chosen, best = trial.candidates[picked.index], trial.oracle
    acc, mutual, given = trial.tests[picked.index]
    return {**key, "acc": acc, "nmi": mutual, "given_unlabelled": given, "chosen": chosen.name,
            "chosen_method": chosen.method, "chosen_estimator": chosen.estimator, "setting": chosen.setting,
            "readout": chosen.readout, "selection": picked.why, "prior": trial.candidates[start].name,
            "validation_acc": float(np.nanmean(trial.right[picked.index])), "n_validation": trial.right.shape[1],
            "oracle": trial.candidates[best].name, "oracle_acc": trial.tests[best][0],
            "oracle_given": trial.tests[best][2], "n_candidates": len(trial.candidates)}


def choose_trials(fits: pd.DataFrame, cells: pd.DataFrame, settings: pd.DataFrame, y: np.ndarray, specs: dict,
                  alphas: Sequence[float] = (rule.ALPHA,), entrant: str = "Choice", how: str = "mean") -> pd.DataFrame:
    """The entrant's row (:func:`pick`) for every trial on the data set of ``fits`` at each level of ``alphas``
    (an ``alpha`` column), the prior :func:`prior_order` (``how``) of the other data sets' shipped cells."""
    trials = score_trials(fits, cells, settings, y, specs, entrant)
    dataset = str(fits["dataset"].iloc[0])
    names = {track: prior_order(cells, track, {dataset}, ENTRANTS[entrant], how) for track in specs}
    return pd.DataFrame([pick(trial, names[trial.track], alpha) for trial in trials for alpha in alphas])


def blocks(rows: pd.DataFrame, column: str = "given_unlabelled") -> pd.Series:
    """The mean of ``column`` per (track, data set, k) block of ``rows``."""
    return rows.groupby(["track", "dataset", "k"])[column].mean()


def chosen_variant(rows: dict[tuple[str, float], pd.DataFrame]) -> tuple[str, float]:
    """The (prior's ``how``, level) whose rows (each variant's, on the data sets it is chosen on) give back the
    most right classes, as the mean over their (track, data set, k) blocks; at a tie the prior by the mean
    (the first reading), then the level of :data:`src.choice.rule.ALPHA` (the rule's where none ships),
    then the smallest, the one nearest the prior. No paper makes this choice."""
    score = {variant: round(float(blocks(found).mean()), 12) for variant, found in rows.items()}
    return max(score, key=lambda v: (score[v], v[0] == "mean", v[1] == rule.ALPHA, -v[1]))


def compute(fits: pd.DataFrame, cells: pd.DataFrame, settings: pd.DataFrame, classes: Callable[[str], np.ndarray],
            levels: Sequence[float] = LEVELS, hows: Sequence[str] = prior_module.HOWS) -> pd.DataFrame:
    """Both entrants' rows (:data:`ENTRANTS`) on every data set of ``fits`` (the shipped fold fits), each data
    set's under the rule's variant (its prior's ``how`` and its level) chosen on the *other* data sets
    (:func:`chosen_variant`, leave one data set out; a lone data set's own), so the figure accounts for
    choosing the rule. Nested: a variant is scored on another data set E with E's prior read from neither E
    nor the data set it is chosen for. ``classes(dataset)``: the data set's classes (n_samples,).

    Returns the rows, tuned rows of the entrant (``method`` and ``estimator`` its name) with the variant and
    the data sets it was chosen on, and the rule of a person's file (:data:`src.choice.prior.RULE_FILE`), a row
    an entrant (``entrant``, ``prior_how``, ``alpha``, ``chosen_on``): the variant chosen on *every* data set,
    each scored with its prior read from the others, since a person's file is none of them."""
    variants = [(how, level) for how in hows for level in levels]
    scored = {}
    for dataset, rows in fits.groupby("dataset", sort=True):
        specs = schemes(LABEL_TRACKS, dataset)
        y = classes(dataset)
        for entrant in ENTRANTS:
            scored[entrant, dataset] = score_trials(rows, cells, settings, y, specs, entrant)
            logger.info("the choice entrants: %s's candidates on %s scored", entrant, dataset)
    names = functools.lru_cache(maxsize=None)(
        lambda track, excluded, label_free, how: prior_order(cells, track, excluded, label_free, how))

    @functools.lru_cache(maxsize=None)
    def rows_of(entrant, dataset, excluded, how, level):
        return pd.DataFrame([pick(trial, names(trial.track, excluded, ENTRANTS[entrant], how), level)
                             for trial in scored[entrant, dataset]])
    out, rules = [], []
    for entrant in ENTRANTS:
        datasets = sorted(d for e, d in scored if e == entrant)
        for dataset in datasets:
            others = [d for d in datasets if d != dataset]
            tried = {v: pd.concat([rows_of(entrant, e, frozenset({dataset, e}), *v) for e in others],
                                  ignore_index=True) for v in variants} if others else \
                {v: rows_of(entrant, dataset, frozenset({dataset}), *v) for v in variants}
            how, level = chosen_variant(tried)
            out.append(rows_of(entrant, dataset, frozenset({dataset}), how, level).assign(
                method=entrant, estimator=entrant, prior_how=how, level_chosen_on=" ".join(others or [dataset])))
            logger.info("the choice entrants: %s on %s at prior %s, level %g", entrant, dataset, how, level)
        # the rule of a person's file, which no data set here is: chosen on every one, each blind to its own prior
        how, level = chosen_variant({v: pd.concat([rows_of(entrant, e, frozenset({e}), *v) for e in datasets],
                                                  ignore_index=True) for v in variants})
        rules.append({"entrant": entrant, "prior_how": how, "alpha": level, "chosen_on": " ".join(datasets)})
        logger.info("the choice entrants: %s's rule for a person's file: prior %s, level %g", entrant, how, level)
    fingerprint = fits["code_fingerprint"].iloc[0]
    frame = pd.concat(out, ignore_index=True).assign(code_fingerprint=fingerprint)
    frame = frame.reindex(columns=[*ROW_COLUMNS, "code_fingerprint"])
    return (frame.sort_values(["track", "dataset", "method", "k", "trial"], ignore_index=True),
            pd.DataFrame(rules).assign(code_fingerprint=fingerprint))


def load(path: Path = FILE) -> pd.DataFrame | None:
    """The shipped entrants' rows (:data:`ROW_COLUMNS` and the fold fits' code fingerprint), or None where none
    ship."""
    path = Path(path)
    if not path.is_file():
        return None
    return pd.read_csv(path, dtype={"setting": str, "chosen": str, "prior": str, "oracle": str},
                       keep_default_na=False, na_values={c: [""] for c in FLOATS})


def dataset_classes(dataset: str) -> np.ndarray:
    """A benchmark data set's classes (n_samples,), loaded as its label tracks' runs load it."""
    return fold_fits.load_of(schemes(LABEL_TRACKS, dataset)).y


def run(path: Path = FILE, levels: Sequence[float] = LEVELS, rule_path: Path = prior_module.RULE_FILE) -> int:
    """``python -m src.benchmark --choice-entrants``: both entrants from the shipped files alone (the fold fits,
    the fixed-setting cells, the settings file), written to ``path``, and the rule of a person's file to
    ``rule_path``; one line and exit status 2 where a file is missing or the pieces are of different code."""
    try:
        fits = fold_fits.load()
        if fits is None:
            raise UserError(f"no fold fits ship in {fold_fits.FOLDER}: run python -m src.benchmark --fold-fits "
                            "DATASET... first")
        settings = shipped.load_settings()
        if settings is None:
            raise UserError(f"no settings file ships ({shipped.SETTINGS_FILE}): run the tuned benchmark first")
        cells = shipped.load()
        for folder in {Path(path).parent, Path(rule_path).parent}:  # before the work: a bad folder costs none
            folder.mkdir(parents=True, exist_ok=True)
        rows, rules = compute(fits, cells[cells["track"].isin(LABEL_TRACKS)], settings, dataset_classes, levels)
        logger.info("the choice entrants: %s rows on %s written to %s", f"{len(rows):,}",
                    ", ".join(sorted(rows["dataset"].unique())), shipped.write(rows, path))
        write_atomic(rule_path, rules.to_csv(index=False, lineterminator="\n"))
    except UserError as exc:
        logger.error("%s", exc)
        return 2
    except OSError as exc:  # a full disk, a folder that cannot be written: one line
        logger.error("the choice entrants: cannot write %s (%s)", exc.filename or path, exc.strerror or exc)
        return 2
    logger.info("the choice entrants: the rule of a person's file written to %s", rule_path)
    return 0

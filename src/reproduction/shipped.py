"""The family's cells that ship with the repository: every cell of the last published ``make benchmark``.

``papers/benchmark/family_cells.csv.gz`` holds one row per (track, data set, method, k, trial) with the
scores the rankings read (AC and NMI on every sample and, in a label track, on the unlabelled samples
alone) and the adjusted Rand index beside them, the seconds, how the fit ended (``n_iter``, ``converged``,
what it warned: :mod:`src.running.cell_warnings`), what produced the row (the config hash, the code
fingerprint and the digest of the data the cell saw: :func:`data_digest`) and the cell's partition
(:mod:`src.protocol.partition`), from which any other score of the cell can be computed without a refit.
``make results`` writes it from ``outputs/benchmark`` (:func:`write`); a method from outside the repository
(:mod:`src.reproduction.contenders`) computes only its own cells and is ranked against these (:func:`load`).

The data digest is the sha256 of the samples and labels as the cells read them (after preprocessing), not of
the raw files: Caltech-101's bag of words is built on each machine, and where its features differ from the
shipped ones, the family's cells of that data set do not describe the local data.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import logging
import lzma
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from ..config_dir import PAPERS_DIR
from ..data import load_dataset
from ..running.settings import REFERENCE, method_kind
from ..files import write_atomic
from ..running.results import find_results, read_results
from . import homes

logger = logging.getLogger(__name__)

#: The shipped file (in the repository, beside the tracks' homes).
FILE = PAPERS_DIR / "benchmark" / "family_cells.csv.gz"
#: Its columns, in order.
COLUMNS = ("track", "dataset", "method", "label", "estimator", "k", "trial", "acc", "nmi", "ari", "acc_unlabelled",
           "nmi_unlabelled", "ari_unlabelled", "given_unlabelled", "acc_nearest_labelled", "given_nearest_labelled",
           "acc_spread_labelled", "given_spread_labelled", "objective", "fit_seconds", "kmeans_seconds", "n_iter",
           "converged", "warnings", "seed", "config_hash", "code_fingerprint", "data_sha256", "partition")
#: The columns of a label track's cells that read the labelled samples without a refit: the classes given back
#: (:func:`src.protocol.partition.given_back`) and the readouts by the labels (:data:`src.protocol.cell.LABEL_READOUTS`),
#: AC and classes given back of each; NaN in the unsupervised track.
LABEL_COLUMNS = COLUMNS[COLUMNS.index("given_unlabelled"):COLUMNS.index("objective")]


def short_name(label: str) -> str:
    """A method's label without its parameters: ``GNMF(alpha=100.0)`` -> ``GNMF`` (a track runs each method
    at one setting)."""
    return str(label).split("(", 1)[0]


def load_track(runs: Path) -> pd.DataFrame | None:
    """The rows of one track's runs (``runs``: its jobs' folders), ``method`` its short name and ``label`` the
    full one; None if none."""
    files = find_results([runs]) if Path(runs).is_dir() else []
    if not files:
        return None
    frame = read_results(files)
    frame["label"] = frame["method"]
    frame["method"] = frame["method"].map(short_name)
    return frame


def data_digest(X, y) -> str:
    """sha256 of a data set as a cell reads it: X as C-ordered float64 (dense), then y as int64."""
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X)
    digest = hashlib.sha256(np.ascontiguousarray(X, dtype=np.float64).tobytes())
    digest.update(np.ascontiguousarray(y, dtype=np.int64).tobytes())
    return digest.hexdigest()


def run_config(results: Path) -> dict:
    """The resolved config of the run whose ``results.csv`` is ``results`` (its ``config.yaml``)."""
    return yaml.safe_load((Path(results).parent / "config.yaml").read_text())


def digest_here(config: dict, data_dir, mirror, seed: int = 0) -> str:
    """The :func:`data_digest` of the data set of ``config`` (a ``dataset`` node) as loaded here."""
    dataset = load_dataset(config, data_dir, mirror, seed)
    return data_digest(dataset.X, dataset.y)


def local_digests(configs: dict[str, dict], data_dir, mirror, seed: int = 0) -> dict[str, str]:
    """The :func:`data_digest` of each data set (name -> its ``dataset`` config) loaded here."""
    return {name: digest_here(config, data_dir, mirror, seed) for name, config in configs.items()}


def run_digests(benchmark_out: Path, tracks: list[str]) -> dict[str, str]:
    """Each data set's :func:`data_digest` as the tracks' runs under ``benchmark_out`` loaded it (their configs'
    data directory and seed): the data their cells saw (Caltech-101's bag of words is built where it runs)."""
    configs = {}
    for track in tracks:
        runs = Path(benchmark_out) / track / "runs"
        if not runs.is_dir():
            raise FileNotFoundError(f"no results under {runs}: run `make benchmark` first")
        for path in find_results([runs]):
            config = run_config(path)
            configs.setdefault(str(config["dataset"]["name"]), config)
    return {name: digest_here(config["dataset"], config["paths"]["data_dir"], config["paths"]["mirror"],
                              config["seed"])
            for name, config in configs.items()}


def collect(benchmark_out: Path, tracks: list[str]) -> pd.DataFrame:
    """Every cell of the tracks' runs under ``benchmark_out`` as the shipped file's rows (:data:`COLUMNS`), each
    data set's digest computed on the data as the runs' configs load them (:func:`run_digests`)."""
    digests = run_digests(benchmark_out, tracks)
    frames = []
    for track in tracks:
        frame = load_track(Path(benchmark_out) / track / "runs")
        frame.insert(0, "track", track)
        frames.append(frame)
    cells = pd.concat(frames, ignore_index=True)
    cells["data_sha256"] = cells["dataset"].map(digests)
    for column in COLUMNS:
        if column not in cells:
            cells[column] = np.nan
    return cells[list(COLUMNS)].sort_values(["track", "dataset", "method", "k", "trial"], ignore_index=True)


def write(cells: pd.DataFrame, path: Path = FILE) -> Path:
    """Write a shipped file: CSV in gzip with no timestamp, or in xz where ``path`` ends in ``.xz`` (half the
    size of gzip on the fold fits' partitions, whose rows of a trial repeat one another further apart than
    gzip's window); the same cells give the same bytes."""
    text = cells.to_csv(index=False, float_format="%.17g", lineterminator="\n").encode()
    if Path(path).suffix == ".xz":
        write_atomic(Path(path), lzma.compress(text, preset=6))
        return Path(path)
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0, compresslevel=9) as stream:
        stream.write(text)
    write_atomic(Path(path), buffer.getvalue())
    return Path(path)


def refresh(benchmark_out: Path, tracks: list[str], path: Path = FILE) -> Path:
    """Rewrite the shipped file from the benchmark's runs under ``benchmark_out`` (what ``make results`` does
    after ``make benchmark``); returns its path."""
    cells = collect(benchmark_out, tracks)
    logger.info("%s family cells of %d tracks (%s) -> %s", f"{len(cells):,}", cells["track"].nunique(),
                ", ".join(sorted(cells["track"].unique())), path)
    return write(cells, path)


def load(path: Path | None = None) -> pd.DataFrame:
    """The shipped family cells (:data:`COLUMNS`; ``path`` default :data:`FILE`); a missing file is a
    :class:`FileNotFoundError` line."""
    path = Path(path or FILE)
    if not path.is_file():
        raise FileNotFoundError(f"the family's shipped cells {path} are missing: restore them with git, or "
                                "run `make benchmark` and `make results`")
    return pd.read_csv(path)


#: The tuned family's shipped file (``python -m src.benchmark --tune``, then ``make results``): the rows the
#: tuning rule chose (:mod:`src.tuning.selection`; in the unsupervised track the oracle's) of every method with
#: a grid, without partitions; a method with nothing to tune is its row of :data:`FILE`.
TUNED_FILE = PAPERS_DIR / "benchmark" / "tuned_cells.csv.gz"
#: Its columns, in order: :data:`COLUMNS` but the partition and the :data:`LABEL_COLUMNS` (the tuned runs read no
#: representation out by the labels, and keep no partition to score the classes given back from), then what the
#: rule chose and why. The choice's entrants ship apart (:data:`src.choice.entrants.FILE`).
TUNED_COLUMNS = (*(column for column in COLUMNS if column != "partition" and column not in LABEL_COLUMNS), "setting",
                 "default_setting", "selection", "validation_acc", "n_validation")


def collect_tuned(tables: dict[str, pd.DataFrame], digests: dict[str, str]) -> pd.DataFrame:
    """The tuned rows of each track (track -> its tuned table, :mod:`src.tuning.tables`) as the tuned file's
    rows (:data:`TUNED_COLUMNS`): the methods with a grid, each data set's digest from ``digests``."""
    frames = [rows[rows["selection"] != "nothing to tune"].assign(track=track) for track, rows in tables.items()]
    cells = pd.concat(frames, ignore_index=True)
    cells["data_sha256"] = cells["dataset"].map(digests)
    for column in TUNED_COLUMNS:
        if column not in cells:
            cells[column] = np.nan
    return cells[list(TUNED_COLUMNS)].sort_values(["track", "dataset", "method", "k", "trial"], ignore_index=True)


def load_tuned(path: Path | None = None) -> pd.DataFrame | None:
    """The shipped tuned family cells (:data:`TUNED_COLUMNS`), or None when none ship."""
    path = Path(path or TUNED_FILE)
    return pd.read_csv(path).reindex(columns=list(TUNED_COLUMNS)) if path.is_file() else None


def reference_estimator(estimator: str) -> bool:
    """Whether ``estimator`` is a reference of the label tracks (:mod:`src.methods.references`): it declares a
    grid, so its fixed row is no tuned row; until its tuned cells ship it is left out of the tuned family."""
    return method_kind(str(estimator)) == REFERENCE


def tuned_family(family: pd.DataFrame, tuned: pd.DataFrame | None) -> pd.DataFrame | None:
    """The whole tuned family: the shipped tuned rows, and each untuned method's row of ``family`` (its one
    setting) but a reference's whose tuned rows do not ship (:func:`reference_estimator`); None when no tuned row
    ships. Tracks and data sets the tuned file lacks are left out."""
    if tuned is None or tuned.empty:
        return None
    covered = tuned[["track", "dataset"]].drop_duplicates()
    fixed = family.merge(covered, on=["track", "dataset"])
    fixed = fixed[~fixed["estimator"].map(reference_estimator)]
    fixed = fixed[~fixed.set_index(["track", "dataset", "method"]).index.isin(
        tuned.set_index(["track", "dataset", "method"]).index.unique())]
    fixed = fixed.drop(columns="partition", errors="ignore").assign(setting="", default_setting="",
                                                                    selection="nothing to tune")
    return pd.concat([tuned, fixed], ignore_index=True)


#: Every setting's scores of the tuned benchmark (``make results`` writes it from each track's
#: ``tuned/<track>_settings.csv``, :mod:`src.tuning.tables`): per (track, data set, method, k, trial, setting)
#: of a tuned grid as it grew, the test scores, the iterations and convergence, and the validation scores the
#: rule read (per fold, with the samples scored), without partitions; the tuned choices are re-derived from it
#: alone (:func:`src.tuning.growth.replay`).
SETTINGS_FILE = PAPERS_DIR / "benchmark" / "tuned_settings.csv.gz"


def collect_settings(searched: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Each track's searched settings (track -> its table) as the settings file's rows, a ``track`` column first."""
    frames = [rows.assign(track=track) for track, rows in searched.items() if rows is not None and not rows.empty]
    cells = pd.concat(frames, ignore_index=True)
    return cells[["track", *(c for c in cells.columns if c != "track")]].sort_values(
        ["track", "dataset", "method", "k", "trial", "setting"], ignore_index=True)


def load_settings(path: Path | None = None) -> pd.DataFrame | None:
    """The shipped settings file, or None when none ships."""
    path = Path(path or SETTINGS_FILE)
    return pd.read_csv(path, low_memory=False) if path.is_file() else None


def join_tuned(tables: dict[str, tuple[pd.DataFrame, pd.DataFrame]], only: list[str], digests: dict[str, str],
               tuned_path: Path | None = None, settings_path: Path | None = None) -> tuple[Path, Path]:
    """Put the tuned tables of a run that tuned the estimators ``only`` alone (``python -m src.benchmark --tune
    --methods ...``: track -> (tuned rows, searched settings), :mod:`src.tuning.tables`) into the shipped tuned
    files, in the place of those estimators' rows in the run's tracks; every other row is kept as it ships.
    ``digests``: each data set's digest as the run saw it (:func:`run_digests`). Returns the two files written."""
    tuned_path, settings_path = Path(tuned_path or TUNED_FILE), Path(settings_path or SETTINGS_FILE)
    new_rows = collect_tuned({track: rows for track, (rows, _) in tables.items()}, digests)
    new_settings = collect_settings({track: searched for track, (_, searched) in tables.items()})

    def replaced(old: pd.DataFrame | None, new: pd.DataFrame, order: list[str]) -> pd.DataFrame:
        if old is None:
            return new
        theirs = old["track"].isin(list(tables)) & old["estimator"].isin(list(only))
        kept = old[~theirs]
        return pd.concat([kept, new.reindex(columns=kept.columns)], ignore_index=True).sort_values(
            order, ignore_index=True)

    write(replaced(load_tuned(tuned_path), new_rows, ["track", "dataset", "method", "k", "trial"]), tuned_path)
    write(replaced(load_settings(settings_path), new_settings,
                   ["track", "dataset", "method", "k", "trial", "setting"]), settings_path)
    logger.info("the tuned rows and settings of %s -> %s, %s (the other rows as they shipped)", ", ".join(only),
                tuned_path, settings_path)
    return tuned_path, settings_path


#: The file that marks a benchmark folder laid out from the shipped cells (:func:`unpack`), with what it read.
UNPACKED = "unpacked.json"


def unpack(out: Path, family_path: Path | None = None, tuned_path: Path | None = None,
           settings_path: Path | None = None) -> Path:
    """Lay the shipped cells out as a benchmark's folder, so that its report is written without a fit.

    Each track's family cells become one ``results.csv`` per (data set, method) under ``out/<track>/runs/``
    (``method`` the full label, as a run writes it), and the shipped tuned cells, with each untuned method's
    row (:func:`tuned_family`), become ``out/tuned/<track>.csv``. What a run leaves beside its cells and the
    shipped files do not hold (each searched setting's scores, the schedule of the cells, each run's
    ``provenance.json``) is absent, and :data:`UNPACKED` names the files read and their sha256, which the
    report cites. An earlier folder at ``out`` is replaced.

    Parameters
    ----------
    out : path
        The benchmark folder to write (e.g. ``outputs/benchmark``).
    family_path, tuned_path : path, optional
        The shipped files (default :data:`FILE` and :data:`TUNED_FILE`).
    settings_path : path, optional
        The shipped settings (default :data:`SETTINGS_FILE`; laid out where it is).

    Returns
    -------
    Path
        ``out``.
    """
    out = Path(out)
    family_path, tuned_path = Path(family_path or FILE), Path(tuned_path or TUNED_FILE)
    family = load(family_path)
    tuned = tuned_family(family, load_tuned(tuned_path))
    if out.exists():
        shutil.rmtree(out)
    for (track, dataset, label), rows in family.groupby(["track", "dataset", "label"], sort=True):
        folder = out / str(track) / "runs" / f"{dataset}_{label}".replace("/", "_")
        folder.mkdir(parents=True, exist_ok=True)
        cells = rows.drop(columns=["track", "label"]).assign(method=label)
        write_atomic(folder / "results.csv", cells.to_csv(index=False, float_format="%.17g"))
    read = [family_path, *lay_out_tuned(out, tuned, tuned_path, settings_path)]
    write_atomic(out / UNPACKED, json.dumps(files_record(read, family), indent=2) + "\n")
    return out


def files_record(read: list[Path], cells: pd.DataFrame) -> dict:
    """The files ``read`` with their sha256, and the code fingerprints of the ``cells`` they hold."""
    return {"files": {str(path): hashlib.sha256(path.read_bytes()).hexdigest() for path in read},
            "code_fingerprints": sorted(cells["code_fingerprint"].dropna().astype(str).unique())}


def lay_out_tuned(out: Path, tuned: pd.DataFrame | None, tuned_path: Path, settings_path: Path | None = None) \
        -> list[Path]:
    """Write the tuned family ``tuned`` (:func:`tuned_family`) as ``out/tuned/<track>.csv``, and the shipped
    settings (``settings_path``, default :data:`SETTINGS_FILE`) as ``out/tuned/<track>_settings.csv``; returns
    the shipped files read (none when ``tuned`` is None)."""
    if tuned is None:
        return []
    def per_track(cells: pd.DataFrame, suffix: str) -> None:
        for track, rows in cells.groupby("track", sort=True):
            write_atomic(out / homes.TUNED_DIR / f"{track}{suffix}.csv",
                         rows.drop(columns="track").to_csv(index=False, float_format="%.17g"))

    (out / homes.TUNED_DIR).mkdir(parents=True, exist_ok=True)
    per_track(tuned, "")
    read = [Path(tuned_path)]
    settings_path = Path(settings_path or SETTINGS_FILE)
    settings = load_settings(settings_path)
    if settings is not None:
        per_track(settings, "_settings")
        read.append(settings_path)
    return read


#: The file that marks a run's benchmark folder whose tuned tables were laid out from the shipped tuned cells
#: (:func:`tuned_beside`), with what it read.
TUNED_UNPACKED = "tuned_unpacked.json"


def tuned_beside(out: Path, tuned_path: Path | None = None, settings_path: Path | None = None) -> Path | None:
    """Lay the shipped tuned cells out beside the fixed-setting cells that a run left in ``out`` (the family's
    untuned methods' rows read from those runs), so that the run's report has the tuned sections without the
    hours of ``--tune``; :data:`TUNED_UNPACKED` records the files read and their code fingerprints, which the
    report cites. Returns that record's path, or None when no tuned cells ship."""
    out, tuned_path = Path(out), Path(tuned_path or TUNED_FILE)
    frames = [frame.assign(track=track) for track in homes.names(homes.BENCHMARK_HOME)
              if (frame := load_track(out / track / "runs")) is not None]
    if not frames:
        raise FileNotFoundError(f"no results under {out}/<track>/runs: run `make benchmark` first")
    shipped_tuned = load_tuned(tuned_path)
    tuned = tuned_family(pd.concat(frames, ignore_index=True), shipped_tuned)
    read = lay_out_tuned(out, tuned, tuned_path, settings_path)
    if not read:
        return None
    path = out / TUNED_UNPACKED
    write_atomic(path, json.dumps(files_record(read, shipped_tuned), indent=2) + "\n")
    return path


def unpacked(out: Path) -> dict | None:
    """What :func:`unpack` recorded in the benchmark folder ``out``, or None for a folder a run wrote."""
    path = Path(out) / UNPACKED
    return json.loads(path.read_text()) if path.is_file() else None

"""Run the clustering protocol for one (dataset, method) pair; Hydra's entry point.

Usage::

    python -m src.run method=nmf dataset=yale
    python -m src.run -m method=kmeans,nmf,nmf_kl dataset=orl,yale      # parallel multirun (joblib)
    python -m src.run -m +experiment=cnmf                               # a paper's settings

Writes into Hydra's output directory: ``cells/`` (one row per finished cell), ``results.csv``,
``config.yaml`` (the composed config), and the table and figure of :mod:`src.report`. A bad value stops the
run before anything is computed, with one line naming the parameter.
"""

import fcntl
import hashlib
import json
import logging
import resource
import sys
import time
from collections.abc import Mapping
from contextlib import contextmanager
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf
from threadpoolctl import threadpool_limits

from .data import load_dataset
from .errors import ConfigError, UserError
from .protocol import check_method, check_protocol, make_trial, run_cell
from .report import write_reports
from .results import RESULTS, cell_path, load_cell, save_cell, write_atomic, write_results

logger = logging.getLogger(__name__)

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"
GROUPS = ("dataset", "method", "protocol", "experiment")
LOCK = ".lock"


def check_group_choices(overrides: list[str], conf_dir: Path = CONF_DIR) -> None:
    """Reject an unknown config group choice (``method=foo``) with one line listing the choices.

    Hydra would report it too, over several lines; this check runs before Hydra starts.
    """
    for override in overrides:
        key, sep, value = override.partition("=")
        key = key.lstrip("+~")
        if not sep or key not in GROUPS:
            continue
        available = sorted(path.stem for path in (conf_dir / key).glob("*.yaml"))
        for choice in value.split(","):
            if choice not in available:
                raise ConfigError(f"{key}={choice!r} is not one of {', '.join(available)}")


def effective_labels(protocol: Mapping, dataset: str) -> dict:
    """The label scheme for ``dataset``: ``protocol.labels`` updated by ``protocol.label_overrides``."""
    overrides = protocol.get("label_overrides") or {}
    if not isinstance(overrides, Mapping):
        raise ConfigError(f"protocol.label_overrides={overrides!r} must map data set names to label settings")
    override = overrides.get(dataset) or {}
    for name, value in (("labels", protocol["labels"]), (f"label_overrides.{dataset}", override)):
        if not isinstance(value, Mapping):
            raise ConfigError(f"protocol.{name}={value!r} must be a mapping with keys mode, fraction, per_class")
    return {**protocol["labels"], **override}


def check_run(plain: Mapping) -> None:
    """Reject a bad top-level ``seed`` or ``runtime.blas_threads`` with one line naming it."""
    seed = plain.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(f"seed={seed!r} must be an integer >= 0")
    threads = (plain.get("runtime") or {}).get("blas_threads")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise ConfigError(f"runtime.blas_threads={threads!r} must be a positive integer or null (library default)")


@contextmanager
def exclusive(path: Path):
    """Hold an exclusive advisory lock (``flock``) on the file ``path`` for the duration of the block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def config_fingerprint(plain: Mapping) -> str:
    """Hash of everything that determines a cell's numbers: data set, method, protocol and seed.

    A cell file on disk is reused only when its fingerprint matches, so a re-run into the same directory
    with other settings recomputes instead of mixing results.
    """
    relevant = {key: plain[key] for key in ("dataset", "method", "protocol", "seed")}
    return hashlib.sha256(json.dumps(relevant, sort_keys=True, default=str).encode()).hexdigest()[:16]


def run_experiment(cfg: DictConfig, out_dir: Path) -> Path:
    """Run every (k, trial) cell of ``cfg`` and write the results into ``out_dir``; returns results.csv."""
    plain = OmegaConf.to_container(cfg, resolve=True)
    protocol, method = plain["protocol"], plain["method"]
    check_run(plain)
    dataset = load_dataset(plain["dataset"], plain["paths"]["data_dir"], plain["paths"]["mirror"], plain["seed"])
    protocol = {**protocol, "labels": effective_labels(protocol, dataset.name)}
    sizes = [int((dataset.y == c).sum()) for c in set(dataset.y.tolist())]
    check_protocol(protocol, len(sizes), min(sizes))
    check_method(method, dataset.X, dataset.image_shape)
    write_atomic(out_dir / "config.yaml", OmegaConf.to_yaml(cfg, resolve=True))

    fingerprint = config_fingerprint(plain)
    cells = [(k, t) for k in protocol["ks"] for t in range(protocol["n_trials"])]
    rows, start = [], time.perf_counter()
    for number, (k, trial_number) in enumerate(cells, 1):
        path = cell_path(out_dir, dataset.name, method["label"], k, trial_number)
        row = load_cell(path)
        if row is not None and row.get("config_hash") != fingerprint:
            logger.warning("%s was computed under another config; recomputing it", path.name)
            row = None
        if row is None:
            trial = make_trial(dataset.y, dataset.name, k, trial_number, plain["seed"], protocol["labels"])
            row = run_cell(dataset.X, dataset.name, method, trial, protocol, plain["seed"], dataset.image_shape)
            row["params"] = json.dumps(method["params"], sort_keys=True)
            row["config_hash"] = fingerprint
            row["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # job peak so far
            save_cell(path, row)
            status = f"acc={row['acc']:.3f} nmi={row['nmi']:.3f} fit {row['fit_seconds']:.2f}s"
        else:
            status = "already done, skipped"
        rows.append(row)
        logger.info("[%s/%s] cell %d/%d k=%d trial=%d: %s (elapsed %.0fs)", dataset.name, method["label"],
                    number, len(cells), k, trial_number, status, time.perf_counter() - start)
    with exclusive(out_dir / LOCK):  # runs sharing out_dir take turns writing results.csv, tables and figure
        write_reports(write_results(out_dir, rows), out_dir)
    logger.info("wrote %s and the table and figure beside it", out_dir / RESULTS)
    return out_dir / RESULTS


@hydra.main(config_path="../conf", config_name="config", version_base="1.3")
def main(cfg: DictConfig) -> None:
    out_dir = Path(HydraConfig.get().runtime.output_dir)
    try:
        check_run(OmegaConf.to_container(cfg, resolve=True))
        with threadpool_limits(limits=cfg.runtime.blas_threads):
            run_experiment(cfg, out_dir)
    except UserError as exc:
        logger.error("%s", exc)
        sys.exit(2)


if __name__ == "__main__":
    try:
        check_group_choices(sys.argv[1:])
    except ConfigError as exc:
        logging.basicConfig(format="[%(levelname)s] %(message)s")
        logger.error("%s", exc)
        sys.exit(2)
    main()

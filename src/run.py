"""Run the clustering protocol for one (dataset, method) pair; Hydra's entry point.

Usage::

    python -m src.run method=nmf dataset=yale
    python -m src.run -m method=kmeans,nmf,nmf_kl dataset=orl,yale      # parallel multirun (joblib)
    python -m src.run -m +paper/cnmf=experiment                         # a paper's settings
    repro-mf method=nmf dataset=yale        # the same, as the installed command (tab completion: -sc install=bash)

Writes into Hydra's output directory: ``cells/`` (one row per finished cell), ``results.csv``,
``config.yaml`` (the composed config), ``provenance.json`` (:mod:`src.provenance`: code, environment, data,
command) and the table and figure of :mod:`src.presentation.report`. A bad value stops the run before anything is
computed, with one line naming the parameter; a multirun checks every job first (:mod:`src.sweep`).
"""

import hashlib
import json
import logging
import os
import resource
import shlex
import sys
import time
from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import hydra
import yaml
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf
from threadpoolctl import threadpool_limits

from . import methods, provenance, sweep
from .config_dir import CONF_DIR
from .data import Dataset, load_dataset, pin_user_file
from .data.fetch import forget_used_files
from .errors import ConfigError, UserError
from .protocol.cell import check_method, check_protocol, make_trial, run_cell
from .presentation.report import write_reports
from .files import locked, write_atomic
from .results import CELL_DIR, RESULTS, cell_path, load_cell, save_cell, setting_columns, write_results

logger = logging.getLogger(__name__)

GROUPS = ("dataset", "method", "protocol")  # plus paper/<name> (a paper's home, conf/paper/<name>/)
LOCK = ".lock"


def check_group_choices(overrides: list[str], conf_dir: Path = CONF_DIR) -> None:
    """Reject an unknown config group choice (``method=foo``) with one line listing the choices.

    Hydra would report it too, over several lines; this check runs before Hydra starts.
    """
    papers = sorted(path.name for path in (conf_dir / "paper").iterdir() if path.is_dir())
    for override in overrides:
        key, sep, value = override.partition("=")
        key = key.lstrip("+~")
        if not sep:
            continue
        if key == "experiment":  # the old name of a paper's settings
            raise ConfigError(f"experiment={value!r}: a paper's settings are +paper/<name>=experiment "
                              f"(one of {', '.join(papers)}), e.g. +paper/cnmf=experiment")
        if key.startswith("paper/") and key.removeprefix("paper/") not in papers:
            raise ConfigError(f"{key}: no paper {key.removeprefix('paper/')!r}; the papers are {', '.join(papers)}")
        if key not in GROUPS and not key.startswith("paper/"):
            continue
        available = sorted(path.stem for path in (conf_dir / key).glob("*.yaml"))
        for choice in value.split(","):
            if choice not in available:
                raise ConfigError(f"{key}={choice!r} is not one of {', '.join(available)}")


def check_override_grammar(overrides: list[str]) -> None:
    """Reject an override Hydra's grammar cannot read with one line that says how to quote it.

    A value with a space, a non-ASCII letter or another special character (a data file's path, say) has to
    be quoted inside the override, and the override quoted again for the shell. Hydra's own message spans
    several lines; this check, with Hydra's public parser, runs before Hydra starts.
    """
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import OverrideParseException

    parser = OverridesParser.create()
    for override in overrides:
        if override.startswith("-"):
            continue
        try:
            parser.parse_overrides([override])
        except OverrideParseException:
            key, _, value = override.partition("=")
            raise ConfigError(
                f"Hydra cannot read the override {override!r}: a value with spaces, non-ASCII letters or other "
                f"special characters must be quoted inside the override, e.g. '{key}=\"{value}\"' (the outer "
                "single quotes are for the shell)") from None


def with_label_protocol(overrides: list[str], conf_dir: Path = CONF_DIR) -> tuple[list[str], str | None]:
    """``overrides`` plus ``protocol=<p>`` when they run label-constrained methods and pick no protocol.

    ``p`` is the method's entry in ``label_protocols`` of ``conf/config.yaml`` (the labelling of the paper
    that introduced it). Nothing is added when the overrides choose a protocol, its labels or a paper's
    settings (other protocol keys, such as ``protocol.ks``, still apply on top of ``p``), when
    no method of theirs needs labels, or when their label methods belong to different protocols (the sweep's
    check then names each job that has no labels). Returns the overrides and the protocol added (or None).
    """
    keys = [o.partition("=")[0].lstrip("+~") for o in overrides if "=" in o and not o.startswith("-")]
    if any(key == "protocol" or key.startswith(("protocol.labels", "protocol.label_overrides", "paper/"))
           for key in keys):
        return overrides, None
    homes = yaml.safe_load((conf_dir / "config.yaml").read_text()).get("label_protocols") or {}
    chosen = [o.partition("=")[2] for o in overrides if o.partition("=")[0].lstrip("+") == "method"]
    names = [name for value in chosen for name in value.split(",")]
    wanted = {homes[name] for name in names if name in homes}
    if len(wanted) != 1:
        return overrides, None
    protocol = wanted.pop()
    return [*overrides, f"protocol={protocol}"], protocol


def check_output_dir(overrides: list[str]) -> None:
    """Make the output directory given on the command line, or fail in one line before Hydra tries.

    The directories are the values of ``hydra.run.dir``, ``hydra.sweep.dir`` and ``paths.output_dir`` on the
    command line (those without interpolations), else ``outputs/`` under the working directory. Hydra would
    make them a moment later, with a traceback when it cannot.
    """
    given = {o.partition("=")[0].lstrip("+"): o.partition("=")[2] for o in overrides if "=" in o}
    values = [(key, given[key]) for key in ("hydra.run.dir", "hydra.sweep.dir", "paths.output_dir") if key in given]
    for key, value in values or [("the output directory", "outputs")]:
        if not value or "${" in value:
            continue
        path = Path(value).expanduser()
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"{key}={value!r} cannot be created: {exc.strerror or exc}") from None
        if not os.access(path, os.W_OK | os.X_OK):
            raise ConfigError(f"{key}={value!r} is not writable")


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


def needs_labels_check(method: Mapping, labels: Mapping, dataset: str) -> None:
    """Refuse a label-constrained method under a protocol that labels no sample (one line, what to do)."""
    cls = methods.REGISTRY.get(method["name"])
    if getattr(cls, "needs_labels", False) and labels.get("mode") == "none":
        raise ConfigError(
            f"method={method['name']} needs labelled samples but the protocol labels none on {dataset} "
            f"(protocol.labels.mode='none'): use protocol=cnmf or protocol=ccf, or set "
            f"protocol.labels.mode=fraction (or per_class)")


def cell_settings(plain: Mapping, protocol: Mapping) -> dict:
    """Everything besides (k, trial) and the code that determines a cell's numbers.

    The data set, the method (name, label, parameters), the seed and the protocol with the data set's
    effective labels; the lists of k and the number of trials are left out (a cell's trial depends only
    on its own (seed, dataset, k, trial)), as are label settings that the label mode does not read.
    """
    labels = dict(protocol["labels"])
    for key in ("fraction", "per_class"):  # the mode of the same name is the only one that reads each
        if labels.get("mode") != key:
            labels.pop(key, None)
    kept = {key: value for key, value in protocol.items() if key not in ("ks", "n_trials", "label_overrides")}
    return {"dataset": dict(plain["dataset"]), "method": dict(plain["method"]),
            "protocol": {**kept, "labels": labels}, "seed": plain["seed"]}


def config_fingerprint(settings: Mapping) -> str:
    """Hash of a cell's settings (:func:`cell_settings`); a cell on disk is reused only if it matches."""
    return hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:16]


@dataclass
class Prepared:
    """A validated run: the loaded data set and the effective protocol and method settings."""

    dataset: Dataset
    protocol: dict
    method: dict
    settings: dict


def prepare(plain: Mapping, load=load_dataset) -> Prepared:
    """Check every setting of a resolved config and load its data set; nothing is computed or written.

    Raises :class:`~src.errors.UserError` with one line naming the first bad setting. Used by a run
    before its first cell and by a multirun for every job before any job starts (:mod:`src.sweep`);
    ``load`` is the data set loader (a sweep passes one that loads each data set once).
    """
    check_run(plain)
    for group in ("dataset", "method", "protocol"):
        if not isinstance(plain.get(group), Mapping):
            raise ConfigError(f"{group}={plain.get(group)!r} must be a config group (e.g. {group}=<name>)")
    protocol, method = plain["protocol"], plain["method"]
    if method.get("name") not in methods.REGISTRY:
        raise ConfigError(f"method.name={method.get('name')!r} is not one of {', '.join(methods.NAMES)}")
    check_method(method)  # cheapest first: the parameters and the labels before any data are read or fetched
    named = str(plain["dataset"].get("name", "the data set"))
    needs_labels_check(method, effective_labels(protocol, named), named)
    dataset = load(plain["dataset"], plain["paths"]["data_dir"], plain["paths"]["mirror"], plain["seed"])
    protocol = {**protocol, "labels": effective_labels(protocol, dataset.name)}
    sizes = [int((dataset.y == c).sum()) for c in set(dataset.y.tolist())]
    check_protocol(protocol, len(sizes), min(sizes))
    check_method(method, dataset.X, dataset.image_shape)
    return Prepared(dataset, protocol, method, cell_settings(plain, protocol))


def stale_reason(row: dict, fingerprint: str, code: str) -> str | None:
    """Why a cell read from disk cannot be reused, or None if it can."""
    if row.get("config_hash") != fingerprint:
        return "computed under other settings"
    if row.get("code_fingerprint") != code:
        return "computed by other code (a source file or a numerical package changed)"
    return None


def run_experiment(cfg: DictConfig, out_dir: Path, overrides=(), progress_level: int = logging.INFO) -> Path:
    """Run every (k, trial) cell of ``cfg`` and write the results into ``out_dir``; returns results.csv.

    Cells already on disk with the same settings and code are reused; others are recomputed, with one
    line per reason. ``provenance.json`` records what produced the directory (written at the start and
    completed at the end). Progress is logged at ``progress_level`` as a line per k
    (:class:`src.sweep.RunProgress`; a sweep job passes DEBUG: its sweep logs one line per job), each cell
    at DEBUG.
    """
    started = provenance.now()
    forget_used_files()  # this job's data files only, in a worker that ran other jobs before
    cfg = pin_user_file(cfg)  # a user's own data file: recorded (config, results, fingerprint) by absolute path and sha256
    plain = OmegaConf.to_container(cfg, resolve=True)
    run = prepare(plain)
    dataset, protocol, method = run.dataset, run.protocol, run.method
    write_atomic(out_dir / "config.yaml", OmegaConf.to_yaml(cfg, resolve=True))
    record = provenance.collect(started, overrides=overrides)
    provenance.write(out_dir, record)

    fingerprint, code = config_fingerprint(run.settings), provenance.code_fingerprint()
    columns = setting_columns(run.settings)
    cells = [(k, t) for k in protocol["ks"] for t in range(protocol["n_trials"])]
    paths = {cell: cell_path(out_dir, dataset.name, method["label"], *cell) for cell in cells}
    stored, stale = {}, {}
    for cell, path in paths.items():
        row = load_cell(path)
        reason = stale_reason(row, fingerprint, code) if row is not None else None
        if reason:
            stale.setdefault(reason, []).append(path.name)
            row = None
        stored[cell] = row
    for reason, names in stale.items():
        logger.warning("%d finished cell(s) in %s were %s; recomputing them (first: %s)",
                       len(names), out_dir / CELL_DIR, reason, names[0])
    rows, start, computed = [], time.perf_counter(), 0
    progress = sweep.RunProgress(f"{dataset.name}/{method['label']}", cells,
                                 [cell for cell, row in stored.items() if row is None], progress_level)
    for number, (k, trial_number) in enumerate(cells, 1):
        row = stored[k, trial_number]
        if row is None:
            trial = make_trial(dataset.y, dataset.name, k, trial_number, plain["seed"], protocol["labels"])
            row = run_cell(dataset.X, dataset.name, method, trial, protocol, plain["seed"], dataset.image_shape)
            row.update(columns)
            row["params"] = json.dumps(method["params"], sort_keys=True)
            row["config_hash"] = fingerprint
            row["code_fingerprint"] = code
            row["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # job peak so far
            save_cell(paths[k, trial_number], row)
            computed += 1
            status = f"acc={row['acc']:.3f} nmi={row['nmi']:.3f} fit {row['fit_seconds']:.2f}s"
        else:
            status = "already done, skipped"
        rows.append(row)
        logger.debug("[%s/%s] cell %d/%d k=%d trial=%d: %s (elapsed %.0fs)", dataset.name, method["label"],
                     number, len(cells), k, trial_number, status, time.perf_counter() - start)
        progress.update(k, trial_number, row)
    with locked(out_dir / LOCK):  # runs sharing out_dir take turns writing results.csv, tables and figure
        write_reports(write_results(out_dir, rows), out_dir)
    provenance.write(out_dir, {**record, "ended": provenance.now(), "cells": len(cells), "cells_computed": computed,
                               "cells_reused": len(cells) - computed})
    logger.log(progress_level, "wrote %s and the table and figure beside it", out_dir / RESULTS)
    return out_dir / RESULTS


@hydra.main(config_path=str(CONF_DIR), config_name="config", version_base="1.3")
def main(cfg: DictConfig) -> None:
    hydra_cfg = HydraConfig.get()
    out_dir = Path(hydra_cfg.runtime.output_dir)
    overrides = list(hydra_cfg.overrides.task)
    multirun = hydra_cfg.mode == RunMode.MULTIRUN  # a failed sweep job is recorded; the others go on
    try:
        with sweep.job(Path(hydra_cfg.sweep.dir), hydra_cfg.job.num, overrides, out_dir, cfg) if multirun \
                else nullcontext():  # a sweep job: one line at its end, with the sweep's job counter
            check_run(OmegaConf.to_container(cfg, resolve=True))  # runtime.blas_threads, before it is used
            with threadpool_limits(limits=cfg.runtime.blas_threads):
                run_experiment(cfg, out_dir, overrides, logging.DEBUG if multirun else logging.INFO)
    except UserError as exc:  # a single run: one line, exit status 2
        logger.error("%s", exc)
        sys.exit(2)
    except OSError as exc:  # a full disk, a directory that cannot be made: one line, no half-written file
        where = f" {exc.filename}" if exc.filename else ""
        logger.error("could not write%s: %s", where, exc.strerror or exc)
        sys.exit(1)


def cli(command: tuple[str, ...] = ("repro-mf",)) -> None:
    """The command line (``python -m src.run`` or the console script ``repro-mf``): the group choices are
    checked first (one line on a bad one, exit status 2), then Hydra runs :func:`main`. ``command`` is how
    the program was called, recorded with the arguments in ``provenance.json``."""
    typed = sys.argv[1:]
    logging.basicConfig(format="[%(levelname)s] %(message)s")
    try:
        check_override_grammar(typed)
        check_group_choices(typed)
        check_output_dir(typed)
    except ConfigError as exc:
        logger.error("%s", exc)
        sys.exit(2)
    overrides, protocol = with_label_protocol(typed)
    if protocol is not None:
        logger.warning("the label-constrained method runs under protocol=%s, the labelling of its paper "
                       "(pick another with protocol=...)", protocol)
        sys.argv[1:] = overrides
    os.environ.setdefault(provenance.COMMAND_ENV, shlex.join([*command, *typed]))
    main()


if __name__ == "__main__":
    cli(("python", "-m", "src.run"))

"""Run the clustering protocol for one (dataset, method) pair; Hydra's entry point.

Usage::

    python -m src.run method=nmf dataset=yale
    python -m src.run -m method=kmeans,nmf,nmf_kl dataset=orl,yale      # parallel multirun (joblib)
    python -m src.run -m method=nmf,gnmf dataset=yale solver=fixed      # every method at fixed iterations
    python -m src.run -m experiment=cnmf                                # a paper's settings (conf/experiment/)
    python -m src.run -m experiment=cnmf dry_run=true                   # check, fetch the data, count the cells
    repro-mf method=nmf dataset=yale        # the same, as the installed command (tab completion: -sc install=bash)
    repro-mf --version                      # the release, e.g. "repro-mf 0.2.0"

Writes into Hydra's output directory: ``cells/`` (one row per finished cell), ``results.csv``,
``config.yaml`` (the composed config, resolved: the method's parameters as the estimator gets them, the
solver's settings among them for an iterative method, and the ``solver`` they came from),
``provenance.json`` (:mod:`src.running.provenance`: code, environment, data, command) and the table and figure of
:mod:`src.presentation.report`. Every setting is checked before anything is computed, with one line naming a
bad one (:mod:`src.running.settings`); the command line is checked before Hydra starts (:mod:`src.running.command_line`); a
multirun checks every job first (:mod:`src.running.sweep`). ``dry_run=true`` stops after the checks and the data:
it logs how many cells the run has and how many are already done, computes no cell and writes no result
(Hydra still makes the run directory with its own ``.hydra/`` and log).
"""

import logging
import os
import shlex
import sys
from contextlib import nullcontext
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig

from . import DISTRIBUTION, __version__, resolvers
from .config_dir import CONF_DIR
from .errors import ConfigError, UserError
from .presentation.report import write_reports
from .running import provenance, sweep
from .running.cells import run_experiment
from .running.command_line import (check_group_choices, check_output_dir, check_override_grammar,
                                   with_experiment_group, with_label_protocol, with_outside_method)

logger = logging.getLogger(__name__)

# The configs' resolvers, before Hydra composes: at import, so that a multirun's worker processes, which import
# this module to run their jobs, resolve them too.
resolvers.register()


@hydra.main(config_path=str(CONF_DIR), config_name="config", version_base="1.3")
def main(cfg: DictConfig) -> None:
    """One run, or one job of a multirun, on the config Hydra composed: :func:`~src.running.cells.run_experiment` into Hydra's
    output directory, with the table and figure of :func:`~src.presentation.report.write_reports` handed down to
    it; a user's mistake ends it with one line and exit status 2, a failed write with status 1."""
    hydra_cfg = HydraConfig.get()
    out_dir = Path(hydra_cfg.runtime.output_dir)
    overrides = list(hydra_cfg.overrides.task)
    multirun = hydra_cfg.mode == RunMode.MULTIRUN  # a failed sweep job is recorded; the others go on
    try:
        with sweep.job(Path(hydra_cfg.sweep.dir), hydra_cfg.job.num, overrides, out_dir, cfg) if multirun \
                else nullcontext() as end:  # a sweep job: one line at its end, with the sweep's job counter
            written = run_experiment(cfg, out_dir, overrides, logging.DEBUG if multirun else logging.INFO,
                                     report=write_reports)
            if written is None and end is not None:
                end.outcome = "dry run: no cell computed, no result written"
    except UserError as exc:  # a single run: one line, exit status 2
        logger.error("%s", exc)
        sys.exit(2)
    except OSError as exc:  # a full disk, a directory that cannot be made: one line, no half-written file
        where = f" {exc.filename}" if exc.filename else ""
        logger.error("could not write%s: %s", where, exc.strerror or exc)
        sys.exit(1)


def cli(command: tuple[str, ...] = ("repro-mf",)) -> None:
    """The command line (``python -m src.run`` or the console script ``repro-mf``): ``--version`` prints the
    release and exits (Hydra has no such flag); otherwise the overrides are checked first
    (:mod:`src.running.command_line`: one line on a bad one, exit status 2; the deprecated ``+paper/<name>=experiment``
    read as ``experiment=<name>``), then Hydra runs :func:`main`.
    ``command`` is how the program was called, recorded with the arguments in ``provenance.json``."""
    typed = sys.argv[1:]
    if "--version" in typed:  # answered before Hydra, which would read it as an unknown flag
        print(f"{DISTRIBUTION} {__version__}")
        sys.exit(0)
    logging.basicConfig(format="[%(levelname)s] %(message)s")
    current = with_experiment_group(typed)  # +paper/<name>=experiment, deprecated: experiment=<name>
    current = with_outside_method(current)  # method=mypkg.mymodule:MyNMF: the config method=outside holding it
    try:
        check_override_grammar(current)
        check_group_choices(current)
        check_output_dir(current)
    except ConfigError as exc:
        logger.error("%s", exc)
        sys.exit(2)
    overrides, protocol = with_label_protocol(current)
    if protocol is not None:
        logger.warning("the label-constrained method runs under protocol=%s, the labelling of its paper "
                       "(pick another with protocol=...)", protocol)
    sys.argv[1:] = overrides
    os.environ.setdefault(provenance.COMMAND_ENV, shlex.join([*command, *typed]))
    main()


if __name__ == "__main__":
    cli(("python", "-m", f"{__package__}.run"))  # src.run in a checkout, repro_mf.run installed

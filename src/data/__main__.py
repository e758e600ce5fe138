"""Fetch and build data sets ahead of a sweep: ``python -m src.data NAME [NAME ...]``.

NAME is a file of ``conf/dataset``; the raw files go to ``paths.data_dir`` (from ``conf/paths/default.yaml``,
the mirror from ``REPRO_DATA_MIRROR``) and derived features are built once, so that the parallel jobs of a
sweep find a warm cache instead of each building the same features.
"""

import logging
import sys

from pathlib import Path

from hydra import compose, initialize_config_dir

from ..errors import UserError
from . import load_dataset

logger = logging.getLogger(__name__)


def main(names: list[str]) -> int:
    logging.basicConfig(level=logging.INFO, format="[%(levelname)s] %(message)s")
    conf_dir = Path(__file__).resolve().parents[2] / "conf"
    with initialize_config_dir(config_dir=str(conf_dir), version_base="1.3"):
        for name in names:
            try:
                cfg = compose(config_name="config", overrides=[f"dataset={name}"])
                dataset = load_dataset(cfg.dataset, cfg.paths.data_dir, cfg.paths.mirror, cfg.seed)
            except UserError as exc:
                logger.error("%s", exc)
                return 2
            logger.info("%s: %d samples x %d features, %d classes", name, *dataset.X.shape, dataset.n_classes)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

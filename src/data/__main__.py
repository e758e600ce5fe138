"""Fetch and build data sets ahead of a sweep: ``python -m src.data NAME [NAME ...]``.

NAME is a file of ``conf/dataset``; the raw files go to ``paths.data_dir`` (the mirror from
``REPRO_DATA_MIRROR``) and derived features are built once, so that the parallel jobs of a sweep find a
warm cache instead of each building the same features.
"""

import logging
import sys

from ..errors import UserError
from .named import load_named

logger = logging.getLogger(__name__)


def main(names: list[str]) -> int:
    logging.basicConfig(level=logging.INFO, format="[%(levelname)s] %(message)s")
    for name in names:
        try:
            dataset = load_named(name)
        except UserError as exc:
            logger.error("%s", exc)
            return 2
        logger.info("%s: %d samples x %d features, %d classes", name, *dataset.X.shape, dataset.n_classes)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

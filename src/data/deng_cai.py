"""Loader for Deng Cai's ``.mat`` face/object files (ORL, Yale, COIL20; also YaleB and PIE from extras).

Each file holds ``fea`` (n_samples x 1024, one sample per row) and ``gnd`` (n x 1, labels 1..K, sorted
by class). Each row is a 32x32 image in MATLAB **column-major** order; the rows are kept exactly as
stored, so an upright image is ``row.reshape(32, 32, order="F")`` (= ``row.reshape(32, 32).T``); use
:func:`src.data.as_images`. Labels become 0-based int64. ORL, Yale, YaleB and PIE are uint8 0..255
(``max_value`` 255); COIL20 is float64 already in [0, 1] (``max_value`` 1).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import scipy.io

from .fetch import fetch
from ..errors import ConfigError, DataError

logger = logging.getLogger(__name__)

#: Raw files this loader reads (keys of :data:`src.data.fetch.REGISTRY`).
FILES = ("ORL_32x32.mat", "Yale_32x32.mat", "COIL20.mat", "extras/YaleB_32x32.mat",
         "extras/PIE_2856_32x32.mat")
#: Config keys of this loader, besides the common ``name``, ``loader`` and ``preprocess``.
KEYS = ("file",)


def load(cfg: Mapping, data_dir: str | Path, mirror: str | Path | None,
         seed: int) -> tuple[np.ndarray, np.ndarray, dict]:
    """Load one Deng Cai ``.mat`` file.

    Parameters
    ----------
    cfg : Mapping
        Dataset config; uses ``file`` (one of :data:`FILES`).
    data_dir, mirror : str, Path or None
        Passed to :func:`src.data.fetch.fetch`.
    seed : int
        Unused (the whole file is loaded).

    Returns
    -------
    X : ndarray, shape (n_samples, 1024), float64
        Raw values as stored (0..255 or [0, 1]), rows in MATLAB column-major pixel order.
    y : ndarray, shape (n_samples,), int64
        Labels 0..K-1.
    meta : dict
        ``image_shape`` (32, 32), ``pixel_order`` ``"F"``, ``class_names`` None and ``max_value``
        (255.0 for uint8 files, 1.0 for float files).
    """
    name = cfg.get("file")
    if name not in FILES:
        raise ConfigError(f"dataset.file={name!r} is not one of {', '.join(FILES)}")
    path = fetch(name, data_dir, mirror)
    try:
        mat = scipy.io.loadmat(path)
        fea, gnd = mat["fea"], np.asarray(mat["gnd"]).ravel()
    except (ValueError, KeyError, OSError) as exc:
        raise DataError(f"{name}: cannot read fea/gnd from {path} ({exc}); delete it to fetch it again") from exc
    if fea.ndim != 2 or fea.shape[0] != gnd.shape[0] or not np.all(gnd == np.round(gnd)):
        raise DataError(f"{name}: unexpected layout fea {fea.shape}, gnd {gnd.shape} in {path}")
    max_value = 255.0 if fea.dtype == np.uint8 else 1.0
    X = fea.astype(np.float64)
    if X.min() < 0 or X.max() > max_value:
        raise DataError(f"{name}: values outside [0, {max_value:g}] in {path}")
    y = gnd.astype(np.int64) - 1
    if not np.array_equal(np.unique(y), np.arange(y.max() + 1)):
        raise DataError(f"{name}: labels in {path} are not 1..K")
    side = math.isqrt(X.shape[1])
    shape = (side, side) if side * side == X.shape[1] else None
    logger.info("%s: %d samples x %d features, %d classes", name, X.shape[0], X.shape[1], y.max() + 1)
    return X, y, {"image_shape": shape, "pixel_order": "F", "class_names": None, "max_value": max_value}

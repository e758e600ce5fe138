"""MNIST loader: IDX parsing, train/test/all split and a seeded random subsample.

Images are 28x28 uint8 (0..255) in row-major (C) order, so each row of ``X`` reshapes with
``row.reshape(28, 28)``; labels are the digits 0..9.

``split``: ``train`` (60,000), ``test`` (10,000) or ``all`` (70,000: train then test, in file order).

``subsample``: ``null`` keeps every sample of the split; an int ``n`` keeps ``n`` samples drawn uniformly
at random **without replacement and without stratification** from
``np.random.default_rng(seed)`` (``seed`` is the argument of :func:`load`), returned in their original
order (the drawn indices are sorted). The CCF paper says only "1000 random samples", which reads as a
plain uniform draw, so class counts vary around n/10.
"""

from __future__ import annotations

import gzip
import logging
import zlib
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from .fetch import fetch
from ..checks import is_integer
from ..errors import ConfigError, DataError

logger = logging.getLogger(__name__)

SPLITS = {
    "train": (("mnist/train-images-idx3-ubyte.gz", "mnist/train-labels-idx1-ubyte.gz"),),
    "test": (("mnist/t10k-images-idx3-ubyte.gz", "mnist/t10k-labels-idx1-ubyte.gz"),),
}
SPLITS["all"] = SPLITS["train"] + SPLITS["test"]
#: Config keys of this loader, besides the common ``name``, ``loader`` and ``preprocess``.
KEYS = ("split", "subsample")


def read_idx(path: str | Path, ndim: int) -> np.ndarray:
    """Read a gzip-compressed IDX file of unsigned bytes.

    Parameters
    ----------
    path : str or Path
        The ``.gz`` file.
    ndim : int
        Expected number of dimensions (3 for images, 1 for labels).

    Returns
    -------
    ndarray of uint8
        Shape given by the big-endian header (e.g. (60000, 28, 28)); read-only view of the file bytes.

    Raises
    ------
    DataError
        The file is not gzip, or the header (magic ``00 00 08 ndim``, sizes) does not match the data.
    """
    name = Path(path).name
    try:
        with gzip.open(path, "rb") as f:
            data = f.read()
    except (OSError, EOFError, zlib.error) as exc:
        raise DataError(f"{name}: not a valid gzip file ({exc}); delete {path} to fetch it again") from exc
    if len(data) < 4 + 4 * ndim or data[:4] != bytes([0, 0, 0x08, ndim]):
        raise DataError(f"{name}: bad IDX header {data[:4].hex()} (expected 000008{ndim:02x}) in {path}")
    dims = tuple(int(d) for d in np.frombuffer(data, dtype=">u4", count=ndim, offset=4))
    offset = 4 + 4 * ndim
    if len(data) - offset != int(np.prod(dims)):
        raise DataError(f"{name}: header says {dims} but the file holds {len(data) - offset} bytes of data")
    return np.frombuffer(data, dtype=np.uint8, offset=offset).reshape(dims)


def load(cfg: Mapping, data_dir: str | Path, mirror: str | Path | None,
         seed: int) -> tuple[np.ndarray, np.ndarray, dict]:
    """Load MNIST.

    Parameters
    ----------
    cfg : Mapping
        Dataset config; uses ``split`` (``train``, ``test`` or ``all``; default ``all``) and
        ``subsample`` (None or a positive int no larger than the split).
    data_dir, mirror : str, Path or None
        Passed to :func:`src.data.fetch.fetch`.
    seed : int
        Seed of the subsample generator ``np.random.default_rng(seed)``.

    Returns
    -------
    X : ndarray, shape (n_samples, 784), float64
        Pixel values 0..255, row-major 28x28.
    y : ndarray, shape (n_samples,), int64
        Digits 0..9.
    meta : dict
        ``image_shape`` (28, 28), ``pixel_order`` ``"C"``, ``class_names`` "0".."9", ``max_value`` 255.
    """
    split = cfg.get("split", "all")
    if split not in SPLITS:
        raise ConfigError(f"dataset.split={split!r} is not one of {', '.join(SPLITS)}")
    images, labels = [], []
    for image_key, label_key in SPLITS[split]:
        images.append(read_idx(fetch(image_key, data_dir, mirror), 3))
        labels.append(read_idx(fetch(label_key, data_dir, mirror), 1))
        if len(images[-1]) != len(labels[-1]):
            raise DataError(f"{image_key} has {len(images[-1])} images but {label_key} {len(labels[-1])} labels")
    images, labels = np.concatenate(images), np.concatenate(labels)
    n_total = len(labels)
    n = cfg.get("subsample")
    if n is None:
        index = np.arange(n_total)
    elif not (is_integer(n) and 1 <= n <= n_total):
        raise ConfigError(f"dataset.subsample={n!r} must be null or an integer in 1..{n_total} "
                          f"(the size of split {split!r})")
    else:
        index = np.sort(np.random.default_rng(seed).choice(n_total, size=int(n), replace=False))
    X = images[index].reshape(len(index), -1).astype(np.float64)
    y = labels[index].astype(np.int64)
    if np.unique(y).size != 10:
        logger.warning("mnist: the subsample of %d holds only %d of the 10 digits", len(y), np.unique(y).size)
    logger.info("mnist: split %s, %d of %d samples (seed %d)", split, len(y), n_total, seed)
    meta = {"image_shape": (28, 28), "pixel_order": "C",
            "class_names": tuple(str(d) for d in range(10)), "max_value": 255.0}
    return X, y, meta

"""Caltech-101, 10 largest classes (3044 images): bag-of-words features, computed once and cached.

JPEGs are read straight from ``caltech101/caltech101_top10.tar`` (fetched and hash-checked by
:func:`src.data.fetch.fetch`; ``tarfile`` + ``cv2.imdecode``, nothing is unpacked to disk). Labels follow
:data:`src.data.fetch.CALTECH_TOP10_CLASSES` (airplanes 0 ... hawksbill 9). Two feature kinds, chosen by
the config key ``features``; both end as one word-count histogram per image (rows of ``X``, raw counts):

``sift_bow`` (CNMF, Liu et al. TPAMI 2012, section 7.2.4)
    "We first extract SIFT descriptors, and then generate codewords ... the number of SIFT descriptors
    is 555,292, and we also generate 500 codewords ... a 500-dimensional frequency histogram". The
    count (about 182 per image, not fixed) implies SIFT at detected keypoints, not a dense grid. We use
    OpenCV's DoG detector + descriptor on the greyscale image with ``contrast_threshold`` 0.09, which is
    OpenCV's scaling of Lowe's threshold 0.03 (OpenCV divides it by the 3 layers per octave); images
    whose longer side exceeds ``max_side`` (default 500, 204 of the 3044 images) are shrunk first. This
    gives 584,165 descriptors (OpenCV 5.0), 5% more than the paper's 555,292. Codebook: ``n_words`` = 500.

``rgb_bow`` (FNMF, Babaee et al. ICIP 2014, section 4.1)
    "rgb-Histograms are extracted locally from the images, then Bag-of-Words (BoW) model of the images
    are used", dimensionality 64. Our reading: 64 is the codebook size (as for their TerraSAR-X BoW, also
    64-d), and "rgb-Histogram" is the local colour descriptor of van de Sande et al.'s ColorDescriptor
    software (the concatenation of 1-D R, G and B histograms). Local patches of ``patch`` x ``patch``
    pixels on a dense grid with step ``stride`` (default 16 and 8), ``bins`` (default 15) bins per
    channel, so a 45-d descriptor per patch (each channel's histogram sums to 1); codebook 64 words.
    Greyscale JPEGs are decoded as three equal channels. The paper's 3379 images do not match the 3044
    of the 10 largest classes; we use the 3044.

Codebook (both kinds): ``MiniBatchKMeans`` (batch 4096, 3 inits, ``random_state=codebook_seed``) fitted on
``codebook_sample`` descriptors drawn uniformly without replacement (``default_rng(codebook_seed)``),
then every descriptor is assigned to its nearest word. The codebook seed is a config key (default 0),
*not* the run seed, so that every run of an experiment sees the same features.

Cache: ``data_dir/derived/caltech101_top10_<features>_<n_words>w_<key>.npz`` where ``<key>`` is the first
16 hex digits of the sha256 of the settings, the tar's sha256, :data:`FEATURE_VERSION` and the OpenCV
and scikit-learn versions. It holds ``counts`` (int32, 3044 x n_words), ``y``, ``paths``,
``settings`` and ``info`` (JSON: descriptor count, build time, versions). It is written to a temporary
file and moved into place with ``os.replace``; an unreadable cache file is rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import logging
import tarfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import cv2
import numpy as np
import sklearn
from sklearn.cluster import MiniBatchKMeans

from .fetch import CALTECH_TOP10_CLASSES, REGISTRY, fetch
from ..checks import POSITIVE, integer
from ..errors import ConfigError, DataError
from ..files import atomic_path

logger = logging.getLogger(__name__)

TAR_KEY = "caltech101/caltech101_top10.tar"
#: Bump when the feature code changes, so that old caches are not reused.
FEATURE_VERSION = 1
#: Settings per feature kind, with their defaults.
DEFAULTS: dict[str, dict[str, int | float | None]] = {
    "sift_bow": {"n_words": 500, "max_side": 500, "contrast_threshold": 0.09,
                 "codebook_sample": 200_000, "codebook_seed": 0},
    "rgb_bow": {"n_words": 64, "max_side": 500, "patch": 16, "stride": 8, "bins": 15,
                "codebook_sample": 200_000, "codebook_seed": 0},
}
#: Config keys of this loader, besides the common ``name``, ``loader`` and ``preprocess``.
KEYS = ("features",) + tuple(dict.fromkeys(k for d in DEFAULTS.values() for k in d))
_PROGRESS_EVERY = 500


def load(cfg: Mapping, data_dir: str | Path, mirror: str | Path | None,
         seed: int) -> tuple[np.ndarray, np.ndarray, dict]:
    """Load (building and caching on first use) the Caltech-101 top-10 bag-of-words features.

    Parameters
    ----------
    cfg : Mapping
        Dataset config: ``features`` (``sift_bow`` or ``rgb_bow``) and the settings of that kind (see
        :data:`DEFAULTS`; missing ones take the default).
    data_dir, mirror : str, Path or None
        Passed to :func:`src.data.fetch.fetch`; the cache lives in ``data_dir/derived``.
    seed : int
        Unused: the codebook uses ``codebook_seed`` so that the features do not change between runs.

    Returns
    -------
    X : ndarray, shape (3044, n_words), float64
        Word counts per image.
    y : ndarray, shape (3044,), int64
        Labels 0..9 in the order of :data:`src.data.fetch.CALTECH_TOP10_CLASSES`.
    meta : dict
        ``image_shape`` None, ``pixel_order`` None, ``class_names`` and ``max_value`` None (``scale01``
        then divides by the largest count in ``X``).
    """
    settings = feature_settings(cfg)
    tar_path = fetch(TAR_KEY, data_dir, mirror)
    counts, y = cached_features(tar_path, settings, Path(data_dir).expanduser() / "derived")
    meta = {"image_shape": None, "pixel_order": None, "class_names": CALTECH_TOP10_CLASSES, "max_value": None}
    return counts.astype(np.float64), y, meta


def feature_settings(cfg: Mapping) -> dict[str, str | int | float | None]:
    """Validate the feature settings of ``cfg`` and fill in defaults.

    Raises
    ------
    ConfigError
        Unknown ``features`` or a setting of the wrong type or range.
    """
    kind = cfg.get("features")
    if kind not in DEFAULTS:
        raise ConfigError(f"dataset.features={kind!r} is not one of {', '.join(DEFAULTS)}")
    settings: dict[str, str | int | float | None] = {"features": kind}
    for key, default in DEFAULTS[kind].items():
        value = cfg.get(key, default)
        if key == "contrast_threshold":
            ok = POSITIVE.test(value)
            value = float(value) if ok else value
        else:
            ok = (value is None and key == "max_side") or integer(0 if key == "codebook_seed" else 1).test(value)
            value = int(value) if ok and value is not None else value
        if not ok:
            raise ConfigError(f"dataset.{key}={value!r} is not valid for features={kind}")
        settings[key] = value
    if kind == "rgb_bow" and not (settings["patch"] <= 64 and settings["patch"] % settings["stride"] == 0):
        raise ConfigError(f"dataset.patch={settings['patch']} must be <= 64 and a multiple of "
                          f"dataset.stride={settings['stride']}")
    if kind == "rgb_bow" and settings["bins"] > 256:
        raise ConfigError(f"dataset.bins={settings['bins']} must be <= 256")
    if settings["n_words"] > settings["codebook_sample"]:
        raise ConfigError(f"dataset.codebook_sample={settings['codebook_sample']} is smaller than "
                          f"dataset.n_words={settings['n_words']}")
    return settings


def cache_file(derived_dir: str | Path, settings: Mapping) -> Path:
    """Return the cache path of the features with these settings (see the module docstring)."""
    key = {"settings": dict(settings), "tar": REGISTRY[TAR_KEY].hashes[0], "version": FEATURE_VERSION,
           "opencv": cv2.__version__, "sklearn": sklearn.__version__}
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    return Path(derived_dir) / f"caltech101_top10_{settings['features']}_{settings['n_words']}w_{digest}.npz"


def cached_features(tar_path: str | Path, settings: Mapping,
                    derived_dir: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(counts, y)`` from the cache, building and caching them if needed.

    Parameters
    ----------
    tar_path : str or Path
        The verified ``caltech101_top10.tar``.
    settings : Mapping
        Output of :func:`feature_settings`.
    derived_dir : str or Path
        Cache directory.

    Returns
    -------
    counts : ndarray, shape (n_images, n_words), int32
    y : ndarray, shape (n_images,), int64
    """
    path = cache_file(derived_dir, settings)
    settings_json = json.dumps(dict(settings), sort_keys=True)
    if path.is_file():
        try:
            with np.load(path, allow_pickle=False) as z:
                if str(z["settings"]) == settings_json:
                    logger.info("caltech101: cache hit %s", path)
                    return z["counts"], z["y"]
            logger.warning("caltech101: %s holds other settings; rebuilding it", path)
        except (OSError, ValueError, KeyError) as exc:
            logger.warning("caltech101: cannot read cache %s (%s); rebuilding it", path, exc)
    start = time.perf_counter()
    counts, y, paths, n_descriptors = build_features(tar_path, settings)
    seconds = time.perf_counter() - start
    info = {"n_descriptors": n_descriptors, "seconds": round(seconds, 1), "opencv": cv2.__version__,
            "sklearn": sklearn.__version__, "numpy": np.__version__, "feature_version": FEATURE_VERSION}
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        np.savez(f, counts=counts, y=y, paths=np.array(paths), settings=np.array(settings_json),
                 info=np.array(json.dumps(info)))
    logger.info("caltech101: built %s features %s in %.1f s (%d descriptors), cached at %s",
                settings["features"], counts.shape, seconds, n_descriptors, path)
    return counts, y


def build_features(tar_path: str | Path,
                   settings: Mapping) -> tuple[np.ndarray, np.ndarray, list[str], int]:
    """Compute the bag-of-words histograms (no caching).

    Returns
    -------
    counts : ndarray, shape (n_images, n_words), int32
        Number of the image's descriptors assigned to each word.
    y : ndarray, shape (n_images,), int64
    paths : list of str
        Tar member names, in row order.
    n_descriptors : int
        Total number of local descriptors.
    """
    kind = settings["features"]
    describe = _sift_describer(settings) if kind == "sift_bow" else _rgb_describer(settings)
    flag = cv2.IMREAD_GRAYSCALE if kind == "sift_bow" else cv2.IMREAD_COLOR
    descriptors, labels, paths = [], [], []
    for i, (name, label, image) in enumerate(_images(tar_path, flag)):
        descriptors.append(describe(_bounded(image, settings["max_side"])))
        labels.append(label)
        paths.append(name)
        if (i + 1) % _PROGRESS_EVERY == 0:
            logger.info("caltech101 %s: %d images described", kind, i + 1)
    owner = np.repeat(np.arange(len(descriptors)), [len(d) for d in descriptors])
    data = np.concatenate(descriptors)
    logger.info("caltech101 %s: %d images, %d descriptors of dimension %d; fitting %d words",
                kind, len(paths), len(data), data.shape[1], settings["n_words"])
    words = _quantize(data, settings)
    n_words = settings["n_words"]
    counts = np.bincount(owner * n_words + words, minlength=len(paths) * n_words)
    counts = counts.reshape(len(paths), n_words).astype(np.int32)
    if np.any(counts.sum(axis=1) == 0):
        logger.warning("caltech101: %d images have no descriptor (all-zero rows)",
                       int(np.sum(counts.sum(axis=1) == 0)))
    return counts, np.asarray(labels, dtype=np.int64), paths, int(len(data))


def _images(tar_path: str | Path, flag: int) -> Iterator[tuple[str, int, np.ndarray]]:
    """Yield ``(member name, label, decoded image)`` for each JPEG in the tar, in tar order."""
    with tarfile.open(tar_path) as tar:
        for member in tar:
            if not member.isfile():
                continue
            cls = member.name.split("/")[-2]
            if cls not in CALTECH_TOP10_CLASSES:
                raise DataError(f"caltech101: unexpected member {member.name} in {tar_path}")
            buf = np.frombuffer(tar.extractfile(member).read(), dtype=np.uint8)
            image = cv2.imdecode(buf, flag)
            if image is None:
                raise DataError(f"caltech101: cannot decode {member.name} in {tar_path}")
            yield member.name, CALTECH_TOP10_CLASSES.index(cls), image


def _bounded(image: np.ndarray, max_side: int | None) -> np.ndarray:
    """Shrink ``image`` (area interpolation) so that its longer side is at most ``max_side``."""
    height, width = image.shape[:2]
    if max_side is None or max(height, width) <= max_side:
        return image
    scale = max_side / max(height, width)
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    return cv2.resize(image, size, interpolation=cv2.INTER_AREA)


def _sift_describer(settings: Mapping):
    """Return ``f(grey image) -> (n_keypoints, 128) uint8`` SIFT descriptors at DoG keypoints."""
    sift = cv2.SIFT_create(contrastThreshold=settings["contrast_threshold"])

    def describe(image: np.ndarray) -> np.ndarray:
        _, desc = sift.detectAndCompute(image, None)
        if desc is None:
            return np.zeros((0, 128), dtype=np.uint8)
        # OpenCV's float SIFT descriptors hold integers 0..255, so uint8 storage is lossless.
        return np.clip(np.rint(desc), 0, 255).astype(np.uint8)

    return describe


def _rgb_describer(settings: Mapping):
    """Return ``f(BGR image) -> (n_patches, 3 * bins) uint16`` per-channel colour histograms of patches.

    Patches are ``patch`` x ``patch`` pixels with top-left corners on a grid of step ``stride`` (which
    divides ``patch``), row by row; the histograms of ``stride`` x ``stride`` blocks are counted once
    and summed over each patch's blocks.
    """
    patch, stride, bins = settings["patch"], settings["stride"], settings["bins"]
    span, n_feat = patch // stride, 3 * bins

    def describe(image: np.ndarray) -> np.ndarray:
        rows, cols = image.shape[0] // stride, image.shape[1] // stride
        rgb = image[: rows * stride, : cols * stride, ::-1].astype(np.int32)
        feat = (rgb * bins) // 256 + np.arange(3) * bins  # bin index per pixel and channel, R then G then B
        block = (np.arange(rows * stride) // stride)[:, None] * cols + np.arange(cols * stride) // stride
        counts = np.bincount((block[:, :, None] * n_feat + feat).ravel(), minlength=rows * cols * n_feat)
        integral = np.zeros((rows + 1, cols + 1, n_feat), dtype=np.int32)
        integral[1:, 1:] = counts.reshape(rows, cols, n_feat).cumsum(axis=0).cumsum(axis=1)
        hist = (integral[span:, span:] - integral[:-span, span:]
                - integral[span:, :-span] + integral[:-span, :-span])
        return hist.reshape(-1, n_feat).astype(np.uint16)

    return describe


def _quantize(data: np.ndarray, settings: Mapping) -> np.ndarray:
    """Fit the codebook on a seeded sample of ``data`` and return each row's word index."""
    seed = settings["codebook_seed"]
    scale = 1.0 / settings["patch"] ** 2 if settings["features"] == "rgb_bow" else 1.0
    n_sample = min(settings["codebook_sample"], len(data))
    if len(data) < settings["n_words"]:
        raise DataError(f"caltech101: only {len(data)} descriptors for {settings['n_words']} words")
    sample = np.random.default_rng(seed).choice(len(data), size=n_sample, replace=False)
    kmeans = MiniBatchKMeans(n_clusters=settings["n_words"], batch_size=4096, n_init=3, random_state=seed)
    kmeans.fit(data[np.sort(sample)].astype(np.float32) * np.float32(scale))
    chunk = 100_000
    return np.concatenate([kmeans.predict(data[i:i + chunk].astype(np.float32) * np.float32(scale))
                           for i in range(0, len(data), chunk)])

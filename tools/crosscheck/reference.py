"""Deng Cai's MATLAB reference code, fetched like a data file: a registry of paths and sha256, and pooch.

The cross-check runs 15 files of the public repository ZJULearning/MatlabFunc, pinned at one commit. The
project never copies them: :func:`fetch_reference` brings each file into ``data_dir/reference/<path>``
(``data/`` is git-ignored), checked against the sha256 in :data:`REFERENCE_FILES`, from

1. the directory in ``REPRO_REFERENCE_MIRROR``, if set (laid out like the repository:
   ``MatrixFactorization/GNMF.m``, ``Tools/constructW.m``, ...);
2. else ``<parent of REPRO_DATA_MIRROR>/reference/MatlabFunc`` (or ``.../reference``) when
   ``REPRO_DATA_MIRROR`` is set and that directory exists (CI sets ``REPRO_DATA_MIRROR=../shared/datasets``,
   so ``../shared/reference`` is found);
3. else the upstream URL :data:`UPSTREAM` + path.

A cached copy that matches its hash is used as is; one that does not is deleted and fetched again. Pooch
checks the hash of what it fetched before moving it into place, so a corrupted file is never kept.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from pathlib import Path

import pooch
import requests

from src.data.fetch import MIRROR_ENV, _http_download, _mirror_downloader
from src.errors import DataError
from src.files import make_readable

logger = logging.getLogger(__name__)

REFERENCE_MIRROR_ENV = "REPRO_REFERENCE_MIRROR"
COMMIT = "97504df0f597c1980ab76ddc0c9c5d669043c6c9"
UPSTREAM = f"https://raw.githubusercontent.com/ZJULearning/MatlabFunc/{COMMIT}/"

#: path in the repository -> sha256 of the file at :data:`COMMIT`.
REFERENCE_FILES: dict[str, str] = {
    "MatrixFactorization/GNMF.m": "7fb6b75fb0d58277d1ea22bf9827c46e58eaea490b6b3e3b607956565867b139",
    "MatrixFactorization/GNMF_Multi.m": "1ddd02fd83f8ac91fb8ba522e32a9939b3eed3adf6907cec7235bbac5ff36e75",
    "MatrixFactorization/GNMF_KL.m": "e7917e927783f60e8b4e95635932e1442ac6f693e0f131f22562af8ed2441925",
    "MatrixFactorization/GNMF_KL_Multi.m": "6d1846301b24f469d548590ab5d9f6b74cb8ac1154edb990e377bc4366db3cde",
    "MatrixFactorization/LCCF.m": "55b189a672425230800713df89d91f908a84c7d36efc704bc582904354ed6c16",
    "MatrixFactorization/LCCF_Multi.m": "66673b54af95f6a7567009a3e640411cf94529e4e8883cc251ff6292e09bcdba",
    "Tools/constructW.m": "51403e0d42295daf7ddb471b64d841f00add976e12b956e2ed198673911104ee",
    "Tools/EuDist2.m": "fd0f9008b93008fa9fef3bd940f37f7e24e4aaab92dde3648b0d3072335ecfad",
    "Tools/NormalizeFea.m": "2e5ba6875c7fbdd11237201654e8d61cbd0333d85a9f044ac05eef690acbd837",
    "Tools/MutualInfo.m": "84bc6ebc615835d605b09c3bd92218cc2977564281b070b1af130bfcd6960929",
    "Tools/bestMap.m": "a44e5d8cbddc0c773bf308ce0117819f53b58342ba98c17f4be0f615f011a9cc",
    "Tools/hungarian.m": "c7f42d4196429430c61174bc6f49183704daea67ece321a4b99be58b1030da76",
    "Tools/constructKernel.m": "2451c98b6e39431542af84bfa1bce136282375596a316b70752becce09ef6004",
    "Clustering/litekmeans.m": "2c694fcd807da46d62562bc1f1dcd4223b0889193d282e19f32eb391b7fa8484",
    "SubspaceLearning/SDA.m": "3596a47f4af00e3b7618b8ab5b447451cf907d17bf0ac689ebb48b3eb2ed9af3",
}


def reference_mirror() -> Path | None:
    """The local directory to copy the reference files from, or None to download them (see the module doc)."""
    explicit = os.environ.get(REFERENCE_MIRROR_ENV)
    if explicit:
        return Path(explicit).expanduser()
    data_mirror = os.environ.get(MIRROR_ENV)
    if data_mirror:
        shared = Path(data_mirror).expanduser().resolve().parent / "reference"
        for candidate in (shared / "MatlabFunc", shared):
            if (candidate / "MatrixFactorization").is_dir():
                return candidate
    return None


def fetch_reference(data_dir: str | Path, mirror: str | Path | None = None) -> Path:
    """Fetch the 15 reference files into ``data_dir/reference`` and return that directory.

    Parameters
    ----------
    data_dir : str or Path
        The project data directory (``data/``).
    mirror : str, Path or None
        Directory laid out like the repository; None: :func:`reference_mirror`.

    Raises
    ------
    DataError
        A file is missing from the mirror, fails its hash check or cannot be downloaded (one line).
    """
    root = Path(data_dir).expanduser().resolve() / "reference"
    mirror = Path(mirror).expanduser() if mirror else reference_mirror()
    for path, sha256 in REFERENCE_FILES.items():
        _fetch_one(path, sha256, root, mirror)
    return root


def _fetch_one(path: str, sha256: str, root: Path, mirror: Path | None) -> Path:
    target = root / path
    known = f"sha256:{sha256}"
    if target.is_file():
        if pooch.file_hash(str(target)) == sha256:
            return target
        logger.warning("%s: cached copy fails its hash check; fetching it again", target)
        target.unlink()
    if mirror is not None:
        source = mirror / path
        if not source.is_file():
            raise DataError(f"{path} is missing from the reference mirror {mirror}: check {REFERENCE_MIRROR_ENV} "
                            f"(or {MIRROR_ENV}, whose ../reference is used), or unset both to download it")
        url, downloader = source.resolve().as_uri(), _mirror_downloader(source)
    else:
        source, url, downloader = UPSTREAM + path, UPSTREAM + path, _http_download
    logger.info("%s: fetching from %s", path, source)
    target.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=".stage-", dir=target.parent))
    try:
        fetched = pooch.retrieve(url, known_hash=known, fname=target.name, path=stage, downloader=downloader)
        os.replace(fetched, target)
        make_readable(target)
    except ValueError as exc:  # pooch's hash mismatch
        raise DataError(f"{path} from {source} fails its sha256 check (expected {sha256}); not kept") from exc
    except (requests.exceptions.RequestException, OSError) as exc:
        raise DataError(f"{path}: could not fetch it from {source} ({type(exc).__name__}: {exc}); set "
                        f"{REFERENCE_MIRROR_ENV}=/path/to/MatlabFunc for an offline copy") from exc
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return target

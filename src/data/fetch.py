"""Registry of the raw data files and a hash-checked, cached ``fetch``.

Every raw file the project reads is listed in :data:`REGISTRY`, keyed by its path relative to the data
mirror (the mirror has the layout of ``/work/shared/datasets``, e.g. ``ORL_32x32.mat``,
``mnist/train-images-idx3-ubyte.gz``, ``caltech101/caltech101_top10.tar``). :func:`fetch` returns the
path of a verified copy under ``data_dir/raw/<key>``:

1. If a cached copy exists and matches one of the entry's accepted hashes, it is returned as is (a
   cache hit: nothing is copied or downloaded). A cached copy that matches none is deleted and fetched
   again.
2. Otherwise the file is obtained with :func:`pooch.retrieve` and a custom downloader: a plain copy from
   the mirror when one is set (argument ``mirror``, else the environment variable ``REPRO_DATA_MIRROR``),
   pooch's HTTP download from the upstream URL otherwise. Pooch writes to a temporary file, checks its
   hash and only then moves it into the cache, so a corrupted file is never kept.

Accepted hashes
---------------
Each entry holds a tuple of accepted ``"alg:hex"`` hashes, tried in order on the same fetched bytes
(the source is read once). Only one entry needs two:

* ``mnist/train-images-idx3-ubyte.gz``: the mirror's gz is a re-wrap (recompressed with Python's
  gzip; its decompressed bytes have the canonical raw md5 ``6bbc9ace...``) with sha256 ``db8f937d...``,
  while the upstream gz is the canonical file with md5 ``f68b3c2d...``. Either gz is accepted. The other
  three MNIST gz files are byte-canonical, so the mirror's sha256 holds for the upstream copy too.

Caltech-101
-----------
The legacy URL of ``101_ObjectCategories.tar.gz`` is dead and the mirror holds a derived file: a plain
USTAR tar of the 3044 JPEGs of the 10 largest classes (``Faces``, not ``Faces_easy``, no
``BACKGROUND_Google``). What is checked:

* from the mirror: the tar's sha256 (from the MANIFEST);
* from the network (untested here, no internet): the official archive ``caltech-101.zip`` from
  data.caltech.edu is downloaded (its own hash is not published, so it is only logged), the inner
  ``101_ObjectCategories.tar.gz`` is checked against the official md5 ``b224c739...``, the top-10
  images are written into a tar exactly as the mirror's was made (USTAR, mode 0644, uid/gid 0, empty
  owner names, mtime 0, classes in the order of :data:`CALTECH_TOP10_CLASSES`, file names sorted), and
  that tar must then pass the *same* sha256 as the mirror copy. Rebuilding the mirror tar from its own
  members this way reproduces its sha256 byte for byte (checked by a test), so a network build that
  passes is identical to the mirror file, and one that fails is rejected rather than trusted.

Where the data go
-----------------
``paths.data_dir`` (``conf/paths/default.yaml``) defaults to ``${default_data_dir:}``
(:func:`src.resolvers.default_data_dir`): ``data`` (``data/`` under the working directory) in a checkout, as the
checkout's ``.gitignore`` expects, and the per-user cache directory of the operating system
(``pooch.os_cache("repro-mf")``: ``~/.cache/repro-mf`` on Linux, or ``$XDG_CACHE_HOME/repro-mf``) for an
installed copy, so that the runs of an installed copy share one download cache whatever directory they
start from. A ``paths.data_dir=...`` given by the user always wins.

Progress
--------
A download from upstream shows a progress bar (tqdm, through pooch) when standard error is a terminal,
whatever the file's size: a person is watching, and the largest files (MNIST, the Caltech-101 archive)
take a while. Without a terminal (a log file, a pipe, a batch job) there is no bar, whose redrawn lines
would fill the log. The bar is erased when the download ends or fails, so that an error stays on a line
of its own.

Errors are :class:`src.errors.DataError` with a one-line message naming the file and what to do.
"""

from __future__ import annotations

import io
import logging
import os
import shutil
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pooch
import requests
from tqdm import tqdm

from ..errors import DataError, one_line
from ..files import make_readable

logger = logging.getLogger(__name__)

# pooch logs every download at INFO level through its own (non-hierarchical) logger; keep it to warnings.
pooch.get_logger().setLevel(logging.WARNING)

MIRROR_ENV = "REPRO_DATA_MIRROR"

#: The 10 largest Caltech-101 classes (without BACKGROUND_Google and Faces_easy), largest first; label
#: ``i`` (0-based) is ``CALTECH_TOP10_CLASSES[i]``. Counts: 800, 798, 435, 239, 200, 128, 123, 114, 107, 100.
CALTECH_TOP10_CLASSES = (
    "airplanes", "Motorbikes", "Faces", "watch", "Leopards",
    "bonsai", "car_side", "ketch", "chandelier", "hawksbill",
)
#: Official md5 of ``101_ObjectCategories.tar.gz`` (131740031 bytes).
CALTECH_TARBALL_MD5 = "b224c7392d521a49829488ab0f1120d9"

Downloader = Callable[[str, str, object], None]


@dataclass(frozen=True)
class RawFile:
    """One raw data file.

    Attributes
    ----------
    path : str
        Path relative to the mirror root; also the cache path under ``data_dir/raw``.
    hashes : tuple of str
        Accepted hashes, ``"alg:hex"`` (pooch syntax); a file matching any one of them is accepted.
    url : str or None
        Upstream URL; None if the file exists only in the data mirror.
    build : callable or None
        For derived files: a pooch-style downloader ``build(url, output_file, pooch)`` that downloads
        ``url`` and writes this file (its hash is then checked as usual). None: ``url`` is the file.
    """

    path: str
    hashes: tuple[str, ...]
    url: str | None
    build: Downloader | None = None


_CAI = "http://www.cad.zju.edu.cn/home/dengcai/Data"
_MNIST = "https://ossci-datasets.s3.amazonaws.com/mnist"  # same bytes as yann.lecun.com/exdb/mnist
_CALTECH_ZIP = "https://data.caltech.edu/records/mzrjq-6wc02/files/caltech-101.zip?download=1"


def _entries() -> dict[str, RawFile]:
    """Build :data:`REGISTRY` (a function so that ``_caltech_top10_from_zip`` is defined first)."""
    files = [
        RawFile("ORL_32x32.mat",
                ("sha256:c30cb53be2cab2da293eaeb35c1a7c16cad513fa14d0400ad5ed51f03e1ce7c8",),
                f"{_CAI}/ORL/ORL_32x32.mat"),
        RawFile("Yale_32x32.mat",
                ("sha256:beb3cc9f448c1ab786583c8f5429368c299843ee88263f9650ed463004ef7633",),
                f"{_CAI}/Yale/Yale_32x32.mat"),
        RawFile("COIL20.mat",
                ("sha256:2a35c105dbb327492b90389e55612bcbf39187bc7c408252239903e4ce7d6958",),
                f"{_CAI}/COIL20/COIL20.mat"),
        RawFile("extras/YaleB_32x32.mat",
                ("sha256:3fbbda4eb781b9bb28025189677b6727706e114eb0215bbfd718f1f4fcb54b99",),
                f"{_CAI}/YaleB/YaleB_32x32.mat"),
        RawFile("extras/PIE_2856_32x32.mat",  # a re-saved copy; no upstream file matches it byte for byte
                ("sha256:29417a240c7cfd1648078c0dab6fee74ac0b8da57e23aedd5549879e17937d82",),
                None),
        RawFile("mnist/train-images-idx3-ubyte.gz",
                ("sha256:db8f937d487057fb14a9f0fbe97f0bc8d311ab41b750d41e1ff37c43b9e55e19",  # mirror re-wrap
                 "md5:f68b3c2dcbeaaa9fbdd348bbdeb94873"),  # canonical upstream gz
                f"{_MNIST}/train-images-idx3-ubyte.gz"),
        RawFile("mnist/train-labels-idx1-ubyte.gz",
                ("sha256:3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",),
                f"{_MNIST}/train-labels-idx1-ubyte.gz"),
        RawFile("mnist/t10k-images-idx3-ubyte.gz",
                ("sha256:8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",),
                f"{_MNIST}/t10k-images-idx3-ubyte.gz"),
        RawFile("mnist/t10k-labels-idx1-ubyte.gz",
                ("sha256:f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",),
                f"{_MNIST}/t10k-labels-idx1-ubyte.gz"),
        RawFile("caltech101/caltech101_top10.tar",
                ("sha256:b3e56be2a7ec5cbfc7952904194fac40e5f558fe1606c4e0ca329e20272e439a",),
                _CALTECH_ZIP, build=_caltech_top10_from_zip),
        RawFile("caltech101/caltech101_top10_index.csv",  # generated for the mirror; no upstream
                ("sha256:c677486c23d7ce236b5507fe65829207cb6462f6077a446d0546ec3d8f26d426",),
                None),
    ]
    return {f.path: f for f in files}


def fetch(key: str, data_dir: str | Path, mirror: str | Path | None = None) -> Path:
    """Return the path of a hash-checked copy of a raw file, fetching it on first use.

    Parameters
    ----------
    key : str
        A key of :data:`REGISTRY` (the file's path relative to the mirror root).
    data_dir : str or Path
        Project data directory; the file is cached as ``data_dir/raw/<key>``.
    mirror : str, Path or None
        Root of a local data mirror laid out like ``/work/shared/datasets``. None or ``""``: use the
        environment variable ``REPRO_DATA_MIRROR``; if that is unset too, download from upstream.

    Returns
    -------
    Path
        The cached file, whose hash matches one of the entry's accepted hashes.

    Raises
    ------
    KeyError
        ``key`` is not in the registry (a programming error, not a user error).
    DataError
        The file is missing from the mirror, fails its hash check, or cannot be downloaded.
    """
    entry = REGISTRY[key]
    raw_dir = Path(data_dir).expanduser().resolve() / "raw"
    target = raw_dir / entry.path
    if target.is_file():
        matched = _matching_hash(target, entry.hashes)
        if matched is not None:
            logger.debug("%s: cache hit at %s", key, target)
            return _record(key, target, matched)
        logger.warning("%s: cached copy %s fails its hash check; deleting it and fetching it again", key, target)
        target.unlink(missing_ok=True)
    mirror = mirror or os.environ.get(MIRROR_ENV) or None
    if mirror is not None:
        src = Path(mirror).expanduser() / entry.path
        if not src.is_file():
            raise DataError(
                f"{entry.path} is missing from the data mirror {mirror} (looked for {src}): check "
                f"{MIRROR_ENV} / paths.mirror, or unset both to download it from upstream")
        source, url, downloader = str(src), src.resolve().as_uri(), _mirror_downloader(src)
    elif entry.url is None:
        raise DataError(
            f"{entry.path} is only available from the data mirror and no mirror is set: set "
            f"{MIRROR_ENV}=/path/to/datasets or paths.mirror=/path/to/datasets, or put the file at {target}")
    else:
        source, url, downloader = entry.url, entry.url, (entry.build or _http_download)
    logger.info("%s: fetching from %s", key, source)
    raw_dir.mkdir(parents=True, exist_ok=True)
    stage_dir = Path(tempfile.mkdtemp(prefix=".stage-", dir=raw_dir))
    try:
        path, matched = _retrieve_checked(entry, raw_dir, url, _FetchOnce(downloader, stage_dir / "data"), source)
        make_readable(path)  # pooch moves its 0600 temporary file into place
        return _record(key, path, matched)
    except (requests.exceptions.RequestException, OSError) as exc:
        if mirror is not None:
            raise DataError(f"{entry.path}: could not copy it from the mirror ({one_line(exc, 200)}): "
                            f"check {source} and that {raw_dir} is writable") from exc
        how = (f"place a copy of {entry.path} (from the data mirror) at {target}" if entry.build
               else f"download {entry.url} into {target}")
        raise DataError(
            f"{entry.path}: download from {entry.url} failed ({one_line(exc, 200)}) and no data mirror is set: "
            f"set {MIRROR_ENV}=/path/to/datasets or paths.mirror=/path/to/datasets, or {how}") from exc
    finally:
        shutil.rmtree(stage_dir, ignore_errors=True)


def _retrieve_checked(entry: RawFile, raw_dir: Path, url: str, once: _FetchOnce, source: str) -> tuple[Path, str]:
    """Run :func:`pooch.retrieve` once per accepted hash (same bytes each time) until one matches.

    Returns the cached file and the accepted hash it matched."""
    for known_hash in entry.hashes:
        try:
            path = pooch.retrieve(url, known_hash=known_hash, fname=entry.path, path=raw_dir,
                                  downloader=once)
        except ValueError:
            if not once.stage.is_file():  # not a hash mismatch: the data were never fetched
                raise
            continue
        logger.info("%s: verified (%s) and cached at %s", entry.path, known_hash.split(":")[0], path)
        return Path(path), known_hash
    got = ", ".join(f"{alg}:{pooch.file_hash(str(once.stage), alg=alg)}"
                    for alg in dict.fromkeys(h.split(":")[0] for h in entry.hashes))
    raise DataError(
        f"{entry.path} from {source} fails its hash check: expected {' or '.join(entry.hashes)}, got {got}; "
        f"the copy was not kept. The source file is corrupted or the wrong version: delete it and copy it "
        f"again / check the mirror")


class _FetchOnce:
    """Pooch downloader that fetches the source once into ``stage`` and replays it on later calls.

    ``fetch`` calls :func:`pooch.retrieve` once per accepted hash; this keeps a download (or a build)
    from being repeated for each hash tried.
    """

    def __init__(self, downloader: Downloader, stage: Path):
        self.downloader = downloader
        self.stage = stage

    def __call__(self, url: str, output_file: str, pooch_obj: object) -> None:
        if not self.stage.is_file():
            partial = self.stage.with_name("partial")
            self.downloader(url, str(partial), pooch_obj)
            os.replace(partial, self.stage)
        shutil.copyfile(self.stage, output_file)


def _copy_from_mirror(src: Path, dst: str) -> None:
    """Copy one file out of the mirror (a seam for tests that count copies)."""
    shutil.copyfile(src, dst)


def _mirror_downloader(src: Path) -> Downloader:
    """Return a pooch downloader that ignores the URL and copies ``src`` instead."""
    def download(url: str, output_file: str, pooch_obj: object) -> None:
        _copy_from_mirror(src, output_file)
    return download


class _DownloadBar(tqdm):
    """The progress bar of one download, erased when it closes (pooch's custom ``progressbar``).

    Pooch asks ``if progressbar:`` before it knows the file's size; a tqdm bar's truth value is its size
    (an error while that is unknown), so this bar is always true.
    """

    def __bool__(self) -> bool:
        return True


def _progress_bar(url: str) -> _DownloadBar | None:
    """A progress bar for downloading ``url`` when standard error is a terminal, else None (see the module
    docstring)."""
    if not sys.stderr.isatty():
        return None
    name = url.split("?")[0].rstrip("/").rpartition("/")[2]
    return _DownloadBar(desc=name, unit="B", unit_scale=True, unit_divisor=1024, leave=False, file=sys.stderr,
                        dynamic_ncols=True)


def _http_download(url: str, output_file: str, pooch_obj: object) -> None:
    """Download ``url`` with pooch's HTTP downloader (60 s timeout per request), with a progress bar on a
    terminal; the bar is closed (erased) also when the download fails."""
    bar = _progress_bar(url)
    try:
        pooch.HTTPDownloader(progressbar=False if bar is None else bar, timeout=60)(url, str(output_file), pooch_obj)
    finally:
        if bar is not None:
            bar.close()


def _caltech_top10_from_zip(url: str, output_file: str, pooch_obj: object) -> None:
    """Download the official ``caltech-101.zip`` and write the top-10 tar into ``output_file``.

    The zip itself has no published hash (its sha256 is logged); the inner
    ``101_ObjectCategories.tar.gz`` must match :data:`CALTECH_TARBALL_MD5`, and ``fetch`` then checks the
    written tar against the registry's sha256.
    """
    with tempfile.TemporaryDirectory(dir=Path(output_file).parent) as tmp:
        zip_path = Path(tmp) / "caltech-101.zip"
        _http_download(url, str(zip_path), pooch_obj)
        logger.info("caltech-101.zip downloaded, sha256 %s (not pinned)", pooch.file_hash(str(zip_path)))
        tgz = Path(tmp) / "101_ObjectCategories.tar.gz"
        try:
            with zipfile.ZipFile(zip_path) as zf:
                inner = [n for n in zf.namelist() if n.endswith("101_ObjectCategories.tar.gz")]
                if len(inner) != 1:
                    raise DataError(f"caltech101: {url} does not hold exactly one 101_ObjectCategories.tar.gz")
                with zf.open(inner[0]) as src, open(tgz, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
        except zipfile.BadZipFile as exc:
            raise DataError(f"caltech101: the download from {url} is not a valid zip ({exc})") from exc
        got = pooch.file_hash(str(tgz), alg="md5")
        if got != CALTECH_TARBALL_MD5:
            raise DataError(f"caltech101: 101_ObjectCategories.tar.gz from {url} has md5 {got}, expected "
                            f"{CALTECH_TARBALL_MD5}: the archive changed; use the data mirror instead")
        try:
            write_top10_tar(tgz, output_file)
        except (tarfile.TarError, EOFError) as exc:
            raise DataError(f"caltech101: cannot read 101_ObjectCategories.tar.gz ({one_line(exc, 200)})") from exc


def write_top10_tar(source_tar: str | Path, output_file: str | Path) -> int:
    """Write the 10 largest Caltech-101 classes from an image tarball into a canonical plain tar.

    Parameters
    ----------
    source_tar : str or Path
        A tar (any compression tarfile reads) holding ``.../101_ObjectCategories/<class>/<image>.jpg``.
    output_file : str or Path
        Where to write the USTAR tar with members ``101_ObjectCategories/<class>/<image>.jpg`` in class
        order (:data:`CALTECH_TOP10_CLASSES`), then file name, with mode 0644, uid/gid 0, empty owner
        names and mtime 0 (the layout of the mirror's ``caltech101_top10.tar``).

    Returns
    -------
    int
        The number of images written.
    """
    images: dict[tuple[int, str], bytes] = {}
    with tarfile.open(source_tar, "r:*") as src:
        for member in src:
            parts = member.name.split("/")
            if (not member.isfile() or len(parts) < 3 or parts[-3] != "101_ObjectCategories"
                    or parts[-2] not in CALTECH_TOP10_CLASSES or not parts[-1].endswith(".jpg")):
                continue
            name = "/".join(parts[-3:])
            images[(CALTECH_TOP10_CLASSES.index(parts[-2]), name)] = src.extractfile(member).read()
    with tarfile.open(output_file, "w", format=tarfile.USTAR_FORMAT) as out:
        for (_, name), data in sorted(images.items()):
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            out.addfile(info, io.BytesIO(data))
    return len(images)


_RECORDING: ContextVar[dict | None] = ContextVar("data_files", default=None)


@contextmanager
def recording_files() -> Iterator[dict]:
    """The raw files fetched or found in the cache inside the block, ``{key: {"file", "sha256", "path"}}``.

    :func:`src.data.load_dataset` wraps its loader in it and keeps the files on the :class:`~src.data.Dataset`
    it returns (``files``), where provenance reads them: the record belongs to the data set, not to the
    process, so a worker that loads one data set after another records each one's own files. Outside such a
    block nothing is recorded.
    """
    files: dict = {}
    token = _RECORDING.set(files)
    try:
        yield files
    finally:
        _RECORDING.reset(token)


def _record(key: str, path: Path, matched: str) -> Path:
    """Note that the loader in progress used the raw file ``key`` (see :func:`recording_files`); return ``path``."""
    files = _RECORDING.get()
    if files is not None:
        alg, _, digest = matched.partition(":")
        sha256 = digest.lower() if alg == "sha256" else pooch.file_hash(str(path), alg="sha256")
        files[key] = {"file": key, "sha256": sha256, "path": str(path)}
    return Path(path)


def record_user_file(path: Path, sha256: str) -> None:
    """Note that the loader in progress read a user's own data file (outside :data:`REGISTRY`), under its
    absolute path and with the sha256 the loader computed."""
    _record(str(path), Path(path), f"sha256:{sha256}")


def _matching_hash(path: Path, hashes: tuple[str, ...]) -> str | None:
    """Return the first of ``hashes`` that ``path`` matches, or None."""
    for known_hash in hashes:
        alg, _, digest = known_hash.partition(":")
        if pooch.file_hash(str(path), alg=alg) == digest.lower():
            return known_hash
    return None


#: All raw files, keyed by their path in the mirror (see :class:`RawFile`).
REGISTRY: dict[str, RawFile] = _entries()

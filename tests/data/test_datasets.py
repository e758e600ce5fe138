"""Tests of the data layer (src.data): loaders, preprocessing, the hash-checked fetch and Caltech features.

The mirror comes from the environment variable REPRO_DATA_MIRROR (default: ../shared/datasets next to
the repo). Nothing here touches the network: the HTTP downloader is monkeypatched where it would be used.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import shutil
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pooch
import pytest
import requests
from omegaconf import OmegaConf

import src.data.caltech as caltech
import src.data.fetch as fetch_mod
from src.data import DATASETS, PREPROCESS, Dataset, as_images, load_dataset
from src.data.fetch import CALTECH_TOP10_CLASSES, REGISTRY, RawFile, fetch, write_top10_tar
from src.errors import ConfigError, DataError

REPO = Path(__file__).resolve().parents[2]
CONF = REPO / "conf" / "dataset"
CALTECH_COUNTS = [800, 798, 435, 239, 200, 128, 123, 114, 107, 100]


@pytest.fixture(scope="module")
def mirror() -> Path:
    """The data mirror (REPRO_DATA_MIRROR, else ../shared/datasets)."""
    path = Path(os.environ.get("REPRO_DATA_MIRROR", REPO.parent / "shared" / "datasets"))
    if not (path / "ORL_32x32.mat").is_file():
        pytest.skip(f"no data mirror at {path}")
    return path


@pytest.fixture(scope="module")
def shared_dir(tmp_path_factory) -> Path:
    """A data_dir shared by the loader tests of this module (each file is fetched once)."""
    return tmp_path_factory.mktemp("data")


def _cfg(**kw) -> dict:
    cfg = {"name": "test", "preprocess": "none"}
    cfg.update(kw)
    return cfg


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --------------------------------------------------------------------------------------- Deng Cai files
@pytest.mark.parametrize("file, n, k, top", [("ORL_32x32.mat", 400, 40, 255), ("Yale_32x32.mat", 165, 15, 255),
                                             ("COIL20.mat", 1440, 20, 1)])
def test_deng_cai_shapes_labels_ranges(mirror, shared_dir, file, n, k, top):
    ds = load_dataset(_cfg(loader="deng_cai", file=file), shared_dir, mirror, seed=0)
    assert isinstance(ds, Dataset)
    assert ds.X.shape == (n, 1024) and ds.X.dtype == np.float64
    assert ds.y.shape == (n,) and ds.y.dtype == np.int64
    assert np.array_equal(np.bincount(ds.y), np.full(k, n // k))  # 0-based, consecutive, balanced
    assert ds.n_classes == k
    assert ds.X.min() >= 0 and ds.X.max() <= top
    assert ds.image_shape == (32, 32) and ds.pixel_order == "F" and ds.class_names is None
    if top == 255:
        assert np.array_equal(ds.X, np.round(ds.X))


@pytest.mark.parametrize("file", ["ORL_32x32.mat", "COIL20.mat"])
def test_preprocess_options(mirror, shared_dir, file):
    raw = load_dataset(_cfg(loader="deng_cai", file=file), shared_dir, mirror, seed=0).X
    unit = load_dataset(_cfg(loader="deng_cai", file=file, preprocess="unit_norm"), shared_dir, mirror, 0).X
    scaled = load_dataset(_cfg(loader="deng_cai", file=file, preprocess="scale01"), shared_dir, mirror, 0).X
    np.testing.assert_allclose(np.linalg.norm(unit, axis=1), 1.0)
    np.testing.assert_allclose(unit * np.linalg.norm(raw, axis=1, keepdims=True), raw)
    assert scaled.min() >= 0 and scaled.max() <= 1
    np.testing.assert_allclose(scaled, raw / (255.0 if file.startswith("ORL") else 1.0))


def test_unit_norm_keeps_zero_rows():
    from src.data import _preprocess
    X = np.array([[3.0, 4.0], [0.0, 0.0]])
    np.testing.assert_allclose(_preprocess(X, "unit_norm", None), [[0.6, 0.8], [0.0, 0.0]])
    np.testing.assert_allclose(_preprocess(np.array([[2.0, 8.0]]), "scale01", None), [[0.25, 1.0]])


def test_as_images_orientation(mirror, shared_dir):
    ds = load_dataset(_cfg(loader="deng_cai", file="ORL_32x32.mat", preprocess="scale01"), shared_dir, mirror, 0)
    images = as_images(ds)
    assert images.shape == (400, 32, 32)
    for i in (0, 123, 399):
        assert np.array_equal(images[i], ds.X[i].reshape(32, 32, order="F"))
        assert np.array_equal(images[i], ds.X[i].reshape(32, 32).T)
    mean = images.mean(axis=0)
    # An upright frontal face is mirror-symmetric left-right, much less so top-bottom ...
    assert np.abs(mean - mean[:, ::-1]).mean() < 0.5 * np.abs(mean - mean[::-1, :]).mean()
    # ... and, in ORL's crops, the forehead (top rows) is brighter than the eye band below it.
    assert mean[0:4, 8:24].mean() > mean[6:10, 8:24].mean() + 0.1


def test_as_images_rejects_bow():
    ds = Dataset("bow", np.ones((2, 3)), np.zeros(2, dtype=np.int64), None, None)
    with pytest.raises(ValueError, match="image shape"):
        as_images(ds)


# ------------------------------------------------------------------------------------------------ MNIST
@pytest.mark.integration  # reads all of MNIST-70k: ~2 s
def test_mnist_splits(mirror, shared_dir):
    test = load_dataset(_cfg(loader="mnist", split="test"), shared_dir, mirror, 0)
    assert test.X.shape == (10000, 784) and test.X.max() == 255 and test.X.min() == 0
    assert np.bincount(test.y).tolist() == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
    assert test.image_shape == (28, 28) and test.pixel_order == "C"
    assert test.class_names == tuple("0123456789")
    full = load_dataset(_cfg(loader="mnist", name="mnist"), shared_dir, mirror, 0)
    assert full.X.shape == (70000, 784)
    assert np.array_equal(full.y[60000:], test.y) and np.array_equal(full.X[60000:], test.X)
    assert np.bincount(full.y[:60000])[0] == 5923
    assert np.array_equal(as_images(test)[5], test.X[5].reshape(28, 28))


def test_mnist_subsample_reproducible(mirror, shared_dir):
    cfg = _cfg(loader="mnist", split="all", subsample=1000)
    a = load_dataset(cfg, shared_dir, mirror, seed=7)
    b = load_dataset(cfg, shared_dir, mirror, seed=7)
    c = load_dataset(cfg, shared_dir, mirror, seed=8)
    assert a.X.shape == (1000, 784) and a.n_classes == 10
    assert np.array_equal(a.X, b.X) and np.array_equal(a.y, b.y)
    assert not np.array_equal(a.X, c.X)


@pytest.mark.parametrize("bad", [0, -5, 70001, 1.5, "1000", True])
def test_mnist_bad_subsample(mirror, shared_dir, bad):
    with pytest.raises(ConfigError, match="dataset.subsample"):
        load_dataset(_cfg(loader="mnist", subsample=bad), shared_dir, mirror, 0)


def test_read_idx_rejects_bad_header(tmp_path):
    from src.data.mnist import read_idx
    path = tmp_path / "bad.gz"
    path.write_bytes(gzip.compress(b"\x00\x00\x08\x03" + b"\x00\x00\x00\x02" * 3 + b"\x00" * 5))
    with pytest.raises(DataError, match="bad.gz"):
        read_idx(path, 3)  # header promises 8 bytes of data, the file holds 5


# ----------------------------------------------------------------------------------------- config checks
def test_bad_preprocess_names_the_key(mirror, tmp_path):
    with pytest.raises(ConfigError, match=r"dataset\.preprocess='foo' is not one of none, scale01, unit_norm"):
        load_dataset(_cfg(loader="deng_cai", file="ORL_32x32.mat", preprocess="foo"), tmp_path, mirror, 0)


@pytest.mark.parametrize("cfg, key", [(_cfg(loader="nope"), "dataset.loader"),
                                      (_cfg(loader="deng_cai", file="nope.mat"), "dataset.file"),
                                      (_cfg(loader="mnist", split="val"), "dataset.split"),
                                      (_cfg(loader="caltech101", features="hog"), "dataset.features"),
                                      (_cfg(loader="caltech101", features="sift_bow", n_words=0), "dataset.n_words"),
                                      (_cfg(loader="caltech101", features="rgb_bow", patch=12, stride=8),
                                       "dataset.patch")])
def test_bad_config_values(mirror, tmp_path, cfg, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_dataset(cfg, tmp_path, mirror, 0)


def test_shipped_configs_are_valid():
    names = sorted(p.stem for p in CONF.glob("*.yaml") if p.stem != "file")  # a user's own file: test_user_file
    assert set(names) == {"caltech101", "caltech101_rgb", "coil20", "mnist", "mnist10k", "mnist1000", "orl", "yale"}
    for name in names:
        cfg = OmegaConf.load(CONF / f"{name}.yaml")
        assert cfg["name"] == name and cfg["loader"] in DATASETS and cfg["preprocess"] == "unit_norm"
        assert cfg["preprocess"] in PREPROCESS
        if cfg["loader"] == "caltech101":
            settings = caltech.feature_settings(cfg)
            assert set(cfg.keys()) - {"name", "loader", "preprocess"} == set(settings)
    assert OmegaConf.load(CONF / "mnist1000.yaml")["subsample"] == 1000
    assert OmegaConf.load(CONF / "caltech101.yaml")["n_words"] == 500
    assert OmegaConf.load(CONF / "caltech101_rgb.yaml")["n_words"] == 64


# ------------------------------------------------------------------------------------------------- fetch
def _count_copies(monkeypatch) -> list:
    calls = []
    real = fetch_mod._copy_from_mirror

    def counting(src, dst):
        calls.append(src)
        real(src, dst)

    monkeypatch.setattr(fetch_mod, "_copy_from_mirror", counting)
    return calls


def test_fetch_from_mirror_caches(mirror, tmp_path, monkeypatch):
    calls = _count_copies(monkeypatch)
    first = fetch("ORL_32x32.mat", tmp_path, mirror)
    assert first == (tmp_path / "raw" / "ORL_32x32.mat").resolve()
    assert _sha256(first) == REGISTRY["ORL_32x32.mat"].hashes[0].split(":")[1]
    second = fetch("ORL_32x32.mat", tmp_path, mirror)
    assert second == first and len(calls) == 1  # the second call is a cache hit
    assert sorted(p.name for p in (tmp_path / "raw").iterdir()) == ["ORL_32x32.mat"]  # no staging left over


def test_fetch_mirror_from_env(mirror, tmp_path, monkeypatch):
    monkeypatch.setenv("REPRO_DATA_MIRROR", str(mirror))
    assert fetch("mnist/t10k-labels-idx1-ubyte.gz", tmp_path, None).is_file()


def test_corrupted_mirror_file_is_rejected(mirror, tmp_path):
    bad_mirror = tmp_path / "mirror"
    bad_mirror.mkdir()
    data = (mirror / "ORL_32x32.mat").read_bytes()
    (bad_mirror / "ORL_32x32.mat").write_bytes(data[: len(data) // 2])
    with pytest.raises(DataError, match="ORL_32x32.mat") as info:
        fetch("ORL_32x32.mat", tmp_path / "data", bad_mirror)
    message = str(info.value)
    assert "\n" not in message and "c30cb53b" in message and "hash" in message
    assert not (tmp_path / "data" / "raw" / "ORL_32x32.mat").exists()  # never accepted
    assert [p.name for p in (tmp_path / "data" / "raw").iterdir()] == []


def test_corrupted_cache_is_refetched(mirror, tmp_path):
    cached = tmp_path / "raw" / "Yale_32x32.mat"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"not a mat file")
    path = fetch("Yale_32x32.mat", tmp_path, mirror)
    assert path == cached.resolve() and _sha256(path) == REGISTRY["Yale_32x32.mat"].hashes[0].split(":")[1]


def test_missing_in_mirror(tmp_path):
    (tmp_path / "mirror").mkdir()
    with pytest.raises(DataError, match=r"COIL20\.mat is missing from the data mirror"):
        fetch("COIL20.mat", tmp_path / "data", tmp_path / "mirror")


def test_no_mirror_no_network(tmp_path, monkeypatch):
    def offline(self, url, output_file, pooch_obj, check_only=False):
        raise requests.exceptions.ConnectionError(f"Failed to resolve host for {url}")

    monkeypatch.setattr(pooch.HTTPDownloader, "__call__", offline)
    monkeypatch.delenv("REPRO_DATA_MIRROR", raising=False)
    with pytest.raises(DataError) as info:
        fetch("ORL_32x32.mat", tmp_path, None)
    message = str(info.value)
    assert "\n" not in message and "ORL_32x32.mat" in message
    assert "REPRO_DATA_MIRROR=" in message and "paths.mirror=" in message
    assert REGISTRY["ORL_32x32.mat"].url in message and "ConnectionError" in message
    with pytest.raises(DataError, match="only available from the data mirror"):
        fetch("caltech101/caltech101_top10_index.csv", tmp_path, None)


def test_each_accepted_hash_is_tried_on_one_copy(tmp_path, monkeypatch):
    (tmp_path / "mirror").mkdir()
    payload = b"canonical bytes"
    (tmp_path / "mirror" / "x.bin").write_bytes(payload)
    entry = RawFile("x.bin", ("sha256:" + "0" * 64, "md5:" + hashlib.md5(payload).hexdigest()), None)
    monkeypatch.setitem(REGISTRY, "x.bin", entry)
    calls = _count_copies(monkeypatch)
    path = fetch("x.bin", tmp_path / "data", tmp_path / "mirror")
    assert path.read_bytes() == payload and len(calls) == 1  # first hash fails, second passes, one copy
    assert fetch("x.bin", tmp_path / "data", tmp_path / "mirror") == path and len(calls) == 1


def test_mnist_train_images_accepts_both_gz():
    hashes = REGISTRY["mnist/train-images-idx3-ubyte.gz"].hashes
    assert hashes == ("sha256:db8f937d487057fb14a9f0fbe97f0bc8d311ab41b750d41e1ff37c43b9e55e19",
                      "md5:f68b3c2dcbeaaa9fbdd348bbdeb94873")


# --------------------------------------------------------------------------------------- Caltech-101 tar
def _fake_upstream_tgz(mirror: Path, path: Path) -> None:
    """A 101_ObjectCategories.tar.gz-like archive: the mirror's JPEGs, other metadata and order, decoys."""
    with tarfile.open(mirror / "caltech101" / "caltech101_top10.tar") as src:
        members = [(m.name, src.extractfile(m).read()) for m in src]
    extras = [("101_ObjectCategories/BACKGROUND_Google/tmp", b"x"),
              ("101_ObjectCategories/Faces_easy/image_0001.jpg", members[0][1])]
    with tarfile.open(path, "w:gz", compresslevel=1) as out:
        for name, data in reversed(members + extras):
            info = tarfile.TarInfo("caltech-101/" + name)
            info.size, info.mtime, info.uid, info.uname = len(data), 1234567890, 1000, "someone"
            out.addfile(info, io.BytesIO(data))


@pytest.mark.integration  # builds and re-reads a tar of the mirror: ~3 s
def test_network_path_rebuilds_the_mirror_tar(mirror, tmp_path, monkeypatch):
    """The zip -> tar.gz (md5) -> top-10 tar path, offline: the result must pass the mirror's sha256."""
    tgz = tmp_path / "101_ObjectCategories.tar.gz"
    _fake_upstream_tgz(mirror, tgz)
    zip_path = tmp_path / "caltech-101.zip"
    with zipfile.ZipFile(zip_path, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.write(tgz, "caltech-101/101_ObjectCategories.tar.gz")
    monkeypatch.setattr(fetch_mod, "_http_download", lambda url, out, p: shutil.copyfile(zip_path, out))
    monkeypatch.setattr(fetch_mod, "CALTECH_TARBALL_MD5", hashlib.md5(tgz.read_bytes()).hexdigest())
    monkeypatch.delenv("REPRO_DATA_MIRROR", raising=False)
    path = fetch("caltech101/caltech101_top10.tar", tmp_path / "data", None)
    assert _sha256(path) == REGISTRY["caltech101/caltech101_top10.tar"].hashes[0].split(":")[1]
    monkeypatch.setattr(fetch_mod, "CALTECH_TARBALL_MD5", "0" * 32)  # a changed upstream archive is refused
    with pytest.raises(DataError, match="md5"):
        fetch("caltech101/caltech101_top10.tar", tmp_path / "other", None)


def test_rgb_descriptor_matches_naive_histograms():
    describe = caltech._rgb_describer({"patch": 16, "stride": 8, "bins": 15})
    image = np.random.default_rng(0).integers(0, 256, size=(41, 57, 3), dtype=np.uint8)
    got = describe(image)
    rgb = image[:, :, ::-1].astype(int)
    want = [np.concatenate([np.bincount((rgb[t:t + 16, s:s + 16, c] * 15 // 256).ravel(), minlength=15)
                            for c in range(3)])
            for t in range(0, 41 - 16 + 1, 8) for s in range(0, 57 - 16 + 1, 8)]
    assert np.array_equal(got, np.array(want))


@pytest.mark.parametrize("features", ["sift_bow", "rgb_bow"])
def test_caltech_features_small_tar(mirror, tmp_path, monkeypatch, features):
    """The full feature pipeline and its cache on 3 images per class (fast)."""
    small = tmp_path / "small.tar"
    with tarfile.open(mirror / "caltech101" / "caltech101_top10.tar") as src, tarfile.open(small, "w") as out:
        seen: dict[str, int] = {}
        for member in src:
            cls = member.name.split("/")[1]
            if seen.get(cls, 0) < 3:
                seen[cls] = seen.get(cls, 0) + 1
                out.addfile(member, src.extractfile(member))
    settings = caltech.feature_settings({"features": features, "n_words": 8, "codebook_sample": 5000})
    counts, y = caltech.cached_features(small, settings, tmp_path / "derived")
    assert counts.shape == (30, 8) and np.array_equal(np.bincount(y), [3] * 10)
    assert counts.min() >= 0 and np.all(counts.sum(axis=1) > 0)
    cache = caltech.cache_file(tmp_path / "derived", settings)
    assert [p.name for p in (tmp_path / "derived").iterdir()] == [cache.name]  # no temp file left
    monkeypatch.setattr(caltech, "build_features", lambda *a: pytest.fail("cache miss"))
    again, y_again = caltech.cached_features(small, settings, tmp_path / "derived")
    assert np.array_equal(again, counts) and np.array_equal(y_again, y)
    other = caltech.feature_settings({"features": features, "n_words": 8, "codebook_sample": 5000,
                                      "codebook_seed": 1})
    assert caltech.cache_file(tmp_path / "derived", other) != cache


@pytest.mark.slow
@pytest.mark.parametrize("name, n_words", [("caltech101", 500), ("caltech101_rgb", 64)])
def test_caltech_full_features_and_cache(mirror, tmp_path, monkeypatch, name, n_words):
    cfg = OmegaConf.load(CONF / f"{name}.yaml")
    cfg.preprocess = "none"
    ds = load_dataset(cfg, tmp_path, mirror, seed=0)
    assert ds.X.shape == (3044, n_words) and ds.image_shape is None
    assert np.bincount(ds.y).tolist() == CALTECH_COUNTS and ds.class_names == CALTECH_TOP10_CLASSES
    assert np.array_equal(ds.X, np.round(ds.X)) and np.all(ds.X.sum(axis=1) > 0)
    assert len(list((tmp_path / "derived").glob("caltech101_top10_*.npz"))) == 1
    monkeypatch.setattr(caltech, "build_features", lambda *a: pytest.fail("cache miss"))
    again = load_dataset(cfg, tmp_path, mirror, seed=1)
    assert np.array_equal(again.X, ds.X) and np.array_equal(again.y, ds.y)

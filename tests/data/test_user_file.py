"""src.data.user_file: a user's own .npz, .mat or .csv file as a data set (``dataset=file dataset.path=...``).

The two command-line runs on files (:data:`COMMANDS`) start on the other core as soon as the session's tests are
known (tests/background.py); their tests check what they wrote."""

import hashlib
import json
import logging
from pathlib import Path

import background
import numpy as np
import pandas as pd
import pytest
import scipy.io
import scipy.sparse
from hydra.core.hydra_config import HydraConfig
from omegaconf import OmegaConf

from src.data import load_dataset, pin_user_file, user_file
from src.errors import ConfigError, DataError

REPO = Path(__file__).resolve().parents[2]
CONF = REPO / "conf"
ORIGINAL = np.array([30, 10, 20])  # the file's labels, class by class; sorted: 10 -> 0, 20 -> 1, 30 -> 2


def make_blobs():
    """3 classes x 5 samples of nonnegative data (6 features), labels 30, 10, 20, rows shuffled."""
    rng = np.random.default_rng(7)
    X = np.concatenate([rng.random((5, 6)) + 3 * np.eye(6)[c] for c in range(3)])
    y = np.repeat(ORIGINAL, 5)
    order = rng.permutation(15)
    return X[order], y[order]


@pytest.fixture
def blobs():
    return make_blobs()


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def config(path, **keys):
    """The dataset config of conf/dataset/file.yaml with ``path`` and other keys set."""
    cfg = OmegaConf.load(CONF / "dataset" / "file.yaml")
    cfg.path = str(path)
    for key, value in keys.items():
        cfg[key] = value
    return cfg


def load(path, **keys):
    return load_dataset(config(path, **keys), "unused-data-dir", None, 0)


def write(tmp_path, fmt, X, y, name="mine"):
    path = tmp_path / f"{name}.{fmt}"
    if fmt == "npz":
        np.savez(path, X=X, y=y)
    elif fmt == "mat":  # Deng Cai's layout: fea (n x m), gnd (n x 1, double)
        scipy.io.savemat(path, {"fea": X, "gnd": np.asarray(y, dtype=float).reshape(-1, 1)})
    else:  # a header line, labels in the last column
        lines = [",".join(f"f{j}" for j in range(X.shape[1])) + ",label"]
        lines += [",".join(repr(float(v)) for v in row) + f",{label}" for row, label in zip(X, y)]
        path.write_text("\n".join(lines) + "\n")
    return path


def one_line_error(kind, match, path, **keys):
    with pytest.raises(kind) as error:
        load(path, **keys)
    message = str(error.value)
    assert "\n" not in message and match in message, message
    return message


@pytest.mark.parametrize("fmt", ["npz", "mat", "csv"])
def test_each_format_loads_samples_labels_and_the_original_label_names(tmp_path, blobs, fmt):
    X, y = blobs
    ds = load(write(tmp_path, fmt, X, y))
    assert ds.name == "mine"  # the file's stem
    assert ds.X.dtype == np.float64 and ds.y.dtype == np.int64
    np.testing.assert_allclose(ds.X, X, rtol=1e-12)  # preprocess none by default: the values as given
    np.testing.assert_array_equal(ds.y, np.searchsorted([10, 20, 30], y))
    assert ds.class_names == ("10", "20", "30") and ds.n_classes == 3
    assert ds.image_shape is None and ds.pixel_order is None


def test_the_load_says_the_classes_and_counts_the_unknown_mark_apart(tmp_path, blobs, caplog):
    """A partly labelled file (-1 unknown, as python -m src.cluster reads it): its -1 is no class in what the
    load says, and a file of classes alone is said as before."""
    X, y = blobs
    partial = np.where(np.arange(15) % 3 == 0, -1, y)  # 5 of 15 unknown
    with caplog.at_level(logging.INFO, logger="src.data"):
        ds = load(write(tmp_path, "npz", X, partial, name="partial"))
        load(write(tmp_path, "npz", X, y))
    said = [r.getMessage() for r in caplog.records]
    assert ds.class_names == ("-1", "10", "20", "30")  # the loader keeps the mark; the reader unmarks it
    assert sum("15 samples x 6 features, 3 classes, 5 samples unknown (-1) (sha256 " in line for line in said) == 1
    assert sum("X (15, 6), 3 classes, 5 samples unknown (-1), preprocess" in line for line in said) == 1
    assert sum("15 samples x 6 features, 3 classes (sha256 " in line for line in said) == 1
    assert sum("X (15, 6), 3 classes, preprocess" in line for line in said) == 1
    assert user_file.classes_said(np.array([0, 2, 1, 2]), None) == "3 classes"  # a loader that names none


def test_the_default_names_fall_back_from_deng_cai_to_x_and_y_and_can_be_set(tmp_path, blobs):
    X, y = blobs
    scipy.io.savemat(tmp_path / "python.mat", {"X": X, "y": y})  # a row vector y (1 x n)
    np.savez(tmp_path / "cai.npz", fea=X, gnd=y.reshape(-1, 1))
    np.savez(tmp_path / "own.npz", data=X, labels=y, other=y)
    for path, keys in ((tmp_path / "python.mat", {}), (tmp_path / "cai.npz", {}),
                       (tmp_path / "own.npz", {"X_key": "data", "y_key": "labels"})):
        ds = load(path, **keys)
        np.testing.assert_allclose(ds.X, X, rtol=1e-12)
        assert ds.class_names == ("10", "20", "30")


def test_the_default_name_is_the_stem_with_only_plain_characters(tmp_path, blobs):
    path = tmp_path / "my data (v2).npz"
    np.savez(path, X=blobs[0], y=blobs[1])
    assert load(path).name == "my-data-v2"
    assert load(path, name="own").name == "own"


def test_a_sparse_mat_matrix_is_made_dense(tmp_path, blobs):
    X, y = blobs
    scipy.io.savemat(tmp_path / "sparse.mat", {"fea": scipy.sparse.csc_matrix(X), "gnd": y.reshape(-1, 1)})
    np.testing.assert_allclose(load(tmp_path / "sparse.mat").X, X, rtol=1e-12)


def test_csv_layouts_label_column_delimiter_and_header(tmp_path, blobs):
    X, y = blobs
    rows = [[label, *row] for row, label in zip(X, y)]
    (tmp_path / "first.csv").write_text("\n".join(";".join(repr(float(v)) for v in row) for row in rows))
    ds = load(tmp_path / "first.csv", label_column=0, delimiter=";")  # no header: auto sees numbers
    np.testing.assert_allclose(ds.X, X, rtol=1e-12)
    assert ds.class_names == ("10", "20", "30")
    (tmp_path / "tab.csv").write_text("\n".join("\t".join(repr(float(v)) for v in row) for row in rows))
    assert load(tmp_path / "tab.csv", label_column=0, delimiter="\\t").class_names == ("10", "20", "30")
    one_line_error(ConfigError, "dataset.delimiter='ab'", tmp_path / "tab.csv", delimiter="ab")
    path = write(tmp_path, "csv", X, y)
    assert load(path, header=True).X.shape == (15, 6)
    one_line_error(DataError, "not a table of numbers", path, header=False)  # the header line read as data
    one_line_error(ConfigError, "dataset.label_column=7", path, label_column=7)
    (tmp_path / "one.csv").write_text("1\n2\n")
    one_line_error(DataError, "a .csv needs the features and a label column", tmp_path / "one.csv")


def test_preprocess_and_image_shape(tmp_path, blobs):
    X, y = blobs
    path = write(tmp_path, "npz", X, y)
    np.testing.assert_allclose(np.linalg.norm(load(path, preprocess="unit_norm").X, axis=1), 1.0)
    np.testing.assert_allclose(load(path, preprocess="scale01").X.max(), 1.0)
    ds = load(path, image_shape=[2, 3], pixel_order="F")
    assert ds.image_shape == (2, 3) and ds.pixel_order == "F"
    one_line_error(ConfigError, "dataset.image_shape=[4, 4]", path, image_shape=[4, 4])
    one_line_error(ConfigError, "dataset.pixel_order='Z'", path, image_shape=[2, 3], pixel_order="Z")


def test_the_file_is_recorded_on_the_data_set_with_its_sha256_and_a_pinned_hash_is_checked(tmp_path, blobs):
    path = write(tmp_path, "npz", *blobs)
    assert load(path).files == ({"file": str(path), "sha256": sha256(path), "path": str(path)},)
    assert load(path, sha256=sha256(path).upper()).n_classes == 3
    message = one_line_error(DataError, "dataset.sha256=", path, sha256="0" * 64)
    assert sha256(path) in message
    one_line_error(ConfigError, "dataset.sha256='abc'", path, sha256="abc")


def test_a_relative_path_is_taken_from_the_launch_directory_and_pinned_absolute(tmp_path, blobs, monkeypatch):
    write(tmp_path, "npz", *blobs)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(HydraConfig.instance(), "cfg", None)  # outside a Hydra run, whatever ran in this process
    assert load("mine.npz").name == "mine"
    run = OmegaConf.create({"seed": 0, "dataset": config("mine.npz")})
    pinned = pin_user_file(run)
    assert pinned.dataset.path == str(tmp_path / "mine.npz") and pinned.dataset.sha256 == sha256("mine.npz")
    assert pinned.dataset.name == "mine" and run.dataset.path == "mine.npz"  # the input is left as it was
    assert pin_user_file(pinned).dataset == pinned.dataset
    other = OmegaConf.create({"dataset": {"name": "yale", "loader": "deng_cai", "file": "Yale_32x32.mat"}})
    assert pin_user_file(other) is other
    unset = OmegaConf.create({"dataset": config("x.npz")})
    unset.dataset.path = "???"
    assert pin_user_file(unset) is unset and OmegaConf.to_container(unset, resolve=True)["dataset"]["name"] == "file"


def v73(path):
    """A file with the header of a MATLAB v7.3 (HDF5) .mat file."""
    path.write_bytes(b"MATLAB 7.3 MAT-file".ljust(116, b" ") + bytes(8) + b"\x00\x02IM" + bytes(64))
    return path


@pytest.mark.parametrize("case, kind, match", [
    ("unset", ConfigError, "dataset.path is not set"),
    ("absent", ConfigError, "no such file"),
    ("extension", ConfigError, "unknown extension '.txt'"),
    ("x_key_default", ConfigError, "dataset.X_key=null (looked for fea and X): no such variable"),
    ("y_key_named", ConfigError, "dataset.y_key='labels': no such variable"),
    ("x_1d", DataError, "they must be a 2-D matrix"),
    ("x_text", DataError, "they must be real numbers"),
    ("y_length", DataError, "the labels have shape (14,) but the data have 15 rows"),
    ("nan", DataError, "2 NaN or infinite value(s) (first at row 3, column 1)"),
    ("inf", DataError, "1 NaN or infinite value(s)"),
    ("y_fraction", DataError, "the labels must be integers (e.g. 1, 2, 3), found 1.5"),
    ("y_text", DataError, "the labels must be integers (e.g. 1, 2, 3), found 'cat'"),
    ("one_class", DataError, "the labels hold 1 class ([4]); clustering needs at least 2"),
    ("none_known", DataError, "no label is known (every label is -1, the mark of an unknown one)"),
    ("v73", DataError, "MATLAB v7.3 (HDF5) file"),
    ("damaged_mat", DataError, "cannot read it as a .mat file"),
    ("damaged_npz", DataError, "cannot read it as a .npz file"),
    ("header_key", ConfigError, "dataset.header='maybe'"),
    ("label_column_key", ConfigError, "dataset.label_column='last'"),
    ("x_key_key", ConfigError, "dataset.X_key=3"),
])
def test_each_bad_input_is_one_line_naming_the_parameter(tmp_path, blobs, case, kind, match):
    X, y = blobs
    path, keys = tmp_path / "bad.npz", {}
    if case == "unset":
        path = "???"
    elif case == "absent":
        path = tmp_path / "absent.npz"
    elif case == "extension":
        path = tmp_path / "mine.txt"
        path.write_text("1,2\n")
    elif case == "x_key_default":
        np.savez(path, data=X, y=y)
    elif case == "y_key_named":
        np.savez(path, X=X, y=y)
        keys = {"y_key": "labels"}
    elif case == "x_1d":
        np.savez(path, X=X[:, 0], y=y)
    elif case == "x_text":
        np.savez(path, X=X.astype(str), y=y)
    elif case == "y_length":
        np.savez(path, X=X, y=y[:-1])
    elif case in ("nan", "inf"):
        X = X.copy()
        X[3, 1] = np.nan if case == "nan" else np.inf
        if case == "nan":
            X[5, 0] = np.nan
        np.savez(path, X=X, y=y)
    elif case == "y_fraction":
        np.savez(path, X=X, y=np.where(y == 10, 1.5, y))
    elif case == "y_text":
        np.savez(path, X=X, y=np.array(["cat"] * 8 + ["dog"] * 7))
    elif case == "one_class":
        np.savez(path, X=X, y=np.full(15, 4))
    elif case == "none_known":
        np.savez(path, X=X, y=np.full(15, -1))
    elif case == "v73":
        path = v73(tmp_path / "new.mat")
    elif case == "damaged_mat":
        path = tmp_path / "bad.mat"
        path.write_bytes(b"not a mat file" * 3)
    elif case == "damaged_npz":
        path.write_bytes(b"not a zip file" * 3)
    else:
        np.savez(path, X=X, y=y)
        keys = {"header_key": {"header": "maybe"}, "label_column_key": {"label_column": "last"},
                "x_key_key": {"X_key": 3}}[case]
    message = one_line_error(kind, match, path, **keys)
    assert message.startswith("dataset."), message


def test_the_missing_key_message_lists_the_variables_in_the_file(tmp_path, blobs):
    X, y = blobs
    scipy.io.savemat(tmp_path / "m.mat", {"data": X, "labels": y})
    message = one_line_error(ConfigError, "dataset.X_key='fea'", tmp_path / "m.mat", X_key="fea")
    assert "(it holds: data, labels)" in message


def compose(*overrides):
    from hydra import compose as hydra_compose, initialize_config_dir

    with initialize_config_dir(str(CONF), version_base="1.3"):
        return hydra_compose("config", overrides=list(overrides))


def test_a_run_checks_k_against_the_classes_of_the_file(tmp_path, blobs):
    from src.running.command_line import check_group_choices
    from src.running.settings import prepare, run_spec

    path = write(tmp_path, "npz", *blobs)
    check_group_choices(["dataset=file", f"dataset.path={path}"])
    check_group_choices(["dataset=yale,file"])
    for protocol in ("unsupervised", "cnmf", "ccf"):
        plain = OmegaConf.to_container(compose("dataset=file", f"dataset.path={path}", f"protocol={protocol}",
                                               "protocol.ks=[2,3]"), resolve=True)
        run = prepare(run_spec(plain))
        assert run.dataset.name == "mine" and run.settings["dataset"]["path"] == str(path)
    plain = OmegaConf.to_container(compose("dataset=file", f"dataset.path={path}"), resolve=True)  # ks 2..10
    with pytest.raises(ConfigError, match=r"protocol.ks contains 4; .*\(the data set has 3 classes\)"):
        prepare(run_spec(plain))


def run_cli(*args, cwd):
    return background.run_module("src.run", *args, cwd=cwd)


def run_on_a_relative_file():
    where = background.directory("user-file")
    path = write(where, "npz", *make_blobs())
    out = where / "run"
    done = run_cli("dataset=file", "dataset.path=mine.npz", "method=cnmf", "protocol=cnmf", "protocol.ks=[2]",
                   "protocol.n_trials=1", "method.params.max_iter=50", f"hydra.run.dir={out}", cwd=where)
    return path, out, done


def sweep_over_two_relative_files():
    where = background.directory("user-file")
    X, y = make_blobs()
    write(where, "npz", X, y, name="a")
    write(where, "csv", X[::-1], y[::-1], name="b")
    sweep = where / "sweep"
    done = run_cli("-m", "dataset=file", "dataset.path=a.npz,b.csv", "method=nmf", "protocol.ks=[3]",
                   "protocol.n_trials=1", "method.params.max_iter=20", f"hydra.sweep.dir={sweep}", cwd=where)
    return where, sweep, done


COMMANDS = {
    "test_a_run_on_a_relative_file_records_its_absolute_path_and_sha256": run_on_a_relative_file,
    "test_a_sweep_over_two_relative_files": sweep_over_two_relative_files,
}
"""Test -> the command-line run it checks, on files written beside its launch directory."""


def start_in_background(items):
    background.start_tests(items, COMMANDS)


@pytest.mark.integration  # python -m src.run in a subprocess, launched beside the file (a relative path)
def test_a_run_on_a_relative_file_records_its_absolute_path_and_sha256(request):
    path, out, done = background.outcome(request, COMMANDS)
    assert done.returncode == 0, done.stderr + done.stdout
    results = pd.read_csv(out / "results.csv")
    assert len(results) == 1 and results["dataset"].tolist() == ["mine"] and results["acc"].between(0, 1).all()
    assert results["dataset_path"].tolist() == [str(path)] and results["dataset_sha256"].tolist() == [sha256(path)]
    assert OmegaConf.load(out / "config.yaml").dataset.path == str(path)
    record = json.loads((out / "provenance.json").read_text())
    assert record["data_files"] == [{"file": str(path), "sha256": sha256(path), "path": str(path)}]


@pytest.mark.integration  # a multirun over two files given relative to the launch directory
def test_a_sweep_over_two_relative_files(request):
    where, sweep, done = background.outcome(request, COMMANDS)
    assert done.returncode == 0, done.stderr + done.stdout
    for job, name, fmt in ((0, "a", "npz"), (1, "b", "csv")):
        job_dir = sweep / f"{job}_{name}_NMF"
        assert OmegaConf.load(job_dir / "config.yaml").dataset.path == str(where / f"{name}.{fmt}")
        assert pd.read_csv(job_dir / "results.csv")["dataset"].tolist() == [name]

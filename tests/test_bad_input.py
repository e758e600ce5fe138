"""Bad input everywhere: every protocol and method parameter, the Python API, degenerate data, downloads.

Each bad input must give one line naming the parameter and the value, as a ValueError (``ConfigError``) or
``DataError`` in Python and a non-zero exit on the command line, and leave no partial results.

Command-line values are checked in-process: the config of each method is composed once by Hydra, each
override list is applied by Hydra's own override step (as ``python -m src.run`` does), and the config is
handed to :func:`src.running.cells.run_experiment` (the function every CLI job runs), with the Yale data set loaded
once for the module. A handful of real CLI runs check the exit status and the
single ERROR line end to end.

Labels that do not cover the classes. Labels are partial by design (``-1`` = unlabelled): a labelled subset
that leaves some classes without any labelled sample, or whose labels are not 0..c-1 (e.g. 7 and 42), is
valid input for every method; the constrained methods build their constraint matrix from the labelled
classes present, in sorted order. What is rejected: non-integer labels, labels below -1, a ``y`` whose
length is not the number of samples, and (SDA) no labelled sample at all.
"""

import copy
import functools
import hashlib
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml
from hydra import compose, initialize_config_dir
from hydra._internal.config_loader_impl import ConfigLoaderImpl
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import OmegaConf
from sklearn.exceptions import ConvergenceWarning

import src.data.fetch as fetch_mod
import src.run as run_mod
import src.running.settings as settings_mod
from src import methods
from src.data import load_dataset
from src.data.fetch import REGISTRY, fetch
from src.errors import ConfigError, DataError
from src.methods.core.estimator import Factorization
from src.protocol.cell import run_cell
from src.protocol.trials import make_trial
from src.running.settings import MethodSpec, freeze, protocol_spec

from helpers import AT_THE_CAP_MESSAGE

REPO = Path(__file__).resolve().parents[1]
CONF = REPO / "conf"
SMALL = ["dataset=yale", "protocol.ks=[2]", "protocol.n_trials=1", "protocol.kmeans_restarts=1"]


# ------------------------------------------------------------------------------ command-line values, in-process
@pytest.fixture(scope="module")
def yale(tmp_path_factory):
    return load_dataset(OmegaConf.load(CONF / "dataset" / "yale.yaml"), tmp_path_factory.mktemp("data"), None, 0)


@functools.lru_cache
def composed(method: str):
    with initialize_config_dir(str(CONF), version_base="1.3"):
        return compose("config", overrides=[*SMALL, f"method={method}"])


def configure(method: str, overrides: list[str]):
    """The config ``python -m src.run method=<method> <overrides>`` composes (Hydra's own override step)."""
    cfg = copy.deepcopy(composed(method))
    ConfigLoaderImpl._apply_overrides_to_config(OverridesParser.create().parse_overrides(overrides), cfg)
    return cfg


def rejected(overrides, tmp_path, monkeypatch, yale, method="nmf") -> str:
    """Run the experiment configured by ``overrides``, return its one-line error; check nothing was written."""
    monkeypatch.setattr(settings_mod, "load_dataset", lambda *args, **kwargs: yale)
    cfg = configure(method, overrides)
    out = tmp_path / "run"
    with pytest.raises(ConfigError) as info:
        run_mod.run_experiment(cfg, out)
    message = str(info.value)
    assert "\n" not in message and isinstance(info.value, ValueError)
    assert not (out / "results.csv").exists() and not (out / "cells").exists() and not (out / "config.yaml").exists()
    return message


PROTOCOL_CASES = [
    # every key of conf/protocol/*.yaml: out of range, then wrong type
    ("protocol.ks=[1,2]", "protocol.ks contains 1"),
    ("protocol.ks=[2,16]", "protocol.ks contains 16"),
    ("protocol.ks=[]", "protocol.ks is empty"),
    ("protocol.ks=5", "protocol.ks=5 must be a list"),
    ("protocol.ks=abc", "protocol.ks='abc' must be a list"),
    ("protocol.ks=[2.5]", "protocol.ks contains 2.5"),
    ("protocol.ks=[true]", "protocol.ks contains True"),
    ("protocol.n_trials=0", "protocol.n_trials=0"),
    ("protocol.n_trials=abc", "protocol.n_trials='abc'"),
    ("protocol.n_trials=1.5", "protocol.n_trials=1.5"),
    ("protocol.labels=foo", "protocol.labels='foo'"),
    ("protocol.labels.mode=all", "protocol.labels.mode='all'"),
    ("protocol.labels.mode=3", "protocol.labels.mode=3"),
    ("protocol.labels.mode=fraction protocol.labels.fraction=1.5", "protocol.labels.fraction=1.5"),
    ("protocol.labels.mode=fraction protocol.labels.fraction=0", "protocol.labels.fraction=0"),
    ("protocol.labels.mode=fraction protocol.labels.fraction=abc", "protocol.labels.fraction='abc'"),
    ("protocol.labels.mode=per_class protocol.labels.per_class=0", "protocol.labels.per_class=0"),
    ("protocol.labels.mode=per_class protocol.labels.per_class=12", "protocol.labels.per_class=12 exceeds"),
    ("protocol.labels.mode=per_class protocol.labels.per_class=abc", "protocol.labels.per_class='abc'"),
    ("protocol.label_overrides=foo", "protocol.label_overrides='foo'"),
    ("+protocol.label_overrides.yale=5", "protocol.label_overrides.yale=5"),
    ("+protocol.label_overrides.yale.mode=some", "protocol.labels.mode='some'"),
    ("protocol.rank_offset=-1", "protocol.rank_offset=-1"),
    ("protocol.rank_offset=abc", "protocol.rank_offset='abc'"),
    ("protocol.kmeans_restarts=0", "protocol.kmeans_restarts=0"),
    ("protocol.kmeans_restarts=abc", "protocol.kmeans_restarts='abc'"),
    ("protocol.kmeans_metric=manhattan", "protocol.kmeans_metric='manhattan'"),
    ("protocol.kmeans_metric=1", "protocol.kmeans_metric=1"),
    ("protocol.kmeans_init=kmeanspp", "protocol.kmeans_init='kmeanspp'"),
    ("protocol.score_on=train", "protocol.score_on='train'"),
    ("protocol.subruns=0", "protocol.subruns=0"),
    ("protocol.subruns=abc", "protocol.subruns='abc'"),
    ("protocol.subrun_choice=best", "protocol.subrun_choice='best'"),
    ("protocol.assign=largest", "protocol.assign='largest'"),
    ("protocol.readouts=[median]", "protocol.readouts=['median'] must be a list of names"),
    ("protocol.readouts=argmax", "protocol.readouts='argmax' must be a list"),
    ("seed=-1", "seed=-1"),
    ("seed=abc", "seed='abc'"),
    ("seed=1.5", "seed=1.5"),
    ("runtime.blas_threads=0", "runtime.blas_threads=0"),
    ("runtime.blas_threads=abc", "runtime.blas_threads='abc'"),
]


def test_protocol_cases_cover_every_protocol_key():
    keys = set()
    for path in (CONF / "protocol").glob("*.yaml"):
        keys |= {key for key in yaml.safe_load(path.read_text()) if key != "defaults"}
    named = {case.split("=")[0].lstrip("+").split(".")[1] for case, _ in PROTOCOL_CASES
             if case.lstrip("+").startswith("protocol.")}
    assert keys <= named, f"no bad-value case for protocol keys {sorted(keys - named)}"


@pytest.mark.parametrize("overrides, message", PROTOCOL_CASES, ids=[case for case, _ in PROTOCOL_CASES])
def test_bad_protocol_and_run_values(overrides, message, tmp_path, monkeypatch, yale):
    assert message in rejected(overrides.split(), tmp_path, monkeypatch, yale)


def configured_params(method: str) -> dict:
    """The parameters of conf/method/<method>.yaml as a run gets them (the solver's settings included)."""
    return OmegaConf.to_container(composed(method).method.params, resolve=True)


def method_cases():
    """(method, parameter, bad value) for every parameter of every conf/method/*.yaml, by the default's type."""
    bad = {bool: ["abc", 2], int: ["abc", -1, 2.5], float: ["abc", -1.0], str: ["abc", 3]}
    cases = []
    for path in sorted((CONF / "method").glob("*.yaml")):
        for param, default in configured_params(path.stem).items():
            cases += [(path.stem, param, value) for value in bad[type(default)]]
    return cases


def test_method_cases_cover_every_method_parameter():
    cases = {(method, param) for method, param, _ in method_cases()}
    for path in (CONF / "method").glob("*.yaml"):
        assert {(path.stem, param) for param in configured_params(path.stem)} <= cases
    assert {("nmf", "max_iter"), ("nmf_kl", "min_iter"), ("copkmeans", "max_iter")} <= cases
    assert len(cases) >= 40


@pytest.mark.parametrize("method, param, value", method_cases(), ids=lambda v: str(v))
def test_bad_method_parameter(method, param, value, tmp_path, monkeypatch, yale):
    message = rejected([f"method.params.{param}={value}"], tmp_path, monkeypatch, yale, method)
    assert f"{param}={value!r}" in message


# ------------------------------------------------------------- real CLI runs (tests/test_run.py has more)
@pytest.mark.integration  # python -m src.run in a subprocess
@pytest.mark.parametrize("overrides, message", [
    (["method.params.max_iter=abc"], "max_iter='abc' must be a positive integer"),
    (["runtime.blas_threads=0"], "runtime.blas_threads=0 must be a positive integer"),  # checked before the run
])
def test_cli_bad_value_is_one_error_line_and_exit_2(overrides, message, tmp_path):
    out = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "src.run", *SMALL, *overrides, f"hydra.run.dir={out}",
                           f"paths.data_dir={tmp_path / 'data'}"], cwd=REPO, capture_output=True, text=True,
                          env=dict(os.environ, HYDRA_FULL_ERROR="0"), timeout=300)
    errors = [line for line in (done.stdout + done.stderr).splitlines() if "ERROR" in line]
    assert done.returncode == 2 and len(errors) == 1 and message in errors[0], done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert not (out / "results.csv").exists() and not (out / "cells").exists()


# ------------------------------------------------------------------------------------------- Python API
FACTORIZATIONS = [name for name in methods.NAMES if issubclass(methods.REGISTRY[name], Factorization)]


def make(name, **params):
    """A method with small settings (image_shape (2, 3) for NTF: 6 features)."""
    accepted = methods.parameter_names(methods.REGISTRY[name])
    settings = {"n_components": 2, "max_iter": 20, "random_state": 0, "image_shape": (2, 3), "n_neighbors": 3}
    return methods.make(name, **{**{k: v for k, v in settings.items() if k in accepted}, **params})


def fit(model, X, y=None):
    with warnings.catch_warnings():
        # make() stops the fits at 20 iterations: what is checked is how the input is handled, not convergence
        warnings.filterwarnings("ignore", AT_THE_CAP_MESSAGE, ConvergenceWarning)
        if getattr(model, "clusters_directly", False):
            return model.fit_predict(X, y)
        return model.fit_transform(X, y)


def labels(n=8):
    y = np.full(n, -1)
    y[:2], y[2:4] = 0, 1
    return y


@pytest.mark.parametrize("name", methods.NAMES)
@pytest.mark.parametrize("y, match", [
    (np.zeros(5, dtype=int), r"y must have shape \(8,\), got \(5,\)"),
    (np.zeros(9, dtype=int), r"y must have shape \(8,\), got \(9,\)"),
    (np.zeros((8, 1), dtype=int), r"y must have shape \(8,\), got \(8, 1\)"),
    (np.full(8, 0.5), "y must hold integer class labels .* got dtype float64 with non-integer values"),
    (np.array(list("abcdefgh")), "y must hold integer class labels"),
    (np.full(8, -2), "y has label -2"),
], ids=["short", "long", "2-D", "float", "str", "below -1"])
def test_bad_labels(name, y, match, rng):
    with pytest.raises(ValueError, match=match):
        fit(make(name), rng.random((8, 6)), y)


@pytest.mark.parametrize("name", methods.NAMES)
@pytest.mark.parametrize("y", [np.array([0, 0, -1, -1, -1, -1, -1, -1]),  # one class of several labelled
                               np.array([7, 7, 42, 42, -1, -1, -1, -1]),  # labels not 0..c-1
                               np.array([0, 1, 2, 3, 4, -1, -1, -1]),  # more labelled classes than components
                               np.zeros(8, dtype=int)],  # every sample labelled, one class
                         ids=["one-class", "sparse-labels", "more-classes", "all-one-class"])
def test_labels_that_do_not_cover_the_classes_are_accepted(name, y, rng):
    out = fit(make(name), rng.random((8, 6)), y)
    assert out.shape[0] == 8 and np.all(np.isfinite(out))


@pytest.mark.parametrize("name", ["cnmf", "cnmf_kl", "ccf"])
def test_constraint_matrix_follows_the_labelled_classes(name, rng):
    model = make(name)
    fit(model, rng.random((8, 6)), np.array([7, 7, 42, 42, 42, -1, -1, -1]))
    assert model.constraint_matrix_.shape == (8, 2 + 3)  # c = 2 labelled classes, n_u = 3 unlabelled
    assert model.factors_[model.factor_names[1]].shape == (5, 2)


def test_sda_without_any_label_names_the_cause(rng):
    with pytest.raises(ValueError, match="SDA needs labelled samples"):
        fit(make("sda"), rng.random((8, 6)), np.full(8, -1))


@pytest.mark.parametrize("name", FACTORIZATIONS)
def test_bad_initial_factors(name, rng):
    X, y = rng.random((8, 6)), labels()
    model = make(name)
    shapes = model._factor_shapes(6, 8, y)
    good = {factor: rng.random(shape) for factor, shape in shapes.items()}
    fit(make(name, init=good), X, y)  # the well-formed init is accepted
    first = next(iter(shapes))
    m, k = shapes[first]
    cases = [({**good, first: rng.random((m + 1, k))}, rf"init\['{first}'\] has shape \({m + 1}, {k}\), expected"),
             ({**good, first: rng.random((m, k + 1))}, rf"init\['{first}'\] has shape"),
             ({**good, first: -good[first]}, rf"init\['{first}'\] must be finite and nonnegative"),
             ({**good, first: np.full((m, k), np.nan)}, rf"init\['{first}'\] must be finite"),
             ({factor: value for factor, value in good.items() if factor != first}, "init has factors"),
             ("nndsvd", "init='nndsvd'"),
             (np.ones((m, k)), "init must be 'random' or a dict")]
    for init, match in cases:
        with pytest.raises(ValueError, match=match):
            fit(make(name, init=init), X, y)


@pytest.mark.parametrize("name", methods.NAMES)
@pytest.mark.parametrize("X, match", [
    (np.zeros((0, 6)), r"non-empty 2-D array .* got shape \(0, 6\)"),
    (np.zeros((8, 0)), r"non-empty 2-D array .* got shape \(8, 0\)"),
    (np.zeros(6), r"got shape \(6,\)"),
    (np.zeros((2, 2, 2)), r"got shape \(2, 2, 2\)"),
    ([["a"] * 6] * 8, "X must be a numeric array"),
    (np.full((8, 6), np.nan), "X contains NaN or infinite values"),
    (np.full((8, 6), np.inf), "X contains NaN or infinite values"),
], ids=["no-samples", "no-features", "1-D", "3-D", "strings", "nan", "inf"])
def test_empty_or_malformed_data(name, X, match):
    y = np.full(np.shape(X)[0], -1) if np.ndim(X) >= 1 else None
    with pytest.raises(ValueError, match=match):
        fit(make(name), X, y)


@pytest.mark.parametrize("name", [n for n in methods.NAMES if getattr(methods.REGISTRY[n], "nonnegative_data", False)])
def test_negative_data_is_refused_by_methods_that_need_nonnegative_data(name, rng):
    with pytest.raises(ValueError, match=r"X has negative entries \(min -"):
        fit(make(name), rng.random((8, 6)) - 0.5, labels())


@pytest.mark.parametrize("name", methods.NAMES)
@pytest.mark.parametrize("value", [0.0, 1.0, 1e6])
def test_constant_data(name, value):
    X = np.full((8, 6), value)
    out = fit(make(name), X, labels())
    assert out.shape[0] == 8 and np.all(np.isfinite(out))


@pytest.mark.parametrize("name", methods.NAMES)
def test_rank_above_the_data_rank(name, rng):
    X = rng.random((8, 2)) @ rng.random((2, 6))  # rank 2; ask for 6 components (COP-KMeans: 6 clusters)
    model = make(name, n_components=6)
    out = fit(model, X, labels())
    assert out.shape[0] == 8 and np.all(np.isfinite(out))
    if isinstance(model, Factorization):
        assert out.shape == (8, 6) and np.all(np.isfinite(model.objective_history_))


def test_more_clusters_than_samples_names_the_parameter(rng):
    with pytest.raises(ValueError, match=r"n_components=9 exceeds the number of samples \(8\)"):
        fit(make("copkmeans", n_components=9), rng.random((8, 6)), labels())


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
@pytest.mark.parametrize("value", [0.0, 1.0])
def test_protocol_cell_on_constant_data(metric, value):
    """A whole cell (factorize, KMeans, scores) on data whose samples are all equal: finite scores."""
    y = np.repeat(np.arange(3), 5)
    defaults = yaml.safe_load((CONF / "protocol" / "unsupervised.yaml").read_text())
    protocol = protocol_spec({**defaults, "ks": [3], "n_trials": 1, "labels": {"mode": "fraction", "fraction": 0.2},
                              "kmeans_restarts": 2, "kmeans_metric": metric}, "flat")
    trial = make_trial(y, "flat", 3, 0, 0, protocol.labels)
    for name in ("nmf", "cnmf", "kmeans"):
        method = MethodSpec(name, name, freeze({"max_iter": 20} if name != "kmeans" else {}))
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", AT_THE_CAP_MESSAGE, ConvergenceWarning)  # 20 iterations: scores checked
            # equal samples may give KMeans fewer distinct points than clusters: said, and the scores stay finite
            warnings.filterwarnings("ignore", r"Number of distinct clusters \(\d+\) found smaller than n_clusters",
                                    ConvergenceWarning)
            fit = run_cell(np.full((15, 4), value), method, trial, protocol).chosen
        assert 0 <= fit.acc <= 1 and 0 <= fit.nmi <= 1


# ---------------------------------------------------------------------------------------------- downloads
@pytest.fixture
def yale_bytes(mirror) -> bytes:
    return (mirror / "Yale_32x32.mat").read_bytes()


def serve(monkeypatch, payload: bytes | None, calls: list):
    """Replace the HTTP download by one that writes ``payload`` (None: the network is down)."""
    def download(url, output_file, pooch_obj):
        calls.append(url)
        if payload is None:
            raise fetch_mod.requests.exceptions.ConnectionError(f"Failed to resolve host for {url}")
        Path(output_file).write_bytes(payload)
    monkeypatch.setattr(fetch_mod, "_http_download", download)
    monkeypatch.delenv("REPRO_DATA_MIRROR", raising=False)


def test_truncated_download_is_rejected_then_fetched_again(yale_bytes, tmp_path, monkeypatch):
    calls = []
    serve(monkeypatch, yale_bytes[: len(yale_bytes) // 2], calls)
    with pytest.raises(DataError) as info:
        fetch("Yale_32x32.mat", tmp_path, None)
    message = str(info.value)
    assert "\n" not in message and "fails its hash check" in message and "not kept" in message
    assert list((tmp_path / "raw").iterdir()) == []  # never accepted
    serve(monkeypatch, yale_bytes, calls)  # the network works again: the next call downloads it again
    path = fetch("Yale_32x32.mat", tmp_path, None)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == REGISTRY["Yale_32x32.mat"].hashes[0].split(":")[1]
    assert len(calls) == 2


def test_corrupted_cache_is_downloaded_again(yale_bytes, tmp_path, monkeypatch):
    cached = tmp_path / "raw" / "Yale_32x32.mat"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(yale_bytes[:-10])  # truncated
    calls = []
    serve(monkeypatch, yale_bytes, calls)
    assert fetch("Yale_32x32.mat", tmp_path, None).read_bytes() == yale_bytes and len(calls) == 1


def test_corrupted_cache_without_network_or_mirror_says_what_to_do(yale_bytes, tmp_path, monkeypatch):
    cached = tmp_path / "raw" / "Yale_32x32.mat"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"\x00" * len(yale_bytes))  # same size, wrong bytes
    serve(monkeypatch, None, [])
    with pytest.raises(DataError) as info:
        fetch("Yale_32x32.mat", tmp_path, None)
    message = str(info.value)
    assert "\n" not in message and "Yale_32x32.mat" in message
    assert "REPRO_DATA_MIRROR=" in message and str(cached) in message  # set a mirror, or put the file there
    assert not cached.exists()  # the corrupted copy is not kept, so it can never be used


def test_corrupted_mirror_and_cache_are_both_refused(yale_bytes, tmp_path):
    bad_mirror = tmp_path / "mirror"
    bad_mirror.mkdir()
    (bad_mirror / "Yale_32x32.mat").write_bytes(yale_bytes[:1000])
    cached = tmp_path / "data" / "raw" / "Yale_32x32.mat"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(yale_bytes[:2000])
    with pytest.raises(DataError, match=r"Yale_32x32\.mat from .* fails its hash check"):
        fetch("Yale_32x32.mat", tmp_path / "data", bad_mirror)
    assert list(cached.parent.iterdir()) == []


def test_run_with_a_corrupted_mirror_file_writes_nothing(yale_bytes, tmp_path):
    bad_mirror = tmp_path / "mirror"
    bad_mirror.mkdir()
    (bad_mirror / "Yale_32x32.mat").write_bytes(yale_bytes[: len(yale_bytes) // 3])
    with initialize_config_dir(str(CONF), version_base="1.3"):
        cfg = compose("config", overrides=[*SMALL, f"paths.data_dir={tmp_path / 'data'}", f"paths.mirror={bad_mirror}"])
    with pytest.raises(DataError, match="fails its hash check"):
        run_mod.run_experiment(cfg, tmp_path / "run")
    assert not (tmp_path / "run").exists()

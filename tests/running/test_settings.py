"""src.running.settings: a composed config as frozen specs with the defaults of the configs, each value checked once and
cheapest first; the solver group (conf/solver/) and the parameters it gives every method."""

import copy
import dataclasses
import functools
from pathlib import Path

import numpy as np
import pytest
import yaml
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from src import methods
from src.running import settings
from src.data import Dataset
from src.errors import ConfigError
from src.running.settings import (FrozenMap, MethodSpec, ProtocolSpec, RunSpec, config_fingerprint, prepare,
                                  protocol_spec, run_spec)

REPO = Path(__file__).resolve().parents[2]
CONF = REPO / "conf"
SOLVER_KEYS = ("stopping", "n_starts", "min_iter", "tol", "max_iter")
REFERENCE = {"stopping": "reference", "n_starts": 10, "min_iter": 30, "tol": 1e-5, "max_iter": 10000}
ITERATIVE = [name for name, cls in methods.REGISTRY.items() if "stopping" in cls().get_params()]
KL = ("nmf_kl", "cnmf_kl")

#: config_hash of ``method=<name>`` (the default data set, protocol and seed) computed before the solver group
#: existed, when every conf/method/*.yaml wrote its five solver lines itself: the default solver must give each
#: method exactly the settings it had, so that every stored cell stays valid.
HASHES = {
    "kmeans": "e65fee9b0b572e99", "nmf": "8bd300259f564ff9", "nmf_kl": "ae92baee01014f1c",
    "nmf_ncw": "19ac661e9466824e", "ntf": "3f4ef74b7b4a5795", "copkmeans": "f671a019f099a672",
    "sda": "04e440d074b701bd", "gnmf": "de0600e84c58bdb5", "semignmf": "aad93679b06498b9", "cf": "b5ee05e4b77d3838",
    "cnmf": "1303fc30afe704be", "cnmf_kl": "609058b471f50109", "ccf": "e1d145a6a6fc55c6",
    "sparse_nmf": "23ac70e5fa77485c", "nlcf": "52701bed8878255d", "lcf": "70403afa81086268",
    "npnmf": "db544127f8905d46", "fnmf": "df502e1a2c283f2e", "pcgnmf": "d42b9ed1593bf501",
}


@functools.lru_cache
def _composed(*overrides) -> dict:
    with initialize_config_dir(str(CONF), version_base="1.3"):
        return OmegaConf.to_container(compose("config", overrides=list(overrides)), resolve=True)


def composed(*overrides) -> dict:
    """The resolved config ``python -m src.run <overrides>`` runs with (plain containers; composed once)."""
    return copy.deepcopy(_composed(*overrides))


def params(*overrides) -> dict:
    return composed(*overrides)["method"]["params"]


# -- specs: frozen, no defaults of their own -----------------------------------------------------------------------
def test_the_specs_are_frozen():
    run = run_spec(composed("method=gnmf", "protocol=cnmf", "dataset=orl"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.seed = 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.protocol.ks = (2,)
    with pytest.raises(TypeError):
        run.method.params["alpha"] = 1.0
    with pytest.raises(TypeError):
        run.protocol.labels["mode"] = "none"
    with pytest.raises(TypeError):
        run.solver["max_iter"] = 5
    assert isinstance(run.method.params, FrozenMap) and isinstance(run.dataset.config, FrozenMap)
    assert run.protocol.ks == (2, 3, 4, 5, 6, 7, 8, 9, 10) and isinstance(run.protocol.readouts, tuple)
    assert dict(run.protocol.labels) == {"mode": "per_class", "fraction": 0.1, "per_class": 2}  # ORL's override
    assert run.method.as_dict()["params"]["alpha"] == 100.0 and run.solver["max_iter"] == 10000


def test_the_defaults_are_in_the_configs_only():
    """The specs declare no default: a protocol value comes from conf/protocol/unsupervised.yaml (whose keys are
    the spec's, in order), and a config without a key is refused naming it, never completed."""
    for spec in (RunSpec, MethodSpec, ProtocolSpec, settings.DatasetSpec, settings.PathsSpec):
        assert all(f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
                   for f in dataclasses.fields(spec)), spec
    defaults = yaml.safe_load((CONF / "protocol" / "unsupervised.yaml").read_text())
    assert tuple(defaults) == settings.PROTOCOL_KEYS
    protocol = {**defaults}
    del protocol["subruns"]
    with pytest.raises(ConfigError, match="protocol.subruns is missing"):
        protocol_spec(protocol, "yale")
    with pytest.raises(ConfigError, match="protocol.subrun is not a setting of protocol"):
        protocol_spec({**defaults, "subrun": 2}, "yale")
    # the code reads the spec's values and writes no fallback of its own
    for module in ("src/run.py", "src/protocol/cell.py", "src/running/settings.py"):
        text = (REPO / module).read_text()
        assert not any(f'.get("{key}", ' in text or f".get('{key}', " in text for key in settings.PROTOCOL_KEYS), module


@pytest.mark.parametrize("override, message", [
    ("seed=-1", "seed=-1 must be an integer >= 0"),
    ("runtime.blas_threads=0", "runtime.blas_threads=0 must be a positive integer or null"),
    ("dry_run=2", "dry_run=2 must be true or false"),
    ("method.name=foo", "method.name='foo' is not one of"),
    ("method.params=5", "method.params=5 must be a mapping"),
    ("+method.extra=1", "method.extra is not a setting of method"),
    ("protocol.ks=[1,2]", "protocol.ks contains 1; each k must be an integer >= 2"),
    ("protocol.labels.mode=some", "protocol.labels.mode='some' is not one of none, fraction, per_class"),
    ("protocol.readouts=[median]", "protocol.readouts=['median'] must be a list of names"),
])
def test_a_bad_setting_is_one_line_naming_it_before_anything_else(override, message):
    with pytest.raises(ConfigError) as info:
        run_spec(composed("method=nmf", override))
    assert message in str(info.value) and "\n" not in str(info.value)


def fails_if_called(*args, **kwargs):
    raise AssertionError("the data were loaded before a check that does not need them")


def small(n_classes=3, per_class=4, image_shape=None, rng=np.random.default_rng(0)):
    y = np.repeat(np.arange(n_classes), per_class)
    return Dataset(name="yale", X=rng.random((y.size, 6)), y=y, image_shape=image_shape, class_names=None,
                   pixel_order=None)


def test_the_checks_run_cheapest_first():
    """Config values, then the method's parameters, then the labels rule, then the data, then what they decide."""
    with pytest.raises(ConfigError, match="protocol.n_trials=0"):  # a config value before a method parameter
        run_spec(composed("method=nmf", "method.params.max_iter=0", "protocol.n_trials=0"))
    with pytest.raises(ConfigError, match="max_iter=0"):  # a method parameter before the labels rule
        prepare(run_spec(composed("method=cnmf", "protocol=unsupervised", "method.params.max_iter=0")),
                load=fails_if_called)
    with pytest.raises(ConfigError, match="method=cnmf needs labelled samples"):  # the labels rule before any data
        prepare(run_spec(composed("method=cnmf", "protocol=unsupervised")), load=fails_if_called)
    loaded = []

    def load(*args):
        loaded.append(args)
        return small()

    with pytest.raises(ConfigError, match=r"protocol.ks contains 4; each k must be an integer in \[2, 3\]"):
        prepare(run_spec(composed("method=nmf")), load=load)
    assert len(loaded) == 1 and loaded[0][0]["name"] == "yale"  # the data set's config, as plain containers
    with pytest.raises(ConfigError, match=r"protocol.labels.per_class=5 exceeds the smallest class size \(4\)"):
        prepare(run_spec(composed("method=cnmf", "protocol=cnmf", "protocol.ks=[2]", "protocol.labels.mode=per_class",
                                  "protocol.labels.per_class=5")), load=load)
    with pytest.raises(ConfigError, match="image_shape"):  # NTF's image shape: only the data give it
        prepare(run_spec(composed("method=ntf", "protocol.ks=[2]")), load=load)
    run = prepare(run_spec(composed("method=nmf", "protocol.ks=[2,3]")), load=load)
    assert run.settings == run.spec.cell_settings() and run.dataset.n_classes == 3


# -- the solver group ------------------------------------------------------------------------------------------------
def test_the_default_solver_gives_every_method_the_parameters_it_had():
    assert params("method=nmf") == REFERENCE
    assert params("method=nmf_kl") == {**REFERENCE, "min_iter": 10}  # Cai's GNMF_KL
    assert params("method=copkmeans") == {"n_restarts": 20, "max_iter": 300}
    assert params("method=kmeans") == {}
    assert params("method=sda") == {"alpha": 0.1, "beta": 0.1, "n_neighbors": 5, "knn_algorithm": "auto"}
    assert params("method=gnmf") == {**REFERENCE, "alpha": 100.0, "n_neighbors": 5, "weight": "binary",
                                     "normalize_init": True, "knn_algorithm": "auto"}
    for path in sorted((CONF / "method").glob("*.yaml")):
        if path.stem == "outside":  # a place for an outside estimator's import path, filled on the command line
            continue
        plain = composed(f"method={path.stem}")
        run = run_spec(plain)
        if path.stem in HASHES:  # the references (label_spreading, knn) came after the solver group
            assert config_fingerprint(run.cell_settings()) == HASHES[path.stem], path.stem
        if path.stem in ITERATIVE:  # the solver's settings first, as the columns param_* have always been
            assert tuple(plain["method"]["params"])[:5] == SOLVER_KEYS, path.stem


def test_the_solver_applies_to_the_iterative_methods_only():
    assert sorted(ITERATIVE) == sorted(name for name in methods.NAMES if name not in ("kmeans", "sda", "copkmeans", "label_spreading", "knn"))
    for name in methods.NAMES:
        taken = params(f"method={name}")
        assert all(key in taken for key in SOLVER_KEYS) == (name in ITERATIVE), name
        if name not in ITERATIVE:
            assert not {"stopping", "n_starts", "min_iter", "tol"} & set(taken), name


@pytest.mark.integration  # composes every method twice (5 s)
def test_solver_fixed_makes_every_iterative_method_fixed_and_leaves_the_others():
    for name in methods.NAMES:
        fixed, reference = params(f"method={name}", "solver=fixed"), params(f"method={name}")
        if name in ITERATIVE:
            assert {key: fixed[key] for key in ("stopping", "n_starts", "max_iter")} == \
                {"stopping": "fixed", "n_starts": 1, "max_iter": 200}, name
            assert {k: v for k, v in fixed.items() if k not in SOLVER_KEYS} == \
                {k: v for k, v in reference.items() if k not in SOLVER_KEYS}, name
        else:
            assert fixed == reference, name  # COP-KMeans keeps its own max_iter = 300
    assert params("method=copkmeans", "solver=fixed")["max_iter"] == 300
    assert params("method=nmf_kl", "solver=fixed")["min_iter"] == 30  # the fixed solver has no kl values


def test_an_explicit_method_parameter_wins_over_the_solver():
    assert params("method=nmf", "solver=fixed", "method.params.max_iter=100")["max_iter"] == 100
    assert params("method=nmf_kl", "method.params.min_iter=30")["min_iter"] == 30
    assert params("method=gnmf", "solver.max_iter=500")["max_iter"] == 500  # the solver's own value, for all
    assert params("method=cnmf_kl", "solver.kl.min_iter=5")["min_iter"] == 5
    # a paper's sweeps (papers/*/reproduce.yaml, readings.yaml) set method parameters: they still apply
    cai = params("experiment=cai", "method=gnmf", "method.params.stopping=fixed", "method.params.max_iter=100")
    assert cai == {**REFERENCE, "stopping": "fixed", "max_iter": 100, "alpha": 100.0, "n_neighbors": 5,
                   "weight": "binary", "normalize_init": True, "knn_algorithm": "auto"}
    tight = params("experiment=lcf", "method=lcf", "method.params.tol=1.0e-7", "method.params.max_iter=20000")
    assert (tight["tol"], tight["max_iter"], tight["stopping"]) == (1e-7, 20000, "reference")


def test_the_written_config_shows_the_parameters_each_method_got(tmp_path):
    from src.running.cells import run_experiment

    with initialize_config_dir(str(CONF), version_base="1.3"):
        cfg = compose("config", overrides=["method=nmf_kl", "dataset=yale", "protocol.ks=[2]", "protocol.n_trials=1",
                                           "protocol.kmeans_restarts=2", "solver=fixed", "solver.max_iter=20"])
    run_experiment(cfg, tmp_path)
    written = yaml.safe_load((tmp_path / "config.yaml").read_text())
    assert list(written["method"]) == ["name", "label", "params"]
    assert written["method"]["params"] == {"stopping": "fixed", "n_starts": 1, "min_iter": 30, "tol": 1e-5,
                                           "max_iter": 20}
    assert written["solver"]["max_iter"] == 20 and written["dry_run"] is False


def test_an_outside_method_composes_and_prepares_like_a_registered_one():
    plain = composed("method=outside", 'method.name="fixtures.outside.estimators:PlainNMF"',
                     'method.label="Plain"', "++method.params.max_iter=30")
    spec = run_spec(plain)
    assert (spec.method.name, spec.method.label, dict(spec.method.params)) == \
        ("fixtures.outside.estimators:PlainNMF", "Plain", {"max_iter": 30})

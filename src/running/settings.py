"""A run's settings: the composed config as typed, frozen specs, each value checked once, cheapest first.

Hydra composes a run's config from ``conf/``; resolved to plain containers, :func:`run_spec` turns it into a
:class:`RunSpec` (the seed, ``runtime.blas_threads``, ``dry_run``, the paths and one spec per config group:
:class:`DatasetSpec`, :class:`MethodSpec`, :class:`ProtocolSpec`, the solver). The specs are frozen (their
mappings read-only) and carry the values they were given: defaults live in the configs, once. Every protocol
key has its value in ``conf/protocol/unsupervised.yaml`` (the other protocols start from it), the solver's
settings are in ``conf/solver/`` (Hydra places them among each iterative method's parameters, see
``conf/config.yaml``), the top-level keys are in ``conf/config.yaml``. A config without a key is refused
with one line naming it, never completed here.

Every value is checked once, and the checks run cheapest first, so that a mistake costs as little as
possible (:func:`prepare` runs them all):

1. the config's shape and values (:func:`run_spec`): seed, threads, dry_run, the groups, the method's name,
   every protocol value that the data do not decide;
2. the method's parameters without data (:func:`check_method_params`: the estimator's ``check_params``);
3. a label-constrained method under a protocol that labels no sample (:func:`needs_labels_check`);
4. the data set is loaded (fetched if it is not on disk yet);
5. what only the data decide (:func:`check_against_data`): each k against the number of classes,
   ``labels.per_class`` against the smallest class, the method's check of X (and an image shape, NTF's).

A bad value raises :class:`~src.errors.ConfigError` with one line naming the setting. A run prepares before
its first cell, a multirun prepares every job before it starts any (:mod:`src.running.sweep`).
"""

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields

from .. import methods
from ..methods import outside
from ..checks import BOOLEAN, NONNEGATIVE_INT, POSITIVE_INT, below, fraction_in, integer, one_of, optional
from ..data import Dataset, load_dataset
from ..errors import ConfigError
from ..methods.core.validation import check_data
from ..methods.references import is_reference
from ..protocol.cell import ASSIGNMENTS, READOUT_NAMES, SCORE_ON, SUBRUN_CHOICES, method_params
from ..protocol.clustering import INITS, METRICS
from ..protocol.trials import LABEL_MODES

#: The config groups a run's config must hold, each a mapping (``<group>=<name>`` on the command line).
GROUPS = ("dataset", "method", "protocol", "solver", "paths")
#: The keys of a method's config.
METHOD_KEYS = ("name", "label", "params")
#: The keys a method's config may hold besides: ``tune``, the grid of the tuned benchmark
#: (:mod:`src.tuning.grids`), and ``grow``, how that grid grows (:mod:`src.tuning.growth`), which choose among
#: cells and are no setting of one.
METHOD_OPTIONAL_KEYS = ("tune", "grow")
#: The keys of ``paths`` a run reads.
PATH_KEYS = ("data_dir", "mirror", "output_dir")


class FrozenMap(Mapping):
    """A read-only mapping: reads like a dict (in its insertion order), has no way to change it, pickles."""

    __slots__ = ("_items",)

    def __init__(self, items=()):
        self._items = dict(items)

    def __getitem__(self, key):
        return self._items[key]

    def __iter__(self):
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"FrozenMap({self._items!r})"


def freeze(value):
    """``value`` with every mapping in it (nested ones too) made a :class:`FrozenMap`; other values as given."""
    if isinstance(value, Mapping):
        return FrozenMap({key: freeze(item) for key, item in value.items()})
    if isinstance(value, list):
        return [freeze(item) for item in value]
    return value


def thaw(value):
    """The plain containers of a frozen value: dicts for mappings, lists for lists and tuples (as JSON has them)."""
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw(item) for item in value]
    return value


@dataclass(frozen=True)
class DatasetSpec:
    """The data set: its name and its whole config entry, which the loader reads (:func:`src.data.load_dataset`)."""

    name: str
    config: Mapping


@dataclass(frozen=True)
class MethodSpec:
    """The method: its registry name (:data:`src.methods.REGISTRY`) or import path, its label in tables and directories, and
    its constructor parameters (the solver's settings included, for an iterative method)."""

    name: str
    label: str
    params: Mapping

    def as_dict(self) -> dict:
        """The method as plain containers: ``{"name": ..., "label": ..., "params": {...}}``."""
        return {"name": self.name, "label": self.label, "params": thaw(self.params)}


#: The kinds of method (:func:`method_kind`): a reference classifies the labelled samples and factorizes nothing
#: (:mod:`src.methods.references`), a label method factorizes with the labels, a label-free method without them.
REFERENCE, LABEL, LABEL_FREE = "reference", "label method", "label-free"


def method_kind(name: str) -> str:
    """The kind of the method ``name`` (a registry name or an import path): :data:`REFERENCE`, :data:`LABEL` or
    :data:`LABEL_FREE`; an outside method that no longer imports counts as label-free (its rows say it took no
    labels)."""
    try:
        cls = methods.estimator_class(name)
    except ValueError:
        return LABEL_FREE
    if is_reference(cls):
        return REFERENCE
    return LABEL if getattr(cls, "needs_labels", False) else LABEL_FREE


@dataclass(frozen=True)
class ProtocolSpec:
    """The protocol's settings (``conf/protocol/``), the fields in the order of its keys.

    ``labels`` is the label scheme on this run's data set: ``protocol.labels`` updated by its entry in
    ``label_overrides``.
    """

    ks: tuple[int, ...]
    n_trials: int
    labels: Mapping
    label_overrides: Mapping
    rank_offset: int
    kmeans_restarts: int
    kmeans_metric: str
    score_on: str
    subruns: int
    subrun_choice: str
    kmeans_init: str
    assign: str
    readouts: tuple[str, ...]


#: The keys of a protocol's config, in their order.
PROTOCOL_KEYS = tuple(field.name for field in fields(ProtocolSpec))


@dataclass(frozen=True)
class PathsSpec:
    """Where the data are cached (``data_dir``), a local copy of the raw files (``mirror``, or None) and the
    outputs (``output_dir``)."""

    data_dir: str
    mirror: str | None
    output_dir: str


@dataclass(frozen=True)
class RunSpec:
    """Everything a run is told: its seed, BLAS threads (None: the library's default), whether it is a dry run,
    its paths, data set, method, protocol and solver (the solver's settings, recorded; an iterative method
    has them among its parameters)."""

    seed: int
    blas_threads: int | None
    dry_run: bool
    paths: PathsSpec
    dataset: DatasetSpec
    method: MethodSpec
    protocol: ProtocolSpec
    solver: Mapping

    def cell_settings(self) -> dict:
        """Everything besides (k, trial) and the code that determines a cell's numbers, as plain containers.

        The data set, the method (name, label, parameters), the seed and the protocol with the data set's
        labels; the lists of k and the number of trials are left out (a cell's trial depends only on its
        own (seed, dataset, k, trial)), as are label settings that the label mode does not read.
        """
        labels = thaw(self.protocol.labels)
        for key in ("fraction", "per_class"):  # the mode of the same name is the only one that reads each
            if labels["mode"] != key:
                labels.pop(key, None)
        kept = {key: thaw(getattr(self.protocol, key)) for key in PROTOCOL_KEYS
                if key not in ("ks", "n_trials", "label_overrides")}
        return {"dataset": thaw(self.dataset.config), "method": self.method.as_dict(),
                "protocol": {**kept, "labels": labels}, "seed": self.seed}


def config_fingerprint(settings: Mapping) -> str:
    """Hash of a cell's settings (:meth:`RunSpec.cell_settings`); a cell on disk is reused only if it matches."""
    return hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:16]


# -- 1. the config's shape and values ---------------------------------------------------------------------------
CLASS_COUNT = integer(2)
"""The rule of each k in ``protocol.ks`` before the data are read (with them: at most the number of classes)."""


def present(node: Mapping, keys, where: str) -> None:
    """Refuse a config entry ``where`` that lacks one of ``keys`` or holds another key."""
    for key in keys:
        if key not in node:
            raise ConfigError(f"{where}.{key} is missing; {where} has the keys {', '.join(keys)}")
    for key in node:
        if key not in keys:
            raise ConfigError(f"{where}.{key} is not a setting of {where}; its keys are {', '.join(keys)}")


def run_spec(config: Mapping) -> RunSpec:
    """The :class:`RunSpec` of a resolved config (plain containers), every value that the data do not decide
    checked (step 1 of the module docstring); raises :class:`~src.errors.ConfigError` naming the first bad one."""
    seed = NONNEGATIVE_INT.check("seed", config.get("seed"))
    runtime = config.get("runtime")
    if not isinstance(runtime, Mapping) or "blas_threads" not in runtime:
        raise ConfigError(f"runtime={runtime!r} must be a mapping with the key blas_threads")
    threads = optional(POSITIVE_INT, "library default").check("runtime.blas_threads", runtime["blas_threads"])
    dry_run = BOOLEAN.check("dry_run", config.get("dry_run"))
    for group in GROUPS:
        if not isinstance(config.get(group), Mapping):
            raise ConfigError(f"{group}={config.get(group)!r} must be a config group (e.g. {group}=<name>)")
    paths = config["paths"]
    for key in PATH_KEYS:
        if key not in paths:
            raise ConfigError(f"paths.{key} is missing (conf/paths/default.yaml has every path)")
    dataset = DatasetSpec(name=config["dataset"].get("name"), config=freeze(config["dataset"]))
    return RunSpec(seed=seed, blas_threads=threads, dry_run=dry_run,
                   paths=PathsSpec(paths["data_dir"], paths["mirror"], paths["output_dir"]), dataset=dataset,
                   method=method_spec(config["method"]),
                   protocol=protocol_spec(config["protocol"], str(dataset.name)), solver=freeze(config["solver"]))


def class_label(name: str) -> str:
    """The label of an estimator named by its import path: its class's name (``mypkg.mine:MyNMF`` -> ``MyNMF``)."""
    return str(name).replace(":", ".").rsplit(".", 1)[-1]


def target_node(node: Mapping) -> dict:
    """A method config written as Hydra's ``instantiate`` takes it (``_target_: mypkg.mymodule.MyNMF``, the
    constructor's parameters beside it or under ``params``, ``label`` optional) as the keys of
    :data:`METHOD_KEYS`."""
    target = node["_target_"]
    params = {key: value for key, value in node.items() if key not in ("_target_", "label", "params", "defaults")}
    params.update(node.get("params") or {})
    return {"name": target, "label": node.get("label") or class_label(target), "params": params}


def method_spec(node: Mapping) -> MethodSpec:
    """The :class:`MethodSpec` of a method's config: a registered name or the import path of an estimator
    outside the repository (``src.methods.estimator_class``; also as ``_target_``, :func:`target_node`),
    a label and a mapping of parameters."""
    if "_target_" in node:
        node = target_node(node)
    name = node.get("name")
    if not isinstance(name, str) or not (name in methods.NAMES or outside.is_import_path(name)):
        raise ConfigError(f"method.name={name!r} is not one of {', '.join(methods.NAMES)}, nor an import path "
                          "(package.module:Class or path/to/file.py:Class)")
    present({key: value for key, value in node.items() if key not in METHOD_OPTIONAL_KEYS}, METHOD_KEYS, "method")
    methods.estimator_class(name)  # an import path imports, or is refused on one line
    if not isinstance(node["params"], Mapping):
        raise ConfigError(f"method.params={node['params']!r} must be a mapping of the method's parameters")
    return MethodSpec(name=name, label=node["label"], params=freeze(node["params"]))


def protocol_spec(node: Mapping, dataset: str) -> ProtocolSpec:
    """The :class:`ProtocolSpec` of a protocol's config on the data set named ``dataset`` (for its
    ``label_overrides`` entry); every value the data do not decide is checked."""
    present(node, PROTOCOL_KEYS, "protocol")
    ks = node["ks"]
    if isinstance(ks, (str, bytes)) or not isinstance(ks, Sequence):
        raise ConfigError(f"protocol.ks={ks!r} must be a list of numbers of classes, e.g. [2,3,4]")
    if not ks:
        raise ConfigError("protocol.ks is empty; give at least one number of classes")
    for k in ks:
        if not CLASS_COUNT.test(k):
            raise ConfigError(f"protocol.ks contains {k!r}; each k must be {CLASS_COUNT.requirement}")
    offset = NONNEGATIVE_INT.check("protocol.rank_offset", node["rank_offset"])
    readouts = node["readouts"]
    if isinstance(readouts, (str, bytes)) or not isinstance(readouts, Sequence) or \
            any(not isinstance(name, str) or name not in READOUT_NAMES for name in readouts):
        raise ConfigError(f"protocol.readouts={readouts!r} must be a list of names from {', '.join(READOUT_NAMES)}")
    overrides = node["label_overrides"] or {}
    return ProtocolSpec(
        ks=tuple(ks),
        n_trials=POSITIVE_INT.check("protocol.n_trials", node["n_trials"]),
        labels=freeze(labels_on(node["labels"], overrides, dataset)),
        label_overrides=freeze(overrides),
        rank_offset=offset,
        kmeans_restarts=POSITIVE_INT.check("protocol.kmeans_restarts", node["kmeans_restarts"]),
        kmeans_metric=one_of(METRICS).check("protocol.kmeans_metric", node["kmeans_metric"]),
        score_on=one_of(SCORE_ON).check("protocol.score_on", node["score_on"]),
        subruns=POSITIVE_INT.check("protocol.subruns", node["subruns"]),
        subrun_choice=one_of(SUBRUN_CHOICES).check("protocol.subrun_choice", node["subrun_choice"]),
        kmeans_init=one_of(INITS).check("protocol.kmeans_init", node["kmeans_init"]),
        assign=one_of(ASSIGNMENTS).check("protocol.assign", node["assign"]),
        readouts=tuple(readouts),
    )


def labels_on(labels, overrides, dataset: str) -> dict:
    """The label scheme on ``dataset``: ``protocol.labels`` updated by ``protocol.label_overrides[dataset]``,
    its mode and the value that mode reads checked (the others are not read)."""
    if not isinstance(overrides, Mapping):
        raise ConfigError(f"protocol.label_overrides={overrides!r} must map data set names to label settings")
    override = overrides.get(dataset) or {}
    for name, value in (("labels", labels), (f"label_overrides.{dataset}", override)):
        if not isinstance(value, Mapping):
            raise ConfigError(f"protocol.{name}={value!r} must be a mapping with keys mode, fraction, per_class")
    scheme = {**labels, **override}
    mode = one_of(LABEL_MODES).check("protocol.labels.mode", scheme.get("mode"))
    if mode == "fraction":
        fraction_in(0, 1, include_low=False, include_high=True).check("protocol.labels.fraction",
                                                                      scheme.get("fraction"))
    if mode == "per_class":
        POSITIVE_INT.check("protocol.labels.per_class", scheme.get("per_class"))
    if scheme.get("folds") is not None or scheme.get("fold") is not None:  # a cross-validation fold (src.tuning)
        folds = integer(2).check("protocol.labels.folds", scheme.get("folds"))
        (NONNEGATIVE_INT & below(folds, f"protocol.labels.folds={folds}")).check("protocol.labels.fold",
                                                                                 scheme.get("fold"))
        if mode == "none":
            raise ConfigError("protocol.labels.folds needs labelled samples to deal into folds; "
                              "protocol.labels.mode is 'none'")
    return scheme


# -- 2. and 3. the method, before any data ----------------------------------------------------------------------
def check_method_params(method: MethodSpec) -> None:
    """Check the method's parameters with the estimator's own ``check_params``, before any data are read.

    A shape that only the data give (NTF's ``image_shape``) stands in as (1, 1); it is checked with the
    data (:func:`check_against_data`).
    """
    model = methods.make(method.name, **method_params(method.name, method.params, 2, 0, (1, 1)))
    if hasattr(model, "check_params"):  # the family's own check; an outside estimator checks in fit
        model.check_params()


def needs_labels_check(name: str, labels: Mapping, dataset: str) -> None:
    """Refuse the label-constrained method ``name`` under a label scheme that labels no sample (one line,
    what to do)."""
    if getattr(methods.estimator_class(name), "needs_labels", False) and labels["mode"] == "none":
        raise ConfigError(
            f"method={name} needs labelled samples but the protocol labels none on {dataset} "
            f"(protocol.labels.mode='none'): use protocol=cnmf or protocol=ccf, or set "
            f"protocol.labels.mode=fraction (or per_class)")


def check_without_data(run: RunSpec) -> None:
    """Steps 2 and 3 of the module docstring: the method's parameters and its need of labels, checked before
    any data set is read (all that a reproduction's dry run can check of a job)."""
    check_method_params(run.method)
    needs_labels_check(run.method.name, run.protocol.labels, str(run.dataset.name))


# -- 5. what the data decide --------------------------------------------------------------------------------------
def check_protocol_on(protocol: ProtocolSpec, class_sizes) -> None:
    """Check the protocol against the classes of the data set (their sizes): each k against the number of
    classes, ``labels.per_class`` against the smallest class."""
    n_classes, smallest = len(class_sizes), min(class_sizes)
    for k in protocol.ks:
        if k > n_classes:
            raise ConfigError(f"protocol.ks contains {k!r}; each k must be an integer in [2, {n_classes}] "
                              f"(the data set has {n_classes} classes)")
    labels = protocol.labels
    if labels["mode"] == "per_class" and labels["per_class"] > smallest:
        raise ConfigError(
            f"protocol.labels.per_class={labels['per_class']} exceeds the smallest class size ({smallest})")


def check_method_on(method: MethodSpec, dataset: Dataset) -> None:
    """Check the method against the data set: X (values, and sign where the method needs X >= 0) and, for an
    estimator that takes an image shape (NTF), the data set's."""
    model = methods.make(method.name, **method_params(method.name, method.params, 2, 0, dataset.image_shape))
    if "image_shape" in model.get_params(deep=False) and hasattr(model, "check_params"):
        model.check_params()  # with the image shape the data give
    check_data(dataset.X, getattr(model, "nonnegative_data", False))


def check_against_data(run: RunSpec, dataset: Dataset) -> None:
    """Check the settings that depend on the loaded data set (step 5 of the module docstring)."""
    check_protocol_on(run.protocol, [int((dataset.y == c).sum()) for c in set(dataset.y.tolist())])
    check_method_on(run.method, dataset)


# -- all of it ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Prepared:
    """A checked run: its spec, its loaded data set and the cell settings its rows record (and hash)."""

    spec: RunSpec
    dataset: Dataset
    settings: dict


def prepare(run: RunSpec, load: Callable | None = None) -> Prepared:
    """Check a run's settings before and after loading its data set (steps 2 to 5 of the module docstring,
    step 1 being :func:`run_spec`); nothing is computed or written.

    ``load(dataset config, data_dir, mirror, seed)`` loads the data set, :func:`src.data.load_dataset` when
    None (a sweep passes one that loads each data set once). Raises :class:`~src.errors.ConfigError` (or
    :class:`~src.errors.DataError`) with one line naming the first bad setting.
    """
    check_without_data(run)
    dataset = (load or load_dataset)(thaw(run.dataset.config), run.paths.data_dir, run.paths.mirror, run.seed)
    check_against_data(run, dataset)
    return Prepared(run, dataset, run.cell_settings())

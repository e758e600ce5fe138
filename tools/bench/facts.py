"""What the benchmark knows about a method, read at run time from its estimator class and its config.

Nothing here is a per-method table: whether a method iterates (a subclass of
:class:`~src.methods.core.estimator.Factorization`, so it runs the shared loop and takes a ``callback``), its loss,
whether it needs labels, whether its rules take stacks of starts (``batched``) and whether it takes a
``dtype`` all come from the class in :data:`src.methods.REGISTRY`; its parameters from
``conf/method/<name>.yaml``, as an experiment runs it.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass

from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from src import methods
from src.config_dir import CONF_DIR
from src.errors import ConfigError
from src.methods.core.estimator import Factorization
from src.protocol.cell import method_params

#: scikit-learn's ``beta_loss`` for each value of a class's ``loss``.
SKLEARN_LOSS = {"frobenius": "frobenius", "kl": "kullback-leibler"}


@dataclass(frozen=True)
class Facts:
    """Class facts of one registered method."""

    name: str
    iterates: bool  # a Factorization: the shared loop, the solver settings and the Pass callback
    loss: str | None  # "frobenius" or "kl" (None for a method that does not iterate)
    needs_labels: bool
    batched: bool  # its rules take stacks of starts, which advance together
    has_dtype: bool  # takes dtype="float32"
    takes_callback: bool  # its fit passes a callback on to the loop
    clusters_directly: bool  # fit_predict gives the clusters (no KMeans on a representation)
    products_per_iteration: int | None = None  # m n k products per iteration and start, when they are all the work


def facts(name: str) -> Facts:
    """The facts of the method registered as ``name``."""
    try:
        cls = methods.REGISTRY[name]
    except KeyError:
        raise ConfigError(f"method={name!r} is not one of {', '.join(methods.NAMES)}") from None
    iterates = issubclass(cls, Factorization)
    return Facts(
        name=name,
        iterates=iterates,
        loss=getattr(cls, "loss", None) if iterates else None,
        needs_labels=bool(getattr(cls, "needs_labels", False)),
        batched=bool(getattr(cls, "batched", False)),
        has_dtype="dtype" in methods.parameter_names(cls),
        takes_callback="callback" in inspect.signature(cls.fit).parameters,
        clusters_directly=bool(getattr(cls, "clusters_directly", False)),
        products_per_iteration=getattr(cls, "products_per_iteration", None) if iterates else None,
    )


def select(names=None) -> list[str]:
    """``names`` checked against the registry (all registered methods when None or empty), in order."""
    if not names:
        return list(methods.NAMES)
    for name in names:
        facts(name)  # one line for an unknown name
    return list(dict.fromkeys(names))


@functools.cache
def _composed(method: str):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose(config_name="config", overrides=[f"method={method}"])


def configured_params(name: str) -> dict:
    """The parameters of ``conf/method/<name>.yaml`` (the configured variant experiments run)."""
    cfg = _composed(name)
    return dict(OmegaConf.to_container(cfg.method.params, resolve=True) or {})


def protocol_settings() -> dict:
    """The default protocol (``conf/protocol/``, as ``conf/config.yaml`` selects it)."""
    return dict(OmegaConf.to_container(_composed("kmeans").protocol, resolve=True))


def build(name: str, rank: int, seed: int, image_shape=None, params: dict | None = None, **overrides):
    """Method ``name`` with ``params`` (default: its configured ones), ``overrides`` on top, at ``rank``.

    ``seed`` is its ``random_state``. ``overrides`` the class does not take are refused
    (:class:`~src.errors.ConfigError`), never dropped.
    """
    params = {**(configured_params(name) if params is None else params), **overrides}
    return methods.make(name, **method_params(name, params, rank, seed, image_shape))

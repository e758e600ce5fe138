"""Load a data set by its config name, outside a Hydra run (scripts, figures, benchmarks)."""

from hydra import compose, initialize_config_dir

from .. import resolvers
from ..config_dir import CONF_DIR
from . import Dataset, load_dataset


def load_named(name: str, overrides: list[str] | tuple[str, ...] = ()) -> Dataset:
    """The data set of ``conf/dataset/<name>.yaml`` with the default paths and seed, plus Hydra overrides.

    Example: ``load_named("orl", ["dataset.preprocess=scale01"])``.
    """
    resolvers.register()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=[f"dataset={name}", *overrides])
    return load_dataset(cfg.dataset, cfg.paths.data_dir, cfg.paths.mirror, cfg.seed)

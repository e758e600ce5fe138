"""Where the Hydra configs and the paper homes live: one answer for every entry point.

In a checkout (and an editable install) the configs are the top-level ``conf/`` beside the package, the
directory users edit. A regular install (``pip install .``) ships the same files inside the package as
``repro_mf/conf/`` (``pyproject.toml`` maps the package ``repro_mf.conf`` onto ``conf/``), so an installed copy runs
from any directory. :data:`CONF_DIR` is the checkout's ``conf/`` when the package sits in a checkout, else
the installed copy.

The paper homes (each paper's sweeps, published numbers and readings, which are not Hydra configs and so
stay off Hydra's search path) are found the same way: :data:`PAPERS_DIR` is the checkout's top-level
``papers/``, else ``repro_mf/papers/`` (the package ``repro_mf.papers``, mapped onto ``papers/``).
"""

from pathlib import Path

#: The directory of the package (``src/`` in a checkout, ``repro_mf/`` installed).
PACKAGE = Path(__file__).resolve().parent
#: The package's own name (``src`` in a checkout, ``repro_mf`` installed): child processes run its modules
#: (``python -m <name>.run``) and the configs name its classes (``${package:}``).
PACKAGE_NAME = __name__.partition(".")[0]


def find_checkout(package: Path = PACKAGE) -> Path | None:
    """The checkout the package at ``package`` sits in, or None for an installed copy.

    A checkout is recognised by ``pyproject.toml`` and ``conf/config.yaml`` beside the package; anything
    else (``site-packages``, a ``--target`` directory) is an installed copy.
    """
    checkout = package.parent
    if (checkout / "pyproject.toml").is_file() and (checkout / "conf" / "config.yaml").is_file():
        return checkout
    return None


def find_conf_dir(package: Path = PACKAGE) -> Path:
    """The config directory of the package at ``package``: its checkout's ``conf/``, else its own ``conf/``."""
    checkout = find_checkout(package)
    return package / "conf" if checkout is None else checkout / "conf"


def find_papers_dir(package: Path = PACKAGE) -> Path:
    """The paper homes of the package at ``package``: its checkout's ``papers/``, else its own ``papers/``."""
    checkout = find_checkout(package)
    return package / "papers" if checkout is None else checkout / "papers"


#: The checkout this package sits in (a checkout or an editable install), None for an installed copy.
CHECKOUT = find_checkout()
#: The Hydra config directory (``config.yaml`` and the groups ``dataset/``, ``method/``, ``experiment/``, ...).
CONF_DIR = find_conf_dir()
#: The paper homes (``<paper>/`` and ``benchmark/<track>/``: :mod:`src.reproduction.homes`).
PAPERS_DIR = find_papers_dir()

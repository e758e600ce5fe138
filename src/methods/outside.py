"""Estimators that live outside the repository, named by their import path.

A researcher's own method enters every command by where its class is, with nothing copied into the
repository:

``"package.module:Class"``
    a class of an importable module (installed, or on ``PYTHONPATH``);
``"path/to/file.py:Class"``
    a class of a Python file anywhere on disk (as benchopt's ``-s path/solver.py``);
``"package.module.Class"``
    Hydra's ``_target_`` spelling of the first form.

:func:`load` imports the class once per process (spawned pool workers import it again by the same name).
Nothing here checks what the class does: :mod:`src.running.gate` tries it on a tiny problem before any cell.
"""

import functools
import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path

from ..errors import ConfigError


def is_import_path(name: str) -> bool:
    """Whether ``name`` names a class by its import path (a ``:`` or a ``.`` in it) rather than a registry name."""
    return isinstance(name, str) and (":" in name or "." in name)


def split(name: str) -> tuple[str, str]:
    """``(module or file, class name)`` of an import path; one line naming the form when it has none."""
    module, sep, attribute = name.rpartition(":")
    if not sep:
        module, sep, attribute = name.rpartition(".")
    if not module or not attribute or not attribute.isidentifier():
        raise ConfigError(f"method {name!r} is not an import path: write package.module:Class or "
                          "path/to/file.py:Class")
    return module, attribute


def module_from_file(file: str):
    """The module of the Python file ``file``, imported under a name made from its resolved path (so that the
    same file is one module in a process, and a spawned worker finds it again)."""
    path = Path(file).expanduser().resolve()
    if not path.is_file():
        raise ConfigError(f"method file {file!r} does not exist (resolved to {path}): give the path of a .py file")
    name = "repro_outside_" + hashlib.sha256(str(path).encode()).hexdigest()[:12]
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


@functools.cache
def load(name: str) -> type:
    """The class at the import path ``name``; a :class:`~src.errors.ConfigError` line when its module does
    not import or has no such class."""
    module_name, attribute = split(name)
    try:
        if module_name.endswith(".py"):
            module = module_from_file(module_name)
        else:
            module = importlib.import_module(module_name)
    except ConfigError:
        raise
    except Exception as exc:  # anything the module raises while it is imported
        detail = " ".join(f"{type(exc).__name__}: {exc}".split())[:200]
        hint = "check the path and PYTHONPATH" if isinstance(exc, ImportError) else "fix the module"
        raise ConfigError(f"method {name!r}: module {module_name!r} does not import ({detail}); {hint}") from None
    try:
        found = getattr(module, attribute)
    except AttributeError:
        raise ConfigError(f"method {name!r}: module {module_name!r} has no {attribute!r}; name a class it "
                          "defines") from None
    if not isinstance(found, type):
        kind = type(found).__name__
        raise ConfigError(f"method {name!r}: {attribute!r} is {'an' if kind[:1] in 'aeiouAEIOU' else 'a'} {kind}, "
                          "not a class; name the estimator's class")
    return found

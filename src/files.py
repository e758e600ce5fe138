"""Writing files that are complete or absent, and readable by the user's collaborators.

Every file the project writes (cell rows, ``results.csv``, tables, figures, the data cache, provenance)
goes through :func:`atomic_path` or :func:`write_atomic`: the content is written to a temporary file in the
target's directory and renamed over the target, so a reader (or a killed run) never sees half a file.
``tempfile.mkstemp`` creates its files with mode 0600 whatever the umask; here the finished file gets the
mode an ordinary ``open(path, "w")`` would have given it (0644 under umask 022, 0664 under 002), so that
collaborators on a shared file system can read the results.
"""

import fcntl
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

__all__ = ["atomic_path", "current_umask", "locked", "make_readable", "write_atomic"]


def current_umask() -> int:
    """The process's file-creation mask, read without changing it where the system allows."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)  # no /proc: read by setting it, then restore it at once
    os.umask(mask)
    return mask


def make_readable(path) -> None:
    """Give ``path`` the mode a newly created regular file gets under the current umask (0666 & ~umask)."""
    os.chmod(path, 0o666 & ~current_umask())


@contextmanager
def atomic_path(path, suffix: str = ".tmp"):
    """Yield a temporary path beside ``path``; on success it replaces ``path``, on error it is removed.

    For writers that want a file name (``savefig``, ``np.savez``); ``suffix`` keeps an extension that
    such writers read (e.g. ``".png"``).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=suffix)
    os.close(fd)
    try:
        yield Path(tmp)
        make_readable(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_atomic(path, content: str | bytes) -> None:
    """Write ``content`` to ``path`` so that readers see either the old file or the complete new one."""
    with atomic_path(path) as tmp:
        with open(tmp, "wb" if isinstance(content, bytes) else "w") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())


@contextmanager
def locked(path: Path):
    """Hold an exclusive advisory lock (``flock``) on the file ``path`` for the duration of the block.

    Runs and sweep jobs sharing a directory take turns through it (results, tables, the progress count).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)

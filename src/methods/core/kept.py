"""What a process keeps of a computation on samples, to serve it again when the same samples come back.

A tuned run fits every setting of a method, and a label method's two folds, on the same samples of a trial.
The parts of a fit that depend on the samples alone come out the same each time: the kNN search of the graph
methods (:mod:`src.methods.graph.knn`), SDA's basis of the samples and its graph term (:mod:`src.methods.sda`).
A :class:`Kept` store serves such a part again as a copy of the arrays first computed, the same numbers bit
for bit, provided its key holds everything the part depends on: :func:`samples_key` for the samples, and the
part's own settings beside it.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable, Hashable

import numpy as np

from .products import blas_threads


def samples_key(X: np.ndarray) -> tuple:
    """The samples as part of a key: a SHA-256 digest of their values, their shape, dtype and memory layout, and
    the BLAS threads numpy runs with (a product's rounding, and so a tie between two distances, can depend on
    them). A contiguous array is read in place, in its own order (the layout in the key tells the two apart)."""
    X = np.asarray(X)
    flags = X.flags
    values = X if flags.c_contiguous else X.T if flags.f_contiguous else np.ascontiguousarray(X)
    digest = hashlib.sha256(values.data).hexdigest()  # SHA instructions where the CPU has them
    return digest, X.shape, X.dtype.str, flags.c_contiguous, flags.f_contiguous, blas_threads()


def _copy(value):
    """A copy in the same memory layout (a product's rounding can depend on it)."""
    return tuple(_copy(part) for part in value) if isinstance(value, tuple) else value.copy(order="K")


def _nbytes(value) -> int:
    return sum(_nbytes(part) for part in value) if isinstance(value, tuple) else value.nbytes


class Kept:
    """Arrays (or tuples of arrays) keyed by what they were computed from, up to ``limit_bytes`` in all, the least
    recently used dropped first (the last one computed always stays).

    Parameters
    ----------
    limit_bytes : int
        Bytes of arrays kept.
    """

    def __init__(self, limit_bytes: int):
        self.limit_bytes = limit_bytes
        self._kept: OrderedDict[Hashable, object] = OrderedDict()

    def get(self, key: Hashable, compute: Callable[[], object]):
        """A copy of what is kept under ``key``, else of ``compute()``, which is kept."""
        found = self._kept.get(key)
        if found is None:
            found = self._kept[key] = compute()
            while len(self._kept) > 1 and sum(_nbytes(kept) for kept in self._kept.values()) > self.limit_bytes:
                self._kept.popitem(last=False)
        else:
            self._kept.move_to_end(key)
        return _copy(found)

    def forget(self) -> None:
        """Drop everything kept."""
        self._kept.clear()

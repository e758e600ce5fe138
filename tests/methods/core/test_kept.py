"""Tests of :mod:`src.methods.core.kept`: what a process keeps of a computation on samples.

A kept result is computed once per key and served as a copy in the same memory layout; the store drops the least
recently used past its bytes; the samples' key tells apart values, shape, dtype and layout.
"""

import numpy as np

from src.methods.core.kept import Kept, samples_key


def counted(value):
    calls = []

    def compute():
        calls.append(1)
        return value

    return compute, calls


def test_a_result_is_computed_once_and_served_as_a_copy_in_its_layout():
    kept = Kept(10**6)
    first = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    compute, calls = counted((first, np.ones(2)))
    a, b = kept.get("x", compute)
    a[0, 0] = -1.0  # a copy: what is kept does not change through it
    again, _ = kept.get("x", compute)
    assert len(calls) == 1 and again[0, 0] == 0.0 and np.array_equal(again, first)
    assert again.flags.f_contiguous and not again.flags.c_contiguous
    kept.forget()
    kept.get("x", compute)
    assert len(calls) == 2


def test_the_least_recently_used_goes_first_past_the_bytes():
    kept = Kept(2 * 80)  # two arrays of ten float64
    made = []
    for key in ("a", "b", "a", "c", "a", "b"):  # c pushes b out, not a (used just before)
        kept.get(key, lambda key=key: made.append(key) or np.zeros(10))
    assert made == ["a", "b", "c", "b"]
    alone = Kept(1)  # the last one computed stays, whatever its size
    compute, calls = counted(np.zeros(100))
    alone.get("big", compute)
    alone.get("big", compute)
    assert len(calls) == 1


def test_the_samples_key_tells_apart_values_shape_dtype_and_layout(rng):
    X = rng.random((20, 6))
    key = samples_key(X)
    assert samples_key(X.copy()) == key
    changed = X.copy()
    changed[3, 2] = np.nextafter(changed[3, 2], 2.0)  # one value, by one unit in the last place
    others = [changed, X.reshape(6, 20), X.astype(np.float32), np.asfortranarray(X), X[:, ::2], X[::2]]
    keys = [samples_key(other) for other in others]
    assert key not in keys and len(set(keys)) == len(keys)
    assert samples_key(X[::2]) == samples_key(X.copy()[::2])  # strided: read through a C copy, the same again

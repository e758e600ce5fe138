"""Approximate k-nearest-neighbour lists by NN-descent (Dong, Charikar and Li 2011): squared Euclidean
distance on float32 rows, in numba code that is compiled once and cached on disk.

:func:`approximate_neighbours` returns, for every row of Y, q approximately nearest other rows, nearest
first: never the row itself, no index twice, every slot filled (q <= n - 1). :mod:`.knn` uses it
above its exact-search threshold.

Algorithm (serial):

1. *The searched copy*: float32, the features by decreasing variance with the constant ones left out
   (exact: they add 0 to every distance), the rows in the leaf order of a first random-projection tree
   (a sample's neighbours are then mostly close in memory); the result is mapped back to the caller's
   order.
2. *Random-projection trees* (``n_trees``, the first one included): each node is split by the
   hyperplane halfway between two of its samples drawn at random, on the ``tree_features`` features of
   largest variance (a sample exactly on the hyperplane goes to a random side; a split that leaves one
   side empty halves the node), down to leaves of at most ``leaf_size`` samples. Every pair of samples
   in a leaf is compared. Rows still short are filled with random samples.
3. *NN-descent*: each sample keeps a max-heap of its q best neighbours with a "new" flag. An
   iteration samples, per sample, at most ``max_candidates`` new and ``max_candidates`` old neighbours
   among its forward and reverse neighbours (random priorities), marks the sampled forward ones old, and
   joins them locally: every new-new and new-old pair of a sample's candidates is compared and each
   offered to the other's heap. It stops after an iteration that changes fewer than ``delta`` n q heap
   entries, or after ``max_iter`` iterations.

Work saved without changing the result: a pair of which one heap already holds the other is not
compared again (every comparison offers both ways and a heap's worst distance only decreases, so it
could change neither heap); a distance is summed in blocks of :data:`BLOCK` features, the largest
differences first, and abandoned once it exceeds the larger of the two heaps' worst distances; one
sample is compared with four at a time (its features read once). Rows are sorted by distance, ties by
index.

Randomness: one seed is drawn from the caller's numpy Generator and everything random (the tree splits,
the fill, the candidate priorities) comes from a splitmix64 stream seeded with it, so the same Generator
state gives the same lists in every process on the same machine (another CPU may vectorize the float
sums differently, and round differently). Floating-point contraction into fused multiply-adds is not
allowed: numba may fuse differently when it compiles in-process and when it writes the cache, which
would give the first process other lists than the later ones.

Compilation: every numba function here is ``@njit(cache=True)`` with concrete argument types and no
function arguments, so the machine code is compiled by the first call after installation (and after
every change of this file). numba writes it next to this module (``src/methods/graph/__pycache__``) or,
when that is not writable, to its user cache directory, and every later process loads it in a fraction
of a second (``NUMBA_DEBUG_CACHE=1`` shows the loads).

Memory: the float32 copy plus O(n q).

References
----------
W. Dong, M. Charikar and K. Li, "Efficient k-nearest neighbor graph construction for generic similarity
measures", Proc. WWW 2011, pp. 577-586 (NN-descent: local join, sampling, early termination).

S. Dasgupta and Y. Freund, "Random projection trees and low dimensional manifolds", Proc. STOC 2008
(random-projection trees, here the initial lists).
"""

import logging

import numpy as np
from numba import njit

from ...checks import fraction_in, integer
from ...errors import ConfigError

logger = logging.getLogger(__name__)

BLOCK = 64
"""Features summed between two checks of a pair's distance against the bound that would reject it."""

N_TREES = 10
"""Default number of random-projection trees of the initialization."""

LEAF_SIZE = 32
"""Default largest leaf of the random-projection trees."""

TREE_FEATURES = 128
"""Default number of features (those of largest variance) on which the trees split."""

MAX_ITER = 20
"""Default largest number of NN-descent iterations."""

DELTA = 0.001
"""Default stopping threshold: fewer than DELTA * n * q heap changes in an iteration."""

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S32, _S40 = (np.uint64(s) for s in (30, 27, 31, 32, 40))
_EMPTY = np.float32(np.inf)
_FAST = {"reassoc", "nsz", "arcp"}  # vectorized sums; no assumption about inf or nan


# -- random numbers: splitmix64 ------------------------------------------------------------------------
@njit(cache=True)
def _next(state):
    """Next 64 random bits of the splitmix64 stream whose state is ``state[0]`` (uint64, updated)."""
    state[0] += _GOLDEN
    z = state[0]
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit(cache=True)
def _below(state, bound):
    """A random integer in [0, bound), bound < 2**32 (multiply-shift of the high 32 bits)."""
    return np.int64(((_next(state) >> _S32) * np.uint64(bound)) >> _S32)


@njit(cache=True)
def _uniform(state):
    """A random float32 in [0, 1) with 24 random bits."""
    return np.float32(_next(state) >> _S40) * np.float32(1.0 / 16777216.0)


# -- distances and heaps -------------------------------------------------------------------------------
@njit(cache=True, fastmath=_FAST)
def _distance(Y, a, b, bound):
    """||Y[a] - Y[b]||^2, or a partial sum > ``bound`` as soon as one exceeds it."""
    x, y = Y[a], Y[b]
    m = x.shape[0]
    whole = m - m % BLOCK
    total = np.float32(0.0)
    for start in range(0, whole, BLOCK):
        part = np.float32(0.0)
        for t in range(BLOCK):  # a constant trip count, so that numba vectorizes the loop
            diff = x[start + t] - y[start + t]
            part += diff * diff
        total += part
        if total > bound:
            return total
    for t in range(whole, m):
        diff = x[t] - y[t]
        total += diff * diff
    return total


@njit(cache=True, fastmath=_FAST)
def _distance4(Y, a, b0, b1, b2, b3, bound0, bound1, bound2, bound3):
    """:func:`_distance` from sample a to four samples at once (a's features read once per block), summed
    until every one exceeds its bound."""
    x, y0, y1, y2, y3 = Y[a], Y[b0], Y[b1], Y[b2], Y[b3]
    m = x.shape[0]
    whole = m - m % BLOCK
    total0 = total1 = total2 = total3 = np.float32(0.0)
    for start in range(0, whole, BLOCK):
        part0 = part1 = part2 = part3 = np.float32(0.0)
        for t in range(BLOCK):
            value = x[start + t]
            diff = value - y0[start + t]
            part0 += diff * diff
            diff = value - y1[start + t]
            part1 += diff * diff
            diff = value - y2[start + t]
            part2 += diff * diff
            diff = value - y3[start + t]
            part3 += diff * diff
        total0 += part0
        total1 += part1
        total2 += part2
        total3 += part3
        if total0 > bound0 and total1 > bound1 and total2 > bound2 and total3 > bound3:
            return total0, total1, total2, total3
    for t in range(whole, m):
        value = x[t]
        diff = value - y0[t]
        total0 += diff * diff
        diff = value - y1[t]
        total1 += diff * diff
        diff = value - y2[t]
        total2 += diff * diff
        diff = value - y3[t]
        total3 += diff * diff
    return total0, total1, total2, total3


@njit(cache=True)
def _holds(indices, i, j):
    """Whether row i's heap holds j."""
    for s in range(indices.shape[1]):
        if indices[i, s] == j:
            return True
    return False


@njit(cache=True)
def _insert(indices, distances, flags, i, j, d):
    """Put j (flagged new) at distance d into the max-heap of row i in place of its root (the worst)."""
    q = indices.shape[1]
    pos = 0
    while True:
        child = 2 * pos + 1
        if child >= q:
            break
        if child + 1 < q and distances[i, child + 1] > distances[i, child]:
            child += 1
        if distances[i, child] <= d:
            break
        indices[i, pos] = indices[i, child]
        distances[i, pos] = distances[i, child]
        flags[i, pos] = flags[i, child]
        pos = child
    indices[i, pos] = j
    distances[i, pos] = d
    flags[i, pos] = 1


@njit(cache=True)
def _settle(indices, distances, flags, a, b, d):
    """Offer samples a and b, which neither heap holds, to each other's heap at distance d; the number of
    heap changes (0, 1 or 2)."""
    changes = 0
    if d < distances[a, 0]:
        _insert(indices, distances, flags, a, b, d)
        changes += 1
    if d < distances[b, 0]:
        _insert(indices, distances, flags, b, a, d)
        changes += 1
    return changes


@njit(cache=True)
def _compare(Y, indices, distances, flags, a, b):
    """Compare samples a and b, which neither heap holds, and offer each to the other's heap; the number
    of heap changes."""
    return _settle(indices, distances, flags, a, b, _distance(Y, a, b, max(distances[a, 0], distances[b, 0])))


@njit(cache=True)
def _offer_pair(Y, indices, distances, flags, a, b):
    """:func:`_compare` of samples a != b unless one heap already holds the other.

    Every comparison offers both ways, and a heap's worst distance only decreases, so once a heap holds
    the other sample the pair has been compared and can change neither heap.
    """
    if _holds(indices, a, b) or _holds(indices, b, a):
        return 0
    return _compare(Y, indices, distances, flags, a, b)


@njit(cache=True)
def _compare4(Y, indices, distances, flags, a, b):
    """:func:`_compare` of sample a with the four samples b[0], ..., b[3]."""
    root = distances[a, 0]
    bound0, bound1 = max(root, distances[b[0], 0]), max(root, distances[b[1], 0])
    bound2, bound3 = max(root, distances[b[2], 0]), max(root, distances[b[3], 0])
    d0, d1, d2, d3 = _distance4(Y, a, b[0], b[1], b[2], b[3], bound0, bound1, bound2, bound3)
    if d0 >= bound0 and d1 >= bound1 and d2 >= bound2 and d3 >= bound3:  # the usual case: nothing to offer
        return 0
    return (_settle(indices, distances, flags, a, b[0], d0) + _settle(indices, distances, flags, a, b[1], d1)
            + _settle(indices, distances, flags, a, b[2], d2) + _settle(indices, distances, flags, a, b[3], d3))


@njit(cache=True)
def _join_group(Y, indices, distances, flags, group, n_new, n_group, position, held):
    """Compare the pairs of the distinct samples ``group[:n_group]`` that include one of the first ``n_new``,
    skipping those of which one heap already holds the other (see :func:`_offer_pair`). ``position``
    (length n, all -1) and ``held`` (at least n_group x n_group) are workspaces; ``position`` is left all -1.
    Returns the number of heap changes.

    A pair's heaps are looked up once for the whole group: a heap gains a sample of the group only through
    that pair's own comparison, which happens once.
    """
    q = indices.shape[1]
    for x in range(n_group):
        position[group[x]] = x
    held[:n_group, :n_group] = 0
    for x in range(n_group):
        a = group[x]
        for s in range(q):
            j = indices[a, s]
            if j >= 0:
                y = position[j]
                if y >= 0:
                    held[x, y] = 1
                    held[y, x] = 1
    changes = 0
    batch = np.empty(4, np.int64)
    for x in range(n_new):
        a = group[x]
        count = 0
        for y in range(x + 1, n_group):
            if held[x, y]:
                continue
            batch[count] = group[y]
            count += 1
            if count == 4:
                changes += _compare4(Y, indices, distances, flags, a, batch)
                count = 0
        for r in range(count):
            changes += _compare(Y, indices, distances, flags, a, batch[r])
    for x in range(n_group):
        position[group[x]] = -1
    return changes


# -- initialization ------------------------------------------------------------------------------------
@njit(cache=True, fastmath=_FAST)
def _margin(Y, row, normal, offset):
    """Signed side of sample ``row`` with respect to the hyperplane normal . y = offset (the first
    len(normal) features)."""
    total = np.float32(0.0)
    for t in range(normal.shape[0]):
        total += Y[row, t] * normal[t]
    return total - offset


@njit(cache=True)
def _rp_tree(Y, order, leaf_size, n_features, state, leaf_starts):
    """Split the samples listed in ``order`` (rearranged in place) into the leaves of one random-projection
    tree on the first ``n_features`` features, left to right; ``leaf_starts`` (length n + 1) receives the
    leaves' bounds. Returns the leaf count.
    """
    n = Y.shape[0]
    m = min(n_features, Y.shape[1])
    starts = np.empty(n + 1, np.int64)
    stops = np.empty(n + 1, np.int64)
    left_side = np.empty(n, np.bool_)
    normal = np.empty(m, np.float32)
    starts[0], stops[0] = 0, n
    top = 1
    n_leaves = 0
    while top > 0:
        top -= 1
        start, stop = starts[top], stops[top]
        size = stop - start
        if size <= leaf_size:
            leaf_starts[n_leaves] = start
            n_leaves += 1
            continue
        first = _below(state, size)
        second = _below(state, size - 1)
        second += second >= first
        a, b = order[start + first], order[start + second]
        offset = np.float32(0.0)
        for t in range(m):
            normal[t] = Y[a, t] - Y[b, t]
            offset += normal[t] * (Y[a, t] + Y[b, t]) * np.float32(0.5)
        n_left = 0
        for p in range(start, stop):
            side = _margin(Y, order[p], normal, offset)
            left_side[p] = side < 0 or (side == 0 and _below(state, 2) == 0)
            n_left += left_side[p]
        if n_left == 0 or n_left == size:  # every sample on one side (e.g. all equal): halve
            middle = start + size // 2
        else:
            low, high = start, stop - 1
            while True:
                while low <= high and left_side[low]:
                    low += 1
                while low <= high and not left_side[high]:
                    high -= 1
                if low >= high:
                    break
                order[low], order[high] = order[high], order[low]
                left_side[low], left_side[high] = True, False
            middle = start + n_left
        starts[top], stops[top] = middle, stop  # right half below the left one: leaves come left to right
        starts[top + 1], stops[top + 1] = start, middle
        top += 2
    leaf_starts[n_leaves] = n
    return n_leaves


@njit(cache=True)
def _join_leaves(Y, order, leaf_starts, n_leaves, indices, distances, flags, position, held):
    """Compare every pair of samples that share a leaf (workspaces as in :func:`_join_group`)."""
    for leaf in range(n_leaves):
        start, stop = leaf_starts[leaf], leaf_starts[leaf + 1]
        group = order[start:stop]
        _join_group(Y, indices, distances, flags, group, stop - start, stop - start, position, held)


@njit(cache=True)
def _fill_at_random(Y, indices, distances, flags, state):
    """Complete every row that still has an empty slot (index -1) with random other samples."""
    n = Y.shape[0]
    for i in range(n):
        while indices[i, 0] < 0:  # an empty slot has distance inf: it is the root while one is left
            j = _below(state, n)
            if j != i:
                _offer_pair(Y, indices, distances, flags, i, j)


@njit(cache=True)
def _column_spread(Y):
    """Per feature: the variance (float64 sums about the first sample) and whether it is constant."""
    n, m = Y.shape
    total = np.zeros(m)
    squares = np.zeros(m)
    constant = np.ones(m, np.bool_)
    for i in range(n):
        for t in range(m):
            diff = np.float64(Y[i, t]) - np.float64(Y[0, t])
            total[t] += diff
            squares[t] += diff * diff
            constant[t] &= diff == 0
    return squares / n - (total / n) ** 2, constant


# -- NN-descent ------------------------------------------------------------------------------------------
@njit(cache=True)
def _sample(candidates, priorities, i, j, priority):
    """Keep j among row i's candidates if its priority is among the row's smallest (max-heap on priority)."""
    if not priority < priorities[i, 0]:
        return
    size = candidates.shape[1]
    for s in range(size):
        if candidates[i, s] == j:
            return
    pos = 0
    while True:
        child = 2 * pos + 1
        if child >= size:
            break
        if child + 1 < size and priorities[i, child + 1] > priorities[i, child]:
            child += 1
        if priorities[i, child] <= priority:
            break
        candidates[i, pos] = candidates[i, child]
        priorities[i, pos] = priorities[i, child]
        pos = child
    candidates[i, pos] = j
    priorities[i, pos] = priority


@njit(cache=True)
def _candidates(indices, flags, new, new_priority, old, old_priority, state):
    """Sample each row's new candidates, then the old ones of the rows that have new ones (the local join
    reads no other), from the forward and reverse neighbours; mark the sampled forward new neighbours old.
    Returns the number of rows with new candidates."""
    n, q = indices.shape
    size = new.shape[1]
    new[:] = -1
    old[:] = -1
    new_priority[:] = np.inf
    old_priority[:] = np.inf
    for i in range(n):
        for s in range(q):
            if flags[i, s]:
                j = indices[i, s]
                _sample(new, new_priority, i, j, _uniform(state))
                _sample(new, new_priority, j, i, _uniform(state))
    active = np.zeros(n, np.bool_)
    for i in range(n):
        for c in range(size):
            active[i] |= new[i, c] >= 0
    for i in range(n):
        for s in range(q):
            if not flags[i, s]:
                j = indices[i, s]
                if active[i]:
                    _sample(old, old_priority, i, j, _uniform(state))
                if active[j]:
                    _sample(old, old_priority, j, i, _uniform(state))
    n_active = 0
    for i in range(n):
        if active[i]:
            n_active += 1
            for s in range(q):
                if flags[i, s]:
                    for c in range(size):
                        if new[i, c] == indices[i, s]:
                            flags[i, s] = 0
                            break
    return n_active


@njit(cache=True)
def _local_join(Y, indices, distances, flags, new, old, position, held):
    """Compare every new-new and new-old pair of each row's candidates (an old one that is also new counts
    as new); the number of heap changes. Workspaces as in :func:`_join_group`."""
    n, size = new.shape
    group = np.empty(2 * size, np.int64)
    changes = 0
    for i in range(n):
        n_group = 0
        for c in range(size):
            if new[i, c] >= 0:
                group[n_group] = new[i, c]
                position[new[i, c]] = n_group  # marks the new ones, to leave them out of the old
                n_group += 1
        n_new = n_group
        for c in range(size):
            if old[i, c] >= 0 and position[old[i, c]] < 0:
                group[n_group] = old[i, c]
                n_group += 1
        for x in range(n_new):
            position[group[x]] = -1
        if n_new:
            changes += _join_group(Y, indices, distances, flags, group, n_new, n_group, position, held)
    return changes


@njit(cache=True)
def _sort_rows(indices, distances, labels):
    """Sort every row by distance, ties by the samples' labels (their indices in the caller's order);
    insertion sort: rows are short."""
    n, q = indices.shape
    for i in range(n):
        for s in range(1, q):
            j, d = indices[i, s], distances[i, s]
            p = s - 1
            while p >= 0 and (distances[i, p] > d
                              or (distances[i, p] == d and labels[indices[i, p]] > labels[j])):
                indices[i, p + 1] = indices[i, p]
                distances[i, p + 1] = distances[i, p]
                p -= 1
            indices[i, p + 1] = j
            distances[i, p + 1] = d


@njit(cache=True)
def _search(Y, q, n_trees, leaf_size, tree_features, max_candidates, max_iter, delta, state, leaf_starts,
            n_leaves):
    """The q-neighbour lists of Y's rows: trees, fill, NN-descent iterations. The rows are in the leaf
    order of the first tree, whose ``n_leaves`` leaves start at ``leaf_starts``; ``state`` is the random
    stream's.

    Returns (indices (n, q) int32, their distances (n, q) float32, both in heap order, the iterations run).
    """
    n = Y.shape[0]
    indices = np.full((n, q), -1, np.int32)
    distances = np.full((n, q), _EMPTY, np.float32)
    flags = np.zeros((n, q), np.uint8)
    position = np.full(n, -1, np.int64)
    width = max(leaf_size, 2 * max_candidates)
    held = np.zeros((width, width), np.uint8)
    order = np.arange(n)
    _join_leaves(Y, order, leaf_starts, n_leaves, indices, distances, flags, position, held)
    for tree in range(1, n_trees):
        for i in range(n):
            order[i] = i
        n_leaves = _rp_tree(Y, order, leaf_size, tree_features, state, leaf_starts)
        _join_leaves(Y, order, leaf_starts, n_leaves, indices, distances, flags, position, held)
    _fill_at_random(Y, indices, distances, flags, state)

    new = np.empty((n, max_candidates), np.int32)
    old = np.empty((n, max_candidates), np.int32)
    new_priority = np.empty((n, max_candidates), np.float32)
    old_priority = np.empty((n, max_candidates), np.float32)
    iterations = 0
    for iteration in range(max_iter):
        _candidates(indices, flags, new, new_priority, old, old_priority, state)
        changes = _local_join(Y, indices, distances, flags, new, old, position, held)
        iterations += 1
        if changes < delta * n * q:
            break
    return indices, distances, iterations


@njit(cache=True)
def _gather(Y, rows, features, scale):
    """float32 copy of Y[rows][:, features] times ``scale``."""
    out = np.empty((rows.shape[0], features.shape[0]), np.float32)
    for r in range(rows.shape[0]):
        for t in range(features.shape[0]):
            out[r, t] = np.float32(Y[rows[r], features[t]]) * scale
    return out


@njit(cache=True)
def _first_tree(Y, leaf_size, state):
    """One random-projection tree on all of Y's features: the rows in leaf order, the leaf bounds, the leaf
    count."""
    n = Y.shape[0]
    order = np.arange(n)
    leaf_starts = np.empty(n + 1, np.int64)
    n_leaves = _rp_tree(Y, order, leaf_size, Y.shape[1], state, leaf_starts)
    return order, leaf_starts, n_leaves


# -- public ----------------------------------------------------------------------------------------------
def _check_int(name, value, low):
    return int(integer(low).check(name, value))


def approximate_neighbours(Y, q: int, rng: np.random.Generator, *, n_trees: int = N_TREES,
                           leaf_size: int = LEAF_SIZE, tree_features: int = TREE_FEATURES,
                           max_candidates: int | None = None, max_iter: int = MAX_ITER,
                           delta: float = DELTA) -> np.ndarray:
    """q approximately nearest other rows of every row of Y (squared Euclidean distance), nearest first.

    Parameters
    ----------
    Y : array-like of shape (n, m)
        One sample per row, finite; searched as a float32 copy (features reordered, see the module
        docstring).
    q : int
        Neighbours per row, 1 <= q <= n - 1.
    rng : numpy.random.Generator
        One seed is drawn from it; the result is a function of that seed (see the module docstring).
    n_trees : int, default=N_TREES
        Random-projection trees of the initialization (>= 1).
    leaf_size : int, default=LEAF_SIZE
        Largest leaf of those trees (>= 2).
    tree_features : int, default=TREE_FEATURES
        The trees split on this many features of largest variance (>= 1).
    max_candidates : int or None, default=None
        New and old candidates sampled per row and iteration (>= 1); None means q.
    max_iter : int, default=MAX_ITER
        Largest number of NN-descent iterations (0: the trees and the random fill only).
    delta : float, default=DELTA
        The iterations stop after one that changes fewer than delta * n * q heap entries.

    Returns
    -------
    ndarray of intp, shape (n, q)
        Row i lists distinct indices other than i, sorted by their float32 squared distance to row i,
        ties by index.

    References
    ----------
    W. Dong, M. Charikar and K. Li, Proc. WWW 2011 (NN-descent).
    """
    Y = np.asarray(Y)
    if Y.ndim != 2:
        raise ConfigError(f"Y must be a 2-d array, got shape {Y.shape}")
    n = Y.shape[0]
    q = _check_int("q", q, 1)
    if q > n - 1:
        raise ConfigError(f"q={q} must be at most n - 1 = {n - 1}")
    n_trees = _check_int("n_trees", n_trees, 1)
    leaf_size = _check_int("leaf_size", leaf_size, 2)
    tree_features = _check_int("tree_features", tree_features, 1)
    max_candidates = q if max_candidates is None else _check_int("max_candidates", max_candidates, 1)
    max_iter = _check_int("max_iter", max_iter, 0)
    fraction_in(0, 1, include_low=True, include_high=False).check("delta", delta)

    Y, features, scale = _prepared(Y)
    state = np.array([rng.integers(np.iinfo(np.int64).max, dtype=np.int64)], dtype=np.uint64)
    # the first tree, on the features it splits on, orders the rows of the copy that is searched: samples
    # of a leaf, and most of a sample's neighbours, end up close in memory
    head = _gather(Y, np.arange(n), features[:tree_features], scale)
    order, leaf_starts, n_leaves = _first_tree(head, np.int64(leaf_size), state)
    del head
    Z = _gather(Y, order, features, scale)
    indices, distances, iterations = _search(Z, np.int64(q), np.int64(n_trees), np.int64(leaf_size),
                                             np.int64(tree_features), np.int64(max_candidates),
                                             np.int64(max_iter), np.float64(delta), state, leaf_starts, n_leaves)
    logger.debug("NN-descent on %d x %d (%d features vary), q=%d: %d iterations", n, Y.shape[1], Z.shape[1],
                 q, iterations)
    del Z
    _sort_rows(indices, distances, order)
    neighbours = np.empty((n, q), dtype=np.intp)
    neighbours[order] = order[indices]
    return neighbours


def _prepared(Y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.float32]:
    """Y as a C-contiguous float32 or float64 array, the features to search and the scale to search them at.

    The features are those not constant over all samples (the others add exactly 0 to every distance; at
    least one is kept), by decreasing variance: summing a pair's distance in this order puts the largest
    differences first, so that a distance that cannot enter a heap is abandoned sooner. The scale is a power
    of two (exact, it keeps every distance's rank), 1 unless the squared distances could overflow float32.

    Raises ConfigError if Y holds inf or nan or values beyond float32's range.
    """
    if Y.dtype not in (np.float32, np.float64) or not Y.flags.c_contiguous:
        Y = np.ascontiguousarray(Y, dtype=np.float32 if Y.dtype == np.float32 else np.float64)
    largest = max(abs(float(Y.min())), abs(float(Y.max()))) if Y.size else 0.0
    if not np.isfinite(largest) or largest > float(np.finfo(np.float32).max):
        raise ConfigError("Y must be finite and within float32's range, got inf, nan or a larger value")
    variance, constant = _column_spread(Y)
    features = np.argsort(-variance, kind="stable")
    features = features[~constant[features]]
    if features.size == 0:
        features = np.zeros(min(1, Y.shape[1]), dtype=np.intp)
    # a squared distance is at most m (2 largest)^2: kept below 2^120 (float32 ends at 2^128)
    exponent = np.ceil(np.log2(max(features.size * (2.0 * largest) ** 2, 1.0)) / 2) - 60
    return Y, features.astype(np.int64), np.float32(2.0 ** -max(exponent, 0))

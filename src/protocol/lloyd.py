"""Lloyd's KMeans with every restart advancing together: scikit-learn's iterates, without its per-run cost.

The protocol clusters each representation with the best of 20 KMeans runs (plus the readouts' 1 and 10). On the
small embeddings of ORL and Yale (tens to a few hundred samples, k columns) a scikit-learn ``KMeans`` run is
mostly set-up and Python around a few microseconds of arithmetic; :func:`lloyd_restarts` runs the restarts as
one stack instead: one call per step for all of them, each restart stopped by its own rule and dropped from
the stack when it stops. On larger problems scikit-learn's compiled loop, which does a step in one pass over
the data, is the faster (:data:`src.protocol.clustering.STACKED_UP_TO` chooses).

It follows ``sklearn.cluster.KMeans(init="random", algorithm="lloyd")`` step for step, so that the partitions
are scikit-learn's (tested against it in ``tests/protocol/test_lloyd.py``):

* the data centred on its mean; the tolerance ``tol`` times the mean of the columns' variances;
* the starts drawn from one ``RandomState`` as scikit-learn draws them, restart after restart
  (``choice(n, k, replace=False, p=uniform)``);
* an iteration assigns each sample to the centre with the lowest ``|c|^2 - 2 x.c`` (the first lowest), sums
  the members of each cluster in sample order, moves the centres of empty clusters to the samples farthest
  from their centres, divides by the counts (as a product with their inverse) and measures the shift
  (``_squared_distances``, the same unrolled sums);
* a restart stops when its labels repeat (then they are final) or when its summed squared shift is at most
  the tolerance (then its samples are assigned once more to its last centres), or after ``max_iter``;
* its objective is the summed squared distance of each sample to its centre; the kept restart is the first
  whose objective is lower than the kept one's with a partition that is not the kept one relabelled.

Each restart's distance product is its own BLAS call of scikit-learn's shape (``numpy.matmul`` over the stack),
the sums run sample after sample as scikit-learn's loop adds them, and the norms and shifts are summed in its
order, so the iterates agree to the last bit where numpy's BLAS and scikit-learn's round a product alike.
Where they do not, a sample equidistant to two centres to rounding may be assigned differently; the tests
allow that only where the data has such ties.

References
----------
S. P. Lloyd, "Least squares quantization in PCM", IEEE Trans. Information Theory 28(2):129-137, 1982.
F. Pedregosa et al., "Scikit-learn: machine learning in Python", JMLR 12:2825-2830, 2011 (``KMeans``).
"""

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning


def _squared_distances(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Row-wise ||a - b||^2 over the last axis, summed as scikit-learn's ``_euclidean_dense_dense`` sums:
    groups of four squares added left to right, the groups and then the remaining squares added in turn."""
    difference = A - B
    squares = difference * difference
    d = squares.shape[-1]
    total = np.zeros(squares.shape[:-1])
    for start in range(0, d - d % 4, 4):
        total += ((squares[..., start] + squares[..., start + 1]) + squares[..., start + 2]) + squares[..., start + 3]
    for column in range(d - d % 4, d):
        total += squares[..., column]
    return total


def _assign(X: np.ndarray, centers: np.ndarray) -> np.ndarray:
    """Labels of the samples for each stack of centres: the first centre with the lowest |c|^2 - 2 x.c.

    X: (n, d); centers: (r, k, d). Returns int32 labels of shape (r, n).
    """
    norms = np.einsum("rkd,rkd->rk", centers, centers)  # |c|^2, as sklearn's row_norms
    distances = np.matmul(X, centers.transpose(0, 2, 1))  # x.c, (r, n, k): each restart's product, as sklearn's
    distances *= -2.0
    distances += norms[:, None, :]  # sklearn's gemm(alpha=-2, beta=1) on |c|^2
    lowest = distances[:, :, 0].copy()
    labels = np.zeros(lowest.shape, dtype=np.int32)
    for cluster in range(1, centers.shape[1]):  # the first lowest, cluster after cluster as sklearn's loop
        closer = distances[:, :, cluster] < lowest
        labels[closer] = cluster
        np.minimum(lowest, distances[:, :, cluster], out=lowest)
    return labels


def _update_centers(X: np.ndarray, labels: np.ndarray, old: np.ndarray) -> np.ndarray:
    """New centres of each restart from its labels (sums in sample order, empty clusters relocated, averaged).

    X: (n, d); labels: (r, n); old: (r, k, d). Returns the new centres, shape (r, k, d).
    """
    r, k, d = old.shape
    cluster = labels + (np.arange(r) * k)[:, None]  # (r, n): the cluster's row among all restarts' clusters
    counts = np.bincount(cluster.ravel(), minlength=r * k).astype(np.float64).reshape(r, k)
    bins = (cluster[:, :, None] * d + np.arange(d)).ravel()  # (restart, sample, column) in that order
    values = np.broadcast_to(X, (r,) + X.shape).ravel()
    sums = np.bincount(bins, weights=values, minlength=r * k * d).reshape(r, k, d)  # members in sample order
    for restart in np.flatnonzero((counts == 0).any(axis=1)):
        _relocate_empty(X, labels[restart], old[restart], sums[restart], counts[restart])
    still_empty = np.flatnonzero((counts == 0).any(axis=1))  # duplicate samples: nothing was moved
    unaveraged = sums[still_empty].copy()
    sums *= (1.0 / np.maximum(counts, 1.0))[:, :, None]  # sklearn: each sum times 1 / its count
    for restart, raw in zip(still_empty, unaveraged):
        sums[restart] = _average(raw, counts[restart])
    return sums


def _relocate_empty(X, labels, old, sums, counts) -> None:
    """Empty clusters take the samples farthest from their centres (scikit-learn's relocation), in place."""
    empty = np.flatnonzero(counts == 0)
    distances = ((X - old[labels]) ** 2).sum(axis=1)
    far = np.argpartition(distances, -empty.size)[:-empty.size - 1:-1]
    if np.max(distances) == 0:  # more clusters than distinct samples: nothing to move
        return
    for cluster, sample in zip(empty, far):
        source = labels[sample]
        sums[source] -= X[sample]
        sums[cluster] = X[sample]
        counts[cluster] = 1.0
        counts[source] -= 1.0


def _average(sums, counts) -> np.ndarray:
    """Sums to means, cluster after cluster as scikit-learn's loop goes: an empty cluster takes the row of the
    largest one as it stands then (its sum if the largest comes later, its mean if it came before)."""
    largest = int(np.argmax(counts))
    for cluster in range(len(counts)):
        if counts[cluster] > 0:
            sums[cluster] *= 1.0 / counts[cluster]
        else:
            sums[cluster] = sums[largest]
    return sums


def _same_clustering(labels1: np.ndarray, labels2: np.ndarray) -> bool:
    """Whether each cluster of ``labels1`` lies in one cluster of ``labels2`` (scikit-learn's test)."""
    pairs = np.unique(np.stack([labels1, labels2]), axis=1)
    return pairs.shape[1] == np.unique(labels1).size


def lloyd_restarts(Z, n_clusters: int, n_restarts: int, random_state: int, max_iter: int = 300,
                   tol: float = 1e-4):
    """The best of ``n_restarts`` Lloyd runs from random samples, as ``KMeans(init="random", n_init=n_restarts,
    algorithm="lloyd", random_state=random_state)`` finds it (see the module docstring).

    Parameters
    ----------
    Z : ndarray of shape (n_samples, n_dims)
        Representation to cluster.
    n_clusters : int
    n_restarts : int
    random_state : int
        Seed of the ``RandomState`` the starts are drawn from.
    max_iter : int
        Iterations per run.
    tol : float
        Tolerance on the summed squared centre shift, relative to the mean variance of the columns.

    Returns
    -------
    labels : ndarray of shape (n_samples,), int32
    inertia : float
        Summed squared distance of the samples to their centres in the kept run.
    """
    X = np.array(Z, dtype=np.float64, order="C")
    n = len(X)
    tolerance = np.mean(np.var(X, axis=0)) * tol if tol else 0.0
    X -= X.mean(axis=0)
    random = np.random.RandomState(random_state)
    weights = np.ones(n)  # scikit-learn's unit sample weights, their shares the draws' probabilities
    starts = [random.choice(n, size=n_clusters, replace=False, p=weights / weights.sum())
              for _ in range(n_restarts)]
    centers = X[np.array(starts)]  # (r, k, d)
    labels = np.full((n_restarts, n), -1, dtype=np.int32)
    final = np.empty_like(labels)
    final_centers = np.empty_like(centers)
    active = np.arange(n_restarts)
    for _ in range(max_iter):
        new_labels = _assign(X, centers)
        new_centers = _update_centers(X, new_labels, centers)
        shift = np.sqrt(_squared_distances(new_centers, centers))
        strict = (new_labels == labels).all(axis=1)
        within = (shift ** 2).sum(axis=1) <= tolerance  # the shift's root squared again, as scikit-learn
        done = strict | within
        if within[~strict].any():  # stopped on the shift: the samples assigned to the last centres
            relabel = within & ~strict
            new_labels[relabel] = _assign(X, new_centers[relabel])
        final[active[done]], final_centers[active[done]] = new_labels[done], new_centers[done]
        active, centers, labels = active[~done], new_centers[~done], new_labels[~done]
        if not active.size:
            break
    else:  # max_iter reached: the last labels are assigned to the last centres
        final[active] = _assign(X, centers)
        final_centers[active] = centers
    distances = _squared_distances(X[None], final_centers[np.arange(n_restarts)[:, None], final])
    inertia = np.cumsum(distances, axis=1)[:, -1]  # summed sample after sample, as scikit-learn's loop
    best = 0
    for restart in range(1, n_restarts):
        if inertia[restart] < inertia[best] and not _same_clustering(final[restart], final[best]):
            best = restart
    if np.unique(final[best]).size < n_clusters:
        warnings.warn(f"Number of distinct clusters ({np.unique(final[best]).size}) found smaller than n_clusters "
                      f"({n_clusters}). Possibly due to duplicate points in X.", ConvergenceWarning, stacklevel=2)
    return final[best], float(inertia[best])

"""KMeans with restarts, keeping the run with the lowest KMeans objective (the papers' "best of 20").

Two distances: Euclidean (scikit-learn's KMeans, whose ``n_init`` keeps the lowest-inertia run) and cosine
(spherical KMeans: samples and centroids on the unit sphere, objective sum of 1 - cos), which the CCF paper
uses. Starting centroids are distinct random samples, as in Deng Cai's ``litekmeans`` (its default
``'sample'`` start), i.e. scikit-learn's ``init="random"``; ``init="k-means++"`` is also accepted.

Euclidean KMeans runs Lloyd's iteration on low-dimensional representations (the factorizations' rank-k
embeddings) and Elkan's on data with more than :data:`ELKAN_ABOVE_DIMS` columns (the KMeans baseline and
COP-KMeans-like uses on raw samples). Elkan's variant is exact (the same iterates as Lloyd's up to floating-point
ties; it skips distances that the triangle inequality rules out): it saves distance computations where they
are expensive, in many dimensions, and costs more than it saves on low-dimensional embeddings.

The restarts of one clustering advance together where Python, not arithmetic, would set the pace: the spherical
runs always (``_spherical_restarts``: one product per iteration for every run still going), the Euclidean
ones from random starts on small problems (:data:`STACKED_UP_TO`; :mod:`.lloyd`, scikit-learn's iterates).
Each run keeps its own start, its own stopping and its own result, so the partitions are those of the runs one
after another: the same starts from the same generator, and each run's products computed as they would be alone
(``numpy.matmul`` over the stack, one product per run).
"""

import numpy as np
from scipy import sparse
from sklearn.cluster import KMeans
from sklearn.preprocessing import normalize

from ..checks import one_of
from .lloyd import lloyd_restarts

METRICS = ("euclidean", "cosine")
INITS = ("random", "k-means++")
ELKAN_ABOVE_DIMS = 100
"""Euclidean KMeans uses Elkan's algorithm on data with more columns than this, Lloyd's otherwise."""
STACKED_UP_TO = 2_000
"""Euclidean KMeans from random starts runs its restarts as one stack (:func:`.lloyd.lloyd_restarts`, the same
partitions as scikit-learn's) on problems of at most this many samples times clusters, where scikit-learn's
cost per run is mostly set-up; above it, scikit-learn's compiled loop is the faster."""


def best_kmeans(Z, n_clusters: int, n_restarts: int, metric: str, seed, init: str = "random", max_iter: int = 300):
    """Cluster the rows of Z, keeping the best of ``n_restarts`` runs.

    Parameters
    ----------
    Z : ndarray of shape (n_samples, n_dims)
        Representation to cluster.
    n_clusters : int
    n_restarts : int
        Number of runs from different starts; the one with the lowest objective is kept.
    metric : {"euclidean", "cosine"}
    seed : int or numpy.random.SeedSequence
        Seed of the starts.
    init : {"random", "k-means++"}
    max_iter : int
        Iterations per run.

    Returns
    -------
    labels : ndarray of shape (n_samples,)
    objective : float
        KMeans objective of the kept run (inertia, or sum of 1 - cos for cosine).
    """
    one_of(METRICS).check("protocol.kmeans_metric", metric)
    one_of(INITS).check("protocol.kmeans_init", init)
    rng = np.random.default_rng(seed)
    if metric == "euclidean":
        random_state = int(rng.integers(2**31 - 1))
        if (init == "random" and Z.shape[1] <= ELKAN_ABOVE_DIMS and Z.dtype == np.float64
                and Z.shape[0] * n_clusters <= STACKED_UP_TO):
            return lloyd_restarts(Z, n_clusters, n_restarts, random_state, max_iter)
        algorithm = "elkan" if Z.shape[1] > ELKAN_ABOVE_DIMS else "lloyd"
        model = KMeans(n_clusters, init=init, n_init=n_restarts, max_iter=max_iter, algorithm=algorithm,
                       random_state=random_state)
        labels = model.fit_predict(Z)
        return labels, float(model.inertia_)
    Zn = normalize(np.asarray(Z, dtype=np.float64))
    starts = np.array([_spherical_start(Zn, n_clusters, rng, init) for _ in range(n_restarts)])
    labels, objectives = _spherical_restarts(Zn, starts, max_iter)
    best = 0
    for restart in range(1, n_restarts):  # the first strictly lowest, restart after restart
        if objectives[restart] < objectives[best]:
            best = restart
    return labels[best], float(objectives[best])


def _spherical_start(Zn, n_clusters, rng, init):
    """Starting centroids of one spherical KMeans run (k x d): distinct random samples, or k-means++ seeding
    with the cosine dissimilarity 1 - cos."""
    n = Zn.shape[0]
    if init == "random":
        return Zn[rng.choice(n, n_clusters, replace=False)]
    centers = [Zn[rng.integers(n)]]
    for _ in range(1, n_clusters):
        d = np.clip(1.0 - (Zn @ np.array(centers).T).max(axis=1), 0.0, None)
        centers.append(Zn[rng.choice(n, p=d / d.sum())] if d.sum() > 0 else Zn[rng.integers(n)])
    return np.array(centers)


def _spherical_restarts(Zn, centers, max_iter):
    """Spherical KMeans runs on the unit-norm rows Zn (n x d) from the starts ``centers`` (r x k x d), advancing
    together; each stops when its labels repeat (or after ``max_iter`` iterations) and leaves the stack.

    Each run assigns a sample to the centroid of highest cosine, re-seeds an empty cluster with the samples
    farthest from their centroid, and normalizes the members' sums. Returns the labels (r x n) and the objectives
    sum of 1 - cos (r,).
    """
    r, k, d = centers.shape
    n = len(Zn)
    final_centers = np.empty_like(centers)
    active = np.arange(r)
    labels = None
    for _ in range(max_iter):
        similarity = np.matmul(Zn, centers.transpose(0, 2, 1))  # (a, n, k): each run's own product, as alone
        new_labels = similarity.argmax(axis=2)  # (a, n)
        if labels is not None:  # a run whose labels repeat has its final centroids
            done = (new_labels == labels).all(axis=1)
            final_centers[active[done]] = centers[done]
            active, centers, similarity, new_labels = (active[~done], centers[~done], similarity[~done],
                                                       new_labels[~done])
            if not active.size:
                break
        labels = new_labels
        rows = (labels + (np.arange(len(active)) * k)[:, None]).ravel()  # each run's clusters, run after run
        members = sparse.csr_matrix((np.ones(rows.size), (rows, np.tile(np.arange(n), len(active)))),
                                    shape=(len(active) * k, n))
        sums = np.asarray(members @ Zn).reshape(-1, k, d)  # each cluster's members summed in sample order
        counts = members.getnnz(axis=1).reshape(-1, k)
        for run in np.flatnonzero((counts == 0).any(axis=1)):  # re-seed empty clusters: the farthest samples
            empty = np.flatnonzero(counts[run] == 0)
            far = np.argsort(similarity[run, np.arange(n), labels[run]])[: empty.size]
            sums[run, empty] = Zn[far]
        centers = normalize(sums.reshape(-1, d)).reshape(-1, k, d)
    else:
        final_centers[active] = centers
    similarity = np.matmul(Zn, final_centers.transpose(0, 2, 1))
    final = similarity.argmax(axis=2)
    objectives = (1.0 - np.take_along_axis(similarity, final[:, :, None], axis=2)[:, :, 0]).sum(axis=1)
    return final, objectives

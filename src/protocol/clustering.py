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
"""

import numpy as np
from scipy import sparse
from sklearn.cluster import KMeans
from sklearn.preprocessing import normalize

from ..checks import one_of

METRICS = ("euclidean", "cosine")
INITS = ("random", "k-means++")
ELKAN_ABOVE_DIMS = 100
"""Euclidean KMeans uses Elkan's algorithm on data with more columns than this, Lloyd's otherwise."""


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
        algorithm = "elkan" if Z.shape[1] > ELKAN_ABOVE_DIMS else "lloyd"
        model = KMeans(n_clusters, init=init, n_init=n_restarts, max_iter=max_iter, algorithm=algorithm,
                       random_state=int(rng.integers(2**31 - 1)))
        labels = model.fit_predict(Z)
        return labels, float(model.inertia_)
    Zn = normalize(np.asarray(Z, dtype=np.float64))
    best = None
    for _ in range(n_restarts):
        labels, objective = _spherical_kmeans(Zn, n_clusters, rng, init, max_iter)
        if best is None or objective < best[1]:
            best = (labels, objective)
    return best


def _spherical_kmeans(Zn, n_clusters, rng, init, max_iter):
    """One spherical KMeans run on unit-norm rows Zn."""
    n = Zn.shape[0]
    if init == "random":
        centers = Zn[rng.choice(n, n_clusters, replace=False)]
    else:  # k-means++ seeding with the cosine dissimilarity 1 - cos
        centers = [Zn[rng.integers(n)]]
        for _ in range(1, n_clusters):
            d = np.clip(1.0 - (Zn @ np.array(centers).T).max(axis=1), 0.0, None)
            centers.append(Zn[rng.choice(n, p=d / d.sum())] if d.sum() > 0 else Zn[rng.integers(n)])
        centers = np.array(centers)
    labels = None
    for _ in range(max_iter):
        similarity = Zn @ centers.T
        new_labels = similarity.argmax(axis=1)
        if labels is not None and np.array_equal(new_labels, labels):
            break
        labels = new_labels
        members = sparse.csr_matrix((np.ones(n), (labels, np.arange(n))), shape=(n_clusters, n))
        sums = np.asarray(members @ Zn)
        empty = np.flatnonzero(members.getnnz(axis=1) == 0)
        if empty.size:  # re-seed empty clusters with the samples farthest from their centroid
            far = np.argsort(similarity[np.arange(n), labels])[: empty.size]
            sums[empty] = Zn[far]
        centers = normalize(sums)
    similarity = Zn @ centers.T
    labels = similarity.argmax(axis=1)
    return labels, float((1.0 - similarity[np.arange(n), labels]).sum())

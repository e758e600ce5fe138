"""COP-KMeans: KMeans under must-link and cannot-link constraints, Wagstaff et al.

The constraints come from the labelled samples: must-link between every two labelled samples of the same
class, cannot-link between every two labelled samples of different classes. Wagstaff's algorithm is KMeans
whose assignment step visits the samples in order and puts each one into the nearest cluster that violates
no constraint with the samples already placed (a must-linked partner placed elsewhere, or a cannot-linked
sample placed there); when no such cluster exists the run fails.

Chunks. Must-link is transitive, so all labelled samples of one class must share a cluster, and the
cannot-links then forbid two labelled classes in one cluster. Each labelled class is therefore handled as
one unit, a "chunk" g with n_g members and mean mu_g: the chunk is assigned as a whole, and all its members
count in its cluster's centroid. The constraint check reduces to "no two chunks in the same cluster".
Unlabelled samples have no constraints, so their assignment is the plain nearest-centre rule, vectorized.

One assignment step, with centres c_1..c_K:

* chunks, one after another in a random order drawn once per restart: chunk g goes to the free cluster
  (holding no chunk yet) that minimizes sum_{i in g} ||x_i - c_j||^2 = n_g ||mu_g - c_j||^2 + const, i.e.
  the free centre nearest to mu_g;
* unlabelled samples: nearest centre.

The centres are then the means of their clusters, and the two steps alternate until the assignment no longer
changes or ``max_iter`` steps have run.

Choices where Wagstaff et al. are silent or that differ from their literal pseudo-code:

* a chunk is placed by the distance of all its members (its mean), not by whichever member is visited
  first; the first-visited member would drag the others with it through the must-links, and the chunk rule
  is the one that minimizes the KMeans objective for the chunk. The random visiting order (Wagstaff's data
  order) is drawn once per restart, so that the iteration is deterministic given the centres;
* failure: with chunks a step fails exactly when there are more labelled classes than clusters, which is
  then the case for every restart. A failed restart is discarded; if every restart fails, a warning is
  logged and the constraints are dropped: the result is plain KMeans (best of ``n_restarts``) on all
  samples, ``constraints_satisfied_`` is False;
* start: K distinct random samples as centres (as Deng Cai's ``litekmeans`` and this project's KMeans);
* an empty cluster is re-seeded with the unlabelled sample farthest from its centre (several empty clusters:
  the farthest ones, one each); with no unlabelled sample left, its centre is kept;
* restarts: ``n_restarts`` runs, the one with the lowest KMeans objective (within-cluster sum of squared
  Euclidean distances of the final partition) among the feasible ones is kept, the protocol's "best of 20".
  The distance is Euclidean, as in Wagstaff et al.

Work per step. The direct step computes the distance of every unlabelled sample to every centre (one
GEMM) and the cluster sums from scratch (a dense K x n membership product). Three devices restrict the work
to the samples whose centre may have changed; the first two give exactly the direct step's result, the
third changes the rounding of the sums only:

* bounds (Hamerly 2010): for each unlabelled sample, u_i >= its distance to its centre and l_i <= its
  distance to every other centre. When the centres move by p_j, u_i += p_a and l_i -= max_{j != a} p_j; with
  s_j half the distance from c_j to its nearest other centre, L_i = max(l_i, 2 s_a - u_i) also bounds the
  distances to the other centres from below. Only the samples that the bounds do not settle have their
  distances computed (rows of X gathered by blocks that fit in cache: X is read there only);
* the settling test is exact: a sample is settled only when L_i^2 - u_i^2 > 2 E_i, with
  E_i = (m + 2) eps (||x_i|| + max_j ||c_j||)^2, twice the worst-case rounding error of a squared distance
  computed as ||x||^2 - 2 x.c + ||c||^2 (gamma_m of the dot product and the three terms, Higham, ch. 3), and
  every bound is rounded outward after each operation. Hence a settled sample is exactly where the full
  computation would put it, exact ties included (those are always recomputed, and argmin keeps the
  lowest index);
* the cluster sums of the unlabelled samples are updated by the samples that moved only (a +-1 K x b
  matrix times their rows); the chunks' sums are computed once per fit. This associates the floating-point
  sums differently from sums taken from scratch (~1e-16 relative; the blocked products x.c may also round
  differently from one whole GEMM): a sample tied within that rounding could in principle go to the other
  centre. The tests compare with a plain run that recomputes everything at every step.

References
----------
K. Wagstaff, C. Cardie, S. Rogers and S. Schroedl, "Constrained k-means clustering with background
knowledge", Proc. ICML 2001, pp. 577-584.

G. Hamerly, "Making k-means even faster", Proc. SIAM SDM 2010, pp. 130-140 (the bounds).

N. J. Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., SIAM 2002 (the rounding bound).
"""

import logging

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils.validation import check_is_fitted

from ..errors import ConfigError
from .core.estimator import LabelConstrainedMixin
from .core.products import block_rows, x_dot, xt_dot
from ..checks import POSITIVE_INT
from .core.validation import CHECKED_BY_FIT, UNLABELLED, ParameterRulesMixin, SampleInputMixin

logger = logging.getLogger(__name__)

ROUND = np.finfo(np.float64).eps
"""Machine epsilon of float64 (twice the unit roundoff)."""
UP = 1.0 + 4.0 * ROUND
"""Factor that rounds a computed bound outward (upward), past the rounding of the operation that made it."""
DOWN = 1.0 - 4.0 * ROUND
"""Factor that rounds a computed bound outward (downward)."""


def squared_distances(P: np.ndarray, centres: np.ndarray, P_sq: np.ndarray | None = None) -> np.ndarray:
    """(p x K) squared Euclidean distances between the rows of P and the centres, clipped at 0."""
    if P_sq is None:
        P_sq = np.einsum("ij,ij->i", P, P)
    d = P_sq[:, None] - 2.0 * xt_dot(P.T, centres.T) + np.einsum("ij,ij->i", centres, centres)[None, :]
    return np.maximum(d, 0.0, out=d)


def cluster_sums(X: np.ndarray, labels: np.ndarray, n_clusters: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster sums (K x m) and sizes (K,) of the rows of X.

    One dense product with the (K x n) 0/1 membership matrix (BLAS, in as many threads as BLAS has).
    """
    n = X.shape[0]
    members = np.zeros((n_clusters, n))
    members[labels, np.arange(n)] = 1.0
    return x_dot(X.T, members.T).T, np.bincount(labels, minlength=n_clusters)


def partition_objective(X: np.ndarray, labels: np.ndarray, n_clusters: int) -> float:
    """Within-cluster sum of squared distances of a partition: sum_i ||x_i||^2 - sum_j ||s_j||^2 / n_j."""
    sums, sizes = cluster_sums(X, labels, n_clusters)
    full = sizes > 0
    between = np.einsum("ij,ij->i", sums[full], sums[full]) / sizes[full]
    return float(np.einsum("ij,ij->", X, X) - between.sum())


class COPData:
    """The data of one fit as COP-KMeans sees them, prepared once for all its restarts.

    Parameters
    ----------
    X : ndarray of shape (n, m)
        Samples, one per row (kept, not copied).
    chunk_of : ndarray of shape (n,)
        Chunk (labelled class, 0..c-1) of each sample, -1 for unlabelled samples.

    Attributes
    ----------
    labelled : ndarray of shape (n,), bool
    free : ndarray of shape (n_free,)
        Indices of the unlabelled ("free") samples, in sample order.
    sq, norm : ndarray of shape (n_free,)
        ||x_i||^2 and ||x_i|| of the free samples.
    sums, sizes, means : ndarray of shape (c, m), (c,), (c, m)
        Chunk sums, sizes n_g and means mu_g.
    rounding : float
        (m + 2) eps, so that ``rounding * (||x_i|| + max_j ||c_j||)^2`` bounds twice over the rounding error
        of a computed squared distance (see the module docstring).
    block : int
        Rows of X per block (:data:`~src.methods.core.products.BLOCK_ELEMENTS` entries, so that a block stays in cache).
    """

    def __init__(self, X: np.ndarray, chunk_of: np.ndarray):
        self.X = X
        self.labelled = chunk_of != UNLABELLED
        self.free = np.flatnonzero(~self.labelled)
        self.n_chunks = int(chunk_of.max()) + 1 if chunk_of.size else 0
        self.sq = np.einsum("ij,ij->i", X, X)[self.free]
        self.norm = np.sqrt(self.sq)
        sums, sizes = cluster_sums(X, np.where(self.labelled, chunk_of, self.n_chunks), self.n_chunks + 1)
        self.sums, self.sizes = sums[: self.n_chunks], sizes[: self.n_chunks]
        self.means = self.sums / self.sizes[:, None]
        self.rounding = (X.shape[1] + 2) * ROUND
        self.block = block_rows(X.shape[1])

    def place_chunks(self, centres: np.ndarray, order: np.ndarray) -> np.ndarray | None:
        """(c,) cluster of each chunk: the free centre nearest to its mean, in ``order``; None on failure."""
        cost = self.sizes[:, None] * squared_distances(self.means, centres)
        taken = np.zeros(centres.shape[0], dtype=bool)
        chunk_cluster = np.empty(self.n_chunks, dtype=np.int64)
        for g in order:
            allowed = np.where(taken, np.inf, cost[g])
            j = int(np.argmin(allowed))
            if not np.isfinite(allowed[j]):
                return None
            chunk_cluster[g] = j
            taken[j] = True
        return chunk_cluster

    def error_bound(self, pos: np.ndarray | slice, c_max: float) -> np.ndarray:
        """E_i = (m + 2) eps (||x_i|| + c_max)^2 of the free samples ``pos``: twice a rounding-error bound."""
        return self.rounding * (self.norm[pos] + c_max) ** 2

    def distances(self, pos: np.ndarray, centres: np.ndarray, cc: np.ndarray) -> np.ndarray:
        """(len(pos), K) squared distances of the free samples ``pos`` (positions in ``free``) to the centres.

        The formula of :func:`squared_distances`, ||x||^2 - 2 x.c + ||c||^2 clipped at 0 (``cc`` holds the
        ||c_j||^2); the products x.c by blocks of rows of X gathered into cache: X is read at these rows only.
        """
        rows = self.free[pos]
        d = np.empty((pos.size, centres.shape[0]))
        for start in range(0, pos.size, self.block):
            stop = min(start + self.block, pos.size)
            np.matmul(self.X[rows[start:stop]], centres.T, out=d[start:stop])
        d *= -2.0
        d += self.sq[pos, None]
        d += cc[None, :]
        return np.maximum(d, 0.0, out=d)

    def nearest_distances(self, centres: np.ndarray) -> np.ndarray:
        """(n_free,) squared distance of every free sample to its nearest centre (for re-seeding)."""
        cc = np.einsum("ij,ij->i", centres, centres)
        return self.distances(np.arange(self.free.size), centres, cc).min(axis=1)


class FreeState:
    """The free samples' side of one run: their clusters, distance bounds and cluster sums.

    Parameters
    ----------
    data : COPData
    n_clusters : int

    Attributes
    ----------
    a : ndarray of shape (n_free,)
        Cluster of each free sample (-1 before the first step).
    u, l : ndarray of shape (n_free,)
        Hamerly's bounds: ``u[i]`` >= the distance of free sample i to its centre c_a, ``l[i]`` <= its
        distance to every other centre (Euclidean distances, not squared).
    sums, sizes : ndarray of shape (K, m) and (K,)
        Sum and number of the free samples in each cluster.
    """

    def __init__(self, data: COPData, n_clusters: int):
        self.data = data
        n_free = data.free.size
        self.a = np.full(n_free, -1, dtype=np.int64)
        self.u = np.full(n_free, np.inf)
        self.l = np.zeros(n_free)
        self.sums = np.zeros((n_clusters, data.X.shape[1]))
        self.sizes = np.zeros(n_clusters, dtype=np.int64)

    def unsettled(self, centres: np.ndarray) -> np.ndarray:
        """Positions of the free samples whose nearest centre the bounds do not prove (module docstring).

        Lower bound on the distance to every other centre: L_i = max(l_i, 2 s_a - u_i), s_j = half the
        distance from c_j to its nearest other centre (Hamerly); sample i is settled when L_i^2 - u_i^2 > 2 E_i.
        """
        K = centres.shape[0]
        cc = np.einsum("ij,ij->i", centres, centres)
        c_max = float(np.sqrt(cc.max())) * UP
        s = np.full(K, np.inf)
        if K > 1:
            between = cc[:, None] + cc[None, :] - 2.0 * (centres @ centres.T)
            between = np.sqrt(np.maximum(between - self.data.rounding * (2.0 * c_max) ** 2, 0.0)) * DOWN
            np.fill_diagonal(between, np.inf)
            s = 0.5 * between.min(axis=1)
        L = np.maximum(self.l, 2.0 * s[self.a] - self.u)
        settled = (L - self.u) * (L + self.u) > 2.0 * self.data.error_bound(slice(None), c_max)
        return np.flatnonzero(~settled)

    def assign(self, pos: np.ndarray, centres: np.ndarray) -> int:
        """Nearest centre of the free samples ``pos``: their clusters, bounds and the sums; returns the moves.

        The cluster sums change by the samples that moved: a (K x b) matrix of +1 (new cluster) and -1 (old
        cluster) times their rows, by blocks of b rows.
        """
        data = self.data
        K = centres.shape[0]
        cc = np.einsum("ij,ij->i", centres, centres)
        c_max = float(np.sqrt(cc.max())) * UP
        d = data.distances(pos, centres, cc)
        rows = np.arange(pos.size)
        new = d.argmin(axis=1)
        E = data.error_bound(pos, c_max)
        self.u[pos] = np.sqrt(d[rows, new] + E) * UP
        if K > 1:
            d[rows, new] = np.inf
            self.l[pos] = np.sqrt(np.maximum(d.min(axis=1) - E, 0.0)) * DOWN
        else:
            self.l[pos] = np.inf
        moved = np.flatnonzero(new != self.a[pos])
        for start in range(0, moved.size, data.block):
            which = moved[start:start + data.block]
            old, to = self.a[pos[which]], new[which]
            cols = np.arange(which.size)
            left = old >= 0
            change = np.zeros((K, which.size))
            change[to, cols] = 1.0
            change[old[left], cols[left]] = -1.0
            self.sums += change @ data.X[data.free[pos[which]]]
            self.sizes += np.bincount(to, minlength=K) - np.bincount(old[left], minlength=K)
        self.a[pos] = new
        return int(moved.size)

    def centres_moved(self, old: np.ndarray, new: np.ndarray) -> None:
        """Loosen the bounds by the distance p_j each centre moved: u_i += p_a, l_i -= max_{j != a} p_j."""
        diff = new - old
        p = np.sqrt(np.einsum("ij,ij->i", diff, diff)) * UP
        far = int(np.argmax(p))
        runner_up = float(np.delete(p, far).max()) if p.size > 1 else 0.0
        self.u += p[self.a]
        self.u *= UP
        self.l -= np.where(self.a == far, runner_up, p[far])
        np.maximum(self.l, 0.0, out=self.l)
        self.l *= DOWN


def cop_kmeans_run(X, chunk_of, n_clusters, rng, max_iter, data=None):
    """One COP-KMeans run from a random start (see the module docstring).

    Parameters
    ----------
    X : ndarray of shape (n, m)
        Samples, one per row.
    chunk_of : ndarray of shape (n,)
        Chunk (labelled class, 0..c-1) of each sample, -1 for unlabelled samples.
    n_clusters : int
    rng : numpy.random.Generator
    max_iter : int
    data : COPData or None
        ``COPData(X, chunk_of)``, prepared once for several runs; built here when None.

    Returns
    -------
    labels : ndarray of shape (n,) or None
        None when the run failed (a chunk found no free cluster).
    n_iter : int
        Assignment steps run.
    """
    if data is None:
        data = COPData(X, chunk_of)
    n = X.shape[0]
    free = data.free
    state = FreeState(data, n_clusters)

    centres = X[rng.choice(n, n_clusters, replace=False)].copy()
    order = rng.permutation(data.n_chunks)
    placed = None
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        # chunks: nearest free centre to the chunk's mean, in the restart's random order
        chunk_cluster = data.place_chunks(centres, order)
        if chunk_cluster is None:
            return None, n_iter
        # unlabelled samples: nearest centre, computed where the bounds do not prove it (all at the first step)
        moves = state.assign(np.arange(free.size) if placed is None else state.unsettled(centres), centres)
        if placed is not None and moves == 0 and np.array_equal(chunk_cluster, placed):
            break
        placed = chunk_cluster
        sums, sizes = state.sums.copy(), state.sizes.copy()
        sums[placed] += data.sums  # a cluster holds at most one chunk
        sizes[placed] += data.sizes
        full = sizes > 0
        new_centres = centres.copy()
        new_centres[full] = sums[full] / sizes[full, None]
        empty = np.flatnonzero(~full)
        if empty.size and free.size:
            far = np.argsort(-data.nearest_distances(centres), kind="stable")[: empty.size]
            new_centres[empty[: far.size]] = X[free[far]]
        state.centres_moved(centres, new_centres)
        centres = new_centres
    labels = np.empty(n, dtype=np.int64)
    labels[data.labelled] = placed[chunk_of[data.labelled]]
    labels[free] = state.a
    return labels, n_iter


class COPKMeans(LabelConstrainedMixin, ClusterMixin, SampleInputMixin, ParameterRulesMixin, BaseEstimator):
    """COP-KMeans (Wagstaff et al. 2001) with the labelled samples' must-link and cannot-link constraints.

    It clusters directly (``clusters_directly = True``): the protocol calls ``fit_predict(X, y)`` and skips
    its own KMeans. See the module docstring for the chunk formulation and the choices made. A clusterer,
    not a transformer: ``predict(X_new)`` puts new (unlabelled, hence unconstrained) samples in the
    cluster of the nearest centre of ``cluster_centers_``.

    Parameters
    ----------
    n_components : int, default=2
        Number of clusters K.
    n_restarts : int, default=20
        Runs from different random starts; the feasible run with the lowest KMeans objective is kept.
    max_iter : int, default=300
        Maximum number of assignment steps per run.
    random_state : int, numpy.random.Generator or None, default=None
        Seed of the starting centres and of the chunks' visiting order.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster of each sample, 0..K-1.
    cluster_centers_ : ndarray of shape (K, n_features)
        Means of the clusters of ``labels_`` (an empty cluster's row is 0).
    objective_ : float
        KMeans objective (within-cluster sum of squares) of the kept run.
    constraints_satisfied_ : bool
        False when every restart failed and the constraints were dropped.
    n_failed_restarts_ : int
    n_iter_ : int
        Assignment steps of the kept run.
    factors_ : dict
        Empty (not a factorization).
    embedding_ : ndarray of shape (n_samples, n_features)
        The data themselves.

    References
    ----------
    K. Wagstaff, C. Cardie, S. Rogers and S. Schroedl, "Constrained k-means clustering with background
    knowledge", Proc. ICML 2001.
    """

    clusters_directly = True
    nonnegative_data = False
    _parameter_constraints = {
        "n_components": POSITIVE_INT,
        "n_restarts": POSITIVE_INT,
        "max_iter": POSITIVE_INT,
        "random_state": CHECKED_BY_FIT,
    }

    def __init__(self, n_components=2, *, n_restarts=20, max_iter=300, random_state=None):
        self.n_components = n_components
        self.n_restarts = n_restarts
        self.max_iter = max_iter
        self.random_state = random_state

    def fit(self, X, y=None):
        """Cluster X (n_samples, n_features) under the constraints of the partial labels y (-1 = unlabelled)."""
        self.check_params()
        X = self._validate_X(X, reset=True)
        n = X.shape[0]
        y = self._validate_y(y, n)
        K = self.n_components
        if K > n:
            raise ConfigError(f"n_components={K} exceeds the number of samples ({n})")
        labelled = y != UNLABELLED
        classes, codes = np.unique(y[labelled], return_inverse=True)
        chunk_of = np.full(n, UNLABELLED, dtype=np.int64)
        chunk_of[labelled] = codes

        rng = np.random.default_rng(self.random_state)
        best, self.n_failed_restarts_ = self._best_of_restarts(X, chunk_of, rng)
        self.constraints_satisfied_ = best is not None
        if best is None:
            logger.warning("COP-KMeans: all %d restarts failed (%d labelled classes, %d clusters); "
                           "dropping the constraints (plain KMeans)", self.n_restarts, classes.size, K)
            best, _ = self._best_of_restarts(X, np.full(n, UNLABELLED, dtype=np.int64), rng)
        labels, self.objective_, self.n_iter_ = best
        self.labels_ = labels
        sums, sizes = cluster_sums(X, labels, K)
        self.cluster_centers_ = sums / np.maximum(sizes, 1)[:, None]
        self.factors_ = {}
        self.embedding_ = X
        return self

    def _best_of_restarts(self, X, chunk_of, rng):
        """``((labels, objective, n_iter) of the best feasible restart or None, number of failed restarts)``."""
        best = None
        failed = 0
        data = COPData(X, chunk_of)  # shared by the restarts
        for _ in range(self.n_restarts):
            labels, n_iter = cop_kmeans_run(X, chunk_of, self.n_components, rng, self.max_iter, data)
            if labels is None:
                failed += 1
                continue
            objective = partition_objective(X, labels, self.n_components)
            if best is None or objective < best[1]:
                best = (labels, objective, n_iter)
        return best, failed

    def fit_predict(self, X, y=None):
        """Fit and return the cluster labels, shape (n_samples,)."""
        return self.fit(X, y).labels_

    def predict(self, X):
        """Cluster of the nearest centre (Euclidean) for each new sample of X (n_samples, n_features)."""
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        return squared_distances(X, self.cluster_centers_).argmin(axis=1)

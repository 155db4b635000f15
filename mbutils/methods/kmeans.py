"""Seeded k-means (k-means++ start, Lloyd iterations) in plain numpy, for tinyBenchmarks.

tinyBenchmarks clusters a few hundred to a few thousand low-dimensional item embeddings
once per run and size. scikit-learn's ``KMeans`` validates its inputs on every one of the
k seeding steps, which made the clustering a fifth of a GPQA experiment; this module runs
the same algorithm with the same random draws (``numpy.random.RandomState(seed)``) and
the same arithmetic order, so its clusters are scikit-learn's (``tests/methods/test_kmeans.py``
compares them on seeded instances), at a fraction of the cost.

The algorithm, as in scikit-learn 1.x with ``init="k-means++"`` and ``algorithm="lloyd"``:

* the points are centred on their mean (added back to the centres at the end);
* greedy k-means++ (Arthur & Vassilvitskii 2007): the first centre uniformly at random,
  then each next one the best of ``2 + floor(log k)`` candidates drawn with probability
  proportional to the squared distance to the nearest centre chosen so far;
* Lloyd iterations until the labels stop changing, the squared centre shift falls to
  ``tol`` times the mean per-feature variance, or ``max_iter``; a cluster left empty
  takes the point farthest from its centre;
* ``n_init`` starts from one random stream, the lowest inertia kept.
"""

from __future__ import annotations

import numpy as np

__all__ = ["kmeans"]


def kmeans(points: np.ndarray, n_clusters: int, seed: int, *, n_init: int = 1, max_iter: int = 300,
           tol: float = 1e-4) -> tuple[np.ndarray, np.ndarray]:
    """Labels (n,) and centres (k, d) of seeded k-means on ``points`` (n, d)."""
    X = np.array(points, dtype=np.float64, order="C")  # a copy: centred below
    if X.ndim != 2 or not 1 <= n_clusters <= X.shape[0]:
        raise ValueError(f"k-means needs a 2-d array of at least {n_clusters} points, got shape {X.shape}")
    tolerance = float(np.mean(np.var(X, axis=0)) * tol) if tol else 0.0
    mean = X.mean(axis=0)
    X -= mean
    sq_norms = np.einsum("ij,ij->i", X, X)
    state = np.random.RandomState(seed)
    best = None
    for _ in range(n_init):
        centers = _plus_plus(X, sq_norms, n_clusters, state)
        labels, centers = _lloyd(X, centers, max_iter, tolerance)
        inertia = np.cumsum(((X - centers[labels]) ** 2).sum(axis=1))[-1]  # summed in point order
        if best is None or (inertia < best[0] and not _same_partition(labels, best[1])):
            best = (inertia, labels, centers)
    _, labels, centers = best
    return labels, centers + mean


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two labellings are one clustering up to renaming the clusters."""
    pairs = np.unique(np.stack([a, b]), axis=1)
    return len(np.unique(pairs[0])) == len(np.unique(pairs[1])) == pairs.shape[1]


def _sq_distances(A: np.ndarray, X: np.ndarray, x_sq: np.ndarray) -> np.ndarray:
    """Squared distances of the rows of A to every point, by the dot-product expansion."""
    d = -2 * (A @ X.T)
    d += np.einsum("ij,ij->i", A, A)[:, None]
    d += x_sq[None, :]
    return np.maximum(d, 0, out=d)


def _plus_plus(X: np.ndarray, x_sq: np.ndarray, k: int, state: np.random.RandomState) -> np.ndarray:
    """Greedy k-means++ centres (copies of k points)."""
    n = X.shape[0]
    ones = np.ones(n)  # sums as products with unit weights: scikit-learn's summation order, so equal bits
    trials = 2 + int(np.log(k))
    chosen = np.empty(k, dtype=np.intp)
    chosen[0] = state.choice(n, p=ones / ones.sum())
    closest = _sq_distances(X[chosen[:1]], X, x_sq)
    potential = closest @ ones
    for c in range(1, k):
        draws = state.uniform(size=trials) * potential
        candidates = np.minimum(np.searchsorted(np.cumsum(closest), draws), n - 1)
        dist = np.minimum(closest, _sq_distances(X[candidates], X, x_sq))
        pots = dist @ ones[:, None]
        pick = int(np.argmin(pots))
        potential, closest = pots[pick], dist[pick]
        chosen[c] = candidates[pick]
    return X[chosen]


def _assign(X: np.ndarray, centers: np.ndarray) -> np.ndarray:
    """Nearest centre of every point (first on ties); ||x||^2 is left out, it does not change the order."""
    d = X @ centers.T
    d *= -2.0
    d += np.einsum("ij,ij->i", centers, centers)[None, :]
    return np.argmin(d, axis=1).astype(np.int32)


def _lloyd(X: np.ndarray, centers: np.ndarray, max_iter: int, tolerance: float):
    k, d = centers.shape
    labels_old = np.full(X.shape[0], -1, dtype=np.int32)
    strict = False
    for _ in range(max_iter):
        labels = _assign(X, centers)
        new = _updated_centers(X, centers, labels, k, d)
        shift = np.sqrt(((new - centers) ** 2).sum(axis=1))
        centers = new
        if np.array_equal(labels, labels_old):
            strict = True
            break
        if (shift ** 2).sum() <= tolerance:
            break
        labels_old = labels
    if not strict:  # labels that match the final centres
        labels = _assign(X, centers)
    return labels, centers


def _updated_centers(X, old, labels, k, d):
    """Means of the clusters; an empty cluster takes the point farthest from its centre."""
    sums = np.stack([np.bincount(labels, weights=X[:, j], minlength=k) for j in range(d)], axis=1)
    weight = np.bincount(labels, minlength=k).astype(np.float64)
    empty = np.flatnonzero(weight == 0)
    if empty.size:
        far_dist = ((X - old[labels]) ** 2).sum(axis=1)
        far = np.argpartition(far_dist, -empty.size)[:-empty.size - 1:-1]
        if far_dist.max() != 0:  # not only duplicates: move the farthest points
            for cluster, point in zip(empty, far):
                sums[labels[point]] -= X[point]
                sums[cluster] = X[point]
                weight[cluster] = 1.0
                weight[labels[point]] -= 1.0
    filled = weight > 0
    means = sums.copy()
    means[filled] *= (1.0 / weight[filled])[:, None]
    if not filled.all():
        # Still-empty clusters sit on the heaviest one: its mean if it comes first, else its
        # sum (the order in which scikit-learn's loop visits them).
        top = int(np.argmax(weight))
        for j in np.flatnonzero(~filled):
            means[j] = means[top] if top < j else sums[top]
    return means

"""Small helpers for the chapters' exercises (see chapters/teaching.md).

Only what a solution needs and the package does not already offer: how often a
micro-benchmark orders each pair of targets wrongly, and the expected bias of the plain
(equal-subtask-weight) stratified mean.
"""

from __future__ import annotations

import numpy as np


def plain_stratified_bias(correct: np.ndarray, subtasks: np.ndarray) -> np.ndarray:
    """Expected bias (points) per model of an equal-weight subtask mean against the item mean.

    The expectation of a plain mean over equally many random items per subtask is the
    unweighted mean of the subtask accuracies; the target is the item-weighted mean.
    """
    correct = np.asarray(correct, dtype=np.float64)
    subtasks = np.asarray(subtasks, dtype=np.int64)
    per_subtask = np.stack([correct[:, subtasks == s].mean(axis=1) for s in np.unique(subtasks)], axis=1)
    return 100 * (per_subtask.mean(axis=1) - correct.mean(axis=1))


def random_sampling_error(correct_counts, n_items: int, k: int) -> np.ndarray:
    """Expected absolute estimation error (points) of a uniform random k-item micro-benchmark.

    A model right on ``c`` of the ``n_items`` items scores X/k on k items drawn without
    replacement, X ~ Hypergeometric(n_items, c, k); the result is 100·E|X/k − c/n_items|,
    exactly (a sum over x = 0..k), for each count of ``correct_counts`` (any shape).
    """
    from scipy.stats import hypergeom

    n_items, k = int(n_items), int(k)
    if not 1 <= k <= n_items:
        raise ValueError(f"k must be between 1 and the {n_items} items, got {k}")
    c = np.asarray(correct_counts, dtype=np.int64)[..., None]
    x = np.arange(k + 1)
    pmf = hypergeom.pmf(x, n_items, c, k)
    return 100 * (pmf * np.abs(x / k - c / n_items)).sum(axis=-1)


# --------------------------------------------------------------------------- stratified allocation
def within_stratum_sd(scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Per stratum: the root mean over models of each model's within-stratum sample variance.

    ``scores`` is models x items, ``labels`` the stratum of each item (0..H-1, every
    stratum non-empty). A model's variance in stratum h has the N_h - 1 denominator
    (0 for a one-item stratum); averaging the variances over models and taking the root
    gives the S_h that makes n_h ~ N_h S_h minimise the mean variance over models.
    """
    scores = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.int64)
    onehot = np.eye(labels.max() + 1)[labels]                  # items x strata
    sizes = onehot.sum(axis=0)
    mean = scores @ onehot / sizes
    sq = (scores**2) @ onehot / sizes
    var = np.maximum(sq - mean**2, 0.0) * sizes / np.maximum(sizes - 1, 1)
    return np.sqrt(var.mean(axis=0))


def neyman_allocation(k: int, sizes, sds, rng: np.random.Generator, minimum: int = 1) -> np.ndarray:
    """Items per stratum for Neyman allocation, n_h ~ N_h S_h, summing to exactly ``k``.

    Every stratum gets between ``min(minimum, N_h)`` items (when ``k`` allows that floor
    for all strata, else 0) and N_h items: the continuous quotas are clip(c N_h S_h, low,
    N_h) with c solved exactly on the piecewise-linear sum, then rounded by largest
    remainder, ties broken with ``rng``. A stratum with S_h = 0 gets a weight of 1e-9 of
    the largest N_h S_h (times its size), so it is filled only after every other stratum,
    and with all S_h = 0 the allocation is proportional to size.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    sds = np.asarray(sds, dtype=np.float64)
    k = int(k)
    if sizes.ndim != 1 or sds.shape != sizes.shape or (sizes < 1).any() or (sds < 0).any():
        raise ValueError("need one positive size and one non-negative sd per stratum")
    if not 0 <= k <= sizes.sum():
        raise ValueError(f"cannot allocate {k} items to strata holding {sizes.sum()} items")
    w = sizes * sds
    w = w + 1e-9 * (w.max() if w.max() > 0 else 1.0) * sizes
    low = np.minimum(minimum, sizes)
    low = low if low.sum() <= k else np.zeros_like(sizes)
    breaks = np.sort(np.concatenate([low / w, sizes / w]))
    total = np.clip(np.outer(breaks, w), low, sizes).sum(axis=1)   # non-decreasing in c
    j = int(np.searchsorted(total, k))
    if j == 0:
        c = breaks[0]
    else:
        span = total[j] - total[j - 1]
        c = breaks[j - 1] + (breaks[j] - breaks[j - 1]) * ((k - total[j - 1]) / span if span > 0 else 0.0)
    quota = np.clip(c * w, low, sizes)
    counts = np.minimum(np.floor(quota + 1e-9).astype(np.int64), sizes)
    short = k - int(counts.sum())
    room = counts < sizes
    order = np.lexsort((rng.random(len(sizes)), -(quota - counts), ~room))
    counts[order[:short]] += 1
    return counts


def stratified_variance(scores: np.ndarray, labels: np.ndarray, counts) -> np.ndarray:
    """Exact variance (points squared) per model of the stratified (Horvitz-Thompson) mean.

    Simple random sampling without replacement of ``counts[h]`` items in stratum h:
    Var = sum_h (N_h / N)^2 (1 - n_h / N_h) S_mh^2 / n_h, S_mh^2 with the N_h - 1
    denominator. NaN for every model when a stratum gets no item (the estimate is then
    biased, and its variance is not the question).
    """
    scores = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.float64)
    onehot = np.eye(labels.max() + 1)[labels]
    sizes = onehot.sum(axis=0)
    if (counts < 1).any():
        return np.full(scores.shape[0], np.nan)
    mean = scores @ onehot / sizes
    var = np.maximum((scores**2) @ onehot / sizes - mean**2, 0.0) * sizes / np.maximum(sizes - 1, 1)
    share = sizes / sizes.sum()
    return 1e4 * (var * share**2 * (1 - counts / sizes) / counts).sum(axis=1)


# --------------------------------------------------------------------------- projection DPP
def dpp_moments(Q: np.ndarray, scores: np.ndarray, weights) -> tuple[np.ndarray, np.ndarray]:
    """Exact mean and variance per model of sum_{i in S} w_i y_i, S a projection-DPP draw.

    ``Q`` (items x k, orthonormal columns) spans the kernel K = Q Q^T; ``scores`` is
    models x the same items, ``weights`` one w_i per item. With z = w * y,
    E = sum_i K_ii z_i and Var = sum_i K_ii z_i^2 - sum_ij K_ij^2 z_i z_j (from
    P(i in S) = K_ii and P(i, j in S) = K_ii K_jj - K_ij^2), the second sum computed as
    ||Q^T diag(z) Q||_F^2 one column of Q at a time (memory: items x k).
    """
    Q = np.asarray(Q, dtype=np.float64)
    z = np.asarray(scores, dtype=np.float64) * np.asarray(weights, dtype=np.float64)
    pi = np.einsum("ia,ia->i", Q, Q)
    mean = z @ pi
    cross = sum(((z @ (Q * Q[:, [a]])) ** 2).sum(axis=1) for a in range(Q.shape[1]))
    return mean, np.maximum((z**2) @ pi - cross, 0.0)

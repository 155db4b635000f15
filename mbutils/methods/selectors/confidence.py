"""Stratified sampling by confidence (Yauney et al., 2025, "stratified sampling by confidence").

Each seen item gets a proxy for its easiness, the mean over sources of the probability
of the gold answer. The proxy is cut into strata by exact 1-D k-means, ``k`` items are
allocated to the strata in proportion to their sizes (summing to exactly ``k``, unlike the
reference code, which can overshoot), drawn without replacement within each stratum, and
the target's score is the Horvitz-Thompson estimate of its seen accuracy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mbutils.base.errors import SelectorError
from mbutils.base.validation import Integer, OneOf
from mbutils.methods.selectors.base import MicroBenchmark, Selector, SourceData
from mbutils.methods.selectors.registry import register

ESTIMATORS = ("ht", "hajek")


# --------------------------------------------------------------------------- 1-D k-means
def _segment_cost(prefix_w, prefix_s1, prefix_s2, i, j):
    """Weighted within-segment sum of squares of distinct values ``[i, j)`` (needs i < j)."""
    w = prefix_w[j] - prefix_w[i]
    s1 = prefix_s1[j] - prefix_s1[i]
    return np.maximum(prefix_s2[j] - prefix_s2[i] - s1 * s1 / w, 0.0)


def _first_argmin_per_segment(values, starts, counts):
    """Minimum and position of its first occurrence in each consecutive segment."""
    seg_min = np.minimum.reduceat(values, starts)
    positions = np.arange(len(values))
    hit = np.where(values <= np.repeat(seg_min, counts), positions, len(values))
    return seg_min, np.minimum.reduceat(hit, starts)


def _dp_layer(prev, prefix, m, targets):
    """One layer of the k-means dynamic programme by level-wise divide and conquer.

    ``prev[i]`` is the least cost of ``m - 1`` clusters on the first ``i`` distinct values;
    returns, for each ``j`` in ``targets`` (a contiguous range), the least cost of ``m``
    clusters on the first ``j`` values and the start of the last cluster. The first
    optimal split is non-decreasing in ``j`` (the segment cost satisfies the quadrangle
    inequality), so each level of the recursion scans O(d) candidates in one array pass.
    """
    d = len(prev) - 1
    cost = np.full(d + 1, np.inf)
    split = np.zeros(d + 1, dtype=np.int64)
    j_lo, j_hi = np.array([targets[0]]), np.array([targets[-1]])
    i_lo, i_hi = np.array([m - 1]), np.array([targets[-1] - 1])
    while len(j_lo):
        mid = (j_lo + j_hi) // 2
        hi = np.minimum(i_hi, mid - 1)
        counts = hi - i_lo + 1
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        cand = np.repeat(i_lo - starts, counts) + np.arange(counts.sum())
        at = np.repeat(mid, counts)
        values = prev[cand] + _segment_cost(*prefix, cand, at)
        best_cost, first = _first_argmin_per_segment(values, starts, counts)
        best = cand[first]
        cost[mid], split[mid] = best_cost, best
        left, right = j_lo <= mid - 1, mid + 1 <= j_hi
        j_lo, j_hi, i_lo, i_hi = (
            np.concatenate((j_lo[left], mid[right] + 1)),
            np.concatenate((mid[left] - 1, j_hi[right])),
            np.concatenate((i_lo[left], best[right])),
            np.concatenate((best[left], i_hi[right])),
        )
    return cost, split


def kmeans_1d(values, n_clusters: int) -> np.ndarray:
    """Exact 1-D k-means: labels minimising the within-cluster sum of squares.

    Works on the distinct values weighted by their counts, so with fewer distinct values
    than ``n_clusters`` every distinct value becomes its own cluster. Clusters are
    numbered by increasing value. No randomness is involved: among equally good
    partitions the dynamic programme keeps the one whose cluster boundaries come first
    (up to floating-point rounding of the costs).
    """
    values = np.asarray(values, dtype=np.float64).ravel()
    if values.size == 0 or not np.isfinite(values).all():
        raise SelectorError("kmeans_1d needs a non-empty array of finite values")
    if int(n_clusters) != n_clusters or n_clusters < 1:
        raise SelectorError(f"kmeans_1d: n_clusters must be a positive integer, got {n_clusters!r}")
    distinct, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    d, n_clusters = len(distinct), min(int(n_clusters), len(distinct))
    centred = distinct - np.average(distinct, weights=counts)  # less cancellation in s2 - s1^2/w
    prefix = tuple(
        np.concatenate(([0.0], np.cumsum(part)))
        for part in (counts.astype(np.float64), counts * centred, counts * centred**2)
    )
    cost = np.full(d + 1, np.inf)
    cost[1:] = _segment_cost(*prefix, np.zeros(d, dtype=np.int64), np.arange(1, d + 1))
    splits = []
    for m in range(2, n_clusters + 1):
        # the last layer only needs all d values; earlier ones need every prefix length
        targets = np.array([d]) if m == n_clusters else np.arange(m, d + 1)
        cost, split = _dp_layer(cost, prefix, m, targets)
        splits.append(split)
    starts, j = [], d
    for split in reversed(splits):
        j = int(split[j])
        starts.append(j)
    starts = np.array([0] + starts[::-1], dtype=np.int64)
    labels_distinct = np.searchsorted(starts, np.arange(d), side="right") - 1
    return labels_distinct[inverse]


# --------------------------------------------------------------------------- allocation
def proportional_allocation(k: int, sizes, rng: np.random.Generator) -> np.ndarray:
    """Items per stratum, proportional to stratum size and summing to exactly ``k``.

    Largest remainder method in exact integer arithmetic: every stratum first gets
    floor(k N_h / N); the ``r`` items left over go one each to the ``r`` strata with the
    largest remainders, ties broken uniformly at random with ``rng``. Each count is
    within one of its quota k N_h / N and never exceeds N_h (a stratum whose quota is
    whole has remainder zero, and at least r + 1 strata have a positive remainder).

    Examples
    --------
    Five items for strata of 6, 3 and 1 items (quotas 3, 1.5 and 0.5):

    >>> import numpy as np, mbutils
    >>> mbutils.proportional_allocation(5, [6, 3, 1], np.random.default_rng(0))
    array([3, 1, 1])
    """
    sizes = np.asarray(sizes)
    if sizes.ndim != 1 or sizes.size == 0 or (sizes < 0).any() or not np.all(sizes == np.round(sizes)):
        raise SelectorError("stratum sizes must be a non-empty list of non-negative integers")
    sizes = sizes.astype(np.int64)
    total = int(sizes.sum())
    if int(k) != k or not 0 <= k <= total:
        raise SelectorError(f"cannot allocate {k!r} items to strata holding {total} items")
    scaled = int(k) * sizes
    counts, remainder = scaled // total, scaled % total
    short = int(k) - int(counts.sum())
    order = np.lexsort((rng.random(len(sizes)), -remainder))
    counts[order[:short]] += 1
    return counts


# --------------------------------------------------------------------------- selector
@dataclass(frozen=True)
class Strata:
    """Strata of the seen items for one run: a label per item, numbered by proxy value."""

    labels: np.ndarray
    sizes: np.ndarray
    centres: np.ndarray

    @property
    def n_items(self) -> int:
        return len(self.labels)


@register(roles=("paper", "auto"))
class ConfidenceStratified(Selector):
    """Stratified sampling by confidence (the paper's): random items from bands of item easiness, Horvitz-Thompson estimate.

    Registered as ``"confidence_stratified"``.

    Proxy: each seen item's mean source confidence on the gold answer. When the bundle
    has no confidences the proxy is the sources' mean 0/1 correctness (the item's
    accuracy over sources), so strata are bands of empirical difficulty.

    Strata: exact 1-D k-means on the proxy with ``n_strata`` clusters, computed once per
    run in :meth:`~mbutils.Selector.prepare`. With fewer distinct proxy values than
    ``n_strata`` (few sources, 0/1 data) each distinct value is a stratum, so there are
    fewer strata.

    Allocation: proportional, summing to exactly ``k`` (largest remainders,
    ``mbutils.methods.selectors.confidence.proportional_allocation``, random tie-breaking); simple
    random sampling without replacement within strata.

    Estimate (reads target 0/1 correctness):

    * ``estimator="ht"`` (the paper's): Horvitz-Thompson (1/N) sum y_i / pi_i with
      pi_i = n_h / N_h, i.e. weight N_h / (n_h N) per chosen item of stratum h. Given the
      allocation it is unbiased for the seen accuracy when every stratum gets an item.
      When ``k`` is smaller than the number of strata (or a small stratum rounds to
      zero), the missed strata contribute nothing: weights sum to less than one and the
      estimate is biased towards zero by the missed strata's share.
    * ``estimator="hajek"``: the same weights normalised to sum to one (a ratio
      estimator). Identical to HT whenever every stratum is hit; otherwise it treats the
      hit strata as standing for the missed ones, trading HT's large downward bias for a
      small bias (missed share x accuracy difference) and lower error.

    Parameters
    ----------
    n_strata : int, default 10
        Number of strata (k-means clusters of the proxy), at least 1; fewer come out when
        the proxy has fewer distinct values.
    estimator : {"ht", "hajek"}, default "ht"
        The estimate, as above: Horvitz-Thompson (the paper's) or its normalised (Hajek)
        form.

    Examples
    --------
    Eight items, four hard and four easy for both sources, in two strata:

    >>> import numpy as np
    >>> from mbutils import ConfidenceStratified, SourceData
    >>> conf = np.array([[0.1, 0.1, 0.12, 0.11, 0.9, 0.92, 0.9, 0.91],
    ...                  [0.1, 0.12, 0.1, 0.11, 0.9, 0.9, 0.92, 0.91]])
    >>> source = SourceData(conf > 0.5, np.zeros(8, dtype=int), confidence=conf)
    >>> selector = ConfidenceStratified(n_strata=2)
    >>> strata = selector.prepare(source, np.random.default_rng(0))
    >>> strata.labels.tolist(), strata.sizes.tolist()
    ([0, 0, 0, 0, 1, 1, 1, 1], [4, 4])
    >>> micro = selector.select(strata, 4, np.random.default_rng(0))
    >>> np.bincount(strata.labels[micro.items]).tolist()  # 2 items per stratum
    [2, 2]
    >>> micro.weights.tolist()
    [0.25, 0.25, 0.25, 0.25]

    With one item, one stratum is missed: HT's weights sum to 1/2, Hajek's to 1.

    >>> selector.select(strata, 1, np.random.default_rng(0)).weights.tolist()
    [0.5]
    >>> hajek = ConfidenceStratified(n_strata=2, estimator="hajek")
    >>> hajek.select(strata, 1, np.random.default_rng(0)).weights.tolist()
    [1.0]
    """

    name = "confidence_stratified"
    uses_confidence = True

    @property
    def weights_sum_to_one(self) -> bool:
        """Hajek's weights are normalised; Horvitz-Thompson's are not (their sum estimates N / N)."""
        return self.estimator != "ht"

    parameter_constraints = {"n_strata": Integer(low=1), "estimator": OneOf(ESTIMATORS)}

    def __init__(self, n_strata: int = 10, estimator: str = "ht"):
        self.n_strata = n_strata
        self.estimator = estimator

    def prepare(self, source: SourceData, rng: np.random.Generator) -> Strata:
        """Strata from the mean source proxy (deterministic; ``rng`` is not needed)."""
        self.validate_params()
        proxy = source.checked_proxy(self.name)
        easiness = proxy.mean(axis=0)
        labels = kmeans_1d(easiness, self.n_strata)
        sizes = np.bincount(labels)
        centres = np.bincount(labels, weights=easiness) / sizes
        return Strata(labels=labels, sizes=sizes, centres=centres)

    def select(self, prepared: Strata, k: int, rng: np.random.Generator) -> MicroBenchmark:
        self.check_size(k, prepared.n_items)
        labels, sizes = prepared.labels, prepared.sizes
        per_stratum = proportional_allocation(k, sizes, rng)
        # random order within each stratum; the first n_h of each block are the sample
        order = np.lexsort((rng.random(len(labels)), labels))
        block_start = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        rank = np.arange(len(labels)) - block_start[labels[order]]
        items = order[rank < per_stratum[labels[order]]]
        stratum = labels[items]
        weights = sizes[stratum] / (per_stratum[stratum] * float(prepared.n_items))
        if self.estimator == "hajek":
            weights = weights / weights.sum()
        return MicroBenchmark(items=items, weights=weights, reads="correct")

"""Stratified sampling by confidence: exact 1-D k-means, allocation, HT/Hajek estimates."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.cluster import KMeans

from mbutils.base.errors import SelectorError
from mbutils.methods.selectors import make_selector, selector_names
from mbutils.methods.selectors.base import SourceData
from mbutils.methods.selectors.confidence import ConfidenceStratified, kmeans_1d, proportional_allocation


def within_ss(values, labels):
    """Within-cluster sum of squares of a labelling."""
    means = np.bincount(labels, weights=values) / np.bincount(labels)
    return float(((values - means[labels]) ** 2).sum())


def brute_force_kmeans_ss(values, n_clusters):
    """Optimal 1-D k-means cost by the plain O(k n^2) dynamic programme on sorted values."""
    x = np.sort(values)
    n = len(x)
    cost = np.full((n + 1, n + 1), np.inf)
    for i in range(n):
        for j in range(i + 1, n + 1):
            cost[i, j] = ((x[i:j] - x[i:j].mean()) ** 2).sum()
    best = cost[0].copy()
    for _ in range(2, n_clusters + 1):
        best = np.array([min([best[i] + cost[i, j] for i in range(j)], default=np.inf) for j in range(n + 1)])
    return best[n]


def confidences_with_groups(group_of_item, n_sources, rng, spread=0.01):
    """Source confidences whose item means sit near (group + 0.5) / n_groups."""
    n_groups = group_of_item.max() + 1
    centre = (group_of_item + 0.5) / n_groups
    jitter = rng.uniform(-spread, spread, size=(n_sources, len(group_of_item)))
    return centre + jitter


def make_source(confidence, correct=None):
    n_items = confidence.shape[1]
    if correct is None:
        correct = np.zeros_like(confidence)
    return SourceData(correct=correct, subtasks=np.zeros(n_items, dtype=int), confidence=confidence)


# --------------------------------------------------------------------------- k-means
@pytest.mark.parametrize("seed", range(12))
def test_kmeans_1d_matches_brute_force_optimum(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 25))
    values = np.round(rng.normal(size=n) * 3, 1)  # rounding creates duplicate values
    n_clusters = int(rng.integers(1, 7))
    labels = kmeans_1d(values, n_clusters)
    n_distinct = len(np.unique(values))
    assert labels.max() + 1 == min(n_clusters, n_distinct)
    assert within_ss(values, labels) == pytest.approx(brute_force_kmeans_ss(values, n_clusters), abs=1e-9)
    # clusters are intervals numbered by increasing value
    order = np.argsort(values, kind="stable")
    assert (np.diff(labels[order]) >= 0).all()


def test_kmeans_1d_is_no_worse_than_sklearn_on_many_items():
    rng = np.random.default_rng(1)
    values = np.concatenate([rng.beta(2, 5, 3000), rng.beta(8, 2, 3000)])
    labels = kmeans_1d(values, 10)
    fitted = KMeans(n_clusters=10, n_init=10, random_state=0).fit(values[:, None])
    assert within_ss(values, labels) <= within_ss(values, fitted.labels_) + 1e-9


def test_kmeans_1d_with_few_distinct_values_uses_one_cluster_per_value():
    values = np.array([0.2, 0.9, 0.2, 0.5, 0.9, 0.9])
    labels = kmeans_1d(values, 10)
    np.testing.assert_array_equal(labels, [0, 2, 0, 1, 2, 2])


def test_kmeans_1d_rejects_bad_input():
    with pytest.raises(SelectorError):
        kmeans_1d([0.1, np.nan], 2)
    with pytest.raises(SelectorError):
        kmeans_1d([0.1, 0.2], 0)


# --------------------------------------------------------------------------- allocation
def test_allocation_sums_to_k_and_stays_within_one_of_quota():
    rng = np.random.default_rng(2)
    cases = 0
    for _ in range(400):
        n_strata = int(rng.integers(1, 15))
        sizes = rng.integers(0, 60, size=n_strata)
        sizes[rng.integers(n_strata)] += 1  # at least one item
        total = int(sizes.sum())
        for k in {1, min(3, total), int(rng.integers(1, total + 1)), total}:
            counts = proportional_allocation(k, sizes, rng)
            quota = k * sizes / total
            assert counts.sum() == k
            assert (counts >= 0).all() and (counts <= sizes).all()
            assert (np.abs(counts - quota) < 1).all()
            cases += 1
    assert cases > 1000


def test_allocation_with_k_below_number_of_strata_and_random_ties():
    sizes = np.array([10, 10, 10, 10])
    outcomes = {tuple(proportional_allocation(2, sizes, np.random.default_rng(s))) for s in range(40)}
    assert all(sum(o) == 2 and max(o) == 1 for o in outcomes)
    assert len(outcomes) > 3  # ties are broken at random, not always the same strata
    # largest remainder wins over ties: quotas 2.4, 0.8, 0.8 -> 2 + 1 + 1
    np.testing.assert_array_equal(proportional_allocation(4, [12, 4, 4], np.random.default_rng(0)), [2, 1, 1])


def test_allocation_rejects_impossible_sizes():
    rng = np.random.default_rng(0)
    with pytest.raises(SelectorError):
        proportional_allocation(11, [5, 5], rng)
    with pytest.raises(SelectorError):
        proportional_allocation(2, [5, -1], rng)


# --------------------------------------------------------------------------- selector
@pytest.fixture(scope="module")
def realistic():
    rng = np.random.default_rng(3)
    ability = rng.normal(size=(60, 1))
    difficulty = rng.normal(size=900)
    confidence = 1 / (1 + np.exp(-(ability - difficulty + 0.5 * rng.normal(size=(60, 900)))))
    correct = (rng.random(confidence.shape) < confidence).astype(float)
    return make_source(confidence, correct)


@pytest.mark.parametrize("k", [1, 3, 10, 25, 100, 500, 900])
def test_selects_exactly_k_distinct_items(realistic, k):
    selector = ConfidenceStratified()
    prepared = selector.prepare(realistic, np.random.default_rng(0))
    assert len(prepared.sizes) == 10 and prepared.sizes.sum() == 900
    assert (np.diff(prepared.centres) > 0).all()
    mb = selector.select(prepared, k, np.random.default_rng(k))
    assert mb.size == k and len(np.unique(mb.items)) == k
    assert mb.items.min() >= 0 and mb.items.max() < 900
    assert mb.reads == "correct"


def test_weights_sum_to_one_when_all_strata_hit_and_hajek_always(realistic):
    ht, hajek = ConfidenceStratified(estimator="ht"), ConfidenceStratified(estimator="hajek")
    prepared = ht.prepare(realistic, np.random.default_rng(0))
    for k in (3, 5, 50, 250):
        a = ht.select(prepared, k, np.random.default_rng(7))
        b = hajek.select(prepared, k, np.random.default_rng(7))
        np.testing.assert_array_equal(a.items, b.items)
        assert b.weights.sum() == pytest.approx(1.0)
        hit = len(np.unique(prepared.labels[a.items]))
        if hit == len(prepared.sizes):
            assert a.weights.sum() == pytest.approx(1.0)
            np.testing.assert_allclose(a.weights, b.weights)
        else:  # missed strata contribute nothing under HT
            missed = prepared.sizes[np.setdiff1d(np.arange(len(prepared.sizes)), prepared.labels[a.items])]
            assert a.weights.sum() == pytest.approx(1 - missed.sum() / 900)
    assert ht.select(prepared, 3, np.random.default_rng(0)).weights.sum() < 1


def test_full_size_gives_exact_accuracy(realistic):
    selector = ConfidenceStratified()
    prepared = selector.prepare(realistic, np.random.default_rng(0))
    mb = selector.select(prepared, 900, np.random.default_rng(0))
    targets = realistic.correct[:5]
    np.testing.assert_allclose(mb.estimate(targets), targets.mean(axis=1))


def test_ht_is_unbiased_where_plain_mean_is_not():
    """Unequal strata with one item each: HT reweights, the plain mean over-counts small strata."""
    rng = np.random.default_rng(4)
    sizes = np.array([6] * 5 + [14] * 5)  # quotas 0.6 and 1.4 at k = 10 -> one item per stratum
    group = rng.permutation(np.repeat(np.arange(10), sizes))
    source = make_source(confidences_with_groups(group, 8, rng))
    # target: 5 of 6 right in the small strata, 2 of 14 right in the large ones
    y = np.zeros(len(group))
    for h in range(10):
        members = np.flatnonzero(group == h)
        y[members[: 5 if sizes[h] == 6 else 2]] = 1
    truth = y.mean()

    selector = ConfidenceStratified()
    prepared = selector.prepare(source, rng)
    np.testing.assert_array_equal(prepared.labels, group)  # strata recovered exactly
    n_draws, k = 3000, 10
    ht, plain = np.empty(n_draws), np.empty(n_draws)
    for r in range(n_draws):
        mb = selector.select(prepared, k, np.random.default_rng([5, r]))
        assert np.bincount(prepared.labels[mb.items], minlength=10).tolist() == [1] * 10
        ht[r] = mb.estimate(y[None])[0]
        plain[r] = y[mb.items].mean()

    # exact variance of the stratified estimator with one item per stratum
    s2 = np.array([y[group == h].var(ddof=1) for h in range(10)])
    var_ht = ((sizes / sizes.sum()) ** 2 * (1 - 1 / sizes) * s2).sum()
    se = np.sqrt(var_ht / n_draws)
    assert abs(ht.mean() - truth) <= 4 * se
    expected_plain = np.mean([y[group == h].mean() for h in range(10)])
    assert abs(expected_plain - truth) > 20 * se  # the design makes the plain mean biased ...
    assert abs(plain.mean() - truth) > 10 * se  # ... and the draws show it


def test_falls_back_to_correctness_without_confidence():
    rng = np.random.default_rng(6)
    correct = (rng.random((3, 200)) < 0.5).astype(float)
    source = SourceData(correct=correct, subtasks=np.zeros(200, dtype=int))
    selector = ConfidenceStratified()
    prepared = selector.prepare(source, rng)
    # three sources -> item means in {0, 1/3, 2/3, 1}: four strata, one per value
    np.testing.assert_array_equal(prepared.labels, np.round(correct.mean(axis=0) * 3).astype(int))
    mb = selector.select(prepared, 20, rng)
    assert mb.size == 20 and mb.weights.sum() == pytest.approx(1.0)


def test_same_rng_same_result_and_different_rng_differs(realistic):
    selector = ConfidenceStratified()
    prepared = selector.prepare(realistic, np.random.default_rng(0))
    a = selector.select(prepared, 50, np.random.default_rng(11))
    b = selector.select(prepared, 50, np.random.default_rng(11))
    c = selector.select(prepared, 50, np.random.default_rng(12))
    np.testing.assert_array_equal(a.items, b.items)
    np.testing.assert_array_equal(a.weights, b.weights)
    assert set(a.items) != set(c.items)


def test_validation_and_registration(realistic):
    with pytest.raises(SelectorError, match="estimator must be one of 'ht'"):
        ConfidenceStratified(estimator="mean").prepare(realistic, np.random.default_rng(0))
    with pytest.raises(SelectorError, match="n_strata must be at least 1, not 0"):
        ConfidenceStratified(n_strata=0).validate_params()
    selector = ConfidenceStratified()
    prepared = selector.prepare(realistic, np.random.default_rng(0))
    with pytest.raises(SelectorError, match="at most 900"):
        selector.select(prepared, 901, np.random.default_rng(0))
    bad = make_source(np.where(np.eye(3, 5) > 0, np.nan, 0.5))
    with pytest.raises(SelectorError, match="missing"):
        selector.prepare(bad, np.random.default_rng(0))
    assert "confidence_stratified" in selector_names()
    assert type(make_selector("confidence_stratified")) is ConfidenceStratified
    assert selector.get_params() == {"n_strata": 10, "estimator": "ht"}

"""Random baselines: exact sizes, unbiasedness, allocation, and the hypergeometric law."""

import numpy as np
import pytest
from scipy import stats

from mbutils.base.errors import SelectorError
from mbutils.methods.selectors import make_selector
from mbutils.methods.selectors.base import SourceData


def _source(subtask_sizes, n_sources=5, seed=0):
    rng = np.random.default_rng(seed)
    subtasks = np.repeat(np.arange(len(subtask_sizes)), subtask_sizes)
    return SourceData(rng.integers(0, 2, (n_sources, len(subtasks))), subtasks)


@pytest.mark.parametrize("name", ["random", "subtask_equal", "subtask_equal_weighted",
                                  "subtask_proportional", "subtask_proportional_weighted"])
def test_exact_k_distinct_items_and_unit_weights(name):
    source = _source([40, 7, 13, 3])
    sel = make_selector(name)
    for k in (1, 3, 4, 10, 50, 63):
        mb = sel.select(sel.prepare(source, None), k, np.random.default_rng(k))
        assert len(np.unique(mb.items)) == k == mb.size
        assert mb.items.min() >= 0 and mb.items.max() < 63
        assert np.isclose(mb.weights.sum(), 1.0)
    with pytest.raises(SelectorError, match="cannot choose 64 items from 63"):
        sel.select(source, 64, np.random.default_rng(0))


def test_subtask_equal_allocation():
    source = _source([40, 30, 20, 10])
    sel = make_selector("subtask_equal")
    for seed in range(20):
        mb = sel.select(source, 10, np.random.default_rng(seed))
        counts = np.bincount(source.subtasks[mb.items], minlength=4)
        assert sorted(counts.tolist()) == [2, 2, 3, 3]
    # A small subtask gives all it has; the rest goes elsewhere.
    small = _source([2, 50, 50])
    counts = np.bincount(small.subtasks[sel.select(small, 30, np.random.default_rng(0)).items])
    assert counts[0] == 2 and counts.sum() == 30


def test_random_estimate_is_unbiased():
    rng = np.random.default_rng(0)
    targets = rng.integers(0, 2, (5, 200)).astype(float)
    truth = targets.mean(1)
    sel = make_selector("random")
    source = _source([200])
    draws = np.array([sel.select(source, 10, rng).estimate(targets) for _ in range(4000)])
    se = draws.std(0) / np.sqrt(len(draws))
    assert np.all(np.abs(draws.mean(0) - truth) < 4 * se)


def test_weighted_stratified_estimate_is_unbiased_where_plain_is_not():
    sizes = [150, 10, 10, 10]
    subtasks = np.repeat(np.arange(4), sizes)
    target = (subtasks == 0).astype(float)[None, :]  # right on the big subtask only
    truth = target.mean()
    source = SourceData(np.zeros((3, len(subtasks))), subtasks)
    rng = np.random.default_rng(1)
    plain = make_selector("subtask_equal")
    weighted = make_selector("subtask_equal_weighted")
    est_plain = np.array([plain.select(source, 8, rng).estimate(target)[0] for _ in range(2000)])
    est_w = np.array([weighted.select(source, 8, rng).estimate(target)[0] for _ in range(2000)])
    assert abs(est_w.mean() - truth) < 1e-12  # 2 items per subtask: weighted is exact here
    assert abs(est_plain.mean() - 0.25) < 1e-12 and truth > 0.8


def test_proportional_is_equal_allocation_in_expectation():
    source = _source([100, 20])
    sel = make_selector("subtask_proportional")
    rng = np.random.default_rng(2)
    counts = np.array([np.bincount(source.subtasks[sel.select(source, 2, rng).items], minlength=2)
                       for _ in range(3000)])
    share = counts[:, 0].sum() / counts.sum()
    assert abs(share - 0.5) < 0.03  # would be 0.83 under proportional allocation


def test_random_agreement_matches_the_hypergeometric_probability():
    # Pair (A, B) on N=20 items: A alone right on 5, B alone right on 3.
    n, a_only, b_only, k = 20, 5, 3, 6
    a = np.zeros(n); b = np.zeros(n)
    a[:a_only] = 1
    b[a_only:a_only + b_only] = 1
    both = np.stack([a, b])
    dist = stats.multivariate_hypergeom(m=[a_only, b_only, n - a_only - b_only], n=k)
    exact = sum(dist.pmf([x, y, k - x - y]) for x in range(a_only + 1)
                for y in range(b_only + 1) if x > y and x + y <= k)
    sel = make_selector("random")
    source = _source([n])
    rng = np.random.default_rng(5)
    m = 20000
    agree = np.array([np.diff(sel.select(source, k, rng).estimate(both))[0] < 0 for _ in range(m)])
    assert abs(agree.mean() - exact) < 4 * np.sqrt(exact * (1 - exact) / m)

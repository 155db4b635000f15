"""tinyBenchmarks selectors: anchors, weights, seeding, the IRT estimators, refusals."""

from __future__ import annotations

import numpy as np
import pytest

from mbutils.methods.irt_fit import IRTModel
from mbutils.base.errors import SelectorError
from mbutils.methods.irt import map_abilities, sigmoid
from mbutils.methods.selectors import make_selector
from mbutils.methods.selectors.base import MicroBenchmark, SourceData
from mbutils.methods.selectors.tinybench import (TinyBenchmarks, TinyBenchmarksGPIRT, TinyBenchmarksIRT, TinyBenchmarksPIRT,
                                                 _distinct_nearest)
from mbutils.methods.selectors.tiny_estimators import IRTMicroBenchmark, gp_lambda

FAMILY = {
    "tinybenchmarks": TinyBenchmarks,
    "tinybenchmarks_irt": TinyBenchmarksIRT,
    "tinybenchmarks_pirt": TinyBenchmarksPIRT,
    "tinybenchmarks_gpirt": TinyBenchmarksGPIRT,
}


def planted_run(seed, n_src=200, n_tgt=50, n_items=600, dims=2):
    """Sources and targets answering the same items under a planted 2PL model."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=(n_src + n_tgt, dims))
    a = rng.normal(0.0, 0.5, size=(n_items, dims))
    a[:, 0] = np.abs(rng.normal(1.2, 0.4, size=n_items))
    b = rng.normal(0.0, 1.5, size=n_items)
    Y = (rng.random((n_src + n_tgt, n_items)) < sigmoid(theta @ a.T - b)).astype(float)
    source = SourceData(correct=Y[:n_src], subtasks=np.zeros(n_items, dtype=int))
    return source, Y[n_src:]


@pytest.fixture(scope="module")
def run():
    return planted_run(0)


@pytest.fixture(scope="module")
def prepared(run):
    return TinyBenchmarks().prepare(run[0], np.random.default_rng(0))


def test_family_is_registered_and_shares_one_preparation():
    selectors = {name: make_selector(name) for name in FAMILY}
    for name, selector in selectors.items():
        assert type(selector) is FAMILY[name] and selector.name == name
    assert len({s.shared_key() for s in selectors.values()}) == 1
    assert TinyBenchmarks(irt=IRTModel(dims=3)).shared_key() != TinyBenchmarks().shared_key()
    assert TinyBenchmarks().set_params(irt__dims=3).shared_key() == TinyBenchmarks(irt=IRTModel(dims=3)).shared_key()
    # gp-only parameters change the estimate, not the shared choice
    assert TinyBenchmarksGPIRT(variance_factor=1.0).shared_key() == TinyBenchmarks().shared_key()


@pytest.mark.parametrize("k", [1, 10, 100, 600])
def test_exactly_k_distinct_anchors_with_weights_summing_to_one(prepared, k):
    micro = TinyBenchmarks().select(prepared, k, np.random.default_rng(k))
    assert micro.size == k
    assert len(np.unique(micro.items)) == k
    assert micro.items.min() >= 0 and micro.items.max() < 600
    assert (micro.weights >= 0).all()
    assert micro.weights.sum() == pytest.approx(1.0)


def test_same_seed_same_selection_from_independent_preparations(run):
    picks = []
    for _ in range(2):
        prep = TinyBenchmarks().prepare(run[0], np.random.default_rng(99))
        picks.append(TinyBenchmarks().select(prep, 50, np.random.default_rng(7)))
    np.testing.assert_array_equal(picks[0].items, picks[1].items)
    np.testing.assert_array_equal(picks[0].weights, picks[1].weights)
    other = TinyBenchmarks().select(
        TinyBenchmarks().prepare(run[0], np.random.default_rng(99)), 50, np.random.default_rng(8))
    assert set(other.items) != set(picks[0].items)


def test_siblings_use_identical_anchors(prepared):
    micros = [cls().select(prepared, 25, np.random.default_rng(3)) for cls in FAMILY.values()]
    for micro in micros[1:]:
        np.testing.assert_array_equal(micro.items, micros[0].items)
    assert type(micros[0]) is MicroBenchmark
    assert all(isinstance(m, IRTMicroBenchmark) for m in micros[1:])


def test_anchor_weights_are_cluster_shares(prepared):
    """Each weight is the share of items whose nearest centroid is the anchor's centroid."""
    micro = TinyBenchmarks().select(prepared, 20, np.random.default_rng(1))
    counts = micro.weights * prepared.n_items
    np.testing.assert_allclose(counts, np.round(counts))
    assert counts.sum() == prepared.n_items


def test_estimates_are_fractions_and_extremes_are_right(run, prepared):
    _, targets = run
    extremes = np.vstack([np.zeros(600), np.ones(600)])
    for name, cls in FAMILY.items():
        micro = cls().select(prepared, 30, np.random.default_rng(2))
        est = micro.estimate(targets)
        assert est.shape == (len(targets),)
        assert ((est >= 0) & (est <= 1)).all(), name
        low, high = micro.estimate(extremes)
        if name == "tinybenchmarks":
            assert (low, high) == (0.0, pytest.approx(1.0))
        else:  # MAP abilities shrink towards the sources, but stay beyond every real target
            assert low < min(0.25, est.min()) and high > max(0.75, est.max()), name


def test_pirt_formula_and_exactness_when_every_item_is_an_anchor(run, prepared):
    _, targets = run
    micro = TinyBenchmarksPIRT().select(prepared, 40, np.random.default_rng(5))
    est = micro.estimates(targets)
    # recompute p-IRT from the IRT estimate's pieces: k/N * anchor mean + rest predicted
    others = np.setdiff1d(np.arange(600), micro.items)
    theta = map_abilities(targets[:, micro.items], prepared.item_a[micro.items],
                          prepared.item_b[micro.items])
    prob = sigmoid(theta @ prepared.item_a.T - prepared.item_b)
    lam = 40 / 600
    manual = lam * targets[:, micro.items].mean(1) + (1 - lam) * prob[:, others].mean(1)
    np.testing.assert_allclose(est["pirt"], manual, atol=1e-12)
    np.testing.assert_allclose(est["irt"], prob.mean(1), atol=1e-12)
    # all items observed: p-IRT, the anchor estimate and gp-IRT are the exact accuracy
    full = TinyBenchmarksGPIRT().select(prepared, 600, np.random.default_rng(5))
    for key in ("anchor", "pirt", "gpirt"):
        np.testing.assert_allclose(full.estimates(targets)[key], targets.mean(1), atol=1e-12)


def test_gp_lambda_follows_the_heuristic(run, prepared):
    _, targets = run
    selector = TinyBenchmarksGPIRT()
    bias, variance = selector.gp_stats(prepared)
    assert 0 < bias < 0.1 and 0 < variance <= 0.25
    lams = [selector.select(prepared, k, np.random.default_rng(k)).gp_lambda for k in (10, 50, 200)]
    assert 0 < lams[0] < lams[1] < lams[2] < 1
    assert lams[1] == pytest.approx(bias**2 / (bias**2 + variance / (4 * 50)))
    micro = selector.select(prepared, 50, np.random.default_rng(50))
    est = micro.estimates(targets)
    np.testing.assert_allclose(
        est["gpirt"], micro.gp_lambda * est["anchor"] + (1 - micro.gp_lambda) * est["pirt"])
    assert gp_lambda(0.0, 0.2, 10, 4.0) == 0.0 and gp_lambda(0.1, 0.0, 10, 4.0) == 1.0


def test_irt_estimators_beat_random_subsets_on_a_planted_irt_benchmark():
    """Mean absolute error over 3 planted runs x 2 sizes; random averaged over 10 draws each.

    Observed (k=25 / k=100): random 0.071 / 0.034, anchors 0.064 / 0.035,
    IRT 0.056 / 0.030, p-IRT 0.055 / 0.029, gp-IRT 0.054 / 0.029.
    """
    errors: dict[str, list[float]] = {}
    for seed in (1, 2, 3):
        source, targets = planted_run(seed)
        truth = targets.mean(1)
        prep = TinyBenchmarks().prepare(source, np.random.default_rng(seed))
        rng = np.random.default_rng(100 + seed)
        for k in (25, 100):
            micro = TinyBenchmarksGPIRT().select(prep, k, np.random.default_rng([seed, k]))
            for key, est in micro.estimates(targets).items():
                errors.setdefault(key, []).append(np.abs(est - truth).mean())
            for _ in range(10):
                idx = rng.choice(600, size=k, replace=False)
                errors.setdefault("random", []).append(
                    np.abs(targets[:, idx].mean(1) - truth).mean())
    mean = {key: float(np.mean(v)) for key, v in errors.items()}
    for key in ("irt", "pirt", "gpirt"):
        assert mean[key] < 0.92 * mean["random"], (key, mean)


def test_distinct_nearest_gives_ties_to_the_closer_centre():
    points = np.array([[0.0], [1.0], [10.0]])
    centers = np.array([[0.2], [0.1], [9.0]])
    np.testing.assert_array_equal(_distinct_nearest(points, centers), [1, 0, 2])
    # identical points: still distinct indices
    dup = np.zeros((4, 2))
    assert sorted(_distinct_nearest(dup, np.zeros((4, 2)))) == [0, 1, 2, 3]


def test_duplicate_embeddings_still_give_k_distinct_items():
    """Sources all wrong on many items: identical embeddings, more clusters than distinct points."""
    source, _ = planted_run(4, n_src=30, n_items=40)
    Y = source.correct.copy()
    Y[:, :30] = 0.0
    prep = TinyBenchmarks().prepare(SourceData(Y, source.subtasks), np.random.default_rng(0))
    micro = TinyBenchmarks().select(prep, 15, np.random.default_rng(0))
    assert len(np.unique(micro.items)) == 15
    assert micro.weights.sum() == pytest.approx(1.0)


def test_refusals_have_clear_messages(run, prepared):
    for k in (601, 0, 2.5):
        with pytest.raises(SelectorError, match="tinybenchmarks"):
            TinyBenchmarks().select(prepared, k, np.random.default_rng(0))
    with pytest.raises(SelectorError, match="at least 2 sources"):
        TinyBenchmarks().prepare(SourceData(np.ones((1, 5)), np.zeros(5, int)), None)
    two = TinyBenchmarks().prepare(run[0].__class__(run[0].correct[:2], run[0].subtasks), None)
    with pytest.raises(SelectorError, match="at least 3 sources"):
        TinyBenchmarksGPIRT().select(two, 5, np.random.default_rng(0))
    with pytest.raises(SelectorError, match="600 seen items"):
        TinyBenchmarksIRT().select(prepared, 5, np.random.default_rng(0)).estimate(np.ones((2, 7)))
    with pytest.raises(SelectorError, match="0/1"):
        TinyBenchmarks().prepare(SourceData(np.full((3, 4), 0.5), np.zeros(4, int)), None)

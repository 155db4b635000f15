"""The estimators beyond the plain mean: the cross-fitted difference (AIPW-style) estimator is unbiased
under uniform random sampling whatever its predictions, its interval covers at its nominal rate, perfect
predictions leave no variance and useless ones give the sample mean's; the frontier split puts every
target above every source."""

from __future__ import annotations

import numpy as np
import pytest

import mbutils
from mbutils.methods.estimators import (difference_estimate, knn_predictions, normal_interval, regression_estimate,
                                        sample_mean_variance)
from mbutils.methods.protocol import draw_run

N_ITEMS, N_SOURCES, K, DRAWS = 400, 60, 40, 500


@pytest.fixture(scope="module")
def pool():
    """A synthetic pool: 2PL-like answers of 60 sources and 20 targets on 400 items (fixed seed)."""
    rng = np.random.default_rng(11)
    ability = rng.normal(0, 1, N_SOURCES + 20)
    difficulty = rng.normal(0, 1, N_ITEMS)
    p = 1 / (1 + np.exp(-(ability[:, None] - difficulty[None, :])))
    correct = (rng.random(p.shape) < p).astype(float)
    return correct[:N_SOURCES], correct[N_SOURCES:]


def draws(targets, sources, predict_with, seed=0):
    """Estimates, variances and truths over DRAWS uniform samples of K items (folds at random)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(DRAWS):
        items = np.sort(rng.choice(N_ITEMS, K, replace=False))
        order = rng.permutation(K)
        folds = (np.sort(order[:K // 2]), np.sort(order[K // 2:]))
        est, var = difference_estimate(targets, items, folds, predict_with(targets), N_ITEMS)
        out.append((est, var))
    est = np.array([e for e, _ in out])
    var = np.array([v for _, v in out])
    return est, var, targets.mean(axis=1)


def test_the_difference_estimator_is_unbiased_and_its_interval_covers(pool):
    sources, targets = pool
    est, var, truth = draws(targets, sources, lambda y: (lambda on: knn_predictions(sources, y[:, on], on)))
    error = est - truth                                   # DRAWS x targets
    se = error.std(axis=0, ddof=1) / np.sqrt(DRAWS)       # Monte Carlo standard error of the mean error
    assert (np.abs(error.mean(axis=0)) < 4 * se + 1e-12).all(), (error.mean(axis=0), se)
    low, high = normal_interval(est, var, 0.90)
    cover = ((low <= truth) & (truth <= high)).mean()
    # the nominal rate within Monte Carlo error (20 targets x 500 draws; the draws of one target are independent,
    # the targets share them, so the bound allows for that with a wide margin)
    assert abs(cover - 0.90) <= 4 * np.sqrt(0.9 * 0.1 / DRAWS), cover


def test_good_predictions_beat_the_sample_mean_useless_ones_match_it(pool):
    sources, targets = pool
    est, _, truth = draws(targets, sources, lambda y: (lambda on: knn_predictions(sources, y[:, on], on)))
    rng = np.random.default_rng(0)
    means = np.array([targets[:, np.sort(rng.choice(N_ITEMS, K, replace=False))].mean(1) for _ in range(DRAWS)])
    assert ((est - truth) ** 2).mean() < ((means - truth) ** 2).mean()
    useless, var_useless, _ = draws(targets, sources, lambda y: (lambda on: np.full(y.shape, 0.5)))
    ratio = ((useless - truth) ** 2).mean() / ((means - truth) ** 2).mean()
    assert 0.85 < ratio < 1.25, ratio  # the same precision as the sample mean, within Monte Carlo error
    items = np.arange(K)
    assert np.allclose(np.median(var_useless), np.median(sample_mean_variance(targets, items, N_ITEMS)), rtol=0.25)


def test_perfect_predictions_leave_no_variance(pool):
    _, targets = pool
    items = np.arange(0, N_ITEMS, N_ITEMS // K)
    folds = (np.arange(0, K, 2), np.arange(1, K, 2))
    est, var = difference_estimate(targets, items, folds, lambda on: targets, N_ITEMS)
    assert np.allclose(est, targets.mean(axis=1)) and np.allclose(var, 0.0)


def test_the_regression_recovers_an_exactly_linear_pool():
    rng = np.random.default_rng(3)
    sources = (rng.random((50, 30)) < 0.5).astype(float)
    sources[:, 10:] = sources[:, :10].repeat(2, axis=1)  # the other items are copies: accuracy is linear in the first 10
    est = regression_estimate(sources, sources[:5], np.arange(10), ridge=1e-9)
    assert np.allclose(est, sources[:5].mean(axis=1), atol=1e-6)


def test_the_frontier_split_puts_every_target_above_every_source():
    bench = mbutils.load_benchmark("synthetic-gpqa")
    protocol = mbutils.Protocol(n_sources=100, n_targets=20, n_runs=3, frontier=0.25)
    for run in range(3):
        r = draw_run(bench, protocol, run)
        assert bench.accuracy[r.targets].min() > bench.accuracy[r.sources].max()
        assert len(r.targets) == 20 and len(r.sources) == 100
    with pytest.raises(mbutils.MbutilsError, match="fewer than 200 targets"):
        draw_run(bench, mbutils.Protocol(n_sources=10, n_targets=200, frontier=0.25), 0)


def test_the_estimator_selectors_pass_the_contract_and_run_in_an_experiment():
    from mbutils.testing import check_selector

    for name in ("random_difference", "random_regression"):
        check_selector(mbutils.make_selector(name))
    bench = mbutils.load_benchmark("synthetic-gpqa")
    res = mbutils.run_experiment(bench, ["random", "random_difference"], [25], mbutils.Protocol(
        n_sources=60, n_targets=12, n_runs=2, frontier=0.2), progress=False, use_cache=False)
    assert set(res["selector"]) == {"random", "random_difference"}


def test_a_regression_fitted_at_scoring_time_is_not_written_as_a_fixed_micro_benchmark(tmp_path):
    """A folder holds what its estimate reads; the regression estimator, fitted on the pool when scoring, is
    refused (not silently scored as a plain mean), pointing at the difference estimator, which a folder holds
    (tests/micro/test_difference.py)."""
    bench = mbutils.load_benchmark("synthetic-gpqa")
    with pytest.raises(mbutils.MbutilsError, match="reads the pool's answers at scoring time.*'random_difference'"):
        mbutils.build_micro(bench, "random_regression", 20, runs=2)


def test_neighbours_equally_near_are_taken_in_row_order():
    """Four sources at the same distance from the target for three places: the first three rows are the
    neighbours, whatever the order of the others (a stable rule, so a score is a function of the data)."""
    on = np.array([0, 1])
    sources = np.array([[1, 0, 1, 1], [0, 1, 0, 1], [1, 0, 0, 0], [0, 1, 1, 0], [1, 1, 1, 1]], dtype=float)
    target = np.array([[1, 1]], dtype=float)  # rows 0-3 disagree with it once on `on`, row 4 never
    predicted = knn_predictions(sources, target, on, neighbours=4)
    assert np.array_equal(predicted, sources[[4, 0, 1, 2]].mean(axis=0, keepdims=True))
    moved = sources[[0, 1, 2, 4, 3]]  # the same sources, the last tied one first of the rest
    assert np.array_equal(knn_predictions(moved, target, on, neighbours=4), moved[[3, 0, 1, 2]].mean(0, keepdims=True))

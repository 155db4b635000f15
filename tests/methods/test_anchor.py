"""Anchor Points: correlation without NaN, FasterPAM medoids, cluster weights, two estimates."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import adjusted_rand_score

from mbutils.base.errors import SelectorError
from mbutils.methods.selectors import make_selector, selector_names
from mbutils.methods.selectors.anchor import (AnchorPoints, AnchorPointsBinary, assign_to_medoids, extend_medoids, item_correlation)
from mbutils.methods.selectors.base import SourceData

from conftest import real_bundle, real_table


def planted_groups(rng, group_sizes=(40, 25, 60, 35), n_sources=80):
    """Confidences driven by one latent ability per (source, item group): groups correlate inside."""
    group = rng.permutation(np.repeat(np.arange(len(group_sizes)), group_sizes))
    ability = rng.normal(size=(n_sources, len(group_sizes)))
    easiness = rng.normal(scale=0.5, size=len(group))
    logit = 2.0 * ability[:, group] + easiness + 0.3 * rng.normal(size=(n_sources, len(group)))
    confidence = 1 / (1 + np.exp(-logit))
    correct = (rng.random(confidence.shape) < confidence).astype(float)
    return group, SourceData(correct=correct, subtasks=np.zeros(len(group), dtype=int), confidence=confidence)


@pytest.fixture(scope="module")
def planted():
    return planted_groups(np.random.default_rng(0))


# --------------------------------------------------------------------------- correlation
def test_correlation_matches_corrcoef_and_handles_constant_items():
    rng = np.random.default_rng(1)
    proxy = rng.random((30, 50))
    constant = np.array([3, 17, 40])
    proxy[:, constant] = [[0.0, 0.7, 1.0]]
    corr = item_correlation(proxy)
    varying = np.setdiff1d(np.arange(50), constant)
    np.testing.assert_allclose(corr[np.ix_(varying, varying)], np.corrcoef(proxy[:, varying], rowvar=False), atol=1e-12)
    assert not np.isnan(corr).any()
    assert np.array_equal(corr, corr.T)
    np.testing.assert_array_equal(np.diag(corr), 1.0)
    off_diagonal = corr[constant] - np.eye(50)[constant]
    np.testing.assert_array_equal(off_diagonal, 0.0)
    single = item_correlation(proxy, dtype="float32")
    assert single.dtype == np.float32
    np.testing.assert_allclose(single, corr, atol=1e-5)


def test_correlation_of_binary_data_with_few_sources():
    rng = np.random.default_rng(2)
    correct = (rng.random((4, 300)) < 0.5).astype(float)  # 1/8 of the items are constant
    corr = item_correlation(correct)
    assert np.isfinite(corr).all() and np.abs(corr).max() <= 1.0


def test_correlation_rejects_missing_values():
    with pytest.raises(SelectorError, match="missing"):
        item_correlation(np.array([[0.1, np.nan], [0.2, 0.3]]))


# --------------------------------------------------------------------------- selection
def test_prepare_gives_symmetric_zero_diagonal_dissimilarity(planted):
    _, source = planted
    for dtype in ("float64", "float32"):
        prepared = AnchorPoints(dtype=dtype).prepare(source, np.random.default_rng(0))
        d = prepared.dissimilarity
        assert d.dtype == np.dtype(dtype) and d.shape == (160, 160)
        assert np.array_equal(d, d.T)
        np.testing.assert_array_equal(np.diag(d), 0.0)
        assert d.min() >= 0.0 and d.max() <= 2.0


@pytest.mark.parametrize("k", [1, 4, 10, 50, 160])
def test_exactly_k_distinct_medoids_with_cluster_weights(planted, k):
    _, source = planted
    selector = AnchorPoints()
    prepared = selector.prepare(source, np.random.default_rng(0))
    mb = selector.select(prepared, k, np.random.default_rng(k))
    assert mb.size == k and len(np.unique(mb.items)) == k
    assert mb.weights.sum() == pytest.approx(1.0)
    assert (mb.weights > 0).all()
    np.testing.assert_allclose(mb.weights * 160, np.round(mb.weights * 160))  # cluster sizes / N
    if k == 160:
        np.testing.assert_allclose(mb.weights, 1 / 160)


def test_recovers_planted_item_groups(planted):
    group, source = planted
    selector = AnchorPoints()
    prepared = selector.prepare(source, np.random.default_rng(0))
    for seed in range(5):
        mb = selector.select(prepared, 4, np.random.default_rng(seed))
        assert sorted(group[mb.items]) == [0, 1, 2, 3]  # one medoid per planted group
        members = assign_to_medoids(prepared.dissimilarity, mb.items)
        assert adjusted_rand_score(group, members) >= 0.95
        np.testing.assert_allclose(np.sort(mb.weights), np.sort([40, 25, 60, 35]) / 160, atol=3 / 160)


def test_medoid_joins_itself_even_when_duplicated():
    # items 0 and 1 have identical source data (dissimilarity 0 to each other)
    d = np.array([[0.0, 0.0, 0.9], [0.0, 0.0, 0.9], [0.9, 0.9, 0.0]])
    np.testing.assert_array_equal(assign_to_medoids(d, np.array([0, 1])), [0, 1, 0])
    np.testing.assert_array_equal(assign_to_medoids(d, np.array([1, 2])), [0, 0, 1])


def test_confidence_and_binary_variants(planted):
    _, source = planted
    rng = np.random.default_rng(3)
    targets_correct = (rng.random((6, 160)) < 0.5).astype(float)
    targets_conf = rng.random((6, 160))
    conf_sel, bin_sel = AnchorPoints(), AnchorPointsBinary()
    a = conf_sel.select(conf_sel.prepare(source, np.random.default_rng(0)), 10, np.random.default_rng(9))
    b = bin_sel.select(bin_sel.prepare(source, np.random.default_rng(0)), 10, np.random.default_rng(9))
    np.testing.assert_array_equal(a.items, b.items)
    np.testing.assert_array_equal(a.weights, b.weights)
    assert (a.reads, b.reads) == ("confidence", "correct")
    with_conf_a = a.estimate(targets_correct, targets_conf)
    with_conf_b = b.estimate(targets_correct, targets_conf)
    np.testing.assert_allclose(with_conf_a, targets_conf[:, a.items] @ a.weights)
    assert not np.allclose(with_conf_a, with_conf_b)
    np.testing.assert_array_equal(a.estimate(targets_correct), b.estimate(targets_correct))


def test_same_rng_same_result(planted):
    _, source = planted
    selector = AnchorPoints()
    prepared = selector.prepare(source, np.random.default_rng(0))
    a = selector.select(prepared, 20, np.random.default_rng(5))
    b = selector.select(prepared, 20, np.random.default_rng(5))
    np.testing.assert_array_equal(a.items, b.items)
    np.testing.assert_array_equal(a.weights, b.weights)


def test_validation_and_registration(planted):
    _, source = planted
    selector = AnchorPoints()
    prepared = selector.prepare(source, np.random.default_rng(0))
    with pytest.raises(SelectorError, match="at most 160"):
        selector.select(prepared, 161, np.random.default_rng(0))
    for bad in ({"init": "kmeans++"}, {"dtype": "float16"}, {"max_iter": 0}, {"n_cpu": 0}):
        stored = AnchorPoints(**bad)  # __init__ stores; the check runs when work starts
        with pytest.raises(SelectorError, match=f"anchor_points: {next(iter(bad))} must be"):
            stored.prepare(source, np.random.default_rng(0))
    assert {"anchor_points", "anchor_points_binary"} <= set(selector_names())
    assert type(make_selector("anchor_points")) is AnchorPoints
    assert type(make_selector("anchor_points_binary")) is AnchorPointsBinary
    assert AnchorPointsBinary().get_params() == {"init": "random", "max_iter": 100, "dtype": "float32", "n_cpu": 1,
                                                 "warm_start": True}


def test_real_gpqa_with_few_binary_sources_has_no_nan():
    """0/1 data and 10 sources: many items are constant over the sources (NaN in the reference)."""
    responses = pd.read_csv(real_table("gpqa"), index_col=0)
    rng = np.random.default_rng(0)
    seen = rng.choice(responses.shape[1], 224, replace=False)
    sources = rng.choice(responses.shape[0], 10, replace=False)
    correct = responses.to_numpy(dtype=float)[np.ix_(sources, seen)]
    assert (correct.std(axis=0) == 0).any()
    source = SourceData(correct=correct, subtasks=np.zeros(224, dtype=int))
    selector = AnchorPoints()
    prepared = selector.prepare(source, rng)
    assert np.isfinite(prepared.dissimilarity).all()
    for k in (10, 25, 50, 100, 200):
        mb = selector.select(prepared, k, rng)
        assert mb.size == k and len(np.unique(mb.items)) == k
        assert mb.weights.sum() == pytest.approx(1.0)


# --------------------------------------------------------------------------- warm start
def test_extend_medoids_keeps_the_old_ones_and_never_duplicates_an_item():
    # Items 0-2 are identical to medoid 0 (dissimilarity 0): seeding must not pick them.
    rng = np.random.default_rng(0)
    points = rng.normal(size=(30, 3))
    points[1:3] = points[0]
    diss = ((points[:, None] - points[None]) ** 2).sum(-1)
    grown = extend_medoids(diss, np.array([0, 10]), 12, np.random.default_rng(1))
    assert list(grown[:2]) == [0, 10]
    assert len(set(grown.tolist())) == 12
    assert not {1, 2} & set(grown.tolist())
    # Only 3 distinct points: the rest are drawn uniformly, still distinct.
    flat = np.zeros((6, 6))
    assert sorted(extend_medoids(flat, np.array([2]), 6, np.random.default_rng(0)).tolist()) == list(range(6))


def test_warm_start_far_points_are_drawn_more_often():
    # One far item: k-medoids++ picks it as the second medoid almost always.
    diss = np.full((20, 20), 0.01)
    diss[19, :] = diss[:, 19] = 1.0
    np.fill_diagonal(diss, 0.0)
    picks = [extend_medoids(diss, np.array([0]), 2, np.random.default_rng(s))[1] for s in range(200)]
    assert np.mean(np.array(picks) == 19) > 0.9


def test_warm_start_is_as_good_a_clustering_as_a_cold_one(planted):
    group, source = planted
    losses = {}
    for warm in (True, False):
        selector = AnchorPoints(warm_start=warm)
        prepared = selector.prepare(source, np.random.default_rng(0))
        for k in (4, 8, 16):
            selector.select(prepared, k, np.random.default_rng(k))
        medoids = prepared.medoids_by_size[16][0]
        losses[warm] = prepared.dissimilarity[medoids].min(axis=0).sum()
        assert len(set(medoids.tolist())) == 16
    # Both are FasterPAM local optima; the warm one is within 2% of the cold one's loss.
    assert losses[True] <= 1.02 * losses[False]
    # Without warm start a size does not depend on the sizes run before it.
    cold = AnchorPoints(warm_start=False)
    alone = cold.prepare(source, np.random.default_rng(0))
    after = cold.prepare(source, np.random.default_rng(0))
    cold.select(after, 4, np.random.default_rng(4))
    np.testing.assert_array_equal(cold.select(alone, 8, np.random.default_rng(8)).items,
                                  cold.select(after, 8, np.random.default_rng(8)).items)


def test_float32_picks_the_medoids_of_float64(planted):
    _, source = planted
    chosen = {}
    for dtype in ("float64", "float32"):
        selector = AnchorPoints(dtype=dtype)
        prepared = selector.prepare(source, np.random.default_rng(0))
        chosen[dtype] = [selector.select(prepared, k, np.random.default_rng(k)).items for k in (4, 8, 16, 32)]
    for double, single in zip(chosen["float64"], chosen["float32"]):
        np.testing.assert_array_equal(double, single)


def test_a_chapter_recomputes_the_experiments_anchors_whatever_the_blas_threads():
    """book.pick runs single-threaded like the experiment: on MMLU-Pro's 6,016 seen items a
    two-thread correlation product once tipped a k-medoids tie (0.2 points apart)."""
    from threadpoolctl import threadpool_limits

    from mbutils import book

    setting = book.configure("mmlu-pro", runs=1, sizes="10", profile="quick", jobs=1)
    assert setting.data.name == "mmlu-pro-leaderboard"
    res = setting.results(["anchor_points"])
    source, targets, conf, run = book.run_view(setting)
    expected = res.set_index("model").reindex(setting.benchmark.models[run.targets].astype(str))["estimate"]
    with threadpool_limits(limits=2):
        again = book.pick("anchor_points", source, 10, seed=0)[2].estimate(targets, conf)
    np.testing.assert_array_equal(again, expected.to_numpy())


def test_anchor_points_refuses_a_matrix_larger_than_its_limit(monkeypatch):
    import numpy as np

    from mbutils import AnchorPoints, SourceData
    from mbutils.base.errors import SelectorError
    from mbutils.methods.selectors import anchor

    monkeypatch.setattr(anchor, "MAX_MATRIX_BYTES", 1000)  # 16 float32 items = 1,024 bytes
    source = SourceData(correct=np.random.default_rng(0).integers(0, 2, (5, 16)), subtasks=np.zeros(16, int))
    with pytest.raises(SelectorError, match=r"16 x 16 dissimilarity matrix \(0.0 GB in float32\)"):
        AnchorPoints().prepare(source, np.random.default_rng(0))
    small = SourceData(correct=source.correct[:, :15], subtasks=np.zeros(15, int))  # 900 bytes: allowed
    assert AnchorPoints().prepare(small, np.random.default_rng(0)).n_items == 15


def test_anchor_points_runs_without_loading_scikit_learn_and_leaves_it_importable():
    """FasterPAM is imported with scikit-learn marked absent (over a second per process saved); the
    medoids equal those of a process that loaded scikit-learn first, and scikit-learn still imports."""
    import subprocess
    import sys

    script = """
import sys
import numpy as np
{first}
from mbutils.methods.selectors.anchor import AnchorPoints
from mbutils.methods.selectors.base import SourceData
rng = np.random.default_rng(0)
conf = rng.random((40, 120))
source = SourceData(correct=(conf > 0.5).astype(float), subtasks=np.zeros(120, dtype=int), confidence=conf)
selector = AnchorPoints()
micro = selector.select(selector.prepare(source, rng), 12, rng)
loaded = "sklearn" in sys.modules
import sklearn.base
print(loaded, list(micro.items))
"""
    runs = [subprocess.run([sys.executable, "-c", script.format(first=first)], capture_output=True, text=True,
                           check=True).stdout.split(" ", 1) for first in ("", "import sklearn.base")]
    assert runs[0][0] == "False" and runs[1][0] == "True"
    assert runs[0][1] == runs[1][1]

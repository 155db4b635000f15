"""Diversity (DPP) selectors: features, polynomial basis, selection, estimates, refusals."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from sklearn.decomposition import PCA

from conftest import real_bundle, real_table
from mbutils.methods.dpp import inclusion_probabilities
from mbutils.base.errors import SelectorError
from mbutils.methods.selectors import SourceData, make_selector, selector_names
from mbutils.methods.selectors.diversity import (Diversity, DiversityWeighted, chebyshev_design, graded_exponents, orthonormal_polynomials, pca_scores, trim_and_rescale)


def source_data(n_sources=12, n_items=300, seed=0, confidence=True) -> SourceData:
    """2-D 2PL responses of ``n_sources`` models; confidences = noisy success probabilities."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=(n_sources, 2))
    a = rng.lognormal(-0.3, 0.3, size=(n_items, 2))
    p = 1 / (1 + np.exp(-(theta @ a.T - rng.normal(size=n_items))))
    correct = (rng.random(p.shape) < p).astype(float)
    conf = np.clip(p + rng.normal(scale=0.05, size=p.shape), 0, 1) if confidence else None
    return SourceData(correct, np.zeros(n_items, dtype=int), conf)


# --------------------------------------------------------------------------- registry, params
def test_both_selectors_are_registered():
    assert {"diversity", "diversity_weighted"} <= set(selector_names())
    assert type(make_selector("diversity")) is Diversity
    assert type(make_selector("diversity_weighted")) is DiversityWeighted
    assert make_selector("diversity").get_params() == {
        "n_components": 4, "trim": 0.01, "scale": 0.99, "order": "max"}


@pytest.mark.parametrize(
    "kwargs", [{"n_components": 0}, {"trim": 0.5}, {"scale": 0.0}, {"scale": 1.5}, {"order": "lex"}]
)
def test_bad_parameters_are_refused(kwargs):
    selector = Diversity(**kwargs)  # __init__ stores; the check runs when work starts
    with pytest.raises(SelectorError, match=f"diversity: {next(iter(kwargs))} must be"):
        selector.validate_params()


# --------------------------------------------------------------------------- features
def test_pca_scores_match_scikit_learn_up_to_sign():
    X = source_data(n_sources=10, n_items=200).proxy.T
    ours = pca_scores(X, 4)
    ref = PCA(n_components=4, svd_solver="full").fit_transform(X)
    signs = np.sign((ours * ref).sum(axis=0))
    np.testing.assert_allclose(ours * signs, ref, atol=1e-9)


def test_pca_drops_directions_without_variance():
    """Identical sources span one direction: one component, not noise in three more."""
    row = np.random.default_rng(1).random(50)
    assert pca_scores(np.tile(row, (6, 1)).T, 4).shape == (50, 1)


def test_trim_keeps_the_quantile_box_and_rescales_to_099():
    rng = np.random.default_rng(2)
    scores = rng.normal(size=(500, 3)) * [1.0, 5.0, 0.1]
    keep, features = trim_and_rescale(scores, 0.01, 0.99)
    low, high = np.quantile(scores, [0.01, 0.99], axis=0)
    inside = np.flatnonzero(((scores >= low) & (scores <= high)).all(axis=1))
    np.testing.assert_array_equal(keep, inside)
    assert 500 - 6 * 5 <= len(keep) < 500  # at most 5 per tail per dimension go
    np.testing.assert_allclose(features.min(axis=0), -0.99)
    np.testing.assert_allclose(features.max(axis=0), 0.99)
    # the map is affine per dimension: order and relative gaps are kept
    ratio = np.ptp(scores[keep], axis=0) / np.ptp(features, axis=0)
    np.testing.assert_allclose((features + 0.99) * ratio + scores[keep].min(axis=0), scores[keep])


def test_trim_drops_dimensions_constant_on_the_candidates():
    scores = np.column_stack([np.linspace(-1, 1, 200), np.zeros(200)])
    scores[0, 1] = 9.0  # varies only on an item the box removes
    keep, features = trim_and_rescale(scores, 0.01, 0.99)
    assert 0 not in keep and features.shape == (len(keep), 1)


# --------------------------------------------------------------------------- polynomial basis
def test_graded_exponents_known_values():
    assert graded_exponents(9, 2, "max").tolist() == [
        [0, 0], [0, 1], [1, 0], [1, 1], [0, 2], [1, 2], [2, 0], [2, 1], [2, 2]]
    assert graded_exponents(7, 2, "total").tolist() == [
        [0, 0], [0, 1], [1, 0], [0, 2], [1, 1], [2, 0], [0, 3]]
    assert graded_exponents(5, 0, "max").shape == (1, 0)  # only the constant


@pytest.mark.parametrize("order", ["max", "total"])
def test_graded_exponents_follow_the_documented_order(order):
    """Layers by largest entry (the reference's hypercube layers) or total degree, then lexicographic."""
    layer, top = (max, 4) if order == "max" else (sum, 7)  # 5^4 and C(11, 4) >= 300 terms
    grid = itertools.product(range(8), repeat=4)  # lexicographic
    expected = sorted((a for a in grid if layer(a) <= top), key=layer)[:300]
    assert [tuple(a) for a in graded_exponents(300, 4, order).tolist()] == expected


def test_chebyshev_design_known_values():
    x = np.array([[0.5, -0.3]])
    E = np.array([[0, 0], [2, 0], [1, 3], [3, 2]])
    t2, t3 = lambda v: 2 * v * v - 1, lambda v: 4 * v**3 - 3 * v
    expected = [1.0, t2(0.5), 0.5 * t3(-0.3), t3(0.5) * t2(-0.3)]
    np.testing.assert_allclose(chebyshev_design(x, E)[0], expected)


@pytest.mark.parametrize("order", ["max", "total"])
@pytest.mark.parametrize("k", [1, 5, 20, 40, 70])
def test_chebyshev_basis_spans_the_first_k_monomials(order, k):
    """Same projection kernel as a QR of raw monomials, including where k cuts a layer."""
    X = np.random.default_rng(3).uniform(-0.99, 0.99, size=(400, 4))
    Q, independence = orthonormal_polynomials(X, k, order)
    monomials = np.prod(X[:, None, :] ** graded_exponents(k, 4, order)[None], axis=2)
    Qm = np.linalg.qr(monomials)[0]
    assert Q.shape == (400, k) and (independence > 1e-6).all()
    np.testing.assert_allclose(Q.T @ Q, np.eye(k), atol=1e-12)
    np.testing.assert_allclose(Q @ Q.T, Qm @ Qm.T, atol=1e-8)


def test_shared_basis_is_nested_and_independent_of_the_order_of_sizes():
    selector = Diversity()
    grown = selector.prepare(source_data(), None)
    Q_big, _ = grown.basis(150)
    Q_small, _ = grown.basis(20)
    fresh = selector.prepare(source_data(), None)
    np.testing.assert_array_equal(Q_small, fresh.basis(20)[0])  # bit for bit
    assert grown.width >= 150 and fresh.width < 150  # the fresh one never grew that far
    np.testing.assert_array_equal(Q_big[:, :20], Q_small)
    # slicing a wider QR = a QR of the first 20 polynomials alone
    design = chebyshev_design(grown.features, graded_exponents(20, grown.features.shape[1]))
    Q20 = np.linalg.qr(design)[0]
    np.testing.assert_allclose(Q_small @ Q_small.T, Q20 @ Q20.T, atol=1e-10)


# --------------------------------------------------------------------------- selection
@pytest.fixture(params=["diversity", "diversity_weighted"])
def name(request):
    return request.param


@pytest.mark.parametrize("confidence", [True, False], ids=["confidence", "zero-one"])
def test_selects_k_distinct_seen_items_with_the_right_weights(name, confidence):
    source = source_data(confidence=confidence)
    selector = make_selector(name)
    state = selector.prepare(source, np.random.default_rng(0))
    assert state.n_seen == 300 and 250 < state.n_candidates < 300
    assert np.abs(state.features).max() == pytest.approx(0.99)
    rng = np.random.default_rng(4)
    for k in (1, 7, 40, 120):
        micro = selector.select(state, k, rng)
        assert micro.size == k and len(np.unique(micro.items)) == k
        assert np.isin(micro.items, state.candidates).all()
        assert micro.items.min() >= 0 and micro.items.max() < source.n_items
        assert micro.reads == "correct"
        if name == "diversity":
            np.testing.assert_allclose(micro.weights, 1 / k)
        else:
            Q, _ = state.basis(k)
            rows = np.searchsorted(state.candidates, micro.items)
            expected = 1 / (state.n_candidates * inclusion_probabilities(Q[rows]))
            np.testing.assert_allclose(micro.weights, expected)


def test_plain_mean_estimate_reads_target_correctness():
    selector = make_selector("diversity")
    state = selector.prepare(source_data(), None)
    micro = selector.select(state, 25, np.random.default_rng(5))
    targets = np.random.default_rng(6).integers(0, 2, size=(4, 300)).astype(float)
    confidences = np.full((4, 300), 0.5)  # must be ignored
    np.testing.assert_allclose(micro.estimate(targets, confidences), targets[:, micro.items].mean(axis=1))


def test_same_generator_same_items(name):
    selector = make_selector(name)
    state = selector.prepare(source_data(), None)
    a = selector.select(state, 60, np.random.default_rng(7))
    b = selector.select(state, 60, np.random.default_rng(7))
    c = selector.select(state, 60, np.random.default_rng(8))
    np.testing.assert_array_equal(a.items, b.items)
    np.testing.assert_array_equal(a.weights, b.weights)
    assert not np.array_equal(a.items, c.items)


def test_result_does_not_depend_on_sizes_drawn_before():
    selector = make_selector("diversity")
    first = selector.prepare(source_data(), None)
    selector.select(first, 200, np.random.default_rng(1))
    after_big = selector.select(first, 30, np.random.default_rng(9))
    alone = selector.select(selector.prepare(source_data(), None), 30, np.random.default_rng(9))
    np.testing.assert_array_equal(after_big.items, alone.items)


def test_features_come_from_confidences_when_present_else_correctness():
    with_conf, zero_one = source_data(confidence=True), source_data(confidence=False)
    for source, matrix in ((with_conf, with_conf.confidence), (zero_one, zero_one.correct)):
        state = make_selector("diversity").prepare(source, None)
        keep, features = trim_and_rescale(pca_scores(matrix.T, 4), 0.01, 0.99)
        np.testing.assert_array_equal(state.candidates, keep)
        np.testing.assert_allclose(state.features, features)
    assert not np.allclose(pca_scores(with_conf.confidence.T, 4), pca_scores(zero_one.correct.T, 4))


def test_weighted_estimate_is_unbiased_for_the_candidate_mean():
    """HT weights: mean of 4,000 estimates within 4 SE of the candidate mean, for 3 targets.

    The plain mean over the same draws is not (the DPP favours some items), which shows
    the test can tell the two apart.
    """
    source = source_data(n_sources=8, n_items=60, seed=10)
    selector = DiversityWeighted()
    state = selector.prepare(source, None)
    targets = (np.random.default_rng(11).random((3, 60)) < np.linspace(0.1, 0.9, 60)).astype(float)
    truth = targets[:, state.candidates].mean(axis=1)
    rng = np.random.default_rng(12)
    micros = [selector.select(state, 6, rng) for _ in range(4000)]
    weighted = np.array([m.estimate(targets) for m in micros])
    plain = np.array([targets[:, m.items].mean(axis=1) for m in micros])
    n = len(micros)
    assert (np.abs(weighted.mean(axis=0) - truth) < 4 * weighted.std(axis=0, ddof=1) / np.sqrt(n)).all()
    assert (np.abs(plain.mean(axis=0) - truth) > 4 * plain.std(axis=0, ddof=1) / np.sqrt(n)).any()


def test_normalized_weights_sum_to_one():
    selector = DiversityWeighted(normalize=True)
    state = selector.prepare(source_data(), None)
    micro = selector.select(state, 30, np.random.default_rng(13))
    assert micro.weights.sum() == pytest.approx(1.0) and (micro.weights > 0).all()
    raw = DiversityWeighted().select(state, 30, np.random.default_rng(13))
    np.testing.assert_array_equal(raw.items, micro.items)
    np.testing.assert_allclose(micro.weights, raw.weights / raw.weights.sum())


# --------------------------------------------------------------------------- refusals
def test_sizes_beyond_seen_items_are_refused():
    selector = make_selector("diversity")
    state = selector.prepare(source_data(n_items=120), None)
    with pytest.raises(SelectorError, match="from 120 seen items"):
        selector.select(state, 121, np.random.default_rng(0))
    with pytest.raises(SelectorError, match="positive integer"):
        selector.select(state, 0, np.random.default_rng(0))


@pytest.mark.parametrize("name", ["diversity", "diversity_weighted"])
def test_sizes_the_dpp_cannot_reach_are_filled_at_random(name):
    """0/1 data from 3 sources: at most 8 distinct feature vectors, so no DPP of size 10."""
    source = source_data(n_sources=3, n_items=80, confidence=False)
    selector = make_selector(name)
    state = selector.prepare(source, None)
    distinct = len(np.unique(state.features, axis=0))
    r = selector.dpp_size(state, 10)
    assert r <= distinct <= 8 < 10 <= state.n_candidates
    for k in (10, 40, 80):
        micro = selector.select(state, k, np.random.default_rng(k))
        assert len(np.unique(micro.items)) == k and micro.items.max() < 80
        if name == "diversity":
            assert np.allclose(micro.weights, 1 / k)
    # The random fill is uniform: a constant target is estimated exactly by the plain variant.
    micro = make_selector("diversity").select(state, 10, np.random.default_rng(0))
    assert np.isclose(micro.estimate(np.ones((1, 80)))[0], 1.0)
    assert len(np.unique(selector.select(state, 3, np.random.default_rng(0)).items)) == 3


def test_nonfinite_confidences_are_refused():
    source = source_data()
    conf = source.confidence.copy()
    conf[0, 0] = np.nan
    with pytest.raises(SelectorError, match="missing or infinite"):
        make_selector("diversity").prepare(SourceData(source.correct, source.subtasks, conf), None)


# --------------------------------------------------------------------------- real data
def test_real_gpqa_zero_one_with_300_sources():
    """Real 0/1 data: every size up to 100 works and returns seen-item indices."""
    responses = pd.read_csv(real_table("gpqa"), index_col=0).to_numpy(float)
    rng = np.random.default_rng(0)
    sources = rng.choice(len(responses), 300, replace=False)
    seen = np.sort(rng.choice(responses.shape[1], 224, replace=False))
    source = SourceData(responses[np.ix_(sources, seen)], np.zeros(224, dtype=int))
    for name in ("diversity", "diversity_weighted"):
        selector = make_selector(name)
        state = selector.prepare(source, None)
        for k in (10, 25, 50, 100, 200):
            micro = selector.select(state, k, rng)
            assert len(np.unique(micro.items)) == k and micro.items.max() < 224


def test_the_item_map_is_the_selectors_own_view_and_its_outside_set_is_the_trimmed_set():
    """The sel_diversity picture: drawn from the prepared state (one PCA), so the items marked
    outside the box are exactly those the selector trimmed, and the DPP never draws one."""
    from mbutils import book
    from mbutils.methods.selectors import make_selector

    setting = book.configure("synthetic-gpqa", runs=1, sizes="25", profile="quick")
    source, _, _, _ = book.run_view(setting)
    selector, state, micro = book.pick("diversity", source, 25, seed=0)
    coords = book.diversity_map(state)
    trimmed = np.setdiff1d(np.arange(source.n_items), state.candidates)
    np.testing.assert_array_equal(np.flatnonzero(coords["outside_box"]), trimmed)
    assert 0 < len(trimmed) < source.n_items
    np.testing.assert_array_equal(coords[["box1", "box2"]].to_numpy()[state.candidates], state.features[:, :2])
    assert coords[["box1", "box2"]].abs().to_numpy().max() <= state.scale + 1e-12  # outside items on the edge
    if selector.dpp_size(state, 25) == 25:
        assert not coords["outside_box"].to_numpy()[micro.items].any()
    again = make_selector("diversity").prepare(source, np.random.default_rng(1))  # prepare ignores its rng
    np.testing.assert_array_equal(again.candidates, state.candidates)


def test_a_handful_of_items_each_extreme_somewhere_still_gives_candidates():
    """4 to 12 items: the quantile box can hold none, and then every item is a candidate."""
    import numpy as np

    from mbutils.methods.selectors.diversity import trim_and_rescale

    scores = np.eye(4) * np.array([1.0, 2.0, 3.0, 4.0])  # each item extreme in its own dimension
    keep, features = trim_and_rescale(scores, 0.01, 1.0)
    assert keep.tolist() == [0, 1, 2, 3] and features.shape[0] == 4 and np.abs(features).max() <= 1.0

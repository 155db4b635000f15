"""Ability scoring of adaptive tests (mbutils.methods.selectors.adaptive.AdaptiveAbility) and the direction
it ranks abilities along (mbutils.methods.cat.ability_direction, composite_ability)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit, ndtr

from mbutils.base.errors import SelectorError
from mbutils.methods.cat import ability_direction, composite_ability
from mbutils.methods.irt import IRTError
from mbutils.methods.irt_fit import IRTModel
from mbutils.methods.selectors import SourceData, selector_label, selector_names
from mbutils.methods.selectors.adaptive import AdaptiveAbility, AdaptiveFisher


def _pool(seed=0, n_models=60, n_items=120):
    """A unidimensional 2PL pool with positive discriminations: 45 sources, 15 targets."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=(n_models, 1))
    a, b = rng.uniform(0.8, 2.0, n_items), rng.normal(size=n_items)
    correct = (rng.random((n_models, n_items)) < expit(theta * a - b)).astype(float)
    return SourceData(correct[:45], np.zeros(n_items, dtype=int)), correct[45:]


def test_the_direction_is_the_normalised_gradient_of_the_predicted_accuracy_at_the_prior_centre():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(50, 4)), rng.normal(size=50)
    u = ability_direction(a, b)
    eps = 1e-6
    grad = np.array([(expit(eps * e @ a.T - b).mean() - expit(-eps * e @ a.T - b).mean()) / (2 * eps)
                     for e in np.eye(4)])
    np.testing.assert_allclose(u, grad / np.linalg.norm(grad), atol=1e-7)
    assert np.linalg.norm(u) == pytest.approx(1.0)
    # moving along u raises the predicted accuracy; against it lowers it
    assert expit(0.1 * u @ a.T - b).mean() > expit(-b).mean() > expit(-0.1 * u @ a.T - b).mean()


def test_in_one_dimension_the_composite_is_the_ability_itself():
    a, b = np.array([[0.5], [1.0], [-0.2]]), np.array([0.0, 1.0, -1.0])
    assert ability_direction(a, b).tolist() == [1.0]
    theta = np.array([[-1.5], [0.25], [2.0]])
    np.testing.assert_array_equal(composite_ability(theta, a, b), theta[:, 0])
    assert ability_direction(-a, b).tolist() == [-1.0]  # reversed items: the ability's sign follows the score


def test_a_direction_that_does_not_exist_is_refused():
    with pytest.raises(IRTError, match="does not change"):
        ability_direction(np.zeros((3, 2)), np.zeros(3))
    with pytest.raises(IRTError, match="shapes"):
        ability_direction(np.ones((3, 2)), np.zeros(4))


def test_ability_scoring_takes_adaptive_fisher_s_tests_and_reports_the_ability_s_percentile():
    source, targets = _pool()
    rng = np.random.default_rng(0)
    prepared = AdaptiveFisher().prepare(source, rng)
    fisher = AdaptiveFisher().select(prepared, 15, rng)
    ability = AdaptiveAbility().select(prepared, 15, rng)
    path_f, path_a = fisher.path(targets), ability.path(targets)
    np.testing.assert_array_equal(path_f.items, path_a.items)
    np.testing.assert_array_equal(path_f.answers, path_a.answers)
    score = ability.estimate(targets)
    u = ability_direction(ability.item_a, ability.item_b)
    np.testing.assert_allclose(score, ndtr(path_a.theta @ u / ability.prior_sd_theta), rtol=0, atol=1e-15)
    assert ((score > 0) & (score < 1)).all()
    assert ability.estimator == "ability" and fisher.estimator == "irt"


def test_with_one_dimension_and_positive_discriminations_both_scorings_order_the_targets_alike():
    """The predicted accuracy increases with a one-dimensional ability when every discrimination is
    positive, so ranking by ability and by accuracy is one ranking."""
    source, targets = _pool(seed=1)
    one = IRTModel(dims=1)
    rng = np.random.default_rng(1)
    prepared = AdaptiveFisher(irt=one).prepare(source, rng)
    assert (prepared.item_a > 0).all(), "the fit gave a negative discrimination: the identity does not apply"
    for k in (5, 20):
        acc = AdaptiveFisher(irt=one).select(prepared, k, rng).estimate(targets)
        abil = AdaptiveAbility(irt=one).select(prepared, k, rng).estimate(targets)
        assert len(np.unique(acc)) > 5
        i, j = np.triu_indices(len(acc), 1)
        np.testing.assert_array_equal(np.sign(acc[i] - acc[j]), np.sign(abil[i] - abil[j]))


def test_ability_scoring_is_labelled_but_not_offered_by_name():
    """Its score is no accuracy: the command line, whose tables report an estimation error, does not offer it."""
    assert "adaptive_ability" not in selector_names()
    assert selector_label(AdaptiveAbility()) == "adaptive_ability"
    assert selector_label(AdaptiveAbility(n_start=2)) == "adaptive_ability(n_start=2)"
    with pytest.raises(SelectorError):
        AdaptiveAbility().select(AdaptiveFisher().prepare(_pool()[0], None), 0, None)

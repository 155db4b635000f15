"""score's verdicts: a test at a stated level whose share of wrong verdicts is bounded, checked by simulation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import hypergeom

from mbutils.micro.heldout import hypergeometric_likelihood
from mbutils.micro.intervals import hypergeometric_interval
from mbutils.micro.verdicts import (Posterior, accuracy_grid, binomial_slack, held_out_measures, population_prior,
                                    shipping_problems, verdicts)

N_ITEMS, K = 400, 25


def _population(rng, n):
    """Accuracies crowded as GPQA's are (most within ten points), in whole items of N."""
    return np.rint(np.clip(rng.beta(12, 22, n), 0, 1) * N_ITEMS) / N_ITEMS


def _simulate(seed: int, n_new: int = 400):
    """New models drawn from the pool's population, each scored by a uniform random k of N items."""
    rng = np.random.default_rng(seed)
    pool, truth = _population(rng, 300), _population(rng, n_new)
    hits = hypergeom.rvs(N_ITEMS, np.rint(truth * N_ITEMS).astype(int), K, random_state=rng)
    box = hypergeometric_interval(hits, K, N_ITEMS, 0.95)
    grid = accuracy_grid(N_ITEMS)
    posterior = Posterior(grid, hypergeometric_likelihood(hits, np.rint(grid * N_ITEMS).astype(int), K, N_ITEMS),
                          population_prior(grid, pool))
    return pool, truth, box, posterior


def _wrong_share(better, worse, truth, pool) -> tuple[int, int]:
    wrong = (better & ~(truth[:, None] > pool[None, :])) | (worse & ~(truth[:, None] < pool[None, :]))
    return int(wrong.sum()), int(better.sum() + worse.sum())


def test_the_verdicts_share_of_wrong_ones_stays_within_the_level_where_the_interval_alone_does_not():
    """On a crowded population, verdicts from the 95% interval alone are wrong more than 5% of the time (one
    miss is wrong against every model it passes); with the posterior's chance of being wrong also at most 5%,
    the share stays within 5% plus two binomial standard errors over 4,000 simulated new models."""
    wrong_interval = made_interval = wrong_both = made_both = 0
    for seed in range(10):
        pool, truth, box, posterior = _simulate(seed)
        w, m = _wrong_share(*verdicts(box[:, 0], box[:, 1], pool), truth, pool)
        wrong_interval, made_interval = wrong_interval + w, made_interval + m
        w, m = _wrong_share(*verdicts(box[:, 0], box[:, 1], pool, posterior), truth, pool)
        wrong_both, made_both = wrong_both + w, made_both + m
    assert made_both > 0.5 * made_interval  # still says most of what the interval says
    assert wrong_both / made_both <= 0.05 + binomial_slack(0.05, made_both), (wrong_both, made_both)
    assert wrong_interval / made_interval > wrong_both / made_both  # the posterior is what bounds the share


def test_a_model_beyond_the_pool_can_be_found_better_than_all_of_it():
    pool = np.linspace(0.2, 0.4, 50)
    grid = accuracy_grid(N_ITEMS)
    hits = np.array([24])  # 24 of 25 right: far above every pool model
    posterior = Posterior(grid, hypergeometric_likelihood(hits, np.rint(grid * N_ITEMS).astype(int), K, N_ITEMS),
                          population_prior(grid, pool))
    box = hypergeometric_interval(hits, K, N_ITEMS, 0.95)
    better, worse = verdicts(box[:, 0], box[:, 1], pool, posterior)
    assert better.all() and not worse.any()


def test_the_posteriors_chances_are_cumulative_masses():
    grid = accuracy_grid(10)
    posterior = Posterior(grid, np.ones((2, 11)), population_prior(grid, [0.2, 0.5, 0.5, 0.7]))
    np.testing.assert_allclose(posterior.at_most([1.0]), 1.0)
    np.testing.assert_allclose(posterior.at_least([0.0]), 1.0)
    point = posterior.mass[:, 5]
    np.testing.assert_allclose(posterior.at_most([0.5])[:, 0] + posterior.at_least([0.5])[:, 0] - point, 1.0)
    assert np.isnan(posterior.at_most([np.nan])).all()  # no model, no chance


def test_held_out_measures_never_compare_a_model_with_itself():
    same = np.array([[True, False, False]])
    m = held_out_measures([0.9], [0.8], [0.95], [0.9], [0.5, 0.1, 0.2], same=same)
    assert m["verdicts"] == 2 and m["false_verdicts"] == 0
    assert held_out_measures([0.9], [0.8], [0.95], [0.9], [0.5, 0.1, 0.2])["verdicts"] == 3
    wrong = held_out_measures([0.9], [0.8], [0.95], [0.75], [0.78, 0.1, 0.2])  # a miss: wrong against 0.78
    assert wrong["verdicts"] == 3 and wrong["false_verdicts"] == 1 and wrong["models_with_false"] == 1


@pytest.mark.parametrize("change, problem", [
    ({"bias": 4.0}, "bias"), ({"covered": 80, "coverage": 0.8}, "coverage"),
    ({"false_verdicts": 100, "false_rate": 0.1}, "verdicts were wrong")])
def test_the_shipping_rule_names_each_failure(change, problem):
    good = {"level": 0.95, "models": 100, "bias": 0.5, "half_width": 5.0, "covered": 95, "coverage": 0.95,
            "verdicts": 1000, "false_verdicts": 30, "false_rate": 0.03}
    assert shipping_problems(good) == []
    (found,) = shipping_problems({**good, **change})
    assert problem in found

"""Intervals of a micro-benchmark's estimate (mbutils.micro.intervals): the exact hypergeometric interval
(inverted tests, bisection, coverage by simulation) and the conformal one."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import hypergeom

from mbutils.micro.intervals import conformal_quantiles, empirical_interval, hypergeometric_interval


def test_hypergeometric_interval_is_the_inverted_exact_tests():
    """Brute force over K for a small case: K is in the 90% interval iff both one-sided p-values exceed 5%."""
    n, k = 30, 8
    for x in range(k + 1):
        kept = [big for big in range(n + 1)
                if hypergeom.sf(x - 1, n, big, k) > 0.05 and hypergeom.cdf(x, n, big, k) > 0.05]
        low, high = hypergeometric_interval([x], k, n, 0.9)[0]
        assert (round(low * n), round(high * n)) == (min(kept), max(kept))
    assert hypergeometric_interval([0], 8, 30, 0.9)[0, 0] == 0.0
    assert hypergeometric_interval([8], 8, 30, 0.9)[0, 1] == 1.0


@pytest.mark.parametrize("n,k,level", [(1, 1, 0.9), (5, 2, 0.5), (30, 29, 0.95), (101, 50, 0.999), (448, 100, 0.9),
                                       (448, 448, 0.8)])
def test_hypergeometric_interval_bisection_equals_the_scan_of_every_k(n, k, level):
    """The interval found by bisection is the one a scan of every K from 0 to N keeps, for every count."""
    x = np.arange(k + 1)
    big_k = np.arange(n + 1)[None, :]
    kept = ((hypergeom.sf(x[:, None] - 1, n, big_k, k) > (1 - level) / 2)
            & (hypergeom.cdf(x[:, None], n, big_k, k) > (1 - level) / 2))
    assert kept.any(1).all()
    scanned = np.stack([kept.argmax(1), n - kept[:, ::-1].argmax(1)], axis=1) / n
    assert np.array_equal(hypergeometric_interval(x, k, n, level), scanned)


def test_hypergeometric_interval_covers_by_simulation():
    """Fixed seed: 4,000 random 40-subsets of 300 items with K = 90 correct; coverage >= 90% within noise,
    and equal to the exact coverage (sum over x of P(x) [K in CI(x)]) within 3 standard errors."""
    rng = np.random.default_rng(11)
    n, big_k, k, draws = 300, 90, 40, 4000
    items = np.zeros(n, dtype=int)
    items[:big_k] = 1
    keys = rng.random((draws, n))
    chosen = np.argpartition(keys, k, axis=1)[:, :k]
    hits = items[chosen].sum(1)
    xs = np.arange(k + 1)
    table = hypergeometric_interval(xs, k, n, 0.9)  # the interval of every possible count, looked up per draw
    bounds = table[hits]
    covered = (bounds[:, 0] <= big_k / n) & (big_k / n <= bounds[:, 1])
    exact = float((hypergeom.pmf(xs, n, big_k, k) * ((table[:, 0] <= big_k / n) & (big_k / n <= table[:, 1]))).sum())
    se = np.sqrt(exact * (1 - exact) / draws)
    assert exact >= 0.9
    assert abs(covered.mean() - exact) < 3 * se


def test_conformal_interval_covers_new_errors_by_simulation():
    rng = np.random.default_rng(5)
    calibration = rng.normal(0.01, 0.03, size=200)
    truth = rng.uniform(0.2, 0.6, size=5000)
    estimate = truth + rng.normal(0.01, 0.03, size=5000)
    bounds = empirical_interval(estimate, calibration, 0.9)
    coverage = np.mean((bounds[:, 0] <= truth) & (truth <= bounds[:, 1]))
    assert 0.86 <= coverage <= 0.95
    assert conformal_quantiles([3.0, 1.0, 2.0] * 10, 0.5) == (1.0, 3.0)

"""The projection-DPP sampler: exact k distinct items with the right law, fast paths included."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import mbutils.methods.dpp as dpp
from mbutils.methods.dpp import inclusion_probabilities, sample_projection_dpp
from mbutils.base.errors import SelectorError


def orthonormal(n, k, seed=0):
    """A basis with very unequal row norms, so K_ii is far from uniform."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, k)) * np.linspace(0.2, 3.0, n)[:, None]
    return np.linalg.qr(A)[0]


@pytest.fixture(params=["direct", "blocked"])
def path(request, monkeypatch):
    """Run a test with the plain chain rule only, and with the blocked rejection scheme."""
    if request.param == "blocked":
        monkeypatch.setattr(dpp, "_DIRECT_BELOW", 0)
    return request.param


def draw_many(Q, n_draws, seed):
    rng = np.random.default_rng(seed)
    return np.array([sample_projection_dpp(Q, rng) for _ in range(n_draws)])


@pytest.mark.parametrize("n,k", [(1, 1), (5, 5), (30, 1), (30, 5), (200, 60), (400, 180)])
def test_exactly_k_distinct_indices(n, k, path):
    Q = orthonormal(n, k)
    rng = np.random.default_rng(1)
    for _ in range(3):
        S = sample_projection_dpp(Q, rng)
        assert S.shape == (k,) and S.dtype == np.int64
        assert len(np.unique(S)) == k
        assert S.min() >= 0 and S.max() < n


def test_duplicate_rows_are_never_drawn_together(path):
    """Identical rows span one direction: a projection DPP cannot hold both."""
    base = orthonormal(20, 4, seed=3)
    Q = np.linalg.qr(np.vstack([base, base[:5]]))[0]  # rows 20..24 copy rows 0..4
    rng = np.random.default_rng(2)
    for _ in range(200):
        S = set(sample_projection_dpp(Q, rng).tolist())
        assert not any(i in S and i + 20 in S for i in range(5))


def test_subset_probabilities_are_determinants(path):
    """P(S) = det(K_S) for every 3-subset of 6 items, within 4 standard errors (6,000 draws)."""
    n, k, n_draws = 6, 3, 6_000
    Q = orthonormal(n, k, seed=5)
    K = Q @ Q.T
    subsets = list(itertools.combinations(range(n), k))
    p = np.array([np.linalg.det(K[np.ix_(s, s)]) for s in subsets])
    assert p.sum() == pytest.approx(1.0)
    draws = np.sort(draw_many(Q, n_draws, seed=7), axis=1)
    code = {s: j for j, s in enumerate(subsets)}
    freq = np.bincount([code[tuple(row)] for row in draws.tolist()], minlength=len(subsets)) / n_draws
    se = np.sqrt(p * (1 - p) / n_draws)
    assert np.max(np.abs(freq - p) / se) < 4.0


@pytest.fixture(scope="module")
def many_draws():
    """20,000 draws of a 30-item, rank-5 DPP with unequal K_ii."""
    Q = orthonormal(30, 5, seed=11)
    return Q, draw_many(Q, 20_000, seed=12)


def test_inclusion_frequencies_match_diag_K(many_draws):
    """Empirical P(i in S) within 4 binomial standard errors of K_ii for all 30 items."""
    Q, draws = many_draws
    p = np.diag(Q @ Q.T)
    assert p.max() / p.min() > 5  # the test has teeth: far from uniform
    freq = np.bincount(draws.ravel(), minlength=30) / len(draws)
    se = np.sqrt(p * (1 - p) / len(draws))
    assert np.max(np.abs(freq - p) / se) < 4.0


def test_pair_frequencies_match_2x2_minors(many_draws):
    """P(i, j in S) = K_ii K_jj - K_ij^2 for all 435 pairs, within 4.5 standard errors."""
    Q, draws = many_draws
    K = Q @ Q.T
    member = np.zeros((len(draws), 30))
    np.put_along_axis(member, draws, 1.0, axis=1)
    counts = member.T @ member
    i, j = np.triu_indices(30, 1)
    p = (np.outer(np.diag(K), np.diag(K)) - K**2)[i, j]
    freq = counts[i, j] / len(draws)
    se = np.sqrt(p * (1 - p) / len(draws)) + 1e-12
    assert np.max(np.abs(freq - p) / se) < 4.5


def test_horvitz_thompson_estimate_is_unbiased(many_draws):
    """E[sum_{i in S} f_i / (n K_ii)] = mean(f): within 4 standard errors over 20,000 draws."""
    Q, draws = many_draws
    n = Q.shape[0]
    f = np.random.default_rng(13).random(n) ** 2
    w = 1.0 / (n * inclusion_probabilities(Q))
    estimates = (f[draws] * w[draws]).sum(axis=1)
    se = estimates.std(ddof=1) / np.sqrt(len(estimates))
    assert abs(estimates.mean() - f.mean()) < 4 * se
    plain = f[draws].mean(axis=1)  # the unweighted mean is biased here (non-uniform K_ii)
    assert abs(plain.mean() - f.mean()) > 4 * plain.std(ddof=1) / np.sqrt(len(plain))


def test_inclusion_probabilities_are_squared_row_norms():
    Q = orthonormal(40, 7)
    p = inclusion_probabilities(Q)
    np.testing.assert_allclose(p, np.diag(Q @ Q.T), atol=1e-12)
    assert p.sum() == pytest.approx(7.0)
    assert (p >= 0).all() and (p <= 1 + 1e-12).all()


def test_same_generator_state_same_draw(path):
    Q = orthonormal(300, 90)
    a = sample_projection_dpp(Q, np.random.default_rng(42))
    b = sample_projection_dpp(Q, np.random.default_rng(42))
    c = sample_projection_dpp(Q, np.random.default_rng(43))
    np.testing.assert_array_equal(a, b)
    assert set(a.tolist()) != set(c.tolist())


def test_block_then_direct_inclusion_frequencies():
    """The default mix (one block of 10 draws, then 10 direct) has inclusion law K_ii, within 4.5 SE."""
    Q = orthonormal(40, 20, seed=21)
    p = inclusion_probabilities(Q)
    draws = draw_many(Q, 2000, seed=22)
    freq = np.bincount(draws.ravel(), minlength=40) / len(draws)
    se = np.sqrt(p * (1 - p) / len(draws))
    assert np.max(np.abs(freq - p) / se) < 4.5


@pytest.mark.parametrize(
    "Q, message",
    [
        (np.ones(5), "n x k"),
        (np.ones((2, 3)) / np.sqrt(2), "at least 3 items"),
        (np.full((4, 2), np.nan), "NaN"),
        (np.ones((4, 2)), "orthonormal"),
    ],
)
def test_bad_bases_are_refused(Q, message):
    with pytest.raises(SelectorError, match=message):
        sample_projection_dpp(Q, np.random.default_rng(0))

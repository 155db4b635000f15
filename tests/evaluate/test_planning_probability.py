"""The exact agreement probability of random subsets (mbutils.evaluate.planning_probability): against the
enumeration of every subset, known values, and its normal approximation where auto uses it and where it avoids it."""

from math import comb

import numpy as np
import pandas as pd
import pytest

from mbutils.evaluate.planning_probability import (NORMAL_MAX_ERROR, NORMAL_MIN_SD, _exact_cells, _m_moments,
                                                  _normal_cells, agreement_probability)


def _brute_force(n: int) -> pd.DataFrame:
    """P(subset ranks the pair like the n items) by enumerating every subset, for every
    (a, b) and k: sign(X - Y) = sign(a - b), and X > Y for a tie (the paper's rule)."""
    masks = (np.arange(2**n)[:, None] >> np.arange(n)[None, :]) & 1  # all subsets
    sizes = masks.sum(1)
    a, b = (v.ravel() for v in np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij"))
    ok = a + b <= n
    a, b = a[ok], b[ok]
    items = np.arange(n)[:, None]
    values = (items < a).astype(int) - ((items >= a) & (items < a + b)).astype(int)  # n x cases
    diff = masks @ values  # subsets x cases: X - Y
    agrees = np.where(a >= b, diff > 0, diff < 0)
    frames = []
    for k in range(1, n + 1):
        frames.append(pd.DataFrame({"n": n, "a": a, "b": b, "k": k, "p": agrees[sizes == k].mean(0)}))
    return pd.concat(frames, ignore_index=True)


def test_exact_equals_enumeration_of_all_subsets():
    table = pd.concat([_brute_force(n) for n in range(1, 13)], ignore_index=True)
    got = agreement_probability(table["a"], table["b"], table["n"], table["k"], method="exact")
    assert np.abs(got - table["p"]).max() < 1e-12
    assert len(table) > 4000 and (table["a"] < table["b"]).sum() > 1000
    # auto equals exact here (sd(M) < 4 for every n <= 12)
    assert np.array_equal(got, agreement_probability(table["a"], table["b"], table["n"], table["k"]))


def test_known_values_and_shapes():
    assert agreement_probability(3, 1, 10, 10) == 1.0  # the whole benchmark ranks it right
    assert agreement_probability(2, 2, 10, 10) == 0.0  # a tie stays an estimated tie: disagrees
    assert agreement_probability(3, 1, 10, 1) == pytest.approx(0.3)  # one item: it must be A-only
    # k = 2 by hand: X > Y iff both picks are A-only, or one A-only and one concordant
    want = (comb(3, 2) + 3 * 6) / comb(10, 2)
    assert agreement_probability(3, 1, 10, 2) == pytest.approx(want)
    out = agreement_probability(np.array([[3], [5]]), 1, 10, np.array([1, 2, 5]))
    assert out.shape == (2, 3) and isinstance(agreement_probability(3, 1, 10, 2), float)


def _grid(n: int) -> tuple[np.ndarray, ...]:
    """Pairs of every discordance rate and gap, at sizes spread over 1..n (incl. near n)."""
    rates = np.array([0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0])
    d = np.maximum(1, np.round(rates * n)).astype(np.int64)
    gaps = np.round(d[:, None] * np.linspace(0, 1, 13)[None, :]).astype(np.int64)
    hi = ((d[:, None] + gaps + 1) // 2).ravel()  # hi >= lo
    lo = np.repeat(d, 13) - hi
    ks = np.unique(np.r_[np.geomspace(1, n, 40).astype(int), n + 1 - np.geomspace(1, n, 20).astype(int)])
    cells = [np.repeat(hi, len(ks)), np.repeat(lo, len(ks)), np.full(len(hi) * len(ks), n), np.tile(ks, len(hi))]
    return tuple(cells)


@pytest.mark.parametrize("n", [224, 448, 1000, 6012])
def test_normal_approximation_within_bound_where_auto_uses_it(n):
    hi, lo, nn, k = _grid(n)
    uses_normal = _m_moments(hi, lo, nn, k)[1] >= NORMAL_MIN_SD
    auto = agreement_probability(hi, lo, nn, k)
    exact = _exact_cells(hi, lo, nn, k)
    if n == 224:  # sd(M) <= sqrt(112 * 112 / 223 / 4) < 4: GPQA's seen half is always exact
        assert not uses_normal.any()
    else:
        assert uses_normal.sum() > 500
        err = np.abs(_normal_cells(hi, lo, nn, k) - exact)[uses_normal]
        assert err.max() <= NORMAL_MAX_ERROR
    assert np.abs(auto - exact).max() <= NORMAL_MAX_ERROR  # auto is exact where sd(M) < 4


def test_normal_approximation_fails_where_auto_avoids_it():
    """Every item discordant: D has the parity of k, the 1/2 correction is wrong at even k."""
    n, k = 1000, np.arange(2, 41, 2)
    err = np.abs(_normal_cells(np.full(20, 501), np.full(20, 499), np.full(20, n), k)
                 - _exact_cells(np.full(20, 501), np.full(20, 499), np.full(20, n), k))
    assert err.max() > 0.1
    assert (_m_moments(np.full(20, 501), np.full(20, 499), np.full(20, n), k)[1] < NORMAL_MIN_SD).all()


def test_monotone_in_k_when_a_third_of_items_are_concordant():
    """For a > b, P(agree) never falls as k grows once >= N/3 items are concordant
    (all N <= 40); with fewer concordant items it can fall at even k (estimated ties)."""
    for n in range(2, 41):
        hi, lo = (v.ravel() for v in np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij"))
        keep = (hi > lo) & (3 * (n - hi - lo) >= n)
        hi, lo = hi[keep], lo[keep]
        ks = np.arange(1, n + 1)
        p = agreement_probability(hi[:, None], lo[:, None], n, ks[None, :], method="exact")
        assert np.diff(p, axis=1).min() > -1e-9, n
    # counterexample without concordant items: a = 2, b = 1, N = 3
    p = agreement_probability(2, 1, 3, np.array([1, 2, 3]), method="exact")
    assert np.allclose(p, [2 / 3, 1 / 3, 1.0])
    # tied pairs (paper rule): agreement falls to 0 as the subset becomes the benchmark
    tie = agreement_probability(20, 20, 100, np.arange(1, 101))
    assert tie[-1] == 0.0 and tie[:50].max() > 0.4

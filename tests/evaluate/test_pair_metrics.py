"""Per-pair metrics (mbutils.evaluate.pair_metrics) on hand-made cases with known answers, and against
SciPy and scikit-learn: agreement rules, exact gap bins, MDAD bins, Kendall's tau-b, monotone rates."""

from fractions import Fraction

import numpy as np
from scipy import stats

from mbutils.evaluate.pair_metrics import gap_bins, kendall_tau_b, mdad_bin, pair_agreement


def test_pair_agreement_paper_and_exclude_rules():
    est = np.array([0.1, -0.1, 0.0, 0.2, -0.3, 0.0])
    true = np.array([1, 1, 1, 0, 0, 0])
    agrees, counted = pair_agreement(est, true, "paper")
    assert agrees.tolist() == [True, False, False, True, False, False]
    assert counted.all()
    agrees, counted = pair_agreement(est, true, "exclude")
    assert counted.tolist() == [True, True, True, False, False, False]
    assert agrees[counted].tolist() == [True, False, False]


def test_exclude_rule_is_symmetric_in_the_pair():
    rng = np.random.default_rng(1)
    est = rng.choice([-0.2, 0.0, 0.1], size=200)
    true = rng.integers(-2, 3, size=200)
    a1, c1 = pair_agreement(est, true, "exclude")
    a2, c2 = pair_agreement(-est, -true, "exclude")
    assert (c1 == c2).all() and (a1[c1] == a2[c2]).all()


def test_gap_bins_are_exact_where_floats_are_not():
    n = np.arange(1, 301)[:, None]
    dc = np.arange(0, 301)[None, :]
    dc = np.broadcast_to(dc, (300, 301))
    ok = dc <= n
    for width in (0.5, 1.0):
        bins = gap_bins(dc, n[:, 0], width)
        w = Fraction(str(width))
        expected = np.vectorize(lambda d, m: int(Fraction(100 * d, m) // w))(dc, n)
        assert (bins[ok] == expected[ok]).all()
    # The reference's float arithmetic loses some bins; ours must not (sanity of the test).
    a, b = np.meshgrid(np.arange(101), np.arange(101))
    floats = np.floor(np.abs(a / 100 - b / 100) * 200).astype(int)
    assert (floats != 2 * np.abs(a - b)).any()


def test_curve_that_crosses_and_dips_back():
    total = np.array([20, 20, 20, 20, 20])
    agree = np.array([10, 17, 14, 18, 20])  # 0.5, 0.85, 0.7, 0.9, 1.0
    assert mdad_bin(agree, total, 0.8, "first") == 1
    assert mdad_bin(agree, total, 0.9, "first") == 3
    assert mdad_bin(agree, total, 0.8, "monotone") == 3  # isotonic: .5,.775,.775,.9,1
    assert mdad_bin(agree, total, 0.7, "monotone") == 1
    assert mdad_bin(agree, total, 1.0, "first") == 4


def test_kendall_tau_b_matches_scipy_with_ties():
    rng = np.random.default_rng(3)
    est = rng.integers(0, 6, size=(20, 30)) / 5
    truth = rng.integers(0, 8, size=(20, 30)) / 7
    ours = kendall_tau_b(est, truth)
    ref = [stats.kendalltau(e, t, variant="b").statistic for e, t in zip(est, truth)]
    assert np.allclose(ours, ref)
    assert np.allclose(kendall_tau_b(truth, truth), 1.0)


def test_a_bin_width_with_float_noise_is_read_as_the_width_meant():
    import numpy as np

    from mbutils.evaluate.pair_metrics import gap_bins

    diff, n = np.array([[0, 3, 7, 70, 140]]), np.array([100])
    assert (gap_bins(diff, n, 0.7000000000000001) == gap_bins(diff, n, 0.7)).all()
    assert gap_bins(diff, n, 0.7).tolist() == [[0, 4, 10, 100, 200]]


def test_monotone_rates_equal_scikit_learns_isotonic_fit_bit_for_bit():
    """The fit calls SciPy's solver directly; scikit-learn's public function (checks, then the
    same solver) must give the very same numbers, empty bins left out and returned as NaN."""
    from sklearn.isotonic import isotonic_regression

    from mbutils.evaluate.pair_metrics import monotone_rates

    rng = np.random.default_rng(11)
    for _ in range(200):
        n = int(rng.integers(1, 60))
        total = rng.integers(0, 30, size=n).astype(np.float64)
        agree = rng.binomial(total.astype(np.int64), rng.random(n)).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            rates = np.nan_to_num(agree / total)
        got = monotone_rates(rates, total)
        keep = total > 0
        assert np.isnan(got[~keep]).all()
        if keep.any():
            want = isotonic_regression(rates[keep], sample_weight=total[keep], increasing=True)
            np.testing.assert_array_equal(got[keep], want)
            assert np.all(np.diff(got[keep]) >= 0)

"""Meta-evaluation on hand-made cases with known answers, and against scipy."""

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from helpers import results_table
from mbutils.base.errors import ResultsError
from mbutils.results.metrics import agreement_curve, mdad_table, summary_table
from mbutils.results.pair_metrics import gap_bins, kendall_tau_b, mdad_bin, pair_agreement


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


def test_tiny_table_curve_and_mdad():
    # n_seen=100; A,B,C with 50,51,55 correct. Pairs (A,B): gap 1 pt, agrees;
    # (A,C): gap 5, agrees; (B,C): gap 4, disagrees.
    table = results_table([0.5, 0.6, 0.52], [50, 51, 55], n_seen=100)
    curve = agreement_curve(table, bin_width=0.5)
    assert curve["gap"].tolist() == [1.0, 4.0, 5.0]
    assert curve["agreement"].tolist() == [1.0, 0.0, 1.0]
    first = mdad_table(table, threshold=0.8, ci="none")
    assert first.loc[0, "mdad"] == 1.0 and first.loc[0, "n_pairs"] == 3
    mono = mdad_table(table, threshold=0.8, ci="none", method="monotone")
    assert mono.loc[0, "mdad"] == 5.0


def test_curve_that_crosses_and_dips_back():
    total = np.array([20, 20, 20, 20, 20])
    agree = np.array([10, 17, 14, 18, 20])  # 0.5, 0.85, 0.7, 0.9, 1.0
    assert mdad_bin(agree, total, 0.8, "first") == 1
    assert mdad_bin(agree, total, 0.9, "first") == 3
    assert mdad_bin(agree, total, 0.8, "monotone") == 3  # isotonic: .5,.775,.775,.9,1
    assert mdad_bin(agree, total, 0.7, "monotone") == 1
    assert mdad_bin(agree, total, 1.0, "first") == 4


def test_not_reached_is_nan_not_a_number_in_disguise():
    table = results_table([0.6, 0.5, 0.4], [50, 51, 55], n_seen=100)  # all pairs disagree
    out = mdad_table(table, threshold=0.8)
    assert np.isnan(out.loc[0, "mdad"]) and not out.loc[0, "reached"]
    assert np.isnan(out.loc[0, "ci_low"]) and np.isnan(out.loc[0, "ci_high"])


def test_ties_in_estimates_disagree_and_true_ties_follow_the_rule():
    # A and D tie on the truth; (A, D) agrees under the paper rule only if est_A > est_D.
    table = results_table([0.5, 0.4], [50, 50], n_seen=100)
    assert agreement_curve(table)["agreement"].tolist() == [1.0]
    table = results_table([0.4, 0.5], [50, 50], n_seen=100)
    assert agreement_curve(table)["agreement"].tolist() == [0.0]
    table = results_table([0.5, 0.5], [50, 60], n_seen=100)
    assert agreement_curve(table)["agreement"].tolist() == [0.0]


def test_kendall_tau_b_matches_scipy_with_ties():
    rng = np.random.default_rng(3)
    est = rng.integers(0, 6, size=(20, 30)) / 5
    truth = rng.integers(0, 8, size=(20, 30)) / 7
    ours = kendall_tau_b(est, truth)
    ref = [stats.kendalltau(e, t, variant="b").statistic for e, t in zip(est, truth)]
    assert np.allclose(ours, ref)
    assert np.allclose(kendall_tau_b(truth, truth), 1.0)


def _many_runs(seed=0, n_runs=30, n_targets=20, n_seen=200, noise=0.03):
    rng = np.random.default_rng(seed)
    frames = []
    for run in range(n_runs):
        correct = rng.integers(60, 140, size=n_targets)
        est = correct / n_seen + rng.normal(0, noise, n_targets)
        frames.append(results_table(est, correct, n_seen, run=run))
    return pd.concat(frames, ignore_index=True)


def test_confidence_intervals_bracket_the_mdad():
    table = _many_runs()
    for ci in ("pairs", "runs"):
        row = mdad_table(table, ci=ci, n_boot=300, seed=1).iloc[0]
        assert row["reached"]
        assert row["ci_low"] <= row["mdad"] <= row["ci_high"]
    pairs = mdad_table(table, ci="pairs", n_boot=300).iloc[0]
    assert np.isclose(pairs["mdad"] - pairs["ci_low"], pairs["ci_high"] - pairs["mdad"])
    again = mdad_table(table, ci="runs", n_boot=300, seed=1)
    pd.testing.assert_frame_equal(again, mdad_table(table, ci="runs", n_boot=300, seed=1))


def test_mdad_grows_with_threshold_and_noise():
    quiet, loud = _many_runs(noise=0.01), _many_runs(noise=0.05)
    m = [mdad_table(quiet, threshold=t, ci="none").loc[0, "mdad"] for t in (0.7, 0.8, 0.9)]
    assert m[0] <= m[1] <= m[2]
    assert mdad_table(loud, ci="none").loc[0, "mdad"] > mdad_table(quiet, ci="none").loc[0, "mdad"]


def test_summary_error_and_tau():
    table = results_table([0.5, 0.52, 0.55], [50, 51, 55], n_seen=100)
    row = summary_table(table).iloc[0]
    assert np.isclose(row["error"], 100 * (0 + 0.01 + 0) / 3)
    assert np.isclose(row["tau"], 1.0)


def test_bad_tables_get_clear_errors():
    with pytest.raises(ResultsError, match="lacks columns"):
        mdad_table(pd.DataFrame({"run": [0]}))
    table = results_table([0.5, 0.6], [50, 51], n_seen=100)
    with pytest.raises(ResultsError, match="tie rule"):
        mdad_table(table, tie_rule="coin")
    with pytest.raises(ResultsError, match="threshold"):
        mdad_table(table, threshold=1.5)


@pytest.mark.parametrize("option,value,message", [
    ("threshold", float("nan"), "threshold must be a finite number"),
    ("threshold", 0.0, "threshold must be above 0"),
    ("bin_width", float("inf"), "bin width \\(points\\) must be a finite number"),
    ("bin_width", 0.0001, "bin width \\(points\\) must be at least 0.01"),
    ("n_boot", 0, "bootstrap resamples must be at least 1"),
    ("n_boot", 2.5, "bootstrap resamples must be a whole number"),
    ("seed", -1, "seed must be at least 0"),
    ("ci", "jackknife", "CI method must be one of 'pairs', 'runs'"),
])
def test_mdad_options_are_checked_at_the_boundary(option, value, message):
    table = results_table([0.5, 0.6, 0.7], [50, 51, 70], n_seen=100)
    with pytest.raises(ResultsError, match=message):
        mdad_table(table, **{option: value})


def test_summary_of_runs_whose_tau_is_undefined_is_nan_without_a_warning():
    import warnings

    table = results_table([0.5, 0.5], [50, 60], n_seen=100)  # tied estimates: tau-b undefined
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        row = summary_table(table).iloc[0]
    assert np.isnan(row["tau"]) and np.isnan(row["tau_sd"]) and row["error"] == pytest.approx(5.0)


def test_a_bin_width_with_float_noise_is_read_as_the_width_meant():
    import numpy as np

    from mbutils.results.pair_metrics import gap_bins

    diff, n = np.array([[0, 3, 7, 70, 140]]), np.array([100])
    assert (gap_bins(diff, n, 0.7000000000000001) == gap_bins(diff, n, 0.7)).all()
    assert gap_bins(diff, n, 0.7).tolist() == [[0, 4, 10, 100, 200]]


def test_monotone_rates_equal_scikit_learns_isotonic_fit_bit_for_bit():
    """The fit calls SciPy's solver directly; scikit-learn's public function (checks, then the
    same solver) must give the very same numbers, empty bins left out and returned as NaN."""
    from sklearn.isotonic import isotonic_regression

    from mbutils.results.pair_metrics import monotone_rates

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

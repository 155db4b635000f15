"""Meta-evaluation tables (mbutils.evaluate.metrics) on hand-made cases with known answers: agreement
curves, MDAD tables and their intervals, summaries, and refusals of bad tables."""

import numpy as np
import pandas as pd
import pytest

from helpers import results_table
from mbutils.base.errors import ResultsError
from mbutils.evaluate.metrics import agreement_curve, mdad_table, summary_table


def test_tiny_table_curve_and_mdad():
    # n_seen=100; A,B,C with 50,51,55 correct. Pairs (A,B): gap 1 pt, agrees;
    # (A,C): gap 5, agrees; (B,C): gap 4, disagrees.
    table = results_table([0.5, 0.6, 0.52], [50, 51, 55], n_seen=100)
    curve = agreement_curve(table, bin_width=0.5)
    assert curve["gap"].tolist() == [1.0, 4.0, 5.0]
    assert curve["agreement"].tolist() == [1.0, 0.0, 1.0]
    first = mdad_table(table, threshold=0.8, ci="none", method="first")
    assert first.loc[0, "mdad"] == 1.0 and first.loc[0, "n_pairs"] == 3
    mono = mdad_table(table, threshold=0.8, ci="none", method="monotone")
    assert mono.loc[0, "mdad"] == 5.0
    # the book's MDAD is the default: the monotone fit, its interval from a bootstrap over runs
    default = mdad_table(table, threshold=0.8)
    assert default.loc[0, "mdad"] == 5.0 and default.attrs["method"] == "monotone" and default.attrs["ci"] == "runs"


def test_the_vectorised_monotone_crossing_is_the_isotonic_fit_s():
    """mdad_bins' closed form against scipy's pool-adjacent-violators fit, on random count curves."""
    from mbutils.evaluate.pair_metrics import first_crossing, monotone_crossing, monotone_rates

    rng = np.random.default_rng(1)
    for _ in range(3000):
        n = int(rng.integers(1, 30))
        total = rng.integers(0, 15, n) * (rng.random(n) < 0.8)
        agree = rng.binomial(total, np.clip(np.linspace(0.3, 1, n) + rng.normal(0, 0.2, n), 0, 1))
        level = float(rng.choice([0.5, 0.7, 0.75, 0.8, 0.9]))
        with np.errstate(invalid="ignore", divide="ignore"):
            rates = agree / total
        want = first_crossing(monotone_rates(np.nan_to_num(rates), total.astype(float)), level)
        assert int(monotone_crossing(agree, total, level)) == int(want)


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

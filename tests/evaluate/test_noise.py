"""The one noise rule: the interval of a difference of two MDADs (paired, or unpaired from two intervals each
extended up by a gap bin): lower, higher, within noise; and non-inferiority within the margin for "catches up"."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from helpers import check_verdict, independent_interval
from mbutils.book.findings import claims
from mbutils.evaluate import noise


def table(rows, bin_width=None):
    """An MDAD table from (selector, size, mdad, ci_low, ci_high) tuples."""
    t = pd.DataFrame(rows, columns=["selector", "size", "mdad", "ci_low", "ci_high"]).astype(
        {"mdad": float, "ci_low": float, "ci_high": float})
    if bin_width is not None:
        t.attrs["bin_width"] = bin_width
    return t


def test_intervals_follow_the_stated_conventions():
    t = table([("a", 10, 4.0, 3.0, 5.0), ("b", 10, 4.0, np.nan, np.nan), ("c", 10, 4.0, 3.0, np.nan),
               ("d", 10, np.nan, np.nan, np.nan)])
    low, high = noise.intervals(t)
    expected = [independent_interval(*r) for r in t[["mdad", "ci_low", "ci_high"]].to_numpy(float)]
    np.testing.assert_array_equal(low, [e[0] for e in expected])
    np.testing.assert_array_equal(high, [e[1] for e in expected])
    assert high.tolist() == [5.5, 4.5, np.inf, np.inf]
    assert noise.intervals(table([("a", 10, 4.0, 3.0, 5.0)], bin_width=1.0))[1].tolist() == [6.0]


@pytest.mark.parametrize("a,b,verdict", [
    ((1.0, 2.0), (3.0, 4.0), "better"),     # disjoint below
    ((3.0, 4.0), (1.0, 2.0), "worse"),      # disjoint above
    ((1.0, 2.5), (2.5, 4.0), "within noise"),  # touching counts as overlap
    ((1.0, np.inf), (5.0, 6.0), "within noise"),
    ((np.inf, np.inf), (np.inf, np.inf), "within noise"),  # both not reached
    ((1.0, 2.0), (np.inf, np.inf), "better"),  # reached beats not reached
])
def test_compare(a, b, verdict):
    assert noise.compare(a[0], a[1], b[0], b[1]) == verdict


def test_a_degenerate_bootstrap_interval_one_bin_apart_is_within_noise():
    """1.0 [1.0, 1.0] against 1.5 [1.5, 1.5] is one 0.5-point bin: not a finding."""
    t = table([("random", 200, 1.5, 1.5, 1.5), ("confidence_stratified", 200, 1.0, 1.0, 1.0)])
    assert noise.clear_best(t, 200) is None
    assert noise.versus(t, "confidence_stratified").tolist() == ["within noise"]
    two_bins = table([("random", 200, 2.0, 2.0, 2.0), ("confidence_stratified", 200, 1.0, 1.0, 1.0)])
    assert noise.clear_best(two_bins, 200) == "confidence_stratified"


def test_clear_best_needs_an_interval_below_every_other():
    t = table([("random", 10, 12.0, 10.0, 14.0), ("a", 10, 6.0, 5.0, 7.0), ("b", 10, 8.0, 6.5, 9.5)])
    assert noise.clear_best(t, 10) is None  # a overlaps b
    t.loc[2, ["mdad", "ci_low", "ci_high"]] = [9.0, 8.0, 10.0]
    assert noise.clear_best(t, 10) == "a"
    claim = claims.best_at_size(t, 10)
    assert claim.text.startswith("a is the most reliable method at k = 10 (MDAD 6.0 points [5.0, 7.0]; random "
                                 "sampling's is 12.0 points [10.0, 14.0])")


def test_catch_up_is_the_smallest_size_from_which_random_is_within_the_margin_of_every_method():
    """Unpaired: the upper bound of MDAD_random - MDAD_a is random's upper end plus a bin minus a's lower end."""
    t = table([("random", 10, 12.0, 11.0, 13.0), ("a", 10, 6.0, 5.0, 7.0),
               ("random", 50, 5.0, 4.0, 6.0), ("a", 50, 3.0, 2.0, 4.0),
               ("random", 100, 2.0, 1.5, 2.5), ("a", 100, 2.0, 1.5, 2.5)])
    records = noise.unpaired_records(t)["a"]
    assert [r["high"] for r in records] == [8.5, 4.5, 1.5]  # 13.5 - 5, 6.5 - 2, 3 - 1.5
    assert [r["low"] for r in records] == [3.5, -0.5, -1.5]  # 11 - 7.5, 4 - 4.5, 1.5 - 3
    assert [noise.state(r) for r in records] == [noise.WORSE, noise.UNDECIDED, noise.NON_INFERIOR]
    assert noise.random_within_ci_from(t) == 100
    assert noise.random_within_ci_from(t, margin=5.0) == 50
    assert claims.catch_up({"B": t}).text.startswith("B: from k = 100")
    t.loc[4, ["mdad", "ci_low", "ci_high"]] = np.nan  # random not reached at the largest size
    assert noise.random_within_ci_from(t) is None
    assert "not reached" in claims.catch_up({"B": t}).text


def test_the_unpaired_difference_excludes_zero_exactly_when_the_widened_intervals_are_disjoint():
    rng = np.random.default_rng(0)
    for _ in range(300):
        m = rng.integers(0, 20, 2) / 2
        lo, hi = m - rng.integers(0, 6, 2) / 2, m + rng.integers(0, 6, 2) / 2
        t = table([("random", 10, m[0], lo[0], hi[0]), ("a", 10, m[1], lo[1], hi[1])])
        r = noise.unpaired_records(t)["a"][0]
        low, high = noise.intervals(t)
        assert r["verdict"] == noise.compare(low[0], high[0], low[1], high[1])


def test_versus_random_counts_cells_by_the_rule():
    t = table([("random", 10, 12.0, 11.0, 13.0), ("a", 10, 6.0, 5.0, 7.0),
               ("random", 50, 5.0, 4.0, 6.0), ("a", 50, 5.0, 4.0, 6.0),
               ("random", 100, 2.0, 1.5, 2.5), ("a", 100, 8.0, 7.0, 9.0)])
    text = claims.versus_random({"B": t}, "a").text
    assert "beyond the noise (disjoint 95% intervals) in 1, higher beyond it in 1, and within noise in 1" in text
    same = claims.versus_random({"B": t.assign(mdad=5.0, ci_low=4.0, ci_high=6.0)}, "a").text
    assert "within noise of random sampling's in every one" in same


def test_thin_pools_are_named_from_the_power_of_their_paired_comparisons():
    import pandas as pd

    assert noise.thin_pool(pd.Series({10: 3.0, 50: 1.5, 100: 1.0}), 50) == ""
    thin = noise.thin_pool(pd.Series({10: 6.0, 50: 3.0, 100: 1.0}), 10)
    assert "median 3.0" in thin and "23 runs" in thin  # ceil(10 * (3 / 2)^2) = 23
    assert thin.startswith("with 10 runs") and "pool" not in thin  # the limit named is the runs
    assert "not reached" in noise.thin_pool(pd.Series({10: float("nan")}), 10)


def test_the_checker_fails_on_a_winner_inside_the_noise():
    t = table([("random", 10, 9.5, 4.0, 15.0), ("confidence_stratified", 10, 9.0, 3.0, 15.0)])
    honest = claims.best_at_size(t, 10)
    check_verdict(honest.fn, honest.inputs, honest.text)
    with pytest.raises(AssertionError):
        check_verdict("best_at_size", honest.inputs, "Confidence strata is the most reliable method at k = 10")

"""Paired claims over many comparisons: Holm's family-wise control, the few-runs flag, the best method at a
size, random sampling's MDAD against k, and the sources sweep against its noise (the thin-pool flag: evaluate/test_noise.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mbutils.book.findings import claims
from mbutils.evaluate.claims_paired import best_at_size_paired, family_note, versus_random_paired
from mbutils.evaluate.paired import _p_value, holm


def test_holm_matches_its_definition_on_random_p_values():
    """Holm's adjusted p: max over the sorted prefix of (m - i) p_(i), capped at 1 (brute force)."""
    rng = np.random.default_rng(0)
    for _ in range(50):
        p = rng.random(int(rng.integers(1, 9))) ** 2
        order = np.argsort(p, kind="stable")
        m = len(p)
        expected = np.empty(m)
        for rank, idx in enumerate(order):
            expected[idx] = min(1.0, max((m - r) * p[order[r]] for r in range(rank + 1)))
        np.testing.assert_allclose(holm(p), expected)
    assert np.isnan(holm([np.nan, 0.01])[0]) and holm([np.nan, 0.01])[1] == pytest.approx(0.01)


def test_the_bootstrap_p_value_counts_both_sides():
    assert _p_value(np.array([1.0, 2.0, 3.0, -1.0])) == pytest.approx(0.5)
    assert _p_value(np.array([1.0, 1.0])) == 0.0
    assert _p_value(np.array([0.0, 0.0])) == 1.0
    assert np.isnan(_p_value(np.array([np.nan])))
    assert _p_value(np.array([np.inf, np.inf, -1.0, np.nan])) == pytest.approx(2 / 3)


def rows(verdicts, p_values, runs=40):
    return [{"size": 10 * (i + 1), "verdict": v, "difference": -1.0, "low": -2.0, "high": -0.5, "p_value": p,
             "detectable": 1.0, "runs_for_2": 10, "n_runs": runs} for i, (v, p) in enumerate(zip(verdicts, p_values))]


def test_a_sentence_over_many_comparisons_says_what_holm_keeps():
    claim = versus_random_paired({"B": rows(["better", "better", "within noise"], [0.001, 0.04, 0.5])}, "anchor_points")
    assert "pointwise" not in claim.text  # said once, on the measures page, not in every sentence
    # Holm over 3: 0.001 * 3 = 0.003 stays, 0.04 * 2 = 0.08 goes
    assert "keeps 1 of the 2 differences" in claim.text
    assert claims.recompute(claim.payload()).text == claim.text


def test_few_runs_are_flagged():
    assert "from 10 runs, fewer than 20" in family_note(rows(["better"], [0.01], runs=10))
    assert family_note(rows(["better"], [0.01], runs=20)) == ""


def test_the_lowest_is_most_reliable_only_when_lower_than_each_other_pairwise():
    mdads = {"a": 3.0, "b": 5.0, "c": 6.0}
    clear = best_at_size_paired({"b": rows(["better"], [0.01]), "c": rows(["better"], [0.01])}, 10, "a", mdads)
    assert clear.text.startswith("A") or "is the most reliable method at k = 10" in clear.text
    close = best_at_size_paired({"b": rows(["better"], [0.01]), "c": rows(["within noise"], [0.3])}, 10, "a", mdads)
    assert close.text.startswith("no method is clearly most reliable") and "within noise of c" in close.text
    assert claims.recompute(close.payload()).text == close.text
    none = best_at_size_paired({}, 10, "a", {"a": None})
    assert "no method reaches" in none.text


def mdad(rows_):
    return pd.DataFrame(rows_, columns=["selector", "size", "mdad"])


def test_random_sampling_rising_with_k_is_said_and_explained():
    rising = mdad([("random", 10, 8.0), ("random", 25, 9.0), ("random", 50, 4.0)])
    mono = mdad([("random", 10, 8.0), ("random", 25, 7.5), ("random", 50, 4.0)])
    text = claims.random_by_size(rising).text
    assert "rises with k (k = 10 to 25: 8.0 points to 9.0 points)" in text and "noise" in text
    falling = claims.random_by_size(mono)
    assert falling.text.startswith("random sampling's MDAD does not rise")
    assert claims.recompute(falling.payload()).text == falling.text


def test_the_sources_sweep_ranks_methods_only_beyond_its_noise():
    base = [("anchor_points", 100, 5.0, 50), ("anchor_points", 100, 5.5, 100),
            ("diversity", 100, 4.0, 50), ("diversity", 100, 4.5, 100)]
    sweep = pd.DataFrame(base, columns=["selector", "size", "mdad", "n_sources"])
    sweep["ci_low"], sweep["ci_high"] = sweep["mdad"] - 1.0, sweep["mdad"] + 1.0
    quiet = claims.sources_spread(sweep).text
    assert "no method that learns from source models moves beyond the noise" in quiet
    moved = sweep.copy()
    moved.loc[1, ["mdad", "ci_low", "ci_high"]] = [12.0, 11.0, 13.0]
    loud = claims.sources_spread(moved).text
    assert "the MDAD of Anchor Points moves beyond the noise" in loud and "Diversity" not in loud.split("(")[0]
    # a move as large inside overlapping intervals is no move
    wide = moved.assign(ci_low=moved["mdad"] - 8.0, ci_high=moved["mdad"] + 8.0)
    assert "no method that learns from source models moves beyond the noise" in claims.sources_spread(wide).text
    assert claims.recompute(claims.sources_spread(moved).payload()).text == loud

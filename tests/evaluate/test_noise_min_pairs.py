"""Too few pairs to tell: below noise.MIN_PAIRS distinct target pairs a comparison gives no verdict."""

from __future__ import annotations

import numpy as np
import pandas as pd

from mbutils.book.findings import claims
from mbutils.evaluate import noise
from mbutils.evaluate.paired import compare_selectors
from mbutils.evaluate.claims_paired import best_at_size_paired, comparison_records, versus_random_paired


def table(n_pairs: int, n_runs: int = 3) -> pd.DataFrame:
    """Two selectors whose intervals are single bins apart: the rule would call a winner at k = 10 and 50."""
    t = pd.DataFrame({"selector": ["a", "random", "a", "random"], "size": [10, 10, 50, 50],
                      "mdad": [0.0, 2.5, 2.5, 0.0], "ci_low": [0.0, 2.5, 2.5, 0.0], "ci_high": [0.0, 2.5, 2.5, 0.0],
                      "n_pairs": n_pairs, "n_runs": n_runs})
    t.attrs["bin_width"] = 0.5
    return t


def test_the_minimum_is_the_binomial_count_for_a_tenth_of_share_at_80_percent():
    assert noise.MIN_PAIRS == 62
    assert 1.96 * np.sqrt(0.8 * 0.2 / noise.MIN_PAIRS) <= 0.1 < 1.96 * np.sqrt(0.8 * 0.2 / (noise.MIN_PAIRS - 1))


def test_eighteen_pairs_give_too_few_pairs_to_tell_and_a_large_table_keeps_its_verdict():
    thin, plenty = table(18), table(900)
    assert noise.versus(thin, "a").tolist() == [noise.TOO_FEW, noise.TOO_FEW]
    assert noise.versus(plenty, "a").tolist() == [noise.BETTER, noise.WORSE]
    assert noise.clear_best(thin, 10) is None and noise.clear_best(plenty, 10) == "a"
    assert noise.random_within_ci_from(thin) is None and noise.random_within_ci_from(plenty) == 50
    text = noise.too_few_text(thin)
    assert text.startswith("too few pairs to tell: 18 distinct target pairs over 3 runs")
    assert "about 11 runs, or 7 targets per run" in text  # 6 pairs a run; 3 runs x 21 pairs of 7 targets >= 62
    assert noise.too_few_text(plenty) == ""
    assert noise.too_few(table(62)).sum() == 0 and noise.too_few(table(61)).all()


def test_a_fixed_target_set_counts_its_pairs_once_however_many_runs_repeat_them():
    """12 targets in each of 20 runs: 1,320 pairs x runs but 66 distinct pairs, the count the rule reads; 10
    targets give 45 distinct pairs, too few, and the sentence says more runs would not help."""
    fixed = table(1320, n_runs=20).assign(n_distinct_pairs=66)
    assert not noise.too_few(fixed).any()
    ten = table(900, n_runs=20).assign(n_distinct_pairs=45)
    assert noise.too_few(ten).all()
    text = noise.too_few_text(ten)
    assert "45 distinct target pairs over 20 runs" in text and "only more models" in text and "runs, or" not in text


def test_claims_on_too_few_pairs_crown_no_winner_and_say_why():
    thin, plenty = table(18), table(900)
    made = [claims.versus_random({"B": thin}, "a"), claims.best_at_size(thin, 10), claims.noise_yardstick(thin, 3),
            claims.catch_up({"B": thin})]
    for claim in made:
        assert "too few pairs to tell" in claim.text, claim.text
        assert "better" not in claim.text and "most reliable method" not in claim.text
        assert claims.recompute(claim.payload()).text == claim.text
    assert "most reliable method at k = 10" in claims.best_at_size(plenty, 10).text
    assert "0.0 points" not in claims.noise_yardstick(thin, 3).text


def test_mdad_table_widens_the_interval_of_a_size_with_too_few_pairs():
    from mbutils.evaluate.metrics import mdad_table

    # one run of four targets (6 pairs), all ordered right: the bootstrap would say "[0, 0]"
    rows = pd.DataFrame({"run": 0, "selector": "mine", "size": 5, "model": list("abcd"),
                         "estimate": [0.9, 0.7, 0.5, 0.3], "seen_correct": [18, 14, 10, 6], "n_seen": 20,
                         "unseen_correct": [18, 14, 10, 6], "n_unseen": 20})
    t = mdad_table(rows, n_boot=50)
    assert int(t["n_pairs"].iloc[0]) == 6 and noise.too_few(t).all()
    assert t["ci_low"].iloc[0] <= 0 and np.isnan(t["ci_high"].iloc[0])
    assert np.isnan(mdad_table(rows, ci="none")["ci_high"].iloc[0])  # no interval asked: none given


def paired_table(n_pairs_per_run: int, n_runs: int = 3) -> pd.DataFrame:
    return pd.DataFrame({"size": [10, 50], "verdict": ["better", "worse"], "difference": [-2.5, 2.5],
                         "low": [-2.5, 2.5], "high": [-2.5, 2.5], "p_value": [0.0, 0.0], "detectable": [0.0, 0.0],
                         "runs_for_2": [1, 1], "n_runs": n_runs, "n_pairs": n_pairs_per_run})


def thin_results(n_runs: int = 3) -> pd.DataFrame:
    """Two selectors, ``n_runs`` runs of four targets (6 pairs a run) at sizes 10 and 50; "mine" orders
    every pair right, random sampling swaps one pair in every run."""
    frames = []
    for selector, estimate in (("mine", [0.9, 0.7, 0.5, 0.3]), ("random", [0.7, 0.9, 0.5, 0.3])):
        for run in range(n_runs):
            for size in (10, 50):
                frames.append(pd.DataFrame({
                    "run": run, "selector": selector, "size": size, "model": list("abcd"), "estimate": estimate,
                    "seen_correct": [18, 14, 10, 6], "n_seen": 20, "unseen_correct": [18, 14, 10, 6],
                    "n_unseen": 20}))
    return pd.concat(frames, ignore_index=True)


def test_paired_verdicts_on_too_few_pairs_become_too_few_pairs_to_tell():
    table = compare_selectors(thin_results(), "mine", "random", n_boot=50)
    assert (table["n_runs"] * table["n_pairs"] == 18).all() and (table["verdict"] == noise.TOO_FEW).all()
    thin, plenty = comparison_records(table), comparison_records(paired_table(300))
    assert [r["verdict"] for r in thin] == [noise.TOO_FEW] * 2
    assert [r["verdict"] for r in plenty] == ["better", "worse"]
    text = versus_random_paired({"B": thin}, "anchor_points").text
    assert "lower than random sampling's in 0, higher in 0" in text and "too few target pairs in 2" in text
    best = best_at_size_paired({"random": thin}, 10, "anchor_points", {"anchor_points": 0.0, "random": 2.5}).text
    # the same four models in every run: 6 distinct pairs, and only more models would give more
    assert best.startswith("no method can be called the most reliable at k = 10") and "6 distinct target pairs" in best
    assert "only more models" in best
    assert "most reliable method" in best_at_size_paired({"random": plenty}, 10, "anchor_points",
                                                         {"anchor_points": 0.0, "random": 2.5}).text


def test_unseen_loss_on_too_few_pairs_says_so():
    seen = pd.DataFrame({"selector": ["x", "y"], "size": 10, "mdad": [10.0, 10.0]})
    unseen = pd.DataFrame({"selector": ["x", "y"], "size": 10, "mdad": [7.0, 5.0], "ci_low": [7.0, 5.0],
                           "ci_high": [7.0, 5.0], "n_pairs": 18, "n_runs": 3})
    claim = claims.unseen_loss(seen, unseen)
    assert "too few pairs to tell: 18 distinct target pairs" in claim.text and "most" not in claim.text
    assert claims.recompute(claim.payload()).text == claim.text
    assert "falls most" in claims.unseen_loss(seen, unseen.assign(n_pairs=900)).text

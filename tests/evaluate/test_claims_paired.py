"""Sentences from paired comparisons: random sampling "catches up" from k only where the non-inferiority test
(upper 95% bound of MDAD_random - MDAD_other at most the margin) passes for every method at every size from k on,
and otherwise the sentence gives the true reason."""

from __future__ import annotations

import json

import numpy as np

from mbutils.book.findings.claims import catch_up_paired, claim_is_powered, versus_random_paired
from mbutils.evaluate import noise


def rows(verdicts, highs, lows=None, runs=40, diff=0.0):
    lows = lows or [-1.0] * len(verdicts)
    return [{"size": k, "verdict": v, "difference": diff, "low": lo, "high": hi, "n_runs": runs,
             "n_distinct_pairs": 5000}
            for k, v, lo, hi in zip((10, 25, 50, 100), verdicts, lows, highs)]


def test_catch_up_needs_every_upper_bound_within_the_margin_from_k_on():
    ok = {"GPQA": {"anchor_points": rows(["worse", "within noise", "within noise", "within noise"],
                                         [6.0, 1.9, 1.5, 1.0], lows=[0.5, -1, -1, -1])}}
    claim = catch_up_paired(ok)
    assert "GPQA: from k = 25" in claim.text and claim_is_powered(claim.fn, claim.inputs)
    wide = {"BBH": {"anchor_points": rows(["worse", "within noise", "within noise", "within noise"],
                                          [6.0, 4.0, 3.5, 3.0], lows=[0.5, -1, -1, -1], runs=10)}}
    claim = catch_up_paired(wide)
    assert "from k =" not in claim.text.split("(")[0] and "too few runs" in claim.text
    # the runs that would bring each upper bound within 2 points, the difference staying at 0: 10 (4/2)^2 = 40
    assert "about 40 runs" in claim.text
    mixed = {"MMLU-Pro": {"a": rows(["within noise"] * 4, [1.0] * 4), "b": rows(["within noise"] * 4, [1.0, 1.0, 3.0, 1.0])}}
    assert "from k = 100" in catch_up_paired(mixed).text


def test_the_test_is_an_intersection_over_methods_and_sizes():
    comparisons = {"x": rows(["within noise"] * 4, [1.0, 1.0, 1.0, 1.0]),
                   "y": rows(["within noise"] * 4, [2.5, 1.0, 2.1, 1.0])}
    verdict = noise.catch_up(comparisons)
    assert verdict.size == 100  # y fails at 50: the run of passing sizes starts after it
    assert noise.catch_up(comparisons, margin=3.0).size == 10
    assert verdict.states[50]["y"] == noise.UNDECIDED and verdict.states[50]["x"] == noise.NON_INFERIOR


def test_a_claim_recomputes_from_its_payload():
    from mbutils.book.findings.claims import recompute

    claim = catch_up_paired({"GPQA": {"x": rows(["within noise"] * 4, [1.0] * 4)}})
    assert recompute(claim.payload()).text == claim.text
    claim = versus_random_paired({"GPQA": rows(["better", "within noise", "within noise", "cannot tell"],
                                              [-0.5, 1.0, 3.0, None])}, "anchor_points")
    assert "1 of the 2 within noise are also within 2 points" in claim.text
    assert recompute(json.dumps(json.loads(claim.payload()))).text == claim.text


def test_the_reason_for_no_verdict_is_the_true_one():
    claim = catch_up_paired({"Small": {"x": rows(["cannot tell"] * 4, [None] * 4)}})
    assert "not reached" in claim.text and "beyond the noise" not in claim.text
    claim = catch_up_paired({"Small": {"x": rows(["within noise", "worse", "within noise", "worse"], [1.0] * 4,
                                                 lows=[-1, 0.5, -1, 0.5])}})
    assert "lower than random sampling's beyond the noise at the largest size" in claim.text
    few = rows([noise.TOO_FEW] * 4, [1.0] * 4)
    for r in few:
        r["n_distinct_pairs"] = 40
    claim = catch_up_paired({"Set": {"x": few}})
    assert "too few pairs to tell" in claim.text and "40 distinct" in claim.text and "runs" not in claim.text


def test_a_difference_beyond_the_margin_is_not_promised_to_more_runs():
    far = rows(["within noise"] * 4, [6.0] * 4, diff=2.5)
    claim = catch_up_paired({"B": {"x": far}})
    assert "too few runs" in claim.text and "more runs would settle only if it is noise" in claim.text
    assert np.isinf(noise.runs_for_margin(far[0]))

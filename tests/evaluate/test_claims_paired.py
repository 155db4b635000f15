"""Sentences from paired comparisons say "catches up" only with the power to have seen a 2-point difference."""

from __future__ import annotations

import json

from mbutils.book.findings.claims import catch_up_paired, claim_is_powered, versus_random_paired


def rows(verdicts, detectable, runs=40):
    return [{"size": k, "verdict": v, "difference": 0.0, "low": -1.0, "high": 1.0, "detectable": d, "runs_for_2": runs}
            for k, v, d in zip((10, 25, 50, 100), verdicts, detectable)]


def test_catch_up_is_said_only_where_every_comparison_had_the_power():
    powered = {"GPQA": {"anchor_points": rows(["worse", "within noise", "within noise", "within noise"],
                                              [5.0, 1.9, 1.5, 1.0])}}
    claim = catch_up_paired(powered)
    assert "catches up from k = 25" in claim.text and claim_is_powered(claim.fn, claim.inputs)
    weak = {"BBH": {"anchor_points": rows(["worse", "within noise", "within noise", "within noise"],
                                          [5.0, 4.0, 3.5, 3.0], runs=120)}}
    claim = catch_up_paired(weak)
    assert "catches up" not in claim.text and "too small to tell" in claim.text and "120 runs" in claim.text
    mixed = {"MMLU-Pro": {"a": rows(["within noise"] * 4, [1.0] * 4), "b": rows(["within noise"] * 4, [1.0, 1.0, 3.0, 1.0])}}
    assert "catches up from k = 100" in catch_up_paired(mixed).text


def test_a_claim_recomputes_from_its_payload():
    from mbutils.book.findings.claims import recompute

    claim = catch_up_paired({"GPQA": {"x": rows(["within noise"] * 4, [1.0] * 4)}})
    assert recompute(claim.payload()).text == claim.text
    claim = versus_random_paired({"GPQA": rows(["better", "within noise", "within noise", "cannot tell"],
                                              [1.0, 1.0, 3.0, None])}, "anchor_points")
    assert "of the 2 within noise, 1 could have shown" in claim.text
    assert recompute(json.dumps(json.loads(claim.payload()))).text == claim.text


def test_an_undecided_comparison_is_not_read_as_worse():
    claim = catch_up_paired({"Small": {"x": rows(["cannot tell"] * 4, [None] * 4)}})
    assert "cannot tell" in claim.text and "stays lower" not in claim.text
    claim = catch_up_paired({"Small": {"x": rows(["within noise", "worse", "within noise", "worse"], [1.0] * 4)}})
    assert "stays lower than random sampling beyond the noise" in claim.text

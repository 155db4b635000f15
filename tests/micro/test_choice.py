"""--selector auto: the paired noise rule's choice, and its record in the card."""

from __future__ import annotations

import numpy as np
import pytest

from mbutils import load_benchmark
from mbutils.micro.choice import CANDIDATES, candidates, choose_selector, decide
from mbutils.micro.build import build_micro


def test_the_rule_takes_the_lowest_only_when_it_beats_random_beyond_the_noise():
    mdads = {"random": 8.0, "diversity": 5.0, "anchor_points": 6.0}
    assert decide("diversity", mdads, {"verdict": "better"}) == "diversity"
    assert decide("diversity", mdads, {"verdict": "within noise"}) == "random"
    assert decide("diversity", mdads, {"verdict": "cannot tell"}) == "random"
    assert decide("diversity", mdads, None) == "random"
    assert decide("random", mdads, None) == "random"
    assert decide("diversity", {"random": None, "diversity": None}, {"verdict": "better"}) == "random"


def test_candidates_follow_what_the_bundle_has():
    one_subtask = load_benchmark("synthetic-gpqa")
    dropped = {"subtask_equal"} | ({"confidence_stratified"} if one_subtask.confidence is None else set())
    assert candidates(one_subtask) == [c for c in CANDIDATES if c not in dropped]
    bbh = load_benchmark("synthetic-bbh")
    assert "subtask_equal" in candidates(bbh)
    assert ("confidence_stratified" in candidates(bbh)) == (bbh.confidence is not None)


@pytest.fixture(scope="module")
def chosen():
    bench = load_benchmark("synthetic-gpqa")
    return bench, choose_selector(bench, 25, runs=4, seed=3, n_boot=200)


def test_the_choice_record_holds_the_numbers_that_decided_it(chosen):
    _, record = chosen
    assert record["k"] == 25 and record["runs"] == 4 and record["seed"] == 3
    assert set(record["mdads"]) == set(record["candidates"])
    reached = {s: m for s, m in record["mdads"].items() if m is not None}
    assert record["lowest"] == min(reached, key=reached.get)
    versus = record["comparisons"].get("random")
    assert record["selector"] == decide(record["lowest"], record["mdads"], versus)
    if record["selector"] != "random":  # lower than random's beyond the noise: the paired interval lies below 0
        assert versus["high"] < 0
    assert f"k = 25 over 4 protocol runs" in record["reason"]
    assert f"{reached[record['lowest']]:.1f} points" in record["reason"]


def test_build_micro_auto_writes_the_choice_into_the_card(tmp_path):
    bench = load_benchmark("synthetic-gpqa")
    built = build_micro(bench, "auto", 25, runs=4, seed=3, out=tmp_path / "micro")
    choice = built.card.choice
    assert choice is not None and built.selector.split("(")[0] == choice["selector"]
    text = (tmp_path / "micro" / "card.md").read_text(encoding="utf-8")
    assert "How the selector was chosen" in text and "4 runs, seed 3" in text
    import json

    card = json.loads((tmp_path / "micro" / "card.json").read_text(encoding="utf-8"))
    assert card["choice"]["selector"] == choice["selector"]
    assert np.isclose(card["choice"]["threshold"], 0.8)

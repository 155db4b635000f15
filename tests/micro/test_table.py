"""The shipped micro-benchmarks' table: every cell is the stored card's number, read here independently."""

from __future__ import annotations

import json
import math

import pytest

import mbutils
from mbutils.micro.shipped import SHIPPED
from mbutils.micro.table import shipped_micro_table


def _stored(name: str) -> dict:
    return json.loads((SHIPPED / name / "shipped.json").read_text(encoding="utf-8"))


def test_one_row_per_shipped_folder_and_public():
    table = mbutils.shipped_micro_table()
    folders = {p.name for p in SHIPPED.iterdir() if (p / "shipped.json").is_file()}
    assert set(table["name"]) == folders and len(table) == len(folders)
    assert "shipped_micro_table" in mbutils.__all__


def test_known_values_of_three_cards():
    """The stored cards (the monotone MDAD with its run-bootstrap interval) as the table shows them."""
    table = shipped_micro_table().set_index("name")
    gpqa = table.loc["gpqa-25"]
    assert (gpqa["selector"], gpqa["mdad"], gpqa["ci_low"], gpqa["ci_high"], gpqa["random_mdad"]) == \
        ("diversity", 7.0, 6.5, 8.5, 12.0)
    assert (gpqa["covered"], gpqa["held_out"], gpqa["vs_random_verdict"]) == (378, 420, "better")
    assert gpqa["coverage"] == pytest.approx(378 / 420) and not gpqa["degenerate"]
    bbh = table.loc["bbh-leaderboard-50"]
    assert (bbh["selector"], bbh["mdad"], bbh["ci_low"], bbh["ci_high"], bbh["random_mdad"]) == \
        ("anchor_points", 3.5, 3.0, 5.0, 7.5)
    assert (bbh["vs_random_difference"], bbh["vs_random_low"], bbh["vs_random_high"]) == (-5.0, -9.0, -1.0)
    mmlu = table.loc["mmlu-pro-leaderboard-50"]
    assert (mmlu["selector"], mmlu["lowest"], mmlu["vs_random_verdict"]) == ("random", "anchor_points", "within noise")
    assert (mmlu["mdad"], mmlu["ci_low"], mmlu["ci_high"], mmlu["choice_random_mdad"]) == (6.5, 4.0, 6.5, 6.5)
    assert not mmlu["degenerate"] and mmlu["n_targets"] == 13 and mmlu["interval"] == "hypergeometric"
    assert mmlu["coverage"] == pytest.approx(39 / 40) and mmlu["held_out"] == 40  # random sampling is measured too


@pytest.mark.parametrize("name", ["gpqa-50", "bbh-leaderboard-250", "mmlu-pro-leaderboard-100"])
def test_every_row_is_its_stored_card(name):
    rec, row = _stored(name), shipped_micro_table().set_index("name").loc[name]
    card, choice = rec["card"], rec["card"]["choice"]
    assert (row["bundle"], row["k"], row["selector"], row["interval"]) == \
        (rec["bundle"], rec["k"], rec["selector"], rec["interval"])
    assert (row["mdad"], row["ci_low"], row["ci_high"], row["random_mdad"], row["threshold"]) == \
        (card["mdad"], card["ci_low"], card["ci_high"], card["random_mdad"], card["threshold"])
    assert row["width"] == card["coverage"]["width"] and row["reason"] == choice["reason"]
    assert row["lowest"] == choice["lowest"] and row["lowest_mdad"] == choice["mdads"][choice["lowest"]]
    versus = choice["comparisons"].get("random")
    if versus:
        assert (row["vs_random_difference"], row["vs_random_verdict"]) == (versus["difference"], versus["verdict"])

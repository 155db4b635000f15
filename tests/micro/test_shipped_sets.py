"""The shipped micro-benchmarks: what is stored, how it was chosen, and the folders written from it."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from mbutils import load_benchmark
from mbutils.micro.choice import candidates, decide
from mbutils.micro.folder import read_micro
from mbutils.micro.shipped import (PLAN, RUNS, SEED, SHIPPED, ShippedError, export_shipped, shipped_folder,
                                           open_micro, record, shipped_names, summary)


def test_every_planned_size_of_every_shipped_bundle_ships():
    assert shipped_names() == [f"{b}-{k}" for b in sorted(PLAN) for k in PLAN[b]]


@pytest.mark.parametrize("name", shipped_names())
def test_each_card_records_a_choice_the_rule_gives_again_from_its_own_numbers(name):
    rec = record(name)
    choice = rec["card"]["choice"]
    assert choice["k"] == rec["k"] and choice["runs"] == RUNS and choice["seed"] == SEED
    assert rec["card"]["protocol"]["n_runs"] == RUNS and rec["seed"] == SEED
    lowest_held_out = (choice.get("held_out") or {}).get(choice["lowest"])
    assert choice["selector"] == decide(choice["lowest"], choice["mdads"], choice["comparisons"].get("random"),
                                        lowest_held_out)
    held = rec["card"]["held_out"]  # every shipped set passes the shipping rule on held-out models
    assert held["problems"] == [] and held["calibration"]["models"] >= 30
    assert rec["selector"].split("(")[0] == choice["selector"]
    bench = load_benchmark(rec["bundle"])
    assert choice["candidates"] == candidates(bench) and bench.content_hash == rec["bundle_hash"]
    reached = {s: m for s, m in choice["mdads"].items() if m is not None}
    assert reached[choice["lowest"]] == min(reached.values())  # the lowest (ties broken by the noise rule's order)
    items = pd.read_csv(SHIPPED / name / "items.csv")
    assert len(items) == rec["k"] and items["item"].isin(bench.items.astype(str)).all()
    assert not items["item"].duplicated().any()
    if rec["interval"] == "hypergeometric":
        assert np.allclose(items["weight"], 1 / rec["k"])


def test_the_summary_is_the_stored_cards():
    table = summary()
    assert table["name"].tolist() == shipped_names()
    for row in table.itertuples():
        card = record(row.name)["card"]
        assert row.mdad == card["mdad"] and row.random_mdad == card["random_mdad"]


def test_an_exported_folder_scores_as_the_stored_items_say(tmp_path):
    name = next(n for n in shipped_names() if record(n)["interval"] == "hypergeometric")  # a plain mean
    path = export_shipped(name, tmp_path / "m")
    folder = read_micro(path)
    rec = record(name)
    assert folder.k == rec["k"] and folder.meta["bundle"] == rec["bundle"]
    stored = pd.read_csv(SHIPPED / name / "items.csv")["item"].astype(str).tolist()
    assert folder.items["item"].astype(str).tolist() == stored
    card = json.loads((path / "card.json").read_text(encoding="utf-8"))
    assert card["mdad"] == rec["card"]["mdad"] and card["choice"]["reason"] == rec["card"]["choice"]["reason"]
    assert "How the selector was chosen" in (path / "card.md").read_text(encoding="utf-8")
    bench = load_benchmark(rec["bundle"])
    where = pd.Index(bench.items.astype(str)).get_indexer(folder.item_names)
    estimate = folder.micro.estimate(bench.correct[:3][:, where], None)
    assert np.allclose(estimate, bench.correct[:3][:, pd.Index(bench.items.astype(str)).get_indexer(stored)].mean(1))


def test_load_micro_reuses_its_folder_and_open_micro_prefers_a_folder(tmp_path):
    first = shipped_folder("gpqa-50")
    again = shipped_folder("gpqa-50")
    assert first.path == again.path and first.k == 50
    assert open_micro("gpqa-50").path == first.path
    export_shipped("gpqa-25", tmp_path / "gpqa-50")
    import os

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert open_micro("gpqa-50").k == 25  # a folder of that name wins over the shipped name
    finally:
        os.chdir(cwd)


def test_an_unknown_name_lists_the_shipped_ones():
    with pytest.raises(ShippedError, match="no shipped micro-benchmark 'gpqa-7'.*gpqa-25"):
        record("gpqa-7")

"""One micro-benchmark type: what build_micro returns, save writes and load_micro reads back, equal."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from mbutils import build_micro, load_benchmark, load_micro
from mbutils.micro.build import BuiltMicro, Card


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("synthetic-gpqa")


@pytest.mark.parametrize("selector", ["random", "diversity", "random_difference", "tinybenchmarks"])
def test_load_micro_of_a_saved_build_is_the_build(bench, selector, tmp_path):
    built = build_micro(bench, selector, 20, exclude=list(bench.models[:10]), runs=2)
    loaded = load_micro(built.save(tmp_path / "micro"))
    assert isinstance(loaded, BuiltMicro) and isinstance(loaded.card, Card)
    assert loaded == built and loaded.path == tmp_path / "micro"
    assert loaded.content()["card"]["held_out"] == built.content()["card"]["held_out"]


def test_equality_sees_a_changed_weight_card_or_pool(bench, tmp_path):
    built = build_micro(bench, "random", 20, runs=2)
    other = dataclasses.replace(built, card=dataclasses.replace(built.card, mdad=built.card.mdad + 0.5))
    assert other != built
    micro = built.micro
    weights = micro.weights.copy()
    weights[:2] += [0.01, -0.01]
    assert dataclasses.replace(built, micro=type(micro)(micro.items, weights)) != built
    assert dataclasses.replace(built, pool=built.pool.iloc[:-1]) != built


def test_a_shipped_name_loads_as_the_same_type():
    loaded = load_micro("gpqa-100")
    assert isinstance(loaded, BuiltMicro) and loaded.k == 100 and loaded.bundle == "gpqa"

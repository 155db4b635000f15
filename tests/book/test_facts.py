"""The sentences a page states about its data are computed from its bundle: counts, subtasks, options, chance."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd

from mbutils import Benchmark
from mbutils.book.facts import chance_text, crowd_text, data_facts, near_chance_text, subtask_text


def bench(n_models=5, sizes=(3, 4), options=None):
    items = [f"q{i}" for i in range(sum(sizes))]
    subtasks = [f"s{j}" for j, n in enumerate(sizes) for _ in range(n)]
    correct = (np.arange(n_models)[:, None] + np.arange(len(items))[None, :]) % 3 == 0
    info = None if options is None else pd.DataFrame({"item": items, "subtask": subtasks, "n_options": options})
    return Benchmark(name="toy", correct=correct.astype(int), models=[f"m{i}" for i in range(n_models)],
                     items=items, subtasks=subtasks, item_info=info)


def test_subtasks_are_counted_from_the_bundle():
    assert subtask_text(bench(sizes=(7,))) == "in a single subtask"
    assert subtask_text(bench(sizes=(3, 3))) == "in 2 subtasks of 3 items each"
    assert subtask_text(bench(sizes=(3, 4, 9))) == "in 3 subtasks of 3 to 9 items"


def test_the_chance_level_is_the_bundles_or_unknown():
    assert "does not say" in chance_text(bench())
    assert chance_text(bench(options=[5] * 7)) == "each item has 5 answer options, so a uniform guess scores 20%"
    mixed = chance_text(bench(options=[2, 2, 2, 4, 4, 4, 4]))
    assert "2 to 4 answer options" in mixed and f"{100 * (3 * 0.5 + 4 * 0.25) / 7:.1f}%" in mixed
    assert "only 6 of its 7 items" in chance_text(bench(options=[4, 4, 4, 4, 4, 4, None]))
    assert near_chance_text(bench()) == ""


def test_crowding_counts_pairs_of_the_pool():
    b = bench(n_models=4)
    acc = 100 * b.accuracy
    gaps = np.abs(acc[:, None] - acc[None, :])[np.triu_indices(4, 1)]
    text = crowd_text(b)
    assert text.startswith("of its 6 pairs of models") and f"{np.mean(gaps < 2):.0%} are less than 2" in text


def test_data_facts_name_the_page_and_its_counts():
    b = bench(n_models=6, sizes=(3, 4), options=[4] * 7)
    facts = data_facts(SimpleNamespace(benchmark=b, page_title="toy bundle", n_seen=3))
    assert facts["about"].startswith("toy bundle holds 7 items in 2 subtasks of 3 to 4 items, answered by 6 models")
    assert "a uniform guess scores 25%" in facts["about"] and "With 2 subtasks" in facts["one_subtask"]

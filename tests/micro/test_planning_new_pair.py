"""plan --pair for models the bundle does not hold: known values of the noise, the probability and the items to add."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from mbutils import build_micro, load_benchmark
from mbutils.base.errors import ProtocolError
from mbutils.micro.folder import read_micro
from mbutils.evaluate.pair_sizes import rule_size
from mbutils.micro.planning_new_pair import fold_pair_noise, format_new_pair, new_pair_power


@pytest.fixture(scope="module")
def setting(tmp_path_factory):
    bench = load_benchmark("synthetic-gpqa")
    new = [str(m) for m in bench.models[:2]]
    root = tmp_path_factory.mktemp("newpair")
    random = read_micro(build_micro(bench, "random", 40, exclude=new, runs=2, out=root / "random").path)
    anchors = read_micro(build_micro(bench, "anchor_points", 40, exclude=new, runs=2, out=root / "anchor").path)
    rows = bench.correct[:2]
    pd.DataFrame(rows, columns=bench.items).assign(model=["new-a", "new-b"]).to_csv(root / "new.csv", index=False)
    return bench, random, anchors, root / "new.csv", rows


def test_fold_pair_noise_differences_errors_within_folds_only():
    table = pd.DataFrame({"fold": [0, 0, 1, 2], "error": [0.1, -0.1, 0.5, 0.3]})
    sigma, pairs = fold_pair_noise(table)
    assert pairs == 1 and sigma == pytest.approx(0.2)  # fold 1 and 2 have one model each
    table = pd.DataFrame({"fold": [0, 0, 0], "error": [0.0, 0.3, 0.4]})
    assert fold_pair_noise(table) == (pytest.approx(math.sqrt((0.09 + 0.16 + 0.01) / 3)), 3)


def test_random_sampling_noise_probability_and_items_follow_the_normal_rule(setting):
    bench, random, _, csv, rows = setting
    p = new_pair_power(random, "new-a", "new-b", [csv])
    where = pd.Index(bench.items.astype(str)).get_indexer(random.item_names)  # the folder's items in the bundle
    y = rows[:, where][:, random.micro.items]
    diff = (y[0] - y[1]).mean()
    s2 = (y[0] - y[1]).var(ddof=1)
    k, n = 40, bench.n_items
    sigma = math.sqrt(s2 / k * (n - k) / (n - 1))
    assert p.difference == pytest.approx(100 * diff) and p.noise == pytest.approx(100 * sigma)
    assert p.probability == pytest.approx(norm.cdf(abs(diff) / sigma))
    assert p.sources == {"new-a": "log", "new-b": "log"}
    if p.probability < 0.8 and diff != 0:
        total = math.ceil(float(rule_size(abs(diff), s2 + diff ** 2, n, 0.8)) - 1e-9)
        assert p.more_items is not None and abs(k + p.more_items - total) <= 1
    assert "plug-in" in format_new_pair(p)


def test_a_pool_model_against_a_new_one_and_the_pool_measured_noise(setting):
    bench, _, anchors, csv, _ = setting
    pool_model = str(bench.models[10])
    p = new_pair_power(anchors, "new-a", pool_model, [csv])
    assert p.sources == {"new-a": "log", pool_model: "pool"}
    sigma, _ = fold_pair_noise(anchors.calibration)
    assert p.noise == pytest.approx(100 * sigma)
    where = pd.Index(bench.items.astype(str)).get_indexer(anchors.item_names)
    expected = anchors.micro.estimate(bench.correct[[10]][:, where])
    assert p.estimate_b == pytest.approx(100 * expected[0])
    if p.probability >= 0.8:
        assert p.more_items == 0
    more = new_pair_power(anchors, "new-a", pool_model, [csv], threshold=0.95)
    assert more.more_items is None or more.more_items >= p.more_items
    assert "errors behave like those of the pool" in format_new_pair(p)


def test_unknown_or_repeated_models_are_refused(setting):
    _, random, _, csv, _ = setting
    with pytest.raises(ProtocolError, match="neither in the results given"):
        new_pair_power(random, "new-a", "nobody", [csv])
    with pytest.raises(ProtocolError, match="two different models"):
        new_pair_power(random, "new-a", "new-a", [csv])
    with pytest.raises(ProtocolError, match="threshold"):
        new_pair_power(random, "new-a", "new-b", [csv], threshold=0.4)


def test_plan_micro_quotes_the_cards_mdad_as_micro_list_does():
    """One MDAD: plan --micro's answer quotes the card's (monotone fit, run interval), the number micro list shows."""
    from mbutils.micro.planning_new_pair import card_mdad_text, format_new_pair, new_pair_power
    from mbutils.micro.shipped import record, shipped_folder

    folder = shipped_folder("gpqa-50")
    pool = folder.pool["model"].astype(str).tolist()
    answer = format_new_pair(new_pair_power(folder, pool[0], pool[1]))
    quoted = card_mdad_text(folder.card)
    assert quoted and quoted in answer
    assert quoted.startswith(f"{record('gpqa-50')['card']['mdad']:g} points")

"""plan --pair: the exact power of ordering one pair with a random k-item subset, against simulation."""

from __future__ import annotations


import numpy as np
import pytest

from mbutils import MbutilsError, load_benchmark
from helpers import run_cli
from mbutils.evaluate.planning_pairs import pair_power


run = run_cli


@pytest.fixture(scope="module")
def gpqa():
    return load_benchmark("gpqa")


def _simulated(bench, i, j, k, draws, rng):
    """Share of uniform k-subsets (drawn as the k smallest of random keys) ordering models i, j as all items do."""
    diff = bench.correct[i].astype(int) - bench.correct[j].astype(int)
    chosen = np.argpartition(rng.random((draws, bench.n_items)), k, axis=1)[:, :k]
    sub = diff[chosen].sum(1)
    return float(np.mean(sub > 0 if diff.sum() > 0 else sub < 0))


def test_pair_power_agrees_with_simulation_on_five_pairs(gpqa):
    """Five pairs of real GPQA models at two sizes: |exact - simulated| within 3 simulation standard errors."""
    rng = np.random.default_rng(2025)
    acc = gpqa.accuracy
    order = np.argsort(acc, kind="stable")
    pairs = [(order[i], order[i + step]) for i, step in ((40, 30), (100, 15), (200, 60), (300, 8), (380, 25))]
    draws = 3000
    assert all(acc[i] != acc[j] for i, j in pairs)  # five ordered pairs, none tied
    for i, j in pairs:
        power = pair_power(gpqa, gpqa.models[j], gpqa.models[i], sizes=[25, 100])
        for k, exact in zip(power.curve["size"], power.curve["power"]):
            simulated = _simulated(gpqa, j, i, int(k), draws, rng)
            se = np.sqrt(exact * (1 - exact) / draws)
            assert abs(simulated - exact) < 3 * se + 1e-9, (gpqa.models[i], gpqa.models[j], k, exact, simulated)


def test_required_size_is_the_first_reaching_the_level(gpqa):
    a, b = gpqa.models[0], gpqa.models[2]
    power = pair_power(gpqa, a, b, threshold=0.8)
    curve = power.curve.set_index("size")["power"]
    assert len(curve) == gpqa.n_items
    assert curve[power.required_size] >= 0.8 > curve.loc[:power.required_size - 1].max()
    assert power.a_only + power.b_only > 0
    assert power.gap == pytest.approx(100 * (gpqa.accuracy[0] - gpqa.accuracy[2]))
    swapped = pair_power(gpqa, b, a, threshold=0.8)
    assert swapped.required_size == power.required_size and swapped.gap == pytest.approx(-power.gap)


def test_known_counts():
    """Two models on four items, one discordant item each way plus one A-only: a=2, b=1."""
    from mbutils import Benchmark

    bench = Benchmark(name="toy", correct=[[1, 1, 0, 1], [0, 0, 1, 1]], models=["A", "B"],
                      items=["q1", "q2", "q3", "q4"], subtasks=["x"] * 4)
    power = pair_power(bench, "A", "B", sizes=[1, 4])
    assert (power.a_only, power.b_only) == (2, 1)
    # k = 1: the one item must be an A-only item: 2 of 4
    assert power.curve["power"].tolist() == pytest.approx([0.5, 1.0])


def test_refusals(gpqa):
    with pytest.raises(MbutilsError, match="two different models"):
        pair_power(gpqa, gpqa.models[0], gpqa.models[0])
    with pytest.raises(MbutilsError, match="not in the bundle"):
        pair_power(gpqa, "nobody", gpqa.models[0])
    code, _, err = run("plan", "--data", "gpqa")
    assert code == 1 and "--gap" in err and "--pair" in err


def test_plan_pair_on_the_command_line(gpqa):
    a, b = gpqa.models[0], gpqa.models[2]
    code, out, err = run("plan", "--data", "gpqa", "--pair", a, b, "--sizes", "50,100", "--agreement", 0.7)
    assert code == 0, err
    expected = pair_power(gpqa, a, b, threshold=0.7)
    assert f"needs {expected.required_size} items" in out
    assert "| 50 " in out and "| 100 " in out

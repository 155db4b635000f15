"""Planning (mbutils.evaluate.planning and its curves and pair population): predicted curves/MDAD against
the simulation on GPQA, required sizes, the plan table; the exact agreement probability it builds on is
checked in test_planning_probability.py."""

import itertools

import numpy as np
import pytest

from conftest import real_bundle
from helpers import random_benchmark
from mbutils.data.datasets import load_benchmark
from mbutils.base.errors import ProtocolError
from mbutils.methods.experiment import run_experiment
from mbutils.evaluate.metrics import agreement_curve, mdad_table
from mbutils.evaluate.planning import format_plan, plan_table
from mbutils.evaluate.planning_curves import predicted_curve, predicted_mdad, required_size, size_curve, size_table
from mbutils.evaluate.planning_population import pair_population
from mbutils.evaluate.planning_probability import agreement_probability
from mbutils.methods.protocol import Protocol

GPQA_SIZES = [10, 25, 50, 100, 200]


def test_pair_population_counts_pairs_like_loops():
    bench = random_benchmark(n_models=7, subtask_sizes=(9, 5), seed=3)
    proto = Protocol(n_sources=2, n_targets=4, n_runs=3, seed=5)
    full = pair_population(bench, truth="full", protocol=proto)
    want = {}
    for i, j in itertools.combinations(range(7), 2):
        a = int(((bench.correct[i] == 1) & (bench.correct[j] == 0)).sum())
        b = int(((bench.correct[j] == 1) & (bench.correct[i] == 0)).sum())
        want[max(a, b), min(a, b)] = want.get((max(a, b), min(a, b)), 0) + 1
    got = {(int(h), int(l)): int(w) for h, l, w in zip(full.hi, full.lo, full.weight)}
    assert got == want and full.n_items == 14
    seen = pair_population(bench, protocol=proto)
    assert seen.n_pairs == 3 * 21 and seen.n_items == 4 + 2
    runs = pair_population(bench, pairs="runs", protocol=proto)
    assert runs.n_pairs == 3 * 6


@pytest.fixture(scope="module")
def gpqa_validation():
    bench = load_benchmark(real_bundle("gpqa"))
    proto = Protocol(n_runs=20, seed=0)
    results = run_experiment(bench, ["random"], GPQA_SIZES, proto, progress=False)
    population = pair_population(bench, protocol=proto)
    return bench, proto, results, population


def test_predicted_agreement_matches_simulation_on_gpqa(gpqa_validation):
    """20 runs; the simulation's noise sets the tolerances (full 50-run numbers in the docs):
    pair-weighted mean |sim - predicted| per size <= 0.04 (measured <= 0.031), bins holding
    >= 500 simulated pairs <= 0.10 (measured <= 0.069), for gaps up to 20 points."""
    bench, proto, results, population = gpqa_validation
    sim = agreement_curve(results)
    pred = predicted_curve(population, GPQA_SIZES)
    both = sim.merge(pred, on=["size", "gap"], suffixes=("_sim", "_pred"))
    both = both[both["gap"] <= 20]
    assert len(both) == len(sim[sim["gap"] <= 20])  # every simulated bin has a prediction
    diff = (both["agreement_sim"] - both["agreement_pred"]).abs()
    per_size = (diff * both["n_pairs_sim"]).groupby(both["size"]).sum() / both.groupby("size")["n_pairs_sim"].sum()
    assert per_size.max() <= 0.04
    assert diff[both["n_pairs_sim"] >= 500].max() <= 0.10
    # the expected mix of all pairs and the runs' actual target pairs predict the same curve
    runs = predicted_curve(pair_population(bench, pairs="runs", protocol=proto), GPQA_SIZES)
    same = pred.merge(runs, on=["size", "gap"], suffixes=("_all", "_runs"))
    gap = (same["agreement_all"] - same["agreement_runs"]).abs()
    assert np.average(gap, weights=same["n_pairs_runs"]) <= 0.01


def test_predicted_mdad_matches_simulation_on_gpqa(gpqa_validation):
    """MDAD at 0.8: within 1 point for k >= 50, within 4 points at k = 10, 25 (sparse large-gap
    bins make the simulated first crossing noisy; measured 3.5 and 2.5 on 20 runs)."""
    _, _, results, population = gpqa_validation
    sim = mdad_table(results, ci="none").set_index("size")["mdad"]
    pred = predicted_mdad(population, GPQA_SIZES).set_index("size")["mdad"]
    diff = (sim - pred).abs()
    assert diff[[50, 100, 200]].max() <= 1.0
    assert diff[[10, 25]].max() <= 4.0
    assert pred.is_monotonic_decreasing


def test_required_size_is_the_smallest_reaching_size(gpqa_validation):
    _, _, _, population = gpqa_validation
    for gap in (2, 5, 10):
        k = required_size(population, gap, 0.8)
        curve = size_curve(population, gap, sizes=[k - 1, k]).set_index("size")["agreement"]
        assert curve[k] >= 0.8 > curve[k - 1]
    table = size_table(population, [2, 5, 10], [0.7, 0.8])
    assert table.loc[table["threshold"] == 0.8, "size"].tolist() == [
        required_size(population, g, 0.8) for g in (2, 5, 10)]
    assert (table.groupby("threshold")["size"].diff().dropna() < 0).all()  # wider gaps need fewer
    # bin 0 holds ties, which disagree more often as k grows: agreement 1 is never reached
    assert required_size(population, 0.2, 1.0) is None


def test_size_table_scans_only_until_every_level_is_reached(monkeypatch):
    """The blocked scan gives the sizes of a scan of the whole curve (first crossing, agreement not
    monotone), computes about twice the largest size found when every level is reached, and all N
    sizes when one is not."""
    import mbutils.evaluate.planning_curves as planning_curves

    bench = random_benchmark(n_models=40, subtask_sizes=(300, 200), seed=4)
    population = pair_population(bench, truth="full")
    gaps, levels = [0.0, 1.0, 4.0, 10.0, 25.0], [0.6, 0.8, 0.95, 1.0]
    sized = []
    real_matrix = planning_curves.probability_matrix
    monkeypatch.setattr(planning_curves, "probability_matrix", lambda hi, lo, n, ks, method: sized.append(len(ks)) or
                        real_matrix(hi, lo, n, ks, method))
    table = size_table(population, gaps, levels)
    for gap in gaps:
        if (table.loc[table["gap"] == gap, "n_pairs"] == 0).all():
            continue
        curve = size_curve(population, gap)["agreement"].to_numpy()
        for level in levels:
            reached = np.flatnonzero(curve >= level)
            expected = float(reached[0] + 1) if len(reached) else np.nan
            got = table.loc[(table["gap"] == gap) & (table["threshold"] == level), "size"].iloc[0]
            assert got == expected or (np.isnan(got) and np.isnan(expected)), (gap, level, got, expected)
    sized.clear()
    early = size_table(population, [10.0], [0.6, 0.8])
    assert sum(sized) < 2 * early["size"].max() + 64 < population.n_items
    sized.clear()
    assert np.isnan(size_table(population, [0.0], [1.0])["size"].iloc[0])  # ties: never certain
    assert sum(sized) == population.n_items


def test_required_size_without_real_data():
    bench = random_benchmark(n_models=30, subtask_sizes=(200,), seed=1)
    k = required_size(bench, 10, 0.8, truth="full")
    probe = size_curve(bench, 10, truth="full").set_index("size")["agreement"]
    assert probe[k] >= 0.8 and (probe[probe.index < k] < 0.8).all()


def test_plan_table_compares_cached_selectors():
    bench = random_benchmark(n_models=40, subtask_sizes=(60, 40), seed=2)
    proto = Protocol(n_sources=10, n_targets=20, n_runs=6, seed=1)
    results = run_experiment(bench, ["random", "subtask_equal"], [5, 20, 40], proto, progress=False)
    plan = plan_table(bench, 10, 0.8, results, protocol=proto)
    assert plan.random_size == required_size(bench, 10, 0.8, protocol=proto)
    assert set(plan.table["selector"]) == {"random", "subtask_equal"}
    size = plan.table["size"].iloc[0]
    assert size == min([s for s in (5, 20, 40) if s >= plan.random_size], default=40)
    mdads = mdad_table(results, threshold=0.8).set_index(["selector", "size"])["mdad"]
    row = plan.table.set_index("selector").loc["subtask_equal"]
    assert row["mdad"] == mdads["subtask_equal", size] or np.isnan(row["mdad"])
    assert row["random_mdad"] == mdads["random", size] or np.isnan(row["random_mdad"])
    text = format_plan(plan)
    assert f"needs {plan.random_size} of 50 items" in text and "subtask_equal" in text
    alone = plan_table(bench, 10, 0.8, protocol=proto)
    assert alone.table.empty and alone.random_size == plan.random_size


def test_bad_requests_are_refused():
    with pytest.raises(ProtocolError, match="cannot exceed n_items"):
        agreement_probability(6, 5, 10, 3)
    with pytest.raises(ProtocolError, match="k must lie between"):
        agreement_probability(3, 1, 10, 11)
    with pytest.raises(ProtocolError, match="whole numbers"):
        agreement_probability(2.5, 1, 10, 3)
    with pytest.raises(ProtocolError, match="method must be"):
        agreement_probability(3, 1, 10, 3, method="poisson")
    bench = random_benchmark()
    with pytest.raises(ProtocolError, match="sizes must lie between 1 and 30"):
        predicted_mdad(bench, [10, 31], protocol=Protocol(n_runs=2))
    with pytest.raises(ProtocolError, match="no pair of models differs by 90-90.5"):
        required_size(bench, 90, protocol=Protocol(n_runs=2))
    with pytest.raises(ProtocolError, match="no target set named 'nope'"):
        pair_population(bench, protocol=Protocol(target_set="nope"))

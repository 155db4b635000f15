"""Speed-ups that change what a selector computes must not change the paper's results.

Two speed-ups change what a selector computes: Anchor Points' warm start (each size of a
run starts FasterPAM from the previous size's medoids) and the adaptive tests' nesting
(a run's sizes read one test, to the largest size, where each size used to take its own
test). Their MDAD tables must stay inside the run-to-run spread of what they replaced: the 95% interval of the cold start's MDAD
when runs are resampled (``metrics.mdad_table(ci="runs")``), widened by one 0.5-point gap
bin for the discreteness of the binned estimate. Checked on real GPQA (the paper's
protocol: 50 runs, 300 sources, 50 targets) and on a stand-in with many more items, where
FasterPAM has room to land in different local optima. (``benchmarks/compare_mdad.py``
runs the same check for every selector against a git revision.)
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from conftest import real_bundle
from mbutils.evaluate import metrics
from mbutils.data.bundle import load_bundle
from mbutils.methods.experiment import run_experiment
from mbutils.methods.protocol import Protocol
from mbutils.methods.selectors import selector_label
from mbutils.methods.selectors.adaptive import AdaptiveFisher
from mbutils.methods.selectors.anchor import AnchorPoints
from helpers import random_benchmark



class IndependentSizes(AdaptiveFisher):
    """The adaptive tests as they were: every size of a run draws its own test."""

    name = "test_adaptive_independent_sizes"

    def select(self, prepared, k, rng):
        return dataclasses.replace(super().select(prepared, k, rng), root=int(rng.integers(2**63 - 1)))


@pytest.fixture
def cold_anchor():
    return AnchorPoints(warm_start=False)


@pytest.fixture
def independent_adaptive():
    return IndependentSizes()


def _within_spread(bench, sizes, protocol, new, old):
    """Run selectors ``new`` and ``old``; every MDAD of ``new`` lies in ``old``'s spread."""
    res = run_experiment(bench, [new, old], sizes, protocol, backend="sequential",
                         use_cache=False, progress=False)
    new, old = (s if isinstance(s, str) else selector_label(s) for s in (new, old))
    now = metrics.mdad_table(res[res["selector"] == new], ci="none").set_index("size")["mdad"]
    spread = metrics.mdad_table(res[res["selector"] == old], ci="runs", n_boot=500).set_index("size")
    for k in sizes:
        if np.isnan(spread.loc[k, "mdad"]):
            assert np.isnan(now.loc[k]), f"k={k}: {new} reaches the threshold, {old} does not"
            continue
        low, high = spread.loc[k, "ci_low"] - 0.5, spread.loc[k, "ci_high"] + 0.5
        assert low <= now.loc[k] <= high, f"k={k}: {new} {now.loc[k]} outside {old}'s spread [{low}, {high}]"
    return res


def _warm_within_cold_spread(bench, sizes, protocol, cold):
    return _within_spread(bench, sizes, protocol, "anchor_points", cold)


def test_warm_start_keeps_real_gpqa_mdad_within_the_run_to_run_spread(cold_anchor):
    bench = load_bundle(real_bundle("gpqa"))
    _warm_within_cold_spread(bench, [10, 25, 50, 100, 200], Protocol(n_sources=300, n_targets=50, n_runs=50),
                             cold_anchor)


def test_warm_start_keeps_a_large_stand_in_within_the_run_to_run_spread(cold_anchor):
    # 1,600 items (800 seen), confidences, 120 models: the medoids do move with the start.
    bench = random_benchmark(n_models=120, subtask_sizes=(500, 400, 400, 300), seed=7, confidence=True, name="stand-in")
    res = _warm_within_cold_spread(bench, [10, 25, 50, 100, 200], Protocol(n_sources=80, n_targets=40, n_runs=12),
                                   cold_anchor)
    moved = (res[res["selector"] == "anchor_points"]["estimate"].to_numpy()
             != res[res["selector"] == selector_label(cold_anchor)]["estimate"].to_numpy())
    assert moved.mean() > 0.2, "the stand-in should exercise different medoids"


def test_warm_start_clusters_as_well_as_the_cold_start_on_the_stand_in():
    # The MDAD is a coarse yardstick (on these data even random medoids with cluster weights
    # stay inside the spread), so the k-medoids objective itself is compared too: summed
    # dissimilarity of every seen item to its nearest medoid, run by run.
    from mbutils.methods.protocol import draw_run
    from mbutils.methods.selectors.base import SourceData

    bench = random_benchmark(n_models=120, subtask_sizes=(500, 400, 400, 300), seed=7, confidence=True, name="stand-in")
    protocol = Protocol(n_sources=80, n_targets=40, n_runs=4)
    ratios = []
    for r in range(protocol.n_runs):
        run = draw_run(bench, protocol, r)
        source = SourceData(bench.correct[run.sources][:, run.seen], bench.subtask_codes[run.seen],
                            bench.confidence[run.sources][:, run.seen])
        loss = {}
        for warm in (True, False):
            selector = AnchorPoints(warm_start=warm)
            prepared = selector.prepare(source, np.random.default_rng(r))
            for k in (10, 25, 50, 100, 200):
                selector.select(prepared, k, np.random.default_rng([r, k]))
            loss[warm] = [prepared.dissimilarity[prepared.medoids_by_size[k][0]].min(axis=0).sum() for k in (25, 50, 100, 200)]
        ratios.append(np.array(loss[True]) / np.array(loss[False]))
    assert np.mean(ratios) < 1.005, f"warm start's objective is {np.mean(ratios):.4f}x the cold start's"


def test_nested_adaptive_tests_keep_real_gpqa_mdad_within_the_run_to_run_spread(independent_adaptive):
    bench = load_bundle(real_bundle("gpqa"))
    res = _within_spread(bench, [10, 25, 50, 100, 200], Protocol(n_sources=300, n_targets=50, n_runs=50),
                         "adaptive_fisher", independent_adaptive)
    nested, independent = (res[res["selector"] == s]["estimate"].to_numpy() for s in ("adaptive_fisher", selector_label(independent_adaptive)))
    assert (nested != independent).mean() > 0.5, "the two should take different tests"


def test_nested_adaptive_tests_keep_a_large_stand_in_within_the_run_to_run_spread(independent_adaptive):
    bench = random_benchmark(n_models=120, subtask_sizes=(500, 400, 400, 300), seed=7, confidence=True, name="stand-in")
    _within_spread(bench, [10, 25, 50, 100, 200], Protocol(n_sources=80, n_targets=40, n_runs=12),
                   "adaptive_fisher", independent_adaptive)

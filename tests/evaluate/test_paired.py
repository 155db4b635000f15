"""The paired comparison of two selectors (mbutils.evaluate.paired.compare_selectors): it sees a known
difference that the unpaired noise rule misses, says "differs" for a selector against itself at most
at its nominal rate, and is narrower than the unpaired rule's implied interval on real GPQA."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mbutils
from mbutils.evaluate import noise
from mbutils.evaluate.paired import BETTER, WORSE, compare_selectors

N_ITEMS = 300


def simulated(seed: int, sd_a: float, sd_b: float, *, runs: int = 10, targets: int = 40, shared: float = 4.0):
    """One experiment's results for selectors A and B on the same runs and targets (accuracies 33-67%): each
    estimate is the truth plus a noise both selectors share (the run's draw of items, in points) plus its own."""
    rng = np.random.default_rng(seed)
    rows = []
    for run in range(runs):
        correct = rng.integers(100, 200, size=targets)
        common = rng.normal(0, shared, size=targets)
        for selector, sd in (("A", sd_a), ("B", sd_b)):
            estimate = correct / N_ITEMS + (common + rng.normal(0, sd, size=targets)) / 100
            rows += [{"run": run, "selector": selector, "size": 25, "model": f"m{t}", "estimate": estimate[t],
                      "seen_correct": int(correct[t]), "n_seen": N_ITEMS, "unseen_correct": int(correct[t]),
                      "n_unseen": N_ITEMS} for t in range(targets)]
    return pd.DataFrame(rows)


def unpaired(results: pd.DataFrame, a: str = "A", b: str = "B", **kw) -> pd.Series:
    table = mbutils.mdad_table(results, **kw)
    return noise.versus(table, a, b)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_known_difference_is_seen_paired_and_missed_unpaired(seed):
    """A's own noise is 0 points, B's 5 on top of a shared 4: the paired bootstrap finds A better, the
    unpaired rule on the same (monotone) MDADs calls it within noise."""
    results = simulated(seed, sd_a=0.0, sd_b=5.0, runs=20)
    paired = compare_selectors(results, "A", "B", n_boot=300)
    assert paired.loc[0, "verdict"] == BETTER, paired
    assert unpaired(results, method="monotone").iloc[0] == noise.WITHIN


def test_a_selector_against_itself_differs_at_most_at_the_nominal_rate():
    """200 experiments in which A and B are the same method with their own noise: the share of
    'better' or 'worse' verdicts is at most 5% plus three Monte Carlo standard errors."""
    verdicts = [compare_selectors(simulated(seed, 2.0, 2.0), "A", "B", n_boot=200, seed=seed).loc[0, "verdict"]
                for seed in range(200)]
    rate = np.mean([v in (BETTER, WORSE) for v in verdicts])
    assert rate <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 200), rate


@pytest.fixture(scope="module")
def gpqa_results():
    bench = mbutils.load_benchmark("gpqa")
    protocol = mbutils.Protocol(n_sources=300, n_targets=50, n_runs=10, seed=0)
    return mbutils.run_experiment(bench, ["random", "anchor_points"], [10, 25, 50, 100, 200], protocol,
                                  progress=False)


def test_on_real_gpqa_the_paired_interval_is_narrower_at_most_sizes(gpqa_results):
    paired = compare_selectors(gpqa_results, "anchor_points", "random")
    low, high = noise.wide_intervals(mbutils.mdad_table(gpqa_results))
    unpaired_width = (high["anchor_points"] - low["random"]) - (low["anchor_points"] - high["random"])
    narrower = paired.set_index("size").eval("high - low") < unpaired_width.loc[paired["size"]].to_numpy()
    assert narrower.mean() > 0.5, pd.DataFrame({"paired": paired.set_index("size").eval("high - low"),
                                                "unpaired": unpaired_width})


def test_the_difference_is_the_two_mdads_of_the_table(gpqa_results):
    """An identity: the paired table's point MDADs are mdad_table's."""
    paired = compare_selectors(gpqa_results, "anchor_points", "random", n_boot=50).set_index("size")
    table = mbutils.mdad_table(gpqa_results, ci="none", method="monotone").set_index(["selector", "size"])["mdad"]
    assert np.allclose(paired["mdad_a"], table["anchor_points"].loc[paired.index])
    assert np.allclose(paired["difference"], paired["mdad_a"] - paired["mdad_b"])


def test_selectors_of_different_experiments_are_refused(gpqa_results):
    other = gpqa_results.copy()
    other.loc[other["selector"] == "random", "run"] += 100
    with pytest.raises(mbutils.MbutilsError):
        compare_selectors(other, "anchor_points", "random", n_boot=50)


def _pair_by_pair(agree_a, agree_b, counted, bins, runs_w, poisson, unit_first):
    """The draw's per-bin counts summed pair by pair (a one-hot matrix of counted pairs x bins, as
    the comparison first computed them): the reference the grouped sums must equal exactly."""
    n_runs, n_pairs = bins.shape
    weights = (np.repeat(runs_w, n_pairs, axis=1) * poisson).astype(float)
    if unit_first:
        weights[0] = 1.0
    onehot = np.zeros((n_runs * n_pairs, int(bins.max()) + 1))
    kept = np.flatnonzero(counted.ravel())
    onehot[kept, bins.ravel()[kept]] = 1.0
    return tuple(weights * s.ravel() @ onehot for s in (np.ones_like(agree_a, dtype=float), agree_a, agree_b))


@pytest.mark.parametrize("seed", range(6))
def test_grouped_bootstrap_counts_equal_the_pair_by_pair_sums_exactly(seed):
    """Each draw's counted and agreeing pairs per bin come from blocks of pairs that share bin, run and
    both selectors' verdicts; every weight is an integer, so the block sums must equal the sums over
    single pairs bit for bit (ties, uncounted pairs, empty bins and a first row of unit weights included)."""
    from mbutils.evaluate.paired import _BinCounts

    rng = np.random.default_rng(seed)
    n_runs, n_pairs = rng.integers(1, 6), rng.integers(1, 40)
    bins = rng.integers(0, 12, size=(n_runs, n_pairs)) * rng.integers(1, 3)  # some bins stay empty
    agree_a, agree_b = rng.random((2, n_runs, n_pairs)) < 0.6
    counted = rng.random((n_runs, n_pairs)) < (1.0 if seed % 3 == 0 else 0.7)
    if seed == 5:
        counted[:] = False  # nothing counted: every count is 0
    runs_w = rng.multinomial(n_runs, np.full(n_runs, 1.0 / n_runs), size=7)
    poisson = rng.poisson(1.0, (7, n_runs * n_pairs))
    grouped = _BinCounts(agree_a, agree_b, counted, bins)
    for unit_first in (False, True):
        got = grouped.counts(runs_w, poisson, unit_first)
        want = _pair_by_pair(agree_a, agree_b, counted, bins, runs_w, poisson, unit_first)
        for g, w in zip(got, want):
            assert g.dtype == np.float64 and g.shape == w.shape
            np.testing.assert_array_equal(g, w)

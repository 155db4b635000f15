"""The paired comparison of two selectors (mbutils.evaluate.paired.compare_selectors): a bootstrap over whole
runs only (a draw's counts are those of the runs it drew, repeated), that sees a known difference, says
"differs" for a selector against itself at most at its nominal rate, and cancels what two selectors share."""

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
def test_a_known_difference_is_seen_paired(seed):
    """A's own noise is 0 points, B's 5 on top of a shared 4: the paired bootstrap finds A better."""
    results = simulated(seed, sd_a=0.0, sd_b=5.0, runs=20)
    paired = compare_selectors(results, "A", "B", n_boot=300)
    assert paired.loc[0, "verdict"] == BETTER, paired


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


def test_a_selector_against_a_copy_of_itself_differs_by_zero_in_every_draw(gpqa_results):
    """Pairing: both selectors get the same draw of runs, so a copy of a selector differs from it by exactly 0
    in every draw (independent draws for the two would give an interval around 0, not [0, 0])."""
    copy = gpqa_results[gpqa_results["selector"] == "random"].assign(selector="random copy")
    paired = compare_selectors(pd.concat([gpqa_results, copy]), "random copy", "random", n_boot=200)
    reached = np.isfinite(paired["mdad_a"])
    assert (paired.loc[reached, ["difference", "low", "high", "se"]] == 0).all().all(), paired


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


@pytest.mark.parametrize("seed", range(4))
def test_a_draw_counts_the_pairs_of_the_runs_it_drew_and_nothing_else(seed, gpqa_results):
    """A bootstrap draw is whole runs with replacement: its per-bin counts equal the agreement curve of a
    results table in which each run appears as often as the draw took it (no weight on pairs within a run)."""
    from mbutils.evaluate.paired import _pairs, run_counts

    rng = np.random.default_rng(seed)
    res = gpqa_results[gpqa_results["size"] == 25]
    pa, pb = _pairs(res, "anchor_points", "seen")[25], _pairs(res, "random", "seen")[25]
    total, agree_a, _ = run_counts(pa, pb, "paper", 0.5)
    runs = np.sort(res["run"].unique())
    w = rng.multinomial(len(runs), np.full(len(runs), 1 / len(runs)))
    copies = [res[res["run"] == r].assign(run=1000 * r + c) for r, n in zip(runs, w) for c in range(n)]
    curve = mbutils.agreement_curve(pd.concat(copies))
    curve = curve[curve["selector"] == "anchor_points"]
    got_total, got_agree = w @ total, w @ agree_a
    bins = (curve["gap"] / 0.5).round().astype(int).to_numpy()
    assert np.array_equal(got_total[bins], curve["n_pairs"].to_numpy())
    assert np.allclose(got_agree[bins], curve["agreement"].to_numpy() * curve["n_pairs"].to_numpy())
    assert got_total.sum() == curve["n_pairs"].sum()

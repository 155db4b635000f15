"""Accuracy scoring against ability scoring of the same adaptive tests (mbutils.book.findings.ability_scoring):
known values on hand-built tables, invariance to an increasing map, the undefined error, the claim."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from mbutils.evaluate.noise import MIN_PAIRS

from mbutils.base.errors import ResultsError
from mbutils.book.findings import claims
from mbutils.book.findings.ability_scoring import (ABILITY, ACCURACY, UNDEFINED, comparison_rows, run_measures,
                                             scoring_claim, scoring_comparison)
from mbutils.evaluate.metrics import summary_table

COUNTS = np.array([4, 6, 8, 10, 12, 14])  # seen-half correct counts of six targets on 20 items: gaps of 10 points
N_SEEN = 20


def _table(scores: dict, runs: int = 4, size: int = 5) -> pd.DataFrame:
    """One experiment's rows: every run has six targets (its own models, as random targets mostly are) with the
    counts of COUNTS; ``scores``: selector -> (runs x 6)."""
    frames = []
    for selector, values in scores.items():
        for run in range(runs):
            frames.append(pd.DataFrame({
                "run": run, "selector": selector, "size": size, "model": [f"r{run}m{i}" for i in range(6)],
                "estimate": values[run], "seen_correct": COUNTS, "n_seen": N_SEEN,
                "unseen_correct": COUNTS, "n_unseen": N_SEEN}))
    return pd.concat(frames, ignore_index=True)


def _misordered(runs: int = 4) -> np.ndarray:
    """Accuracy estimates near the truth that swap the first two targets in every run."""
    est = np.tile(COUNTS / N_SEEN, (runs, 1)) + 0.01
    est[:, [0, 1]] = est[:, [1, 0]]
    return est


def test_an_ability_that_orders_as_the_truth_has_tau_and_agreement_1_against_known_accuracy_values():
    ability = np.tile(np.linspace(0.1, 0.9, 6), (4, 1))  # any increasing scores: the truth's order
    table = scoring_comparison(_table({ACCURACY: _misordered(), ABILITY: ability}), n_boot=100)
    at = table.set_index("measure")
    # one pair of 15 misordered: C - D = 14 - 1 = 13, no ties: tau = 13 / 15; agreement 14 / 15
    assert at.loc["tau", "ability"] == 1.0 and at.loc["agreement", "ability"] == 1.0
    assert at.loc["tau", "accuracy"] == pytest.approx(13 / 15)
    assert at.loc["agreement", "accuracy"] == pytest.approx(14 / 15)
    assert at.loc["tau", "difference"] == pytest.approx(2 / 15)
    # every run is alike, so every bootstrap draw is too: the paired interval is the point
    assert at.loc["tau", "low"] == pytest.approx(2 / 15) and at.loc["tau", "high"] == pytest.approx(2 / 15)
    assert at.loc["tau", "verdict"] == "better" and at.loc["agreement", "verdict"] == "better"
    # the ability orders every pair, the closest ones 10 points apart; accuracy misorders one of the
    # 5 pairs at 10 points (80%: the threshold), so both MDADs are 10 points
    assert at.loc["mdad", "ability"] == 10.0 and at.loc["mdad", "accuracy"] == 10.0
    # the error: 1 point on the four untouched targets, 11 and 9 on the two swapped ones
    assert at.loc["error", "accuracy"] == pytest.approx((4 * 1 + 11 + 9) / 6)
    assert np.isnan(at.loc["error", "ability"]) and at.loc["error", "verdict"] == UNDEFINED


def test_the_tau_is_summary_table_s():
    rng = np.random.default_rng(0)
    scores = {ACCURACY: rng.random((4, 6)), ABILITY: rng.random((4, 6))}
    res = _table(scores)
    table = scoring_comparison(res, n_boot=100).set_index("measure")
    summary = summary_table(res).set_index("selector")
    assert table.loc["tau", "accuracy"] == pytest.approx(summary.loc[ACCURACY, "tau"], abs=1e-12)
    assert table.loc["tau", "ability"] == pytest.approx(summary.loc[ABILITY, "tau"], abs=1e-12)


def test_an_increasing_map_of_the_accuracy_changes_no_measure_of_order():
    rng = np.random.default_rng(1)
    accuracy = COUNTS / N_SEEN + 0.05 * rng.normal(size=(6, 6))  # close to the truth: the MDAD is reached
    ability = 1 / (1 + np.exp(-3 * (accuracy - 0.4)))  # increasing in the accuracy estimate
    table = scoring_comparison(_table({ACCURACY: accuracy, ABILITY: ability}, runs=6), n_boot=200)
    order = table[table["measure"].isin(["tau", "agreement", "mdad"])]
    assert (order["difference"] == 0).all() and (order["low"] == 0).all() and (order["high"] == 0).all()
    assert (order["verdict"] == "within noise").all()
    assert (order["accuracy"] == order["ability"]).all() and np.isfinite(order["accuracy"]).all()


def test_pairs_tied_on_the_truth_are_not_counted_and_an_estimated_tie_disagrees():
    res = _table({ACCURACY: np.tile([0.1, 0.2, 0.2, 0.4, 0.5, 0.6], (4, 1)),
                  ABILITY: np.tile(np.arange(6.0) / 10, (4, 1))}, runs=4)
    res.loc[res["model"].str.endswith("m1"), "seen_correct"] = 4  # m0 and m1 tied on the truth: 14 pairs counted
    m = run_measures(res, ACCURACY)[5]
    assert m["counted"].tolist() == [14.0] * 4
    assert m["agree"].tolist() == [13.0] * 4  # the accuracy ties m1 and m2, 10 points apart: disagrees


def test_scorings_of_different_runs_are_refused():
    res = _table({ACCURACY: _misordered(), ABILITY: _misordered()})
    res.loc[res["selector"] == ABILITY, "run"] += 10
    with pytest.raises(ResultsError):
        scoring_comparison(res, n_boot=100)
    with pytest.raises(ResultsError, match="not in the results"):
        scoring_comparison(_table({ACCURACY: _misordered()}), n_boot=100)


def test_the_claim_counts_verdicts_says_pointwise_and_recomputes():
    ability = np.tile(np.linspace(0.1, 0.9, 6), (4, 1))
    table = scoring_comparison(_table({ACCURACY: _misordered(), ABILITY: ability}), n_boot=100)
    rows = comparison_rows({"Toy": table})
    assert {r["measure"] for r in rows} == {"tau", "agreement", "mdad"}  # the error is no comparison
    json.dumps(rows)  # glued as JSON
    claim = scoring_claim(rows)
    assert "over 1 benchmark × size cell," in claim.text
    assert "by Kendall tau, ability scoring is better in 1, worse in 0, within noise in 0 of 1" in claim.text
    assert "pointwise" not in claim.text and "Holm" in claim.text
    assert "from 4 runs, fewer than 20" in claim.text
    assert claims.recompute(claim.payload()).text == claim.text
    # 4 runs of 15 distinct pairs each: 60 target pairs, fewer than MIN_PAIRS: the MDAD comparison has no verdict
    assert "by MDAD, ability scoring is better in 0, worse in 0, within noise in 0, with too few target pairs " \
           f"to tell in 1 (fewer than {MIN_PAIRS}) of 1" in claim.text
    # five runs (75 pairs), every draw alike: the difference is 0 in every draw, within the 2-point margin
    alike5 = np.tile(np.linspace(0.1, 0.9, 6), (5, 1))
    alike = scoring_comparison(_table({ACCURACY: alike5, ABILITY: alike5}, runs=5), n_boot=100)
    assert "(1 of the 1 within noise also within 2 points)" in scoring_claim(comparison_rows({"Toy": alike})).text
    assert scoring_claim([]).text == "no adaptive tests were scored both ways"


def test_on_an_experiment_with_one_dimension_both_scorings_give_one_ranking():
    """A unidimensional 2PL pool with positive discriminations: the ability orders the targets as the
    predicted accuracy does, so every paired difference of the measures of order is exactly 0."""
    import mbutils as mb
    from mbutils.methods.irt_fit import IRTModel
    from mbutils.methods.selectors.adaptive import AdaptiveAbility, AdaptiveFisher

    rng = np.random.default_rng(2)
    theta = rng.normal(size=(80, 1))
    a, b = rng.uniform(0.8, 2.0, 100), rng.normal(size=100)
    correct = (rng.random((80, 100)) < 1 / (1 + np.exp(b - theta * a))).astype(int)
    bench = mb.Benchmark(name="toy-2pl", models=np.array([f"m{i:02d}" for i in range(80)]),
                         items=np.array([f"i{j}" for j in range(100)]), subtasks=np.array(["all"] * 100),
                         correct=correct)
    protocol = mb.Protocol(n_sources=60, n_targets=20, n_runs=3)
    one = IRTModel(dims=1)
    res = mb.run_experiment(bench, [AdaptiveFisher(irt=one), AdaptiveAbility(irt=one)], [10, 20], protocol,
                            progress=False, use_cache=False)
    labels = list(dict.fromkeys(res["selector"]))
    table = scoring_comparison(res, *labels, n_boot=100)
    order = table[table["measure"] != "error"]
    assert len(order) == 6 and (order["difference"] == 0).all(), order
    assert (order.loc[order["measure"] == "tau", "accuracy"] > 0.3).all()  # not a trivially tied ranking

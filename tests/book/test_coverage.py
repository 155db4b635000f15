"""The held-out coverage check of the chapter on using a micro-benchmark: folds, scores, summary, words."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import hypergeom

from mbutils.base.errors import ProtocolError
from mbutils.book.findings.coverage import (coverage_sentence, coverage_summary, exact_random_coverage, held_out_folds,
                                      held_out_scores)
from mbutils.micro.intervals import hypergeometric_interval

from helpers import random_benchmark


def test_folds_are_disjoint_and_leave_three_models_to_learn_from():
    bench = random_benchmark(n_models=23, seed=1)
    folds = held_out_folds(bench, 4, 5, seed=3)
    every = np.concatenate(folds)
    assert len(every) == len(set(every.tolist())) == 20 and every.max() < 23
    assert [f.tolist() for f in folds] == [f.tolist() for f in held_out_folds(bench, 4, 5, seed=3)]
    with pytest.raises(ProtocolError, match="too few to hold out"):
        held_out_folds(bench, 5, 5)  # 25 held out of 23


def test_held_out_scores_are_the_command_lines_scores_of_models_left_out():
    bench = random_benchmark(n_models=30, seed=2)
    cells = held_out_scores(bench, ["random"], [20], folds=2, fold_size=4, runs=2, level=0.9, seed=0)
    assert len(cells) == 8 and set(cells["fold"]) == {0, 1}
    truth = 100 * bench.accuracy[bench.model_index(cells["model"].tolist())]
    assert np.allclose(cells["truth"], truth)
    assert (cells["covered"] == ((cells["low"] <= truth + 1e-9) & (truth - 1e-9 <= cells["high"]))).all()
    # the random micro-benchmark's interval is the exact hypergeometric one of the estimate's hits
    hits = np.rint(cells["estimate"].to_numpy() * 20 / 100).astype(int)
    bounds = 100 * hypergeometric_interval(hits, 20, bench.n_items, 0.9)
    assert np.allclose(cells[["low", "high"]].to_numpy(), bounds)


def test_exact_random_coverage_is_the_hypergeometric_sum():
    bench = random_benchmark(n_models=6, seed=3)
    n, k = bench.n_items, 12
    by_hand = []
    for total in bench.correct.sum(1).astype(int):
        lohi = hypergeometric_interval(np.arange(k + 1), k, n, 0.8)
        inside = (lohi[:, 0] <= total / n + 1e-12) & (total / n - 1e-12 <= lohi[:, 1])
        by_hand.append(sum(hypergeom.pmf(x, n, total, k) for x in np.flatnonzero(inside)))
    assert np.isclose(exact_random_coverage(bench, range(6), k, 0.8), np.mean(by_hand))
    assert exact_random_coverage(bench, range(6), k, 0.8) >= 0.8 - 1e-12  # the exact interval is conservative


def test_summary_and_sentence_say_what_the_cells_say():
    cells = pd.DataFrame({"selector": ["random"] * 20 + ["anchor_points"] * 20, "size": 50, "fold": 0,
                          "model": [f"m{i}" for i in range(40)], "estimate": 50.0, "low": 45.0, "high": 55.0,
                          "truth": [50.0] * 18 + [60.0] * 2 + [50.0] * 8 + [60.0] * 12,
                          "covered": [True] * 18 + [False] * 2 + [True] * 8 + [False] * 12})
    summary = coverage_summary(cells)
    assert summary["coverage"].tolist() == [90.0, 40.0] and summary["models"].tolist() == [20, 20]
    assert np.allclose(summary["mean width"], 10.0) and np.allclose(summary["rmse"], [np.sqrt(10.0), np.sqrt(60.0)])
    text = coverage_sentence(summary, 0.9)
    assert "Random at k = 50: 90% of 20 models (consistent with the nominal 90%)" in text
    assert "40% of 20 models (below the nominal 90%)" in text
    # all covered: the exact binomial interval still reaches 90% for 20 models, so no "above"
    assert "consistent with" in coverage_sentence(summary.assign(coverage=100.0), 0.9)


def test_held_out_scores_hand_their_calibration_folds_to_every_build(monkeypatch):
    import mbutils.book.findings.coverage as coverage

    seen, build = [], coverage.build_micro
    monkeypatch.setattr(coverage, "build_micro", lambda *a, **kw: seen.append(kw["folds"]) or build(*a, **kw))
    bench = random_benchmark(n_models=30, seed=2)
    cells = held_out_scores(bench, ["random", "anchor_points_binary"], [20], folds=2, fold_size=4, runs=1,
                            calibration_folds=3)
    assert seen == [3, 3, 3, 3] and len(cells) == 16
    built = build(bench, "anchor_points_binary", 20, exclude=list(bench.models[:4]), runs=1, folds=3)
    assert sorted(built.calibration["fold"].unique()) == [0, 1, 2] and len(built.calibration) == 26

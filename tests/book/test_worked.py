"""The guidance worked example's line on methods with source models: why none supports the gap."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from mbutils.book.worked import _with_sources
from mbutils.evaluate.noise import MIN_PAIRS

#: Cells of the items-needed table where no method's interval supports the gap at any size run.
NONE_SUPPORTED = pd.DataFrame({"selector": ["random", "anchor_points"], "size": [None, None],
                               "mdad": [float("nan")] * 2, "ci_low": [float("nan")] * 2, "ci_high": [float("nan")] * 2})


def _setting(runs: int, targets: int):
    return SimpleNamespace(protocol=SimpleNamespace(n_runs=runs, n_targets=targets))


def test_a_thin_pool_is_named_as_the_reason_not_the_sizes_run():
    (line,) = _with_sources(_setting(3, 4), NONE_SUPPORTED, 2.0, 0.8, 100)  # 3 x 6 = 18 pooled pairs
    assert "too few pairs to tell: 18 distinct target pairs over 3 runs" in line and f"fewer than the {MIN_PAIRS}" in line
    assert "run larger sizes" not in line


def test_with_enough_pairs_the_advice_is_to_run_larger_sizes():
    (line,) = _with_sources(_setting(10, 50), NONE_SUPPORTED, 2.0, 0.8, 100)
    assert "run larger sizes" in line and "too few pairs" not in line and "(up to 100)" in line


def test_random_samplings_exact_answer_is_offered_only_when_the_planner_gave_one():
    """On a bundle where the planner cannot answer (no pair that close), the line must not send the
    reader to an answer the note just said does not exist."""
    for runs, targets in ((3, 4), (10, 50)):
        (given,) = _with_sources(_setting(runs, targets), NONE_SUPPORTED, 2.0, 0.8, 100)
        (absent,) = _with_sources(_setting(runs, targets), NONE_SUPPORTED, 2.0, 0.8, 100, planner_answered=False)
        assert "random sampling's exact answer" in given
        assert "random sampling's exact answer" not in absent

"""plan --pair with two accuracies: the per-pair rule's sizes at the disagreement the accuracies allow."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from helpers import run_command as run
from mbutils.evaluate.planning_accuracies import accuracy_pair


def test_the_sizes_are_the_smallest_the_continuity_corrected_rule_accepts():
    """At each disagreement d the size k is the first whose leader is ahead by one item with the threshold's
    probability, Phi((k gap - 1/2) / sqrt(k (d - gap^2))) >= 0.8 (an unbounded benchmark): k passes, k - 1 fails."""
    plan = accuracy_pair(0.40, 0.43, threshold=0.8)
    z = norm.ppf(0.8)
    for key, d in {"least": 0.03, "independent": 0.4 * 0.57 + 0.43 * 0.6, "most": 0.83}.items():
        assert plan.disagree[key] == pytest.approx(d)
        k = plan.size[key]
        passes = lambda m: (m * 0.03 - 0.5) / np.sqrt(m * (d - 0.03 ** 2)) >= z - 1e-9  # noqa: E731
        assert passes(k) and not passes(k - 1), (key, k)
    bounded = accuracy_pair(0.40, 0.43, n_items=448)
    assert all(bounded.size[key] < plan.size[key] for key in plan.size)  # finite population: fewer items
    assert accuracy_pair(0.5, 0.5).size["independent"] == float("inf")


def test_the_command_line_takes_two_accuracies_and_refuses_others():
    code, out, err = run("plan", "--pair", "0.40", "0.43")
    assert code == 0 and "Gap 3.0 points" in out and "415 items" in out, err
    code, out, err = run("plan", "--pair", "0.4", "1.3")
    assert code == 1 and "fractions from 0 to 1" in err and out == ""

"""``plan --pair 0.40 0.43``: the random items two models need, from their two accuracies alone.

A practitioner often has only two accuracies. The per-pair rule of :mod:`mbutils.evaluate.pair_sizes`
needs, beside the gap Δ, the share d of items on which exactly one of the two is right, which two
accuracies a and b do not fix: it lies between Δ (one model right wherever the other is) and
min(a + b, 2 - a - b) (their right answers overlap as little as possible). The answer gives the size at
both ends and at d = a(1 - b) + b(1 - a), the share if their errors were independent; the truth for two
real models of one benchmark usually lies between the independent value and the low end, since models
tend to find the same items hard.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mbutils.base.errors import ProtocolError
from mbutils.base.validation import check_number
from mbutils.evaluate.pair_sizes import rule_size


@dataclass(frozen=True)
class AccuracyPair:
    """The per-pair rule's sizes for two accuracies (fractions); sizes in items, rounded up (inf: a tie)."""

    accuracy_a: float
    accuracy_b: float
    gap: float
    threshold: float
    n_items: int | None
    disagree: dict      # "least" / "independent" / "most" -> d
    size: dict          # same keys -> items needed


def accuracy_pair(accuracy_a, accuracy_b, *, n_items: int | None = None, threshold: float = 0.8) -> AccuracyPair:
    """Items a uniform random subset needs to order two models of these accuracies correctly with
    probability ``threshold``, at the least, independent and most disagreement the accuracies allow.

    Examples
    --------
    >>> plan = accuracy_pair(0.40, 0.43)
    >>> round(plan.gap, 2), plan.size["least"] <= plan.size["independent"] <= plan.size["most"]
    (0.03, True)
    >>> plan.size["independent"]
    415
    """
    a = check_number(accuracy_a, "accuracy of model A", ProtocolError, low=0, high=1)
    b = check_number(accuracy_b, "accuracy of model B", ProtocolError, low=0, high=1)
    gap = abs(a - b)
    disagree = {"least": gap, "independent": a * (1 - b) + b * (1 - a), "most": min(a + b, 2 - a - b)}
    n = int(n_items) if n_items is not None else None
    sizes = {}
    for key, d in disagree.items():
        k = float(rule_size(gap, d, n if n is not None else 10 ** 12, threshold))
        sizes[key] = int(np.ceil(k - 1e-9)) if np.isfinite(k) else float("inf")
    return AccuracyPair(a, b, gap, float(threshold), n, disagree, sizes)


def format_accuracy_pair(plan: AccuracyPair) -> str:
    """The answer in words: the gap, and the items needed at the three shares of disagreement."""
    if plan.gap == 0:
        return (f"Accuracies {100 * plan.accuracy_a:.1f} and {100 * plan.accuracy_b:.1f} points are tied: no "
                "number of items orders them.\n")
    of = f" of the benchmark's {plan.n_items}" if plan.n_items else ""
    def size(key):
        value = plan.size[key]
        return "all of them" if plan.n_items and value >= plan.n_items else f"{value} items"
    return (f"Gap {100 * plan.gap:.1f} points ({100 * plan.accuracy_a:.1f} against {100 * plan.accuracy_b:.1f}). "
            f"A uniform random subset{of} orders them correctly {100 * plan.threshold:g}% of the time with "
            f"{size('independent')} if their errors are independent (they disagree on "
            f"{100 * plan.disagree['independent']:.0f}% of items); {size('least')} if one is right wherever the "
            f"other is, {size('most')} if their right answers overlap as little as possible. (The per-pair rule "
            "Phi((k gap - 1/2) / sd_k) >= the threshold with sd_k^2 = k (d - gap^2), the leader ahead by at least one "
            "item; finite-population corrected when --data gives the benchmark.)\n")

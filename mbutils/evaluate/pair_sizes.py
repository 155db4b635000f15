"""Per-pair planning for random sampling: the items each pair of a gap bin needs, not the bin's average.

For two models on N items let Δ be their accuracy gap (a fraction) and d the share of items on
which exactly one of them is right. On a uniform random k-subset drawn without replacement the
estimated gap is the mean of k draws of the per-item difference (values -1, 0, 1: mean Δ,
variance d - Δ²), so its variance is ``(d - Δ²) / k · (N - k) / (N - 1)``. The subset orders the
pair correctly with probability about Φ(|Δ| / sd); asking for agreement ``a`` gives the rule

    k₀ = z² (d - Δ²) / Δ²,  z = Φ⁻¹(a),  and with the finite-population correction
    k = N k₀ / (k₀ + N - 1).

The estimated difference is a whole number of items and a tie does not order the pair, so the subset
must put the leader ahead by at least one item: with the continuity correction the rule asks
Φ((kΔ − 1/2) / sd_k) ≥ a, sd_k the standard deviation of the k items' summed difference, and
:func:`rule_size` solves that (its default); the uncorrected rule asks fewer items than the exact
size for most pairs a few points apart.

Two pairs with the same gap can need very different k: the more items they disagree on (d), the
noisier their difference. A planner size read from a gap bin's *average* agreement
(:func:`mbutils.plan`) is therefore reached by some of the bin's pairs and not by others;
:func:`bin_pairs` gives every pair of a bin its exact required size (the exact hypergeometric power
of :func:`mbutils.evaluate.planning_probability.agreement_probability`) beside the rule's, and
:func:`size_for_share` the size that brings a stated share of the bin's pairs to the target.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import norm

from mbutils.base.errors import ProtocolError
from mbutils.base.validation import check_number
from mbutils.base.vocabulary import renamed_keywords
from mbutils.evaluate.planning_probability import agreement_probability


@renamed_keywords(agreement="threshold")
def rule_size(gap, disagree, n_items: int, threshold: float = 0.8, *, continuity: bool = True) -> np.ndarray:
    """The normal rule's k (real-valued, finite-population corrected; inf for a tied pair).

    ``gap`` and ``disagree`` are fractions (|Δ| and d); vectorised over both. With ``continuity`` (the
    default) the rule asks Φ((kΔ − 1/2) / sd_k) ≥ ``threshold``, sd_k² = k (d − Δ²)(N − k)/(N − 1): the
    estimated difference of a random k-subset is a whole number of items, and a tie does not order the
    pair, so the subset must put the leader ahead by at least one item (the half is the continuity
    correction of that integer count). k is the larger root of the quadratic
    (kΔ − 1/2)² = z² k (d − Δ²)(N − k)/(N − 1). Without it, the uncorrected k₀ = z² (d − Δ²)/Δ² and
    k = N k₀ / (k₀ + N − 1), which asks fewer items than the exact size of most pairs.

    >>> round(float(rule_size(0.02, 0.30, 10**9, continuity=False)), 1)  # z² (d - Δ²) / Δ² with z = 0.8416
    530.5
    >>> round(float(rule_size(0.02, 0.30, 10**9)), 1)  # the leader ahead by one item, not by a hair
    579.5
    >>> float(rule_size(0.02, 0.30, 448)) < 448
    True
    """
    threshold = check_number(threshold, "threshold", ProtocolError, low=0.5, high=1, low_open=True, high_open=True)
    gap, disagree = np.abs(np.asarray(gap, dtype=float)), np.asarray(disagree, dtype=float)
    z = norm.ppf(threshold)
    n = float(n_items)
    with np.errstate(divide="ignore", invalid="ignore"):
        if continuity:
            v = np.maximum(disagree - gap**2, 0.0) * z**2
            a = gap**2 + v / (n - 1)
            b = gap + v * n / (n - 1)
            k = (b + np.sqrt(np.maximum(b**2 - a, 0.0))) / (2 * a)  # c = 1/4: b² - 4ac = b² - a
        else:
            k0 = z**2 * (disagree - gap**2) / gap**2
            k = n * k0 / (k0 + n - 1)
    return np.where(gap > 0, k, np.inf)


@renamed_keywords(agreement="threshold")
def exact_required(a, b, n_items: int, threshold: float = 0.8) -> np.ndarray:
    """Per pair, the smallest k whose exact probability of ordering it correctly reaches ``threshold``
    (every k from 1 to N scanned; N + 1 where none does). ``a``, ``b``: items only A / only B gets right."""
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    ks = np.arange(1, n_items + 1)
    power = np.asarray(agreement_probability(a[:, None], b[:, None], n_items, ks[None, :]), dtype=float)
    hit = power >= threshold - 1e-12
    return np.where(hit.any(axis=1), hit.argmax(axis=1) + 1, n_items + 1)


@renamed_keywords(agreement="threshold")
def bin_pairs(correct: np.ndarray, gap: float, *, bin_width: float = 0.5, threshold: float = 0.8) -> pd.DataFrame:
    """Every pair of models whose full-benchmark gap (points) lies in ``[gap, gap + bin_width)``, with its
    counts, its disagreement share, the exact size it needs and the rule's.

    ``correct`` is the models x items 0/1 matrix the truth is taken from.
    """
    correct = np.asarray(correct, dtype=np.int64)
    n_models, n_items = correct.shape
    i, j = np.triu_indices(n_models, k=1)
    right = correct.sum(axis=1)
    diff = np.abs(right[i] - right[j])
    points = 100.0 * diff / n_items
    keep = (points >= gap - 1e-9) & (points < gap + bin_width - 1e-9)
    i, j = i[keep], j[keep]
    a = ((correct[i] == 1) & (correct[j] == 0)).sum(axis=1)
    b = ((correct[i] == 0) & (correct[j] == 1)).sum(axis=1)
    hi, lo = np.maximum(a, b), np.minimum(a, b)
    table = pd.DataFrame({"model_a": i, "model_b": j, "a_only": hi, "b_only": lo,
                         "gap": 100.0 * (hi - lo) / n_items, "disagree": (hi + lo) / n_items,
                         "required": exact_required(hi, lo, n_items, threshold),
                         "rule": rule_size((hi - lo) / n_items, (hi + lo) / n_items, n_items, threshold)})
    table.attrs["n_items"] = n_items
    return table


def share_reaching(pairs: pd.DataFrame, k: int) -> float:
    """Share of the pairs whose exact required size is at most ``k`` (NaN for no pairs)."""
    return float((pairs["required"] <= k).mean()) if len(pairs) else float("nan")


def size_for_share(pairs: pd.DataFrame, share: float = 0.8) -> int | None:
    """The smallest k at which at least ``share`` of the pairs reach the target (None: not within N)."""
    share = check_number(share, "share", ProtocolError, low=0, high=1, low_open=True)
    if not len(pairs):
        return None
    needed = np.sort(pairs["required"].to_numpy())
    k = int(needed[int(np.ceil(share * len(needed))) - 1])
    return None if k > int(pairs.attrs.get("n_items", k)) else k

"""Judging target pairs: agreement with the truth, exact gap bins, Kendall tau-b, and a curve's first crossing.

Accuracy gaps are binned with integer arithmetic on correct counts, so no bin is lost to
floating-point rounding; an estimated difference within rounding error of zero is a tie.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from mbutils.base.errors import ResultsError
from mbutils.base.validation import check_choice

TIE_RULES = ("paper", "exclude")
MDAD_METHODS = ("first", "monotone")


_EST_TIE = 1e-12  # estimated differences this small are ties (weighted sums of equal terms)


def _snap(diff: np.ndarray) -> np.ndarray:
    """Differences within rounding error of zero become exact ties."""
    return np.where(np.abs(diff) <= _EST_TIE, 0.0, diff)


def pair_agreement(est_diff: np.ndarray, true_diff: np.ndarray, tie_rule: str = "paper") -> tuple[np.ndarray, np.ndarray]:
    """(agrees, counted) per pair.

    An estimated tie always disagrees. ``paper``: a pair tied on the full benchmark agrees
    only if its estimated difference is positive (this depends on pair order, as in the
    reference code). ``exclude``: tied pairs are not counted (symmetric in the pair).
    """
    check_choice(tie_rule, TIE_RULES, "tie rule", ResultsError)
    est_sign = np.sign(_snap(est_diff))
    true_sign = np.sign(true_diff)
    tied = true_sign == 0
    agrees = np.where(tied, est_sign > 0, est_sign * true_sign > 0)
    counted = ~tied if tie_rule == "exclude" else np.ones_like(agrees)
    return agrees, counted


#: The finest agreement-curve bin (points): 10,000 bins over the 0-100 range, not millions.
MIN_BIN_WIDTH = 0.01


def gap_bins(true_diff: np.ndarray, n_items: np.ndarray, bin_width: float = 0.5) -> np.ndarray:
    """Floored bin of |accuracy gap| in points, exact: (100·|Δc|) // (width·N).

    The width is read as the nearest fraction with a denominator up to a million, so a width
    typed with float noise (0.7000000000000001) is 7/10 and the integer products cannot overflow.
    """
    width = Fraction(str(bin_width)).limit_denominator(10**6)
    if width <= 0 or not np.isfinite(float(bin_width)):
        raise ResultsError(f"bin width must be a positive number, got {bin_width}")
    n = np.asarray(n_items, dtype=np.int64).reshape(-1, *([1] * (np.ndim(true_diff) - 1)))
    return (100 * width.denominator * np.abs(true_diff)) // (width.numerator * n)


def kendall_tau_b(estimates: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Kendall tau-b of each row pair, from pair signs: (C - D) / sqrt((P - T_x)(P - T_y))."""
    i, j = np.triu_indices(estimates.shape[-1], k=1)
    de, dt = (np.sign(_snap(x[..., i] - x[..., j])) for x in (estimates, truth))
    n_pairs = len(i)
    denom = np.sqrt((n_pairs - (de == 0).sum(-1)) * (n_pairs - (dt == 0).sum(-1)))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, (de * dt).sum(-1) / denom, np.nan)


def first_crossing(rates: np.ndarray, threshold: float) -> np.ndarray:
    """Index of the first bin with rate >= threshold along the last axis; -1 if none."""
    hit = np.nan_to_num(rates, nan=-np.inf) >= threshold
    return np.where(hit.any(-1), hit.argmax(-1), -1)


def monotone_rates(rates: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Non-decreasing fit of an agreement curve (pool-adjacent-violators, pair-weighted).

    SciPy's solver directly (what scikit-learn's ``isotonic_regression`` calls too, after
    input checks that cost 15 times the fit: a run-bootstrap CI fits thousands of curves).
    """
    from scipy.optimize import isotonic_regression

    out = np.full(rates.shape, np.nan)
    keep = weights > 0
    if keep.any():
        out[keep] = isotonic_regression(rates[keep], weights=weights[keep], increasing=True).x
    return out


def monotone_crossing(agree: np.ndarray, total: np.ndarray, threshold: float) -> np.ndarray:
    """First bin where the non-decreasing (pair-weighted) fit of ``agree / total`` reaches ``threshold``,
    along the last axis (-1 if none): :func:`monotone_rates` then :func:`first_crossing`, without fitting.

    The isotonic fit at bin ``b`` is ``max_{i<=b} min_{j>=b}`` of the pooled agreement of bins ``i..j``,
    so it reaches the threshold exactly where ``min(0, S_0, ..., S_{b-1}) <= min(S_b, S_{b+1}, ...)``
    with ``S`` the running sum of ``agree - threshold * total`` (bins with pairs only). Integer counts
    (every count of an experiment, and every bootstrap draw's) are compared exactly, with the
    threshold as a fraction; a bootstrap of thousands of curves is a few array operations.

    >>> agree, total = np.array([1, 9, 1, 10]), np.array([2, 10, 5, 10])
    >>> int(monotone_crossing(agree, total, 0.8)), int(first_crossing(monotone_rates(agree / total, total), 0.8))
    (3, 3)
    """
    agree, total = np.asarray(agree, dtype=np.float64), np.asarray(total, dtype=np.float64)
    width = Fraction(str(float(threshold))).limit_denominator(10**6)
    integral = (np.array_equal(agree, np.rint(agree)) and np.array_equal(total, np.rint(total))
                and float(np.abs(total).sum(axis=-1).max(initial=0)) * width.denominator < 2.0 ** 62)
    if integral:
        step = (width.denominator * np.rint(agree).astype(np.int64) - width.numerator * np.rint(total).astype(np.int64))
    else:
        step = agree - float(threshold) * total
    step = np.where(total > 0, step, 0)
    running = np.cumsum(step, axis=-1)
    before = np.concatenate([np.zeros_like(running[..., :1]), running[..., :-1]], axis=-1)
    low_before = np.minimum.accumulate(before, axis=-1)
    low_after = np.flip(np.minimum.accumulate(np.flip(running, axis=-1), axis=-1), axis=-1)
    hit = (low_before <= low_after) & (total > 0)
    return np.where(hit.any(-1), hit.argmax(-1), -1)


def mdad_bins(agree: np.ndarray, total: np.ndarray, threshold: float, method: str = "monotone") -> np.ndarray:
    """MDAD bin index of every row of per-bin counts (last axis: bins); -1 where no bin reaches the threshold."""
    check_choice(method, MDAD_METHODS, "MDAD method", ResultsError)
    if method == "monotone":
        return monotone_crossing(agree, total, threshold)
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = np.asarray(agree, dtype=np.float64) / np.asarray(total, dtype=np.float64)
    return first_crossing(rates, threshold)


def mdad_bin(agree: np.ndarray, total: np.ndarray, threshold: float, method: str = "first") -> int:
    """MDAD as a bin index from pooled per-bin counts; -1 when no bin reaches the threshold."""
    return int(mdad_bins(agree, total, threshold, method))

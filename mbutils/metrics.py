"""Meta-evaluation: estimation error, Kendall tau-b, pairwise agreement, agreement curves, MDAD.

Everything is computed from the tidy results table of an experiment (one row per
run x selector x size x target), vectorised over all target pairs of all runs.
Accuracy gaps are binned once, with integer arithmetic on correct counts, so no
bin is lost to floating-point rounding. All outputs are in accuracy *points*.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Iterator

import numpy as np
import pandas as pd

from .errors import ResultsError
from .provenance import check_unmixed
from .protocol import rng_for
from .validation import check_choice, check_int, check_number

TIE_RULES = ("paper", "exclude")
MDAD_METHODS = ("first", "monotone")
CI_METHODS = ("pairs", "runs", "none")
_EST_TIE = 1e-12  # estimated differences this small are ties (weighted sums of equal terms)

RESULT_COLUMNS = (
    "run", "selector", "size", "model", "estimate",
    "seen_correct", "n_seen", "unseen_correct", "n_unseen",
)


@dataclass(frozen=True)
class GroupPairs:
    """All target pairs of one selector x size, runs as rows: shapes (runs, pairs)."""

    runs: np.ndarray
    n_items: np.ndarray       # (runs,) items in the half the truth is taken from
    est_diff: np.ndarray      # (runs, pairs) estimate_i - estimate_j
    true_diff: np.ndarray     # (runs, pairs) correct_i - correct_j (integers)
    estimates: np.ndarray     # (runs, targets)
    truth: np.ndarray         # (runs, targets) accuracy as a fraction


def check_results(results: pd.DataFrame) -> None:
    missing = [c for c in RESULT_COLUMNS if c not in results.columns]
    if missing:
        raise ResultsError(
            f"results table lacks columns {', '.join(missing)}; "
            "it must come from `python -m mbutils experiment`"
        )
    if results.empty:
        raise ResultsError("results table is empty")
    check_unmixed(results)


def _split_columns(split: str) -> tuple[str, str]:
    if split not in ("seen", "unseen"):
        raise ResultsError(f"split must be 'seen' or 'unseen', got {split!r}")
    return f"{split}_correct", f"n_{split}"


def iter_groups(results: pd.DataFrame, split: str = "seen") -> Iterator[tuple[tuple[str, int], GroupPairs]]:
    """Yield ((selector, size), pairs) in table order of first appearance."""
    check_results(results)
    correct_col, n_col = _split_columns(split)
    for (selector, size), group in results.groupby(["selector", "size"], sort=False):
        group = group.sort_values(["run", "model"], kind="stable")
        runs, counts = np.unique(group["run"].to_numpy(), return_counts=True)
        if (counts != counts[0]).any():
            raise ResultsError(f"{selector}, size {size}: runs have different numbers of targets")
        if counts[0] < 2:
            raise ResultsError(f"{selector}, size {size}: each run has {counts[0]} target model; "
                               "at least 2 per run are needed to compare pairs")
        shape = (len(runs), counts[0])
        est = group["estimate"].to_numpy(dtype=np.float64).reshape(shape)
        cor = group[correct_col].to_numpy(dtype=np.int64).reshape(shape)
        n_items = group[n_col].to_numpy(dtype=np.int64).reshape(shape)[:, 0]
        i, j = np.triu_indices(shape[1], k=1)
        yield (selector, int(size)), GroupPairs(
            runs=runs,
            n_items=n_items,
            est_diff=est[:, i] - est[:, j],
            true_diff=cor[:, i] - cor[:, j],
            estimates=est,
            truth=cor / n_items[:, None],
        )


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
    """Floored bin of |accuracy gap| in points, exact: (100·|Δc|) // (width·N)."""
    width = Fraction(str(bin_width))
    if width <= 0:
        raise ResultsError(f"bin width must be positive, got {bin_width}")
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


def _bin_counts(pairs: GroupPairs, bin_width: float, tie_rule: str) -> tuple[np.ndarray, np.ndarray]:
    """Per-run agreeing and counted pairs in each gap bin: two (runs, bins) arrays."""
    agrees, counted = pair_agreement(pairs.est_diff, pairs.true_diff, tie_rule)
    bins = gap_bins(pairs.true_diff, pairs.n_items, bin_width)
    n_runs = len(pairs.runs)
    n_bins = int(bins.max()) + 1
    flat = (np.arange(n_runs)[:, None] * n_bins + bins)[counted]
    size = n_runs * n_bins
    total = np.bincount(flat, minlength=size).reshape(n_runs, n_bins)
    agree = np.bincount(flat, weights=agrees[counted], minlength=size).reshape(n_runs, n_bins)
    return agree, total


def first_crossing(rates: np.ndarray, threshold: float) -> np.ndarray:
    """Index of the first bin with rate >= threshold along the last axis; -1 if none."""
    hit = np.nan_to_num(rates, nan=-np.inf) >= threshold
    return np.where(hit.any(-1), hit.argmax(-1), -1)


def monotone_rates(rates: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Non-decreasing fit of an agreement curve (pool-adjacent-violators, pair-weighted)."""
    from sklearn.isotonic import isotonic_regression

    out = np.full(rates.shape, np.nan)
    keep = weights > 0
    if keep.any():
        out[keep] = isotonic_regression(rates[keep], sample_weight=weights[keep], increasing=True)
    return out


def mdad_bin(agree: np.ndarray, total: np.ndarray, threshold: float, method: str = "first") -> int:
    """MDAD as a bin index from pooled per-bin counts; -1 when no bin reaches the threshold."""
    check_choice(method, MDAD_METHODS, "MDAD method", ResultsError)
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = agree / total
    if method == "monotone":
        rates = monotone_rates(np.nan_to_num(rates), total)
    return int(first_crossing(rates, threshold))


def _ci_pairs(agree, total, threshold, mdad, n_boot, rng, bin_width) -> tuple[float, float]:
    """The paper's CI: per-bin bootstrap of pairs, crossings of the 95% bounds, mirrored."""
    has = total > 0
    p = np.where(has, agree / np.maximum(total, 1), 0.0)
    # Resampling n 0/1 pairs with replacement is exactly a Binomial(n, p) count.
    draws = rng.binomial(total.astype(np.int64), p, size=(n_boot, len(total))) / np.maximum(total, 1)
    lo, hi = np.quantile(draws, [0.025, 0.975], axis=0)
    lo, hi = np.where(has, lo, np.nan), np.where(has, hi, np.nan)
    cross_optimistic = first_crossing(hi, threshold)
    cross_pessimistic = first_crossing(lo, threshold)
    if cross_pessimistic < 0:  # the pessimistic bound never crosses: no upper end
        return min(mdad, cross_optimistic * bin_width), np.nan
    half = max(mdad - cross_optimistic * bin_width, cross_pessimistic * bin_width - mdad)
    return mdad - half, mdad + half


def _ci_runs(agree_runs, total_runs, threshold, method, n_boot, rng, bin_width) -> tuple[float, float]:
    """Percentile CI from resampling whole runs (pairs within a run are correlated)."""
    n_runs = agree_runs.shape[0]
    w = rng.multinomial(n_runs, np.full(n_runs, 1.0 / n_runs), size=n_boot).astype(np.float64)
    agree, total = w @ agree_runs, w @ total_runs
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = agree / total
    if method == "monotone":
        rates = np.stack([monotone_rates(np.nan_to_num(r), t) for r, t in zip(rates, total)])
    bins = first_crossing(rates, threshold).astype(np.float64)
    values = np.where(bins < 0, np.inf, bins * bin_width)
    lo, hi = np.quantile(values, [0.025, 0.975], method="inverted_cdf")
    return float(lo) if np.isfinite(lo) else np.nan, float(hi) if np.isfinite(hi) else np.nan


def agreement_curve(results: pd.DataFrame, *, split: str = "seen", bin_width: float = 0.5,
                    tie_rule: str = "paper") -> pd.DataFrame:
    """Mean agreement per gap bin, pairs pooled over runs: selector, size, gap, agreement, n_pairs."""
    frames = []
    for (selector, size), pairs in iter_groups(results, split):
        agree, total = _bin_counts(pairs, bin_width, tie_rule)
        a, t = agree.sum(0), total.sum(0)
        keep = t > 0
        frames.append(pd.DataFrame({
            "selector": selector, "size": size,
            "gap": np.flatnonzero(keep) * float(bin_width),
            "agreement": a[keep] / t[keep], "n_pairs": t[keep].astype(np.int64),
        }))
    return pd.concat(frames, ignore_index=True)


def mdad_table(results: pd.DataFrame, *, threshold: float = 0.8, split: str = "seen",
               bin_width: float = 0.5, tie_rule: str = "paper", method: str = "first",
               ci: str = "pairs", n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """One row per selector x size: mdad, ci_low, ci_high (points; NaN = not reached), n_pairs.

    ``ci="pairs"`` is the paper's per-bin bootstrap; ``ci="runs"`` resamples runs.
    """
    threshold = check_number(threshold, "threshold", ResultsError, low=0, high=1, low_open=True)
    bin_width = check_number(bin_width, "bin width (points)", ResultsError, low=MIN_BIN_WIDTH, high=100)
    check_choice(ci, CI_METHODS, "CI method", ResultsError)
    n_boot = check_int(n_boot, "bootstrap resamples", ResultsError, low=1, high=100_000)
    seed = check_int(seed, "seed", ResultsError, low=0)
    rows = []
    for (selector, size), pairs in iter_groups(results, split):
        agree_runs, total_runs = _bin_counts(pairs, bin_width, tie_rule)
        agree, total = agree_runs.sum(0), total_runs.sum(0)
        b = mdad_bin(agree, total, threshold, method)
        mdad = b * bin_width if b >= 0 else np.nan
        rng = rng_for(seed, "bootstrap", selector, size)
        if ci == "none" or b < 0:
            lo = hi = np.nan
        elif ci == "pairs":
            lo, hi = _ci_pairs(agree, total, threshold, mdad, n_boot, rng, bin_width)
        else:
            lo, hi = _ci_runs(agree_runs, total_runs, threshold, method, n_boot, rng, bin_width)
        rows.append({"selector": selector, "size": size, "mdad": mdad, "ci_low": lo, "ci_high": hi,
                     "n_pairs": int(total.sum()), "reached": b >= 0, "n_runs": len(pairs.runs)})
    table = pd.DataFrame(rows)
    table.attrs["bin_width"] = float(bin_width)  # the MDAD's resolution, which the noise rule allows for
    return table


def _finite_mean_sd(values: np.ndarray) -> tuple[float, float]:
    """Mean and sd over the finite values; NaN (no warning) when there are none, as for
    Kendall tau in runs whose targets or estimates are all tied."""
    finite = values[np.isfinite(values)]
    return (float(finite.mean()), float(finite.std())) if finite.size else (np.nan, np.nan)


def summary_table(results: pd.DataFrame) -> pd.DataFrame:
    """Kendall tau-b and estimation error (points) per selector x size, mean and sd over runs."""
    rows = []
    seen = iter_groups(results, "seen")
    unseen = iter_groups(results, "unseen")
    for ((selector, size), s), (_, u) in zip(seen, unseen):
        row = {"selector": selector, "size": size, "n_runs": len(s.runs)}
        for label, pairs in (("seen", s), ("unseen", u)):
            tau = kendall_tau_b(pairs.estimates, pairs.truth)
            err = 100 * np.abs(pairs.estimates - pairs.truth).mean(axis=1)
            suffix = "" if label == "seen" else "_unseen"
            tau_mean, tau_sd = _finite_mean_sd(tau)
            row.update({f"tau{suffix}": tau_mean, f"tau_sd{suffix}": tau_sd,
                        f"error{suffix}": err.mean(), f"error_sd{suffix}": err.std()})
        rows.append(row)
    return pd.DataFrame(rows)

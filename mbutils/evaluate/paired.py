"""Paired comparison of two selectors of one experiment: the MDAD difference with a joint bootstrap interval.

Selectors of one experiment share their runs: the same source/target split and the same target
pairs. Comparing their MDADs by the overlap of two separate intervals throws that pairing away;
here one bootstrap resamples runs, and pairs within each drawn run (Poisson weights), and applies
the same draw to both selectors, so the run-to-run and pair-to-pair noise they share cancels in
the difference. Per size:

* ``mdad_a``, ``mdad_b``: the two MDADs (points; ``inf`` not reached), by default from the monotone
  fit of the agreement curve (a first crossing moves with the pairs of a single bin, so its
  bootstrap is too coarse to compare), or the paper's first crossing;
* ``difference`` = ``mdad_a - mdad_b`` and its 95% percentile interval ``low``, ``high``;
* ``verdict``: ``better`` (A's MDAD smaller: the interval lies below 0), ``worse`` (above 0),
  ``within noise`` (the interval holds 0 and is finite), ``cannot tell`` (an MDAD not reached, or
  the interval open at one end: too many draws never reach the threshold), ``too few pairs to tell``
  (the runs pool fewer than ``mbutils.evaluate.noise.MIN_PAIRS`` target pairs: a bootstrap of so few
  pairs can look exact and measure nothing, whatever its interval says);
* ``detectable``: the smallest difference the comparison would see with 80% power (a two-sided
  5% test; ``2.8`` standard errors, the standard error taken from the interval's width), and
  ``runs_for_2``: the runs that would make a 2-point difference detectable (the standard error
  falls as one over the square root of the runs). A verdict of "within noise" with ``detectable``
  above the difference a reader cares about is failure to reject, not equality.

The interval is pointwise: a page comparing several sizes or selectors makes several comparisons
and says so (or controls them, e.g. with Holm's method over the p-values of its comparisons).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import norm

from mbutils.base.errors import ResultsError
from mbutils.base.validation import check_int, check_number
from mbutils.evaluate.noise import MIN_PAIRS, TOO_FEW
from mbutils.evaluate.pair_metrics import first_crossing, gap_bins, monotone_rates, pair_agreement
from mbutils.evaluate.results_table import iter_groups

BETTER, WORSE, WITHIN, UNKNOWN = "better", "worse", "within noise", "cannot tell"
#: z_{0.975} + z_{0.80}: a difference this many standard errors from 0 is found 80% of the time.
POWER_80 = float(norm.ppf(0.975) + norm.ppf(0.80))
#: Below this many runs the run bootstrap's percentile interval is rough (few distinct resamples of the
#: runs, a skewed distribution of the MDAD): verdicts from fewer runs are flagged ``few_runs``.
FEW_RUNS = 20
#: Bootstrap draws computed at once: bounds the weight matrix to BOOT_CHUNK x (runs x pairs) numbers.
BOOT_CHUNK = 100


def _pairs(results: pd.DataFrame, selector: str, split: str) -> dict:
    found = {size: pairs for (_, size), pairs in iter_groups(results, split, selector)}
    if not found:
        raise ResultsError(f"selector {selector!r} is not in the results (it has "
                           f"{', '.join(map(repr, dict.fromkeys(results['selector'].astype(str))))})")
    return found


def _mdads(agree: np.ndarray, total: np.ndarray, threshold: float, method: str, width: float) -> np.ndarray:
    """MDAD (points, inf when not reached) of each row of per-bin counts."""
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = agree / total
    if method == "monotone":
        rates = np.stack([monotone_rates(np.nan_to_num(r), t) for r, t in zip(rates, total)])
    bins = first_crossing(rates, threshold)
    return np.where(bins < 0, np.inf, bins * width)


def _difference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a - b where both may be infinite (both not reached: no difference, NaN)."""
    with np.errstate(invalid="ignore"):
        out = a - b
    return np.where(np.isinf(a) & np.isinf(b), np.nan, out)


def _p_value(draws: np.ndarray) -> float:
    """Two-sided bootstrap p-value of "no difference": twice the smaller share of draws on either side
    of 0 (draws at 0 count half to each side), capped at 1; NaN without a usable draw."""
    usable = draws[~np.isnan(draws)]
    if not len(usable):
        return float("nan")
    below = (usable < 0).mean() + 0.5 * (usable == 0).mean()
    return float(min(1.0, 2.0 * min(below, 1.0 - below)))


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error control over the given comparisons; NaN
    stays NaN and is not counted). A comparison is significant at level 0.05 when its adjusted p <= 0.05.

    >>> holm([0.01, 0.04, 0.03, float("nan")]).round(2).tolist()
    [0.03, 0.06, 0.06, nan]
    """
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    order = ok[np.argsort(p[ok], kind="stable")]
    m = len(order)
    adjusted = np.maximum.accumulate((m - np.arange(m)) * p[order]) if m else np.array([])
    out[order] = np.minimum(adjusted, 1.0)
    return out


class _BinCounts:
    """The counted pairs of one comparison, grouped so that a bootstrap draw's per-bin counts are sums of blocks.

    A draw weights each pair by its run's multinomial count times its own Poisson count. The counted
    pairs are ordered by (gap bin, run, agrees under A, agrees under B), so the pairs of one block share
    all four: one block sum of the Poisson counts, times the run's count, adds to its bin's total and,
    where it agrees, to A's or B's agreeing count. Every weight is an integer, so every sum is exact
    and equals the sum over single pairs in any order (the same float64 numbers)."""

    def __init__(self, agree_a: np.ndarray, agree_b: np.ndarray, counted: np.ndarray, bins: np.ndarray):
        self.n_bins = int(bins.max()) + 1
        kept = np.flatnonzero(counted.ravel())
        keys = np.stack([bins.ravel()[kept], kept // bins.shape[1], agree_a.ravel()[kept], agree_b.ravel()[kept]])
        order = np.lexsort(keys[::-1])
        self.columns = kept[order]  # the counted pairs, block by block
        keys = keys[:, order]
        starts = np.flatnonzero(np.r_[True, (keys[:, 1:] != keys[:, :-1]).any(axis=0)]) if len(kept) else kept
        self.block_starts = starts
        self.block_sizes = np.diff(np.r_[starts, len(kept)])
        self.block_bin, self.block_run = keys[0, starts], keys[1, starts]
        self.block_agrees = keys[2, starts].astype(bool), keys[3, starts].astype(bool)
        bin_starts = np.flatnonzero(np.r_[True, self.block_bin[1:] != self.block_bin[:-1]]) if len(starts) else starts
        self.bin_starts, self.bins_seen = bin_starts, self.block_bin[bin_starts]

    def counts(self, runs_w: np.ndarray, poisson: np.ndarray, unit_first: bool) -> tuple[np.ndarray, ...]:
        """Per draw (row) and bin: (counted, agreeing under A, agreeing under B) pairs, weighted, as floats.

        ``unit_first``: the first row weighs every pair once (the point estimate)."""
        rows = len(runs_w)
        out = [np.zeros((rows, self.n_bins)) for _ in range(3)]
        if not len(self.columns):
            return tuple(out)
        block = np.add.reduceat(poisson[:, self.columns], self.block_starts, axis=1) * runs_w[:, self.block_run]
        if unit_first:
            block[0] = self.block_sizes
        for target, agrees in zip(out, (None, *self.block_agrees)):
            part = block if agrees is None else np.where(agrees, block, 0)
            target[:, self.bins_seen] = np.add.reduceat(part, self.bin_starts, axis=1)
        return tuple(out)


def _compare_size(pa, pb, *, threshold, tie_rule, bin_width, method, n_boot, rng) -> dict:
    if not (np.array_equal(pa.runs, pb.runs) and np.array_equal(pa.true_diff, pb.true_diff)):
        raise ResultsError("the two selectors do not share their runs and targets: compare selectors of one "
                           "experiment here, and results of different experiments with the unpaired noise rule")
    agree_a, counted = pair_agreement(pa.est_diff, pa.true_diff, tie_rule)
    agree_b, _ = pair_agreement(pb.est_diff, pb.true_diff, tie_rule)
    bins = gap_bins(pa.true_diff, pa.n_items, bin_width)
    n_runs, n_pairs = bins.shape
    grouped = _BinCounts(agree_a, agree_b, counted, bins)
    mdads = [[], []]
    for start in range(0, n_boot + 1, BOOT_CHUNK):  # row 0: the point estimate; chunks bound the memory
        rows = min(BOOT_CHUNK, n_boot + 1 - start)
        runs_w = rng.multinomial(n_runs, np.full(n_runs, 1.0 / n_runs), size=rows)
        poisson = rng.poisson(1.0, (rows, n_runs * n_pairs))
        total, *agreeing = grouped.counts(runs_w, poisson, unit_first=start == 0)
        for out, agree in zip(mdads, agreeing):
            out.append(_mdads(agree, total, threshold, method, bin_width))
    mdads = [np.concatenate(m) for m in mdads]
    diff = _difference(*mdads)
    draws = diff[1:]
    p_value = _p_value(draws)
    finite = draws[np.isfinite(draws)]
    open_end = np.isnan(draws).mean() + np.isinf(draws).mean() > 0.025
    low, high = (np.quantile(draws[~np.isnan(draws)], [0.025, 0.975], method="inverted_cdf")
                 if (~np.isnan(draws)).any() else (np.nan, np.nan))
    se = float(np.std(finite, ddof=1)) if len(finite) > 2 else np.nan
    detectable = POWER_80 * se if np.isfinite(se) else np.nan
    ma, mb = float(mdads[0][0]), float(mdads[1][0])
    if n_runs * n_pairs < MIN_PAIRS:
        verdict = TOO_FEW
    elif not (np.isfinite(ma) and np.isfinite(mb)) or open_end or not (np.isfinite(low) and np.isfinite(high)):
        verdict = UNKNOWN
    elif high < 0:
        verdict = BETTER
    elif low > 0:
        verdict = WORSE
    else:
        verdict = WITHIN
    runs_for_2 = int(np.ceil(n_runs * (detectable / 2.0) ** 2)) if np.isfinite(detectable) else np.nan
    return {"mdad_a": ma, "mdad_b": mb, "difference": float(diff[0]), "low": float(low), "high": float(high),
            "verdict": verdict, "p_value": p_value, "detectable": detectable, "runs_for_2": runs_for_2,
            "n_runs": n_runs, "n_pairs": int(n_pairs), "few_runs": n_runs < FEW_RUNS}


def compare_selectors(results: pd.DataFrame, a: str, b: str, *, threshold: float = 0.8, split: str = "seen",
                      bin_width: float = 0.5, tie_rule: str = "paper", method: str = "monotone", n_boot: int = 1000,
                      seed: int = 0, sizes=None) -> pd.DataFrame:
    """Per size, the paired MDAD difference of selectors ``a`` and ``b`` of one experiment.

    Parameters
    ----------
    results : pandas.DataFrame
        One experiment's results (:func:`mbutils.run_experiment`) holding both selectors.
    a, b : str
        The selectors' labels in ``results``.
    threshold, split, bin_width, tie_rule
        As for :func:`mbutils.mdad_table`.
    method : {"monotone", "first"}, default "monotone"
        MDAD from the monotone fit of the agreement curve (the findings' reading: a first crossing
        jumps with the pairs of one bin, and its bootstrap with it), or the paper's first crossing.
    n_boot : int, default 1000
        Joint bootstrap draws.
    seed : int, default 0
        Seed of the bootstrap.
    sizes : sequence of int, optional
        Only these sizes (default every size both selectors ran).

    Returns
    -------
    pandas.DataFrame
        One row per size both ran: size, mdad_a, mdad_b, difference, low, high (95%, pointwise),
        verdict, p_value (two-sided bootstrap p of no difference, for ``mbutils.evaluate.paired.holm`` over a page's
        comparisons), detectable (points, 80% power), runs_for_2, n_runs, n_pairs, few_runs (fewer
        than 20 runs: the run bootstrap's interval is rough).

    Examples
    --------
    >>> import mbutils
    >>> bench = mbutils.load_benchmark("synthetic-gpqa")
    >>> protocol = mbutils.Protocol(n_sources=60, n_targets=20, n_runs=5)
    >>> res = mbutils.run_experiment(bench, ["random", "subtask_equal"], [25], protocol, progress=False)
    >>> table = mbutils.compare_selectors(res, "random", "subtask_equal", n_boot=200)
    >>> int(table.loc[0, "size"]), bool(table.loc[0, "low"] <= table.loc[0, "high"])
    (25, True)
    """
    threshold = check_number(threshold, "threshold", ResultsError, low=0, high=1, low_open=True)
    n_boot = check_int(n_boot, "n_boot", ResultsError, low=50, high=100_000)
    pairs_a, pairs_b = _pairs(results, a, split), _pairs(results, b, split)
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 44]))
    rows = [{"size": size, **_compare_size(pairs_a[size], pairs_b[size], threshold=threshold, tie_rule=tie_rule,
                                           bin_width=bin_width, method=method, n_boot=n_boot, rng=rng)}
            for size in sorted(set(pairs_a) & set(pairs_b)) if sizes is None or size in set(map(int, sizes))]
    out = pd.DataFrame(rows)
    out.attrs.update(selectors=(a, b), threshold=threshold, n_boot=n_boot)
    return out

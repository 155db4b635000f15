"""Paired comparison of two selectors of one experiment: the MDAD difference with a joint bootstrap interval.

Selectors of one experiment share their runs: the same source/target split and the same target
pairs. Comparing their MDADs by the overlap of two separate intervals throws that pairing away;
here one cluster bootstrap resamples whole runs (the pairs of a drawn run keep their own counts:
the noise of the pairs within a run is already in the run's draw of items) and applies the same
draw to both selectors, so the run-to-run noise they share cancels in the difference. Per size:

* ``mdad_a``, ``mdad_b``: the two MDADs (points; ``inf`` not reached), by default from the monotone
  fit of the agreement curve (the book's MDAD), or the paper's first crossing;
* ``difference`` = ``mdad_a - mdad_b`` and its 95% percentile interval ``low``, ``high`` (the 2.5%
  and 97.5% quantiles of the draws);
* ``verdict``: ``better`` (A's MDAD smaller: the interval lies below 0), ``worse`` (above 0),
  ``within noise`` (the interval holds 0 and is finite), ``cannot tell`` (an MDAD not reached, or
  the interval open at one end: too many draws never reach the threshold), ``too few pairs to tell``
  (the runs hold fewer than ``mbutils.evaluate.noise.MIN_PAIRS`` distinct target pairs: a bootstrap
  of so few pairs can look exact and measure nothing, whatever its interval says);
* ``se``: the standard deviation of the finite bootstrap differences; ``detectable``: the smallest
  difference the comparison would see with 80% power in a two-sided 5% test, ``2.8`` of those
  standard errors; ``runs_for_2``: the runs that would make a 2-point difference detectable (the
  standard error falls as one over the square root of the runs). A verdict of "within noise" is
  failure to reject, never equality: equality within a margin is the non-inferiority test of
  :func:`mbutils.evaluate.noise.catch_up`, which reads ``high``.

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
from mbutils.evaluate.pair_metrics import gap_bins, mdad_bins, pair_agreement
from mbutils.evaluate.results_table import iter_groups

BETTER, WORSE, WITHIN, UNKNOWN = "better", "worse", "within noise", "cannot tell"
#: z_{0.975} + z_{0.80}: a difference this many standard errors from 0 is found 80% of the time.
POWER_80 = float(norm.ppf(0.975) + norm.ppf(0.80))
#: Below this many runs the run bootstrap's percentile interval is rough (few distinct resamples of the
#: runs, a skewed distribution of the MDAD): verdicts from fewer runs are flagged ``few_runs``.
FEW_RUNS = 20
#: Bootstrap draws of a comparison by default: enough for the 2.5% and 97.5% tails a verdict reads (50
#: draws beyond each bound).
N_BOOT = 2000


def _pairs(results: pd.DataFrame, selector: str, split: str) -> dict:
    found = {size: pairs for (_, size), pairs in iter_groups(results, split, selector)}
    if not found:
        raise ResultsError(f"selector {selector!r} is not in the results (it has "
                           f"{', '.join(map(repr, dict.fromkeys(results['selector'].astype(str))))})")
    return found


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


def run_counts(pa, pb, tie_rule: str, bin_width: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per run and gap bin: (counted pairs, pairs A orders as the truth, pairs B does), three (runs, bins)
    integer arrays; a bootstrap draw's per-bin counts are their sums over the drawn runs."""
    if not (np.array_equal(pa.runs, pb.runs) and np.array_equal(pa.true_diff, pb.true_diff)):
        raise ResultsError("the two selectors do not share their runs and targets: compare selectors of one "
                           "experiment here, and results of different experiments with the unpaired noise rule")
    agree_a, counted = pair_agreement(pa.est_diff, pa.true_diff, tie_rule)
    agree_b, _ = pair_agreement(pb.est_diff, pb.true_diff, tie_rule)
    bins = gap_bins(pa.true_diff, pa.n_items, bin_width)
    n_runs = bins.shape[0]
    n_bins = int(bins.max()) + 1 if bins.size else 1
    flat = (np.arange(n_runs)[:, None] * n_bins + bins)[counted]
    size = n_runs * n_bins

    def count(weights=None):
        return np.bincount(flat, weights=weights, minlength=size).reshape(n_runs, n_bins).round().astype(np.int64)

    return count(), count(agree_a[counted].astype(float)), count(agree_b[counted].astype(float))


def _compare_size(pa, pb, *, threshold, tie_rule, bin_width, method, n_boot, rng) -> dict:
    total, agree_a, agree_b = run_counts(pa, pb, tie_rule, bin_width)
    n_runs, n_pairs = pa.true_diff.shape
    # row 0: every run once (the point estimate); then n_boot draws of n_runs runs with replacement
    weights = np.vstack([np.ones((1, n_runs), dtype=np.int64),
                         rng.multinomial(n_runs, np.full(n_runs, 1.0 / n_runs), size=n_boot)])
    draw_total = weights @ total
    mdads = [np.where(b < 0, np.inf, b * float(bin_width))
             for b in (mdad_bins(weights @ agree, draw_total, threshold, method) for agree in (agree_a, agree_b))]
    diff = _difference(*mdads)
    draws = diff[1:]
    p_value = _p_value(draws)
    finite = draws[np.isfinite(draws)]
    open_end = np.isnan(draws).mean() + np.isinf(draws).mean() > 0.025
    low, high = (np.quantile(draws[~np.isnan(draws)], [0.025, 0.975], method="inverted_cdf")
                 if (~np.isnan(draws)).any() else (np.nan, np.nan))
    se = float(np.std(finite, ddof=1)) if len(finite) > 2 else np.nan  # the SD of the finite draws
    detectable = POWER_80 * se if np.isfinite(se) else np.nan
    ma, mb = float(mdads[0][0]), float(mdads[1][0])
    distinct = pa.n_distinct
    if n_runs < 2:  # every draw repeats the one run: no interval at all
        low = high = se = detectable = np.nan
    if min(distinct, int(total.sum())) < MIN_PAIRS:
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
            "verdict": verdict, "p_value": p_value, "se": se, "detectable": detectable, "runs_for_2": runs_for_2,
            "n_runs": n_runs, "n_pairs": int(n_pairs), "n_distinct_pairs": int(distinct),
            "few_runs": n_runs < FEW_RUNS}


def compare_selectors(results: pd.DataFrame, a: str, b: str, *, threshold: float = 0.8, split: str = "seen",
                      bin_width: float = 0.5, tie_rule: str = "paper", method: str = "monotone", n_boot: int = N_BOOT,
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
        MDAD from the monotone fit of the agreement curve (the book's MDAD), or the paper's first
        crossing.
    n_boot : int, default 2000
        Joint bootstrap draws of whole runs (at least 2,000 for a dependable 2.5% tail).
    seed : int, default 0
        Seed of the bootstrap.
    sizes : sequence of int, optional
        Only these sizes (default every size both selectors ran).

    Returns
    -------
    pandas.DataFrame
        One row per size both ran: size, mdad_a, mdad_b, difference, low, high (95%, pointwise),
        verdict, p_value (two-sided bootstrap p of no difference, for ``mbutils.evaluate.paired.holm`` over a page's
        comparisons), se (points: the SD of the finite draws), detectable (points, 80% power),
        runs_for_2, n_runs, n_pairs (target pairs per run), n_distinct_pairs (distinct pairs over
        the runs), few_runs (fewer than 20 runs: the run bootstrap's interval is rough).

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

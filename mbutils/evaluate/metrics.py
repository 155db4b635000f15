"""Meta-evaluation tables of an experiment's results: agreement curves, MDAD with its interval, tau and error.

Everything is computed from the tidy results table of an experiment (one row per
run x selector x size x target, :mod:`mbutils.evaluate.results_table`), vectorised over all
target pairs of all runs, with the pair measures of :mod:`mbutils.evaluate.pair_metrics`.
All outputs are in accuracy *points*.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mbutils.base.errors import ResultsError
from mbutils.methods.protocol import rng_for
from mbutils.base.validation import check_choice, check_int, check_number
from mbutils.evaluate.pair_metrics import (MIN_BIN_WIDTH, first_crossing, gap_bins, kendall_tau_b, mdad_bin,
                                          mdad_bins, pair_agreement)
from mbutils.evaluate.noise import MIN_PAIRS
from mbutils.evaluate.results_table import GroupPairs, iter_groups

# Re-exported: the command line imports these from here.
from mbutils.evaluate.results_table import RESULT_TEXT_COLUMNS, check_results  # noqa: F401

CI_METHODS = ("pairs", "runs", "none")
#: How captions name the interval of the book's MDAD (the defaults of :func:`mdad_table`).
INTERVAL_TEXT = "95% interval from a bootstrap over whole runs"

#: Fewer runs than this make an MDAD's interval untrustworthy: the pairs of one run share a split and a
#: micro-benchmark, so a few runs' pairs say little about the next run, whatever their number. The
#: ``mdad`` command warns below it (:func:`few_runs_warnings`), and a build's card says so
#: (``mbutils.micro.build.FEW_RUNS`` is this constant).
FEW_RUNS = 10


def few_runs_warnings(table: pd.DataFrame) -> list[str]:
    """One warning line per row of an :func:`mdad_table` whose interval is not trustworthy: computed from
    fewer than :data:`FEW_RUNS` runs (a zero-width interval from so few runs said so in the same line)."""
    out = []
    for row in table.itertuples(index=False):
        runs = int(row.n_runs)
        if runs >= FEW_RUNS:
            continue
        zero = (np.isfinite(row.ci_low) and np.isfinite(row.ci_high) and row.ci_low == row.ci_high)
        bound = lambda v: f"{v:g}" if np.isfinite(v) else "open"  # noqa: E731
        shown = (f"MDAD {row.mdad:g} [{bound(row.ci_low)}, {bound(row.ci_high)}]" if np.isfinite(row.mdad)
                 else "no MDAD")
        out.append(f"warning: {row.selector} at k = {row.size}: {shown} from {runs} run{'s' if runs != 1 else ''}"
                   + (": an interval of zero width" if zero else "")
                   + f"; the interval is not trustworthy with {runs} run{'s' if runs != 1 else ''} (use at least "
                   f"{FEW_RUNS})")
    return out


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
    w = rng.multinomial(n_runs, np.full(n_runs, 1.0 / n_runs), size=n_boot)
    # integer counts, integer weights: exact sums, and no BLAS call (slower than this on a busy machine)
    agree, total = w @ np.rint(agree_runs).astype(np.int64), w @ np.rint(total_runs).astype(np.int64)
    bins = mdad_bins(agree, total, threshold, method).astype(np.float64)
    values = np.where(bins < 0, np.inf, bins * bin_width)
    lo, hi = np.quantile(values, [0.025, 0.975], method="inverted_cdf")
    return float(lo) if np.isfinite(lo) else np.nan, float(hi) if np.isfinite(hi) else np.nan


def agreement_curve(results: pd.DataFrame, *, split: str = "seen", bin_width: float = 0.5,
                    tie_rule: str = "paper") -> pd.DataFrame:
    """Agreement curve: how often each selector x size orders a pair of targets correctly, by their gap.

    The pairs of target models of every run are pooled and binned by their true accuracy
    gap, exactly from integer correct counts (a pair with ``|c_a - c_b|`` correct answers
    apart on ``N`` items falls in bin ``floor(100 |c_a - c_b| / (bin_width N))``); each bin's
    agreement is the share of its counted pairs whose estimated difference has the sign of
    the true one. :func:`mdad_table` reads the MDAD off this curve.

    Parameters
    ----------
    results : pandas.DataFrame
        Tidy results of one experiment: the table :func:`run_experiment` returns (or
        :func:`audit`'s ``results``), with at least the columns run, selector, size, model,
        estimate, seen_correct, n_seen, unseen_correct and n_unseen. A table that mixes
        experiments (or repeats a run, selector, size, model key) is refused.
    split : {"seen", "unseen"}, default "seen"
        The truth pairs are judged against: each target's accuracy on the run's seen half,
        the items micro-benchmarks are built from (the paper's), or on the unseen half (do the
        estimates generalise to fresh items of the same task?).
    bin_width : float, default 0.5
        Width of the gap bins in accuracy points (the paper's 0.5).
    tie_rule : {"paper", "exclude"}, default "paper"
        Pairs tied on the truth. An estimated tie (an estimated difference within 1e-12 of
        zero) always disagrees. ``"paper"``: a truth-tied pair counts, and agrees only when
        its estimated difference is positive, which depends on the order of the pair (the
        model whose name sorts first comes first), as in the reference code. ``"exclude"``:
        truth-tied pairs are not counted.

    Returns
    -------
    pandas.DataFrame
        One row per selector, size and non-empty bin, in the order selectors and sizes first
        appear in ``results``, then by gap: ``selector``, ``size``, ``gap`` (the bin's left
        edge, points), ``agreement`` (fraction of the bin's pairs that agree) and ``n_pairs``
        (pairs counted in the bin, over all runs).

    See Also
    --------
    mdad_table : the first bin of this curve that reaches a threshold.

    Examples
    --------
    One run of three targets: a and b are tied on the seen half (12 of 20 items each), c is
    3 items (15 points) behind both; the estimates order all three a > b > c.

    >>> import pandas as pd
    >>> from mbutils import agreement_curve
    >>> toy = pd.DataFrame({"run": 0, "selector": "mine", "size": 5,
    ...                     "model": ["a", "b", "c"], "estimate": [0.8, 0.6, 0.4],
    ...                     "seen_correct": [12, 12, 9], "n_seen": 20,
    ...                     "unseen_correct": [11, 12, 9], "n_unseen": 20})
    >>> curve = agreement_curve(toy)
    >>> curve.columns.tolist()
    ['selector', 'size', 'gap', 'agreement', 'n_pairs']
    >>> curve["gap"].tolist(), curve["agreement"].tolist(), curve["n_pairs"].tolist()
    ([0.0, 15.0], [1.0, 1.0], [1, 2])
    >>> agreement_curve(toy, tie_rule="exclude")["gap"].tolist()
    [15.0]
    """
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
               bin_width: float = 0.5, tie_rule: str = "paper", method: str = "monotone",
               ci: str = "runs", n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """MDAD per selector and size: the smallest accuracy gap a micro-benchmark orders reliably.

    The MDAD (minimum detectable ability difference) is the left edge of the first bin of
    the :func:`agreement_curve` whose agreement reaches ``threshold``: with the paper's
    0.5-point bins, ``MDAD = 0.5 * min{b : A(b) >= threshold}`` where a pair's bin is
    ``b = floor(200 |c_a - c_b| / N)``, computed exactly from integer correct counts. Pairs
    closer than the MDAD are ordered correctly less than ``threshold`` of the time; a curve
    that never reaches it has no MDAD ("not reached"). All values are accuracy points.

    By default ``A`` is the non-decreasing fit of the curve and the interval resamples whole
    runs (``method="monotone", ci="runs"``: the book's MDAD); ``method="first", ci="pairs"``
    gives the paper's first crossing and its per-bin pair bootstrap.

    Parameters
    ----------
    results : pandas.DataFrame
        Tidy results of one experiment: the table :func:`run_experiment` returns (or
        :func:`audit`'s ``results``), with at least the columns run, selector, size, model,
        estimate, seen_correct, n_seen, unseen_correct and n_unseen. A table that mixes
        experiments (or repeats a run, selector, size, model key) is refused.
    threshold : float, default 0.8
        Agreement the MDAD's bin must reach, in (0, 1].
    split : {"seen", "unseen"}, default "seen"
        The truth pairs are judged against: each target's accuracy on the run's seen half,
        the items micro-benchmarks are built from (the paper's), or on the unseen half (do the
        estimates generalise to fresh items of the same task?).
    bin_width : float, default 0.5
        Width of the gap bins in accuracy points (the paper's 0.5), from 0.01 to 100; it is
        the MDAD's resolution and is kept in ``table.attrs["bin_width"]``.
    tie_rule : {"paper", "exclude"}, default "paper"
        Pairs tied on the truth. An estimated tie (an estimated difference within 1e-12 of
        zero) always disagrees. ``"paper"``: a truth-tied pair counts, and agrees only when
        its estimated difference is positive, which depends on the order of the pair (the
        model whose name sorts first comes first), as in the reference code. ``"exclude"``:
        truth-tied pairs are not counted.
    method : {"monotone", "first"}, default "monotone"
        ``"monotone"`` (the book's MDAD): the first bin where a non-decreasing (isotonic,
        pair-weighted) fit of the curve reaches the threshold, so one lucky bin below the real
        crossing does not count. ``"first"``: the first bin whose pooled agreement reaches it
        (the paper's; with ``ci="pairs"`` this gives the paper's table).
    ci : {"runs", "pairs", "none"}, default "runs"
        The 95% interval. ``"runs"`` (the book's) is a cluster bootstrap: it resamples whole
        runs (the pairs of a run share a split and a micro-benchmark, so they are not
        independent), recomputes the MDAD with ``method`` and takes the 2.5% and 97.5%
        quantiles (a bound no resample reaches is NaN; from a single run, which every resample
        repeats, the interval is [0, open]). Its coverage against an MDAD pooled
        over thousands of runs is measured by
        ``mbutils.evaluate.interval_coverage.mdad_coverage``. ``"pairs"`` is the paper's
        bootstrap: every bin's pairs are resampled independently, the bins where the 2.5% and
        97.5% agreement bounds first cross the threshold are found, and the interval is made
        symmetric around the MDAD by the larger of the two distances (so ``ci_low`` can be
        negative; ``ci_high`` is NaN when the 2.5% bound never crosses). It always uses the
        first crossings of the bounds, whatever ``method``, and ignores the run-to-run
        variation. With either, a size whose runs hold fewer than
        ``mbutils.evaluate.noise.MIN_PAIRS`` (62) distinct target pairs resolves no bin: its
        interval is widened to [0, open] (``ci_low`` 0 or below, ``ci_high`` NaN), whatever the
        bootstrap gave (a few pairs resampled can all agree, a "[0, 0]" that measures nothing).
        ``"none"``: both bounds NaN.
    n_boot : int, default 1000
        Bootstrap resamples per selector and size, from 1 to 100,000.
    seed : int, default 0
        Root seed of the bootstrap; each selector and size draws from its own generator, so
        a row does not depend on the other rows of the table.

    Returns
    -------
    pandas.DataFrame
        One row per selector and size, in the order they first appear in ``results``:
        ``selector``, ``size``, ``mdad``, ``ci_low``, ``ci_high`` (points; all NaN when the
        threshold is not reached), ``n_pairs`` (pairs counted over all runs), ``reached``,
        ``n_runs`` and ``n_distinct_pairs`` (distinct target pairs over the runs: a fixed
        target set repeats its pairs in every run). ``attrs`` records ``method`` and ``ci``.

    See Also
    --------
    agreement_curve : the curve the MDAD is read from.
    summary_table : Kendall tau and estimation error of the same results.

    Examples
    --------
    One run of three targets: a and b are tied on the seen half (12 of 20 items each), c is
    3 items (15 points) behind both; the estimates order all three a > b > c.

    >>> import pandas as pd
    >>> from mbutils import mdad_table
    >>> toy = pd.DataFrame({"run": 0, "selector": "mine", "size": 5,
    ...                     "model": ["a", "b", "c"], "estimate": [0.8, 0.6, 0.4],
    ...                     "seen_correct": [12, 12, 9], "n_seen": 20,
    ...                     "unseen_correct": [11, 12, 9], "n_unseen": 20})
    >>> mdad_table(toy, ci="none")[["selector", "size", "mdad", "n_pairs"]].values.tolist()
    [['mine', 5, 0.0, 3]]

    The tied pair agrees under the paper's rule (a's estimate is higher), so the first bin
    reaches the threshold. Without ties the first non-empty bin is 15 points; on the unseen
    half, where b beats a by 5 points, the pair a, b disagrees:

    >>> excluded = mdad_table(toy, tie_rule="exclude", ci="none")
    >>> excluded["mdad"].tolist(), excluded["n_pairs"].tolist()
    ([15.0], [2])
    >>> float(mdad_table(toy, split="unseen", ci="none")["mdad"].iloc[0])
    10.0

    On an experiment:

    >>> from mbutils import Protocol, load_benchmark, run_experiment
    >>> bench = load_benchmark("synthetic-gpqa")
    >>> protocol = Protocol(n_sources=60, n_targets=12, n_runs=2)
    >>> res = run_experiment(bench, ["random"], [10, 25], protocol,
    ...                      progress=False, use_cache=False)
    >>> table = mdad_table(res, n_boot=200)
    >>> table.columns.tolist()  # doctest: +NORMALIZE_WHITESPACE
    ['selector', 'size', 'mdad', 'ci_low', 'ci_high', 'n_pairs', 'reached', 'n_runs',
     'n_distinct_pairs']
    >>> table[["size", "n_pairs", "n_runs"]].values.tolist()  # 66 pairs per run
    [[10, 132, 2], [25, 132, 2]]
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
        elif len(pairs.runs) < 2:  # one run resampled is that run every time: an interval of no width, unmeasured
            lo, hi = 0.0, np.nan
        else:
            lo, hi = _ci_runs(agree_runs, total_runs, threshold, method, n_boot, rng, bin_width)
        distinct = pairs.n_distinct
        if ci != "none" and b >= 0 and min(total.sum(), distinct) < MIN_PAIRS:  # too few pairs to resolve any bin
            lo, hi = min(lo, 0.0) if np.isfinite(lo) else 0.0, np.nan
        rows.append({"selector": selector, "size": size, "mdad": mdad, "ci_low": lo, "ci_high": hi,
                     "n_pairs": int(total.sum()), "reached": b >= 0, "n_runs": len(pairs.runs),
                     "n_distinct_pairs": distinct})
    table = pd.DataFrame(rows)
    table.attrs["method"], table.attrs["ci"] = method, ci
    table.attrs["bin_width"] = float(bin_width)  # the MDAD's resolution, which the noise rule allows for
    table.attrs["threshold"] = float(threshold)
    table.attrs["min_pairs"] = MIN_PAIRS
    return table


def _finite_mean_sd(values: np.ndarray) -> tuple[float, float]:
    """Mean and sd over the finite values; NaN (no warning) when there are none, as for
    Kendall tau in runs whose targets or estimates are all tied."""
    finite = values[np.isfinite(values)]
    return (float(finite.mean()), float(finite.std())) if finite.size else (np.nan, np.nan)


def summary_table(results: pd.DataFrame) -> pd.DataFrame:
    """Kendall tau-b and estimation error per selector and size: how well estimates rank and match all targets.

    In every run, ``tau`` is Kendall's tau-b (corrected for ties) between the targets'
    estimates and their true accuracies, and ``error`` the mean absolute difference between
    them in accuracy points; the table gives the mean and standard deviation (``ddof=0``)
    over runs. A run whose estimates or truths are all tied has no tau and is left out of
    its mean.

    Parameters
    ----------
    results : pandas.DataFrame
        Tidy results of one experiment: the table :func:`run_experiment` returns (or
        :func:`audit`'s ``results``), with at least the columns run, selector, size, model,
        estimate, seen_correct, n_seen, unseen_correct and n_unseen. A table that mixes
        experiments (or repeats a run, selector, size, model key) is refused.

    Returns
    -------
    pandas.DataFrame
        One row per selector and size, in the order they first appear: ``selector``,
        ``size``, ``n_runs``, ``tau``, ``tau_sd``, ``error``, ``error_sd`` (judged against the
        seen half, the paper's truth) and the same four with the suffix ``_unseen`` (judged
        against the unseen half).

    See Also
    --------
    mdad_table : reliability for close pairs, which tau summarises away.

    Examples
    --------
    >>> import pandas as pd
    >>> from mbutils import summary_table
    >>> toy = pd.DataFrame({"run": 0, "selector": "mine", "size": 5,
    ...                     "model": ["a", "b", "c"], "estimate": [0.8, 0.6, 0.4],
    ...                     "seen_correct": [12, 12, 9], "n_seen": 20,
    ...                     "unseen_correct": [11, 12, 9], "n_unseen": 20})
    >>> row = summary_table(toy).iloc[0]
    >>> round(float(row["tau"]), 4)  # 2 / sqrt(3 * 2): a, b tied in the truth only
    0.8165
    >>> round(float(row["error"]), 2)  # 100 (0.2 + 0 + 0.05) / 3 points
    8.33
    >>> summary_table(toy).columns.tolist()  # doctest: +NORMALIZE_WHITESPACE
    ['selector', 'size', 'n_runs', 'tau', 'tau_sd', 'error', 'error_sd',
     'tau_unseen', 'tau_sd_unseen', 'error_unseen', 'error_sd_unseen']
    """
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

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

from mbutils.base.errors import ResultsError
from mbutils.base.provenance import check_unmixed
from mbutils.methods.protocol import rng_for
from mbutils.base.validation import check_choice, check_int, check_number

TIE_RULES = ("paper", "exclude")
MDAD_METHODS = ("first", "monotone")
CI_METHODS = ("pairs", "runs", "none")
_EST_TIE = 1e-12  # estimated differences this small are ties (weighted sums of equal terms)

RESULT_COLUMNS = (
    "run", "selector", "size", "model", "estimate",
    "seen_correct", "n_seen", "unseen_correct", "n_unseen",
)
#: The results columns that hold names: read from CSV as text, whatever they look like ("001", "NaN").
RESULT_TEXT_COLUMNS = ("selector", "model", "target_set", "experiment")


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
    _check_values(results)


def _first_row(mask) -> str:
    """'row N' of the first True in ``mask``, counting the header as row 1 (as a spreadsheet does)."""
    return f"row {int(np.flatnonzero(np.asarray(mask))[0]) + 2}"


def _shown(value) -> str:
    """A cell as a message shows it: numbers plainly (nan, inf, 55), anything else quoted."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return f"{float(value):g}"
    return repr(str(value))


def _check_values(results: pd.DataFrame) -> None:
    """Refuse values no experiment writes, naming the column and the first row: numbers computed from
    them (an MDAD moved by one row's impossible count) would look like results."""
    no_selector = results["selector"].isna() | (results["selector"].astype(str).str.strip() == "")
    if no_selector.any():
        raise ResultsError(f"results table: {_first_row(no_selector)} has no selector; every row needs one")
    numbers = {}
    for column in ("run", "size", "estimate", "seen_correct", "n_seen", "unseen_correct", "n_unseen"):
        values = pd.to_numeric(results[column], errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isfinite(values)
        if bad.any():
            raise ResultsError(f"results table: column {column!r}, {_first_row(bad)} holds "
                               f"{_shown(results[column].iloc[int(np.flatnonzero(bad)[0])])}, not a finite number")
        if column != "estimate" and (values != np.round(values)).any():
            off = values != np.round(values)
            raise ResultsError(f"results table: column {column!r}, {_first_row(off)} holds "
                               f"{_shown(values[off][0])}; it must be a whole number")
        numbers[column] = values
    est = numbers["estimate"]
    # some estimators extrapolate a little past 0 or 1 (a weighted or IRT estimate of 1.13 is a result);
    # a table of percentages is not: its typical estimate is tens, not a share
    if np.median(np.abs(est)) > 1.5:
        raise ResultsError(f"results table: column 'estimate' looks like percentages (median {np.median(est):g}, "
                           f"e.g. {_first_row(np.abs(est) > 1.5)} holds {_shown(est[np.abs(est) > 1.5][0])}); "
                           "estimates are shares of items, around 0 to 1")
    checks = [(numbers["run"] < 0, "'run' is negative"), (numbers["size"] < 1, "'size' is below 1"),
              (numbers["n_seen"] < 1, "'n_seen' is below 1"), (numbers["n_unseen"] < 0, "'n_unseen' is negative"),
              ((numbers["seen_correct"] < 0) | (numbers["seen_correct"] > numbers["n_seen"]),
               "'seen_correct' is not between 0 and 'n_seen'"),
              ((numbers["unseen_correct"] < 0) | (numbers["unseen_correct"] > numbers["n_unseen"]),
               "'unseen_correct' is not between 0 and 'n_unseen'")]
    for bad, what in checks:
        if bad.any():
            raise ResultsError(f"results table: {_first_row(bad)}: {what}; it must come from "
                               "`python -m mbutils experiment`")
    for group_column in ("n_seen", "n_unseen"):
        per_run = pd.Series(numbers[group_column]).groupby(numbers["run"]).nunique()
        if (per_run > 1).any():
            raise ResultsError(f"results table: run {per_run.index[per_run > 1][0]:g} has different "
                               f"'{group_column}' values; one run judges every target on the same items")


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
               bin_width: float = 0.5, tie_rule: str = "paper", method: str = "first",
               ci: str = "pairs", n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """MDAD per selector and size: the smallest accuracy gap a micro-benchmark orders reliably.

    The MDAD (minimum detectable ability difference) is the left edge of the first bin of
    the :func:`agreement_curve` whose agreement reaches ``threshold``: with the paper's
    0.5-point bins, ``MDAD = 0.5 * min{b : A(b) >= threshold}`` where a pair's bin is
    ``b = floor(200 |c_a - c_b| / N)``, computed exactly from integer correct counts. Pairs
    closer than the MDAD are ordered correctly less than ``threshold`` of the time; a curve
    that never reaches it has no MDAD ("not reached"). All values are accuracy points.

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
    method : {"first", "monotone"}, default "first"
        ``"first"``: the first bin whose pooled agreement reaches the threshold (the paper's).
        ``"monotone"``: the first bin where a non-decreasing (isotonic, pair-weighted) fit of
        the curve reaches it, so one lucky bin below the real crossing does not count.
    ci : {"pairs", "runs", "none"}, default "pairs"
        The 95% interval. ``"pairs"`` is the paper's bootstrap: every bin's pairs are
        resampled independently, the bins where the 2.5% and 97.5% agreement bounds first
        cross the threshold are found, and the interval is made symmetric around the MDAD by
        the larger of the two distances (so ``ci_low`` can be negative; ``ci_high`` is NaN
        when the 2.5% bound never crosses). It always uses the first crossings of the bounds,
        whatever ``method``. ``"runs"`` resamples whole runs (the pairs of a run share a split
        and a micro-benchmark, so they are not independent), recomputes the MDAD with
        ``method`` and takes the 2.5% and 97.5% quantiles (a bound no resample reaches is
        NaN). ``"none"``: both bounds NaN.
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
        threshold is not reached), ``n_pairs`` (pairs counted over all runs), ``reached``
        and ``n_runs``.

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
    >>> table.columns.tolist()
    ['selector', 'size', 'mdad', 'ci_low', 'ci_high', 'n_pairs', 'reached', 'n_runs']
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

"""One noise rule: when is one MDAD really smaller than another?

Every comparison the book words — "most reliable", "beats", "catches up", "no longer" —
goes through :func:`compare`. Two MDADs differ only when their 95% intervals are
disjoint; otherwise the difference is *within noise*. The interval is the one the tables
show: the paper's per-bin pair bootstrap of :func:`mbutils.evaluate.metrics.mdad_table` (its
default ``ci``), or whatever interval the table handed in carries, widened at the top by
one gap bin (0.5 points unless the table says otherwise): an MDAD is the lower edge of the
first bin that reaches the threshold, so the crossing it stands for lies anywhere in that
bin, and at large sizes the bootstrap bounds often fall in the MDAD's own bin ([1.5, 1.5]).
An MDAD that is not reached is the point at infinity (worse than any reached MDAD with a
finite upper bound); a reached MDAD whose upper bound is open (the pessimistic bound never
crossed) reaches to infinity; one with no interval at all is its own bin.

Too few pairs to tell: every verdict here needs at least :data:`MIN_PAIRS` target pairs pooled
over the runs at each size compared (the ``n_pairs`` of
:func:`mbutils.evaluate.metrics.mdad_table`). An MDAD is where a bin's agreement share crosses 0.8; the
binomial standard deviation of such a share over n pairs is ``sqrt(0.8 * 0.2 / n)``, and its 95%
half-width ``1.96 sd`` falls to 0.1 (a share of 0.8 told from 0.7 and from 0.9) only at
``n >= 1.96**2 * 0.16 / 0.1**2``, about 62 pairs. A size with fewer pairs in all of its bins
together has fewer than that in the bin that decides its MDAD, so its bootstrap interval (which
resamples those few pairs) can come out as a single bin, "[0, 0]", without measuring anything:
:func:`mbutils.evaluate.metrics.mdad_table` widens such an interval to [0, open] and the comparisons
here answer :data:`TOO_FEW` ("too few pairs to tell"), never better or worse.

Disjoint 95% intervals are a conservative test (stricter than a 5% test of the
difference), which is the point: the book should not crown a winner that the run-to-run
spread could have made.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mbutils.base.names import count_noun

BETTER, WORSE, WITHIN = "better", "worse", "within noise"
#: The verdict of a comparison whose tables hold fewer than :data:`MIN_PAIRS` pairs at a size.
TOO_FEW = "too few pairs to tell"
#: Fewest target pairs (pooled over runs, per selector and size) a verdict needs: the n at which the
#: 95% binomial half-width of an agreement share of 0.8 is 0.1 points of share (see the module docstring).
MIN_PAIRS = int(np.ceil(1.959964 ** 2 * 0.8 * 0.2 / 0.1 ** 2))
#: The gap-bin width (points) assumed when a table does not carry its own (``attrs["bin_width"]``).
DEFAULT_BIN = 0.5


def intervals(table: pd.DataFrame, bin_width: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """[low, high] of every row's MDAD under the rule's conventions (see the module docstring);
    ``bin_width`` defaults to the table's own (``attrs``), else :data:`DEFAULT_BIN`."""
    width = float(bin_width if bin_width is not None else table.attrs.get("bin_width", DEFAULT_BIN))
    m = table["mdad"].to_numpy(float)
    lo = table["ci_low"].to_numpy(float) if "ci_low" in table else np.full(len(m), np.nan)
    hi = table["ci_high"].to_numpy(float) if "ci_high" in table else np.full(len(m), np.nan)
    reached = np.isfinite(m)
    no_ci = reached & ~np.isfinite(lo) & ~np.isfinite(hi)
    low = np.where(~reached, np.inf, np.where(np.isfinite(lo), lo, m))
    high = np.where(~reached, np.inf, np.where(np.isfinite(hi), hi, np.where(no_ci, m, np.inf))) + width
    return low, high


def too_few(table: pd.DataFrame) -> np.ndarray:
    """Per row: True where the row's MDAD rests on fewer than :data:`MIN_PAIRS` pooled target pairs
    (its ``n_pairs``; a table without that column is taken to have enough)."""
    if "n_pairs" not in table:
        return np.zeros(len(table), dtype=bool)
    n = pd.to_numeric(table["n_pairs"], errors="coerce").to_numpy(float)
    return np.isfinite(n) & (n < MIN_PAIRS)


def runs_needed(n_pairs: int, n_runs: int) -> int:
    """Runs of the same pool that would pool :data:`MIN_PAIRS` target pairs per size."""
    per_run = max(n_pairs / max(n_runs, 1), 1e-9)
    return int(np.ceil(MIN_PAIRS / per_run))


def targets_needed(n_runs: int) -> int:
    """Targets per run that would pool :data:`MIN_PAIRS` target pairs per size over ``n_runs`` runs."""
    t = 2
    while max(n_runs, 1) * t * (t - 1) // 2 < MIN_PAIRS:
        t += 1
    return t


def too_few_text(table: pd.DataFrame) -> str:
    """Why a table's comparisons have no verdict ("" when every row has :data:`MIN_PAIRS` pairs):
    the fewest pairs a size has, the minimum and what would reach it, from the table's
    ``n_pairs`` and ``n_runs``."""
    flags = too_few(table)
    if not flags.any():
        return ""
    n = int(pd.to_numeric(table["n_pairs"]).to_numpy()[flags].min())
    runs = int(table["n_runs"].to_numpy()[flags].max()) if "n_runs" in table else 1
    return too_few_sentence(n, runs)


def too_few_sentence(n_pairs: int, n_runs: int) -> str:
    """The sentence of :func:`too_few_text` for ``n_pairs`` pooled pairs over ``n_runs`` runs."""
    return (f"too few pairs to tell: {n_pairs} target pairs per size ({count_noun(n_runs, 'run')}), "
            f"fewer than the {MIN_PAIRS} an MDAD comparison needs (the binomial 95% margin of an agreement share "
            f"of 0.8 is ±0.1 only from {MIN_PAIRS} pairs); about {runs_needed(n_pairs, n_runs)} runs, or "
            f"{targets_needed(n_runs)} targets per run, would give that many")


def compare(low_a, high_a, low_b, high_b) -> np.ndarray:
    """``better`` where A's interval lies wholly below B's, ``worse`` wholly above, else ``within noise``
    (smaller MDAD is better; vectorised over equal-shaped arrays)."""
    low_a, high_a, low_b, high_b = map(lambda x: np.asarray(x, dtype=float), (low_a, high_a, low_b, high_b))
    both_infinite = np.isinf(low_a) & np.isinf(low_b)  # both not reached: no difference
    better = (high_a < low_b) & ~both_infinite
    worse = (low_a > high_b) & ~both_infinite
    return np.where(better, BETTER, np.where(worse, WORSE, WITHIN))


def wide_intervals(table: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Size x selector tables of interval lows and highs (missing cells: NaN)."""
    low, high = intervals(table)
    t = table.assign(_low=low, _high=high)
    lows = t.pivot_table(index="size", columns="selector", values="_low", dropna=False, aggfunc="first")
    highs = t.pivot_table(index="size", columns="selector", values="_high", dropna=False, aggfunc="first")
    order = list(dict.fromkeys(table["selector"]))
    return lows.reindex(columns=order), highs.reindex(columns=order)


def versus(table: pd.DataFrame, selector: str, baseline: str = "random") -> pd.Series:
    """Per size run by both: ``selector`` against ``baseline`` under the rule (index: size)."""
    lows, highs = wide_intervals(table)
    if selector not in lows or baseline not in lows:
        return pd.Series(dtype=object)
    both = lows[[selector, baseline]].notna().all(axis=1)
    verdict = compare(lows.loc[both, selector], highs.loc[both, selector],
                      lows.loc[both, baseline], highs.loc[both, baseline])
    out = pd.Series(verdict, index=lows.index[both].astype(int))
    few = _few_sizes(table, [selector, baseline])
    return out.where(~out.index.isin(few), TOO_FEW)


def _few_sizes(table: pd.DataFrame, selectors=None) -> set:
    """Sizes at which one of ``selectors`` (default: all) has fewer than :data:`MIN_PAIRS` pairs."""
    part = table if selectors is None else table[table["selector"].isin(list(selectors))]
    return {int(k) for k in part["size"].to_numpy()[too_few(part)]}


def clear_best(table: pd.DataFrame, size: int) -> str | None:
    """The selector at ``size`` that is better than every other under the rule, or None."""
    part = table[table["size"] == size]
    if len(part) < 2 or too_few(part).any():
        return None
    low, high = intervals(part)
    i = int(np.argmin(high))  # only the lowest upper end can lie below every other interval
    others = np.arange(len(part)) != i
    clear = (compare(low[i], high[i], low[others], high[others]) == BETTER).all()
    return str(part["selector"].iloc[i]) if clear else None


def not_worse_than_all(table: pd.DataFrame, selector: str = "random") -> pd.Series:
    """Per size: True where ``selector`` is not worse than any other selector under the rule
    (and is reached, and every selector has :data:`MIN_PAIRS` pairs there); the catch-up test."""
    lows, highs = wide_intervals(table)
    if selector not in lows:
        return pd.Series(dtype=bool)
    others = [c for c in lows.columns if c != selector]
    ok = pd.Series(True, index=lows.index)
    for other in others:
        present = lows[other].notna()
        verdict = compare(lows[selector], highs[selector], lows[other], highs[other])
        ok &= ~(present & (verdict == WORSE))
    few = _few_sizes(table)  # too few pairs: no verdict, so no catch-up either
    return ok & np.isfinite(lows[selector]) & ~lows.index.isin(few)


def from_size_on(ok: pd.Series) -> int | None:
    """The smallest size from which ``ok`` holds at it and every larger size (None if the largest fails)."""
    ok = ok.sort_index()
    tail = ok[::-1].cumprod()[::-1].astype(bool)
    return int(tail.index[tail.to_numpy()][0]) if tail.any() else None


def random_within_ci_from(table: pd.DataFrame, baseline: str = "random") -> int | None:
    """Smallest size from which (at it and every larger size run) ``baseline`` is not worse than
    any other method under the noise rule — its interval reaches down to the upper end of every
    other method's — and its MDAD is reached; None if that fails at the largest size."""
    return from_size_on(not_worse_than_all(table, baseline))


def thin_pool(detectable: pd.Series, n_runs: int, resolution: float = 2.0) -> str:
    """Why a pool is too thin for the comparisons a page makes ("" when it is not).

    ``detectable``: per size, the MDAD difference the page's paired comparisons
    (:func:`mbutils.evaluate.paired.compare_selectors`) would see with 80% power. The pool is thin
    when the median over sizes exceeds ``resolution`` points; the text gives the range and how
    many runs would bring the median down to ``resolution``."""
    values = detectable.dropna()
    values = values[np.isfinite(values.to_numpy(dtype=float))]
    if values.empty:
        return ("random sampling's MDAD is not reached at enough sizes to measure how large a difference "
                "its comparisons could see")
    median = float(values.median())
    if median <= resolution:
        return ""
    runs = int(np.ceil(n_runs * (median / resolution) ** 2))
    ends = values.sort_index()
    span = (f"from about {ends.iloc[0]:.1f} points at k = {int(ends.index[0])} to {ends.iloc[-1]:.1f} at "
            f"k = {int(ends.index[-1])}, median {median:.1f}" if len(ends) > 1 else
            f"about {median:.1f} points at k = {int(ends.index[0])}")
    return (f"its paired comparisons see a difference between two methods' MDADs with 80% power only {span}, "
            f"more than the {resolution:g} points this book asks before it calls methods alike; about "
            f"{runs:,} runs would bring the median to {resolution:g}")

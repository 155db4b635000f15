"""One noise rule: when is one MDAD really smaller than another?

Every comparison the book words — "most reliable", "beats", "catches up", "no longer" —
goes through :func:`compare`. Two MDADs differ only when their 95% intervals are
disjoint; otherwise the difference is *within noise*. The interval is the one the tables
show: the paper's per-bin pair bootstrap of :func:`mbutils.results.metrics.mdad_table` (its
default ``ci``), or whatever interval the table handed in carries, widened at the top by
one gap bin (0.5 points unless the table says otherwise): an MDAD is the lower edge of the
first bin that reaches the threshold, so the crossing it stands for lies anywhere in that
bin, and at large sizes the bootstrap bounds often fall in the MDAD's own bin ([1.5, 1.5]).
An MDAD that is not reached is the point at infinity (worse than any reached MDAD with a
finite upper bound); a reached MDAD whose upper bound is open (the pessimistic bound never
crossed) reaches to infinity; one with no interval at all is its own bin.

Disjoint 95% intervals are a conservative test (stricter than a 5% test of the
difference), which is the point: the book should not crown a winner that the run-to-run
spread could have made.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

BETTER, WORSE, WITHIN = "better", "worse", "within noise"
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
    return pd.Series(verdict, index=lows.index[both].astype(int))


def clear_best(table: pd.DataFrame, size: int) -> str | None:
    """The selector at ``size`` that is better than every other under the rule, or None."""
    part = table[table["size"] == size]
    if len(part) < 2:
        return None
    low, high = intervals(part)
    i = int(np.argmin(high))  # only the lowest upper end can lie below every other interval
    others = np.arange(len(part)) != i
    clear = (compare(low[i], high[i], low[others], high[others]) == BETTER).all()
    return str(part["selector"].iloc[i]) if clear else None


def not_worse_than_all(table: pd.DataFrame, selector: str = "random") -> pd.Series:
    """Per size: True where ``selector`` is not worse than any other selector under the rule
    (and is reached); the catch-up test."""
    lows, highs = wide_intervals(table)
    if selector not in lows:
        return pd.Series(dtype=bool)
    others = [c for c in lows.columns if c != selector]
    ok = pd.Series(True, index=lows.index)
    for other in others:
        present = lows[other].notna()
        verdict = compare(lows[selector], highs[selector], lows[other], highs[other])
        ok &= ~(present & (verdict == WORSE))
    return ok & np.isfinite(lows[selector])


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
    (:func:`mbutils.results.paired.compare_selectors`) would see with 80% power. The pool is thin
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

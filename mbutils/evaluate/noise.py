"""One noise rule: when is one MDAD really smaller than another, and when is it no worse?

Every comparison the book words — "most reliable", "beats", "catches up", "no longer" — reads one
thing: a 95% interval ``[low, high]`` of the difference of two MDADs, ``MDAD_a - MDAD_b``.

* **Paired**, where the two share their runs (selectors of one experiment):
  :func:`mbutils.evaluate.paired.compare_selectors` resamples whole runs once for both and takes the
  2.5% and 97.5% quantiles of the differences.
* **Unpaired**, across experiments (the paper's tables against ours, a sweep over source counts):
  :func:`unpaired_records` takes each MDAD's own 95% interval, widened at the top by one gap bin
  (0.5 points unless the table says otherwise: an MDAD is the lower edge of the first bin that
  reaches the threshold, so the crossing it stands for lies anywhere in that bin), and bounds the
  difference by ``low_a - high_b`` and ``high_a - low_b``. Each bound fails with probability at
  most 2.5% + 2.5%, so the interval is conservative; it is the overlap rule in other words (the
  difference excludes 0 exactly when the two widened intervals are disjoint).

On that interval: A is **lower** (better) where ``high < 0``, **higher** where ``low > 0``, else
**within noise**, which is failure to tell, never equality. Equality within a margin is its own
test: A is **no worse than B by more than** :data:`MARGIN` points where ``high <= MARGIN`` (a
non-inferiority test at 2.5%). "Random sampling catches up from k" (:func:`catch_up`) asks it of
every other method at every size from k on, and holds only if every one of those tests passes: an
intersection-union test, valid at 5% (here 2.5%) with no correction for the number of tests.

No verdict, and why (the reason a page gives is the true one): **too few target pairs** (the runs
hold fewer than :data:`MIN_PAIRS` distinct target pairs; the pool's models may be all there is:
**too few models**), an MDAD not reached or an interval open above (**cannot tell**), or an
interval too wide for the margin (**too few runs**; :func:`runs_for_margin` says how many would do).

Why :data:`MIN_PAIRS`: an MDAD is where a bin's agreement share crosses 0.8; the binomial standard
deviation of such a share over n pairs is ``sqrt(0.8 * 0.2 / n)``, and its 95% half-width
``1.96 sd`` falls to 0.1 (a share of 0.8 told from 0.7 and from 0.9) only at
``n >= 1.96**2 * 0.16 / 0.1**2``, about 62 pairs. A size with fewer distinct pairs has fewer than
that in the bin that decides its MDAD, so its bootstrap interval (which resamples those few pairs)
can come out as a single bin, "[0, 0]", without measuring anything:
:func:`mbutils.evaluate.metrics.mdad_table` widens such an interval to [0, open] and the comparisons
here answer :data:`TOO_FEW`, never better or worse. Pairs are counted once however many runs repeat
them: a fixed target set of 12 models has 66 pairs, in every run.

An MDAD that is not reached is the point at infinity (worse than any reached MDAD with a finite
upper bound); a reached MDAD whose upper bound is open reaches to infinity; one with no interval at
all is its own bin.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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
#: The non-inferiority margin (points): random sampling "catches up" where its MDAD exceeds every other
#: method's by at most this much, at 95% confidence.
MARGIN = 2.0
#: A comparison's state under the rule (:func:`state`).
NON_INFERIOR, UNDECIDED, CANNOT = "no worse than the margin", "undecided", "cannot tell"


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


def pair_counts(table: pd.DataFrame) -> np.ndarray:
    """Per row, the distinct target pairs its MDAD rests on: ``n_distinct_pairs`` where the table has it
    (:func:`mbutils.evaluate.metrics.mdad_table`), else ``n_pairs`` (NaN without either)."""
    n = np.full(len(table), np.nan)
    for column in ("n_pairs", "n_distinct_pairs"):
        if column in table:
            values = pd.to_numeric(table[column], errors="coerce").to_numpy(float)
            n = np.where(np.isfinite(values), np.fmin(values, n) if column == "n_distinct_pairs" else values, n)
    return n


def too_few(table: pd.DataFrame) -> np.ndarray:
    """Per row: True where the row's MDAD rests on fewer than :data:`MIN_PAIRS` distinct target pairs
    (:func:`pair_counts`; a table without a count is taken to have enough)."""
    n = pair_counts(table)
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
    """Why a table's comparisons have no verdict ("" when every row has :data:`MIN_PAIRS` distinct pairs):
    the fewest pairs a size has, the minimum and what would reach it, from the table's pair counts
    and ``n_runs``."""
    flags = too_few(table)
    if not flags.any():
        return ""
    n = int(pair_counts(table)[flags].min())
    runs = int(table["n_runs"].to_numpy()[flags].max()) if "n_runs" in table else 1
    repeated = ("n_pairs" in table and "n_distinct_pairs" in table
                and bool((pd.to_numeric(table["n_distinct_pairs"]) < pd.to_numeric(table["n_pairs"]))[flags].any()))
    return too_few_sentence(n, runs, repeated=repeated)


def too_few_sentence(n_pairs: int, n_runs: int, *, repeated: bool = False) -> str:
    """The sentence of :func:`too_few_text` for ``n_pairs`` distinct target pairs over ``n_runs`` runs;
    ``repeated``: the runs repeat their pairs (a fixed target set), so more runs add none and the limit
    is the number of models."""
    head = (f"too few pairs to tell: {n_pairs} distinct target pairs over {count_noun(n_runs, 'run')}, "
            f"fewer than the {MIN_PAIRS} an MDAD comparison needs (the binomial 95% margin of an agreement share "
            f"of 0.8 is ±0.1 only from {MIN_PAIRS} pairs)")
    if repeated:
        return head + f"; every run compares the same models, so only more models ({targets_needed(1)} or more) would do"
    return (head + f"; about {runs_needed(n_pairs, n_runs)} runs, or {targets_needed(n_runs)} targets per run, "
            "would give that many")


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


def unpaired_records(table: pd.DataFrame, selector: str = "random") -> dict[str, list[dict]]:
    """The unpaired half of the rule: per other selector of ``table``, one record per size both ran with the
    interval of ``MDAD_selector - MDAD_other`` from the two MDADs' own intervals (:func:`intervals`, each
    widened at the top by one gap bin): ``low = low_a - high_b``, ``high = high_a - low_b``. The records have
    the fields of :func:`mbutils.evaluate.paired.compare_selectors`' rows that :func:`catch_up` reads."""
    low, high = intervals(table)
    t = table.assign(rule_low=low, rule_high=high, rule_n=pair_counts(table))
    if selector not in set(t["selector"]):
        return {}
    own = t[t["selector"] == selector].set_index("size")
    out = {}
    for other, part in t[t["selector"] != selector].groupby("selector", sort=False):
        rows = []
        for row in part.itertuples(index=False):
            if row.size not in own.index:
                continue
            mine = own.loc[row.size]
            neither = np.isinf(mine["rule_low"]) and np.isinf(row.rule_low)  # both not reached: nothing to compare
            with np.errstate(invalid="ignore"):
                lo = np.nan if neither else float(mine["rule_low"] - row.rule_high)
                hi = np.nan if neither else float(mine["rule_high"] - row.rule_low)
            m_a, m_b = float(mine["mdad"]), float(row.mdad)
            few = min(float(mine["rule_n"]), float(row.rule_n)) < MIN_PAIRS
            if few:
                verdict = TOO_FEW
            elif hi < 0:  # B's interval wholly above A's (B not reached included)
                verdict = BETTER
            elif not np.isfinite(m_a):  # A not reached: no interval of the difference to read
                verdict = CANNOT
            elif lo > 0:
                verdict = WORSE
            elif neither or not np.isfinite(hi):
                verdict = CANNOT
            else:
                verdict = WITHIN
            n = min(float(mine["rule_n"]), float(row.rule_n))
            rows.append({"size": int(row.size), "verdict": verdict,
                         "difference": (m_a - m_b) if np.isfinite(m_a) and np.isfinite(m_b) else None,
                         "low": lo if np.isfinite(lo) else None, "high": hi if np.isfinite(hi) else None,
                         "n_runs": int(mine["n_runs"]) if "n_runs" in own and np.isfinite(mine["n_runs"]) else None,
                         "n_distinct_pairs": int(n) if np.isfinite(n) else None, "paired": False})
        out[str(other)] = rows
    return out


def state(record: dict, margin: float = MARGIN) -> str:
    """One comparison (a record of :func:`mbutils.evaluate.paired.compare_selectors` or
    :func:`unpaired_records`, A against B) under the rule: :data:`WORSE` (A's MDAD higher beyond the noise),
    :data:`NON_INFERIOR` (the upper 95% bound of A - B at most ``margin``), :data:`TOO_FEW`, :data:`CANNOT`
    (an MDAD not reached, an interval open) or :data:`UNDECIDED` (the interval too wide for the margin)."""
    verdict = record.get("verdict")
    if verdict == TOO_FEW:
        return TOO_FEW
    if verdict == BETTER:  # A lower beyond the noise (its upper bound below 0, or B not reached)
        return NON_INFERIOR
    low, high = record.get("low"), record.get("high")
    low = np.nan if low is None else float(low)
    high = np.nan if high is None else float(high)
    if verdict == WORSE or (np.isfinite(low) and low > 0):
        return WORSE
    if verdict in (CANNOT, "cannot tell") or not np.isfinite(high):
        return CANNOT
    return NON_INFERIOR if high <= margin else UNDECIDED


def runs_for_margin(record: dict, margin: float = MARGIN) -> float:
    """Runs that would bring a comparison's upper bound within ``margin`` if its difference stayed where it
    is (the interval's upper half-width falls as one over the square root of the runs); ``inf`` when the
    difference itself exceeds the margin, NaN when the record cannot say."""
    d, high, runs = record.get("difference"), record.get("high"), record.get("n_runs")
    if d is None or high is None or not runs or not (np.isfinite(float(d)) and np.isfinite(float(high))):
        return np.nan
    d, high = float(d), float(high)
    if d >= margin:
        return np.inf
    return float(np.ceil(int(runs) * max((high - d) / (margin - d), 1.0) ** 2))


@dataclass(frozen=True)
class CatchUp:
    """The verdict of :func:`catch_up` for one benchmark."""

    size: int | None           # the smallest size from which every comparison is no worse than the margin
    states: dict               # size -> {other: state}
    reason: str                # why there is no size ("" when there is one)
    runs: float                # runs that would decide the undecided comparisons (NaN: not the limit)
    margin: float
    largest: int | None
    highest: dict = field(default_factory=dict)  # size -> the largest upper bound of the difference there

    @property
    def kind(self) -> str:
        """``catches up``, ``worse``, ``too few``, ``cannot tell`` or ``too few runs``."""
        if self.size is not None:
            return "catches up"
        if not self.states:
            return CANNOT
        last = set(self.states[self.largest].values())
        return ("worse" if WORSE in last else "too few" if TOO_FEW in last else
                CANNOT if CANNOT in last else "too few runs")


def catch_up(comparisons: dict[str, list[dict]], margin: float = MARGIN) -> CatchUp:
    """From which size random sampling (A) is no worse than every other method (B) by more than ``margin``.

    ``comparisons``: other method -> records of A against it, one per size (paired:
    ``comparison_records(compare_selectors(results, "random", other))``; unpaired: :func:`unpaired_records`).
    At a size, every comparison must pass the non-inferiority test (:func:`state`); the answer is the
    smallest size from which that holds at it and every larger size run, an intersection-union test
    over methods and sizes (each test at 2.5%, so the whole at most 2.5%, with no correction for how many).
    Without such a size, ``reason`` says the true cause at the sizes that fail."""
    sizes = sorted({int(r["size"]) for records in comparisons.values() for r in records})
    states = {k: {o: state(r, margin) for o, records in comparisons.items() for r in records if int(r["size"]) == k}
              for k in sizes}
    highest = {k: max((float(r["high"]) for records in comparisons.values() for r in records
                       if int(r["size"]) == k and r.get("high") is not None), default=np.nan) for k in sizes}
    ok = pd.Series({k: bool(v) and all(x == NON_INFERIOR for x in v.values()) for k, v in states.items()}, dtype=bool)
    start = from_size_on(ok) if len(ok) else None
    largest = sizes[-1] if sizes else None
    if start is not None or not sizes:
        return CatchUp(start, states, "" if sizes else "no method was compared with random sampling", np.nan,
                       margin, largest, highest)
    result = CatchUp(None, states, "", np.nan, margin, largest, highest)
    kind = result.kind
    last = [r for records in comparisons.values() for r in records if int(r["size"]) == largest]
    if kind == "worse":
        reason = f"a method's MDAD is lower than random sampling's beyond the noise at the largest size, {largest}"
        runs = np.nan
    elif kind == "too few":
        r = next(r for r in last if state(r, margin) == TOO_FEW)
        n = r.get("n_distinct_pairs")
        reason = (f"too few pairs to tell at k = {largest}"
                  + (f": {int(n)} distinct target pairs, fewer than {MIN_PAIRS}" if n else ""))
        runs = np.nan
    elif kind == CANNOT:
        reason = f"an MDAD not reached, or an interval open above, at k = {largest}"
        runs = np.nan
    else:
        # the sizes from which nothing worse, too few or open stands in the way: what more runs would decide
        loose = from_size_on(pd.Series({k: all(x in (NON_INFERIOR, UNDECIDED) for x in v.values())
                                        for k, v in states.items()}, dtype=bool))
        needs = [runs_for_margin(r, margin) for records in comparisons.values() for r in records
                 if int(r["size"]) >= (loose or largest) and state(r, margin) == UNDECIDED]
        needs = [n for n in needs if not np.isnan(n)]
        runs = max(needs) if needs else np.nan
        top = highest.get(largest, np.nan)
        reason = f"too few runs: upper bound {top:.1f} points at k = {largest}, above the {margin:g}-point margin"
        if np.isinf(runs):
            reason += (f"; a method's MDAD is more than {margin:g} points lower here, which more runs would settle only "
                       "if it is noise")
        elif np.isfinite(runs):
            reason += f"; about {int(runs):,} runs would bring every bound from k = {loose or largest} on within it"
    return CatchUp(None, states, reason, runs, margin, largest, highest)


def random_within_ci_from(table: pd.DataFrame, baseline: str = "random", margin: float = MARGIN) -> int | None:
    """The rule on one MDAD table, unpaired (tables of different experiments, such as the paper's): the
    smallest size from which ``baseline`` is no worse than every other method by more than ``margin`` at it
    and every larger size (:func:`catch_up` of :func:`unpaired_records`); None if the largest size fails."""
    return catch_up(unpaired_records(table, baseline), margin).size


def from_size_on(ok: pd.Series) -> int | None:
    """The smallest size from which ``ok`` holds at it and every larger size (None if the largest fails)."""
    ok = ok.sort_index()
    tail = ok[::-1].cumprod()[::-1].astype(bool)
    return int(tail.index[tail.to_numpy()][0]) if tail.any() else None


def thin_pool(detectable: pd.Series, n_runs: int, resolution: float = MARGIN) -> str:
    """Why a page's paired comparisons are too coarse for the comparisons it makes ("" when they are not).

    ``detectable``: per size, the MDAD difference the page's paired comparisons
    (:func:`mbutils.evaluate.paired.compare_selectors`) would see with 80% power. They are too coarse
    when the median over sizes exceeds ``resolution`` points (the margin of the rule); the text gives the
    range and how many runs would bring the median down to ``resolution`` (the standard error falls as one
    over the square root of the runs). That is the runs for one comparison at the median size; a
    catch-up verdict needs every comparison at every size from k on within the margin, so its own count
    (:func:`catch_up`) is usually larger."""
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
    return (f"with {count_noun(n_runs, 'run')}, its paired comparisons see a difference between two methods' MDADs "
            f"with 80% power only {span}, more than the {resolution:g}-point margin of the noise rule; about "
            f"{runs:,} runs would bring one comparison at the median size to {resolution:g} points")

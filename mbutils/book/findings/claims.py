"""Sentences of the book computed from one table's numbers: each claim's wording follows the data.

Each function returns a :class:`~mbutils.evaluate.claim.Claim` (the sentence and its inputs). No
qualitative word here is fixed in advance: "not reached", "within noise" are chosen by comparison.
Comparisons of selectors of one experiment are paired (:mod:`mbutils.evaluate.claims_paired`); the
unpaired noise rule here serves tables of different experiments (the paper's against ours).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from mbutils.evaluate import noise
from mbutils.evaluate.claim import Claim, frame as _frame, pts as _pts, records as _records
from mbutils.evaluate.noise import random_within_ci_from
from mbutils.base.names import label, possessive
from mbutils.base.tables import mdad_text, upper_bound_text
from mbutils.methods.selectors import needs_sources


def recompute(payload: str) -> Claim:
    """The claim a payload's inputs give today (its ``text`` should equal the stored one)."""
    data = json.loads(payload)
    return globals()[data["fn"]](**data["inputs"])


# ------------------------------------------------------------------------------ claims
def catch_up(mdads: dict[str, list[dict]] | dict[str, pd.DataFrame]) -> Claim:
    """Per benchmark, the smallest size from which random sampling is no worse than any method by more than
    the margin, at that size and every larger size run, by the unpaired half of the noise rule (tables of
    another experiment, such as the paper's: :func:`mbutils.evaluate.noise.unpaired_records` and
    :func:`mbutils.evaluate.noise.catch_up`, worded as :func:`catch_up_paired` words the paired one)."""
    tables = {name: (t if isinstance(t, pd.DataFrame) else _frame(t)) for name, t in mdads.items()}
    inputs = {name: _records(table, [c for c in ("selector", "size", "mdad", "ci_low", "ci_high", "n_pairs",
                                                 "n_runs", "n_distinct_pairs") if c in table])
              for name, table in tables.items()}
    comparisons = {name: noise.unpaired_records(table) for name, table in tables.items()}
    return Claim(catch_up_paired(comparisons).text, "catch_up", {"mdads": inputs})


catch_up_claim = catch_up  # the name a page reads it by (``book.catch_up`` is the rule itself)

#: Kendall tau at or above this is "high" in the book's sentences (the level :func:`tau_from` asks of it).
TAU_HIGH = 0.8


def tau_and_mdad(summary: pd.DataFrame | list[dict], mdad: pd.DataFrame | list[dict], size: int,
                 threshold: float = 0.8, selector: str = "random") -> Claim:
    """At ``size``: ``selector``'s Kendall tau beside its MDAD (the page's table's cell, with its interval),
    and whether the tau is high (at least :data:`TAU_HIGH`) while close pairs are not reliably ordered, the
    paper's point {yauney2025}, or not on this data."""
    s = summary if isinstance(summary, pd.DataFrame) else _frame(summary)
    m = mdad if isinstance(mdad, pd.DataFrame) else _frame(mdad)
    s = s[(s["selector"] == selector) & (s["size"] == size)]
    m = m[(m["selector"] == selector) & (m["size"] == size)]
    cols = [c for c in ("selector", "size", "mdad", "ci_low", "ci_high", "n_pairs", "n_distinct_pairs", "n_runs")
            if c in m]
    inputs = {"summary": _records(s, ["selector", "size", "tau"]), "mdad": _records(m, cols), "size": int(size),
              "threshold": float(threshold), "selector": selector}
    if s.empty or m.empty:
        return Claim(f"{label(selector)} was not run at k = {size}", "tau_and_mdad", inputs)
    tau, row = float(s["tau"].iloc[0]), m.iloc[0]
    who = "random sampling" if selector == "random" else label(selector)
    head = f"at k = {size} {who} has Kendall τ = {tau:.2f}"
    level = f"{'at least' if tau >= TAU_HIGH else 'below'} {TAU_HIGH:g}"
    if noise.too_few(m).any():
        text = f"{head} ({level}), and its MDAD rests on too few target pairs to say how close a pair it orders"
    elif not np.isfinite(float(row["mdad"])):
        text = f"{head} ({level}), yet its MDAD is not reached: no gap is ordered correctly {threshold:.0%} of the time"
    elif tau >= TAU_HIGH and float(row["mdad"]) >= 1.0:
        text = (f"{head} (high: {level}), yet its MDAD is {_mdad_ci(row)}: closer pairs are ordered correctly less "
                f"than {threshold:.0%} of the time")
    elif tau < TAU_HIGH:
        text = f"{head} ({level}, so not high) and an MDAD of {_mdad_ci(row)}"
    else:
        text = f"{head} (high) and an MDAD of {_mdad_ci(row)}: here close comparisons are reliable too"
    return Claim(text, "tau_and_mdad", inputs)


def coverage_claim(book_table: pd.DataFrame | list[dict], paper_table: pd.DataFrame | list[dict]) -> Claim:
    """How often the book's and the paper's 95% MDAD intervals held the pooled MDAD, over the sizes of two
    :func:`mbutils.evaluate.interval_coverage.mdad_coverage` tables (the range, and where it is lowest)."""
    cols = ["selector", "size", "truth", "replicates", "replicate_runs", "pooled_runs", "coverage", "below", "se"]
    tables = [t if isinstance(t, pd.DataFrame) else pd.DataFrame.from_records(t) for t in (book_table, paper_table)]
    inputs = {"book_table": _records(tables[0], [c for c in cols if c in tables[0]]),
              "paper_table": _records(tables[1], [c for c in cols if c in tables[1]])}
    if tables[0].empty:
        return Claim("no coverage was measured", "coverage_claim", inputs)
    first = tables[0].iloc[0]

    def span(t):
        low = t.loc[t["coverage"].astype(float).idxmin()]
        return (f"{t['coverage'].min():.0%} to {t['coverage'].max():.0%} of the time (lowest at k = {int(low['size'])})"
                if len(t) > 1 else f"{t['coverage'].iloc[0]:.0%} of the time at k = {int(t['size'].iloc[0])}")

    text = (f"over {int(first['replicates'])} replicates of {int(first['replicate_runs'])} runs, the book's 95% interval "
            f"held the MDAD pooled over {int(first['pooled_runs']):,} runs {span(tables[0])}; the paper's "
            f"{span(tables[1])}")
    return Claim(text, "coverage_claim", inputs)


def not_reached(table: pd.DataFrame | list[dict], threshold: float) -> Claim:
    """How many selector x size cells of an MDAD table never reach ``threshold``."""
    table = table if isinstance(table, pd.DataFrame) else _frame(table)
    n, m = int(table["mdad"].isna().sum()), len(table)
    if n == 0:
        text = f"the {threshold:.0%} level is reached in every one of the {m} cells"
    elif n == m:
        text = f"the {threshold:.0%} level is not reached in any of the {m} cells"
    else:
        text = f"the {threshold:.0%} level is not reached in {n} of the {m} cells"
    return Claim(text, "not_reached", {"table": _records(table, ["selector", "size", "mdad"]),
                                       "threshold": float(threshold)})


def tau_from(summary: pd.DataFrame | list[dict], level: float = 0.8, selector: str = "random") -> Claim:
    """From which size the mean Kendall tau of ``selector`` stays at or above ``level`` (at that size
    and every larger one run), or that it reaches the level without staying there."""
    table = summary if isinstance(summary, pd.DataFrame) else _frame(summary)
    rows = table[table["selector"] == selector].sort_values("size")
    inputs = {"summary": _records(rows, ["selector", "size", "tau"]), "level": float(level), "selector": selector}
    if rows.empty:
        return Claim(f"{label(selector)} was not run", "tau_from", inputs)
    first, last = rows.iloc[0], rows.iloc[-1]
    ok = pd.Series((rows["tau"] >= level).to_numpy(), index=rows["size"].astype(int).to_numpy())
    stays = noise.from_size_on(ok)
    start = f"{label(selector)} has Kendall τ = {first['tau']:.2f} at k = {int(first['size'])}"
    if not ok.any():
        text = f"{start} and stays below {level:g} at every size run (τ = {last['tau']:.2f} at k = {int(last['size'])})"
    elif stays is not None:
        hit = rows[rows["size"] == stays].iloc[0]
        text = f"{start} and stays at or above {level:g} from k = {stays} (τ = {hit['tau']:.2f})"
    else:
        hit = rows[rows["tau"] >= level].iloc[0]
        text = (f"{start}; it reaches {level:g} at k = {int(hit['size'])} (τ = {hit['tau']:.2f}) but does not stay "
                f"there (τ = {last['tau']:.2f} at k = {int(last['size'])})")
    return Claim(text, "tau_from", inputs)


def noise_yardstick(mdad: pd.DataFrame | list[dict], n_subtasks: int) -> Claim:
    """How large a difference between two MDADs the runs themselves produce, on the tables' own intervals.

    With one subtask, subtask-stratified sampling is uniform random sampling, so the gap between their
    MDADs is pure run-to-run noise, reported beside the intervals; otherwise the yardstick is the median
    half-width of random sampling's 95% interval.
    """
    table = mdad if isinstance(mdad, pd.DataFrame) else _frame(mdad)
    cols = [c for c in ("selector", "size", "mdad", "ci_low", "ci_high", "n_pairs", "n_runs", "n_distinct_pairs")
            if c in table]
    inputs = {"mdad": _records(table, cols), "n_subtasks": int(n_subtasks)}
    rand = table[table["selector"] == "random"]
    if noise.too_few(rand).any():
        return Claim(f"no noise yardstick can be measured here: {noise.too_few_text(rand)}", "noise_yardstick",
                     inputs)
    half = ((rand["ci_high"] - rand["ci_low"]) / 2).dropna() if {"ci_low", "ci_high"} <= set(rand) else pd.Series()
    ci_text = (f"the median half-width of random sampling's 95% interval is {_pts(half.median())}"
               if not half.empty else "random sampling's MDAD has no interval here")
    wide = table.pivot_table(index="size", columns="selector", values="mdad", dropna=False)
    if n_subtasks == 1 and {"random", "subtask_equal"} <= set(wide.columns):
        gap = (wide["random"] - wide["subtask_equal"]).abs().dropna()
        if not gap.empty:
            k = int(gap.idxmax())
            text = (f"with one subtask, subtask-stratified sampling is uniform random sampling, yet their MDADs "
                    f"differ by up to {_pts(gap.max())} (at k = {k}); {ci_text}")
            return Claim(text, "noise_yardstick", inputs, value=float(gap.max()))
    if half.empty:
        return Claim("no noise yardstick can be computed here (random sampling's MDAD has no interval)",
                     "noise_yardstick", inputs)
    return Claim(ci_text, "noise_yardstick", inputs, value=float(half.median()))


def unseen_loss(seen: pd.DataFrame | list[dict], unseen: pd.DataFrame | list[dict]) -> Claim:
    """How each method's MDAD changes from the seen to the unseen half, averaged over the sizes where
    *every* method is reached on both (one set of sizes for all). The methods that change most and
    least in size (magnitude) are named only when the book's noise rule
    (:func:`mbutils.evaluate.noise.compare`) tells their changes apart: each change's interval is the
    unseen MDAD's interval under :func:`mbutils.evaluate.noise.intervals` (one gap bin added at the
    top) minus the seen MDAD, averaged over the sizes."""
    seen = seen if isinstance(seen, pd.DataFrame) else _frame(seen)
    unseen = unseen if isinstance(unseen, pd.DataFrame) else _frame(unseen)
    ci = [c for c in ("ci_low", "ci_high") if c in unseen]
    counts = [c for c in ("n_pairs", "n_runs") if c in unseen]
    inputs = {"seen": _records(seen, ["selector", "size", "mdad"]),
              "unseen": _records(unseen, ["selector", "size", "mdad", *ci, *counts])}
    if noise.too_few(unseen).any():
        return Claim(f"judged on the unseen half, no method's change can be told from another's: "
                     f"{noise.too_few_text(unseen)}", "unseen_loss", inputs)
    both = seen[["selector", "size", "mdad"]].merge(unseen[["selector", "size", "mdad", *ci]], on=["selector", "size"],
                                                    suffixes=("_seen", "_unseen"))
    reached = np.isfinite(both["mdad_seen"].astype(float)) & np.isfinite(both["mdad_unseen"].astype(float))
    per_size = reached.groupby(both["size"]).all() & (both.groupby("size")["selector"].nunique()
                                                      == both["selector"].nunique())
    sizes = sorted(int(k) for k in per_size.index[per_size.to_numpy()])
    if not sizes:
        return Claim("no size has every method's MDAD reached on both halves, so there is no loss to compare on one "
                     "footing", "unseen_loss", inputs)
    common = both[both["size"].isin(sizes)]
    change = (common["mdad_unseen"] - common["mdad_seen"]).astype(float)
    loss = change.groupby(common["selector"]).mean()
    where = f"on average over the {len(sizes)} size{'s' if len(sizes) > 1 else ''} where every method is reached"
    # the noise rule's interval of each unseen MDAD, shifted by the seen MDAD: an interval of the change,
    # averaged over the sizes; the ranking is by the size of the change (its magnitude), not its sign
    unseen_part = common[["selector", "size", "mdad_unseen", *ci]].rename(columns={"mdad_unseen": "mdad"})
    low, high = noise.intervals(unseen_part, bin_width=noise.DEFAULT_BIN)
    seen_m = common["mdad_seen"].to_numpy(float)
    lows = pd.Series(low - seen_m).groupby(common["selector"].to_numpy()).mean()
    highs = pd.Series(high - seen_m).groupby(common["selector"].to_numpy()).mean()
    size_of = loss.abs().sort_values(kind="stable")
    most, least = size_of.index[-1], size_of.index[0]

    def magnitude(s):  # the interval of |change|
        lo, hi = float(lows[s]), float(highs[s])
        return (0.0 if lo <= 0 <= hi else min(abs(lo), abs(hi))), max(abs(lo), abs(hi))

    spread = (len(loss) >= 2 and noise.compare(*magnitude(least), *magnitude(most)) == noise.BETTER)
    reach = float(np.nanmedian((highs - lows).to_numpy() / 2))
    if not spread:
        reach_text = (f"reach about ±{reach:.1f} points and overlap" if np.isfinite(reach) else
                      "are open above for some methods and overlap")
        text = (f"judged on the unseen half, the MDADs change by {loss.min():+.1f} to {loss.max():+.1f} points "
                f"{where}; the methods' differences are within noise (the unseen MDADs' intervals, widened by one "
                f"gap bin, {reach_text}), so no method is singled out")
    else:
        verb = "grows" if loss[most] > 0 else "falls" if loss[most] < 0 else "changes"
        text = (f"judged on the unseen half, the MDAD of {label(most)} {verb} most ({loss[most]:+.1f} points "
                f"{where}) and that of {label(least)} changes least ({loss[least]:+.1f}), a spread beyond the noise "
                f"(their changes' 95% intervals, widened by one gap bin, do not overlap)")
    return Claim(text, "unseen_loss", inputs)


def sources_spread(sweep: pd.DataFrame | list[dict]) -> Claim:
    """How far each method that learns from source models moves across the source counts run, by the noise
    rule's unpaired half (each count is its own experiment): a method moves beyond the noise only where its
    MDADs at its lowest and highest point have disjoint intervals, each widened by one gap bin (methods that
    read no source model, such as random sampling, reuse the same runs at every count and cannot move;
    they are named as such, not ranked)."""
    sweep = sweep if isinstance(sweep, pd.DataFrame) else _frame(sweep)
    ci = [c for c in ("ci_low", "ci_high") if c in sweep]
    inputs = {"sweep": _records(sweep, ["selector", "size", "mdad", "n_sources", *ci])}
    finite = sweep[np.isfinite(sweep["mdad"].astype(float))]
    if finite.empty or finite["n_sources"].nunique() < 2:
        return Claim("too few source counts have a reached MDAD to compare", "sources_spread", inputs)
    learners = finite[[needs_sources(s) for s in finite["selector"]]]
    free = sorted({label(s) for s in sweep["selector"] if not needs_sources(s)})
    counts = sorted(int(n) for n in sweep["n_sources"].unique())
    names = "; ".join(free)
    tail = (f" ({names} read{'s' if len(free) == 1 else ''} no source model, so cannot move)" if free else "")
    if learners.empty:
        return Claim(f"no method that learns from source models was run{tail}", "sources_spread", inputs)
    moves = []
    for selector, part in learners.groupby("selector", sort=False):
        part = part.sort_values("n_sources")
        lo_row, hi_row = part.loc[part["mdad"].astype(float).idxmin()], part.loc[part["mdad"].astype(float).idxmax()]
        both = pd.DataFrame([lo_row, hi_row])
        low, high = noise.intervals(both, bin_width=noise.DEFAULT_BIN)
        apart = noise.compare(low[0], high[0], low[1], high[1]) == noise.BETTER
        moves.append((selector, float(hi_row["mdad"] - lo_row["mdad"]), bool(apart), lo_row, hi_row))
    moved = [m for m in moves if m[2]]
    start = f"from {counts[0]} to {counts[-1]} sources"
    widest = max(moves, key=lambda m: m[1])
    if not moved:
        text = (f"{start}, no method that learns from source models moves beyond the noise: the largest move, "
                f"{possessive(label(widest[0]))} {_pts(widest[1])}, is between overlapping intervals{tail}")
    else:
        top = max(moved, key=lambda m: m[1])
        names_moved = ", ".join(label(m[0]) for m in moved)
        text = (f"{start}, the MDAD of {names_moved} moves beyond the noise (most: {label(top[0])}, "
                f"{_mdad_ci(top[3])} at {int(top[3]['n_sources'])} sources, {_mdad_ci(top[4])} at "
                f"{int(top[4]['n_sources'])}){tail}")
    return Claim(text, "sources_spread", inputs)


def versus_random(mdads: dict, selector: str) -> Claim:
    """In how many benchmark x size cells ``selector`` is better than random sampling under the
    noise rule (intervals disjoint, below), worse (disjoint, above), or within noise."""
    tables = {name: (t if isinstance(t, pd.DataFrame) else _frame(t)) for name, t in mdads.items()}
    counts = {noise.BETTER: 0, noise.WORSE: 0, noise.WITHIN: 0, noise.TOO_FEW: 0}
    for table in tables.values():
        for verdict in noise.versus(table, selector).to_numpy():
            counts[verdict] += 1
    total = sum(counts.values())
    cols = ("selector", "size", "mdad", "ci_low", "ci_high", "n_pairs", "n_runs")
    inputs = {"mdads": {n: _records(t, [c for c in cols if c in t]) for n, t in tables.items()}, "selector": selector}
    if not total:
        return Claim(f"{label(selector)} and random sampling were not both run", "versus_random", inputs)
    if counts[noise.TOO_FEW] == total:
        why = next(t for t in (noise.too_few_text(t) for t in tables.values()) if t)
        text = f"{label(selector)} against random sampling: {why}"
    elif counts[noise.WITHIN] == total:
        text = (f"over {total} benchmark × size cells, the MDAD of {label(selector)} is within noise of random "
                f"sampling's in every one (their 95% intervals overlap)")
    else:
        text = (f"over {total} benchmark × size cells, the MDAD of {label(selector)} is lower than random "
                f"sampling's beyond the noise (disjoint 95% intervals) in {counts[noise.BETTER]}, higher beyond it "
                f"in {counts[noise.WORSE]}, and within noise in {counts[noise.WITHIN]}"
                + (f"; {counts[noise.TOO_FEW]} have too few target pairs to tell (fewer than {noise.MIN_PAIRS})"
                   if counts[noise.TOO_FEW] else ""))
    return Claim(text, "versus_random", inputs)


def best_at_size(mdad: pd.DataFrame | list[dict], size: int, baseline: str = "random") -> Claim:
    """Which method is most reliable at ``size`` — only when its interval lies below every other
    method's (the noise rule); otherwise that no method is, and how the lowest compares with
    ``baseline``."""
    table = mdad if isinstance(mdad, pd.DataFrame) else _frame(mdad)
    cols = [c for c in ("selector", "size", "mdad", "ci_low", "ci_high", "n_pairs", "n_runs") if c in table]
    inputs = {"mdad": _records(table, cols), "size": int(size), "baseline": baseline}
    part = table[table["size"] == size]
    if part.empty:
        return Claim(f"no method was run at k = {size}", "best_at_size", inputs)
    if noise.too_few(part).any():
        return Claim(f"no method can be called most reliable at k = {size}: {noise.too_few_text(part)}",
                     "best_at_size", inputs)
    low, high = noise.intervals(part)
    order = np.lexsort((high, part["mdad"].fillna(np.inf).to_numpy()))
    lowest = part.iloc[order[0]]
    if not np.isfinite(lowest["mdad"]):
        return Claim(f"no method reaches the threshold at k = {size}", "best_at_size", inputs)
    clear = noise.clear_best(table, size)
    base = part[part["selector"] == baseline]
    base_name = "random sampling" if baseline == "random" else label(baseline)
    base_text = (f"; {possessive(base_name)} is {_mdad_ci(base.iloc[0])}"
                 if len(base) and lowest["selector"] != baseline else "")
    if clear is not None:
        text = (f"{label(clear)} is the most reliable method at k = {size} (MDAD {_mdad_ci(lowest)}{base_text}): "
                "its interval lies below every other method's")
        return Claim(text, "best_at_size", inputs)
    i = order[0]
    others = np.arange(len(part)) != i
    verdict = noise.compare(np.full(others.sum(), low[i]), np.full(others.sum(), high[i]), low[others], high[others])
    close = [label(n) for n in part["selector"].to_numpy()[others][verdict == noise.WITHIN]]
    named = ", ".join(close[:3]) + (f" and {len(close) - 3} more" if len(close) > 3 else "")
    text = (f"no method is more reliable than every other beyond the noise at k = {size}: the lowest MDAD "
            f"({label(lowest['selector'])}, {_mdad_ci(lowest)}) is within noise of {named}{base_text}")
    return Claim(text, "best_at_size", inputs)


def _mdad_ci(row) -> str:
    """'4.0 points [3.0, 5.5]' (a bound below 0 shown as 0; an open upper bound as '>')."""
    m = float(row["mdad"])
    if not np.isfinite(m):
        return mdad_text(m)
    lo, hi = float(row.get("ci_low", np.nan)), float(row.get("ci_high", np.nan))
    if not np.isfinite(lo) and not np.isfinite(hi):
        return _pts(m)
    lo_t = f"{max(lo, 0.0):.1f}" if np.isfinite(lo) else "?"
    hi_t = upper_bound_text(hi, ".1f")
    return f"{_pts(m)} [{lo_t}, {hi_t}]"


# Re-exported: the paired claims, so one module names every claim a page glues.
from mbutils.evaluate.claims_paired import (best_at_size_of, best_at_size_paired, catch_up_paired,  # noqa: E402,F401
                                           claim_is_powered, comparison_records, estimator_claim,
                                           versus_random_paired)


def random_by_size(mdad: pd.DataFrame | list[dict]) -> Claim:
    """Whether random sampling's MDAD, as the page's table shows it, falls with k; where it rises, the sizes
    with their intervals (more items cannot make random sampling less reliable in expectation)."""
    table = mdad if isinstance(mdad, pd.DataFrame) else _frame(mdad)
    a = table[table["selector"] == "random"].sort_values("size")
    cols = [c for c in ("selector", "size", "mdad", "ci_low", "ci_high") if c in a]
    inputs = {"mdad": _records(a, cols)}
    if len(a) < 2:
        return Claim("random sampling was run at fewer than two sizes", "random_by_size", inputs)
    values = a["mdad"].fillna(np.inf).to_numpy()
    sizes = a["size"].astype(int).to_numpy()
    rises = [i for i in range(len(values) - 1) if values[i + 1] > values[i]]
    if not rises:
        return Claim(f"random sampling's MDAD does not rise with k over the {len(sizes)} sizes run",
                     "random_by_size", inputs)
    shown = "; ".join(f"k = {sizes[i]} to {sizes[i + 1]}: {_mdad_ci(a.iloc[i])} to {_mdad_ci(a.iloc[i + 1])}"
                      for i in rises)
    text = (f"random sampling's MDAD rises with k ({shown}); more items cannot make random sampling less reliable "
            "in expectation, so a rise is noise")
    return Claim(text, "random_by_size", inputs)


# Re-exported: the claim of the adaptive chapter's scoring comparison, so recompute() finds it.
from mbutils.book.findings.ability_scoring import scoring_claim  # noqa: E402,F401

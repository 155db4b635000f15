"""Sentences of the book computed from its numbers: each claim's wording follows the data.

A :class:`Claim` is a sentence together with the inputs it was computed from (plain
JSON-able records), so a chapter can glue the sentence and its inputs side by side, and a
test can recompute the sentence from the inputs — or from the chapter's results — and
fail when the prose no longer says what the numbers say. No qualitative word here is
fixed in advance: "catches up", "not reached", "within noise" are chosen by comparison, and
"catches up" from paired comparisons only where they had the power to see a 2-point difference.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from mbutils.results import noise
from mbutils.results.paired import BETTER, UNKNOWN, WITHIN, WORSE
from mbutils.results.noise import random_within_ci_from
from mbutils.base.names import label
from mbutils.base.tables import mdad_text


@dataclass(frozen=True)
class Claim:
    """A computed sentence, the function that words it, and the records it was computed from."""

    text: str
    fn: str
    inputs: dict = field(default_factory=dict)
    value: float | None = None   # the number the sentence turns on, for other computations (not an input)

    def payload(self) -> str:
        """The claim as JSON: enough to recompute ``text`` with :func:`recompute`."""
        # keys in the order the claim built them: a claim over several benchmarks names them in its
        # page's order, which sorted keys would lose on the way back
        return json.dumps({"fn": self.fn, "inputs": self.inputs, "text": self.text})


def recompute(payload: str) -> Claim:
    """The claim a payload's inputs give today (its ``text`` should equal the stored one)."""
    data = json.loads(payload)
    return globals()[data["fn"]](**data["inputs"])


def _records(table: pd.DataFrame, columns) -> list[dict]:
    """JSON-able rows (NaN -> None) of the columns a claim reads."""
    part = table[list(columns)].astype(object)
    return part.where(pd.notna(part), None).to_dict("records")


_NUMERIC = ("size", "mdad", "ci_low", "ci_high", "n_sources", "tau")


def _frame(records) -> pd.DataFrame:
    """A table back from JSON records, numbers as floats (None -> NaN)."""
    table = pd.DataFrame.from_records(records or [])
    for column in set(_NUMERIC) & set(table.columns):
        table[column] = pd.to_numeric(table[column], errors="coerce").astype(float)
    return table


def _pts(value: float) -> str:
    return f"{value:.1f} points"


# ------------------------------------------------------------------------------ claims
def catch_up(mdads: dict[str, list[dict]] | dict[str, pd.DataFrame]) -> Claim:
    """Per benchmark, the smallest size from which random sampling is not worse than any method
    under the noise rule (:mod:`mbutils.results.noise`), at that size and at every larger size run (the
    rule the replication chapter applies to the paper's tables too:
    :func:`mbutils.results.noise.random_within_ci_from`)."""
    tables = {name: (t if isinstance(t, pd.DataFrame) else _frame(t)) for name, t in mdads.items()}
    parts, inputs = [], {}
    for name, table in tables.items():
        inputs[name] = _records(table, [c for c in ("selector", "size", "mdad", "ci_low", "ci_high") if c in table])
        k = random_within_ci_from(table)
        largest = int(table["size"].max())
        parts.append(f"{name}: from k = {k}" if k is not None else f"{name}: not within the sizes run (up to {largest})")
    return Claim("; ".join(parts), "catch_up", {"mdads": inputs})


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
    """From which size the mean Kendall tau of ``selector`` reaches ``level``."""
    table = summary if isinstance(summary, pd.DataFrame) else _frame(summary)
    rows = table[table["selector"] == selector].sort_values("size")
    inputs = {"summary": _records(rows, ["selector", "size", "tau"]), "level": float(level), "selector": selector}
    if rows.empty:
        return Claim(f"{label(selector)} was not run", "tau_from", inputs)
    first, last = rows.iloc[0], rows.iloc[-1]
    reached = rows[rows["tau"] >= level]
    start = f"{label(selector)} has Kendall τ = {first['tau']:.2f} at k = {int(first['size'])}"
    if reached.empty:
        text = f"{start} and stays below {level:g} at every size run (τ = {last['tau']:.2f} at k = {int(last['size'])})"
    else:
        hit = reached.iloc[0]
        text = f"{start} and reaches {level:g} from k = {int(hit['size'])} (τ = {hit['tau']:.2f})"
    return Claim(text, "tau_from", inputs)


def noise_yardstick(mdad: pd.DataFrame | list[dict], n_subtasks: int) -> Claim:
    """How large a difference between two MDADs the runs themselves produce, on the tables' own
    intervals (the ones the noise rule compares).

    With one subtask, subtask-stratified sampling is uniform random sampling, so the gap
    between their MDADs is pure run-to-run noise, reported beside the intervals; otherwise
    the yardstick is the median half-width of random sampling's 95% interval.
    """
    table = mdad if isinstance(mdad, pd.DataFrame) else _frame(mdad)
    cols = [c for c in ("selector", "size", "mdad", "ci_low", "ci_high") if c in table]
    inputs = {"mdad": _records(table, cols), "n_subtasks": int(n_subtasks)}
    rand = table[table["selector"] == "random"]
    half = ((rand["ci_high"] - rand["ci_low"]) / 2).dropna() if {"ci_low", "ci_high"} <= set(rand) else pd.Series()
    ci_text = (f"the median half-width of random sampling's 95% interval is {_pts(half.median())}"
               if not half.empty else "random sampling's MDAD has no interval here")
    wide = table.pivot_table(index="size", columns="selector", values="mdad", dropna=False)
    if n_subtasks == 1 and {"random", "subtask_equal"} <= set(wide.columns):
        gap = (wide["random"] - wide["subtask_equal"]).abs().dropna()
        if not gap.empty:
            k = int(gap.idxmax())
            text = (f"here subtask-stratified sampling is the same method as uniform random sampling, yet their "
                    f"MDADs differ by up to {_pts(gap.max())} (at k = {k}), and {ci_text}: this book calls a "
                    f"difference real only when the two intervals do not overlap")
            return Claim(text, "noise_yardstick", inputs, value=float(gap.max()))
    if half.empty:
        return Claim("no noise yardstick can be computed here (random sampling's MDAD has no interval)",
                     "noise_yardstick", inputs)
    text = f"{ci_text}: this book calls a difference between methods real only when their intervals do not overlap"
    return Claim(text, "noise_yardstick", inputs, value=float(half.median()))


def unseen_loss(seen: pd.DataFrame | list[dict], unseen: pd.DataFrame | list[dict]) -> Claim:
    """How each method's MDAD changes from the seen to the unseen half, averaged over the sizes where
    *every* method is reached on both (one set of sizes for all), and named as a ranking only when the
    spread of the averages exceeds the noise of the unseen MDADs (their mean interval half-width plus
    one gap bin)."""
    seen = seen if isinstance(seen, pd.DataFrame) else _frame(seen)
    unseen = unseen if isinstance(unseen, pd.DataFrame) else _frame(unseen)
    ci = [c for c in ("ci_low", "ci_high") if c in unseen]
    inputs = {"seen": _records(seen, ["selector", "size", "mdad"]),
              "unseen": _records(unseen, ["selector", "size", "mdad", *ci])}
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
    loss = (common["mdad_unseen"] - common["mdad_seen"]).groupby(common["selector"]).mean().sort_values()
    where = f"on average over the {len(sizes)} size{'s' if len(sizes) > 1 else ''} where every method is reached"
    half = (float(np.nanmean((common["ci_high"] - common["ci_low"]).astype(float))) / 2 if len(ci) == 2 else 0.0)
    noise_level = (0.0 if np.isnan(half) else half) + noise.DEFAULT_BIN
    if len(loss) < 2 or loss.iloc[-1] - loss.iloc[0] <= noise_level:
        text = (f"judged on the unseen half, the MDADs change by {loss.iloc[0]:+.1f} to {loss.iloc[-1]:+.1f} points "
                f"{where}; the methods' differences are within noise (the unseen MDADs' intervals reach about "
                f"±{noise_level:.1f} points), so no method is singled out")
    else:
        worst, best = loss.index[-1], loss.index[0]
        verb = "grows" if loss.iloc[-1] > 0 else "changes"
        text = (f"judged on the unseen half, the MDAD of {label(worst)} {verb} most ({loss.iloc[-1]:+.1f} points "
                f"{where}) and that of {label(best)} least ({loss.iloc[0]:+.1f}), a spread beyond the noise of "
                f"about ±{noise_level:.1f} points")
    return Claim(text, "unseen_loss", inputs)


def sources_spread(sweep: pd.DataFrame | list[dict]) -> Claim:
    """How far each method that learns from source models moves across the source counts run
    (methods that read no source model, such as random sampling, reuse the same runs at every
    count and cannot move; they are named as such, not ranked)."""
    from mbutils.methods.selectors import needs_sources

    sweep = sweep if isinstance(sweep, pd.DataFrame) else _frame(sweep)
    inputs = {"sweep": _records(sweep, ["selector", "size", "mdad", "n_sources"])}
    finite = sweep[np.isfinite(sweep["mdad"].astype(float))]
    if finite.empty or finite["n_sources"].nunique() < 2:
        return Claim("too few source counts have a reached MDAD to compare", "sources_spread", inputs)
    learners = finite[[needs_sources(s) for s in finite["selector"]]]
    free = sorted({label(s) for s in sweep["selector"] if not needs_sources(s)})
    counts = sorted(int(n) for n in sweep["n_sources"].unique())
    names = free[0] if len(free) == 1 else "; ".join(free[:-1]) + " and " + free[-1] if free else ""
    tail = (f" ({names} read{'s' if len(free) == 1 else ''} no source model and reuse{'s' if len(free) == 1 else ''} "
            "the same runs at every count, so their MDAD cannot move)" if free else "")
    if learners.empty:
        return Claim(f"no method that learns from source models was run{tail}", "sources_spread", inputs)
    span = learners.groupby("selector")["mdad"].agg(lambda v: v.max() - v.min()).sort_values()
    if len(span) == 1:
        text = (f"from {counts[0]} to {counts[-1]} sources, the MDAD of {label(span.index[0])} moves by "
                f"{_pts(span.iloc[0])} between its smallest and largest value{tail}")
    else:
        text = (f"from {counts[0]} to {counts[-1]} sources, among the methods that learn from source models the MDAD "
                f"of {label(span.index[-1])} moves most ({_pts(span.iloc[-1])} between its smallest and largest "
                f"value) and that of {label(span.index[0])} least ({_pts(span.iloc[0])}){tail}")
    return Claim(text, "sources_spread", inputs)


def versus_random(mdads: dict, selector: str) -> Claim:
    """In how many benchmark x size cells ``selector`` is better than random sampling under the
    noise rule (intervals disjoint, below), worse (disjoint, above), or within noise."""
    tables = {name: (t if isinstance(t, pd.DataFrame) else _frame(t)) for name, t in mdads.items()}
    counts = {noise.BETTER: 0, noise.WORSE: 0, noise.WITHIN: 0}
    for table in tables.values():
        for verdict in noise.versus(table, selector).to_numpy():
            counts[verdict] += 1
    total = sum(counts.values())
    cols = ("selector", "size", "mdad", "ci_low", "ci_high")
    inputs = {"mdads": {n: _records(t, [c for c in cols if c in t]) for n, t in tables.items()}, "selector": selector}
    if not total:
        return Claim(f"{label(selector)} and random sampling were not both run", "versus_random", inputs)
    if counts[noise.WITHIN] == total:
        text = (f"over {total} benchmark × size cells, the MDAD of {label(selector)} is within noise of random "
                f"sampling's in every one (their 95% intervals overlap)")
    else:
        text = (f"over {total} benchmark × size cells, the MDAD of {label(selector)} is lower than random "
                f"sampling's beyond the noise (disjoint 95% intervals) in {counts[noise.BETTER]}, higher beyond it "
                f"in {counts[noise.WORSE]}, and within noise in {counts[noise.WITHIN]}")
    return Claim(text, "versus_random", inputs)


def best_at_size(mdad: pd.DataFrame | list[dict], size: int, baseline: str = "random") -> Claim:
    """Which method is most reliable at ``size`` — only when its interval lies below every other
    method's (the noise rule); otherwise that no method is, and how the lowest compares with
    ``baseline``."""
    table = mdad if isinstance(mdad, pd.DataFrame) else _frame(mdad)
    cols = [c for c in ("selector", "size", "mdad", "ci_low", "ci_high") if c in table]
    inputs = {"mdad": _records(table, cols), "size": int(size), "baseline": baseline}
    part = table[table["size"] == size]
    if part.empty:
        return Claim(f"no method was run at k = {size}", "best_at_size", inputs)
    low, high = noise.intervals(part)
    order = np.lexsort((high, part["mdad"].fillna(np.inf).to_numpy()))
    lowest = part.iloc[order[0]]
    if not np.isfinite(lowest["mdad"]):
        return Claim(f"no method reaches the threshold at k = {size}", "best_at_size", inputs)
    clear = noise.clear_best(table, size)
    base = part[part["selector"] == baseline]
    base_name = "random sampling" if baseline == "random" else label(baseline)
    base_text = (f"; {base_name}'s is {_mdad_ci(base.iloc[0])}"
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
    hi_t = f"{hi:.1f}" if np.isfinite(hi) else "open"
    return f"{_pts(m)} [{lo_t}, {hi_t}]"


# ------------------------------------------------------------------- claims from paired comparisons
# "catches up" or "no different" only where the experiment had the power: each reads the tables of
# mbutils.results.paired.compare_selectors (as JSON records) and words a verdict of "within noise" by
# what the experiment could have seen.

#: The difference (points) a "no different" sentence must have had the power to see.
RESOLUTION = 2.0


def comparison_records(table: pd.DataFrame) -> list[dict]:
    """The columns of a comparison table the claims read, as JSON-able records."""
    cols = ["size", "verdict", "difference", "low", "high", "detectable", "runs_for_2"]
    part = table[cols].astype(object)
    return part.where(pd.notna(part), None).to_dict("records")


def _powered(row: dict, resolution: float) -> bool:
    value = row.get("detectable")
    return value is not None and np.isfinite(float(value)) and float(value) <= resolution


def versus_random_paired(comparisons: dict, selector: str, resolution: float = RESOLUTION):
    """Over benchmark x size cells, ``selector`` against random sampling by the paired comparison
    (``comparisons``: benchmark -> records of ``compare_selectors(results, selector, "random")``)."""
    rows = [r for records in comparisons.values() for r in records]
    inputs = {"comparisons": comparisons, "selector": selector, "resolution": resolution}
    if not rows:
        return Claim(f"{label(selector)} and random sampling were not both run", "versus_random_paired", inputs)
    count = {v: sum(r["verdict"] == v for r in rows) for v in (BETTER, WORSE, WITHIN, UNKNOWN)}
    within = [r for r in rows if r["verdict"] == WITHIN]
    powered = sum(_powered(r, resolution) for r in within)
    text = (f"over {len(rows)} benchmark × size cells, compared pairwise on shared runs, the MDAD of "
            f"{label(selector)} is lower than random sampling's in {count[BETTER]}, higher in {count[WORSE]}, "
            f"within noise in {count[WITHIN]} and undecided in {count[UNKNOWN]}")
    if within:
        text += (f"; of the {len(within)} within noise, {powered} could have shown a {resolution:g}-point difference "
                 f"with 80% power (a difference that large would likely have shown), and the other "
                 f"{len(within) - powered} are too small to tell")
    return Claim(text, "versus_random_paired", inputs)


def catch_up_paired(comparisons: dict, resolution: float = RESOLUTION):
    """Per benchmark, from which size random sampling is no worse than every other method *with the power
    to have seen* a ``resolution``-point difference, at that size and every larger one.

    ``comparisons``: benchmark -> {other selector -> records of ``compare_selectors(results, "random",
    other)``}. Where random is not worse but some comparison lacks the power, the sentence says the pool
    is too small to tell, and how many runs would make a ``resolution``-point difference visible.
    """
    parts = []
    for bench, others in comparisons.items():
        sizes = sorted({int(r["size"]) for records in others.values() for r in records})
        by_size = {k: [r for records in others.values() for r in records if int(r["size"]) == k] for k in sizes}

        def status(rows):
            verdicts = {r["verdict"] for r in rows}
            if not rows or WORSE in verdicts:
                return "worse"
            if UNKNOWN in verdicts:
                return "unknown"
            return "powered" if all(r["verdict"] == BETTER or _powered(r, resolution) for r in rows) else "weak"

        state = {k: status(by_size[k]) for k in sizes}

        def from_on(allowed):
            found = None
            for k in reversed(sizes):
                if state[k] not in allowed:
                    break
                found = k
            return found

        start, loose = from_on({"powered"}), from_on({"powered", "weak"})
        if start is not None:
            parts.append(f"{bench}: random sampling catches up from k = {start} (no method's MDAD is lower beyond the "
                         f"noise, and the experiment had 80% power to see a {resolution:g}-point difference)")
        elif loose is not None:
            need = [int(r["runs_for_2"]) for k in sizes if k >= loose for r in by_size[k]
                    if r["verdict"] == WITHIN and not _powered(r, resolution) and r.get("runs_for_2") is not None]
            runs = f"; about {max(need):,} runs would make a {resolution:g}-point difference visible" if need else ""
            parts.append(f"{bench}: from k = {loose} no method is lower beyond the noise, but the pool is too small to "
                         f"tell whether random sampling matches them (a {resolution:g}-point difference would "
                         f"likely go unseen{runs})")
        elif sizes and state[sizes[-1]] == "worse":
            parts.append(f"{bench}: some method stays lower than random sampling beyond the noise up to the largest "
                         f"size run ({sizes[-1]})")
        else:
            parts.append(f"{bench}: the experiment cannot tell up to the largest size run "
                         f"({sizes[-1] if sizes else 'none'}): an MDAD is not reached or its interval is open")
    inputs = {"comparisons": comparisons, "resolution": resolution}
    return Claim("; ".join(parts), "catch_up_paired", inputs)


def claim_is_powered(fn: str, inputs: dict) -> bool:
    """Whether a claim's "catches up" cells all had the power to see a ``resolution``-point difference (a
    check for tests: the sentence may use the words only then)."""
    if fn != "catch_up_paired":
        return True
    text = catch_up_paired(**inputs).text
    for part in text.split("; "):
        if "catches up from k = " not in part:
            continue
        bench = part.split(":")[0]
        start = int(part.split("catches up from k = ")[1].split(" ")[0])
        rows = [r for records in inputs["comparisons"][bench].values() for r in records if int(r["size"]) >= start]
        if not all(r["verdict"] == BETTER or _powered(r, inputs["resolution"]) for r in rows):
            return False
    return True

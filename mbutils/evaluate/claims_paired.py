"""Sentences from paired comparisons of one experiment's selectors, worded by the book's one noise rule.

Each reads the tables of :func:`mbutils.evaluate.paired.compare_selectors` (as JSON records) and words
them by :mod:`mbutils.evaluate.noise`: lower or higher only where the interval of the difference
excludes 0; "catches up" only where the non-inferiority test with the rule's margin passes for every
other method at every size from k on (:func:`mbutils.evaluate.noise.catch_up`); otherwise the true
reason (too few runs, too few target pairs, an MDAD not reached). A sentence over several comparisons
says how many of its differences survive Holm's family-wise control, and flags fewer than 20 runs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mbutils.base.names import label, possessive
from mbutils.evaluate import noise
from mbutils.evaluate.claim import Claim
from mbutils.evaluate.metrics import mdad_table
from mbutils.evaluate.noise import MARGIN, MIN_PAIRS, TOO_FEW, too_few_sentence
from mbutils.evaluate.paired import BETTER, FEW_RUNS, UNKNOWN, WITHIN, WORSE, compare_selectors, holm

#: The margin (points) of the non-inferiority test, :data:`mbutils.evaluate.noise.MARGIN` (the old name).
RESOLUTION = MARGIN


def _too_few_why(record: dict) -> str:
    """Why a comparison record has no verdict: its distinct pairs against the minimum, and what would do."""
    n = record.get("n_distinct_pairs")
    if n is None and record.get("n_pairs") is not None:
        n = int(record["n_pairs"]) * int(record.get("n_runs") or 1)
    if not n:
        return f"too few target pairs to tell (fewer than {MIN_PAIRS} distinct target pairs)"
    repeated = record.get("n_pairs") is not None and int(n) <= int(record["n_pairs"])
    return too_few_sentence(int(n), int(record.get("n_runs") or 1), repeated=repeated and int(record["n_runs"]) > 1)


def comparison_records(table: pd.DataFrame) -> list[dict]:
    """The columns of a comparison table the claims read, as JSON-able records (a size whose runs hold
    too few distinct target pairs carries compare_selectors' verdict "too few pairs to tell")."""
    cols = [c for c in ("size", "verdict", "difference", "low", "high", "p_value", "detectable", "runs_for_2",
                        "n_runs", "n_pairs", "n_distinct_pairs") if c in table]
    part = table[cols].astype(object)
    return part.where(pd.notna(part), None).to_dict("records")


def _within_margin(row: dict, margin: float) -> bool:
    """Whether the upper 95% bound of the difference is at most ``margin`` (the non-inferiority test)."""
    return noise.state(row, margin) == noise.NON_INFERIOR


def versus_random_paired(comparisons: dict, selector: str, resolution: float = MARGIN):
    """Over benchmark x size cells, ``selector`` against random sampling by the paired comparison
    (``comparisons``: benchmark -> records of ``compare_selectors(results, selector, "random")``)."""
    rows = [r for records in comparisons.values() for r in records]
    inputs = {"comparisons": comparisons, "selector": selector, "resolution": resolution}
    if not rows:
        return Claim(f"{label(selector)} and random sampling were not both run", "versus_random_paired", inputs)
    count = {v: sum(r["verdict"] == v for r in rows) for v in (BETTER, WORSE, WITHIN, UNKNOWN, TOO_FEW)}
    within = [r for r in rows if r["verdict"] == WITHIN]
    close = sum(_within_margin(r, resolution) for r in within)
    text = (f"in {len(rows)} benchmark × size cells, the MDAD of {label(selector)} is lower than random sampling's "
            f"in {count[BETTER]}, higher in {count[WORSE]}, within noise in {count[WITHIN]}")
    if count[UNKNOWN]:
        text += f", undecided in {count[UNKNOWN]}"
    if count[TOO_FEW]:
        text += f", too few target pairs in {count[TOO_FEW]}"
    if within:
        text += f"; {close} of the {len(within)} within noise are also within {resolution:g} points"
    text += family_note(rows)
    return Claim(text, "versus_random_paired", inputs)


def family_note(rows: list[dict]) -> str:
    """'; Holm keeps M of the B differences' over the rows' p-values, and a flag for verdicts from fewer
    than FEW_RUNS runs ("" for one comparison without the flag, or none decided)."""
    decided = [r for r in rows if r["verdict"] in (BETTER, WORSE)]
    note = ""
    if len(rows) > 1 and decided and not all(r.get("p_value") is None for r in rows):
        p = [float("nan") if r.get("p_value") is None else float(r["p_value"]) for r in rows]
        adjusted = holm(p)
        kept = sum(1 for r, q in zip(rows, adjusted) if r["verdict"] in (BETTER, WORSE) and q <= 0.05)
        note = f"; Holm's correction over all {len(rows)} keeps {kept} of the {len(decided)} differences"
    runs = [int(r["n_runs"]) for r in rows if r.get("n_runs") is not None]
    if runs and min(runs) < FEW_RUNS:
        note += f"; from {min(runs)} run{'s' if min(runs) != 1 else ''}, fewer than {FEW_RUNS}: rough"
    return note


def _mdad_ci(value, low, high) -> str:
    """'12.5 points [10.0, 15.0]' from an MDAD and its interval (None: not given)."""
    if value is None or not np.isfinite(float(value)):
        return "not reached"
    text = f"{float(value):.1f} points"
    if low is None and high is None:
        return text
    lo = "…" if low is None or not np.isfinite(float(low)) else f"{max(float(low), 0.0):.1f}"
    hi = "open" if high is None or not np.isfinite(float(high)) else f"{float(high):.1f}"
    return f"{text} [{lo}, {hi}]"


def best_at_size_paired(comparisons: dict, size: int, lowest: str, mdads: dict, resolution: float = MARGIN,
                        intervals: dict | None = None):
    """At ``size``, the method with the lowest MDAD (``lowest``; ``mdads``: selector -> its MDAD, points or
    None, as the page's table shows it; ``intervals``: selector -> [low, high] of it) against every other
    method of the experiment, paired on shared runs.

    ``comparisons``: other selector -> records of ``compare_selectors(results, lowest, other)`` at
    ``size``. It is "the most reliable" only if it is lower than every other beyond the noise; else
    the sentence names those it cannot be told from.
    """
    inputs = {"comparisons": comparisons, "size": int(size), "lowest": lowest, "mdads": mdads,
              "resolution": resolution}
    if intervals:
        inputs["intervals"] = intervals
    rows = {other: next((r for r in records if int(r["size"]) == int(size)), None)
            for other, records in comparisons.items()}
    rows = {o: r for o, r in rows.items() if r is not None}
    if mdads.get(lowest) is None:
        return Claim(f"no method reaches the threshold at k = {size}", "best_at_size_paired", inputs)
    ci = (intervals or {}).get(lowest, [None, None])
    shown = _mdad_ci(mdads[lowest], *ci)
    head = f"the lowest MDAD at k = {size} is {possessive(label(lowest))}, {shown}"
    if not rows:
        return Claim(head + "; no other method was run to compare with", "best_at_size_paired", inputs)
    few = [r for r in rows.values() if r["verdict"] == TOO_FEW]
    if few:
        return Claim(f"no method can be called the most reliable at k = {size}: {head}, but {_too_few_why(few[0])}",
                     "best_at_size_paired", inputs)
    beaten = [o for o, r in rows.items() if r["verdict"] == BETTER]
    close = [o for o, r in rows.items() if r["verdict"] != BETTER]
    if not close:
        text = (f"{label(lowest)} is the most reliable method at k = {size} (MDAD {shown}): its MDAD is lower than "
                "each other method's beyond the noise")
    else:
        named = "; ".join(label(o) for o in close[:3]) + (f" and {len(close) - 3} more" if len(close) > 3 else "")
        text = f"no method is clearly most reliable at k = {size}: {head}, within noise of {named}"
        if beaten:
            text += f", and lower than {len(beaten)} other{'s' if len(beaten) > 1 else ''} beyond it"
    text += family_note(list(rows.values()))
    return Claim(text, "best_at_size_paired", inputs)


def catch_up_paired(comparisons: dict, resolution: float = MARGIN):
    """Per benchmark, from which size random sampling is no worse than every other method by more than the
    margin (``resolution`` points), at that size and every larger one: :func:`mbutils.evaluate.noise.catch_up`.

    ``comparisons``: benchmark -> {other selector -> records of ``compare_selectors(results, "random",
    other)``} (or :func:`mbutils.evaluate.noise.unpaired_records` of a table of another experiment). Where
    no size qualifies, the sentence gives the true reason (too few runs, and how many would do; too few
    target pairs; an MDAD not reached; a method lower beyond the noise).
    """
    parts = []
    for bench, others in comparisons.items():
        verdict = noise.catch_up(others, resolution)
        if verdict.size is not None:
            top = verdict.highest.get(verdict.size, np.nan)
            parts.append(f"{bench}: from k = {verdict.size}" + (f" (upper bounds at most {top:.1f} points)"
                                                                 if np.isfinite(top) else ""))
        else:
            parts.append(f"{bench}: not within the sizes run ({verdict.reason})")
    inputs = {"comparisons": comparisons, "resolution": resolution}
    return Claim("; ".join(parts), "catch_up_paired", inputs)


def claim_is_powered(fn: str, inputs: dict) -> bool:
    """Whether a claim's "from k =" cells hold under the non-inferiority test (a check for tests: the
    sentence may say random sampling catches up only where every comparison from k on is within the margin)."""
    if fn != "catch_up_paired":
        return True
    text = catch_up_paired(**inputs).text
    for part in text.split("; "):
        if ": from k = " not in part:
            continue
        bench = part.split(": from k = ")[0]
        start = int(part.split(": from k = ")[1].split(" ")[0])
        rows = [r for records in inputs["comparisons"][bench].values() for r in records if int(r["size"]) >= start]
        if not all(_within_margin(r, inputs["resolution"]) for r in rows):
            return False
    return True


def best_at_size_of(results: pd.DataFrame, size: int, *, threshold: float = 0.8, n_boot: int = 2000,
                    seed: int = 0, resolution: float = MARGIN, mdad: pd.DataFrame | None = None) -> Claim:
    """:func:`best_at_size_paired` computed from one experiment's results: the MDADs at ``size`` (read from
    ``mdad``, the page's own :func:`~mbutils.evaluate.metrics.mdad_table`, so the sentence quotes its cells;
    computed when not given), and the lowest method compared pairwise with every other."""
    part = mdad if mdad is not None else mdad_table(results, threshold=threshold)
    part = part[part["size"] == int(size)]

    def number(v):
        return float(v) if v is not None and np.isfinite(float(v)) else None

    mdads = {str(s): number(m) for s, m in zip(part["selector"], part["mdad"])}
    intervals = ({str(r.selector): [number(r.ci_low), number(r.ci_high)] for r in part.itertuples(index=False)}
                 if {"ci_low", "ci_high"} <= set(part.columns) else None)
    reached = {s: m for s, m in mdads.items() if m is not None}
    lowest = min(reached, key=reached.get) if reached else (next(iter(mdads)) if mdads else "random")
    comparisons = {} if not reached else {
        other: comparison_records(compare_selectors(results, lowest, other, threshold=threshold, n_boot=n_boot,
                                                    seed=seed, sizes=[size]))
        for other in mdads if other != lowest}
    return best_at_size_paired(comparisons, int(size), lowest, mdads, resolution, intervals)


def estimator_claim(comparisons: dict, selector: str) -> Claim:
    """How ``selector`` compares with random sampling under each split, in error and in MDAD, pairwise."""
    parts, every = [], []
    for split, by_bench in comparisons.items():
        err = [r for rec in by_bench.values() for r in rec["error"]]
        mdad = [r for rec in by_bench.values() for r in rec["mdad"]]
        if not err:
            continue
        every += mdad
        count = {v: sum(r["verdict"] == v for r in err) for v in ("lower", "higher", "within noise")}
        better = sum(r["verdict"] == "better" for r in mdad)
        worse = sum(r["verdict"] == "worse" for r in mdad)
        parts.append(f"under the {split}, in {len(err)} cells its error is lower in {count['lower']} and higher in "
                     f"{count['higher']}, its MDAD lower in {better} and higher in {worse}")
    text = (f"{label(selector)} against random sampling, pairwise and beyond the noise: " + "; ".join(parts)
            + family_note(every) if parts else f"{label(selector)} was not run")
    return Claim(text, "estimator_claim", {"comparisons": comparisons, "selector": selector})

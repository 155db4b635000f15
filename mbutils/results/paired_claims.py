"""Sentences from paired comparisons: "catches up" or "no different" only where the experiment had the power.

Each claim reads the tables of :func:`mbutils.results.paired.compare_selectors` (as JSON records, so
a test can recompute the sentence) and words a verdict of "within noise" by what the experiment could
have seen: a cell whose difference detectable with 80% power is at most ``resolution`` points (2 by
default) supports "no larger than ``resolution`` points apart"; a cell that could not have seen such a
difference is "too small to tell", with the runs it would take.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mbutils.base.names import label
from mbutils.results.paired import BETTER, UNKNOWN, WITHIN, WORSE

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
    from mbutils.results.claims import Claim

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
    from mbutils.results.claims import Claim

    parts = []
    for bench, others in comparisons.items():
        sizes = sorted({int(r["size"]) for records in others.values() for r in records})
        by_size = {k: [r for records in others.values() for r in records if int(r["size"]) == k] for k in sizes}
        not_worse = {k: bool(rows) and all(r["verdict"] in (BETTER, WITHIN) for r in rows) for k, rows in by_size.items()}
        powered = {k: all(r["verdict"] == BETTER or _powered(r, resolution) for r in rows) for k, rows in by_size.items()}
        start = None
        for k in reversed(sizes):
            if not (not_worse[k] and powered[k]):
                break
            start = k
        loose = None
        for k in reversed(sizes):
            if not not_worse[k]:
                break
            loose = k
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
        else:
            parts.append(f"{bench}: some method stays lower than random sampling up to the largest size run "
                         f"({sizes[-1] if sizes else 'none'})")
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

"""Sentences from paired comparisons of one experiment's selectors, worded by what the experiment could see.

Each reads the tables of :func:`mbutils.evaluate.paired.compare_selectors` (as JSON records). "Catches
up" or "no different" only where the experiment had the power to see a ``RESOLUTION``-point
difference; the verdicts are pointwise, and a sentence over several comparisons says how many it
made and how many survive Holm's family-wise control; verdicts from fewer than 20 runs are flagged.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mbutils.base.names import label, possessive
from mbutils.evaluate.claim import Claim
from mbutils.evaluate.noise import MIN_PAIRS, TOO_FEW, too_few_sentence
from mbutils.evaluate.paired import BETTER, FEW_RUNS, UNKNOWN, WITHIN, WORSE, holm


# ------------------------------------------------------------------- claims from paired comparisons
# "catches up" or "no different" only where the experiment had the power: each reads the tables of
# mbutils.evaluate.paired.compare_selectors (as JSON records) and words a verdict of "within noise" by
# what the experiment could have seen.

#: The difference (points) a "no different" sentence must have had the power to see.
RESOLUTION = 2.0


def _too_few_why(record: dict) -> str:
    """Why a comparison record has no verdict: its pooled pairs against the minimum, and what would do."""
    if not record.get("n_pairs"):
        return f"too few pairs to tell (fewer than {MIN_PAIRS} target pairs pooled over the runs)"
    return too_few_sentence(int(record["n_pairs"] * record["n_runs"]), int(record["n_runs"]))


def comparison_records(table: pd.DataFrame) -> list[dict]:
    """The columns of a comparison table the claims read, as JSON-able records (a size whose runs pool
    too few target pairs carries compare_selectors' verdict "too few pairs to tell")."""
    cols = [c for c in ("size", "verdict", "difference", "low", "high", "p_value", "detectable", "runs_for_2",
                        "n_runs", "n_pairs") if c in table]
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
    count = {v: sum(r["verdict"] == v for r in rows) for v in (BETTER, WORSE, WITHIN, UNKNOWN, TOO_FEW)}
    within = [r for r in rows if r["verdict"] == WITHIN]
    powered = sum(_powered(r, resolution) for r in within)
    text = (f"over {len(rows)} benchmark × size cells, compared pairwise on shared runs, the MDAD of "
            f"{label(selector)} is lower than random sampling's in {count[BETTER]}, higher in {count[WORSE]}, "
            f"within noise in {count[WITHIN]} and undecided in {count[UNKNOWN]}")
    if count[TOO_FEW]:
        text += (f", and {count[TOO_FEW]} have too few target pairs to tell (fewer than {MIN_PAIRS} pooled over "
                 "the runs)")
    if within:
        text += (f"; of the {len(within)} within noise, {powered} could have shown a {resolution:g}-point difference "
                 f"with 80% power (a difference that large would likely have shown), and the other "
                 f"{len(within) - powered} are too small to tell")
    text += family_note(rows)
    return Claim(text, "versus_random_paired", inputs)


def family_note(rows: list[dict]) -> str:
    """'; these N verdicts are pointwise (95% each); under Holm's family-wise control at 5%, M of the B
    differences remain', and a flag for verdicts from fewer than FEW_RUNS runs ("" for one comparison
    without the flag)."""
    decided = [r for r in rows if r["verdict"] in (BETTER, WORSE)]
    note = ""
    if len(rows) > 1:
        p = [float("nan") if r.get("p_value") is None else float(r["p_value"]) for r in rows]
        adjusted = holm(p)
        kept = sum(1 for r, q in zip(rows, adjusted) if r["verdict"] in (BETTER, WORSE) and q <= 0.05)
        note = f"; these {len(rows)} verdicts are pointwise (95% each)"
        if decided and not all(r.get("p_value") is None for r in rows):
            note += (f"; under Holm's family-wise control at 5% over all {len(rows)}, {kept} of the "
                     f"{len(decided)} differences remain")
    runs = [int(r["n_runs"]) for r in rows if r.get("n_runs") is not None]
    if runs and min(runs) < FEW_RUNS:
        note += (f"; they rest on {min(runs)} run{'s' if min(runs) != 1 else ''}, fewer than the {FEW_RUNS} a run "
                 "bootstrap needs for a dependable interval, so read them as rough")
    return note


def best_at_size_paired(comparisons: dict, size: int, lowest: str, mdads: dict, resolution: float = RESOLUTION):
    """At ``size``, the method with the lowest MDAD (``lowest``, monotone fit; ``mdads``: selector -> its
    MDAD, points or None) against every other method of the experiment, paired on shared runs.

    ``comparisons``: other selector -> records of ``compare_selectors(results, lowest, other)`` at
    ``size``. It is "the most reliable" only if it is lower than every other beyond the noise; else
    the sentence names those it cannot be told from, and whether the experiment could have told.
    """
    inputs = {"comparisons": comparisons, "size": int(size), "lowest": lowest, "mdads": mdads,
              "resolution": resolution}
    rows = {other: next((r for r in records if int(r["size"]) == int(size)), None)
            for other, records in comparisons.items()}
    rows = {o: r for o, r in rows.items() if r is not None}
    if mdads.get(lowest) is None:
        return Claim(f"no method reaches the threshold at k = {size}", "best_at_size_paired", inputs)
    head = f"the lowest MDAD at k = {size} is {possessive(label(lowest))} ({mdads[lowest]:.1f} points, monotone fit)"
    if not rows:
        return Claim(head + "; no other method was run to compare with", "best_at_size_paired", inputs)
    few = [r for r in rows.values() if r["verdict"] == TOO_FEW]
    if few:
        return Claim(f"no method can be called the most reliable at k = {size}: {head}, but {_too_few_why(few[0])}",
                     "best_at_size_paired", inputs)
    beaten = [o for o, r in rows.items() if r["verdict"] == BETTER]
    close = [o for o, r in rows.items() if r["verdict"] != BETTER]
    if not close:
        text = (f"{label(lowest)} is the most reliable method at k = {size} (MDAD {mdads[lowest]:.1f} points, "
                f"monotone fit): compared pairwise on shared runs, its MDAD is lower than each other method's "
                f"beyond the noise")
    else:
        weak = [o for o in close if rows[o]["verdict"] == WITHIN and not _powered(rows[o], resolution)]
        named = "; ".join(label(o) for o in close)
        text = (f"no method is more reliable than every other beyond the noise at k = {size}: {head}, and compared "
                f"pairwise on shared runs it cannot be told from {len(close)} other method"
                f"{'s' if len(close) > 1 else ''} ({named})")
        if beaten:
            text += f" (it is lower than {len(beaten)} other{'s' if len(beaten) > 1 else ''} beyond the noise)"
        if weak:
            text += (f"; for {len(weak)} of these the experiment could not have seen a {resolution:g}-point "
                     "difference, so the pool is too small to tell")
    text += family_note(list(rows.values()))
    return Claim(text, "best_at_size_paired", inputs)


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
            if UNKNOWN in verdicts or TOO_FEW in verdicts:
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
        elif sizes and any(r["verdict"] == TOO_FEW for r in by_size[sizes[-1]]):
            why = _too_few_why(next(r for r in by_size[sizes[-1]] if r["verdict"] == TOO_FEW))
            parts.append(f"{bench}: the experiment cannot tell up to the largest size run ({sizes[-1]}): {why}")
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


def best_at_size_of(results: pd.DataFrame, size: int, *, threshold: float = 0.8, n_boot: int = 400,
                    seed: int = 0, resolution: float = RESOLUTION) -> Claim:
    """:func:`best_at_size_paired` computed from one experiment's results: the monotone MDADs at
    ``size``, and the lowest method compared pairwise with every other."""
    from mbutils.evaluate.metrics import mdad_table
    from mbutils.evaluate.paired import compare_selectors

    part = mdad_table(results, threshold=threshold, method="monotone", ci="none")
    part = part[part["size"] == int(size)]
    mdads = {str(s): (float(m) if np.isfinite(m) else None) for s, m in zip(part["selector"], part["mdad"])}
    reached = {s: m for s, m in mdads.items() if m is not None}
    lowest = min(reached, key=reached.get) if reached else (next(iter(mdads)) if mdads else "random")
    comparisons = {} if not reached else {
        other: comparison_records(compare_selectors(results, lowest, other, threshold=threshold, n_boot=n_boot,
                                                    seed=seed, sizes=[size]))
        for other in mdads if other != lowest}
    return best_at_size_paired(comparisons, int(size), lowest, mdads, resolution)


def estimator_claim(comparisons: dict, selector: str) -> Claim:
    """How ``selector`` compares with random sampling under each split, in error and in MDAD, pairwise."""
    parts = []
    for split, by_bench in comparisons.items():
        err = [r for rec in by_bench.values() for r in rec["error"]]
        mdad = [r for rec in by_bench.values() for r in rec["mdad"]]
        if not err:
            continue
        count = {v: sum(r["verdict"] == v for r in err) for v in ("lower", "higher", "within noise")}
        better = sum(r["verdict"] == "better" for r in mdad)
        worse = sum(r["verdict"] == "worse" for r in mdad)
        parts.append(f"under the {split}, over {len(err)} benchmark × size cells, its estimation error is lower "
                     f"than random sampling's beyond the noise in {count['lower']}, higher in {count['higher']} and "
                     f"within noise in {count['within noise']}; its MDAD is lower in {better} and higher in {worse} "
                     f"of {len(mdad)}" + family_note(mdad))
    text = (f"{label(selector)}, compared pairwise with random sampling on shared runs: " + "; ".join(parts)
            if parts else f"{label(selector)} was not run")
    return Claim(text, "estimator_claim", {"comparisons": comparisons, "selector": selector})

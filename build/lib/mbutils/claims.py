"""Sentences of the book computed from its numbers: each claim's wording follows the data.

A :class:`Claim` is a sentence together with the inputs it was computed from (plain
JSON-able records), so a chapter can glue the sentence and its inputs side by side, and a
test can recompute the sentence from the inputs — or from the chapter's results — and
fail when the prose no longer says what the numbers say. No qualitative word here is
fixed in advance: "catches up", "not reached", "within noise" are chosen by comparison.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .paper_results import random_within_ci_from
from .styles import label


@dataclass(frozen=True)
class Claim:
    """A computed sentence, the function that words it, and the records it was computed from."""

    text: str
    fn: str
    inputs: dict = field(default_factory=dict)
    value: float | None = None   # the number the sentence turns on, for other computations (not an input)

    def payload(self) -> str:
        """The claim as JSON: enough to recompute ``text`` with :func:`recompute`."""
        return json.dumps({"fn": self.fn, "inputs": self.inputs, "text": self.text}, sort_keys=True)


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
    """Per benchmark, the smallest size from which random sampling's MDAD is within the 95% CI
    of the best method's at that size and at every larger size run (the rule the replication
    chapter applies to the paper's tables too: :func:`mbutils.paper_results.random_within_ci_from`)."""
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
    """How large a difference between two MDADs the runs themselves produce.

    With one subtask, subtask-stratified sampling is uniform random sampling, so the gap
    between their MDADs is pure run-to-run noise; otherwise the yardstick is the median
    half-width of random sampling's 95% CI.
    """
    table = mdad if isinstance(mdad, pd.DataFrame) else _frame(mdad)
    cols = [c for c in ("selector", "size", "mdad", "ci_low", "ci_high") if c in table]
    inputs = {"mdad": _records(table, cols), "n_subtasks": int(n_subtasks)}
    wide = table.pivot_table(index="size", columns="selector", values="mdad", dropna=False)
    if n_subtasks == 1 and {"random", "subtask_equal"} <= set(wide.columns):
        gap = (wide["random"] - wide["subtask_equal"]).abs().dropna()
        if not gap.empty:
            k = int(gap.idxmax())
            text = (f"here subtask-stratified sampling is the same method as uniform random sampling, yet their "
                    f"MDADs differ by up to {_pts(gap.max())} (at k = {k}): differences between methods smaller "
                    f"than that are within run-to-run noise")
            return Claim(text, "noise_yardstick", inputs, value=float(gap.max()))
    rand = table[table["selector"] == "random"]
    half = ((rand["ci_high"] - rand["ci_low"]) / 2).dropna() if {"ci_low", "ci_high"} <= set(rand) else pd.Series()
    if half.empty:
        return Claim("no noise yardstick can be computed here (random sampling's MDAD has no CI)", "noise_yardstick",
                     inputs)
    text = (f"the 95% CI of random sampling's MDAD is typically ±{_pts(half.median())} wide: differences between "
            f"methods smaller than that are within run-to-run noise")
    return Claim(text, "noise_yardstick", inputs, value=float(half.median()))


def unseen_loss(seen: pd.DataFrame | list[dict], unseen: pd.DataFrame | list[dict]) -> Claim:
    """Which method's MDAD grows most from the seen to the unseen half (mean over the sizes
    where both are reached)."""
    seen = seen if isinstance(seen, pd.DataFrame) else _frame(seen)
    unseen = unseen if isinstance(unseen, pd.DataFrame) else _frame(unseen)
    inputs = {"seen": _records(seen, ["selector", "size", "mdad"]), "unseen": _records(unseen, ["selector", "size", "mdad"])}
    both = seen.merge(unseen, on=["selector", "size"], suffixes=("_seen", "_unseen"))
    both = both[np.isfinite(both["mdad_seen"].astype(float)) & np.isfinite(both["mdad_unseen"].astype(float))]
    if both.empty:
        return Claim("no size has an MDAD reached on both halves, so there is no loss to compare", "unseen_loss", inputs)
    loss = (both["mdad_unseen"] - both["mdad_seen"]).groupby(both["selector"]).mean().sort_values()
    worst, best = loss.index[-1], loss.index[0]
    verb = "grows" if loss.iloc[-1] > 0 else "changes"
    text = (f"judged on the unseen half, the MDAD of {label(worst)} {verb} most ({loss.iloc[-1]:+.1f} points on "
            f"average over the sizes where both are reached) and that of {label(best)} least ({loss.iloc[0]:+.1f})")
    return Claim(text, "unseen_loss", inputs)


def sources_spread(sweep: pd.DataFrame | list[dict]) -> Claim:
    """How far each method's MDAD moves across the source counts run."""
    sweep = sweep if isinstance(sweep, pd.DataFrame) else _frame(sweep)
    inputs = {"sweep": _records(sweep, ["selector", "size", "mdad", "n_sources"])}
    finite = sweep[np.isfinite(sweep["mdad"].astype(float))]
    if finite.empty or finite["n_sources"].nunique() < 2:
        return Claim("too few source counts have a reached MDAD to compare", "sources_spread", inputs)
    span = finite.groupby("selector")["mdad"].agg(lambda v: v.max() - v.min()).sort_values()
    counts = sorted(int(n) for n in sweep["n_sources"].unique())
    text = (f"from {counts[0]} to {counts[-1]} sources, the MDAD of {label(span.index[-1])} moves most "
            f"({_pts(span.iloc[-1])} between its smallest and largest value) and that of "
            f"{label(span.index[0])} least ({_pts(span.iloc[0])})")
    return Claim(text, "sources_spread", inputs)


def versus_random(mdads: dict, selector: str, yardsticks: dict) -> Claim:
    """In how many benchmark x size cells ``selector`` beats random sampling by more than
    that benchmark's noise yardstick, loses by more, or stays within it."""
    tables = {name: (t if isinstance(t, pd.DataFrame) else _frame(t)) for name, t in mdads.items()}
    better = worse = within = 0
    for name, table in tables.items():
        wide = table.pivot_table(index="size", columns="selector", values="mdad", dropna=False)
        if selector not in wide or "random" not in wide:
            continue
        noise = yardsticks.get(name)
        noise = 0.0 if noise is None or not np.isfinite(noise) else float(noise)
        diff = wide[selector].fillna(np.inf) - wide["random"].fillna(np.inf)
        diff = diff.replace([np.nan], 0.0)  # both not reached: no difference
        better += int((diff < -noise).sum())
        worse += int((diff > noise).sum())
        within += int(((diff >= -noise) & (diff <= noise)).sum())
    total = better + worse + within
    inputs = {"mdads": {n: _records(t, ["selector", "size", "mdad"]) for n, t in tables.items()},
              "selector": selector, "yardsticks": {n: (None if v is None else float(v)) for n, v in yardsticks.items()}}
    if not total:
        return Claim(f"{label(selector)} and random sampling were not both run", "versus_random", inputs)
    text = (f"over {total} benchmark × size cells, the MDAD of {label(selector)} is lower than random sampling's "
            f"by more than the noise yardstick in {better}, higher by more in {worse}, and within it in {within}")
    return Claim(text, "versus_random", inputs)


def yardstick_value(mdad_runs: pd.DataFrame, n_subtasks: int) -> float | None:
    """The number :func:`noise_yardstick` words (None when none can be computed)."""
    return noise_yardstick(mdad_runs, n_subtasks).value

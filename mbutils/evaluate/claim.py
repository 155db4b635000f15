"""A computed sentence and the records it was computed from, so a test can recompute it.

A :class:`Claim` is a sentence together with the inputs it was computed from (plain JSON-able
records), so a chapter can glue the sentence and its inputs side by side, and a test can recompute
the sentence from the inputs (:func:`mbutils.book.findings.claims.recompute`) and fail when the prose no longer says what the
numbers say. The claims themselves live in :mod:`mbutils.book.findings.claims` (one table's numbers) and
:mod:`mbutils.evaluate.claims_paired` (paired comparisons of one experiment's selectors).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pandas as pd


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


def records(table: pd.DataFrame, columns) -> list[dict]:
    """JSON-able rows (NaN -> None) of the columns a claim reads."""
    part = table[list(columns)].astype(object)
    return part.where(pd.notna(part), None).to_dict("records")


_NUMERIC = ("size", "mdad", "ci_low", "ci_high", "n_sources", "tau")


def frame(rows) -> pd.DataFrame:
    """A table back from JSON records, numbers as floats (None -> NaN)."""
    table = pd.DataFrame.from_records(rows or [])
    for column in set(_NUMERIC) & set(table.columns):
        table[column] = pd.to_numeric(table[column], errors="coerce").astype(float)
    return table


def pts(value: float) -> str:
    return f"{value:.1f} points"

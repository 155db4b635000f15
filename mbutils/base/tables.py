"""Plain-text rendering of result tables (CSV or Markdown) with "not reached" spelled out."""

from __future__ import annotations

import csv
import io
import math

import pandas as pd

NOT_REACHED = "not reached"
MDAD_VALUE_COLUMNS = ("mdad", "ci_low", "ci_high")


def mdad_text(value, fmt: str = "g", unit: str = "") -> str:
    """An MDAD as text: 'not reached' for NaN, infinity or None, else ``value`` in ``fmt`` and ``unit``.

    The one place the package spells an MDAD that no agreement bin reaches.

    >>> mdad_text(4.5, ".1f", " points"), mdad_text(float("nan"))
    ('4.5 points', 'not reached')
    """
    if value is None or not math.isfinite(float(value)):
        return NOT_REACHED
    return f"{float(value):{fmt}}{unit}"


def _cell(value, column: str) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return NOT_REACHED if column in MDAD_VALUE_COLUMNS else ""
        return f"{value:.4g}" if column not in MDAD_VALUE_COLUMNS else f"{value:g}"
    return str(value)


def render(table: pd.DataFrame, fmt: str = "csv") -> str:
    """CSV or a GitHub-style Markdown table; NaN in MDAD columns reads 'not reached'."""
    cells = [[_cell(v, c) for c, v in zip(table.columns, row)] for row in table.itertuples(index=False)]
    header = list(map(str, table.columns))
    if fmt == "csv":  # the csv module quotes commas, quotes and line breaks inside names
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows([header, *cells])
        return out.getvalue()
    if fmt == "markdown":
        widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(header)]
        line = lambda r: "| " + " | ".join(s.ljust(w) for s, w in zip(r, widths)) + " |"  # noqa: E731
        sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
        return "\n".join([line(header), sep, *map(line, cells)]) + "\n"
    raise ValueError(f"unknown format {fmt!r}; use csv or markdown")

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
    return f"{float(value):{fmt}}{unit}" if _finite(value) else NOT_REACHED


def _finite(value) -> bool:
    return value is not None and math.isfinite(float(value))


#: How the upper bound of an MDAD's interval reads where the interval does not close (too few pairs, or
#: a bound no bootstrap draw reaches).
OPEN_BOUND = "open"


def upper_bound_text(value, fmt: str = "g", unit: str = "") -> str:
    """The upper bound of an MDAD's interval as text: 'open' (``OPEN_BOUND``) for NaN, infinity or None.

    >>> upper_bound_text(7.5, unit=" points"), upper_bound_text(float("nan"))
    ('7.5 points', 'open')
    """
    return mdad_text(value, fmt, unit) if _finite(value) else OPEN_BOUND


#: A text cell starting with one of these is a formula to a spreadsheet (or, for the quote, would read
#: as one once unquoted): written with a leading ``'`` that :func:`from_csv_text` takes off again.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "'")


def csv_text(value: str) -> str:
    """A text cell a spreadsheet shows as text, never runs as a formula (OWASP's leading quote).

    >>> csv_text("=HYPERLINK(1)"), csv_text("-x"), csv_text("'q"), csv_text("gpt-4")
    ("'=HYPERLINK(1)", "'-x", "''q", 'gpt-4')
    """
    return "'" + value if value.startswith(FORMULA_START) else value


def from_csv_text(value: str) -> str:
    """The text :func:`csv_text` wrote: its leading quote taken off, so names survive a round trip.

    Only a quote :func:`csv_text` could have added goes (one before a formula character or a quote),
    so a foreign file's ``'abc`` stays as it is.

    >>> from_csv_text(csv_text("=1+1")), from_csv_text(csv_text("'q")), from_csv_text("'abc")
    ('=1+1', "'q", "'abc")
    """
    return value[1:] if value.startswith("'") and value[1:].startswith(FORMULA_START) else value


def csv_safe(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with every text cell of its text columns passed through :func:`csv_text`."""
    out = table.copy()
    for column in out.columns:
        if out[column].dtype == object or pd.api.types.is_string_dtype(out[column]):
            out[column] = out[column].map(lambda v: csv_text(v) if isinstance(v, str) else v)
    return out


def read_csv_table(path, text_columns) -> pd.DataFrame:
    """A CSV this package wrote: ``text_columns`` read as text exactly ("001", "NaN", "" stay so), the
    formula quotes taken off; every other column read as pandas would."""
    header = pd.read_csv(path, nrows=0).columns
    text = [c for c in header if c in text_columns]
    table = pd.read_csv(path, dtype={c: str for c in text}, keep_default_na=False,
                        na_values={c: sorted(_NA_VALUES) for c in header if c not in text})
    for column in text:
        table[column] = table[column].map(from_csv_text)
    return table


#: What pandas reads as missing by default (kept for the columns that are not text).
_NA_VALUES = frozenset(["", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
                        "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"])


def _cell(value, column: str) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return NOT_REACHED if column in MDAD_VALUE_COLUMNS else ""
        return f"{value:.4g}" if column not in MDAD_VALUE_COLUMNS else f"{value:g}"
    return str(value)


def _markdown_cell(text: str) -> str:
    """A cell that cannot end its table row: pipes escaped, line breaks as spaces."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def render(table: pd.DataFrame, fmt: str = "csv") -> str:
    """CSV or a GitHub-style Markdown table; NaN in MDAD columns reads 'not reached'."""
    rows = list(table.itertuples(index=False))
    header = list(map(str, table.columns))
    if fmt == "csv":  # the csv module quotes commas, quotes and line breaks inside names
        cells = [[csv_text(v) if isinstance(v, str) else _cell(v, c) for c, v in zip(table.columns, row)]
                 for row in rows]
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows([header, *cells])
        return out.getvalue()
    if fmt == "markdown":
        header = list(map(_markdown_cell, header))
        cells = [[_markdown_cell(_cell(v, c)) for c, v in zip(table.columns, row)] for row in rows]
        widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(header)]
        line = lambda r: "| " + " | ".join(s.ljust(w) for s, w in zip(r, widths)) + " |"  # noqa: E731
        sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
        return "\n".join([line(header), sep, *map(line, cells)]) + "\n"
    raise ValueError(f"unknown format {fmt!r}; use csv or markdown")

"""Results tables as text (mbutils.base.tables): names a spreadsheet would read as numbers or formulas stay
text in CSV, and a Markdown cell cannot break its row."""

from __future__ import annotations

import pandas as pd

from mbutils.base.tables import csv_text, from_csv_text, render


#: Names a spreadsheet or pandas would change: numbers, missing-value words, formulas, a quote.
AWKWARD = ["001", "1", "NaN", "", "=1+1", "+x", "-y", "@z", "'quoted", "null", "1e5", " pad "]


def test_csv_text_round_trips_every_awkward_name():
    for name in AWKWARD + ["''", "'=", "\tx", "plain"]:
        assert from_csv_text(csv_text(name)) == name
        assert not csv_text(name).startswith(("=", "+", "-", "@", "\t", "\r"))


def test_markdown_cells_cannot_break_their_row():
    table = pd.DataFrame({"selector": ["a|b", "line\nbreak"], "mdad": [1.0, float("nan")]})
    text = render(table, "markdown")
    rows = text.strip().split("\n")
    assert len(rows) == 4 and all(row.count("|") - row.count("\\|") == 3 for row in rows)
    assert "a\\|b" in text and "not reached" in text
    csv_text_out = render(pd.DataFrame({"selector": ["=cmd"], "size": [-1]}), "csv")
    assert "'=cmd" in csv_text_out and ",-1" in csv_text_out  # numbers are not text: never quoted

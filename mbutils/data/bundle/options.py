"""Answer options per item, so pages state the chance level of the bundle they ran on (or say it is unknown).

Two sources, in this order: a per-item column ``n_options`` of items.csv (``n_choices``, the name the
synthetic bundles and older bundles use, is read the same way), else the bundle's provenance.json
key ``answer_options``: ``{"n_options": 4}`` for every item, or ``{"n_options": {"subtask": n, ...}}``
per subtask, with a ``"source"`` saying where the counts come from. A bundle that gives neither has
unknown options, and pages say so rather than assume four.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

#: items.csv columns read as the number of answer options (first found wins).
OPTION_COLUMNS = ("n_options", "n_choices")
PROVENANCE_KEY = "answer_options"


def bad_option_rows(values) -> np.ndarray:
    """Positions of values that are not a whole number of at least 2 (empty cells allowed: unknown)."""
    series = pd.Series(np.asarray(values, dtype=object))
    present = series.notna() & (series.astype(str).str.strip() != "")
    number = pd.to_numeric(series.where(present), errors="coerce")
    bad = present & ~(number.notna() & (number >= 2) & (number == np.floor(number)))
    return np.flatnonzero(bad.to_numpy())


def from_provenance(folder: Path, subtasks: np.ndarray) -> tuple[np.ndarray | None, str]:
    """(options per item or None, source text) from a bundle's provenance.json, if it says."""
    path = Path(folder) / "provenance.json"
    if not path.is_file():
        return None, ""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None, ""
    entry = record.get(PROVENANCE_KEY) if isinstance(record, dict) else None
    if not isinstance(entry, dict) or "n_options" not in entry:
        return None, ""
    spec = entry["n_options"]
    names = np.asarray(subtasks, dtype=str)
    if isinstance(spec, dict):
        values = np.array([spec.get(s, np.nan) for s in names], dtype=float)
    else:
        values = np.full(len(names), float(spec))
    return values, str(entry.get("source", ""))


def with_options(item_info: pd.DataFrame | None, folder: Path, items: np.ndarray,
                 subtasks: np.ndarray) -> pd.DataFrame | None:
    """``item_info`` with an ``n_options`` column when the bundle gives the counts (unchanged otherwise)."""
    if item_info is not None and any(c in item_info for c in OPTION_COLUMNS):
        return item_info
    values, source = from_provenance(folder, subtasks)
    if values is None:
        return item_info
    base = item_info if item_info is not None else pd.DataFrame({"item": items, "subtask": subtasks})
    out = base.assign(n_options=values)
    out.attrs["n_options_source"] = source
    return out


def options_per_item(item_info: pd.DataFrame | None, n_items: int) -> np.ndarray:
    """Answer options per item as floats (NaN where unknown)."""
    if item_info is not None:
        for column in OPTION_COLUMNS:
            if column in item_info:
                values = pd.to_numeric(pd.Series(item_info[column], dtype=object), errors="coerce").to_numpy(float)
                return np.where(values >= 2, values, np.nan)
    return np.full(n_items, np.nan)

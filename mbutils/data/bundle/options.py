"""Answer options per item, so pages state the chance level of the bundle they ran on (or say it is unknown).

Two sources, in this order: a per-item column ``n_options`` of items.csv (``n_choices``, the name the
synthetic bundles and older bundles use, is read the same way), else the bundle's provenance.json
key ``answer_options``: ``{"n_options": 4}`` for every item, or ``{"n_options": {"subtask": n, ...}}``
per subtask, with a ``"source"`` saying where the counts come from. A bundle that gives neither has
unknown options, and pages say so rather than assume four.

Both sources are held to one rule, checked when a bundle is validated and when it is loaded (one
pass, :mod:`mbutils.data.bundle.read`): a count is a whole number from 2 to :data:`MAX_OPTIONS`
(:func:`number_fault`). An items.csv cell may be empty (unknown); in provenance.json a count is a
JSON number, so text, ``true``, ``null``, lists and nested objects are refused by what they are
(:func:`value_fault`), and a subtask whose count is not known is left out of the mapping.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from mbutils.data.bundle.format import PROVENANCE
from mbutils.data.bundle.problems import MAX_LISTED, ProblemLog
from mbutils.data.bundle.record import json_kind

#: items.csv columns read as the number of answer options (first found wins).
OPTION_COLUMNS = ("n_options", "n_choices")
PROVENANCE_KEY = "answer_options"
#: The most answer options an item may have: beyond any multiple-choice benchmark, and small enough that
#: every page states its chance level as a readable number.
MAX_OPTIONS = 1_000
#: The rule, in words, for every message that refuses a count.
RULE = f"a whole number from 2 to {MAX_OPTIONS:,}"


def number_fault(number) -> str | None:
    """Why a number (int or float) is no count of answer options, in a few words; None when it is one."""
    if isinstance(number, (float, np.floating)):
        if math.isnan(number):
            return "not a number"
        if math.isinf(number):
            return "infinite (or too large to be a number)"
        if not float(number).is_integer():
            return "not a whole number"
    if number < 2:
        return "fewer than 2: a guess needs at least two options"
    if number > MAX_OPTIONS:
        return f"more than {MAX_OPTIONS:,}, the most a bundle may state"
    return None


def value_fault(value) -> str | None:
    """Why a JSON value is no count of answer options; None when it is one. Only a JSON number can be:
    text, true/false (a bool is no number), null, a list and an object are refused by what they are."""
    if value is None or isinstance(value, (bool, str, list, dict)):
        hint = ""
        if isinstance(value, str):
            number = pd.to_numeric(pd.Series([value], dtype=object), errors="coerce").iloc[0]
            hint = "; write the number without quotes" if not number_fault(float(number)) else ""
        return f"{json_kind(value)}, not a number{hint}"
    if isinstance(value, (int, float)):
        return number_fault(value)
    return "not a number"


def shown(value) -> str:
    """A JSON value as the file writes it, cut to a readable length."""
    try:
        text = json.dumps(value)
    except ValueError:  # an integer too long to print
        text = "a number of thousands of digits"
    return text if len(text) <= 60 else text[:57] + "..."


def _numbers(values) -> tuple[pd.Series, pd.Series]:
    """(present, number) of a column of cells: a cell is present unless empty; its number is NaN unless it
    reads as one."""
    series = pd.Series(np.asarray(values, dtype=object))
    present = series.notna() & (series.astype(str).str.strip() != "")
    number = pd.to_numeric(series.where(present), errors="coerce").astype(float)
    return present, number


def _good(number: np.ndarray) -> np.ndarray:
    """Where a float array holds counts of answer options (whole numbers from 2 to MAX_OPTIONS)."""
    with np.errstate(invalid="ignore"):
        return np.isfinite(number) & (number >= 2) & (number <= MAX_OPTIONS) & (number == np.floor(number))


def bad_option_rows(values) -> np.ndarray:
    """Positions of cells that are not a count of answer options (empty cells allowed: unknown)."""
    present, number = _numbers(values)
    return np.flatnonzero(present.to_numpy() & ~_good(number.to_numpy()))


def cell_fault(text) -> str:
    """Why one items.csv cell is no count of answer options (the cell is one :func:`bad_option_rows` found)."""
    number = _numbers([text])[1].iloc[0]
    return number_fault(float(number)) or "not a number"


def _usage(per_subtask: bool) -> str:
    if per_subtask:
        return f"give {RULE} for each subtask, or leave out a subtask whose count is not known"
    return (f"give {{\"n_options\": N}} with N {RULE} for every item, or {{\"n_options\": {{subtask: N, ...}}}} per "
            "subtask, or remove the key when the counts are not known")


def provenance_options(record, subtasks, log: ProblemLog) -> tuple[np.ndarray, str] | None:
    """Options per item (aligned to ``subtasks``, NaN where unknown) and their source, from provenance.json's
    ``answer_options``; None when it gives none, or gives counts that break the rule (each fault logged as an
    error naming the key). ``subtasks`` None (items.csv unusable): the statement is checked, nothing returned."""
    if record is None or PROVENANCE_KEY not in record:
        return None
    entry, where = record[PROVENANCE_KEY], f"key {PROVENANCE_KEY!r}"
    if not isinstance(entry, dict) or "n_options" not in entry:
        what = f"is {json_kind(entry)}, not an object" if not isinstance(entry, dict) else "gives no \"n_options\""
        log.error(PROVENANCE, where, f"{what}; {_usage(False)}")
        return None
    for key in getattr(entry, "repeated", ()):
        log.error(PROVENANCE, f"{where}, {shown(key)}", "is given more than once; keep one (JSON readers silently "
                  "keep only the last)")
    spec, here = entry["n_options"], f"{where}, \"n_options\""
    if not isinstance(spec, dict):
        fault = value_fault(spec)
        if fault:
            log.error(PROVENANCE, here, f"{shown(spec)} is not a number of answer options ({fault}); {_usage(False)}")
            return None
        spec = None if subtasks is None else {str(s): spec for s in subtasks}
    elif not spec:
        log.error(PROVENANCE, here, f"is an empty object, which gives no count; {_usage(False)}")
        return None
    else:
        bad = [(key, value, fault) for key, value in spec.items() if (fault := value_fault(value))]
        log.listing(PROVENANCE, [(f"{here}, subtask {shown(key)}", f"{shown(value)} is not a number of answer options "
                                  f"({fault}); {_usage(True)}") for key, value, fault in bad[:MAX_LISTED]],
                    len(bad), "subtasks with an unusable number of answer options")
        for key in getattr(spec, "repeated", ()):
            log.error(PROVENANCE, f"{here}, subtask {shown(key)}", "is given more than once; keep one (JSON readers "
                      "silently keep only the last)")
        if bad or getattr(spec, "repeated", ()):
            return None
        if subtasks is not None:
            _unmatched(spec, subtasks, here, log)
    if subtasks is None or spec is None:
        return None
    values = np.array([float(spec[str(s)]) if str(s) in spec else np.nan for s in subtasks], dtype=float)
    return values, str(entry.get("source", ""))


def _unmatched(spec: dict, subtasks, here: str, log: ProblemLog) -> None:
    """Warn of mapping keys that are no subtask of the bundle (a misspelt name leaves its subtask unknown)."""
    names = list(dict.fromkeys(str(s) for s in subtasks))
    unknown = [key for key in spec if key not in set(names)]
    if not unknown:
        return
    absent = [name for name in names if name not in spec]
    listed = lambda keys: ", ".join(map(ascii, keys[:MAX_LISTED])) + (  # noqa: E731
        f" and {len(keys) - MAX_LISTED:,} more" if len(keys) > MAX_LISTED else "")
    also = (f"; it gives no count for subtask(s) {listed(absent)}, so the pages state no chance level"
            if absent else "")
    log.warn(PROVENANCE, here, f"names subtask(s) {listed(unknown)} that items.csv does not have (ignored){also}; "
             "check the spelling: case and Unicode spelling count")


def with_options(item_info: pd.DataFrame | None, options: tuple[np.ndarray, str] | None, items: np.ndarray,
                 subtasks: np.ndarray) -> pd.DataFrame | None:
    """``item_info`` with an ``n_options`` column from provenance.json's counts (``options``, aligned to
    ``items``), unless items.csv gives its own column; unchanged when the bundle gives no counts."""
    if item_info is not None and any(c in item_info for c in OPTION_COLUMNS):
        return item_info
    if options is None:
        return item_info
    values, source = options
    base = item_info if item_info is not None else pd.DataFrame({"item": items, "subtask": subtasks})
    out = base.assign(n_options=values)
    out.attrs["n_options_source"] = source
    return out


def options_per_item(item_info: pd.DataFrame | None, n_items: int) -> np.ndarray:
    """Answer options per item as floats (NaN where unknown, or where a value breaks the rule: a Benchmark
    built in memory is not validated as a bundle is)."""
    if item_info is not None:
        for column in OPTION_COLUMNS:
            if column in item_info:
                values = pd.to_numeric(pd.Series(item_info[column], dtype=object), errors="coerce").to_numpy(float)
                return np.where(_good(values), values, np.nan)
    return np.full(n_items, np.nan)

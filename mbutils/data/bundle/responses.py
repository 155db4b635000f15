"""Reading responses.csv: the models x items matrix of 0/1 codes, its names checked, its empty cells counted.

Accepted spellings become 0/1; an empty cell is a missing answer (kept as a code, so the
load can drop models or items), anything else is reported with a hint.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from mbutils.data.bundle.files import read_table, separator_hint
from mbutils.data.bundle.format import RESPONSES
from mbutils.data.bundle.problems import (MAX_LISTED, ProblemLog, all_unique, duplicates, lookalikes, number_list,
                                          plural, row_label, spellings_message, unusable)


MISSING_CODE, BAD_CODE = -1, -2  # codes next to 0/1 in the parsed responses matrix
_NAN_WORDS = {"nan", "na", "n/a", "null", "none", "-", "?"}


@dataclass
class Responses:
    """The parsed responses.csv: models, their line numbers, items and the matrix of answer codes."""

    models: np.ndarray  # object, one per row kept
    lines: np.ndarray  # line number of each row
    items: np.ndarray  # object, header order
    codes: np.ndarray  # int8: 0/1, MISSING_CODE, BAD_CODE

    @cached_property
    def unique(self) -> bool:
        return all_unique(self.models) and all_unique(self.items)


def _row_codes(fields: list[str]) -> np.ndarray:
    """Codes of one row of responses; rows of plain 0/1 take a fast path through bytes."""
    joined = "".join(fields)
    if len(joined) == len(fields) and joined.isascii() and "" not in fields:
        # n non-empty fields joined into n characters: every field is one character.
        codes = np.frombuffer(joined.encode("ascii"), dtype=np.int8) - ord("0")
        if ((codes == 0) | (codes == 1)).all():
            return codes
    # U4 suffices: accepted values have at most 3 characters, and a longer value cut to 4 stays invalid.
    return _codes(np.array(fields, dtype="U4"))


def _codes(values: np.ndarray) -> np.ndarray:
    """0/1 for accepted spellings, MISSING_CODE for empty, BAD_CODE for anything else."""
    codes = np.full(values.shape, BAD_CODE, dtype=np.int8)
    codes[(values == "0") | (values == "0.0")] = 0
    codes[(values == "1") | (values == "1.0")] = 1
    codes[values == ""] = MISSING_CODE
    return codes


def _value_hint(raw: str) -> str:
    if raw.strip().lower() in _NAN_WORDS:
        return " (leave the cell empty for a missing answer)"
    try:
        if 0 < float(raw) < 1:
            return " (responses are correctness, 0 or 1; probabilities belong in confidence.csv)"
    except ValueError:
        pass
    return ""


def read_responses(folder: Path, log: ProblemLog) -> Responses | None:
    """responses.csv parsed into :class:`Responses`, every problem logged; ``None`` when it cannot be read."""
    table = read_table(
        folder, RESPONSES, log, key="model", required=True,
        what="one row per model: the model name, then one 0/1 column per item",
    )
    if table is None:
        return None
    header = table.header
    if header[0].strip().lower() != "model":
        log.warn(RESPONSES, "row 1 (header)",
                 f"the first column is named '{header[0]}'; it is read as the model names (call it 'model')")
    items = np.array(header[1:], dtype=object)
    if items.size == 0:
        log.error(RESPONSES, "row 1 (header)",
                  "no item columns; the header must be model, then one column per item" + separator_hint(header))
        return None
    empty = np.flatnonzero(items == "")
    if empty.size:
        log.error(RESPONSES, "row 1 (header)",
                  f"column(s) {number_list((empty + 2).tolist())} have no item name")
    odd = unusable(items)
    if odd.size:
        log.error(RESPONSES, "row 1 (header)",
                  f"column(s) {number_list((odd + 2).tolist())} have an item name that is only white space or holds a "
                  "line break, tab or other control character; give each item a plain name")
    dups, n_dups = duplicates(items, np.arange(2, items.size + 2))
    log.listing(
        RESPONSES,
        [("row 1 (header)", f"item '{n}' appears in columns {number_list(c)}; item names must be unique")
         for n, c in dups],
        n_dups, "repeated item names",
    )
    alike, n_alike = lookalikes(items, np.arange(2, items.size + 2))
    log.listing(
        RESPONSES,
        [("row 1 (header)", spellings_message("items", names, [f"column {c}" for c in columns]) + ", in responses.csv and "
          "items.csv") for names, columns in alike],
        n_alike, "item names written in several Unicode spellings",
    )

    models, lines, rows = [], [], []
    bad: list[tuple[str, str]] = []
    n_bad = 0
    for line, row in table.rows:
        codes = _row_codes(row[1:])
        models.append(row[0])
        lines.append(line)
        rows.append(codes)
        wrong = np.flatnonzero(codes == BAD_CODE)
        n_bad += wrong.size
        for j in wrong[: max(0, MAX_LISTED - len(bad))]:
            raw = row[j + 1]
            bad.append((f"{row_label(line, 'model', row[0])}, column '{items[j]}'",
                        f"value '{raw}' is not 0 or 1{_value_hint(raw)}"))
    log.listing(RESPONSES, bad, n_bad, "values that are not 0 or 1")
    if not models:
        log.error(RESPONSES, "", "the file has a header but no model rows")
        return None
    resp = Responses(np.array(models, dtype=object), np.array(lines), items, np.vstack(rows))
    empty_models = np.flatnonzero(resp.models == "")
    if empty_models.size:
        log.error(RESPONSES, f"row(s) {number_list(resp.lines[empty_models].tolist())}", "empty model name")
    formula = np.flatnonzero(pd.Series(resp.models, dtype=object).astype(str).str.match(r"^[=+@]"))
    if formula.size:
        log.warn(RESPONSES, f"row(s) {number_list(resp.lines[formula].tolist())}",
                 "model name starts with '=', '+' or '@': a spreadsheet opening a CSV of results may run it as a "
                 "formula; rename the model if the results will be opened in one")
    odd = unusable(resp.models)
    if odd.size:
        log.error(RESPONSES, f"row(s) {number_list(resp.lines[odd].tolist())}",
                  "model name that is only white space or holds a line break, tab or other control character; give each model a plain name")
    dups, n_dups = duplicates(resp.models, resp.lines)
    log.listing(
        RESPONSES,
        [(f"rows {number_list(w)}", f"model '{n}' appears more than once; keep one row per model")
         for n, w in dups],
        n_dups, "repeated model names",
    )
    alike, n_alike = lookalikes(resp.models, resp.lines)
    log.listing(
        RESPONSES,
        [(f"rows {number_list(where)}", spellings_message("models", names, [f"row {r}" for r in where]))
         for names, where in alike],
        n_alike, "model names written in several Unicode spellings",
    )
    missing = resp.codes == MISSING_CODE
    if missing.any():
        log.warn(RESPONSES, "", missing_summary(resp, missing) + " " + missing_choices(missing), kind="missing")
    return resp


def missing_summary(resp: Responses, missing: np.ndarray) -> str:
    """Which models miss how many items — shared by the validation warning and the load error."""
    per_model = missing.sum(axis=1)
    affected = np.flatnonzero(per_model)
    listed = [f"{resp.models[i]} (row {resp.lines[i]}) misses {plural(per_model[i], 'item')}"
              for i in affected[:MAX_LISTED]]
    more = f"; and {affected.size - MAX_LISTED:,} more models" if affected.size > MAX_LISTED else ""
    n_items = int(missing.any(axis=0).sum())
    return (
        f"{plural(int(missing.sum()), 'empty cell')} (missing answers) in {affected.size:,} of "
        f"{missing.shape[0]:,} models and {n_items:,} of {missing.shape[1]:,} items: "
        f"{'; '.join(listed)}{more}."
    )


def missing_choices(missing: np.ndarray) -> str:
    """What each ``missing`` policy would keep of a matrix with empty cells, as one sentence."""
    keep_models = int((~missing.any(axis=1)).sum())
    keep_items = int((~missing.any(axis=0)).sum())
    return (
        f'To load it, choose: missing="drop_models" (command line: --missing drop-models) keeps '
        f"{plural(keep_models, 'model')} x {plural(missing.shape[1], 'item')}; "
        f'missing="drop_items" (--missing drop-items) keeps '
        f"{plural(missing.shape[0], 'model')} x {plural(keep_items, 'item')}."
    )

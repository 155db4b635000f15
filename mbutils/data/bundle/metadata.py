"""Reading the files beside responses.csv: items, confidences, models and target sets, aligned to it.

Each reader checks its file against the responses (every item listed, the same models and
items, known members) and returns its content in the responses' order.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from mbutils.data.bundle.files import decode, present, read_table, separator_hint
from mbutils.data.bundle.options import OPTION_COLUMNS, RULE, bad_option_rows, cell_fault
from mbutils.data.bundle.format import CONFIDENCE, ITEMS, MODELS, TARGET_SETS
from mbutils.data.bundle.problems import (MAX_LISTED, ProblemLog, duplicates, lookalikes, name_index, nfc, number_list,
                                          quoted_names, row_label, spellings_message, unusable)
from mbutils.data.bundle.responses import Responses
from mbutils.data.bundle.search import stored_file


def _column(values: list[str]) -> np.ndarray:
    """Typed column from CSV text: int, float (exact round trip), bool, else strings (None if empty)."""
    text = np.array(values, dtype=str)
    empty = text == ""
    if not empty.all():
        if not empty.any():
            try:
                return text.astype(np.int64)
            except (ValueError, OverflowError):  # OverflowError: a whole number beyond 64 bits, read as a float
                pass
        try:
            return np.where(empty, "nan", text).astype(np.float64)
        except ValueError:
            pass
        if set(text[~empty].tolist()) <= {"True", "False"} and not empty.any():
            return text == "True"
    column = np.array(values, dtype=object)
    column[empty] = None
    return column


def read_items(folder: Path, resp: Responses | None, log: ProblemLog):
    """Subtask per responses column, ``item_info`` (item, subtask + the extra columns; None if none) and the
    line of items.csv that gives each item."""
    table = read_table(folder, ITEMS, log, key="item", required=True,
                       what="one row per item with columns item,subtask")
    if table is None:
        return None
    columns = [h.strip() for h in table.header]
    rows = list(table.rows)
    absent = [c for c in ("item", "subtask") if c not in columns]
    if absent:
        log.error(ITEMS, "row 1 (header)",
                  f"no {' or '.join(repr(c) for c in absent)} column (columns found: {', '.join(columns)}); "
                  "items.csv needs the columns item,subtask" + separator_hint(table.header))
    for name, cols in duplicates(np.array(columns, dtype=object), np.arange(1, len(columns) + 1))[0]:
        log.error(ITEMS, "row 1 (header)",
                  f"column '{name}' appears {len(cols)} times (columns {number_list(cols)})")
    if absent or not rows:
        if not absent:
            log.error(ITEMS, "", "the file has a header but no item rows")
        return None
    lines = np.array([line for line, _ in rows])
    data = dict(zip(columns, map(list, zip(*(row for _, row in rows)))))
    names = np.array(data["item"], dtype=object)
    subtasks = np.array(data["subtask"], dtype=object)

    blank = np.flatnonzero(names == "")
    if blank.size:
        log.error(ITEMS, f"row(s) {number_list(lines[blank].tolist())}", "empty item name")
    odd = unusable(names)
    if odd.size:
        log.error(ITEMS, f"row(s) {number_list(lines[odd].tolist())}",
                  "item name that is only white space or holds a line break, tab or other control character; give each item a plain name")
    dups, n_dups = duplicates(names, lines)
    log.listing(
        ITEMS,
        [(f"rows {number_list(w)}", f"item '{n}' appears more than once; keep one row per item")
         for n, w in dups],
        n_dups, "repeated items",
    )
    if resp is None:  # else responses.csv's header reports them, or they are matched to it below
        alike, n_alike = lookalikes(names, lines)
        log.listing(ITEMS, [(f"rows {number_list(rows_)}", spellings_message("items", spelt, [f"row {r}" for r in rows_]))
                            for spelt, rows_ in alike], n_alike, "item names written in several Unicode spellings")
    alike, n_alike = lookalikes(subtasks, lines)
    log.listing(ITEMS, [(f"rows {number_list(rows_)}, column 'subtask'",
                         spellings_message("subtasks", spelt, [f"row {r}" for r in rows_])) for spelt, rows_ in alike],
                n_alike, "subtask names written in several Unicode spellings")
    odd = unusable(subtasks)
    if odd.size:
        log.error(ITEMS, f"row(s) {number_list(lines[odd].tolist())}, column 'subtask'",
                  "subtask name that is only white space or holds a line break, tab or other control "
                  "character; give each subtask a plain name")
    no_subtask = np.flatnonzero(subtasks == "")
    log.listing(
        ITEMS,
        [(row_label(lines[i], "item", names[i]),
          "empty subtask name; give every item a subtask (one name for all if the benchmark has none)")
         for i in no_subtask[:MAX_LISTED]],
        no_subtask.size, "items without a subtask",
    )
    if resp is None:
        return None
    first = np.flatnonzero(~name_index(names).duplicated())
    found = name_index(names[first]).get_indexer(resp.items)
    unlisted = np.flatnonzero(found < 0)
    extra = np.flatnonzero(~name_index(names).isin(resp.items))
    unlisted, extra, twins = _spelt_apart(names, resp.items, unlisted, extra)
    log.listing(
        ITEMS,
        [(row_label(lines[i], "item", names[i]),
          f"is written {ascii(str(names[i]))} here but {ascii(str(resp.items[j]))} in responses.csv (column {j + 2}): "
          "one name in two Unicode spellings, which look alike but differ; write it alike in both files")
         for i, j in twins[:MAX_LISTED]],
        len(twins), "items written in another Unicode spelling than in responses.csv",
    )
    log.listing(
        ITEMS,
        [("", f"item '{resp.items[j]}' (column {j + 2} of responses.csv) has no row; add it with its subtask")
         for j in unlisted[:MAX_LISTED]],
        unlisted.size, "items of responses.csv without a row in items.csv",
    )
    log.listing(
        ITEMS,
        [(row_label(lines[i], "item", names[i]),
          "this item is not a column of responses.csv; remove the row or add the column")
         for i in extra[:MAX_LISTED]],
        extra.size, "items not in responses.csv",
    )
    if unlisted.size or twins:
        return None
    index = first[found]
    for column in (c for c in OPTION_COLUMNS if c in data):
        bad = bad_option_rows(data[column])
        log.listing(
            ITEMS,
            [(f"{row_label(lines[i], 'item', names[i])}, column '{column}'",
              f"'{_cut(data[column][i])}' is not a number of answer options ({cell_fault(data[column][i])}); "
              f"give {RULE}, or leave the cell empty when it is not known") for i in bad[:MAX_LISTED]],
            bad.size, f"items with an unusable {column}",
        )
    info_cols = [c for c in columns if c not in ("item", "subtask")]
    info = None
    if info_cols:
        extra_cols = {c: _column(data[c])[index] for c in info_cols}
        info = pd.DataFrame({"item": resp.items, "subtask": subtasks[index], **extra_cols})
    return subtasks[index], info, lines[index]


def _cut(text: str, length: int = 40) -> str:
    """A cell as a message quotes it: at most ``length`` characters."""
    return text if len(text) <= length else text[: length - 3] + "..."


def _spelt_apart(names: np.ndarray, columns: np.ndarray, unlisted: np.ndarray, extra: np.ndarray):
    """Pair each column of responses.csv without a row (``unlisted``) with a row of items.csv naming no column
    (``extra``) that is the same name in another Unicode spelling: (unlisted, extra, pairs) with the pairs
    (row position, column position) taken out of both."""
    if not unlisted.size or not extra.size:
        return unlisted, extra, []
    rows: dict[str, int] = {}
    for i, form in zip(extra.tolist(), nfc(names[extra])):
        rows.setdefault(form, i)
    twins = []
    for j, form in zip(unlisted.tolist(), nfc(columns[unlisted])):
        if form in rows:
            twins.append((rows.pop(form), j))
    if not twins:
        return unlisted, extra, []
    rows_paired, columns_paired = {i for i, _ in twins}, {j for _, j in twins}
    return (np.array([j for j in unlisted.tolist() if j not in columns_paired], dtype=int),
            np.array([i for i in extra.tolist() if i not in rows_paired], dtype=int), twins)


def _float_or_none(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _floats(row: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(values, empty, unparsable) for one CSV row of numbers; clean rows take the fast path."""
    n = len(row)
    try:
        return np.fromiter(map(float, row), np.float64, n), np.zeros(n, bool), np.zeros(n, bool)
    except ValueError:
        pass
    parsed = np.array(list(map(_float_or_none, row)), dtype=object)
    failed = np.array([p is None for p in parsed], dtype=bool)
    empty = np.array(row, dtype=str) == ""
    values = np.where(failed, np.nan, parsed).astype(np.float64)
    return values, empty, failed & ~empty


def read_confidence(folder: Path, resp: Responses | None, log: ProblemLog) -> np.ndarray | None:
    """Confidences aligned to responses (rows and columns may come in another order)."""
    table = read_table(folder, CONFIDENCE, log, key="model", required=False,
                       what="the same models and items as responses.csv")
    if table is None:
        return None
    items = np.array(table.header[1:], dtype=object)
    models, lines, rows, empties = [], [], [], []
    wrong: list[tuple[str, str]] = []
    n_wrong = 0
    for line, row in table.rows:
        values, empty, unparsable = _floats(row[1:])
        out_of_range = ~np.isnan(values) & ~((values >= 0) & (values <= 1))
        nan_text = np.isnan(values) & ~empty & ~unparsable
        flagged = np.flatnonzero(unparsable | out_of_range | nan_text)
        n_wrong += flagged.size
        for j in flagged[: max(0, MAX_LISTED - len(wrong))]:
            raw = row[j + 1]
            what = "is outside [0, 1]" if out_of_range[j] else "is not a number"
            wrong.append((f"{row_label(line, 'model', row[0])}, column '{items[j]}'",
                          f"value '{raw}' {what}; confidences are probabilities between 0 and 1"))
        models.append(row[0])
        lines.append(line)
        rows.append(values)
        empties.append(empty)
    log.listing(CONFIDENCE, wrong, n_wrong, "confidences that are not numbers in [0, 1]")
    if not models:
        log.error(CONFIDENCE, "", "the file has a header but no model rows")
        return None
    models = np.array(models, dtype=object)
    if resp is None:
        return None
    agree = True
    for what, mine, theirs in (("models", models, resp.models), ("items", items, resp.items)):
        dups, n_dups = duplicates(mine, np.arange(mine.size))
        if n_dups:
            log.error(CONFIDENCE, "",
                      f"repeated {what}: {quoted_names([n for n, _ in dups])}")
            agree = False
        extra = mine[~name_index(mine).isin(theirs)]
        absent = theirs[~name_index(theirs).isin(mine)]
        if extra.size:
            log.error(CONFIDENCE, "",
                      f"has {what} that responses.csv lacks: {quoted_names(extra.tolist())}")
        if absent.size:
            log.error(CONFIDENCE, "",
                      f"lacks {what} of responses.csv: {quoted_names(absent.tolist())}")
        agree = agree and not extra.size and not absent.size
    if (models.size, items.size) != resp.codes.shape:
        n_models, n_items = resp.codes.shape
        log.error(CONFIDENCE, "",
                  f"has {models.size:,} models x {items.size:,} items but responses.csv has "
                  f"{n_models:,} x {n_items:,}; it must have the same models and items")
    if not agree or not resp.unique:
        return None
    r, c = name_index(models).get_indexer(resp.models), name_index(items).get_indexer(resp.items)
    conf = np.vstack(rows)[np.ix_(r, c)]
    unmatched = np.vstack(empties)[np.ix_(r, c)] & (resp.codes >= 0)
    cells = np.argwhere(unmatched)
    log.listing(
        CONFIDENCE,
        [(f"{row_label(lines[r[i]], 'model', resp.models[i])}, column '{resp.items[j]}'",
          "empty, but responses.csv has an answer; give both or leave both empty")
         for i, j in cells[:MAX_LISTED]],
        len(cells), "empty confidences for answered cells",
    )
    return conf


def read_models(folder: Path, resp: Responses | None, log: ProblemLog) -> pd.DataFrame | None:
    """Model metadata, one row per responses row: model + metadata (empty where models.csv has no row)."""
    table = read_table(folder, MODELS, log, key="model", required=False,
                       what="one row per model: model, then metadata columns")
    if table is None:
        return None
    columns = [h.strip() for h in table.header]
    rows = list(table.rows)
    if "model" not in columns:
        log.error(MODELS, "row 1 (header)", f"no 'model' column (columns found: {', '.join(columns)})")
        return None
    for name, cols in duplicates(np.array(columns, dtype=object), np.arange(1, len(columns) + 1))[0]:
        log.error(MODELS, "row 1 (header)",
                  f"column '{name}' appears {len(cols)} times (columns {number_list(cols)})")
    if not rows:
        log.error(MODELS, "", "the file has a header but no model rows")
        return None
    lines = np.array([line for line, _ in rows])
    data = dict(zip(columns, map(list, zip(*(row for _, row in rows)))))
    names = np.array(data.pop("model"), dtype=object)
    dups, n_dups = duplicates(names, lines)
    log.listing(MODELS, [(f"rows {number_list(w)}", f"model '{n}' appears more than once") for n, w in dups],
                n_dups, "repeated models")
    if resp is None or dups or len(columns) != len(set(columns)):
        return None
    extra = names[~name_index(names).isin(resp.models)]
    if extra.size:
        log.warn(MODELS, "",
                f"rows for models not in responses.csv are ignored: {quoted_names(extra.tolist())}")
    absent = resp.models[~name_index(resp.models).isin(names)]
    if absent.size:
        log.warn(MODELS, "", f"no row, so no metadata, for models of responses.csv: {quoted_names(absent.tolist())}")
    if not data or not resp.unique:
        return None
    info = pd.DataFrame({c: _column(v) for c, v in data.items()}, index=name_index(names, name="model"))
    return info.reindex(name_index(resp.models, name="model")).reset_index()


def _object(pairs: list[tuple[str, object]], repeated: list[str]) -> dict:
    """A JSON object, noting keys given twice (``json`` would keep the last without a word)."""
    seen: dict = {}
    for key, value in pairs:
        if key in seen:
            repeated.append(key)
        seen[key] = value
    return seen


def read_target_sets(folder: Path, resp: Responses | None, log: ProblemLog) -> dict[str, list[str]]:
    """The target sets of target_sets.json (name -> models of responses.csv); ``{}`` when absent or unusable."""
    path = stored_file(folder, TARGET_SETS)
    if not present(folder, TARGET_SETS, log):
        return {}
    text = decode(path, log)
    if text is None:
        return {}
    repeated: list[str] = []
    try:
        sets = json.loads(text, object_pairs_hook=lambda pairs: _object(pairs, repeated))
    except json.JSONDecodeError as err:
        log.error(TARGET_SETS, f"line {err.lineno}, column {err.colno}", f"not valid JSON ({err.msg})")
        return {}
    except RecursionError:
        log.error(TARGET_SETS, "", "is nested too deeply to read; it must map set names to lists of models")
        return {}
    if not isinstance(sets, dict):
        log.error(TARGET_SETS, "",
                  "must be a JSON object mapping each set name to a list of model names, "
                  f'e.g. {{"7b_instruct": ["org/a", "org/b"]}}; found a {type(sets).__name__}')
        return {}
    for name in dict.fromkeys(repeated):
        log.error(TARGET_SETS, f"set '{name}'", "is defined more than once; keep one definition "
                  "(JSON readers silently keep only the last)")
    known = set(resp.models) if resp is not None else None
    good: dict[str, list[str]] = {}
    for name, members in sets.items():
        where = f"set '{name}'"
        if not isinstance(members, list) or not all(isinstance(m, str) for m in members):
            log.error(TARGET_SETS, where, "must be a list of model names (strings)")
            continue
        twice = sorted(m for m, n in Counter(members).items() if n > 1)
        if twice:
            log.error(TARGET_SETS, where, f"names {quoted_names(twice)} more than once")
        unknown = [m for m in members if known is not None and m not in known]
        if unknown:
            log.error(TARGET_SETS, where,
                      f"names models not in responses.csv: {quoted_names(unknown)}")
        good[name] = members
    return good

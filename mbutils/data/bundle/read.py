"""Reading bundles: find a folder, read and validate it, load it as a Benchmark.

A bundle folder holds ``responses.csv`` (models x items, 0/1, empty = missing),
``items.csv`` (``item,subtask`` + optional columns), and optionally
``confidence.csv``, ``models.csv`` and ``target_sets.json`` (see data/README.md).
Reading and the problem report are one pass (a :class:`Problem` names file, row and
column); writing lives in :mod:`mbutils.data.bundle.write`.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import zlib
import os
import stat
import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from mbutils.data.benchmark import Benchmark
from mbutils.data.catalogue import STAND_INS
from mbutils.data.datapath import data_folders, describe_data_path
from mbutils.base.errors import BundleError
from mbutils.data.bundle.format import CONFIDENCE, ITEMS, MISSING_POLICIES, MODELS, RESPONSES, TARGET_SETS
from mbutils.base.validation import check_choice, unsafe_names

#: A bundle file may be stored compressed: ``responses.csv.gz`` is read as ``responses.csv``.
COMPRESSED = ".gz"


# ---------------------------------------------------------------------------
# The folder format: find, validate, load, save
# ---------------------------------------------------------------------------

MAX_LISTED = 10  # instances listed per kind of problem before "... and N more"

_MISSING, _BAD = -1, -2  # codes next to 0/1 in the parsed responses matrix
_NAN_WORDS = {"nan", "na", "n/a", "null", "none", "-", "?"}


@dataclass(frozen=True)
class Problem:
    """One thing wrong (or worth knowing) about a bundle, located by file, row and column."""

    file: str
    location: str
    message: str
    severity: Literal["error", "warning"] = "error"
    #: What the problem is about, for callers that act on it ("missing": empty cells), else "".
    kind: str = ""

    def __str__(self) -> str:
        where = f"{self.file}, {self.location}" if self.location else self.file
        return f"{where}: {self.message}"


class _Log(list):
    """Collects problems; ``listing`` caps each kind at MAX_LISTED instances.

    ``stored`` maps a format name (``responses.csv``) to the name of the file actually read
    (``responses.csv.gz``), so that every problem names the file on disk."""

    def __init__(self):
        super().__init__()
        self.stored: dict[str, str] = {}

    def error(self, file: str, location: str, message: str) -> None:
        self.append(Problem(self.stored.get(file, file), location, message, "error"))

    def warn(self, file: str, location: str, message: str, kind: str = "") -> None:
        self.append(Problem(self.stored.get(file, file), location, message, "warning", kind))

    def listing(self, file: str, entries: list[tuple[str, str]], total: int, more: str) -> None:
        """Report the first entries (location, message) of ``total`` instances of one kind."""
        for location, message in entries[:MAX_LISTED]:
            self.error(file, location, message)
        shown = min(len(entries), MAX_LISTED)
        if total > shown:
            self.error(file, "", f"... and {total - shown:,} more {more}")


def _names(names, cap: int = MAX_LISTED) -> str:
    """'a', 'b' and 3 more — a capped list of names for one message."""
    names = [f"'{n}'" for n in names]
    if len(names) > cap:
        return ", ".join(names[:cap]) + f" and {len(names) - cap:,} more"
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _count(n: int, noun: str) -> str:
    """1 item, 2 items, 1,706 items."""
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _numbers(values) -> str:
    """3, 9 and 17 (capped)."""
    return _names(values).replace("'", "")


def _row(line: int, key: str, name: str) -> str:
    shown = name if len(name) <= 40 and "\n" not in name else name.split("\n")[0][:40] + "..."
    return f"row {line} ({key} '{shown}')"


# -- search path ------------------------------------------------------------


def search_path() -> list[Path]:
    """Folders searched for bundles by name: $MBUTILS_DATA (os.pathsep separated), then data/."""
    return [folder.path for folder in data_folders()]


def stored_file(folder: Path, file: str) -> Path:
    """The path a bundle file is stored at: ``file`` itself, else its compressed form ``file.gz``."""
    plain = folder / file
    if os.path.lexists(plain):
        return plain
    packed = folder / (file + COMPRESSED)
    return packed if os.path.lexists(packed) else plain


def is_bundle(folder: Path) -> bool:
    """A folder holding ``responses.csv`` (or ``responses.csv.gz``)."""
    return stored_file(folder, RESPONSES).is_file()


def list_bundles() -> dict[str, Path]:
    """Bundles found on the search path, by name; an earlier folder hides a later namesake."""
    found: dict[str, Path] = {}
    for root in search_path():
        if not root.is_dir():
            continue
        for sub in sorted(root.iterdir()):
            if sub.name.startswith(".") or sub.name in found:
                continue
            if is_bundle(sub):
                found[sub.name] = sub.resolve()
    return found


def find_bundle(name_or_dir: str | Path) -> Path:
    """The bundle folder: an existing folder as given, else a named bundle on the search path."""
    name = str(name_or_dir)
    if not name.strip():
        raise BundleError("no bundle given: name a bundle (e.g. gpqa) or a bundle folder")
    path = _spelled_as_on_disk(Path(name).expanduser())
    if path.is_dir():
        return path.resolve()
    if path.exists():
        raise BundleError(f"{path} is a file; give the bundle's folder (the one holding {RESPONSES})")
    looks_like_path = len(path.parts) != 1 or name in (".", "..")
    if not looks_like_path:
        for root in search_path():
            found = _spelled_as_on_disk(root / name)
            if is_bundle(found):
                return found.resolve()
    available = ", ".join(list_bundles()) or "none"
    if looks_like_path:
        what = f"no folder {str(path)!r}"
    else:
        what = (f"no bundle named {name!r}: looked for {name}/{RESPONSES} (or {RESPONSES}{COMPRESSED}) "
                f"in {describe_data_path()}")
    raise BundleError(
        f"{what}. Bundles available: {available}. Synthetic stand-ins: {', '.join(STAND_INS)}. "
        "Give a bundle name, a folder path, or add the folder that holds your bundles to MBUTILS_DATA."
    )


def _spelled_as_on_disk(path: Path) -> Path:
    """``path``, or its other Unicode spelling (NFC/NFD) when only that one exists: 'é' typed
    as one character or as 'e' + accent names the same folder."""
    if path.exists():
        return path
    for form in ("NFC", "NFD"):
        other = Path(unicodedata.normalize(form, str(path)))
        if other.exists():
            return other
    return path


# -- reading CSV with line numbers --------------------------------------------


def _not_a_file(path: Path) -> str | None:
    """Why ``path`` cannot be read as a file (folder, FIFO, link loop, ...); None if it can."""
    try:
        mode = path.stat().st_mode
    except OSError as err:
        if os.path.lexists(path):
            return (f"is a symbolic link that leads nowhere ({err.strerror.lower()}); "
                    "point it at the file or replace it with the file")
        return None
    if stat.S_ISREG(mode):
        return None
    what = "a folder" if stat.S_ISDIR(mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else \
        "not a regular file"
    return f"is {what}, not a file; replace it with the file itself"


def _present(folder: Path, file: str, log: "_Log") -> bool:
    """True when the bundle file exists as a regular file (plain or compressed); anything else
    there is reported. Afterwards the log names the file by its stored name."""
    path = stored_file(folder, file)
    if os.path.lexists(folder / file) and os.path.lexists(folder / (file + COMPRESSED)):
        log.error(file, "", f"both {file} and {file}{COMPRESSED} exist, and they may differ; keep one")
        return False
    if path.name != file:
        log.stored[file] = path.name
    why = _not_a_file(path)
    if why:
        log.error(file, "", why)
        return False
    return path.is_file()


def _decode(path: Path, log: _Log) -> str | None:
    """The file's text (decompressed if stored as ``.gz``), or None after reporting that it
    is not UTF-8 (or cannot be read at all)."""
    try:
        data = path.read_bytes()
    except OSError as err:
        log.error(path.name, "", f"cannot be read ({(err.strerror or str(err)).lower()}); check its permissions")
        return None
    if path.name.endswith(COMPRESSED):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as err:
            plain = path.name.removesuffix(COMPRESSED)
            log.error(path.name, "", f"is not a readable gzip file ({err}); compress it again with gzip, "
                      f"or store it uncompressed as {plain}")
            return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        log.error(
            path.name,
            f"row {line}" if ".csv" in path.suffixes else f"line {line}",
            f"the file is not UTF-8 text (byte 0x{data[err.start]:02x} cannot be decoded); "
            "re-save it as UTF-8 (in Excel: Save As > 'CSV UTF-8')",
        )
        return None


@dataclass
class _Table:
    """A CSV file's header and an iterator over its well-formed rows as (line number, fields)."""

    file: str
    header: list[str]
    rows: Iterator[tuple[int, list[str]]]


def _read_table(folder: Path, file: str, log: _Log, *, key: str, required: bool, what: str) -> _Table | None:
    """Open one CSV; ragged rows and CSV syntax errors are reported while the rows are consumed."""
    path = stored_file(folder, file)
    if not _present(folder, file, log):
        if required and not os.path.lexists(path):
            log.error(file, "", f"file not found in {folder}; every bundle needs one ({what})")
        return None
    text = _decode(path, log)
    if text is None:
        return None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next((row for row in reader if row), None)
    except csv.Error as err:
        log.error(file, f"row {reader.line_num}", f"cannot be read as CSV ({err})")
        return None
    if header is None:
        log.error(file, "", f"the file is empty; expected a header row, then {what}")
        return None
    stripped = [h.strip() for h in header]
    key_col = stripped.index(key) if key in stripped else 0

    def rows() -> Iterator[tuple[int, list[str]]]:
        ragged: list[tuple[str, str]] = []
        n_ragged = 0
        start = reader.line_num + 1  # the line where the next row begins
        try:
            for row in reader:
                row_start, start = start, reader.line_num + 1
                if not row:
                    continue  # blank line
                if len(row) == len(header):
                    yield reader.line_num, row
                    continue
                if any("\n" in field for field in row):
                    log.error(file, f"row {row_start}",
                              f"a quote (\") opens a field that is never closed, so rows {row_start} to "
                              f"{reader.line_num} read as one; close the quote or remove it")
                    continue
                n_ragged += 1
                if len(ragged) < MAX_LISTED:
                    name = row[key_col] if key_col < len(row) else row[0]
                    hint = ""
                    if len(row) > len(header) and not any(row[len(header):]):
                        hint = " (the extra fields are empty: a trailing comma?)"
                    ragged.append((
                        _row(reader.line_num, key, name),
                        f"has {len(row):,} fields but the header has {len(header):,}{hint}; "
                        "every row needs exactly one field per header column",
                    ))
        except csv.Error as err:
            log.error(file, f"row {reader.line_num}",
                      f"cannot be read as CSV ({err}); the rest of the file was skipped")
        log.listing(file, ragged, n_ragged, "rows with the wrong number of fields")

    return _Table(file, header, rows())


# -- the files of a bundle --------------------------------------------------


@dataclass
class _Responses:
    models: np.ndarray  # object, one per row kept
    lines: np.ndarray  # line number of each row
    items: np.ndarray  # object, header order
    codes: np.ndarray  # int8: 0/1, _MISSING, _BAD

    @cached_property
    def unique(self) -> bool:
        return _unique(self.models) and _unique(self.items)


def _index(names, name: str | None = None) -> pd.Index:
    """A plain object Index: hashing Python strings beats pandas' Arrow strings here."""
    return pd.Index(np.asarray(names, dtype=object), dtype=object, name=name)


def _unique(names: np.ndarray) -> bool:
    return not _index(names).duplicated().any()


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
    """0/1 for accepted spellings, _MISSING for empty, _BAD for anything else."""
    codes = np.full(values.shape, _BAD, dtype=np.int8)
    codes[(values == "0") | (values == "0.0")] = 0
    codes[(values == "1") | (values == "1.0")] = 1
    codes[values == ""] = _MISSING
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


def _unusable(names: np.ndarray) -> np.ndarray:
    """Positions of names no command can take: only white space, or a line break, tab, other control,
    Unicode line separator or bidirectional control inside (options, logs, tables and exported task
    files would split them or show other text than is stored)."""
    return unsafe_names(names)


def _duplicates(names: np.ndarray, lines) -> tuple[list[tuple[str, list]], int]:
    """(name, positions) for the first MAX_LISTED repeated names, and how many names repeat."""
    dup = _index(names).duplicated(keep=False)
    if not dup.any():
        return [], 0
    names_dup, where = names[dup], np.asarray(lines)[dup]
    order = pd.unique(pd.Series(names_dup))
    return [(n, where[names_dup == n].tolist()) for n in order[:MAX_LISTED]], len(order)


def _separator_hint(header: list[str]) -> str:
    """A hint when a one-column header looks separated by semicolons or tabs (a spreadsheet export)."""
    if len(header) == 1:
        for sep, name in ((";", "semicolons"), ("\t", "tabs")):
            if sep in header[0]:
                return (f" (the header looks separated by {name}, not commas: save the file as "
                        "comma-separated CSV)")
    return ""


def _read_responses(folder: Path, log: _Log) -> _Responses | None:
    table = _read_table(
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
                  "no item columns; the header must be model, then one column per item" + _separator_hint(header))
        return None
    empty = np.flatnonzero(items == "")
    if empty.size:
        log.error(RESPONSES, "row 1 (header)",
                  f"column(s) {_numbers((empty + 2).tolist())} have no item name")
    odd = _unusable(items)
    if odd.size:
        log.error(RESPONSES, "row 1 (header)",
                  f"column(s) {_numbers((odd + 2).tolist())} have an item name that is only white space or holds a "
                  "line break, tab or other control character; give each item a plain name")
    dups, n_dups = _duplicates(items, np.arange(2, items.size + 2))
    log.listing(
        RESPONSES,
        [("row 1 (header)", f"item '{n}' appears in columns {_numbers(c)}; item names must be unique")
         for n, c in dups],
        n_dups, "repeated item names",
    )

    models, lines, rows = [], [], []
    bad: list[tuple[str, str]] = []
    n_bad = 0
    for line, row in table.rows:
        codes = _row_codes(row[1:])
        models.append(row[0])
        lines.append(line)
        rows.append(codes)
        wrong = np.flatnonzero(codes == _BAD)
        n_bad += wrong.size
        for j in wrong[: max(0, MAX_LISTED - len(bad))]:
            raw = row[j + 1]
            bad.append((f"{_row(line, 'model', row[0])}, column '{items[j]}'",
                        f"value '{raw}' is not 0 or 1{_value_hint(raw)}"))
    log.listing(RESPONSES, bad, n_bad, "values that are not 0 or 1")
    if not models:
        log.error(RESPONSES, "", "the file has a header but no model rows")
        return None
    resp = _Responses(np.array(models, dtype=object), np.array(lines), items, np.vstack(rows))
    empty_models = np.flatnonzero(resp.models == "")
    if empty_models.size:
        log.error(RESPONSES, f"row(s) {_numbers(resp.lines[empty_models].tolist())}", "empty model name")
    formula = np.flatnonzero(pd.Series(resp.models, dtype=object).astype(str).str.match(r"^[=+@]"))
    if formula.size:
        log.warn(RESPONSES, f"row(s) {_numbers(resp.lines[formula].tolist())}",
                 "model name starts with '=', '+' or '@': a spreadsheet opening a CSV of results may run it as a "
                 "formula; rename the model if the results will be opened in one")
    odd = _unusable(resp.models)
    if odd.size:
        log.error(RESPONSES, f"row(s) {_numbers(resp.lines[odd].tolist())}",
                  "model name that is only white space or holds a line break, tab or other control character; give each model a plain name")
    dups, n_dups = _duplicates(resp.models, resp.lines)
    log.listing(
        RESPONSES,
        [(f"rows {_numbers(w)}", f"model '{n}' appears more than once; keep one row per model")
         for n, w in dups],
        n_dups, "repeated model names",
    )
    missing = resp.codes == _MISSING
    if missing.any():
        log.warn(RESPONSES, "", _missing_summary(resp, missing) + " " + _missing_choices(missing), kind="missing")
    return resp


def _missing_summary(resp: _Responses, missing: np.ndarray) -> str:
    """Which models miss how many items — shared by the validation warning and the load error."""
    per_model = missing.sum(axis=1)
    affected = np.flatnonzero(per_model)
    listed = [f"{resp.models[i]} (row {resp.lines[i]}) misses {_count(per_model[i], 'item')}"
              for i in affected[:MAX_LISTED]]
    more = f"; and {affected.size - MAX_LISTED:,} more models" if affected.size > MAX_LISTED else ""
    n_items = int(missing.any(axis=0).sum())
    return (
        f"{_count(int(missing.sum()), 'empty cell')} (missing answers) in {affected.size:,} of "
        f"{missing.shape[0]:,} models and {n_items:,} of {missing.shape[1]:,} items: "
        f"{'; '.join(listed)}{more}."
    )


def _missing_choices(missing: np.ndarray) -> str:
    keep_models = int((~missing.any(axis=1)).sum())
    keep_items = int((~missing.any(axis=0)).sum())
    return (
        f'To load it, choose: missing="drop_models" (command line: --missing drop-models) keeps '
        f"{_count(keep_models, 'model')} x {_count(missing.shape[1], 'item')}; "
        f'missing="drop_items" (--missing drop-items) keeps '
        f"{_count(missing.shape[0], 'model')} x {_count(keep_items, 'item')}."
    )


def _column(values: list[str]) -> np.ndarray:
    """Typed column from CSV text: int, float (exact round trip), bool, else strings (None if empty)."""
    text = np.array(values, dtype=str)
    empty = text == ""
    if not empty.all():
        if not empty.any():
            try:
                return text.astype(np.int64)
            except ValueError:
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


def _read_items(folder: Path, resp: _Responses | None, log: _Log):
    """Subtask per responses column, and ``item_info`` (item, subtask + the extra columns; None if none)."""
    table = _read_table(folder, ITEMS, log, key="item", required=True,
                        what="one row per item with columns item,subtask")
    if table is None:
        return None
    columns = [h.strip() for h in table.header]
    rows = list(table.rows)
    absent = [c for c in ("item", "subtask") if c not in columns]
    if absent:
        log.error(ITEMS, "row 1 (header)",
                  f"no {' or '.join(repr(c) for c in absent)} column (columns found: {', '.join(columns)}); "
                  "items.csv needs the columns item,subtask" + _separator_hint(table.header))
    for name, cols in _duplicates(np.array(columns, dtype=object), np.arange(1, len(columns) + 1))[0]:
        log.error(ITEMS, "row 1 (header)",
                  f"column '{name}' appears {len(cols)} times (columns {_numbers(cols)})")
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
        log.error(ITEMS, f"row(s) {_numbers(lines[blank].tolist())}", "empty item name")
    odd = _unusable(names)
    if odd.size:
        log.error(ITEMS, f"row(s) {_numbers(lines[odd].tolist())}",
                  "item name that is only white space or holds a line break, tab or other control character; give each item a plain name")
    dups, n_dups = _duplicates(names, lines)
    log.listing(
        ITEMS,
        [(f"rows {_numbers(w)}", f"item '{n}' appears more than once; keep one row per item")
         for n, w in dups],
        n_dups, "repeated items",
    )
    odd = _unusable(subtasks)
    if odd.size:
        log.error(ITEMS, f"row(s) {_numbers(lines[odd].tolist())}, column 'subtask'",
                  "subtask name that is only white space or holds a line break, tab or other control "
                  "character; give each subtask a plain name")
    no_subtask = np.flatnonzero(subtasks == "")
    log.listing(
        ITEMS,
        [(_row(lines[i], "item", names[i]),
          "empty subtask name; give every item a subtask (one name for all if the benchmark has none)")
         for i in no_subtask[:MAX_LISTED]],
        no_subtask.size, "items without a subtask",
    )
    if resp is None:
        return None
    first = np.flatnonzero(~_index(names).duplicated())
    found = _index(names[first]).get_indexer(resp.items)
    unlisted = np.flatnonzero(found < 0)
    log.listing(
        ITEMS,
        [("", f"item '{resp.items[j]}' (column {j + 2} of responses.csv) has no row; add it with its subtask")
         for j in unlisted[:MAX_LISTED]],
        unlisted.size, "items of responses.csv without a row in items.csv",
    )
    extra = np.flatnonzero(~_index(names).isin(resp.items))
    log.listing(
        ITEMS,
        [(_row(lines[i], "item", names[i]),
          "this item is not a column of responses.csv; remove the row or add the column")
         for i in extra[:MAX_LISTED]],
        extra.size, "items not in responses.csv",
    )
    if unlisted.size:
        return None
    index = first[found]
    info_cols = [c for c in columns if c not in ("item", "subtask")]
    info = None
    if info_cols:
        extra_cols = {c: _column(data[c])[index] for c in info_cols}
        info = pd.DataFrame({"item": resp.items, "subtask": subtasks[index], **extra_cols})
    return subtasks[index], info


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


def _read_confidence(folder: Path, resp: _Responses | None, log: _Log) -> np.ndarray | None:
    """Confidences aligned to responses (rows and columns may come in another order)."""
    table = _read_table(folder, CONFIDENCE, log, key="model", required=False,
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
            wrong.append((f"{_row(line, 'model', row[0])}, column '{items[j]}'",
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
        dups, n_dups = _duplicates(mine, np.arange(mine.size))
        if n_dups:
            log.error(CONFIDENCE, "",
                      f"repeated {what}: {_names([n for n, _ in dups])}")
            agree = False
        extra = mine[~_index(mine).isin(theirs)]
        absent = theirs[~_index(theirs).isin(mine)]
        if extra.size:
            log.error(CONFIDENCE, "",
                      f"has {what} that responses.csv lacks: {_names(extra.tolist())}")
        if absent.size:
            log.error(CONFIDENCE, "",
                      f"lacks {what} of responses.csv: {_names(absent.tolist())}")
        agree = agree and not extra.size and not absent.size
    if (models.size, items.size) != resp.codes.shape:
        n_models, n_items = resp.codes.shape
        log.error(CONFIDENCE, "",
                  f"has {models.size:,} models x {items.size:,} items but responses.csv has "
                  f"{n_models:,} x {n_items:,}; it must have the same models and items")
    if not agree or not resp.unique:
        return None
    r, c = _index(models).get_indexer(resp.models), _index(items).get_indexer(resp.items)
    conf = np.vstack(rows)[np.ix_(r, c)]
    unmatched = np.vstack(empties)[np.ix_(r, c)] & (resp.codes >= 0)
    cells = np.argwhere(unmatched)
    log.listing(
        CONFIDENCE,
        [(f"{_row(lines[r[i]], 'model', resp.models[i])}, column '{resp.items[j]}'",
          "empty, but responses.csv has an answer; give both or leave both empty")
         for i, j in cells[:MAX_LISTED]],
        len(cells), "empty confidences for answered cells",
    )
    return conf


def _read_models(folder: Path, resp: _Responses | None, log: _Log) -> pd.DataFrame | None:
    """Model metadata, one row per responses row: model + metadata (empty where models.csv has no row)."""
    table = _read_table(folder, MODELS, log, key="model", required=False,
                        what="one row per model: model, then metadata columns")
    if table is None:
        return None
    columns = [h.strip() for h in table.header]
    rows = list(table.rows)
    if "model" not in columns:
        log.error(MODELS, "row 1 (header)", f"no 'model' column (columns found: {', '.join(columns)})")
        return None
    for name, cols in _duplicates(np.array(columns, dtype=object), np.arange(1, len(columns) + 1))[0]:
        log.error(MODELS, "row 1 (header)",
                  f"column '{name}' appears {len(cols)} times (columns {_numbers(cols)})")
    if not rows:
        log.error(MODELS, "", "the file has a header but no model rows")
        return None
    lines = np.array([line for line, _ in rows])
    data = dict(zip(columns, map(list, zip(*(row for _, row in rows)))))
    names = np.array(data.pop("model"), dtype=object)
    dups, n_dups = _duplicates(names, lines)
    log.listing(MODELS, [(f"rows {_numbers(w)}", f"model '{n}' appears more than once") for n, w in dups],
                n_dups, "repeated models")
    if resp is None or dups or len(columns) != len(set(columns)):
        return None
    extra = names[~_index(names).isin(resp.models)]
    if extra.size:
        log.warn(MODELS, "",
                 f"rows for models not in responses.csv are ignored: {_names(extra.tolist())}")
    absent = resp.models[~_index(resp.models).isin(names)]
    if absent.size:
        log.warn(MODELS, "", f"no row, so no metadata, for models of responses.csv: {_names(absent.tolist())}")
    if not data or not resp.unique:
        return None
    info = pd.DataFrame({c: _column(v) for c, v in data.items()}, index=_index(names, name="model"))
    return info.reindex(_index(resp.models, name="model")).reset_index()


def _object(pairs: list[tuple[str, object]], repeated: list[str]) -> dict:
    """A JSON object, noting keys given twice (``json`` would keep the last without a word)."""
    seen: dict = {}
    for key, value in pairs:
        if key in seen:
            repeated.append(key)
        seen[key] = value
    return seen


def _read_target_sets(folder: Path, resp: _Responses | None, log: _Log) -> dict[str, list[str]]:
    path = stored_file(folder, TARGET_SETS)
    if not _present(folder, TARGET_SETS, log):
        return {}
    text = _decode(path, log)
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
            log.error(TARGET_SETS, where, f"names {_names(twice)} more than once")
        unknown = [m for m in members if known is not None and m not in known]
        if unknown:
            log.error(TARGET_SETS, where,
                      f"names models not in responses.csv: {_names(unknown)}")
        good[name] = members
    return good


@dataclass
class _Parsed:
    responses: _Responses
    subtasks: np.ndarray
    item_info: pd.DataFrame | None
    confidence: np.ndarray | None
    model_info: pd.DataFrame | None
    target_sets: dict[str, list[str]]


def _read_bundle(folder: Path) -> tuple[_Parsed | None, list[Problem]]:
    """Read every file once, collecting every problem; the parse is usable only without errors."""
    log = _Log()
    resp = _read_responses(folder, log)
    items = _read_items(folder, resp, log)
    confidence = _read_confidence(folder, resp, log)
    model_info = _read_models(folder, resp, log)
    target_sets = _read_target_sets(folder, resp, log)
    if resp is None or items is None or any(p.severity == "error" for p in log):
        return None, list(log)
    return _Parsed(resp, items[0], items[1], confidence, model_info, target_sets), list(log)


def validate_bundle(name_or_dir: str | Path) -> list[Problem]:
    """Every problem of a bundle (errors and warnings), in file order; empty when all is well."""
    return _read_bundle(find_bundle(name_or_dir))[1]


def load_bundle(name_or_dir: str | Path, *, missing: str = "error") -> Benchmark:
    """Load a bundle as a complete :class:`Benchmark`; ``missing`` says how to resolve empty cells.

    ``missing``: ``"error"`` (refuse, naming the incomplete models), ``"drop_models"`` or
    ``"drop_items"``. Simulated bundles (``synthetic-*``) are generated by
    :func:`mbutils.load_benchmark`, which also accepts everything this accepts.
    """
    check_choice(missing, MISSING_POLICIES, "missing", BundleError)
    folder = find_bundle(name_or_dir)
    parsed, problems = _read_bundle(folder)
    errors = [p for p in problems if p.severity == "error"]
    if parsed is None or errors:
        listed = "\n".join(f"  {p}" for p in errors)
        raise BundleError(
            f"bundle '{folder.name}' ({folder}) cannot be loaded; {len(errors)} problem(s):\n{listed}\n"
            f"Fix these and check again with: python -m mbutils validate {folder}"
        )
    resp = parsed.responses
    rows, cols = _keep(resp, missing, folder)
    models = resp.models[rows]
    kept = set(models)
    item_info = None if parsed.item_info is None else parsed.item_info.iloc[cols].reset_index(drop=True)
    model_info = None if parsed.model_info is None else parsed.model_info.iloc[rows].reset_index(drop=True)
    return Benchmark(
        name=folder.name,
        correct=resp.codes[np.ix_(rows, cols)],
        models=models,
        items=resp.items[cols],
        subtasks=parsed.subtasks[cols],
        confidence=None if parsed.confidence is None else parsed.confidence[np.ix_(rows, cols)],
        item_info=item_info,
        model_info=model_info,
        target_sets={k: [m for m in v if m in kept] for k, v in parsed.target_sets.items()},
        origin=str(folder),
    )


def _keep(resp: _Responses, missing: str, folder: Path) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the rows and columns kept under the missing-cell policy."""
    holes = resp.codes == _MISSING
    rows, cols = np.arange(holes.shape[0]), np.arange(holes.shape[1])
    if not holes.any():
        return rows, cols
    if missing == "error":
        raise BundleError(
            f"bundle '{folder.name}' ({folder}) is incomplete: "
            f"{_missing_summary(resp, holes)} {_missing_choices(holes)}"
        )
    if missing == "drop_models":
        rows = np.flatnonzero(~holes.any(axis=1))
    else:
        cols = np.flatnonzero(~holes.any(axis=0))
    if rows.size == 0 or cols.size == 0:
        other = "drop_items" if missing == "drop_models" else "drop_models"
        every = "model" if rows.size == 0 else "item"
        raise BundleError(f"bundle '{folder.name}': missing={missing!r} leaves nothing "
                          f"(every {every} misses a cell); try missing={other!r}")
    return rows, cols

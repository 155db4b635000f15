"""Opening one bundle file: its text (plain or gzip, UTF-8) and its CSV rows with their line numbers.

What cannot be opened or parsed (a folder in a file's place, a broken link, bytes that are
not UTF-8, ragged rows, an unclosed quote) goes to the problem log, named by row.
"""

from __future__ import annotations

import csv
import gzip
import io
import os
import stat
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from mbutils.data.bundle.problems import MAX_LISTED, ProblemLog, row_label
from mbutils.data.bundle.search import COMPRESSED, stored_file


def not_a_file(path: Path) -> str | None:
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


def present(folder: Path, file: str, log: "ProblemLog") -> bool:
    """True when the bundle file exists as a regular file (plain or compressed); anything else
    there is reported. Afterwards the log names the file by its stored name."""
    path = stored_file(folder, file)
    if os.path.lexists(folder / file) and os.path.lexists(folder / (file + COMPRESSED)):
        log.error(file, "", f"both {file} and {file}{COMPRESSED} exist, and they may differ; keep one")
        return False
    if path.name != file:
        log.stored[file] = path.name
    why = not_a_file(path)
    if why:
        log.error(file, "", why)
        return False
    return path.is_file()


def decode(path: Path, log: ProblemLog) -> str | None:
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


def read_table(folder: Path, file: str, log: ProblemLog, *, key: str, required: bool, what: str) -> _Table | None:
    """Open one CSV; ragged rows and CSV syntax errors are reported while the rows are consumed."""
    path = stored_file(folder, file)
    if not present(folder, file, log):
        if required and not os.path.lexists(path):
            log.error(file, "", f"file not found in {folder}; every bundle needs one ({what})")
        return None
    text = decode(path, log)
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
                        row_label(reader.line_num, key, name),
                        f"has {len(row):,} fields but the header has {len(header):,}{hint}; "
                        "every row needs exactly one field per header column",
                    ))
        except csv.Error as err:
            log.error(file, f"row {reader.line_num}",
                      f"cannot be read as CSV ({err}); the rest of the file was skipped")
        log.listing(file, ragged, n_ragged, "rows with the wrong number of fields")

    return _Table(file, header, rows())


# -- the files of a bundle --------------------------------------------------


def separator_hint(header: list[str]) -> str:
    """A hint when a one-column header looks separated by semicolons or tabs (a spreadsheet export)."""
    if len(header) == 1:
        for sep, name in ((";", "semicolons"), ("\t", "tabs")):
            if sep in header[0]:
                return (f" (the header looks separated by {name}, not commas: save the file as "
                        "comma-separated CSV)")
    return ""

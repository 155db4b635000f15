"""Reading a bundle's provenance.json: one JSON object, its repeated keys remembered, or why it cannot be read.

The file is optional; what it states beyond the source (``answer_options``, ``lm_eval``) changes what
pages and exports say, so a file that is there but cannot be read is a problem of the bundle (named
by line and column), never a silent "states nothing". Every reader of the file goes through
:func:`read_record`: validation and loading with a problem log, the harness map without one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from mbutils.data.bundle.files import not_a_file
from mbutils.data.bundle.format import PROVENANCE
from mbutils.data.bundle.problems import ProblemLog


class JsonObject(dict):
    """A JSON object that remembers the keys it was given more than once (``json`` keeps the last silently)."""

    repeated: tuple = ()


def _object(pairs: list[tuple[str, object]]) -> JsonObject:
    found = JsonObject()
    twice = []
    for key, value in pairs:
        if key in found:
            twice.append(key)
        found[key] = value
    found.repeated = tuple(dict.fromkeys(twice))
    return found


def _text(path: Path, log: ProblemLog) -> str | None:
    try:
        data = path.read_bytes()
    except OSError as err:
        log.error(PROVENANCE, "", f"cannot be read ({(err.strerror or str(err)).lower()}); check its permissions")
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        log.error(PROVENANCE, f"line {line}", f"the file is not UTF-8 text (byte 0x{data[err.start]:02x} cannot be "
                  "decoded); re-save it as UTF-8")
        return None


def read_record(folder: Path | None, log: ProblemLog | None = None) -> JsonObject | None:
    """The object provenance.json holds; None when the bundle has none or it cannot be read (then, given a
    ``log``, the reason is logged as an error naming the file and the line)."""
    if folder is None:
        return None
    path = Path(folder) / PROVENANCE
    if not os.path.lexists(path):
        return None
    log = ProblemLog() if log is None else log
    why = not_a_file(path)
    if why:
        log.error(PROVENANCE, "", why)
        return None
    text = _text(path, log)
    if text is None:
        return None
    try:
        record = json.loads(text, object_pairs_hook=_object)
    except json.JSONDecodeError as err:
        log.error(PROVENANCE, f"line {err.lineno}, column {err.colno}", f"not valid JSON ({err.msg}); correct it, "
                  "or remove the file (it is optional)")
        return None
    except RecursionError:
        log.error(PROVENANCE, "", "is nested too deeply to read; it must be one JSON object of a few levels")
        return None
    except ValueError:  # an integer of thousands of digits: Python refuses to convert it
        log.error(PROVENANCE, "", "holds a number too long to read (thousands of digits); correct it")
        return None
    if not isinstance(record, dict):
        log.error(PROVENANCE, "", "must be a JSON object ({\"source\": ..., \"answer_options\": ..., ...}); found "
                  f"{json_kind(record)}")
        return None
    for key in record.repeated:
        log.error(PROVENANCE, f"key {key!r}", "is given more than once; keep one (JSON readers silently keep only "
                  "the last)")
    return record


def json_kind(value) -> str:
    """'a list', 'a number', ... for a JSON value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return "text" if isinstance(value, str) else "a number"

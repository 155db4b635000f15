"""Read JSON people or programs may have edited: every failure (bad text, bad bytes, nesting too deep
for the parser, a value of the wrong shape) is one message naming the file, never a traceback."""

from __future__ import annotations

import json
import math
from pathlib import Path

from mbutils.base.errors import MbutilsError


def parse_json(text: str, where: str, error: type[MbutilsError] = MbutilsError):
    """The value ``text`` holds; ``where`` names it in the message (a file, or a file and line)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise error(f"{where}: not valid JSON ({err.msg} at line {err.lineno}, column {err.colno})") from None
    except RecursionError:
        raise error(f"{where}: JSON nested too deeply to read; the file is damaged or was not written by "
                    "the program it claims to come from") from None
    except ValueError as err:  # e.g. a number too long to convert
        raise error(f"{where}: not usable JSON ({str(err)[:120]})") from None


def read_json(path: str | Path, error: type[MbutilsError] = MbutilsError, *, expect: type | None = dict,
              what: str = "a JSON object"):
    """The JSON value of the file at ``path``, of type ``expect`` (None: any)."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise error(f"{path}: not UTF-8 text (byte {err.start})") from None
    except OSError as err:
        raise error(f"{path}: cannot read it ({err.strerror or err})") from None
    value = parse_json(text, str(path), error)
    if expect is not None and not isinstance(value, expect):
        raise error(f"{path}: must hold {what}, not a JSON {type(value).__name__}")
    return value


def json_text(value, *, indent: int = 2) -> str:
    """``value`` as JSON text for a file: keys sorted, NaN and infinities written as null (JSON has
    neither), numpy scalars as plain numbers, a final newline."""
    def clean(v):
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if isinstance(v, dict):
            return {str(k): clean(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [clean(x) for x in v]
        if hasattr(v, "item") and getattr(v, "shape", None) == ():  # a numpy scalar
            return clean(v.item())
        return v

    return json.dumps(clean(value), indent=indent, sort_keys=True) + "\n"

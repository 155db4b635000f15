"""Checking options at the package's public entry points, with one wording for each kind of mistake.

Each check raises the caller's layer's exception (a seed error is a ``ProtocolError``, a
selector option a ``SelectorError``), so the command line can print the message alone.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from .errors import MbutilsError


def _quoted(values: Iterable) -> str:
    return ", ".join(repr(v) for v in values)


def check_choice(value, choices: Iterable, what: str, error: type[MbutilsError] = MbutilsError):
    """``value`` if it is one of ``choices``; else '<what> must be one of 'a', 'b', not 'x''."""
    choices = tuple(choices)
    if value not in choices:
        raise error(f"{what} must be one of {_quoted(choices)}, not {value!r}")
    return value


def check_int(value, what: str, error: type[MbutilsError] = MbutilsError, *, low: int | None = None,
              high: int | None = None) -> int:
    """``value`` as an int within [low, high]; bools, fractions, NaN and text are refused by name."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
            isinstance(value, float) and (not math.isfinite(value) or value != int(value))):
        raise error(f"{what} must be a whole number, not {value!r}")
    value = int(value)
    if low is not None and value < low:
        raise error(f"{what} must be at least {low}, not {value}")
    if high is not None and value > high:
        raise error(f"{what} must be at most {high}, not {value}")
    return value


def check_number(value, what: str, error: type[MbutilsError] = MbutilsError, *, low: float | None = None,
                 high: float | None = None, low_open: bool = False) -> float:
    """``value`` as a finite float within its bounds (``low_open``: strictly above ``low``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise error(f"{what} must be a finite number, not {value!r}")
    value = float(value)
    if low is not None and (value <= low if low_open else value < low):
        raise error(f"{what} must be {'above' if low_open else 'at least'} {low:g}, not {value:g}")
    if high is not None and value > high:
        raise error(f"{what} must be at most {high:g}, not {value:g}")
    return value


def check_workers(value, what: str = "jobs", error: type[MbutilsError] = MbutilsError, *, high: int = 1024) -> int:
    """A number of workers: -1 (all cores) or 1 to ``high``; 0 and other negatives are refused."""
    value = check_int(value, what, error, low=-1, high=high)
    if value == 0:
        raise error(f"{what} must be -1 (all cores) or at least 1, not 0")
    return value


def check_names(values, what: str, error: type[MbutilsError] = MbutilsError) -> list[str]:
    """A non-empty list of names (from a comma-separated option); an empty one is refused."""
    values = [str(v).strip() for v in values if str(v).strip()]
    if not values:
        raise error(f"{what} must name at least one, not an empty list")
    return values

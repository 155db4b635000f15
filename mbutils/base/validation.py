"""Checking options at the package's public entry points, with one wording for each kind of mistake.

Each check raises the caller's layer's exception (a seed error is a ``ProtocolError``, a
selector option a ``SelectorError``), so the command line can print the message alone.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from mbutils.base.errors import MbutilsError


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
                 high: float | None = None, low_open: bool = False, high_open: bool = False) -> float:
    """``value`` as a finite float within its bounds (``low_open``/``high_open``: the bound excluded)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise error(f"{what} must be a finite number, not {value!r}")
    value = float(value)
    if low is not None and (value <= low if low_open else value < low):
        raise error(f"{what} must be {'above' if low_open else 'at least'} {low:g}, not {value:g}")
    if high is not None and (value >= high if high_open else value > high):
        raise error(f"{what} must be {'below' if high_open else 'at most'} {high:g}, not {value:g}")
    return value


def check_bool(value, what: str, error: type[MbutilsError] = MbutilsError) -> bool:
    """``value`` if it is True or False (numpy's too); 0, 1 and text are refused."""
    if not isinstance(value, (bool, np.bool_)):
        raise error(f"{what} must be True or False, not {value!r}")
    return bool(value)


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


#: Characters no name may hold: controls (tab, line breaks, NUL, C1), the Unicode line and paragraph
#: separators, bidirectional controls and the byte-order mark. Each can split a line of a log, a table
#: or a YAML file, or show a reader other text than is stored.
UNSAFE_CHARACTERS = "[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]"


def unsafe_names(names) -> np.ndarray:
    """Positions of names that are only white space or hold an unsafe character (vectorised)."""
    text = pd.Series(np.asarray(names, dtype=object), dtype=object).astype(str)
    blank = (text.str.strip() == "") & (text != "")
    return np.flatnonzero((blank | text.str.contains(UNSAFE_CHARACTERS, regex=True)).to_numpy())


# ---------------------------------------------------------------- declared constraints
# A selector (or any estimator-like object) declares ``parameter_constraints = {name: constraint}``
# and validates them when it starts work (scikit-learn's "``__init__`` stores, ``fit`` checks").
# Validation only reads: a value is accepted as it is (an integer parameter wants an int, not 5.0) or
# refused, with the wording of the checks above; nothing is converted or stored back.


@dataclass(frozen=True)
class Integer:
    low: int | None = None
    high: int | None = None

    def check(self, value, what: str, error: type[MbutilsError]) -> int:
        if isinstance(value, (float, np.floating)) and math.isfinite(value) and value == int(value):
            raise error(f"{what} must be an integer: write {int(value)}, not {value!r}")
        if isinstance(value, np.integer):
            value = int(value)
        return check_int(value, what, error, low=self.low, high=self.high)


@dataclass(frozen=True)
class Real:
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    def check(self, value, what: str, error: type[MbutilsError]) -> float:
        return check_number(value, what, error, low=self.low, high=self.high, low_open=self.low_open,
                            high_open=self.high_open)


@dataclass(frozen=True)
class OneOf:
    choices: tuple

    def check(self, value, what: str, error: type[MbutilsError]):
        return check_choice(value, self.choices, what, error)


@dataclass(frozen=True)
class Boolean:
    def check(self, value, what: str, error: type[MbutilsError]) -> bool:
        return check_bool(value, what, error)


def validate_constraints(owner, constraints: dict, prefix: str, error: type[MbutilsError]) -> None:
    """Check every declared parameter of ``owner``; never changes it (a bad value raises ``error``)."""
    for name, constraint in constraints.items():
        constraint.check(getattr(owner, name), f"{prefix}{name}", error)

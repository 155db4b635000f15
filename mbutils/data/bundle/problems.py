"""The problem report of a bundle: each Problem located by file, row and column, capped per kind.

Validation and loading share one report: the readers of each file log what they find,
and messages list names and rows the same way (at most :data:`MAX_LISTED` of a kind).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from mbutils.base.validation import unsafe_names


MAX_LISTED = 10  # instances listed per kind of problem before "... and N more"


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


class ProblemLog(list):
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


def quoted_names(names, cap: int = MAX_LISTED) -> str:
    """'a', 'b' and 3 more — a capped list of names for one message."""
    names = [f"'{n}'" for n in names]
    if len(names) > cap:
        return ", ".join(names[:cap]) + f" and {len(names) - cap:,} more"
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def plural(n: int, noun: str) -> str:
    """1 item, 2 items, 1,706 items."""
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def number_list(values) -> str:
    """3, 9 and 17 (capped)."""
    return quoted_names(values).replace("'", "")


def row_label(line: int, key: str, name: str) -> str:
    """Where a problem is: ``row 12 (model 'org/a')``, a long or multi-line name cut."""
    shown = name if len(name) <= 40 and "\n" not in name else name.split("\n")[0][:40] + "..."
    return f"row {line} ({key} '{shown}')"


def name_index(names, name: str | None = None) -> pd.Index:
    """A plain object Index: hashing Python strings beats pandas' Arrow strings here."""
    return pd.Index(np.asarray(names, dtype=object), dtype=object, name=name)


def all_unique(names: np.ndarray) -> bool:
    """Whether no name appears twice."""
    return not name_index(names).duplicated().any()


def unusable(names: np.ndarray) -> np.ndarray:
    """Positions of names no command can take: only white space, or a line break, tab, other control,
    Unicode line separator or bidirectional control inside (options, logs, tables and exported task
    files would split them or show other text than is stored)."""
    return unsafe_names(names)


def nfc(names) -> list[str]:
    """Each name in Unicode's composed form (NFC); ASCII names, most of them, are left as they are."""
    return [name if name.isascii() else unicodedata.normalize("NFC", name) for name in map(str, names)]


def lookalikes(names, positions) -> tuple[list[tuple[list[str], list]], int]:
    """Names that differ as stored but not in NFC (an accented letter typed as one character or as a letter
    and an accent): per composed form, its spellings and the first position of each, for the first MAX_LISTED
    forms written more than one way; and how many forms are."""
    names = [str(name) for name in names]
    if all(name.isascii() for name in names):
        return [], 0
    forms: dict[str, dict[str, object]] = {}
    for name, form, position in zip(names, nfc(names), positions):
        forms.setdefault(form, {}).setdefault(name, position)
    found = [(list(spellings), list(spellings.values())) for spellings in forms.values() if len(spellings) > 1]
    return found[:MAX_LISTED], len(found)


def spellings_message(what: str, spellings: list[str], places: list[str]) -> str:
    """One message for a name written in several Unicode spellings: each spelling escaped, with its place."""
    listed = " and ".join(f"{ascii(name)} ({place})" for name, place in zip(spellings, places))
    return (f"{what} {listed} are one name in {len(spellings)} Unicode spellings (they differ only in "
            "normalisation, e.g. an accented letter written as one character or as a letter and an accent), so "
            "they look alike but are different names; write them alike (NFC) or rename one")


def duplicates(names: np.ndarray, lines) -> tuple[list[tuple[str, list]], int]:
    """(name, positions) for the first MAX_LISTED repeated names, and how many names repeat."""
    dup = name_index(names).duplicated(keep=False)
    if not dup.any():
        return [], 0
    names_dup, where = names[dup], np.asarray(lines)[dup]
    order = pd.unique(pd.Series(names_dup))
    return [(n, where[names_dup == n].tolist()) for n in order[:MAX_LISTED]], len(order)

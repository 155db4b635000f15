"""Exceptions that carry a message meant for people, not a traceback.

The command line prints ``str(error)`` of any :class:`MbutilsError` and exits 1,
so every message must say what is wrong, where (file, row, column) and what to do.
"""

from __future__ import annotations


class MbutilsError(Exception):
    """Base class: a problem with the user's input or request."""


class BundleError(MbutilsError, ValueError):
    """A benchmark bundle cannot be found, read or trusted."""


class ProtocolError(MbutilsError, ValueError):
    """The requested protocol does not fit the data (too few models, k too large, ...)."""


class SelectorError(MbutilsError, ValueError):
    """A selector was asked for something it cannot do (unknown name, k > items, ...)."""


class ResultsError(MbutilsError, ValueError):
    """A results table is missing columns or mixes incompatible experiments."""


class BookError(MbutilsError, ValueError):
    """A chapter parameter or profile the book cannot use."""


class ChapterError(MbutilsError, RuntimeError):
    """A chapter that cannot be found, parameterised or executed."""


class CacheError(MbutilsError, OSError):
    """The result cache cannot be used, or a path would leave it."""

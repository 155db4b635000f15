"""Exceptions that carry a message meant for people, not a traceback: every exception class of the package.

The command line prints ``str(error)`` of any :class:`MbutilsError` and exits 1,
so every message must say what is wrong, where (file, row, column) and what to do.
Every exception class of mbutils is defined here, in the lowest layer, so any module may raise
or catch any of them without importing the module that raises it (tests/project checks this);
a module that raises one imports it from here, and some also offer it under their own name.
"""

from __future__ import annotations


class MbutilsError(Exception):
    """A problem with the user's input or request, with a message meant for people.

    The base class of every error mbutils raises on purpose: a bundle that cannot be read
    (``BundleError``), a protocol the data cannot support (``ProtocolError``), a selector
    asked for something it cannot do (``SelectorError``), a results table that cannot be
    used (``ResultsError``), and the book's and cache's own. Each of these is also a
    ``ValueError`` (or ``RuntimeError``, ``OSError``) as fits. Catch ``MbutilsError`` to tell
    a wrong request from a bug; the command line prints its message and exits with status 1.

    Parameters
    ----------
    *args : str
        The message, one string: what is wrong, where (file, row, column, parameter) and
        what to do about it.

    Examples
    --------
    >>> from mbutils import MbutilsError, make_selector
    >>> try:
    ...     make_selector("no_such_selector")
    ... except MbutilsError as err:
    ...     print(type(err).__name__, isinstance(err, ValueError))
    ...     print(str(err).split(";")[0])
    SelectorError True
    unknown selector 'no_such_selector'
    """


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


# -- the errors of one part of the package (raised there; each module imports its own from here) --------


class StatementError(BundleError):
    """A statement of the bundle's harness documents that cannot be used, located: ``file`` (items.csv or
    provenance.json), ``location`` (the key, or the items and column) and ``what`` (the fault, what to do)."""

    def __init__(self, message: str, file: str = "", location: str = "", what: str = ""):
        super().__init__(message)
        self.file, self.location, self.what = file, location, what


class IRTError(MbutilsError, ValueError):
    """The data or parameters cannot be used to fit or apply an IRT model."""


class SelectorContractError(AssertionError):
    """A selector that breaks the contract (an ``AssertionError``, so a test reports it as a failure)."""


class ScoreError(MbutilsError, ValueError):
    """New results that cannot be scored with this micro-benchmark."""


class MicroFolderError(MbutilsError, ValueError):
    """A micro-benchmark folder that cannot be written or read."""


class NotDocuments(BundleError):
    """The chosen items name no lm-eval documents: the micro-benchmark has no harness export."""


class ShippedError(MbutilsError, ValueError):
    """A shipped micro-benchmark that does not exist or cannot be used."""


class PaperResultsError(MbutilsError, LookupError):
    """The paper's result tables are absent or not in the expected shape."""


class ChapterParameterError(ChapterError):
    """A parameter value a chapter cannot use, refused before its kernel starts (exit status 2)."""

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
    """A benchmark bundle cannot be found, read or trusted.

    Examples
    --------
    >>> from mbutils import BundleError, load_bundle
    >>> try:
    ...     load_bundle("no-such-bundle")
    ... except BundleError as err:
    ...     print(str(err).split(":")[0])
    no bundle named 'no-such-bundle'
    """


class ProtocolError(MbutilsError, ValueError):
    """The requested protocol does not fit the data (too few models, k too large, ...).

    Examples
    --------
    >>> from mbutils import Protocol, ProtocolError, load_benchmark
    >>> from mbutils.methods.protocol import draw_run
    >>> try:
    ...     draw_run(load_benchmark("synthetic-gpqa"), Protocol(n_sources=500), 0)
    ... except ProtocolError as err:
    ...     print(err)
    synthetic-gpqa has 420 models, too few for 50 targets + 500 sources; lower --sources or --targets
    """


class SelectorError(MbutilsError, ValueError):
    """A selector was asked for something it cannot do (unknown name, k > items, ...).

    Examples
    --------
    >>> from mbutils import AnchorPoints, SelectorError
    >>> try:
    ...     AnchorPoints(max_iter=0).validate_params()
    ... except SelectorError as err:
    ...     print(err)
    anchor_points: max_iter must be at least 1, not 0
    """


class ResultsError(MbutilsError, ValueError):
    """A results table is missing columns or mixes incompatible experiments.

    Examples
    --------
    >>> import pandas as pd
    >>> from mbutils import ResultsError, mdad_table
    >>> try:
    ...     mdad_table(pd.DataFrame({"selector": ["random"]}))
    ... except ResultsError as err:
    ...     print(str(err).split(";")[1].strip())
    it must come from `python -m mbutils experiment`
    """


class BookError(MbutilsError, ValueError):
    """A chapter parameter or profile the book cannot use.

    Examples
    --------
    >>> from mbutils import BookError
    >>> from mbutils.book.params import int_list
    >>> try:
    ...     int_list("ten,twenty", "sizes")
    ... except BookError as err:
    ...     print(err)
    parameter 'sizes': expected whole numbers such as '10,25,50', got 'ten,twenty'
    """


class ChapterError(MbutilsError, RuntimeError):
    """A chapter that cannot be found, parameterised or executed.

    Examples
    --------
    >>> from mbutils import ChapterError
    >>> from mbutils.publish.chapters import chapter_path
    >>> try:
    ...     chapter_path("no_such_chapter")
    ... except ChapterError as err:
    ...     print(str(err).split(";")[0], isinstance(err, RuntimeError))
    no chapter 'no_such_chapter' True
    """


class CacheError(MbutilsError, OSError):
    """The result cache cannot be used, or a path would leave it.

    Examples
    --------
    >>> from pathlib import Path
    >>> from mbutils import CacheError
    >>> from mbutils.base.cache import inside
    >>> try:
    ...     inside(Path("/tmp/cache/../../etc"), Path("/tmp/cache"))
    ... except CacheError as err:
    ...     print(type(err).__name__, isinstance(err, OSError))
    CacheError True
    """


# -- the errors of one part of the package (raised there; each module imports its own from here) --------


class StatementError(BundleError):
    """A statement of the bundle's harness documents that cannot be used, located: ``file`` (items.csv or
    provenance.json), ``location`` (the key, or the items and column) and ``what`` (the fault, what to do).

    ``validate_bundle`` reports it as a problem of kind ``"export"``; ``build-micro`` refuses the bundle with it.

    Examples
    --------
    >>> from mbutils import BundleError, StatementError
    >>> err = StatementError("items.csv, rows 2-3 (column 'doc_id'): not a whole number", "items.csv",
    ...                      "rows 2-3 (column 'doc_id')", "not a whole number")
    >>> isinstance(err, BundleError), err.file, err.what
    (True, 'items.csv', 'not a whole number')
    """

    def __init__(self, message: str, file: str = "", location: str = "", what: str = ""):
        super().__init__(message)
        self.file, self.location, self.what = file, location, what


class IRTError(MbutilsError, ValueError):
    """The data or parameters cannot be used to fit or apply an IRT model.

    Examples
    --------
    >>> import numpy as np
    >>> from mbutils import IRTError
    >>> from mbutils.methods.irt_fit import IRTModel
    >>> try:
    ...     IRTModel().fit(np.ones((1, 3)))
    ... except IRTError as err:
    ...     print(err)
    need at least 2 models and 1 item to fit IRT, got 1 x 3
    """


class SelectorContractError(AssertionError):
    """A selector that breaks the contract (an ``AssertionError``, so a test reports it as a failure).

    Raised by ``mbutils.testing.check_selector`` and the contract's named checks.

    Examples
    --------
    >>> from mbutils import SelectorContractError
    >>> from mbutils.testing import check_selector
    >>> try:
    ...     check_selector("random")  # a name, not a Selector object
    ... except SelectorContractError as err:
    ...     print(err)
    'random' is not a Selector (subclass mbutils.Selector)
    """


class ScoreError(MbutilsError, ValueError):
    """New results that cannot be scored with this micro-benchmark.

    Raised by ``mbutils.score`` (and ``python -m mbutils score``) for a responses table or lm-eval log it
    cannot read, or results the micro-benchmark's estimator cannot use; the message names the file,
    row and column.

    Examples
    --------
    >>> from mbutils import MbutilsError, ScoreError
    >>> issubclass(ScoreError, MbutilsError), issubclass(ScoreError, ValueError)
    (True, True)
    """


class MicroFolderError(MbutilsError, ValueError):
    """A micro-benchmark folder that cannot be written or read.

    Examples
    --------
    >>> import tempfile
    >>> from mbutils import MicroFolderError
    >>> from mbutils.micro.folder import read_micro
    >>> try:
    ...     read_micro(tempfile.mkdtemp())  # an empty folder
    ... except MicroFolderError as err:
    ...     print(str(err).split(": ", 1)[1].split(";")[0])
    missing (is this a micro-benchmark folder written by build-micro?)
    """


class NotDocuments(BundleError):
    """The chosen items name no lm-eval documents: the micro-benchmark has no harness export.

    Raised when ``build-micro --lm-eval-tasks`` is asked for an export the items cannot give.

    Examples
    --------
    >>> from mbutils import BundleError, NotDocuments
    >>> issubclass(NotDocuments, BundleError)
    True
    """


class ShippedError(MbutilsError, ValueError):
    """A shipped micro-benchmark that does not exist or cannot be used.

    Examples
    --------
    >>> from mbutils import ShippedError
    >>> from mbutils.micro.shipped import thaw
    >>> try:
    ...     thaw("no-such-micro")
    ... except ShippedError as err:
    ...     print(str(err).split(";")[0])
    no shipped micro-benchmark 'no-such-micro'
    """


class PaperResultsError(MbutilsError, LookupError):
    """The paper's result tables are absent or not in the expected shape.

    Examples
    --------
    >>> from mbutils import PaperResultsError
    >>> from mbutils.book.findings.paper_results import mdad
    >>> try:
    ...     mdad("no-such-benchmark")
    ... except PaperResultsError as err:
    ...     print(err)
    the paper has no results for 'no-such-benchmark'; it has gpqa, bbh, mmlu-pro, mmlu
    """


class ChapterParameterError(ChapterError):
    """A parameter value a chapter cannot use, refused before its kernel starts (exit status 2).

    Examples
    --------
    >>> import tempfile
    >>> from mbutils import ChapterError, ChapterParameterError
    >>> from mbutils.publish.chapters import run_chapter
    >>> try:
    ...     run_chapter("measures", {"no_such_parameter": 1}, tempfile.mkdtemp())
    ... except ChapterParameterError as err:
    ...     print(str(err).split(";")[0], isinstance(err, ChapterError))
    chapter 'measures' has no parameter 'no_such_parameter' True
    """


class CheckFailed(AssertionError):
    """A named check found a value other than the one expected (an ``AssertionError``, so a wrong
    solution fails the book's build as an ``assert`` would).

    Raised by the exercises' checks (``book.check``) in the book's builds; the students' notebooks and
    the grader report a failed check instead.

    Examples
    --------
    >>> from mbutils import CheckFailed
    >>> from mbutils.book.exercises import check
    >>> try:
    ...     check("ex-demo", "answer", 41, 42)
    ... except CheckFailed as err:
    ...     print(isinstance(err, AssertionError), "expected 42" in str(err))
    True True
    """

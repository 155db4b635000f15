"""One word per idea across the API, the command line and the book, and the warnings for the old words.

``TERMS`` is the table the API page shows; ``renamed_keywords`` lets a function accept a retired
keyword for one release with a ``FutureWarning``; ``retired_names`` does the same for a module's
retired class names (through the module's ``__getattr__``).
"""

from __future__ import annotations

import functools
import warnings

#: The release after which a retired word stops working.
REMOVED_IN = "0.3"

#: word, what it means (Markdown, as the API page shows it), words it replaces (each accepted with a
#: warning until ``REMOVED_IN``).
TERMS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("benchmark", "a `Benchmark`: the models' answers to the items of one bundle", ("data", "bench")),
    ("bundle", "a folder (or a shipped name) holding a benchmark's files; the chapters' `data` parameter "
               "names one", ()),
    ("threshold", "the agreement level a size must reach: an MDAD's, a plan's or a pair's power's", ("agreement",)),
    ("agreement", "a measured rate: the share of runs (or of random subsets) that order a pair as the full "
                  "benchmark does", ()),
    ("gap", "the difference between two models' full-benchmark accuracies, in percentage points", ()),
    ("size", "k, the number of items a micro-benchmark keeps", ()),
    ("selector", "a way to choose k items; its class is named after the method, without a \"Selector\" suffix",
     ("RandomSelector", "SubtaskEqualSelector", "SubtaskProportionalSelector")),
    ("split", "`seen` or `unseen`: which half of the items a result was measured on", ()),
    ("target models", "the models a run ranks; source models are those a selector may learn from", ()),
)


def _warn(old: str, new: str, where: str, stacklevel: int) -> None:
    warnings.warn(f"{where}: '{old}' is renamed '{new}'; the old name stops working in mbutils {REMOVED_IN}",
                  FutureWarning, stacklevel=stacklevel)


def warn_renamed(old: str, new: str) -> None:
    """Warn that a retired attribute (``Plan.agreement``) is now ``new``, pointing at the caller's line."""
    _warn(old, new, "mbutils", stacklevel=4)


def renamed_keywords(**renames: str):
    """Decorator: accept each retired keyword ``old=`` as ``new=`` for one release, with a FutureWarning.

    Passing both names is refused, since one of the two values would be silently dropped.
    """
    def decorate(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            for old, new in renames.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{func.__name__}() got both '{old}' and '{new}'; pass '{new}' only")
                    _warn(old, new, f"{func.__name__}()", stacklevel=3)
                    kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)
        wrapper.__renamed_keywords__ = dict(renames)
        return wrapper
    return decorate


def retired_names(module_name: str, renames: dict[str, str], lookup):
    """A module ``__getattr__`` that serves each retired name as its new object, with a FutureWarning."""
    def __getattr__(name: str):
        if name in renames:
            _warn(name, renames[name], module_name, stacklevel=3)
            return lookup(renames[name])
        raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
    return __getattr__


def retired_words() -> dict[str, str]:
    """Every retired word and the word that replaces it (what the vocabulary test checks against)."""
    return {old: new for new, _, olds in TERMS for old in olds}

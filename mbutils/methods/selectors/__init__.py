"""Micro-benchmark selectors, by class or by name.

Every selector is a class with explicit constructor parameters (``get_params`` /
``set_params`` as in scikit-learn): ``AnchorPoints(warm_start=False)``. Each also has a
name: ``make_selector("anchor_points", warm_start=False)`` builds the same object, and
:func:`selector_names` lists every name the command line accepts. Each family lives in
its own module, and a class joins the registry (:mod:`~mbutils.methods.selectors.registry`)
by one declaration, ``@register``, which every list of selectors is read from.

The classes are imported on first use (``from mbutils.methods.selectors import AnchorPoints``),
so a module that only reads the registry's lists does not load the families' numerical stack.
"""

from __future__ import annotations

from mbutils.base.vocabulary import retired_names
from mbutils.methods.selectors.base import MicroBenchmark, Selector, SourceData
from mbutils.methods.selectors.registry import (make_selector, needs_sources, register, selector_classes,
                                                selector_names, unregister)
from mbutils.methods.selectors.spec import resolve_selectors, selector_label

_FUNCTIONS = ["MicroBenchmark", "Selector", "SourceData", "make_selector", "needs_sources", "register",
              "selector_names", "unregister", "resolve_selectors", "selector_label"]

#: Class names retired for one release (see mbutils.base.vocabulary): served with a FutureWarning.
_retired = retired_names(__name__, {"RandomSelector": "RandomSampling", "SubtaskEqualSelector": "SubtaskEqual",
                                    "SubtaskProportionalSelector": "SubtaskProportional"},
                         lambda name: __getattr__(name))


def __getattr__(name: str):
    """The registered classes by name, ``CLASSES`` (them, in the order of :func:`selector_names`) and
    ``__all__``, read from the registry on first use."""
    if name == "CLASSES":
        value = tuple(selector_classes())
    elif name == "__all__":
        value = [*_FUNCTIONS, *(cls.__name__ for cls in selector_classes())]
    elif name.startswith("__"):  # a dunder others probe for (doctest, pickle) is never a class name
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    else:
        value = next((cls for cls in selector_classes() if cls.__name__ == name), None)
        if value is None:
            return _retired(name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__getattr__("__all__")) | {"CLASSES"})

"""Micro-benchmark selectors, by class or by name.

Every selector is a class with explicit constructor parameters (``get_params`` /
``set_params`` as in scikit-learn): ``AnchorPoints(warm_start=False)``. Each also has a
name: ``make_selector("anchor_points", warm_start=False)`` builds the same object, and
:func:`selector_names` lists every name the command line accepts. Each family lives in
its own module and offers its names in a ``SELECTORS`` dict.
"""

from __future__ import annotations

from mbutils.base.vocabulary import retired_names
from mbutils.methods.selectors.base import MicroBenchmark, Selector, SourceData
from mbutils.methods.selectors.registry import _load_families, make_selector, needs_sources, register, selector_names

_load_families()

from mbutils.methods.selectors.adaptive import AdaptiveFisher, AdaptivePIRT, AdaptiveRandomesque  # noqa: E402
from mbutils.methods.selectors.anchor import AnchorPoints, AnchorPointsBinary  # noqa: E402
from mbutils.methods.selectors.confidence import ConfidenceStratified  # noqa: E402
from mbutils.methods.selectors.diversity import Diversity, DiversityWeighted  # noqa: E402
from mbutils.methods.selectors.random_sampling import (RandomDifference, RandomRegression, RandomSampling,  # noqa: E402
                                                       SubtaskEqual, SubtaskProportional)
from mbutils.methods.selectors.spec import resolve_selectors, selector_label  # noqa: E402
from mbutils.methods.selectors.tinybench import (TinyBenchmarks, TinyBenchmarksGPIRT, TinyBenchmarksIRT, TinyBenchmarksPIRT)  # noqa: E402

#: The selector classes, in the order of :func:`selector_names`' families.
CLASSES = (RandomSampling, SubtaskEqual, SubtaskProportional, RandomDifference, RandomRegression, ConfidenceStratified,
           Diversity,
           DiversityWeighted, AnchorPoints, AnchorPointsBinary, TinyBenchmarks, TinyBenchmarksIRT, TinyBenchmarksPIRT,
           TinyBenchmarksGPIRT, AdaptiveFisher, AdaptiveRandomesque, AdaptivePIRT)

__all__ = ["MicroBenchmark", "Selector", "SourceData", "make_selector", "needs_sources", "register", "selector_names",
           "resolve_selectors", "selector_label", *(c.__name__ for c in CLASSES)]

#: Class names retired for one release (see mbutils.base.vocabulary): served with a FutureWarning.
__getattr__ = retired_names(__name__, {"RandomSelector": "RandomSampling", "SubtaskEqualSelector": "SubtaskEqual",
            "SubtaskProportionalSelector": "SubtaskProportional"}, lambda name: globals()[name])

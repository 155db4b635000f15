"""mbutils: how reliable are language-model micro-benchmarks?

The flow is data -> protocol -> selector -> estimates -> metrics. The public API is the
names below (imported on first use, so ``import mbutils`` stays cheap):

>>> import mbutils
>>> bench = mbutils.load_benchmark("synthetic-gpqa")
>>> protocol = mbutils.Protocol(n_sources=60, n_targets=12, n_runs=2)
>>> res = mbutils.run_experiment(bench, ["random", mbutils.AnchorPoints()], [10, 25], protocol, progress=False)
>>> mbutils.mdad_table(res)[["selector", "size"]].values.tolist()
[['random', 10], ['random', 25], ['anchor_points', 10], ['anchor_points', 25]]

Everything in ``__all__`` is the stable contract; other modules are the package's own
workings and may change. The selector classes in it are those the selectors' registry holds
(each joins by one ``@register`` declaration), read when ``__all__`` or a class is first asked for.
"""

from mbutils.base.version import __version__  # noqa: E402  (the one literal lives in the base layer)

# relative MBUTILS_DATA entries mean folders of the directory the package is imported in (the environment is left as is)
from mbutils.data import datapath as _datapath  # noqa: E402,F401

from mbutils.data.benchmark import Benchmark  # noqa: E402
from mbutils.base import errors as _errors  # noqa: E402  (the exceptions: standard library only)

#: public name -> (module, attribute)
_PUBLIC = {
    "load_benchmark": ("data.datasets", "load_benchmark"),
    "Protocol": ("methods.protocol", "Protocol"),
    "run_experiment": ("methods.experiment", "run_experiment"),
    "mdad_table": ("evaluate.metrics", "mdad_table"),
    "summary_table": ("evaluate.metrics", "summary_table"),
    "agreement_curve": ("evaluate.metrics", "agreement_curve"),
    "plan": ("evaluate.planning", "plan_table"),
    "audit": ("evaluate.auditing", "audit"),
    "pair_power": ("evaluate.planning_pairs", "pair_power"),
    "build_micro": ("micro.build", "build_micro"),
    "score": ("micro.scoring", "score"),
    "load_micro": ("micro.load", "load_micro"),
    "shipped_micro_table": ("micro.table", "shipped_micro_table"),
    "make_selector": ("methods.selectors", "make_selector"),
    "selector_names": ("methods.selectors", "selector_names"),
    "Selector": ("methods.selectors", "Selector"),
    "SourceData": ("methods.selectors", "SourceData"),
    "MicroBenchmark": ("methods.selectors", "MicroBenchmark"),
    "MbutilsError": ("base.errors", "MbutilsError"),
    # every exception class of the package (all live in base/errors.py), so each can be caught by name
    **{name: ("base.errors", name) for name, value in vars(_errors).items()
       if isinstance(value, type) and issubclass(value, Exception) and value.__module__ == _errors.__name__},
    "register": ("methods.selectors.registry", "register"),
    # the bundle round trip: simulate a benchmark, save it as a bundle folder, load and validate it
    "BenchmarkSpec": ("data.synthetic_spec", "BenchmarkSpec"),
    "simulate": ("data.synthetic", "simulate"),
    "save_bundle": ("data.bundle.write", "save_bundle"),
    "load_bundle": ("data.bundle.read", "load_bundle"),
    "validate_bundle": ("data.bundle.read", "validate_bundle"),
    # the types the functions above return
    "Plan": ("evaluate.planning", "Plan"),
    "AuditReport": ("evaluate.auditing", "AuditReport"),
    "BuiltMicro": ("micro.build", "BuiltMicro"),
    "Card": ("micro.build", "Card"),
    "MicroFolder": ("micro.folder", "MicroFolder"),
    # tools the chapters use and a reader can reuse: paired comparisons, the exact planner, IRT and DPP pieces
    "compare_selectors": ("evaluate.paired", "compare_selectors"),
    "agreement_probability": ("evaluate.planning_probability", "agreement_probability"),
    "predicted_curve": ("evaluate.planning_curves", "predicted_curve"),
    "predicted_mdad": ("evaluate.planning_curves", "predicted_mdad"),
    "required_size": ("evaluate.planning_curves", "required_size"),
    "sigmoid": ("methods.irt", "sigmoid"),
    "map_abilities": ("methods.irt", "map_abilities"),
    "information_gain": ("methods.cat", "information_gain"),
    "inclusion_probabilities": ("methods.dpp", "inclusion_probabilities"),
    "proportional_allocation": ("methods.selectors.confidence", "proportional_allocation"),
    "ks_distance": ("data.synthetic_compare", "ks_distance"),
    "split_half_reliability": ("data.synthetic_compare", "split_half_reliability"),
}


def _selector_classes() -> dict[str, tuple[str, str]]:
    """The shipped selector classes, public too: read from the selectors' registry (one declaration per
    class, ``@register``), on first use, since reading it imports every family."""
    from mbutils.methods.selectors.registry import selector_classes

    return {cls.__name__: (cls.__module__.removeprefix(f"{__name__}."), cls.__name__) for cls in selector_classes()}


#: Names retired for one release (see mbutils.base.vocabulary): served with a FutureWarning.
_RETIRED = {"RandomSelector": "RandomSampling", "SubtaskEqualSelector": "SubtaskEqual",
            "SubtaskProportionalSelector": "SubtaskProportional"}


def __getattr__(name: str):
    if name in _RETIRED:
        from mbutils.base.vocabulary import retired_names

        return retired_names(__name__, _RETIRED, __getattr__)(name)
    if name == "__all__":
        value = ["Benchmark", "__version__", *_PUBLIC, *_selector_classes()]
        globals()[name] = value
        return value
    if name.startswith("__"):  # a dunder (copy, pickle and doctest probe them) is never a public name
        raise AttributeError(f"module 'mbutils' has no attribute {name!r}")
    home = _PUBLIC.get(name) or _selector_classes().get(name)
    if home is not None:
        from importlib import import_module

        module, attribute = home
        value = getattr(import_module(f"{__name__}.{module}"), attribute)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'mbutils' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__getattr__("__all__")))

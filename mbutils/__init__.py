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
workings and may change.
"""

from mbutils.base.version import __version__  # noqa: E402  (the one literal lives in the base layer)

from mbutils.data.datapath import pin_environment as _pin_data_path  # noqa: E402

_pin_data_path()  # relative MBUTILS_DATA entries mean the folder they were typed in, for every child process

from mbutils.data.benchmark import Benchmark  # noqa: E402

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
    "load_micro": ("micro.shipped", "load_micro"),
    "shipped_micro_table": ("micro.table", "shipped_micro_table"),
    "make_selector": ("methods.selectors", "make_selector"),
    "selector_names": ("methods.selectors", "selector_names"),
    "Selector": ("methods.selectors", "Selector"),
    "SourceData": ("methods.selectors", "SourceData"),
    "MicroBenchmark": ("methods.selectors", "MicroBenchmark"),
    "MbutilsError": ("base.errors", "MbutilsError"),
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
_SELECTOR_CLASSES = ("RandomSampling", "SubtaskEqual", "SubtaskProportional", "RandomDifference", "RandomRegression",
                     "ConfidenceStratified",
                     "Diversity", "DiversityWeighted", "AnchorPoints", "AnchorPointsBinary", "TinyBenchmarks",
                     "TinyBenchmarksIRT", "TinyBenchmarksPIRT", "TinyBenchmarksGPIRT", "AdaptiveFisher",
                     "AdaptiveRandomesque", "AdaptivePIRT")
_PUBLIC.update({name: ("methods.selectors", name) for name in _SELECTOR_CLASSES})

__all__ = ["Benchmark", "__version__", *_PUBLIC]


#: Names retired for one release (see mbutils.base.vocabulary): served with a FutureWarning.
_RETIRED = {"RandomSelector": "RandomSampling", "SubtaskEqualSelector": "SubtaskEqual",
            "SubtaskProportionalSelector": "SubtaskProportional"}


def __getattr__(name: str):
    if name in _RETIRED:
        from mbutils.base.vocabulary import retired_names

        return retired_names(__name__, _RETIRED, __getattr__)(name)
    if name in _PUBLIC:
        from importlib import import_module

        module, attribute = _PUBLIC[name]
        value = getattr(import_module(f"{__name__}.{module}"), attribute)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'mbutils' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_PUBLIC))

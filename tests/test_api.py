"""The public API: selectors as objects everywhere, labelled and cached by class and parameters,
sent to workers by pickling; parameters checked when work starts."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest

import mbutils
from mbutils import AnchorPoints, MicroBenchmark, Protocol, Selector, make_selector, run_experiment
from mbutils.base.errors import SelectorError
from mbutils.methods.experiment import cache_path
from mbutils.methods.irt_fit import IRTModel
from mbutils.base.provenance import records
from mbutils.methods.runs import run_data, seeded_choices
from mbutils.methods.selectors import TinyBenchmarks, resolve_selectors, selector_label

PROTO = Protocol(n_sources=40, n_targets=10, n_runs=4, seed=3)


@pytest.fixture(scope="module")
def bench():
    return mbutils.load_benchmark("synthetic-gpqa")


class EasiestFirst(Selector):
    """A selector defined in a test module: the k items the sources find easiest, plain mean."""

    name = "test_easiest_first"

    def __init__(self, offset: int = 0):
        self.offset = offset

    def select(self, prepared, k, rng):
        self.check_size(k + self.offset, prepared.n_items)
        order = np.argsort(-prepared.correct.mean(axis=0), kind="stable")[self.offset:self.offset + k]
        jitter = rng.permutation(order)  # uses its stream, so seeding differences would show
        return MicroBenchmark(np.sort(jitter), np.full(k, 1.0 / k))


def test_every_public_name_is_reachable_from_the_top_level():
    for name in mbutils.__all__:
        assert getattr(mbutils, name) is not None, name
    assert set(mbutils.__all__) >= {"load_benchmark", "Protocol", "run_experiment", "mdad_table", "summary_table",
                                    "plan", "audit", "make_selector", "AnchorPoints", "TinyBenchmarksPIRT"}
    assert mbutils.AnchorPoints is mbutils.methods.selectors.AnchorPoints


def test_the_returned_types_the_bundle_round_trip_and_every_error_are_public():
    import inspect

    from mbutils.base import errors
    from mbutils.data.bundle import read, write
    from mbutils.evaluate import auditing, planning
    from mbutils.methods.selectors import registry
    from mbutils.micro import build, folder

    homes = {"BuiltMicro": build, "Card": build, "MicroFolder": folder, "Plan": planning, "AuditReport": auditing,
             "save_bundle": write, "load_bundle": read, "validate_bundle": read, "register": registry}
    for name, module in homes.items():
        assert getattr(mbutils, name) is getattr(module, name), name
    assert mbutils.simulate is mbutils.data.synthetic.simulate
    assert mbutils.BenchmarkSpec is mbutils.data.synthetic_spec.BenchmarkSpec
    exceptions = {name for name, value in vars(errors).items()
                  if inspect.isclass(value) and issubclass(value, Exception) and value.__module__ == errors.__name__}
    assert {"BundleError", "ProtocolError", "SelectorError", "ResultsError", "BookError", "ChapterError",
            "CacheError"} <= exceptions <= set(mbutils.__all__)  # every exception class, by name
    assert all(getattr(mbutils, name) is getattr(errors, name) for name in exceptions)
    # the selector classes come from the registry's declarations, in its order, and nothing else is public
    classes = [c.__name__ for c in registry.selector_classes()]
    assert [n for n in mbutils.__all__ if n in classes] == classes == [n for n in mbutils.__all__ if n[0].isupper()
                                                                      and isinstance(getattr(mbutils, n), type)
                                                                      and issubclass(getattr(mbutils, n),
                                                                                     mbutils.Selector)
                                                                      and n != "Selector"]
    assert "NoSuchName" not in dir(mbutils) and not hasattr(mbutils, "NoSuchName")


def test_importing_the_package_leaves_the_selectors_unloaded():
    """``import mbutils`` stays cheap: the selectors' families load when a selector name or ``__all__`` is read."""
    import subprocess
    import sys

    code = ("import sys, mbutils\nprint('mbutils.methods.selectors.anchor' in sys.modules)\n"
            "mbutils.AnchorPoints\nprint('mbutils.methods.selectors.anchor' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]


def test_an_object_and_a_name_give_two_labels_and_two_cache_entries(bench, tmp_path, monkeypatch):
    monkeypatch.setenv("MBUTILS_CACHE", str(tmp_path))
    res = run_experiment(bench, [AnchorPoints(warm_start=False), "anchor_points"], [10], PROTO,
                         backend="sequential", progress=False)
    assert list(pd.unique(res["selector"])) == ["anchor_points(warm_start=False)", "anchor_points"]
    entries = sorted(p.name for p in (tmp_path / "results").glob("*.parquet"))
    assert len(entries) == 2, entries
    cold = cache_path(bench, PROTO, [10], "anchor_points(warm_start=False)", AnchorPoints(warm_start=False))
    warm = cache_path(bench, PROTO, [10], "anchor_points")
    assert cold != warm and cold.exists() and warm.exists()
    (record,) = records(res).values()
    assert record["selectors"]["anchor_points(warm_start=False)"]["params"]["warm_start"] == "False"
    assert record["selectors"]["anchor_points"]["class"] == "mbutils.methods.selectors.anchor.AnchorPoints"
    # the named default and an equal object are one selector: one label, one entry
    again = run_experiment(bench, [AnchorPoints()], [10], PROTO, backend="sequential", progress=False)
    assert list(pd.unique(again["selector"])) == ["anchor_points"]
    assert len(list((tmp_path / "results").glob("*.parquet"))) == 2


def test_a_selector_object_gives_the_table_of_its_name(bench):
    by_name = run_experiment(bench, ["tinybenchmarks_pirt"], [10, 25], PROTO, use_cache=False, progress=False)
    by_object = run_experiment(bench, [mbutils.TinyBenchmarksPIRT()], [10, 25], PROTO, use_cache=False, progress=False)
    pd.testing.assert_frame_equal(by_name, by_object)


@pytest.mark.parametrize("backend", ["loky", "dask"])
def test_a_test_module_selector_runs_on_workers_as_in_process(bench, backend):
    if backend == "dask":
        pytest.importorskip("distributed")
    specs = [EasiestFirst(offset=2), "random"]
    one = run_experiment(bench, specs, [5, 10], PROTO, jobs=1, use_cache=False, progress=False)
    two = run_experiment(bench, specs, [5, 10], PROTO, jobs=2, backend=backend, use_cache=False, progress=False)
    assert list(pd.unique(one["selector"])) == ["test_easiest_first(offset=2)", "random"]
    pd.testing.assert_frame_equal(one, two)


class Connection:
    """Stands for a parameter that can be shared in a process but not sent to another (a client)."""

    def __init__(self, offset):
        self.offset = offset

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        raise TypeError("a connection cannot be pickled")

    def __index__(self):
        return self.offset


class ThroughConnection(EasiestFirst):
    name = "test_through_connection"

    def __init__(self, connection=None):
        self.connection = connection

    def select(self, prepared, k, rng):
        return MicroBenchmark(np.arange(k) + self.connection.offset, np.full(k, 1.0 / k))


def test_a_selector_workers_cannot_receive_is_refused_with_what_to_do(bench):
    selector = ThroughConnection(Connection(1))
    with pytest.raises(SelectorError, match="cannot be sent to worker processes.*jobs=1"):
        run_experiment(bench, [selector], [5], PROTO, jobs=2, use_cache=False, progress=False)
    res = run_experiment(bench, [selector], [5], PROTO, jobs=2, backend="threading", use_cache=False, progress=False)
    assert len(res) == PROTO.n_runs * PROTO.n_targets
    locked = EasiestFirst()
    locked.offset = threading.Lock()
    with pytest.raises(SelectorError, match="EasiestFirst: cannot copy its parameters"):
        resolve_selectors([locked])


def test_parameters_are_checked_before_any_work_with_one_wording(bench):
    with pytest.raises(SelectorError, match=r"^anchor_points: max_iter must be at least 1, not 0$"):
        run_experiment(bench, [AnchorPoints(max_iter=0)], [10], PROTO, use_cache=False, progress=False)
    with pytest.raises(SelectorError, match="tinybenchmarks_gpirt: holdout_every must be at least 2, not 1"):
        make_selector("tinybenchmarks_gpirt", holdout_every=1).validate_params()
    with pytest.raises(SelectorError, match="unknown parameter 'depth'; its parameters are init, max_iter"):
        make_selector("anchor_points", depth=3)
    with pytest.raises(SelectorError, match="a selector is a name or a Selector object"):
        resolve_selectors([3])
    with pytest.raises(SelectorError, match=r"AnchorPoints\(\), not the class"):
        resolve_selectors([AnchorPoints])


def test_params_round_trip_as_in_scikit_learn():
    tiny = TinyBenchmarks(irt=IRTModel(dims=3), n_init=2)
    params = tiny.get_params()
    assert params["irt__dims"] == 3 and params["n_init"] == 2
    copy = tiny.clone()
    assert copy.get_params() == params and copy.irt is not tiny.irt
    copy.set_params(irt__dims=4)
    assert tiny.irt.dims == 3 and copy.irt.dims == 4
    assert selector_label(copy).startswith("tinybenchmarks(irt=IRTModel(dims=4")
    assert make_selector("subtask_equal_weighted").get_params() == {"weighted": True}
    assert selector_label(make_selector("subtask_equal", weighted=True)) == "subtask_equal_weighted"


def test_a_name_taken_by_another_class_is_refused():
    class Impostor(EasiestFirst):
        name = "random"

    with pytest.raises(SelectorError, match="the name 'random' belongs to RandomSampling"):
        selector_label(Impostor())


def test_the_seeding_path_is_the_experiments(bench):
    """A choice re-made with seeded_choices estimates exactly what the experiment's table holds."""
    res = run_experiment(bench, ["anchor_points"], [10], PROTO, use_cache=False, progress=False)
    run, source = run_data(bench, PROTO, 1)
    _, chosen = seeded_choices(make_selector("anchor_points"), source, [10], seed=PROTO.seed, run=1)
    conf = bench.confidence[run.targets][:, run.seen]
    expected = chosen[10].estimate(bench.correct[run.targets][:, run.seen], conf)
    got = res[(res["run"] == 1)]["estimate"].to_numpy()
    np.testing.assert_array_equal(got, expected)

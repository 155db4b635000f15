"""The experiment grid: tidy table shape, determinism across workers, caching."""

import numpy as np
import pandas as pd
import pytest

from helpers import random_benchmark
from mbutils.base.errors import ProtocolError, SelectorError
from mbutils.methods.experiment import run_experiment
from mbutils.methods.protocol import Protocol

PROTO = Protocol(n_sources=20, n_targets=10, n_runs=4, seed=7)


def test_tidy_table_shape_and_values():
    bench = random_benchmark()
    res = run_experiment(bench, ["random", "subtask_equal"], [5, 10], PROTO, progress=False)
    assert len(res) == 4 * 2 * 2 * 10
    assert set(res["n_seen"]) == {15 + 5 + 10}
    assert np.allclose(res["seen_accuracy"], res["seen_correct"] / res["n_seen"])
    assert res["estimate"].between(0, 1).all()
    full = res.groupby(["run", "model"])["full_accuracy"].first()
    acc = pd.Series(bench.accuracy, index=bench.models.astype(str))
    assert np.allclose(full.to_numpy(), acc[full.index.get_level_values("model")].to_numpy())


def test_identical_for_any_number_of_workers():
    bench = random_benchmark()
    # confidence_stratified is not light, so jobs=2 really starts workers.
    one = run_experiment(bench, ["random", "subtask_proportional", "confidence_stratified"], [5, 10], PROTO,
                         jobs=1, use_cache=False, progress=False)
    two = run_experiment(bench, ["random", "subtask_proportional", "confidence_stratified"], [5, 10], PROTO,
                         jobs=2, use_cache=False, progress=False)
    pd.testing.assert_frame_equal(one, two)


def test_cache_is_reused_per_selector(monkeypatch):
    bench = random_benchmark(seed=11)
    first = run_experiment(bench, ["random"], [5], PROTO, progress=False)
    import mbutils.methods.experiment as exp

    def boom(*args, **kwargs):
        raise AssertionError("recomputed a cached selector")

    monkeypatch.setattr(exp, "_run_chunk", boom)
    again = run_experiment(bench, ["random"], [5], PROTO, progress=False)
    pd.testing.assert_frame_equal(first, again)
    with pytest.raises(AssertionError, match="recomputed"):
        run_experiment(bench, ["random"], [5], Protocol(n_sources=20, n_targets=10, n_runs=4, seed=8),
                       progress=False)


def test_bad_requests_fail_before_work():
    bench = random_benchmark()
    with pytest.raises(SelectorError, match="unknown selector 'nope'"):
        run_experiment(bench, ["nope"], [5], PROTO, progress=False)
    with pytest.raises(ProtocolError, match="do not fit the seen half \\(30 items\\)"):
        run_experiment(bench, ["random"], [5, 31], PROTO, progress=False)


@pytest.mark.parametrize("backend", ["threading", "dask", "ray"])
def test_identical_across_backends(backend):
    bench = random_benchmark(seed=5)
    proto = Protocol(n_sources=20, n_targets=10, n_runs=3, seed=2)
    base = run_experiment(bench, ["random", "subtask_equal", "confidence_stratified"], [5, 10], proto, jobs=1,
                          use_cache=False, progress=False)
    other = run_experiment(bench, ["random", "subtask_equal", "confidence_stratified"], [5, 10], proto, jobs=2,
                           backend=backend, use_cache=False, progress=False)
    pd.testing.assert_frame_equal(base, other)


def test_damaged_cache_entry_is_recomputed(capsys):
    bench = random_benchmark(seed=13)
    first = run_experiment(bench, ["random"], [5], PROTO, progress=False)
    from mbutils.base.cache import cache_dir

    (entry,) = [p for p in (cache_dir() / "results").glob("tiny-random-*.parquet")
                if p.stat().st_size and pd.read_parquet(p).equals(first.drop(columns="experiment"))]
    entry.write_bytes(entry.read_bytes()[: entry.stat().st_size // 2])  # truncate
    again = run_experiment(bench, ["random"], [5], PROTO, progress=False)
    pd.testing.assert_frame_equal(first, again)
    assert "is damaged" in capsys.readouterr().err
    run_experiment(bench, ["random"], [5], PROTO, progress=False)
    assert "is damaged" not in capsys.readouterr().err


def test_sibling_selectors_share_choices_and_give_the_same_results_alone():
    bench = random_benchmark(seed=17, confidence=True)
    proto = Protocol(n_sources=20, n_targets=10, n_runs=2, seed=4)
    both = run_experiment(bench, ["anchor_points", "anchor_points_binary"], [5, 12], proto,
                          use_cache=False, progress=False)
    alone = run_experiment(bench, ["anchor_points_binary"], [5, 12], proto, use_cache=False, progress=False)
    pd.testing.assert_frame_equal(both[both.selector == "anchor_points_binary"].reset_index(drop=True), alone)
    # Same medoids, different target data: the estimates differ when confidences exist.
    a, b = (both[both.selector == s]["estimate"].to_numpy() for s in ("anchor_points", "anchor_points_binary"))
    assert not np.allclose(a, b)


def test_runs_go_to_workers_in_a_few_shrinking_chunks_in_order():
    from mbutils.methods.experiment import chunk_runs

    runs = list(range(50))
    chunks = chunk_runs(runs, workers=2)
    assert [r for c in chunks for r in c] == runs
    sizes = [len(c) for c in chunks]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] == 7 and sizes[-4:] == [1, 1, 1, 1]  # guided
    assert len(chunks) < 25  # a few per worker, not one per run
    assert chunk_runs(runs[:3], workers=2) == [[0], [1], [2]]
    assert chunk_runs(runs[:5], workers=1) == [[r] for r in range(5)]  # in-process: one bar step per run


def test_light_selectors_never_start_workers(monkeypatch):
    import joblib

    from mbutils.methods import pool

    def no_workers(*args, **kwargs):
        raise AssertionError("started workers for light selectors")

    monkeypatch.setattr(joblib, "Parallel", no_workers)
    monkeypatch.setattr(pool, "map_with_parent", no_workers)
    bench = random_benchmark(seed=12)
    res = run_experiment(bench, ["random", "subtask_equal_weighted"], [5], PROTO, jobs=2, use_cache=False,
                         progress=False)
    assert len(res) == 2 * PROTO.n_runs * PROTO.n_targets
    with pytest.raises(AssertionError, match="started workers"):
        run_experiment(bench, ["random", "confidence_stratified"], [5], PROTO, jobs=2, use_cache=False,
                       progress=False)

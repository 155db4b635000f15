"""Anchor Points' clusterings kept in the cache by content (mbutils.methods.medoid_store): a stored
clustering is exactly the one FasterPAM computes, an entry that fails its checks is computed again, and
nothing is stored where it would not pay (small matrices, the parallel variant) or was not asked for
(``run_experiment(use_cache=False)``)."""

from __future__ import annotations

import numpy as np
import pytest

from mbutils.methods import medoid_store
from mbutils.methods.selectors import anchor
from mbutils.methods.selectors.anchor import AnchorPoints
from mbutils.methods.selectors.base import SourceData

SIZES = (10, 25, 40)  # the first from a seeded random start, the others warm-started


def _source(n_items: int, seed: int = 0) -> SourceData:
    rng = np.random.default_rng(seed)
    skill, load = rng.normal(size=(40, 3)), rng.normal(size=(3, n_items))
    conf = 1 / (1 + np.exp(-(skill @ load + rng.normal(scale=0.5, size=(40, n_items)))))
    return SourceData(conf > 0.5, np.zeros(n_items, dtype=int), confidence=conf)


def _select(source: SourceData, selector: AnchorPoints | None = None) -> dict[int, np.ndarray]:
    """Each size's medoids and weights on a fresh preparation, every size from its own seeded generator."""
    selector = selector or AnchorPoints()
    prepared = selector.prepare(source, np.random.default_rng(1))
    out = {}
    for k in SIZES:
        micro = selector.select(prepared, k, np.random.default_rng(100 + k))
        out[k] = np.concatenate([micro.items, micro.weights])
    return out


def _entries(cache_root):
    folder = cache_root / "medoids"
    return sorted(folder.glob("*.npz")) if folder.is_dir() else []


@pytest.fixture
def cache_root(tmp_path, monkeypatch):
    monkeypatch.setenv("MBUTILS_CACHE", str(tmp_path))
    return tmp_path


def _fasterpam_refused(monkeypatch):
    """FasterPAM made to fail: whatever is returned now came from the store."""
    kmedoids = anchor.import_kmedoids()

    def refuse(*args, **kwargs):
        raise AssertionError("FasterPAM ran although the clustering was stored")

    monkeypatch.setattr(kmedoids, "fasterpam", refuse)


def test_a_stored_clustering_is_the_one_fasterpam_computes(cache_root, monkeypatch):
    source = _source(medoid_store.MIN_ITEMS + 100)
    with medoid_store.reading(False):
        computed = _select(source)
    assert _entries(cache_root) == []
    first = _select(source)  # computes and stores
    assert len(_entries(cache_root)) == len(SIZES)
    _fasterpam_refused(monkeypatch)
    again = _select(source)  # a fresh preparation of the same sources: every size read back
    for k in SIZES:
        np.testing.assert_array_equal(first[k], computed[k])
        np.testing.assert_array_equal(again[k], computed[k])


def test_other_sources_or_parameters_are_other_clusterings(cache_root):
    big = medoid_store.MIN_ITEMS + 100
    _select(_source(big, seed=0))
    assert len(_entries(cache_root)) == len(SIZES)
    _select(_source(big, seed=1))
    _select(_source(big, seed=0), AnchorPoints(max_iter=3))
    assert len(_entries(cache_root)) == 3 * len(SIZES)


def test_an_entry_that_fails_its_checks_is_computed_again(cache_root, monkeypatch):
    source = _source(medoid_store.MIN_ITEMS + 100)
    first = _select(source)
    for path in _entries(cache_root):
        with np.load(path) as data:
            medoids, checksum = data["medoids"].copy(), data["checksum"]
        medoids[0] = (medoids[0] + 1) % (medoid_store.MIN_ITEMS + 100)  # edited by hand: checksum no longer holds
        np.savez(path, medoids=medoids, checksum=checksum)
    entries = _entries(cache_root)
    entries[0].write_bytes(b"not an npz file")
    again = _select(source)
    for k in SIZES:
        np.testing.assert_array_equal(again[k], first[k])


def test_small_matrices_and_the_parallel_variant_are_never_stored(cache_root):
    _select(_source(medoid_store.MIN_ITEMS - 1))
    _select(_source(medoid_store.MIN_ITEMS + 100), AnchorPoints(n_cpu=2))
    assert _entries(cache_root) == []


def test_an_experiment_without_the_cache_neither_reads_nor_writes_clusterings(cache_root, monkeypatch):
    from mbutils import Protocol, run_experiment
    from mbutils.data.benchmark import Benchmark

    rng = np.random.default_rng(3)
    n_items = 2 * (medoid_store.MIN_ITEMS + 10)  # the seen half is large enough to be stored
    correct = (rng.random((30, n_items)) < np.linspace(0.2, 0.8, 30)[:, None]).astype(float)
    bench = Benchmark(name="big", correct=correct, models=np.array([f"m{i}" for i in range(30)]),
                      items=np.array([f"q{j}" for j in range(n_items)]), subtasks=np.array(["all"] * n_items))
    protocol = Protocol(n_sources=20, n_targets=10, n_runs=1)
    fresh = run_experiment(bench, ["anchor_points"], [10], protocol, use_cache=False, progress=False)
    assert _entries(cache_root) == []
    kept = run_experiment(bench, ["anchor_points"], [10], protocol, progress=False)
    assert len(_entries(cache_root)) == 1
    np.testing.assert_array_equal(fresh["estimate"], kept["estimate"])
    _fasterpam_refused(monkeypatch)
    with pytest.raises(AssertionError, match="FasterPAM ran"):  # not read when the cache is not to be used
        run_experiment(bench, ["anchor_points"], [10], protocol, use_cache=False, progress=False)


def test_an_unusable_cache_costs_only_the_clustering(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("MBUTILS_CACHE", str(blocker))
    source = _source(medoid_store.MIN_ITEMS + 100)
    got = _select(source)
    with medoid_store.reading(False):
        want = _select(source)
    for k in SIZES:
        np.testing.assert_array_equal(got[k], want[k])
    assert capsys.readouterr().err.count("clusterings are computed without it") == 1

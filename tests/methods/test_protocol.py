"""Splits and draws of the paper's protocol: shapes, disjointness, seeding."""

import numpy as np
import pytest

from helpers import random_benchmark
from mbutils.base.errors import ProtocolError
from mbutils.methods.protocol import Protocol, draw_run, rng_for, split_items


def test_split_halves_inside_every_subtask():
    codes = np.repeat([0, 1, 2], [31, 10, 7])
    seen, unseen = split_items(codes, np.random.default_rng(0))
    assert np.bincount(codes[seen]).tolist() == [15, 5, 3]
    assert np.bincount(codes[unseen]).tolist() == [16, 5, 4]
    assert len(np.intersect1d(seen, unseen)) == 0
    assert sorted(np.concatenate([seen, unseen])) == list(range(len(codes)))


def test_split_is_uniform_over_items():
    codes = np.zeros(10, dtype=int)
    counts = np.zeros(10)
    for r in range(2000):
        seen, _ = split_items(codes, rng_for(0, r, "split"))
        counts[seen] += 1
    # Each item is seen with probability 1/2: 2000 draws, sd = 22.4.
    assert np.abs(counts - 1000).max() < 4.5 * np.sqrt(2000 * 0.25)


def test_draws_are_disjoint_seeded_and_nested():
    bench = random_benchmark(n_models=60)
    small = draw_run(bench, Protocol(n_sources=10, n_targets=20, seed=3), run=4)
    big = draw_run(bench, Protocol(n_sources=40, n_targets=20, seed=3), run=4)
    assert len(small.targets) == 20 and len(small.sources) == 10
    assert not set(big.targets) & set(big.sources)
    assert (small.targets == big.targets).all() and set(small.sources) <= set(big.sources)
    again = draw_run(bench, Protocol(n_sources=10, n_targets=20, seed=3), run=4)
    assert (again.seen == small.seen).all() and (again.sources == small.sources).all()
    other = draw_run(bench, Protocol(n_sources=10, n_targets=20, seed=3), run=5)
    assert not (other.targets == small.targets).all()


def test_target_set_fixes_targets():
    bench = random_benchmark(n_models=30)
    run = draw_run(bench, Protocol(n_sources=20, target_set="first_five"), run=0)
    assert bench.models[run.targets].tolist() == [f"m{i:03d}" for i in range(5)]
    assert not set(run.sources) & set(run.targets)


def test_protocol_errors_are_explained():
    bench = random_benchmark(n_models=30)
    with pytest.raises(ProtocolError, match="too few for 50 targets \\+ 300 sources"):
        draw_run(bench, Protocol(), run=0)
    with pytest.raises(ProtocolError, match="no target set named 'nope'.*first_five"):
        draw_run(bench, Protocol(n_sources=5, target_set="nope"), run=0)


def test_rng_streams_differ_by_purpose_and_are_stable():
    a = rng_for(0, 1, "select", "random", 10).random(3)
    assert np.array_equal(a, rng_for(0, 1, "select", "random", 10).random(3))
    assert not np.array_equal(a, rng_for(0, 1, "select", "random", 25).random(3))
    assert not np.array_equal(a, rng_for(1, 1, "select", "random", 10).random(3))

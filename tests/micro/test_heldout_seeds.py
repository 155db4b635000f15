"""One seed tree: every random stream of a build is its own branch, so no two coincide, within one build or
across builds with nearby seeds (folds once used seed + 1 + f, the main choice of the build with that seed)."""

from __future__ import annotations

import numpy as np

import mbutils
from mbutils.methods import protocol


def _streams(monkeypatch, seeds) -> dict[tuple, bytes]:
    """(seed, key) -> the first draws of every stream rng_for hands out while building with each seed."""
    seen: dict[tuple, bytes] = {}
    real = protocol.rng_for

    def recording(seed, *key):
        seen[(int(seed), *map(str, key))] = real(seed, *key).bytes(16)
        return real(seed, *key)

    monkeypatch.setattr(protocol, "rng_for", recording)
    monkeypatch.setattr("mbutils.methods.runs.rng_for", recording)
    bench = mbutils.load_benchmark("synthetic-gpqa")
    for seed in seeds:
        mbutils.build_micro(bench, "random", 20, seed=seed, exclude=list(bench.models[:5]), runs=2, folds=5)
    return seen


def test_no_two_streams_of_builds_with_nearby_seeds_coincide(monkeypatch):
    seen = _streams(monkeypatch, range(4))
    keys = list(seen)
    assert any("calibration" in key for key in keys) and any(key[1:3] == ("0", "prepare") for key in keys)
    draws = list(seen.values())
    assert len(set(draws)) == len(draws), "two streams of different keys drew the same numbers"
    # the collision the old fold seeds made: fold f of seed s was the main choice of seed s + 1 + f
    mains = {key[0] for key in keys if key[1:3] == ("0", "prepare")}
    folds = {key for key in keys if key[1] == "calibration"}
    assert mains == {0, 1, 2, 3} and len(folds) >= 4 * 5


def test_the_seed_tree_branches_are_distinct_generators():
    a = protocol.rng_for(0, "calibration", 0, 0, "prepare", "random").random(4)
    b = protocol.rng_for(1, 0, "prepare", "random").random(4)
    assert not np.allclose(a, b)

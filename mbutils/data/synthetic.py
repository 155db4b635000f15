"""The synthetic stand-ins made on demand: simulated once per (name, seed), cached, and built as Benchmarks.

Where a real bundle is absent, the book runs on ``synthetic-gpqa``, ``synthetic-bbh``,
``synthetic-mmlu-pro`` and ``synthetic-mmlu``: benchmarks with the real ones' shape and a
plausible spread of model accuracies, from a seeded multidimensional IRT simulator. The
model and its parameters are :mod:`mbutils.data.synthetic_spec`, its draws
:mod:`mbutils.data.synthetic_draws`, the stand-ins' fitted specs
:mod:`mbutils.data.synthetic_standins`, and the comparison with real data
:mod:`mbutils.data.synthetic_compare`.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd

from mbutils.data.benchmark import Benchmark
from mbutils.base.cache import atomic_write, content_key, entry_path, report_once
from mbutils.base.errors import BundleError
from mbutils.data.synthetic_draws import simulate_arrays
from mbutils.data.synthetic_spec import FAMILIES, BenchmarkSpec
from mbutils.data.synthetic_standins import SYNTHETIC_SPECS

# Re-exported: the chapters import these from here.
from mbutils.data.synthetic_compare import compare_to_reference, ks_distance, split_half_reliability  # noqa: F401

#: Bump when the simulator's output for a given spec and seed changes (invalidates caches).
SIMULATOR_VERSION = 1

#: Sizes of the generic target sets built for every synthetic benchmark.
STRONG_CLUSTER_SIZE = 12
MIDDLE_SIZE = 50


def _target_sets(accuracy: np.ndarray, size_b: np.ndarray, instruct: np.ndarray,
                 models: np.ndarray) -> dict[str, list[str]]:
    """Named model sets for fixed-target studies, mirroring the real bundles' kinds."""
    sets: dict[str, list[str]] = {}
    for size, label in ((7.0, "7b"), (70.0, "70b")):
        for flag, kind in ((True, "instruct"), (False, "base")):
            chosen = np.flatnonzero((size_b == size) & (instruct == flag))
            if len(chosen) >= 2:
                sets[f"{label}_{kind}"] = list(models[chosen])
    order = np.argsort(accuracy, kind="stable")
    n = len(order)
    if n >= MIDDLE_SIZE:
        mid = order[(n - MIDDLE_SIZE) // 2:(n - MIDDLE_SIZE) // 2 + MIDDLE_SIZE]
        sets["mid_50"] = list(models[np.sort(mid)])
    top = order[-max(n // 4, STRONG_CLUSTER_SIZE):]
    if len(top) >= STRONG_CLUSTER_SIZE:
        span = accuracy[top[STRONG_CLUSTER_SIZE - 1:]] - accuracy[top[:len(top) - STRONG_CLUSTER_SIZE + 1]]
        start = int(np.argmin(span))
        sets["strong_cluster"] = list(models[np.sort(top[start:start + STRONG_CLUSTER_SIZE])])
    return sets


def _assemble(spec: BenchmarkSpec, name: str, seed: int, arrays: dict[str, np.ndarray]) -> Benchmark:
    """Turn the random draws into a named :class:`Benchmark` (same path fresh or cached)."""
    models = np.array([f"synthetic-model-{i:03d}" for i in range(spec.n_models)], dtype=object)
    items, subtasks, options = [], [], []
    for task, n_items, n_options in spec.subtasks:
        stem = str(task).replace(" ", "_")
        items += [f"{stem}_{i:04d}" for i in range(int(n_items))]
        subtasks += [str(task)] * int(n_items)
        options += [int(n_options)] * int(n_items)
    correct = arrays["correct"]
    if correct.shape != (spec.n_models, spec.n_items):
        raise BundleError(f"{name}: simulated arrays have shape {correct.shape}, spec says "
                          f"{(spec.n_models, spec.n_items)}")
    item_info = pd.DataFrame({
        "item": items, "subtask": subtasks, "n_choices": options,
        "gold_position": arrays["gold"].astype(np.int64),
        "guess_floor": arrays["floor"], "discrimination": arrays["discrimination"],
        "difficulty": arrays["difficulty"],
    })
    model_info = pd.DataFrame({
        "model": models, "family": np.asarray(FAMILIES)[arrays["family"]],
        "size_b": arrays["size_b"], "instruct": arrays["instruct"].astype(bool),
        "ability": arrays["ability"],
    })
    accuracy = correct.mean(axis=1)
    return Benchmark(
        name=name,
        correct=correct,
        models=models,
        items=np.array(items, dtype=object),
        subtasks=np.array(subtasks, dtype=object),
        confidence=arrays["confidence"].astype(np.float64),
        item_info=item_info,
        model_info=model_info,
        target_sets=_target_sets(accuracy, arrays["size_b"], arrays["instruct"].astype(bool), models),
        origin=f"synthetic: IRT simulator v{SIMULATOR_VERSION}, {name}, seed {seed} (not real model results)",
    )


def simulate(spec: BenchmarkSpec, seed: int = 0, name: str = "synthetic") -> Benchmark:
    """Simulate one benchmark from ``spec``; same (spec, seed, name) -> identical data.

    Parameters
    ----------
    spec : BenchmarkSpec
        The shape (models, subtasks and their items) and the IRT model's parameters.
    seed : int, default 0
        Seed of every draw.
    name : str, default "synthetic"
        The benchmark's name (also part of the seed: two names give two benchmarks).

    Returns
    -------
    Benchmark
        0/1 answers and confidences of every model on every item, with the models' and items'
        simulated metadata (size, family, ability; difficulty, discrimination) and target sets.
        Save it as a bundle folder with :func:`save_bundle`.

    Examples
    --------
    >>> from mbutils import BenchmarkSpec, simulate
    >>> spec = BenchmarkSpec(n_models=20, subtasks=(("algebra", 30, 4), ("logic", 20, 2)))
    >>> bench = simulate(spec, seed=1, name="toy")
    >>> bench.name, bench.correct.shape, sorted(set(bench.subtasks))
    ('toy', (20, 50), ['algebra', 'logic'])
    >>> bool((simulate(spec, seed=1, name="toy").correct == bench.correct).all())  # reproducible
    True
    """
    if not isinstance(spec, BenchmarkSpec):
        raise BundleError(f"simulate needs a BenchmarkSpec, got {type(spec).__name__}")
    return _assemble(spec, name, seed, simulate_arrays(spec, seed, name))


def cache_path(name: str, seed: int = 0) -> Path:
    """Where :func:`make_synthetic` keeps the arrays of (name, seed)."""
    spec = _spec_for(name)
    key = content_key(asdict(spec), SIMULATOR_VERSION)
    return entry_path("synthetic", name, str(int(seed)), key, suffix=".npz")


def _spec_for(name: str) -> BenchmarkSpec:
    if name not in SYNTHETIC_SPECS:
        raise BundleError(
            f"unknown synthetic benchmark {name!r}; known: {', '.join(sorted(SYNTHETIC_SPECS))}"
        )
    return SYNTHETIC_SPECS[name]


_ARRAY_KEYS = ("correct", "confidence", "size_b", "instruct", "family", "ability", "gold",
               "floor", "discrimination", "difficulty")


def _load_arrays(path: Path) -> dict[str, np.ndarray] | None:
    """Arrays from a cache file, or None when it is absent or unreadable (then regenerate)."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            return {key: data[key] for key in data.files}
    except (OSError, ValueError, KeyError, EOFError):
        return None


def make_synthetic(name: str, seed: int = 0) -> Benchmark:
    """The named synthetic stand-in, generated once per (name, seed, spec) and cached."""
    spec = _spec_for(name)
    path = cache_path(name, seed)
    arrays = _load_arrays(path)
    if arrays is None or set(arrays) != set(_ARRAY_KEYS):
        arrays = simulate_arrays(spec, seed, name)

        def write(tmp: Path) -> None:
            with open(tmp, "wb") as handle:
                np.savez(handle, **arrays)

        try:
            atomic_write(path, write)
        except OSError as err:  # an unwritable cache costs a re-simulation next time, nothing more
            report_once(f"the cache cannot be written ({err.strerror or err}: {path.parent}); "
                        "the synthetic bundle is simulated without it")
    return _assemble(spec, name, seed, arrays)

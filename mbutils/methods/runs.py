"""One run of the protocol: its source data, and a selector's choice seeded as the experiment seeds it.

Every place that re-makes an experiment's micro-benchmark — the experiment itself, a
chapter's picture, the replication's re-selection, the tests — goes through
:func:`seeded_choices`, so they cannot drift apart: the same run, selector and size always
give the same items.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from mbutils.data.benchmark import Benchmark
from mbutils.methods.protocol import Protocol, Run, draw_run, rng_for
from mbutils.methods.selectors.base import MicroBenchmark, Selector, SourceData
from mbutils.methods.selectors.spec import selector_label


def source_data(correct: np.ndarray, subtasks: np.ndarray, confidence: np.ndarray | None, sources, seen) -> SourceData:
    """What a selector may look at in one run: the ``sources`` rows on the ``seen`` items."""
    sources, seen = np.asarray(sources), np.asarray(seen)
    conf = None if confidence is None else confidence[sources][:, seen]
    return SourceData(correct[sources][:, seen], subtasks[seen], conf)


def run_data(benchmark: Benchmark, protocol: Protocol, run: int) -> tuple[Run, SourceData]:
    """Run ``run``'s draws and its source data.

    Examples
    --------
    >>> from mbutils import Protocol, load_benchmark
    >>> bench = load_benchmark("synthetic-gpqa")
    >>> run, source = run_data(bench, Protocol(n_sources=60, n_targets=12, n_runs=1), 0)
    >>> source.correct.shape == (60, len(run.seen))
    True
    """
    drawn = draw_run(benchmark, protocol, run)
    return drawn, source_data(benchmark.correct, benchmark.subtask_codes, benchmark.confidence,
                              drawn.sources, drawn.seen)


def single_threaded():
    """BLAS limited to one thread, as every experiment runs: a selection recomputed outside the
    experiment (a chapter's picture or exercise) must run so too, or a large product summed in
    another order can tip a k-medoids tie and pick other items (0.2 points apart on MMLU-Pro)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1)


def stream_of(selector: Selector, label: str) -> str:
    """The random stream a selector draws from: siblings sharing a ``shared_key`` share it."""
    return selector.shared_key() or label


def seeded_choices(selector: Selector, source: SourceData, sizes: Sequence[int], *, seed: int, run: int,
                   label: str | None = None, prepared=None,
                   scope: tuple = ()) -> tuple[object, dict[int, MicroBenchmark]]:
    """``(prepared, {k: micro-benchmark})``: the selector's choices in run ``run`` of an experiment
    with root ``seed``, exactly as :func:`mbutils.run_experiment` makes them.

    ``label`` is the selector's label in the experiment (default: its :func:`selector_label`);
    ``prepared`` reuses a sibling's preparation (same ``shared_key``). ``scope`` (default none: the
    experiment's own streams) puts the streams under a branch of the seed tree, e.g.
    ``("calibration", fold)`` for a build's cross-fitting folds, so that no other choice draws them.

    Examples
    --------
    >>> from mbutils import Protocol, load_benchmark
    >>> from mbutils.methods.selectors import RandomSampling
    >>> bench = load_benchmark("synthetic-gpqa")
    >>> _, source = run_data(bench, Protocol(n_sources=60, n_targets=12, n_runs=1), 0)
    >>> _, chosen = seeded_choices(RandomSampling(), source, [10, 25], seed=0, run=0)
    >>> [m.size for m in chosen.values()]
    [10, 25]
    """
    stream = stream_of(selector, label or selector_label(selector))
    if prepared is None:
        prepared = selector.prepare(source, rng_for(seed, *scope, run, "prepare", stream))
    return prepared, {int(k): selector.select(prepared, int(k),
                                              rng_for(seed, *scope, run, "select", stream, int(k)))
                      for k in sizes}


def choose(selector: Selector, source: SourceData, k: int, *, seed: int, run: int = 0):
    """``(prepared, micro-benchmark)`` of one size, single-threaded as in the experiment: what a
    picture or an exercise shows is then the experiment's own pick."""
    with single_threaded():
        prepared, chosen = seeded_choices(selector, source, [k], seed=seed, run=run)
    return prepared, chosen[int(k)]

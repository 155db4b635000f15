"""Speed of the adaptive (CAT) family against random sampling and tinyBenchmarks p-IRT (not a test).

Run: ``python benchmarks/bench_adaptive.py [--items 224] [--sizes 10,25,50,100,200]``
or, on a bundle through the experiment engine (cache bypassed, one worker),
``python benchmarks/bench_adaptive.py --data gpqa --runs 5``.

Planted data (the 10-dimensional 2PL simulation of bench_irt.py, 300 sources + 50
targets): the IRT fit shared by the tinyBenchmarks and adaptive families is timed once,
then every selector's select + estimate over all sizes. On a bundle: each selector alone
through :func:`mbutils.methods.experiment.run_experiment` (so each pays its own IRT fit), then
the three adaptive selectors together (one fit per run, shared). Wall and CPU time.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_irt import Timer, planted  # noqa: E402

from mbutils.methods.selectors import make_selector  # noqa: E402
from mbutils.methods.selectors.base import SourceData  # noqa: E402

COMPARED = ["random", "tinybenchmarks_pirt", "adaptive_fisher", "adaptive_randomesque", "adaptive_pirt"]
ADAPTIVE = COMPARED[2:]


def bench_planted(n_items: int, sizes: list[int], seed: int) -> None:
    Y, _ = planted(350, n_items, 10, np.random.default_rng(seed))
    source = SourceData(Y[:300], np.zeros(n_items, dtype=int))
    targets, truth = Y[300:], Y[300:].mean(axis=1)
    with Timer() as t_fit:
        shared = make_selector("tinybenchmarks_pirt").prepare(source, np.random.default_rng(0))
    print(f"planted 300 sources + 50 targets x {n_items} seen items; sizes {sizes}")
    print(f"  IRT fit (shared by tinyBenchmarks and adaptive selectors): {t_fit}")
    for name in COMPARED:
        selector = make_selector(name)
        prepared = shared if selector.shared_key() else selector.prepare(source, np.random.default_rng(0))
        errors = []
        with Timer() as t:
            for k in sizes:
                micro = selector.select(prepared, k, np.random.default_rng(k))
                errors.append(100 * np.abs(micro.estimate(targets) - truth).mean())
        print(f"  {name:22s} select+estimate, all sizes: {t}  error (points) "
              + ", ".join(f"{k}:{e:.2f}" for k, e in zip(sizes, errors)))


def bench_bundle(data: str, sizes: list[int], runs: int) -> None:
    from mbutils.data.datasets import resolve_data
    from mbutils.methods.experiment import run_experiment
    from mbutils.methods.protocol import Protocol, fit_to_pool

    bench = resolve_data(data).benchmark
    n_src, n_tgt = fit_to_pool(bench.n_models)
    protocol = Protocol(n_sources=n_src, n_targets=n_tgt, n_runs=runs)
    print(f"{bench.name}: {runs} runs, {n_src} sources, {n_tgt} targets, sizes {sizes}, one worker, no cache")
    for names in [[n] for n in COMPARED] + [ADAPTIVE]:
        with Timer() as t:
            run_experiment(bench, names, sizes, protocol, jobs=1, use_cache=False, progress=False)
        print(f"  {'+'.join(names):60s} {t}  ({t.wall / runs:.2f} s per run)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=224)
    parser.add_argument("--sizes", default="10,25,50,100,200")
    parser.add_argument("--data", default=None)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sizes = [int(k) for k in args.sizes.split(",")]
    if args.data:
        bench_bundle(args.data, sizes, args.runs)
    else:
        bench_planted(args.items, [k for k in sizes if k <= args.items], args.seed)


if __name__ == "__main__":
    main()

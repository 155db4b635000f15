"""Timings of the Diversity (DPP) selector: prepare + one draw per size (not a test).

    python benchmarks/bench_dpp.py [--sources 300] [--items 6012] [--threads N] [--naive]

Synthetic sources x seen items shaped like MMLU-Pro's seen half with 300 sources
(3-dimensional 2PL IRT, with confidences), so it needs no data files. ``--threads``
caps the BLAS threads: experiments run one thread per worker, and on a machine with
other work running multi-threaded OpenBLAS can be ten or a hundred times slower. Times
are wall clock, with CPU time in brackets (they differ when the machine is busy).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.linalg  # noqa: F401  (load its BLAS before --threads limits it)

import mbutils.methods.dpp
from mbutils.methods.dpp import sample_projection_dpp
from mbutils.methods.selectors import SourceData, make_selector

SIZES = (10, 25, 50, 100, 250, 500, 1000)


def synthetic_source(n_sources: int, n_items: int, seed: int = 0) -> SourceData:
    """A 3-D 2PL IRT matrix: 0/1 correctness and the probability of the gold answer."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=(n_sources, 3))
    a = rng.lognormal(-0.5, 0.4, size=(n_items, 3))
    b = rng.normal(size=n_items)
    p = 1.0 / (1.0 + np.exp(-(theta @ a.T - b)))
    confidence = np.clip(p + rng.normal(scale=0.05, size=p.shape), 0.0, 1.0)
    correct = (rng.random(p.shape) < p).astype(float)
    return SourceData(correct, np.arange(n_items) % 14, confidence)


def _clock() -> np.ndarray:
    return np.array([time.perf_counter(), time.process_time()])


def _fmt(seconds: np.ndarray) -> str:
    return f"{seconds[0]:6.2f} s ({seconds[1]:5.2f})"


def time_selector(name: str, source: SourceData, seed: int = 1) -> None:
    """Prepare once, then for each size: grow the shared basis, draw, build weights."""
    selector = make_selector(name)
    rng = np.random.default_rng(seed)
    start = _clock()
    state = selector.prepare(source, rng)
    print(f"{name}: prepare {_fmt(_clock() - start)}  ({state.n_candidates} candidates "
          f"of {state.n_seen} seen items, {state.features.shape[1]} dims)")
    for k in SIZES:
        t0 = _clock()
        state.basis(k)
        t1 = _clock()
        bench = selector.select(state, k, rng)
        t2 = _clock()
        print(f"  k={k:5d}: grow basis {_fmt(t1 - t0)} to width {state.width:5d}"
              f"   draw {_fmt(t2 - t1)}  ({bench.size} items)")
    print(f"  total {_fmt(_clock() - start)}")


def time_sampler(n: int, k: int, naive: bool = False, seed: int = 2) -> None:
    """One draw from a random rank-k basis; ``naive``: the plain chain rule for every draw."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((n, k)))
    saved = mbutils.methods.dpp._DIRECT_BELOW
    mbutils.methods.dpp._DIRECT_BELOW = k if naive else saved
    try:
        start = _clock()
        sample_projection_dpp(Q, rng)
        elapsed = _clock() - start
    finally:
        mbutils.methods.dpp._DIRECT_BELOW = saved
    how = "plain chain rule, rank-one update per draw" if naive else "blocked"
    print(f"sampler alone n={n} k={k} ({how}): {_fmt(elapsed)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sources", type=int, default=300)
    parser.add_argument("--items", type=int, default=6012)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--naive", action="store_true", help="also time the unblocked sampler (slow)")
    args = parser.parse_args()
    if args.threads:
        from threadpoolctl import threadpool_limits

        threadpool_limits(args.threads)
    source = synthetic_source(args.sources, args.items)
    print(f"{args.sources} sources x {args.items} seen items, threads={args.threads or 'default'}")
    for name in ("diversity", "diversity_weighted"):
        time_selector(name, source)
    for k in (250, 1000):
        time_sampler(args.items, k)
        if args.naive:
            time_sampler(args.items, k, naive=True)


if __name__ == "__main__":
    main()

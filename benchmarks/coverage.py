"""Do the intervals of `score` cover held-out models' true accuracy at their nominal level?

    python benchmarks/coverage.py [--data gpqa] [--folds 5] [--fold-size 20] [--level 0.9]

The models of the bundle are shuffled (seeded by --seed) and ``folds`` disjoint folds of
``fold-size`` models are held out in turn. For each selector, size and fold, a
micro-benchmark is built exactly as ``python -m mbutils build-micro --exclude-models``
builds it (the fold left out of everything it learns from, seed = --seed + fold), written to a
temporary folder, and the held-out models are scored from a ``responses.csv`` holding only
their answers, as ``python -m mbutils score`` does. A model is covered when its accuracy on
all items lies in its interval. The table gives, per selector and size, the share covered
over all held-out models with its binomial standard error (which ignores that the models of
a fold share one micro-benchmark, so it is too small), the mean interval width and the RMSE
of the estimates (points); for random sampling also the coverage computed exactly over every
k-subset for the same models (no simulation noise). The acceptance target is 85-95% for nominal 90% intervals.
"""

from __future__ import annotations

import argparse
import time

import mbutils
from mbutils.base.tables import render
from mbutils.book.findings.coverage import coverage_summary, exact_random_coverage, held_out_scores

SELECTORS = ("random", "anchor_points", "tinybenchmarks_pirt")
SIZES = (50, 100)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="gpqa")
    parser.add_argument("--selectors", default=",".join(SELECTORS))
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--fold-size", type=int, default=20)
    parser.add_argument("--level", type=float, default=0.9)
    parser.add_argument("--runs", type=int, default=10, help="runs of each build's card protocol")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    bench = mbutils.load_benchmark(args.data)
    cells = held_out_scores(bench, args.selectors.split(","), [int(k) for k in args.sizes.split(",")],
                            folds=args.folds, fold_size=args.fold_size, level=args.level, runs=args.runs,
                            seed=args.seed, progress=True)
    print(f"Coverage of nominal {100 * args.level:g}% intervals on {args.data}: {args.folds} folds of "
          f"{args.fold_size} held-out models (coverage and se in %, width and rmse in accuracy points)")
    table = coverage_summary(cells)
    held = bench.model_index(cells["model"].unique().tolist())
    table["exact expected"] = [100 * exact_random_coverage(bench, held, k, args.level) if s == "random" else float("nan")
                               for s, k in zip(table["selector"], table["size"])]
    print(render(table.round(2), "markdown"))
    print("(exact expected: random sampling's coverage computed over all k-subsets, for the same models)")
    print(f"({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Do the intervals of `score` cover held-out models' true accuracy at their nominal level?

    python benchmarks/coverage.py [--data gpqa] [--folds 5] [--fold-size 20] [--level 0.9]

The models of the bundle are shuffled (seed 0) and ``folds`` disjoint folds of
``fold-size`` models are held out in turn. For each selector, size and fold, a
micro-benchmark is built exactly as ``python -m mbutils build-micro --exclude-models``
builds it (the fold left out of everything it learns from, seed = fold), written to a
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
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

import mbutils
from mbutils.base.tables import render
from mbutils.results.micro_folder import write_micro
from mbutils.results.microbench import build_micro
from mbutils.results.scoring import score

SELECTORS = ("random", "anchor_points", "tinybenchmarks_pirt")
SIZES = (50, 100)


def coverage(data: str, selectors, sizes, folds: int, fold_size: int, level: float, runs: int) -> pd.DataFrame:
    bench = mbutils.load_benchmark(data)
    if folds * fold_size > bench.n_models - 3:
        raise SystemExit(f"{data} has {bench.n_models} models: too few for {folds} folds of {fold_size}")
    order = np.random.default_rng(0).permutation(bench.n_models)
    held_out = [order[f * fold_size:(f + 1) * fold_size] for f in range(folds)]
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        for f, held in enumerate(held_out):
            answers = root / f"fold{f}.csv"
            pd.DataFrame(bench.correct[held], columns=bench.items).assign(model=bench.models[held]) \
                .to_csv(answers, index=False)
            truth = pd.Series(100.0 * bench.accuracy[held], index=bench.models[held].astype(str))
            for name in selectors:
                for k in sizes:
                    built = build_micro(bench, name, k, seed=f, exclude=list(bench.models[held]), runs=runs)
                    folder = write_micro(built, root / f"{name}-{k}-{f}")
                    table = score(folder, [answers], level=level).set_index("model")
                    t = truth[table.index]
                    rows.append(pd.DataFrame({"selector": name, "size": k, "fold": f, "model": table.index,
                                              "covered": (table["low"] <= t + 1e-9) & (t - 1e-9 <= table["high"]),
                                              "width": table["high"] - table["low"],
                                              "error": table["estimate"] - t}))
    return pd.concat(rows, ignore_index=True)


def expected_random_coverage(bench, models: np.ndarray, k: int, level: float) -> float:
    """Mean over ``models`` of the exact probability, over uniform k-subsets, that the hypergeometric
    interval covers the model's accuracy: the random rows' coverage without simulation noise."""
    from scipy.stats import hypergeom

    from mbutils.results.intervals import hypergeometric_interval

    n = bench.n_items
    hits = np.arange(k + 1)
    bounds = hypergeometric_interval(hits, k, n, level)
    big_k = bench.correct[models].sum(1)[:, None]
    inside = (bounds[None, :, 0] <= big_k / n + 1e-12) & (big_k / n - 1e-12 <= bounds[None, :, 1])
    return float((hypergeom.pmf(hits[None, :], n, big_k, k) * inside).sum(1).mean())


def summarise(cells: pd.DataFrame) -> pd.DataFrame:
    grouped = cells.groupby(["selector", "size"], sort=False)
    out = grouped.agg(models=("covered", "size"), coverage=("covered", "mean"), mean_width=("width", "mean"),
                      rmse=("error", lambda e: float(np.sqrt(np.mean(np.square(e)))))).reset_index()
    out["se"] = np.sqrt(out["coverage"] * (1 - out["coverage"]) / out["models"])
    out["coverage"] = (100 * out["coverage"]).round(1)
    out["se"] = (100 * out["se"]).round(1)
    return out[["selector", "size", "models", "coverage", "se", "mean_width", "rmse"]].round(2)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="gpqa")
    parser.add_argument("--selectors", default=",".join(SELECTORS))
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--fold-size", type=int, default=20)
    parser.add_argument("--level", type=float, default=0.9)
    parser.add_argument("--runs", type=int, default=10, help="runs of each build's card protocol")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    cells = coverage(args.data, args.selectors.split(","), [int(k) for k in args.sizes.split(",")], args.folds,
                     args.fold_size, args.level, args.runs)
    print(f"Coverage of nominal {100 * args.level:g}% intervals on {args.data}: {args.folds} folds of "
          f"{args.fold_size} held-out models (coverage and se in %, width and rmse in accuracy points)")
    table = summarise(cells)
    bench = mbutils.load_benchmark(args.data)
    held = bench.model_index(cells["model"].unique().tolist())
    table["expected"] = [round(100 * expected_random_coverage(bench, held, k, args.level), 1) if s == "random"
                         else np.nan for s, k in zip(table["selector"], table["size"])]
    print(render(table, "markdown"))
    print("(expected: random sampling's coverage computed exactly over all k-subsets, for the same models)")
    print(f"({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

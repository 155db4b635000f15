"""Are `score`'s "better than" / "worse than" verdicts right on models the micro-benchmark never saw?

    python benchmarks/verdicts.py [--data gpqa,bbh-leaderboard] [--held-out 40] [--seed 0] [--runs 5]

For every shipped micro-benchmark of each bundle (its selector and size, from ``python -m mbutils micro
list``), ``--held-out`` models drawn at random (seeded by --seed) are left out of everything a build
learns from, exactly as ``build-micro --exclude-models`` leaves them out; the folder is written and the
held-out models are scored from a ``responses.csv`` of their answers, as ``score`` does, with the
verdicts' interval (95%). Each held-out model is then compared with every pool model (the bundle's
other models, whose full accuracy is known), and a verdict is wrong when the full accuracies disagree
with it. The table gives, per micro-benchmark: bias and RMSE of the estimates (points), coverage of the
95% interval, the verdicts made, the wrong ones and their share, and whether the shipping rule of
``mbutils.micro.verdicts.shipping_problems`` holds (|bias| at most half the median half-width,
coverage and false-verdict rate within two binomial standard errors of their bounds).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

import mbutils
from mbutils.base.tables import render
from mbutils.book.findings.coverage import held_out_scores
from mbutils.micro.shipped import shipped_names, record
from mbutils.micro.verdicts import VERDICT_LEVEL, held_out_measures, shipping_problems


def measure(bench, selector: str, k: int, held: int, seed: int, runs: int) -> dict:
    """One shipped set's selector and size, rebuilt without ``held`` random models and scored on them."""
    cells = held_out_scores(bench, [selector], [k], folds=1, fold_size=held, level=VERDICT_LEVEL, runs=runs,
                            seed=seed)
    held_rows = bench.model_index(cells["model"].tolist())
    pool_rows = np.setdiff1d(np.arange(bench.n_models), held_rows)
    m = held_out_measures(cells["estimate"] / 100, cells["low"] / 100, cells["high"] / 100,
                          cells["truth"] / 100, bench.accuracy[pool_rows], level=VERDICT_LEVEL)
    problems = shipping_problems(m)
    return {"bias": m["bias"], "rmse": m["rmse"], "coverage": 100 * m["coverage"], "half width": m["half_width"],
            "verdicts": m["verdicts"], "wrong": m["false_verdicts"], "wrong %": 100 * m["false_rate"],
            "passes": "yes" if not problems else "no: " + "; ".join(problems)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="gpqa,bbh-leaderboard")
    parser.add_argument("--held-out", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs", type=int, default=5, help="runs of each build's card protocol")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows = []
    for data in args.data.split(","):
        bench = mbutils.load_benchmark(data)
        for name in shipped_names():
            rec = record(name)
            if rec["bundle"] != data:
                continue
            rows.append({"micro-benchmark": name, "selector": rec["selector"], "k": rec["k"],
                         **measure(bench, rec["selector"], int(rec["k"]), args.held_out, args.seed, args.runs)})
            print(f"  {name}: {time.perf_counter() - start:.0f} s", flush=True)
    print(f"Verdicts at {100 * VERDICT_LEVEL:g}% on {args.held_out} held-out models (seed {args.seed}); bias, "
          "RMSE and half width in points, coverage and wrong % in %")
    print(render(pd.DataFrame(rows).round(2), "markdown"))
    print(f"({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Are `score`'s "better than" / "worse than" verdicts right on models the micro-benchmark never saw?

    python benchmarks/verdicts.py [--data gpqa,bbh-leaderboard] [--held-out 40] [--seeds 0] [--runs 5]
                                  [--selectors random,diversity --sizes 25,50]

For every shipped micro-benchmark of each bundle (its selector and size, from ``python -m mbutils micro
list``; or every ``--selectors`` at every ``--sizes``), ``--held-out`` models drawn at random (one draw
per seed of ``--seeds``) are left out of everything a build
learns from, exactly as ``build-micro --exclude-models`` leaves them out; the folder is written and the
held-out models are scored by ``score`` from a ``responses.csv`` of their answers. Each "better than" /
"worse than" verdict ``score`` gives (at 95%) is then checked against the full accuracies: it is wrong
when the held-out model's accuracy is not above (below) the pool model's. The table gives, per micro-benchmark: bias and RMSE of the estimates (points), coverage of the
95% interval, the verdicts made, the wrong ones and their share, and whether the shipping rule of
``mbutils.micro.verdicts.shipping_problems`` holds (|bias| at most half the median half-width,
coverage and false-verdict rate within two binomial standard errors of their bounds), each seed's draw
pooled (verdicts and models summed over the draws).
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
from mbutils.book.findings.coverage import held_out_folds
from mbutils.micro.build import build_micro
from mbutils.micro.folder import write_micro
from mbutils.micro.scoring import score
from mbutils.micro.shipped import shipped_names, record
from mbutils.micro.verdicts import VERDICT_LEVEL, shipping_problems


def measure(bench, selector: str, k: int, held: int, seeds, runs: int) -> dict:
    """A selector at size k, rebuilt without ``held`` random models (one draw per seed) and scored on them by
    ``score``; its verdicts counted against the full accuracies."""
    index = {name: i for i, name in enumerate(bench.models.astype(str))}
    acc = bench.accuracy
    counts = {"models": 0, "covered": 0, "verdicts": 0, "wrong": 0, "models wrong": 0}
    errors, halves = [], []
    with tempfile.TemporaryDirectory(prefix="mbutils-verdicts-") as scratch:
        root = Path(scratch)
        for seed in seeds:
            rows = held_out_folds(bench, 1, held, seed)[0]
            names = list(bench.models[rows].astype(str))
            answers = root / f"held-{seed}.csv"
            pd.DataFrame(bench.correct[rows], columns=bench.items.astype(str)).assign(model=names) \
                .to_csv(answers, index=False)
            built = build_micro(bench, selector, k, seed=seed, exclude=names, runs=runs)
            folder = write_micro(built, root / f"micro-{seed}")
            table = score(folder, [answers], level=VERDICT_LEVEL)
            for row in table.itertuples():
                truth = 100 * acc[index[row.model]]
                above = 100 * acc[[index[m] for m in row.above]]
                below = 100 * acc[[index[m] for m in row.below]]
                wrong = int((above >= truth).sum() + (below <= truth).sum())
                counts["models"] += 1
                counts["covered"] += int(row.low - 1e-9 <= truth <= row.high + 1e-9)
                counts["verdicts"] += len(above) + len(below)
                counts["wrong"] += wrong
                counts["models wrong"] += int(wrong > 0)
                errors.append(row.estimate - truth)
                halves.append((row.high - row.low) / 2)
    errors = np.asarray(errors)
    m = {"level": VERDICT_LEVEL, "models": counts["models"], "bias": float(errors.mean()),
         "rmse": float(np.sqrt(np.mean(errors ** 2))), "half_width": float(np.median(halves)),
         "covered": counts["covered"], "coverage": counts["covered"] / counts["models"],
         "verdicts": counts["verdicts"], "false_verdicts": counts["wrong"],
         "false_rate": counts["wrong"] / counts["verdicts"] if counts["verdicts"] else float("nan")}
    problems = shipping_problems(m)
    return {"models": m["models"], "bias": m["bias"], "rmse": m["rmse"], "coverage": 100 * m["coverage"],
            "half width": m["half_width"], "verdicts": m["verdicts"], "wrong": m["false_verdicts"],
            "wrong %": 100 * m["false_rate"], "models wrong": counts["models wrong"],
            "passes": "yes" if not problems else "no: " + "; ".join(problems)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="gpqa,bbh-leaderboard")
    parser.add_argument("--held-out", type=int, default=40)
    parser.add_argument("--seeds", default="0", help="one draw of held-out models per seed (comma-separated)")
    parser.add_argument("--runs", type=int, default=5, help="runs of each build's card protocol")
    parser.add_argument("--selectors", default="", help="instead of the shipped sets: these selectors ...")
    parser.add_argument("--sizes", default="", help="... at these sizes")
    args = parser.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    start = time.perf_counter()
    rows = []
    for data in args.data.split(","):
        bench = mbutils.load_benchmark(data)
        if args.selectors:
            cases = [(f"{data} {s} {k}", s, int(k)) for s in args.selectors.split(",") for k in args.sizes.split(",")]
        else:
            cases = [(name, record(name)["selector"], int(record(name)["k"])) for name in shipped_names()
                     if record(name)["bundle"] == data]
        for name, selector, k in cases:
            rows.append({"micro-benchmark": name, "selector": selector, "k": k,
                         **measure(bench, selector, k, args.held_out, seeds, args.runs)})
            print(f"  {name}: {time.perf_counter() - start:.0f} s", flush=True)
    print(f"Verdicts at {100 * VERDICT_LEVEL:g}% on {args.held_out} held-out models per draw (seeds {args.seeds}); bias, "
          "RMSE and half width in points, coverage and wrong % in %")
    print(render(pd.DataFrame(rows).round(2), "markdown"))
    print(f"({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

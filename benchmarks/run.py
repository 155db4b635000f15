"""Speed and memory of the whole jobs the issues set targets for (reported, not asserted).

    MBUTILS_DATA=../shared/data python benchmarks/run.py foundation [selectors] [scale]

Each job runs as ``python -m mbutils experiment ... --no-cache`` in a fresh process (the
cache is bypassed, synthetic bundles are generated once beforehand), then ``mdad`` with
1000 bootstrap resamples; wall time and peak memory of the process tree are printed as a
Markdown table.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from measure import measure  # noqa: E402

PY = sys.executable
RANDOM = "random,subtask_equal,subtask_equal_weighted,subtask_proportional,subtask_proportional_weighted"
PAPER = "random,subtask_equal,subtask_proportional,confidence_stratified,diversity,anchor_points,tinybenchmarks"
ALL = (PAPER + ",subtask_equal_weighted,subtask_proportional_weighted,diversity_weighted,"
       "anchor_points_binary,tinybenchmarks_irt,tinybenchmarks_pirt,tinybenchmarks_gpirt")
BIG_SIZES = "10,25,50,100,250,500,1000"
GPQA_SIZES = "10,25,50,100,200"

SUITES = {
    "foundation": [
        ("gpqa, random family", "gpqa", RANDOM, GPQA_SIZES, []),
        ("synthetic-mmlu-pro, random family", "synthetic-mmlu-pro", RANDOM, BIG_SIZES, []),
    ],
    "selectors": [
        ("gpqa, every selector", "gpqa", ALL, GPQA_SIZES, []),
        ("synthetic-bbh, every selector", "synthetic-bbh", ALL, BIG_SIZES, ["--jobs", "2"]),
        ("synthetic-mmlu-pro, every selector", "synthetic-mmlu-pro", ALL, BIG_SIZES, ["--jobs", "2"]),
    ],
    "scale": [
        ("synthetic-mmlu-pro, random family, jobs 1", "synthetic-mmlu-pro", RANDOM, BIG_SIZES, ["--jobs", "1"]),
        ("synthetic-mmlu-pro, random family, jobs 2", "synthetic-mmlu-pro", RANDOM, BIG_SIZES, ["--jobs", "2"]),
        ("synthetic-mmlu-pro, random family, dask 2", "synthetic-mmlu-pro", RANDOM, BIG_SIZES,
         ["--jobs", "2", "--backend", "dask"]),
    ],
}


def main(names: list[str]) -> None:
    env = dict(os.environ)
    env.setdefault("MBUTILS_DATA", str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    print("| job | experiment s | experiment peak MB | mdad (1000 resamples) s | total s |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names or ["foundation"]:
            for label, data, selectors, sizes, extra in SUITES[name]:
                # Warm the synthetic cache so generation is not counted as experiment time.
                measure([PY, "-c", f"from mbutils.datasets import load_bundle; load_bundle({data!r})"], env)
                out = str(Path(tmp) / "r.parquet")
                exp = measure([PY, "-m", "mbutils", "experiment", "--data", data, "--selectors", selectors,
                               "--sizes", sizes, "--runs", "50", "--sources", "300", "--targets", "50",
                               "--seed", "0", "--no-cache", "--quiet", "--out", out, *extra], env)
                mdad = measure([PY, "-m", "mbutils", "mdad", out, "--bootstrap", "1000"], env)
                print(f"| {label} | {exp.seconds:.1f} | {exp.peak_mb:.0f} | {mdad.seconds:.1f} | "
                      f"{exp.seconds + mdad.seconds:.1f} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])

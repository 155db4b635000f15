"""Do two implementations give the same MDAD tables? (Checks that a speed-up changed no result.)

    python benchmarks/compare_mdad.py --baseline REV [--data gpqa] [--runs 50]

Runs the paper protocol for every selector with the current code and with git revision
REV (checked out into a temporary worktree), then sets the two MDAD tables side by side.
The yardstick is the run-to-run spread of the baseline: the 95% interval of its MDAD when
the runs are resampled (``metrics.mdad_table(ci="runs")``, 1,000 resamples). A cell
"agrees" when the current MDAD lies inside that interval, widened by one gap bin (0.5
points) for the discreteness of the binned estimate. Exit status 1 if any cell does not.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from measure import measure  # noqa: E402
from run import ALL, GPQA_SIZES, PAPER_POOL, PY, REPO, _env, worktree  # noqa: E402

from mbutils.results import metrics  # noqa: E402
from mbutils.base.tables import render  # noqa: E402


def results(tree: Path, scratch: Path, data: str, sizes: str, runs: int, extra: list[str]) -> pd.DataFrame:
    scratch.mkdir(parents=True, exist_ok=True)
    out = scratch / "results.parquet"
    measure([PY, "-m", "mbutils", "experiment", "--data", data, "--selectors", ALL, "--sizes", sizes,
             "--runs", str(runs), "--seed", "0", "--no-cache", "--quiet", "--jobs", "2", "--out", str(out), *extra],
            _env(tree, scratch / "cache"), cwd=str(tree))
    return pd.read_parquet(out)


def compare(current: pd.DataFrame, baseline: pd.DataFrame, bin_width: float = 0.5) -> pd.DataFrame:
    """Per selector x size: both MDADs, the baseline's run-resampling interval, agreement."""
    new = metrics.mdad_table(current, ci="none")[["selector", "size", "mdad"]]
    old = metrics.mdad_table(baseline, ci="runs")[["selector", "size", "mdad", "ci_low", "ci_high"]]
    table = old.merge(new, on=["selector", "size"], suffixes=("_baseline", "_current"))
    both_missing = table["mdad_baseline"].isna() & table["mdad_current"].isna()
    inside = ((table["mdad_current"] >= table["ci_low"] - bin_width)
              & (table["mdad_current"] <= table["ci_high"] + bin_width))
    table["agrees"] = both_missing | inside
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, metavar="REV")
    parser.add_argument("--data", default="gpqa")
    parser.add_argument("--sizes", default=GPQA_SIZES)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--fit-pool", action="store_true", help="let the command fit sources/targets to the pool")
    args = parser.parse_args(argv)
    extra = [] if args.fit_pool else PAPER_POOL
    with worktree(args.baseline) as base, tempfile.TemporaryDirectory() as tmp:
        current = results(REPO, Path(tmp) / "current", args.data, args.sizes, args.runs, extra)
        baseline = results(base, Path(tmp) / "baseline", args.data, args.sizes, args.runs, extra)
    table = compare(current, baseline)
    print(render(table, "markdown"))
    changed = (table["mdad_current"].fillna(-1) != table["mdad_baseline"].fillna(-1)).sum()
    print(f"\n{len(table)} cells; {changed} differ; {int((~table['agrees']).sum())} outside the baseline's "
          "run-resampling 95% interval (widened by one 0.5-point bin)")
    return 0 if table["agrees"].all() else 1


if __name__ == "__main__":
    sys.exit(main())

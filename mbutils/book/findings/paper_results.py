"""The paper's published result tables, read in our conventions.

Yauney, Warraich & Swayamdipta (2025) released the processed tables their figures were
drawn from: per benchmark an MDAD table (technique x source models x split x size, with a
95% CI) and an estimation table (one row per run). This module reads them from a
``paper-results`` folder on the data path and turns them into tidy tables shaped like
:func:`mbutils.evaluate.metrics.mdad_table`'s: our selector names, accuracy *points* (the files hold
fractions) and NaN for the reference code's "not reached" sentinel (an MDAD of 0.5, i.e.
50 points). They are for side-by-side reading only, never inputs to our experiments: the
comparisons with ours are :mod:`mbutils.book.findings.paper_comparison`, the diagnosis of a
departure :mod:`mbutils.book.findings.paper_diagnosis`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from mbutils.data import datapath
from mbutils.base.errors import PaperResultsError

# Re-exported: the chapters import these from here.
from mbutils.evaluate.noise import random_within_ci_from  # noqa: F401
from mbutils.book.findings.paper_comparison import compare_conclusions, disagreements, display_table, side_by_side  # noqa: F401
from mbutils.book.findings.paper_diagnosis import estimation_bias, pick_profile  # noqa: F401

FOLDER = "paper-results"
BENCHMARKS = ("gpqa", "bbh", "mmlu-pro", "mmlu")
#: The paper's model pools (Open LLM Leaderboard models with per-item details).
PAPER_MODELS = {"gpqa": 420, "bbh": 409, "mmlu-pro": 447, "mmlu": 366}
#: The paper's technique names -> our selector names.
SELECTOR_NAMES = {
    "Random (uniform)": "random",
    "Random (subtask stratified, equal)": "subtask_equal",
    "Random (subtask stratified, proportional)": "subtask_proportional",
    "Stratified sampling (confidence)": "confidence_stratified",
    "Diversity": "diversity",
    "Anchor Points": "anchor_points",
    "tinyBenchmarks": "tinybenchmarks",
}
#: The reference code writes this MDAD (a fraction: 50 points) when no bin reaches the threshold.
SENTINEL = 0.5
#: MDAD levels (points) whose reachability the paper discusses per benchmark.
CONCLUSION_LEVELS = {"mmlu-pro": 3.5, "bbh": 4.0}


# ----------------------------------------------------------------------- finding
def find_folder(folders=None) -> Path | None:
    """The first ``paper-results`` folder on the data path, or None when there is none."""
    roots = [f.path for f in datapath.data_folders()] if folders is None else [Path(f) for f in folders]
    for root in roots:
        candidate = root / FOLDER
        if candidate.is_dir():
            return candidate
    return None


def require_folder(folders=None) -> Path:
    """Like :func:`find_folder`, but a clear error when the folder is absent."""
    found = find_folder(folders)
    if found is None:
        where = datapath.describe_data_path() if folders is None else ", ".join(map(str, folders))
        raise PaperResultsError(f"no '{FOLDER}' folder on the data path ({where}); add the folder that "
                                "holds the paper's released result tables to MBUTILS_DATA")
    return found


def paper_benchmark(key: str) -> str | None:
    """The paper benchmark a bundle's benchmark key stands for (None for custom data)."""
    return key if key in BENCHMARKS else None


def _read(folder, benchmark: str, kind: str) -> pd.DataFrame:
    if benchmark not in BENCHMARKS:
        raise PaperResultsError(f"the paper has no results for {benchmark!r}; it has {', '.join(BENCHMARKS)}")
    root = Path(folder if folder is not None else require_folder())
    path = root / f"{benchmark}-{kind}-results.csv"
    if not path.is_file() and (root / (path.name + ".gz")).is_file():
        path = root / (path.name + ".gz")  # the shipped tables are gzipped; pandas reads them as they are
    if not path.is_file():
        raise PaperResultsError(f"{path} is missing: expected the paper's {kind} table for {benchmark}")
    table = pd.read_csv(path, index_col=0)
    unknown = sorted(set(table["Technique"]) - set(SELECTOR_NAMES))
    if unknown:
        raise PaperResultsError(f"{path}: unknown technique(s) {', '.join(unknown)}")
    return table


def _points(fractions) -> np.ndarray:
    """Fractions -> points, rounded away from float noise (0.0950000003 -> 9.5)."""
    return np.round(100.0 * np.asarray(fractions, dtype=np.float64), 6)


# ----------------------------------------------------------------------- reading
def mdad(benchmark: str, folder=None) -> pd.DataFrame:
    """The paper's MDAD table: selector, n_sources, split, size, mdad, ci_low, ci_high (points), reached.

    The sentinel MDAD (0.5) becomes NaN with ``reached`` False, and so do its CI bounds,
    which the reference code mirrored around the sentinel and mean nothing. An upper
    bound equal to the sentinel (the pessimistic bound never crossed) becomes NaN, an
    open upper end as in ``metrics.mdad_table``; its lower bound, the sentinel mirrored
    around the MDAD, is floored at 0.
    """
    raw = _read(folder, benchmark, "mdad")
    reached = ~np.isclose(raw["MDAD"].to_numpy(float), SENTINEL)
    open_high = reached & np.isclose(raw["MDAD upper CI"].to_numpy(float), SENTINEL)
    low = _points(raw["MDAD lower CI"])
    out = pd.DataFrame({
        "benchmark": benchmark,
        "selector": raw["Technique"].map(SELECTOR_NAMES).to_numpy(),
        "n_sources": raw["Number of source models"].astype(int).to_numpy(),
        "split": raw["Split"].astype(str).to_numpy(),
        "size": raw["Fraction of sampled points"].astype(int).to_numpy(),
        "mdad": np.where(reached, _points(raw["MDAD"]), np.nan),
        "ci_low": np.where(reached, np.where(open_high, np.maximum(low, 0.0), low), np.nan),
        "ci_high": np.where(reached & ~open_high, _points(raw["MDAD upper CI"]), np.nan),
        "reached": reached,
    })
    return out.reset_index(drop=True)


def mdad_at(benchmark: str, n_sources: int = 300, split: str = "seen", folder=None) -> pd.DataFrame:
    """The paper's MDAD rows for one source count and split, shaped like ``metrics.mdad_table``."""
    table = mdad(benchmark, folder)
    part = table[(table["n_sources"] == n_sources) & (table["split"] == split)]
    if part.empty:
        have = sorted(table["n_sources"].unique())
        raise PaperResultsError(f"the paper's {benchmark} MDAD table has no rows for {n_sources} sources, "
                                f"split {split!r}; it has source counts {', '.join(map(str, have))}")
    return part.drop(columns=["benchmark", "n_sources", "split"]).reset_index(drop=True)


def paper_source_count(n_sources: int, benchmark: str, folder=None) -> int:
    """The paper's source count to compare with ours: ours if the paper ran it, else 300."""
    counts = set(mdad(benchmark, folder)["n_sources"])
    return int(n_sources) if int(n_sources) in counts else 300


def estimation(benchmark: str, folder=None) -> pd.DataFrame:
    """The paper's per-run estimation table: selector, dataset, n_sources, size, run,
    error_seen/error_unseen (points), tau_seen/tau_unseen.

    Runs are not numbered in the file; ``run`` counts the rows of one configuration
    (dataset x selector x sources x size) in file order.
    """
    raw = _read(folder, benchmark, "estimation")
    out = pd.DataFrame({
        "benchmark": benchmark,
        "dataset": raw["Dataset"].astype(str).to_numpy(),
        "selector": raw["Technique"].map(SELECTOR_NAMES).to_numpy(),
        "n_sources": raw["Number of source models"].astype(int).to_numpy(),
        "size": raw["Number of sampled points"].astype(int).to_numpy(),
        "error_seen": 100.0 * raw["Mean estimation error against seen accuracies"].to_numpy(float),
        "error_unseen": 100.0 * raw["Mean estimation error against unseen accuracies"].to_numpy(float),
        "tau_seen": raw["Kendall tau correlation against seen accuracies"].to_numpy(float),
        "tau_unseen": raw["Kendall tau correlation against unseen accuracies"].to_numpy(float),
    })
    out.insert(5, "run", out.groupby(["dataset", "selector", "n_sources", "size"], sort=False).cumcount())
    return out


def estimation_summary(benchmark: str, n_sources: int = 300, folder=None) -> pd.DataFrame:
    """Mean error (points) and τ over the paper's runs per selector x size, with the run count."""
    table = estimation(benchmark, folder)
    part = table[table["n_sources"] == n_sources]
    grouped = part.groupby(["selector", "size"], sort=False)
    return grouped.agg(error=("error_seen", "mean"), tau=("tau_seen", "mean"),
                       n_runs=("run", "size")).reset_index()


def comparison_kind(key: str, kind: str, n_models: int) -> str:
    """How a bundle can be set beside the paper: ``digits`` (the paper's own data: a real
    bundle with the paper's model pool), ``conclusions`` (the same benchmark, another pool or
    a synthetic stand-in) or ``none`` (no paper counterpart)."""
    bench = paper_benchmark(key)
    if bench is None:
        return "none"
    return "digits" if kind == "real" and int(n_models) == PAPER_MODELS[bench] else "conclusions"

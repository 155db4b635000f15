"""The paper's published result tables, in our conventions, and comparisons with ours.

Yauney, Warraich & Swayamdipta (2025) released the processed tables their figures were
drawn from: per benchmark an MDAD table (technique x source models x split x size, with a
95% CI) and an estimation table (one row per run). This module reads them from a
``paper-results`` folder on the data path and turns them into tidy tables shaped like
:func:`mbutils.results.metrics.mdad_table`'s: our selector names, accuracy *points* (the files hold
fractions) and NaN for the reference code's "not reached" sentinel (an MDAD of 0.5, i.e.
50 points). They are for side-by-side reading only, never inputs to our experiments.

Two kinds of comparison:

* :func:`side_by_side` — same data, same protocol (GPQA): per selector x size, our MDAD
  and CI beside the paper's, flagging cells whose intervals do not overlap;
* :func:`compare_conclusions` — different model pools (our BBH and MMLU-Pro bundles are
  far smaller than the paper's), so the digits cannot match; instead the paper's
  qualitative conclusions are computed the same way from both tables.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from mbutils.data import datapath
from mbutils.results import noise
from mbutils.base.errors import MbutilsError
from mbutils.base.tables import mdad_text

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
#: "Small" micro-benchmarks in the conclusions: k up to this size.
SMALL_K = 25


class PaperResultsError(MbutilsError, LookupError):
    """The paper's result tables are absent or not in the expected shape."""


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


# ----------------------------------------------------------------------- same data
def side_by_side(ours: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """Per selector x size present in both: our MDAD and CI beside the paper's, ``overlap`` False
    where the two intervals are disjoint (a not-reached MDAD is the point at infinity)."""
    keep = ["selector", "size", "mdad", "ci_low", "ci_high"]
    merged = ours[keep].merge(paper[keep], on=["selector", "size"], suffixes=("_ours", "_paper"))
    lo_o, hi_o = noise.intervals(merged[["mdad_ours", "ci_low_ours", "ci_high_ours"]].set_axis(keep[2:], axis=1))
    lo_p, hi_p = noise.intervals(merged[["mdad_paper", "ci_low_paper", "ci_high_paper"]].set_axis(keep[2:], axis=1))
    merged["overlap"] = noise.compare(lo_o, hi_o, lo_p, hi_p) == noise.WITHIN  # the book's one rule
    merged["difference"] = merged["mdad_ours"] - merged["mdad_paper"]
    return merged


def disagreements(table: pd.DataFrame) -> pd.DataFrame:
    """The cells of :func:`side_by_side` whose intervals do not overlap, with the direction."""
    out = table[~table["overlap"]].copy()
    out["direction"] = np.where(out["difference"] > 0, "ours higher",
                                np.where(out["difference"] < 0, "ours lower", "one not reached"))
    return out


def comparison_kind(key: str, kind: str, n_models: int) -> str:
    """How a bundle can be set beside the paper: ``digits`` (the paper's own data: a real
    bundle with the paper's model pool), ``conclusions`` (the same benchmark, another pool or
    a synthetic stand-in) or ``none`` (no paper counterpart)."""
    bench = paper_benchmark(key)
    if bench is None:
        return "none"
    return "digits" if kind == "real" and int(n_models) == PAPER_MODELS[bench] else "conclusions"


def _cell(m, lo, hi) -> str:
    if not np.isfinite(m):
        return mdad_text(m)
    low = f"{lo:g}" if np.isfinite(lo) else "?"
    high = f"{hi:g}" if np.isfinite(hi) else "open"
    return f"{m:g} [{low}, {high}]"


def display_table(table: pd.DataFrame, label=str) -> pd.DataFrame:
    """:func:`side_by_side` for reading: 'MDAD [low, high]' cells and a mark on disjoint intervals."""
    return pd.DataFrame({
        "selector": table["selector"].map(label), "k": table["size"].astype(int),
        "ours": [_cell(*r) for r in table[["mdad_ours", "ci_low_ours", "ci_high_ours"]].to_numpy(float)],
        "paper": [_cell(*r) for r in table[["mdad_paper", "ci_low_paper", "ci_high_paper"]].to_numpy(float)],
        "ours - paper": table["difference"].round(2),
        "intervals": np.where(table["overlap"], "overlap", "DISJOINT"),
    })


# ----------------------------------------------------------------------- conclusions
def _wide(table: pd.DataFrame, column: str = "mdad") -> pd.DataFrame:
    return table.pivot_table(index="size", columns="selector", values=column, dropna=False,
                             aggfunc="first").sort_index()


def best_methods(table: pd.DataFrame, max_size: int = SMALL_K) -> pd.DataFrame:
    """Per size up to ``max_size``: the selector better than every other under the noise rule
    (:mod:`mbutils.results.noise`), or "none beyond noise" when intervals overlap; ``mdad`` is the
    smallest MDAD at that size either way."""
    wide = _wide(table).fillna(np.inf)
    wide = wide[wide.index <= max_size]
    best = wide.min(axis=1)
    names = []
    for k in wide.index:
        clear = noise.clear_best(table, k)
        names.append(clear if clear is not None else ("none reached" if not np.isfinite(best[k])
                                                        else "none beyond noise"))
    return pd.DataFrame({"size": wide.index.astype(int), "best": names,
                         "mdad": best.replace(np.inf, np.nan).to_numpy()})


def random_within_ci_from(table: pd.DataFrame, baseline: str = "random") -> int | None:
    """Smallest size from which (at it and every larger size run) ``baseline`` is not worse than
    any other method under the noise rule — its interval reaches down to the upper end of every
    other method's — and its MDAD is reached; None if that fails at the largest size."""
    return noise.from_size_on(noise.not_worse_than_all(table, baseline))


def reaching(table: pd.DataFrame, level: float) -> pd.DataFrame:
    """Per selector: the smallest size whose MDAD is at most ``level`` points (NaN if none)."""
    hit = table[np.isfinite(table["mdad"]) & (table["mdad"] <= level)]
    first = hit.groupby("selector")["size"].min()
    return pd.DataFrame({"selector": list(dict.fromkeys(table["selector"]))}).assign(
        first_size=lambda d: d["selector"].map(first))


def conclusions(table: pd.DataFrame, level: float | None = None, max_size: int = SMALL_K) -> dict:
    """The paper's qualitative claims as values computed from one MDAD table."""
    best = best_methods(table, max_size)
    out = {f"best at k = {int(r.size)}": r.best for r in best.itertuples()}
    catch = random_within_ci_from(table)
    out["random not worse than any method (noise rule) from k ="] = "never" if catch is None else str(catch)
    if level is not None:
        reach = reaching(table, level).dropna()
        small = reach[reach["first_size"] <= max_size]
        out[f"any method reaches MDAD <= {level:g} points at k <= {max_size}"] = (
            ", ".join(sorted(small["selector"])) if len(small) else "no")
        out[f"any method reaches MDAD <= {level:g} points at some k"] = "yes" if len(reach) else "no"
        out[f"which (smallest k reaching {level:g})"] = (
            ", ".join(f"{s} (k = {int(k)})" for s, k in zip(reach["selector"], reach["first_size"])) or "none")
    return out


def common_cells(ours: pd.DataFrame, paper: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Both tables restricted to the selectors and sizes that both have, so conclusions compare alike."""
    sel = set(ours["selector"]) & set(paper["selector"])
    sizes = set(ours["size"]) & set(paper["size"])
    pick = lambda t: t[t["selector"].isin(sel) & t["size"].isin(sizes)].reset_index(drop=True)  # noqa: E731
    return pick(ours), pick(paper)


def compare_conclusions(ours: pd.DataFrame, paper: pd.DataFrame, level: float | None = None,
                        max_size: int = SMALL_K) -> pd.DataFrame:
    """One row per conclusion: the paper's answer, ours, and whether they agree (common cells only)."""
    ours_c, paper_c = common_cells(ours, paper)
    a, b = conclusions(paper_c, level, max_size), conclusions(ours_c, level, max_size)
    keys = list(dict.fromkeys([*a, *b]))
    rows = [{"question": k, "paper": a.get(k, "—"), "ours": b.get(k, "—")} for k in keys]
    out = pd.DataFrame(rows)
    out["same answer"] = out["paper"] == out["ours"]
    return out


# ----------------------------------------------------------------------- diagnosing a departure
def estimation_bias(results: pd.DataFrame) -> pd.DataFrame:
    """Per selector x size: mean signed error (bias), and the spread of errors within a run.

    A bias shared by all targets of a run leaves every ranking intact; what breaks pairs is
    the within-run spread, so both are shown (points).
    """
    err = 100.0 * (results["estimate"] - results["seen_accuracy"])
    within = err - err.groupby([results["selector"], results["size"], results["run"]]).transform("mean")
    frame = results[["selector", "size"]].assign(err=err, within=within, abs_err=err.abs())
    out = frame.groupby(["selector", "size"], sort=False).agg(
        bias=("err", "mean"), within_run_sd=("within", "std"), error=("abs_err", "mean")).reset_index()
    return out


def _item_total_correlation(correct: np.ndarray) -> np.ndarray:
    """Per item: correlation of its 0/1 column with the models' mean score (0 for constant items)."""
    x = correct - correct.mean(axis=0)
    s = correct.mean(axis=1) - correct.mean()
    denom = np.sqrt((x ** 2).sum(axis=0) * (s ** 2).sum())
    return np.divide(x.T @ s, denom, out=np.zeros(correct.shape[1]), where=denom > 0)


def pick_profile(benchmark, protocol, selectors, k: int, runs: int = 5, low: float = 0.1):
    """What each selector picks at size ``k`` in the first ``runs`` runs, beside the seen half.

    Returns ``(summary, mix)``: per selector the picks' mean source accuracy (points),
    their mean discrimination (item-total correlation among the run's targets: how well an
    item separates strong from weak targets) and the share below ``low``; and per subtask
    the share of the seen half and of each selector's picks. Same generators as the experiment.
    """
    from mbutils.methods.runs import choose, run_data
    from mbutils.methods.selectors.spec import as_selector

    names = list(benchmark.subtask_names)
    rows, mixes = [], {s: [] for s in selectors}
    seen_mix = []
    for run in range(min(runs, protocol.n_runs)):
        r, source = run_data(benchmark, protocol, run)
        easiness = 100.0 * source.correct.mean(axis=0)
        disc = _item_total_correlation(np.asarray(benchmark.correct[r.targets][:, r.seen], dtype=np.float64))
        seen_mix.append(np.bincount(source.subtasks, minlength=len(names)) / source.n_items)
        rows.append({"selector": "all seen items", "run": run, "source accuracy": easiness.mean(),
                     "discrimination": disc.mean(), f"share below {low:g}": np.mean(disc < low)})
        for name in selectors:
            items = choose(as_selector(name), source, k, seed=protocol.seed, run=run)[1].items  # the experiment's own pick
            mixes[name].append(np.bincount(source.subtasks[items], minlength=len(names)) / len(items))
            rows.append({"selector": name, "run": run, "source accuracy": easiness[items].mean(),
                         "discrimination": disc[items].mean(), f"share below {low:g}": np.mean(disc[items] < low)})
    summary = pd.DataFrame(rows).groupby("selector", sort=False).mean(numeric_only=True).drop(columns="run")
    mix = pd.DataFrame({"subtask": names, "seen half": np.mean(seen_mix, axis=0),
                        **{name: np.mean(m, axis=0) for name, m in mixes.items()}})
    return summary.reset_index(), mix

"""The analysis tables the chapters show, computed from results tables (beside :mod:`metrics`).

Functions here read tidy results, MDAD and summary tables and return DataFrames or
formatted facts; they draw nothing and display nothing."""

from __future__ import annotations

import math
import re
from typing import Sequence

import numpy as np
import pandas as pd

from mbutils.data.bundle import find_bundle, validate_bundle
from mbutils.base.errors import MbutilsError
from mbutils.evaluate.metrics import mdad_table, summary_table
from mbutils.evaluate.pair_metrics import gap_bins, pair_agreement
from mbutils.evaluate.results_table import iter_groups
from mbutils.base.names import CI_FLOOR_MARK, ci_bound_text, label
from mbutils.base.tables import NOT_REACHED
from mbutils.base.tables import mdad_text
from mbutils.methods.selectors import needs_sources


def fmt_points(value, digits: int = 1) -> str:
    """'4.5 points' or 'not reached'."""

    return mdad_text(value, f".{digits}f", " points")


def headline_size(sizes: Sequence[int]) -> int:
    """The size quoted in headlines: 100 when run (every profile runs it), else the middle one."""
    sizes = sorted(sizes)
    return 100 if 100 in sizes else sizes[len(sizes) // 2]


def pair_gaps(accuracy) -> "np.ndarray":  # noqa: F821
    """|accuracy difference| in points over all unordered pairs."""

    acc = 100 * np.asarray(accuracy, dtype=np.float64)
    i, j = np.triu_indices(len(acc), k=1)
    return np.abs(acc[i] - acc[j])


def data_overview(benchmarks: dict) -> "pd.DataFrame":  # noqa: F821
    """Size, accuracy spread (points) and share of close pairs for each bundle."""

    rows = []
    for name, b in benchmarks.items():
        acc = 100 * b.accuracy
        gaps = pair_gaps(b.accuracy)
        rows.append({"bundle": name, "models": b.n_models, "items": b.n_items,
                     "subtasks": len(b.subtask_names), "confidences": "yes" if b.confidence is not None else "no",
                     "min acc.": acc.min(), "median acc.": np.median(acc), "max acc.": acc.max(),
                     "pairs < 1 pt": f"{np.mean(gaps < 1):.0%}", "pairs < 2 pts": f"{np.mean(gaps < 2):.0%}",
                     "pairs < 5 pts": f"{np.mean(gaps < 5):.0%}"})
    return pd.DataFrame(rows)


def subtask_summary(benchmark) -> str:
    """'1 subtask (448 items)' or '24 subtasks of 146 to 250 items (median 250)', from the bundle."""
    counts = np.bincount(benchmark.subtask_codes)
    if len(counts) == 1:
        return f"1 subtask ({counts[0]:,} items)"
    lo, hi, mid = int(counts.min()), int(counts.max()), float(np.median(counts))
    size = f"{lo:,} items each" if lo == hi else f"{lo:,} to {hi:,} items (median {mid:,.0f})"
    return f"{len(counts)} subtasks of {size}"


def missing_report(name: str):
    """Validation findings about empty cells of a bundle on disk (None for synthetic or clean bundles)."""


    if str(name).startswith("synthetic-"):
        return None
    try:
        find_bundle(name)
    except MbutilsError:
        return None
    problems = validate_bundle(name)
    if not problems:
        return None
    return pd.DataFrame([{"file": p.file, "where": p.location, "finding": p.message, "severity": p.severity}
                         for p in problems])


def _with_ci(row) -> str:


    if not math.isfinite(row.mdad):
        return NOT_REACHED
    lo = "…" if not math.isfinite(row.ci_low) else ci_bound_text(row.ci_low, lower=True)
    hi = "…" if not math.isfinite(row.ci_high) else ci_bound_text(row.ci_high)
    return f"{ci_bound_text(row.mdad)} [{lo}, {hi}]"


def mdad_wide(mdad) -> "pd.DataFrame":  # noqa: F821
    """Selectors as rows, sizes as columns, cells 'MDAD [low, high]' in points."""

    table = mdad.assign(cell=[_with_ci(r) for r in mdad.itertuples(index=False)])
    wide = table.pivot(index="selector", columns="size", values="cell")
    wide = wide.reindex(list(dict.fromkeys(mdad["selector"])))
    wide.columns = [f"k = {k}" for k in wide.columns]
    wide.index = [label(s) for s in wide.index]
    out = wide.rename_axis("selector").reset_index()
    out.attrs["ci_floored"] = bool(table["cell"].str.contains(re.escape(CI_FLOOR_MARK)).any())
    return out


def summary_wide(summary) -> "pd.DataFrame":  # noqa: F821
    """Selectors as rows, sizes as columns, cells 'tau / error'."""

    table = summary.assign(cell=[f"{r.tau:.2f} / {r.error:.1f}" for r in summary.itertuples(index=False)])
    wide = table.pivot(index="selector", columns="size", values="cell")
    wide = wide.reindex(list(dict.fromkeys(summary["selector"])))
    wide.columns = [f"k = {k}: tau / error" for k in wide.columns]
    wide.index = [label(s) for s in wide.index]
    return wide.rename_axis("selector").reset_index()


def threshold_table(tables: dict) -> "pd.DataFrame":  # noqa: F821
    """MDAD per selector x size at each threshold, thresholds as columns."""

    parts = [t.assign(threshold=f"MDAD at {th:g}")[["selector", "size", "threshold", "mdad"]]
             for th, t in sorted(tables.items())]
    wide = pd.concat(parts).pivot_table(index=["selector", "size"], columns="threshold", values="mdad",
                                        dropna=False, sort=False)
    out = wide.reset_index().rename_axis(None, axis=1)
    out.attrs["mdad_columns"] = [c for c in out.columns if str(c).startswith("MDAD at ")]
    return out


def sources_table(sweep: dict, threshold: float = 0.8) -> "pd.DataFrame":  # noqa: F821
    """MDAD tables of a sources sweep stacked with an ``n_sources`` column."""


    return pd.concat([mdad_table(res, threshold=threshold).assign(n_sources=n) for n, res in sweep.items()],
                     ignore_index=True)


def relative_table(mdads: dict, selector: str, baseline: str = "random", comparisons: dict | None = None
                   ) -> "pd.DataFrame":  # noqa: F821
    """MDAD of a selector and of random per benchmark and size, and their difference; with ``comparisons``
    (benchmark -> records of ``compare_selectors(results, selector, baseline)``) the cells carry their
    intervals, the difference its paired interval, and a column gives the noise rule's verdict."""

    rows = []
    for name, table in mdads.items():
        wide = table.pivot_table(index="size", columns="selector", values="mdad", dropna=False)
        cells = {(r.selector, int(r.size)): r for r in table.itertuples(index=False)}
        paired = {int(r["size"]): r for r in (comparisons or {}).get(name, [])}
        for k, row in wide.iterrows():
            if comparisons is None:
                rows.append({"benchmark": name, "size": k, "method": row.get(selector), "random": row.get(baseline),
                             "difference": row.get(selector) - row.get(baseline)})
                continue
            r = paired.get(int(k), {})
            d, lo, hi = (r.get(c) for c in ("difference", "low", "high"))
            diff = ("—" if d is None or not np.isfinite(d) else f"{d:+.1f} [" + ", ".join(
                "open" if v is None or not np.isfinite(v) else f"{v:+.1f}" for v in (lo, hi)) + "]")
            rows.append({"benchmark": name, "size": int(k),
                         "method": _with_ci(cells[(selector, int(k))]) if (selector, int(k)) in cells else "—",
                         "random": _with_ci(cells[(baseline, int(k))]) if (baseline, int(k)) in cells else "—",
                         "difference [paired 95%]": diff, "verdict": r.get("verdict", "—")})
    out = pd.DataFrame(rows)
    if comparisons is None:
        out.attrs["mdad_columns"] = ["method", "random"]
    return out


def closer_than_mdad(data_name: str, set_name: str, accuracy, mdad) -> "pd.DataFrame":  # noqa: F821
    """Share of a target set's pairs whose gap is below each selector x size MDAD, and the same share at the
    two ends of the MDAD's 95% interval (how far the share could move within it)."""


    gaps = pair_gaps(accuracy)
    rows = []
    for r in mdad.itertuples(index=False):
        lo, hi = getattr(r, "ci_low", np.nan), getattr(r, "ci_high", np.nan)
        reached = np.isfinite(r.mdad)
        rows.append({"bundle": data_name, "target set": set_name, "selector": label(r.selector), "size": r.size,
                     "MDAD": r.mdad, "share closer than MDAD": share_closer(gaps, r.mdad),
                     "at interval low end": share_closer(gaps, max(lo, 0.0)) if reached and np.isfinite(lo)
                     else (0.0 if reached else 1.0),
                     "at interval high end": share_closer(gaps, hi) if reached and np.isfinite(hi) else 1.0})
    return pd.DataFrame(rows)


def items_needed(mdads: dict, gaps: Sequence[float]) -> "pd.DataFrame":  # noqa: F821
    """Per benchmark and selector, the smallest size from which pairs ``gap`` points apart are
    ordered at the threshold *even at the upper end of the MDAD's 95% interval*, at that size and
    every larger size run; ``> K`` when no size does.

    Read the book's tables (``metrics.mdad_table``: monotone MDADs, run-bootstrap intervals), so that
    an MDAD at most the gap means every larger gap reaches the threshold too. A cell never states
    fewer items than the interval supports: an open or missing upper end supports nothing.
    The numbers behind each cell are in ``attrs["cells"]`` (benchmark, selector, gap, size,
    mdad, ci_low, ci_high at that size) for checking.
    """
    rows, cells = [], []
    for name, table in mdads.items():
        for selector, part in table.groupby("selector", sort=False):
            part = part.sort_values("size")
            hi = part["ci_high"].to_numpy(float) if "ci_high" in part else np.full(len(part), np.nan)
            hi = np.where(np.isfinite(part["mdad"].to_numpy(float)), hi, np.nan)
            row = {"benchmark": name, "selector": label(selector),
                   "needs source models": "yes" if needs_sources(selector) else "no"}
            for gap in gaps:
                ok = np.isfinite(hi) & (hi <= gap)
                tail = np.flip(np.logical_and.accumulate(np.flip(ok)))  # ok here and at every larger size
                key = f"{gap:g} pt" + ("s" if gap != 1 else "")
                if tail.any():
                    at = part.iloc[int(np.argmax(tail))]
                    row[key] = f"{int(at['size'])} (MDAD {at['mdad']:g} [{max(at['ci_low'], 0):g}, {at['ci_high']:g}])"
                    cells.append({"benchmark": name, "selector": selector, "gap": float(gap), "size": int(at["size"]),
                                  "mdad": float(at["mdad"]), "ci_low": float(at["ci_low"]),
                                  "ci_high": float(at["ci_high"])})
                else:
                    row[key] = f"> {int(part['size'].max())}"
                    cells.append({"benchmark": name, "selector": selector, "gap": float(gap), "size": None,
                                  "mdad": np.nan, "ci_low": np.nan, "ci_high": np.nan})
            rows.append(row)
    out = pd.DataFrame(rows)
    out.attrs["cells"] = cells
    return out


def share_closer(gaps: np.ndarray, mdad: float) -> float:
    """Share of the pairs whose gap (points) is below ``mdad`` (all of them when it is not reached)."""
    return float(np.mean(gaps < mdad)) if np.isfinite(mdad) else 1.0


def share_range_text(gaps: np.ndarray, mdad: float, low: float, high: float) -> str:
    """'66%' with its range over the MDAD's interval: '66% (54% to 80% across its interval)'."""
    mid = share_closer(gaps, mdad)
    if not np.isfinite(mdad):
        return f"{mid:.0%}"
    lo = share_closer(gaps, max(low, 0.0)) if np.isfinite(low) else 0.0
    hi = share_closer(gaps, high) if np.isfinite(high) else 1.0
    return f"{mid:.0%}" if lo == hi else f"{mid:.0%} ({lo:.0%} to {hi:.0%} across its interval)"


def mdad_cell(row) -> str:
    """An MDAD row as a sentence quotes it, the cell of the page's table: '4.0 points [3.5, 5.0]' (a lower
    bound below 0 as 0, an upper bound no resample reached as 'open')."""
    if not np.isfinite(row["mdad"]):
        return NOT_REACHED
    lo = "…" if not np.isfinite(row["ci_low"]) else f"{max(float(row['ci_low']), 0.0):.1f}"
    hi = "open" if not np.isfinite(row["ci_high"]) else f"{float(row['ci_high']):.1f}"
    return f"{fmt_points(row['mdad'])} [{lo}, {hi}]"


def benchmark_facts(setting, res, mdad, summary, small_verdict: str) -> dict[str, str]:
    """Headline numbers of a benchmark chapter, formatted, for glue and the summary paragraph.

    Random sampling's MDAD is the page's own table's cell (``mdad``, :func:`mdad_table`: the monotone fit,
    its interval a bootstrap over runs), so the sentence and the table quote one number; the share of the
    pool's pairs closer than it is given with its range over that interval. ``small_verdict`` is the
    paired comparison at the smallest size (:func:`mbutils.evaluate.claims_paired.best_at_size_of`)."""
    k = headline_size(setting.sizes)
    small = min(setting.sizes)
    row = summary[(summary["selector"] == "random") & (summary["size"] == k)].iloc[0]
    rand = mdad[mdad["selector"] == "random"].set_index("size")
    nan_row = pd.Series({"mdad": np.nan, "ci_low": np.nan, "ci_high": np.nan})
    at_k = rand.loc[k] if k in rand.index else nan_row
    at_small = rand.loc[small] if small in rand.index else nan_row
    gaps = pair_gaps(setting.benchmark.accuracy)
    return {
        "data": f"{setting.data.display_name} ({setting.data.kind})",
        "settings": setting.settings_text(),
        "protocol": (f"{setting.protocol.n_sources} sources and {setting.protocol.n_targets} targets per run"
                     + (", fitted to its pool" if setting.pool_fitted else "")),
        "k": str(k),
        "tau_random": f"{row['tau']:.2f}",
        "error_random": f"{row['error']:.1f} points",
        "mdad_random": mdad_cell(at_k),
        "share_below": share_range_text(gaps, float(at_k["mdad"]), float(at_k["ci_low"]), float(at_k["ci_high"])),
        "small_k": str(small),
        "small_verdict": small_verdict,
        "random_small_mdad": mdad_cell(at_small),
    }


def full_mdad_table(results: dict) -> "pd.DataFrame":  # noqa: F821
    """MDAD at thresholds 0.7/0.8/0.9, seen and unseen, for every benchmark: the book's (monotone fit,
    interval from a bootstrap over runs) and, labelled, the paper's (first crossing, per-bin pair bootstrap)."""


    parts = []
    for name, res in results.items():
        for split in ("seen", "unseen"):
            for t in (0.7, 0.8, 0.9):
                book = mdad_table(res, threshold=t, split=split)
                paper = mdad_table(res, threshold=t, split=split, method="first", ci="pairs")
                parts.append(book.assign(benchmark=res.attrs.get("data", name), split=split, threshold=t,
                                         paper_mdad=paper["mdad"].to_numpy(), paper_ci_low=paper["ci_low"].to_numpy(),
                                         paper_ci_high=paper["ci_high"].to_numpy()))
    cols = ["benchmark", "split", "threshold", "selector", "size", "mdad", "ci_low", "ci_high",
            "paper_mdad", "paper_ci_low", "paper_ci_high", "n_pairs", "n_distinct_pairs", "n_runs"]
    return pd.concat(parts, ignore_index=True)[cols]


def full_summary_table(results: dict) -> "pd.DataFrame":  # noqa: F821
    """Kendall tau and estimation error (seen and unseen) for every benchmark."""


    parts = [summary_table(res).assign(benchmark=res.attrs.get("data", name)) for name, res in results.items()]
    table = pd.concat(parts, ignore_index=True)
    return table[["benchmark", *[c for c in table.columns if c != "benchmark"]]]


def largest_subtasks(benchmark, count: int) -> list[str]:
    """Names of the ``count`` largest subtasks (ties: first in order)."""

    sizes = np.bincount(benchmark.subtask_codes)
    if len(sizes) < 2:
        return []
    order = np.argsort(-sizes, kind="stable")[:count]
    return [str(benchmark.subtask_names[i]) for i in order]


def float_gap_bins(true_diff, n_items, bin_width: float = 0.5):
    """The reference-style bin from floating-point accuracies: floor(|acc_A - acc_B| * 100 / width)."""

    n = np.asarray(n_items, dtype=np.float64).reshape(-1, *([1] * (np.ndim(true_diff) - 1)))
    acc_gap = np.abs(np.asarray(true_diff, dtype=np.float64) / n)
    return np.floor(acc_gap * 100.0 / bin_width).astype(np.int64)


def binning_comparison(results) -> "pd.DataFrame":  # noqa: F821
    """How many pairs float re-binning puts in another bin than exact integer binning (one experiment)."""


    # The true gaps are the same for every selector and size of an experiment: one group tells.
    _, pairs = next(iter_groups(results))
    exact = gap_bins(pairs.true_diff, pairs.n_items)
    approx = float_gap_bins(pairs.true_diff, pairs.n_items)
    return pd.DataFrame([{"pairs": exact.size, "pairs binned differently": int((exact != approx).sum()),
                          "bins seen (exact)": len(np.unique(exact)), "bins seen (float)": len(np.unique(approx))}])


def mdad_variants(results, threshold: float = 0.8) -> "pd.DataFrame":  # noqa: F821
    """MDAD under the paper's rules (first crossing) and each alternative, the book's (monotone) among them,
    with the width of the paper's pair-bootstrap interval and of the book's run-bootstrap interval."""

    base = mdad_table(results, threshold=threshold, method="first", ci="pairs")
    runs = mdad_table(results, threshold=threshold)
    excl = mdad_table(results, threshold=threshold, method="first", tie_rule="exclude", ci="none")
    out = base[["selector", "size", "mdad"]].rename(columns={"mdad": "MDAD (paper)"})
    out["ties excluded"] = excl["mdad"].to_numpy()
    out["monotone (the book's)"] = runs["mdad"].to_numpy()
    out["CI width, pairs (paper)"] = (base["ci_high"] - base["ci_low"]).to_numpy()
    out["CI width, runs (book)"] = (runs["ci_high"] - runs["ci_low"]).to_numpy()
    out.attrs["mdad_columns"] = ["MDAD (paper)", "ties excluded", "monotone (the book's)"]
    return out


def not_reached_counts(results) -> "pd.DataFrame":  # noqa: F821
    """Selector x size cells whose MDAD is not reached, per threshold."""


    rows = []
    for t in (0.7, 0.8, 0.9):
        table = mdad_table(results, threshold=t, ci="none")
        rows.append({"threshold": t, "cells": len(table), "not reached": int((~table["reached"]).sum()),
                     "reference code would plot": f"{int((~table['reached']).sum())} x 50 points"})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------ the worked example
def worked_example() -> pd.DataFrame:
    """A results table small enough to follow by hand: four models, a 20-item seen half,
    a 5-item micro-benchmark, three runs (the measures chapter computes every measure on it).

    The counts are chosen so that the example shows each rule once: a pair tied on the full
    benchmark, an estimated tie, a pair ordered the wrong way, and pairs in several bins.
    """
    seen_correct = {"A": 12, "B": 12, "C": 9, "D": 5}            # of 20 seen items
    # A and B are tied on the benchmark: their pair agrees only where A's estimate is higher
    # (runs 0 and 1, not run 2). Run 0 orders B and C the wrong way; estimated ties: A-C in
    # runs 0 and 2, C-D in run 1.
    estimates = [{"A": 0.6, "B": 0.4, "C": 0.6, "D": 0.2},
                 {"A": 0.8, "B": 0.6, "C": 0.4, "D": 0.4},
                 {"A": 0.4, "B": 0.6, "C": 0.4, "D": 0.2}]
    rows = [{"run": run, "selector": "random", "size": 5, "model": m, "estimate": est[m],
             "seen_correct": seen_correct[m], "n_seen": 20, "unseen_correct": seen_correct[m], "n_unseen": 20,
             "seen_accuracy": seen_correct[m] / 20, "unseen_accuracy": seen_correct[m] / 20,
             "full_accuracy": seen_correct[m] / 20}
            for run, est in enumerate(estimates) for m in seen_correct]
    return pd.DataFrame(rows)


def pair_table(results: pd.DataFrame, run: int = 0, bin_width: float = 0.5) -> pd.DataFrame:
    """Every target pair of one run, with the quantities the agreement rules read."""
    part = results[results["run"] == run].sort_values("model")
    models, est = part["model"].to_numpy(), part["estimate"].to_numpy(float)
    correct, n = part["seen_correct"].to_numpy(int), int(part["n_seen"].iloc[0])
    i, j = np.triu_indices(len(models), k=1)
    true_diff, est_diff = correct[i] - correct[j], est[i] - est[j]
    agrees, counted = pair_agreement(est_diff, true_diff)
    return pd.DataFrame({
        "pair": [f"{a}-{b}" for a, b in zip(models[i], models[j])],
        "c_a - c_b": true_diff, "true gap (points)": 100 * np.abs(true_diff) / n,
        "bin": gap_bins(true_diff, np.full(true_diff.shape, n), bin_width),
        "estimated difference (points)": 100 * est_diff, "agrees": agrees.astype(bool),
    })

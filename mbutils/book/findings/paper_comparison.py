"""Our MDAD tables beside the paper's: cell by cell on the same data, conclusion by conclusion on others.

Two kinds of comparison:

* :func:`side_by_side` — same data, same protocol (GPQA): per selector x size, our MDAD
  and CI beside the paper's, flagging cells whose intervals do not overlap;
* :func:`compare_conclusions` — different model pools (our BBH and MMLU-Pro bundles are
  far smaller than the paper's), so the digits cannot match; instead the paper's
  qualitative conclusions are computed the same way from both tables.

The paper's tables come from :mod:`mbutils.book.findings.paper_results`; every verdict is the
book's noise rule (:mod:`mbutils.evaluate.noise`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mbutils.evaluate import noise
from mbutils.evaluate.noise import random_within_ci_from
from mbutils.base.tables import mdad_text, upper_bound_text

#: "Small" micro-benchmarks in the conclusions: k up to this size.
SMALL_K = 25


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


def _cell(m, lo, hi) -> str:
    if not np.isfinite(m):
        return mdad_text(m)
    low = f"{lo:g}" if np.isfinite(lo) else "?"
    high = upper_bound_text(hi)
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
    (:mod:`mbutils.evaluate.noise`), or "none beyond noise" when intervals overlap; ``mdad`` is the
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
    out[f"random within {noise.MARGIN:g} points of every method (noise rule) from k ="] = (
        "never" if catch is None else str(catch))
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

"""Figures of results: agreement curves, MDAD, error and tau against size, sources and thresholds."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from mbutils.base.names import PALETTE, STYLES, label, style
from mbutils.book.plots.base import (MARKER_SIZE, NOT_REACHED_NOTE, THRESHOLD_COLOR, finish_figure, fit_text,
                                     fixed_ticks, name_panels, new_figure, ordered_selectors, plain_log_ticks,
                                     series_style, size_axis, table_sizes)
from mbutils.book.plots.layout import panel_grid

#: Panels of agreement curves share their y axis and need little room: three fit side by side.
CURVE_PANEL_IN = 2.3


def _marker_phase(selector: str) -> float:
    """Where a curve's first marker sits (axes-diagonal fraction): selectors start at
    different places, so markers of overlapping curves do not hide each other."""
    rank = list(STYLES).index(selector) if selector in STYLES else len(selector)
    return 0.02 + 0.045 * (rank % 5)


def plot_curve(ax, curve: pd.DataFrame, selector: str, size: int, max_gap: float = 20.0,
               mdad: float | None = None) -> None:
    """One agreement curve on ``ax`` (gap in points vs mean agreement), MDAD as a dotted line."""
    part = curve[(curve["selector"] == selector) & (curve["size"] == size) & (curve["gap"] <= max_gap)]
    st = style(selector)
    ax.plot(part["gap"], part["agreement"], color=st.color, linestyle=st.linestyle, linewidth=1.4,
            marker=st.marker, markersize=MARKER_SIZE, markevery=(_marker_phase(selector), 0.22))
    if mdad is not None and np.isfinite(mdad) and mdad <= max_gap:
        ax.axvline(mdad, color=st.color, linestyle=":", linewidth=1.2)


def _decorate_curve_axis(ax, threshold: float | None, max_gap: float, title: str) -> None:
    if threshold is not None:
        ax.axhline(threshold, color=THRESHOLD_COLOR, linewidth=0.8, linestyle="--")
    ax.set_xlim(0, max_gap)
    ax.set_ylim(0.3, 1.01)
    ax.set_xlabel("true accuracy gap (points)")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)


def _mdad_lookup(mdad: pd.DataFrame | None) -> dict[tuple[str, int], float]:
    if mdad is None:
        return {}
    return {(r.selector, int(r.size)): float(r.mdad) for r in mdad.itertuples(index=False)}


def agreement_curves(curve: pd.DataFrame, sizes: Sequence[int] | None = None,
                     selectors: Sequence[str] | None = None, mdad: pd.DataFrame | None = None,
                     threshold: float | None = 0.8, max_gap: float = 20.0, ncols: int | None = None):
    """Agreement curves, one panel per size, one line per selector (paper figs 1-3).

    ``mdad`` (a :func:`mbutils.evaluate.metrics.mdad_table`) adds each selector's MDAD as a
    dotted vertical line in its colour. Panels run in rows of at most ``ncols`` (default 3), fewer
    when the page is narrower.
    """
    selectors = ordered_selectors(curve["selector"], selectors)
    sizes = table_sizes(curve, sizes)
    fig, axes = new_figure(1, len(sizes), width=3.6, height=3.0, sharey=True, min_width=CURVE_PANEL_IN,
                           max_cols=ncols or 3)
    lookup = _mdad_lookup(mdad)
    for ax, k in zip(axes.flat, sizes):
        for s in selectors:
            plot_curve(ax, curve, s, k, max_gap, lookup.get((s, k)))
        _decorate_curve_axis(ax, threshold, max_gap, f"k = {k} items")
        ax.set_ylabel("pairwise agreement")
    return finish_figure(fig, axes, selectors)


def plot_mdad(ax, mdad: pd.DataFrame, selector: str, x: str = "size", bands: bool = True) -> None:
    """MDAD (points) against ``x`` with its CI as a band; 'not reached' as open triangles on top."""
    part = mdad[mdad["selector"] == selector].sort_values(x)
    st = style(selector)
    xs, ys = part[x].to_numpy(float), part["mdad"].to_numpy(float)
    ax.plot(xs, ys, color=st.color, linestyle=st.linestyle, marker=st.marker, markersize=MARKER_SIZE,
            linewidth=1.4)
    if bands and {"ci_low", "ci_high"} <= set(part.columns):
        lo = part["ci_low"].to_numpy(float)
        hi = part["ci_high"].to_numpy(float)
        ok = np.isfinite(ys)
        hi = np.where(ok & ~np.isfinite(hi), ys, hi)  # open upper end: band stops at MDAD
        ax.fill_between(xs, np.where(ok, lo, np.nan), np.where(ok, hi, np.nan),
                        color=st.color, alpha=0.12, linewidth=0)
    missing = ~np.isfinite(ys)
    if missing.any():
        ax.plot(xs[missing], np.ones(missing.sum()), transform=ax.get_xaxis_transform(),
                linestyle="none", marker="^", markerfacecolor="none", markeredgecolor=st.color,
                clip_on=False)


def mdad_vs_size(mdad: pd.DataFrame, selectors: Sequence[str] | None = None, bands: bool = True,
                 title: str | None = None, ax=None):
    """MDAD (points) against k on a log axis, with CI bands (paper fig 2, right)."""
    selectors = ordered_selectors(mdad["selector"], selectors)
    if ax is None:
        fig, axes = new_figure(1, 1, width=5.0, height=3.6)
        ax = axes[0, 0]
    else:
        fig, axes = ax.figure, np.array([[ax]])
    for s in selectors:
        plot_mdad(ax, mdad, s, bands=bands)
    size_axis(ax, mdad["size"].unique(), "MDAD (points)")
    ax.set_ylim(bottom=0)
    ax.set_title(title or f"MDAD vs size ({NOT_REACHED_NOTE})", fontsize=10)
    return finish_figure(fig, axes, selectors) if ax is axes[0, 0] else fig


def metrics_vs_size(summary: pd.DataFrame, mdad: pd.DataFrame, selectors: Sequence[str] | None = None,
                    split: str = "seen", title: str | None = None):
    """Estimation error, Kendall tau and MDAD against k, all selectors (paper fig 4)."""
    selectors = ordered_selectors(summary["selector"], selectors)
    suffix = "" if split == "seen" else "_unseen"
    fig, axes = new_figure(1, 3, width=3.6, height=3.1)
    sizes = sorted(summary["size"].unique())
    for s in selectors:
        part = summary[summary["selector"] == s].sort_values("size")
        st = style(s)
        kw = dict(color=st.color, linestyle=st.linestyle, marker=st.marker, markersize=MARKER_SIZE, linewidth=1.4)
        axes[0, 0].plot(part["size"], part[f"error{suffix}"], **kw)
        axes[0, 1].plot(part["size"], part[f"tau{suffix}"], **kw)
        plot_mdad(axes[0, 2], mdad, s)
    for ax, ylabel in zip(axes.flat, ("mean |estimate - accuracy| (points)", "Kendall tau-b",
                                      "MDAD (points)")):
        size_axis(ax, sizes, ylabel)
    axes[0, 0].set_ylim(bottom=0)
    axes[0, 2].set_ylim(bottom=0)
    axes[0, 0].set_title("estimation error", fontsize=10)
    axes[0, 1].set_title("Kendall tau", fontsize=10)
    axes[0, 2].set_title("MDAD (band: 95% interval)", fontsize=10)
    if title:
        fig.suptitle(title, fontsize=11)
    return finish_figure(fig, axes, selectors)


def tau_and_curves(summary: pd.DataFrame, curve: pd.DataFrame, sizes: Sequence[int],
                   selectors: Sequence[str] | None = None, threshold: float = 0.8, max_gap: float = 20.0):
    """Kendall tau against k beside agreement curves at a few sizes (paper fig 1)."""
    selectors = ordered_selectors(summary["selector"], selectors)
    sizes = table_sizes(curve, sizes)
    fig, axes = new_figure(1, 1 + len(sizes), width=3.6, height=3.1)
    for s in selectors:
        part = summary[summary["selector"] == s].sort_values("size")
        st = style(s)
        axes[0, 0].plot(part["size"], part["tau"], color=st.color, linestyle=st.linestyle,
                        marker=st.marker, markersize=MARKER_SIZE)
    size_axis(axes[0, 0], summary["size"].unique(), "Kendall tau-b")
    axes[0, 0].set_title("Kendall tau against k", fontsize=10)
    for ax, k in zip(axes[0, 1:], sizes):
        for s in selectors:
            plot_curve(ax, curve, s, k, max_gap)
        _decorate_curve_axis(ax, threshold, max_gap, f"agreement by gap, k = {k}")
        ax.set_ylabel("pairwise agreement")
    return finish_figure(fig, axes, selectors)


def curves_and_mdad(curve: pd.DataFrame, mdad: pd.DataFrame, sizes: Sequence[int],
                    selectors: Sequence[str] = ("random", "anchor_points"),
                    threshold: float = 0.8, max_gap: float = 20.0):
    """Agreement curves with MDAD marked at a few sizes, then MDAD vs k with CI bands (paper fig 2)."""
    selectors = list(selectors)
    sizes = table_sizes(curve, sizes)
    fig, axes = new_figure(1, len(sizes) + 1, width=3.6, height=3.1)
    lookup = _mdad_lookup(mdad)
    for ax, k in zip(axes[0, :-1], sizes):
        for s in selectors:
            plot_curve(ax, curve, s, k, max_gap, lookup.get((s, k)))
        _decorate_curve_axis(ax, threshold, max_gap, f"k = {k} (dotted: MDAD)")
        ax.set_ylabel("pairwise agreement")
    ax = axes[0, -1]
    for s in selectors:
        plot_mdad(ax, mdad[mdad["selector"].isin(selectors)], s)
    size_axis(ax, mdad["size"].unique(), "MDAD (points)")
    ax.set_ylim(bottom=0)
    ax.set_title("MDAD vs k (band: 95% interval)", fontsize=10)
    return finish_figure(fig, axes, selectors)


def benchmark_grid(curves: Mapping[str, pd.DataFrame], mdads: Mapping[str, pd.DataFrame],
                   sizes: Mapping[str, Sequence[int]], selectors: Sequence[str] | None = None,
                   threshold: float = 0.8, max_gap: float = 20.0):
    """Rows = benchmarks: agreement curves at several sizes, then MDAD vs k (paper fig 3).

    Each benchmark starts a row and wraps onto the next when its panels do not fit the page; every
    panel's title names its benchmark.
    """
    names = list(curves)
    fig, rows = panel_grid([len(sizes[n]) + 1 for n in names], width=3.0, height=2.6, min_width=CURVE_PANEL_IN)
    used: list[str] = []
    for row, name in zip(rows, names):
        sel = ordered_selectors(curves[name]["selector"], selectors)
        used += [s for s in sel if s not in used]
        for ax, k in zip(row[:-1], sizes[name]):
            for s in sel:
                plot_curve(ax, curves[name], s, k, max_gap)
            _decorate_curve_axis(ax, threshold, max_gap, f"{name}: k = {k}")
            ax.set_xlabel("gap (points)")
            ax.set_ylabel("agreement")
        for s in sel:
            plot_mdad(row[-1], mdads[name], s)
        size_axis(row[-1], mdads[name]["size"].unique(), "MDAD (points)")
        row[-1].set_xlabel("size k (log scale)")
        row[-1].set_ylim(bottom=0)
        row[-1].set_title(f"{name}: MDAD vs k", fontsize=10)
    name_panels(fig, names, rows)
    return finish_figure(fig, np.array([ax for row in rows for ax in row], dtype=object)[None, :], used)


def seen_vs_unseen(mdad_seen: pd.DataFrame, mdad_unseen: pd.DataFrame,
                   selectors: Sequence[str] | None = None):
    """MDAD on the seen half against MDAD on the unseen half, one point per selector x k (fig 6)."""
    selectors = ordered_selectors(mdad_seen["selector"], selectors)
    both = mdad_seen.merge(mdad_unseen, on=["selector", "size"], suffixes=("_seen", "_unseen"))
    fig, axes = new_figure(1, 2, width=3.5, height=3.4)
    ax = axes[0, 0]
    sizes = sorted(both["size"].unique())
    area = dict(zip(sizes, np.linspace(20, 90, len(sizes))))
    for s in selectors:
        part = both[both["selector"] == s]
        ax.scatter(part["mdad_seen"], part["mdad_unseen"], s=[area[k] for k in part["size"]],
                   color=style(s).color, marker=style(s).marker, alpha=0.8)
    finite = both[["mdad_seen", "mdad_unseen"]].to_numpy(float)
    top = np.nanmax(finite) * 1.05 if np.isfinite(finite).any() else 1.0
    ax.plot([0, top], [0, top], color=THRESHOLD_COLOR, linewidth=0.8, linestyle="--")
    ax.set_xlim(0, top)
    ax.set_ylim(0, top)
    ax.set_xlabel("MDAD, seen half (points)")
    ax.set_ylabel("MDAD, unseen half (points)")
    ax.set_title("each point: one selector and size (larger marker = larger k)", fontsize=10)
    ax.grid(alpha=0.3)
    ax = axes[0, 1]
    for s in selectors:
        part = both[both["selector"] == s].sort_values("size")
        st = style(s)
        ax.plot(part["size"], part["mdad_unseen"] - part["mdad_seen"], color=st.color,
                linestyle=st.linestyle, marker=st.marker, markersize=MARKER_SIZE)
    ax.axhline(0, color=THRESHOLD_COLOR, linewidth=0.8)
    size_axis(ax, sizes, "MDAD unseen - seen (points)")
    ax.set_title("unseen minus seen, by k", fontsize=10)
    return finish_figure(fig, axes, selectors)


def mdad_by_threshold(tables: Mapping[float, pd.DataFrame], selectors: Sequence[str] | None = None):
    """MDAD vs k at several agreement thresholds, one panel each (appendix figure)."""
    thresholds = sorted(tables)
    first = tables[thresholds[0]]
    selectors = ordered_selectors(first["selector"], selectors)
    fig, axes = new_figure(1, len(thresholds), width=3.6, height=3.1, sharey=True, min_width=CURVE_PANEL_IN)
    for ax, t in zip(axes.flat, thresholds):
        for s in selectors:
            plot_mdad(ax, tables[t], s)
        size_axis(ax, tables[t]["size"].unique(), "MDAD (points)")
        ax.set_ylim(bottom=0)
        ax.set_title(f"threshold {t:g}", fontsize=10)
    return finish_figure(fig, axes, selectors)


def mdad_vs_sources(mdad: pd.DataFrame, selectors: Sequence[str] | None = None, size: int | None = None):
    """MDAD against the number of source models (table with an ``n_sources`` column)."""
    selectors = ordered_selectors(mdad["selector"], selectors)
    fig, axes = new_figure(1, 1, width=5.2, height=3.6)
    ax = axes[0, 0]
    for s in selectors:
        plot_mdad(ax, mdad, s, x="n_sources")
    fixed_ticks(ax, mdad["n_sources"].unique())
    ax.set_xlabel("number of source models")
    ax.set_ylabel("MDAD (points)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.set_title(f"k = {size} items" if size else "MDAD vs sources", fontsize=10)
    return finish_figure(fig, axes, selectors, ncol=3)


def mdad_vs_fraction(mdads: Mapping[str, pd.DataFrame], n_seen: Mapping[str, int], selector: str = "random"):
    """MDAD against k as a percentage of the seen half, one line per benchmark (appendix)."""
    fig, axes = new_figure(1, 1, width=5.2, height=3.6)
    ax = axes[0, 0]
    handles, shares = [], []
    for i, (name, table) in enumerate(mdads.items()):
        part = table[table["selector"] == selector].sort_values("size")
        pct = 100 * part["size"].to_numpy(float) / n_seen[name]
        handles += ax.plot(pct, part["mdad"], label=name, **series_style(i))
        shares.append(pct)
    ax.set_xscale("log")
    every = np.concatenate(shares) if shares else np.array([])
    every = every[every > 0]
    if every.size:
        plain_log_ticks(ax, every.min(), every.max())
    ax.set_xlabel("k as % of the seen half (log scale)")
    ax.set_ylabel("MDAD (points)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3, which="major")
    ax.set_title(f"{label(selector)}", fontsize=10)
    name_panels(fig, list(mdads), [ax] * len(mdads))
    return finish_figure(fig, axes, extra_handles=handles)


def target_set_figure(accuracy: np.ndarray, mdad: pd.DataFrame, selectors: Sequence[str] | None = None,
                      name: str = "", mark_sizes: Sequence[int] = (), mark_selector: str = "random"):
    """Fixed target set (paper fig 5): accuracies, pairwise gaps with MDADs marked, MDAD vs k."""
    selectors = ordered_selectors(mdad["selector"], selectors)
    acc = 100 * np.asarray(accuracy, float)
    i, j = np.triu_indices(len(acc), k=1)
    gaps = np.abs(acc[i] - acc[j])
    fig, axes = new_figure(1, 3, width=3.6, height=3.1)
    axes[0, 0].hist(acc, bins=15, color=PALETTE["blue"], alpha=0.8)
    axes[0, 0].set_xlabel("target accuracy (points)")
    axes[0, 0].set_ylabel("models")
    axes[0, 0].set_title(f"{name}: {len(acc)} targets", fontsize=10)
    ax = axes[0, 1]
    ax.hist(gaps, bins=np.arange(0, max(gaps.max(), 1) + 0.5, 0.5), color=PALETTE["green"], alpha=0.8)
    ax.set_xlabel("|accuracy difference| between targets (points)")
    ax.set_ylabel("pairs")
    lookup = _mdad_lookup(mdad)
    right = max(gaps.max(), 1.0)
    marks = []
    for k, ls in zip(dict.fromkeys(int(k) for k in mark_sizes), ("-", "--", ":", "-.")):
        value = lookup.get((mark_selector, int(k)))
        if value is not None and np.isfinite(value):
            marks.append(ax.axvline(value, color=style(mark_selector).color, linestyle=ls, linewidth=1.2,
                                    label=f"{label(mark_selector)} MDAD, k = {k}: "
                                          f"{np.mean(gaps < value):.0%} of pairs closer"))
            right = max(right, value + 0.5)
    ax.set_xlim(0, right)
    ax.set_title("pairwise gaps (lines: MDAD)" if marks else "pairwise gaps", fontsize=10)
    for s in selectors:
        plot_mdad(axes[0, 2], mdad, s)
    size_axis(axes[0, 2], mdad["size"].unique(), "MDAD (points)")
    axes[0, 2].set_ylim(bottom=0)
    axes[0, 2].set_title("MDAD vs k (triangles: not reached)", fontsize=10)
    for ax in axes.flat[:2]:
        ax.grid(alpha=0.3)
    return finish_figure(fig, axes, selectors, extra_handles=marks)


def relative_mdad(mdads: Mapping[str, pd.DataFrame], selector: str, baseline: str = "random",
                  comparisons: Mapping[str, list] | None = None):
    """MDAD of ``selector`` minus MDAD of ``baseline`` against k, one line per benchmark; with ``comparisons``
    (benchmark -> records of ``compare_selectors(results, selector, baseline)``) each point carries its paired
    95% interval as a bar, the interval the noise rule reads."""
    fig, axes = new_figure(1, 1, width=5.2, height=3.6)
    ax = axes[0, 0]
    handles, sizes, drawn = [], set(), 0
    for i, (name, table) in enumerate(mdads.items()):
        wide = table.pivot_table(index="size", columns="selector", values="mdad", dropna=False)
        if selector not in wide or baseline not in wide:
            continue
        diff = wide[selector] - wide[baseline]
        drawn += int(np.isfinite(diff).sum())
        sizes.update(int(k) for k in wide.index)
        handles += ax.plot(wide.index, diff, label=name, **series_style(i))
        records = (comparisons or {}).get(name) or []
        if records:
            k = np.array([float(r["size"]) for r in records])
            mid = np.array([np.nan if r.get("difference") is None else float(r["difference"]) for r in records])
            lo = np.array([np.nan if r.get("low") is None else float(r["low"]) for r in records])
            hi = np.array([np.nan if r.get("high") is None else float(r["high"]) for r in records])
            ok = np.isfinite(mid) & np.isfinite(lo) & np.isfinite(hi)
            ax.errorbar(k[ok], mid[ok], yerr=[np.maximum(mid[ok] - lo[ok], 0), np.maximum(hi[ok] - mid[ok], 0)],
                        fmt="none", ecolor=series_style(i).get("color", "#000000"), elinewidth=1, capsize=2)
    ax.axhline(0, color=THRESHOLD_COLOR, linewidth=0.8)
    ylabel = f"MDAD: {label(selector)} - {label(baseline)} (points)"
    if not drawn:  # nothing to compare: say so instead of an empty (and unscalable) log axis
        ax.text(0.5, 0.5, "no size where both MDADs are reached", ha="center", va="center",
                transform=ax.transAxes, fontsize=9)
        ax.set_xlabel("micro-benchmark size k (items, log scale)")
        ax.set_xticks([])  # no sizes to tick
        ax.set_ylabel(ylabel)
    else:
        size_axis(ax, sorted(sizes), ylabel)
    ax.set_title("bars: paired 95% interval; a bar wholly below zero: lower than random" if comparisons else
                 "difference of the two MDADs (no interval drawn)", fontsize=9)
    name_panels(fig, list(mdads), [ax] * len(mdads))
    return finish_figure(fig, axes, extra_handles=handles)


def mdad_panels(mdads: Mapping[str, pd.DataFrame], selectors: Sequence[str] | None = None,
                bands: bool = True):
    """MDAD vs k, one panel per benchmark, the same selectors in each (selector chapters)."""
    names = list(mdads)
    fig, axes = new_figure(1, len(names), width=3.6, height=3.1)
    used: list[str] = []
    for ax, name in zip(axes.flat, names):
        table = mdads[name]
        sel = [s for s in ordered_selectors(table["selector"], None) if selectors is None or s in selectors]
        used += [s for s in sel if s not in used]
        for s in sel:
            plot_mdad(ax, table, s, bands=bands)
        size_axis(ax, table["size"].unique(), "MDAD (points)")
        ax.set_ylim(bottom=0)
        ax.set_title(name, fontsize=10)
    name_panels(fig, names, axes.flat)
    return finish_figure(fig, axes, used, ncol=3)


def estimates_scatter(panels: Mapping[str, tuple[np.ndarray, np.ndarray]], selector: str = "random"):
    """Estimated vs true accuracy of the targets of one run (points), one panel per size."""
    fig, axes = new_figure(1, len(panels), width=3.5, height=3.3, sharex=True, sharey=True)
    st = style(selector)
    for ax, (title, (truth, est)) in zip(axes.flat, panels.items()):
        truth, est = 100 * np.asarray(truth, float), 100 * np.asarray(est, float)
        ax.scatter(truth, est, s=14, color=st.color, marker=st.marker, alpha=0.8)
        lo, hi = min(truth.min(), est.min()) - 2, max(truth.max(), est.max()) + 2
        ax.plot([lo, hi], [lo, hi], color=THRESHOLD_COLOR, linestyle="--", linewidth=0.8)
        ax.set_xlabel("accuracy on the seen half (points)")
        ax.set_ylabel(f"{label(selector)} estimate (points)")
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3)
    fit_text(fig)
    return fig

"""Figures of what a selector picks: item maps, weight profiles, subtask allocations, strata, clusters."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from mbutils.base.names import label, style
from mbutils.base.names import PALETTE
from mbutils.book.plots.base import MARKER_SIZE, finish_figure, fit_text, new_figure


def selection_map(x: np.ndarray, y: np.ndarray, chosen: np.ndarray, weights: np.ndarray | None = None,
                  groups: np.ndarray | None = None, xlabel: str = "", ylabel: str = "",
                  title: str = "", ax=None, selector: str | None = None):
    """Items as grey dots (coloured by ``groups`` if given), chosen items ringed, area ~ weight."""
    own = ax is None  # a caller's axes: its figure's layout is the caller's
    if own:
        fig, axes = new_figure(1, 1, width=5.0, height=4.0)
        ax = axes[0, 0]
    fig = ax.figure
    x, y = np.asarray(x, float), np.asarray(y, float)
    if groups is not None:
        from matplotlib import colormaps

        cmap = colormaps["tab20"]
        codes = pd.factorize(np.asarray(groups))[0]
        ax.scatter(x, y, c=cmap(codes % 20), s=8, alpha=0.6, linewidths=0)
    else:
        ax.scatter(x, y, color="#bbbbbb", s=8, alpha=0.7, linewidths=0)
    chosen = np.asarray(chosen, dtype=np.int64)
    if weights is None:
        area = np.full(len(chosen), 40.0)
    else:
        w = np.asarray(weights, float)
        area = 20 + 200 * w / max(w.max(), 1e-12)
    color = style(selector).color if selector else "#000000"
    ax.scatter(x[chosen], y[chosen], s=area, facecolors="none", edgecolors=color, linewidths=1.3)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    if own:
        fit_text(fig)
    return fig


def selection_maps(x: np.ndarray, y: np.ndarray, picks: Mapping[str, tuple], groups=None,
                   xlabel: str = "", ylabel: str = "", selector: str | None = None):
    """Side-by-side :func:`selection_map` panels; ``picks`` maps a title to (items, weights)."""
    fig, axes = new_figure(1, len(picks), width=3.5, height=3.4, sharex=True, sharey=True)
    for ax, (title, (items, weights)) in zip(axes.flat, picks.items()):
        selection_map(x, y, items, weights, groups, xlabel, ylabel, title, ax=ax, selector=selector)
    fit_text(fig)
    return fig


def weight_profile(easiness: np.ndarray, picks: Mapping[str, tuple], bins: int = 10,
                   proxy: str = "% of sources correct"):
    """Share of chosen weight per easiness decile vs the benchmark's share: is the pick representative?"""
    easiness = 100 * np.asarray(easiness, float)
    edges = np.quantile(easiness, np.linspace(0, 1, bins + 1))
    edges[-1] += 1e-9
    cell = np.clip(np.searchsorted(edges, easiness, side="right") - 1, 0, bins - 1)
    fig, axes = new_figure(1, 1, width=5.4, height=3.4)
    ax = axes[0, 0]
    centres = np.arange(bins)
    handles = [ax.bar(centres, np.bincount(cell, minlength=bins) / len(cell), color="#dddddd",
                      label="whole seen half")]
    for title, (selector, items, weights) in picks.items():
        w = np.asarray(weights, float)
        share = np.bincount(cell[np.asarray(items)], weights=w, minlength=bins) / w.sum()
        st = style(selector)
        handles += ax.plot(centres, share, color=st.color, linestyle=st.linestyle, marker=st.marker,
                           markersize=MARKER_SIZE, label=title)
    ax.set_xticks(centres, [f"{edges[b]:.0f}" for b in range(bins)])
    ax.set_xlabel(f"item easiness decile (lower edge: {proxy})")
    ax.set_ylabel("share of estimate weight")
    ax.grid(alpha=0.3)
    return finish_figure(fig, axes, extra_handles=handles)


def allocation_bars(subtask_names: Sequence[str], seen_counts: Sequence[int],
                    picks: Mapping[str, np.ndarray]):
    """Share of chosen items per subtask for each selector vs the subtask's share of the seen half.

    Subtasks are rows (names written horizontally, never colliding); each selector's bar
    is in its colour, and the seen half's share is the grey bar on top of each group.
    """
    names = list(subtask_names)
    seen = np.asarray(seen_counts, float)
    n_bars = len(picks) + 1
    fig, axes = new_figure(1, 1, width=6.0, height=max(2.8, 1.2 + 0.09 * n_bars * len(names)))
    ax = axes[0, 0]
    y = np.arange(len(names))
    height = 0.8 / n_bars
    handles = [ax.barh(y - 0.4 + height / 2, seen / seen.sum(), height, color="#dddddd",
                       label="share of seen items")]
    for i, (sel, codes) in enumerate(picks.items(), start=1):
        counts = np.bincount(np.asarray(codes, dtype=np.int64), minlength=len(names))
        handles.append(ax.barh(y - 0.4 + height * (i + 0.5), counts / counts.sum(), height,
                               color=style(sel).color, label=label(sel)))
    ax.set_yticks(y, names)
    ax.set_ylim(len(names) - 0.5, -0.5)  # first subtask on top, as listed
    ax.set_xlabel("share of the micro-benchmark")
    ax.grid(alpha=0.3, axis="x")
    return finish_figure(fig, axes, extra_handles=handles)


def strata_picture(easiness: np.ndarray, strata: np.ndarray, chosen: np.ndarray, k: int):
    """Histogram of item easiness coloured by stratum, with the chosen items as a rug."""
    from matplotlib import colormaps

    easiness = 100 * np.asarray(easiness, float)
    strata = np.asarray(strata)
    fig, axes = new_figure(1, 1, width=6.0, height=3.4)
    ax = axes[0, 0]
    cmap = colormaps["viridis"]
    levels = np.unique(strata)
    bins = np.linspace(easiness.min(), easiness.max() + 1e-9, 41)
    for i, h in enumerate(levels):
        ax.hist(easiness[strata == h], bins=bins, color=cmap(i / max(len(levels) - 1, 1)), alpha=0.85)
    chosen = np.asarray(chosen, dtype=np.int64)
    ax.plot(easiness[chosen], np.zeros(len(chosen)), "|", color=PALETTE["vermillion"], markersize=14,
            markeredgewidth=1.5)
    ax.set_xlabel("item easiness: mean source proxy (points)")
    ax.set_ylabel("seen items")
    ax.set_title(f"{len(levels)} strata (colours) and the {k} chosen items (rug)", fontsize=10)
    ax.grid(alpha=0.3)
    fit_text(fig)
    return fig


def cluster_heatmap(similarity: np.ndarray, members: np.ndarray, max_items: int = 600):
    """Item-item correlation ordered by cluster: blocks on the diagonal are the clusters."""
    similarity = np.asarray(similarity, float)
    members = np.asarray(members)
    order = np.argsort(members, kind="stable")
    if len(order) > max_items:  # thin evenly, keeping the cluster order
        order = order[np.linspace(0, len(order) - 1, max_items).astype(int)]
    fig, axes = new_figure(1, 1, width=4.8, height=4.2)
    ax = axes[0, 0]
    image = ax.imshow(similarity[np.ix_(order, order)], cmap="RdBu_r", vmin=-1, vmax=1,
                      interpolation="nearest")
    bounds = np.flatnonzero(np.diff(members[order])) + 0.5
    for b in bounds:
        ax.axhline(b, color="black", linewidth=0.4)
        ax.axvline(b, color="black", linewidth=0.4)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_xlabel("items, grouped by anchor cluster")
    fig.colorbar(image, ax=ax, shrink=0.8, label="Pearson correlation over sources")
    fit_text(fig)
    return fig

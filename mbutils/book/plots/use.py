"""Figures of a micro-benchmark in use: a new model's score among the pool, the intervals of
held-out models, and the power of ordering one pair of models against k."""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from mbutils.base.names import PALETTE, label
from mbutils.base.vocabulary import renamed_keywords
from mbutils.book.plots.base import THRESHOLD_COLOR, finish_figure, new_figure, plain_log_ticks, series_style


def score_picture(pool_accuracy, estimate: float, low: float, high: float, *, truth: float | None = None,
                  mdad: float | None = None, name: str = "new model"):
    """The pool's accuracies (points, one tick each) with a new model's estimate, its interval,
    the band of ± MDAD around the estimate (pool models inside it cannot be told apart at the
    card's reliability) and, when known, its true accuracy."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    acc = np.sort(np.asarray(pool_accuracy, dtype=np.float64))
    fig, axes = new_figure(1, 1, width=7.0, height=2.6)
    ax = axes[0, 0]
    handles = []
    if mdad is not None and np.isfinite(mdad):
        ax.axvspan(estimate - mdad, estimate + mdad, color="#dddddd", zorder=0)
        handles.append(Patch(color="#dddddd", label=f"estimate ± MDAD ({mdad:.1f} points)"))
    ax.vlines(acc, 0.1, 0.5, color="#555555", linewidth=0.8)
    handles.append(Line2D([], [], color="#555555", linewidth=0.8, label=f"pool models ({len(acc)})"))
    ax.hlines(0.75, low, high, color=PALETTE["blue"], linewidth=4)
    ax.plot([estimate], [0.75], "o", color=PALETTE["blue"], markersize=7, markeredgecolor="white")
    handles.append(Line2D([], [], color=PALETTE["blue"], linewidth=4, marker="o", label=f"{name}: estimate and interval"))
    if truth is not None and np.isfinite(truth):
        ax.axvline(truth, color=PALETTE["vermillion"], linestyle="--", linewidth=1.4)
        handles.append(Line2D([], [], color=PALETTE["vermillion"], linestyle="--", label="its accuracy on all items"))
    ax.set_ylim(0, 1)
    ax.set_yticks([])
    ax.set_xlabel("accuracy (points)")
    ax.grid(alpha=0.3, axis="x")
    return finish_figure(fig, axes, extra_handles=handles)


def coverage_intervals(cells: pd.DataFrame, level: float):
    """One panel per selector (rows) and size (columns): every held-out model's interval, sorted
    by its true accuracy (dots); intervals that miss it are drawn in red."""
    from matplotlib.lines import Line2D

    selectors = list(dict.fromkeys(cells["selector"]))
    sizes = sorted(cells["size"].unique())
    fig, axes = new_figure(len(selectors), len(sizes), width=3.4, height=2.6, sharex=True, rows_are_groups=True)
    for r, selector in enumerate(selectors):
        for c, size in enumerate(sizes):
            ax = axes[r, c]
            part = cells[(cells["selector"] == selector) & (cells["size"] == size)].sort_values("truth", kind="stable")
            y = np.arange(len(part))
            covered = part["covered"].to_numpy(bool)
            ax.hlines(y[covered], part["low"][covered], part["high"][covered], color=PALETTE["blue"], linewidth=1)
            ax.hlines(y[~covered], part["low"][~covered], part["high"][~covered], color=PALETTE["vermillion"],
                      linewidth=1.6)
            ax.plot(part["truth"], y, ".", color="#333333", markersize=3)
            ax.set_title(f"{label(selector)}, k = {size}: {covered.mean():.0%} covered" if len(part) else
                         f"{label(selector)}, k = {size}", fontsize=9)
            ax.grid(alpha=0.3, axis="x")
            ax.set_yticks([])
        axes[r, 0].set_ylabel("held-out models")
    for ax in axes[-1]:
        ax.set_xlabel("accuracy (points)")
    handles = [Line2D([], [], color=PALETTE["blue"], label=f"{level:.0%} interval holding the accuracy"),
               Line2D([], [], color=PALETTE["vermillion"], linewidth=1.6, label="interval missing it"),
               Line2D([], [], color="#333333", marker=".", linestyle="none", label="accuracy on all items")]
    return finish_figure(fig, axes, extra_handles=handles)


@renamed_keywords(agreement="threshold")
def pair_power_curves(curves: Mapping[str, pd.DataFrame], threshold: float = 0.8, selector: str = "random"):
    """Power of ordering each pair correctly against k (one line per pair; ``curves`` maps a
    pair's name to a table with ``size`` and ``power``), with the target power dashed."""
    fig, axes = new_figure(1, 1, width=6.0, height=3.6)
    ax = axes[0, 0]
    handles = []
    for i, (name, curve) in enumerate(curves.items()):
        handles += ax.plot(curve["size"], curve["power"], label=name, **{**series_style(i), "marker": None})
    ax.axhline(threshold, color=THRESHOLD_COLOR, linestyle="--", linewidth=0.9)
    ax.set_xscale("log")
    top = max((int(curve["size"].max()) for curve in curves.values() if len(curve)), default=10)
    plain_log_ticks(ax, 1, top)
    ax.set_xlabel(f"k (items drawn by {label(selector).lower()}, log scale)")
    ax.set_ylabel("P(pair ordered as on all items)")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3, which="major")
    return finish_figure(fig, axes, extra_handles=handles)

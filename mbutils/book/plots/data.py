"""Figures of the data: accuracy and pairwise-gap distributions, subtask sizes, stand-in quantiles."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from mbutils.base.names import PALETTE
from mbutils.book.plots.base import MARKER_SIZE, THRESHOLD_COLOR, fit_text, name_panels, new_figure


def _has_spread(values: np.ndarray) -> bool:
    """Enough distinct values for a kernel density estimate (seaborn warns, and skips it, otherwise)."""
    return len(values) >= 5 and np.ptp(values) > 0


def accuracy_histograms(accuracies: Mapping[str, np.ndarray], bins: int = 30, chance: float | None = None):
    """Histogram of model accuracy (points) per benchmark with its kernel density, one panel each;
    ``chance`` (a share, e.g. 0.25 for four options) draws a dashed line where guessing scores."""
    import seaborn as sns

    names = list(accuracies)
    fig, axes = new_figure(1, len(names), width=3.6, height=3.0)
    for ax, name in zip(axes.flat, names):
        values = 100 * np.asarray(accuracies[name], float)
        sns.histplot(x=values, bins=bins, kde=_has_spread(values), color=PALETTE["blue"], alpha=0.7, ax=ax,
                     edgecolor="white", linewidth=0.4)
        ax.set_xlabel("model accuracy (points)")
        ax.set_ylabel("models")
        ax.set_title(f"{name} ({len(values)} models)", fontsize=10)
        if chance is not None:
            ax.axvline(100 * chance, color=THRESHOLD_COLOR, linestyle="--", linewidth=1.0)
        ax.grid(alpha=0.3)
    name_panels(fig, names, axes.flat)
    fit_text(fig)
    return fig


def pairwise_histograms(accuracies: Mapping[str, np.ndarray], max_gap: float = 30.0, bin_width: float = 0.5):
    """Histogram of |accuracy difference| (points) over all model pairs, one panel each."""
    import seaborn as sns

    names = list(accuracies)
    fig, axes = new_figure(1, len(names), width=3.6, height=3.0)
    for ax, name in zip(axes.flat, names):
        acc = 100 * np.asarray(accuracies[name], float)
        i, j = np.triu_indices(len(acc), k=1)
        gaps = np.abs(acc[i] - acc[j])
        sns.histplot(x=gaps[gaps <= max_gap], bins=np.arange(0, max_gap + bin_width, bin_width),
                     color=PALETTE["green"], alpha=0.8, ax=ax, edgecolor="none")
        ax.set_xlabel("|accuracy difference| (points)")
        ax.set_ylabel("model pairs")
        share = np.mean(gaps < 2.0)
        ax.set_title(f"{name}: {share:.0%} of pairs < 2 points", fontsize=10)
        ax.grid(alpha=0.3)
    name_panels(fig, names, axes.flat)
    fit_text(fig)
    return fig


def quantile_comparison(quantiles: Mapping[str, pd.DataFrame], points: Sequence[str] = ("accuracy", "pairwise_difference", "item_pvalue")):
    """Quantiles of real vs synthetic statistics, one panel per statistic (identity line = perfect)."""
    stats = [s for s in points if s in quantiles]
    fig, axes = new_figure(1, len(stats), width=3.5, height=3.3)
    for ax, stat in zip(axes.flat, stats):
        table = quantiles[stat]
        real, synth = 100 * table["real"].to_numpy(float), 100 * table["synthetic"].to_numpy(float)
        ax.plot(real, synth, marker="o", markersize=MARKER_SIZE, color=PALETTE["blue"])
        lo, hi = min(real.min(), synth.min()), max(real.max(), synth.max())
        ax.plot([lo, hi], [lo, hi], color=THRESHOLD_COLOR, linestyle="--", linewidth=0.8)
        ax.set_xlabel(f"real {stat.replace('_', ' ')} (points)")
        ax.set_ylabel("synthetic (points)")
        ax.set_title(stat.replace("_", " ") + " quantiles", fontsize=10)
        ax.grid(alpha=0.3)
    fit_text(fig)
    return fig


def subtask_bars(names: Sequence[str], counts: Sequence[int], accuracy: Sequence[float], title: str = ""):
    """Items per subtask (bars, left) and mean model accuracy per subtask (dots, right).

    Subtasks are rows, so their names are written horizontally and never run into each
    other however many subtasks a benchmark has; the figure grows in height instead.
    """
    n = len(names)
    fig, axes = new_figure(1, 2, width=3.6, height=max(2.6, 0.9 + 0.19 * n), sharey=True,
                           gridspec_kw={"width_ratios": [3, 2]})
    bars, dots = axes[0]
    y = np.arange(n)
    bars.barh(y, counts, color="#bbbbbb")
    bars.set_yticks(y, list(names))
    bars.set_ylim(n - 0.5, -0.5)  # first subtask on top, as listed
    bars.set_xlabel("items")
    dots.plot(100 * np.asarray(accuracy, float), y, "o", color=PALETTE["blue"], markersize=4)
    dots.set_xlabel("mean model accuracy (points)")
    for ax in (bars, dots):
        ax.grid(alpha=0.3, axis="x")
    if title:
        fig.suptitle(title, fontsize=10)
    fit_text(fig)
    return fig

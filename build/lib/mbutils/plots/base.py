"""What every figure shares: the figure grid, the legend, axes in accuracy points and size ticks."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..styles import label, style


THRESHOLD_COLOR = "#666666"


NOT_REACHED_NOTE = "open triangle at the top: MDAD not reached"


def _figure(nrows: int = 1, ncols: int = 1, width: float = 4.2, height: float = 3.3, **kw):
    """A pyplot-free Figure (never auto-shown, never leaked) and a 2-D array of axes."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width * ncols, height * nrows))
    axes = fig.subplots(nrows, ncols, squeeze=False, **kw)
    return fig, axes


def _finish(fig, axes, legend_selectors: Sequence[str] | None = None, ncol: int | None = None):
    """One legend for the whole figure (below the panels) and a tight layout."""
    if legend_selectors:
        from matplotlib.lines import Line2D

        handles = [Line2D([], [], color=style(s).color, linestyle=style(s).linestyle,
                          marker=style(s).marker, markersize=5, label=label(s))
                   for s in legend_selectors]
        ncol = ncol or min(len(handles), 4)
        fig.legend(handles=handles, loc="lower center", ncol=ncol, frameon=False,
                   bbox_to_anchor=(0.5, 0.0))
        rows = int(np.ceil(len(handles) / ncol))
        fig.mbutils_layout_rect = (0, 0.045 * rows + 0.02, 1, 1)  # kept for a re-layout after text scaling
    else:
        fig.mbutils_layout_rect = (0, 0, 1, 1)
    fig.tight_layout(rect=fig.mbutils_layout_rect)
    return fig


def _ordered(selectors_in_table: Sequence[str], selectors: Sequence[str] | None) -> list[str]:
    present = list(dict.fromkeys(selectors_in_table))
    if selectors is None:
        return present
    missing = [s for s in selectors if s not in present]
    if missing:
        raise ValueError(f"no rows for selectors {', '.join(missing)} in the table")
    return list(selectors)


def _sizes(table: pd.DataFrame, sizes: Sequence[int] | None) -> list[int]:
    present = sorted(int(k) for k in table["size"].unique())
    if sizes is None:
        return present
    missing = [k for k in sizes if k not in present]
    if missing:
        raise ValueError(f"no rows for sizes {', '.join(map(str, missing))} in the table")
    return [int(k) for k in sizes]


def _per_size_axis(ax, ylabel: str, log_x: bool = True) -> None:
    if log_x:
        ax.set_xscale("log")
    ax.set_xlabel("micro-benchmark size k (items, log scale)" if log_x else "micro-benchmark size k")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3, which="both")


def _sized_ticks(ax, sizes: Sequence[int]) -> None:
    from matplotlib.ticker import FixedLocator, NullLocator

    ax.xaxis.set_major_locator(FixedLocator(sizes))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([str(k) for k in sizes])

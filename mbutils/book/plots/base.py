"""What every figure shares: the figure grid, the legend area, size ticks and text that fits.

Figures are drawn at the width they are shown at (:mod:`.layout`): panels that do not fit the
page side by side wrap into rows. They are laid out by matplotlib's constrained layout, so
labels, titles and the legend area below the panels get their room again at every draw, also
after the book scales the text up (:func:`scale_text`). Legends live outside the axes (a row
below the panels), so they never cover data, axis labels or another panel's text.
"""

from __future__ import annotations

import textwrap
from functools import lru_cache
from typing import Sequence

import numpy as np
import pandas as pd

from mbutils.base.names import PALETTE, label, style
from mbutils.book.plots.layout import MIN_TEXT_PT, grid_figure, tidy_labels


THRESHOLD_COLOR = "#666666"


NOT_REACHED_NOTE = "open triangle at the top: MDAD not reached"

#: The text and look of the stand-in mark (:func:`mark_stand_in`): muted, small, boxed.
STAND_IN_TEXT = "stand-in data"
STAND_IN_COLOR = "#a33a3a"
_STAND_IN_GID = "mbutils-stand-in"

#: Series that are not selectors (benchmarks of one figure): colour, line style, marker. The
#: colours are :data:`~mbutils.base.names.PALETTE`'s eight; every series has its own marker, and
#: two series share a line style only when their lightness differs by 20 L* or more (greyscale).
SERIES_STYLES = ((PALETTE["blue"], "-", "o"), (PALETTE["vermillion"], "--", "s"), (PALETTE["green"], "-.", "D"),
                 (PALETTE["purple"], ":", "^"), (PALETTE["orange"], "--", "v"), (PALETTE["sky"], "-", "P"),
                 (PALETTE["wine"], "-.", "X"), (PALETTE["black"], ":", "*"))
#: Marker size (points) of every data line: large enough to tell the shapes apart in print.
MARKER_SIZE = 5


def new_figure(nrows: int = 1, ncols: int = 1, width: float = 4.2, height: float = 3.3, **kw):
    """A pyplot-free Figure (never auto-shown, never leaked) with constrained layout, and a
    2-D array of axes indexed as the ``nrows`` x ``ncols`` grid asked for; panels of ``width``
    x ``height`` inches that do not fit the page side by side wrap into rows
    (:func:`mbutils.book.plots.layout.grid_figure`, whose keywords it takes)."""
    return grid_figure(nrows, ncols, width, height, **kw)


def series_style(index: int) -> dict:
    """Line keywords of the ``index``-th non-selector series of a figure (e.g. a benchmark)."""
    color, linestyle, marker = SERIES_STYLES[index % len(SERIES_STYLES)]
    return dict(color=color, linestyle=linestyle, marker=marker, markersize=MARKER_SIZE, linewidth=1.4)


def selector_handle(selector: str):
    """A legend entry drawn exactly as the selector's lines are."""
    from matplotlib.lines import Line2D

    st = style(selector)
    return Line2D([], [], color=st.color, linestyle=st.linestyle, marker=st.marker, markersize=MARKER_SIZE + 1,
                  label=label(selector))


# ------------------------------------------------------------------ the legend area
def legend_below(fig, handles: Sequence, title: str | None = None, ncol: int | None = None) -> None:
    """One legend for the whole figure in its own row below the panels.

    The entries are kept on the figure so that :func:`scale_text` can lay the legend out
    again (font size, number of columns that fit the width) after text is scaled.
    """
    fig.mbutils_legend = {"handles": list(handles), "title": title, "ncol": ncol, "fontsize": 9.0,
                          "panels_height": fig.get_figheight()}
    _place_legend(fig)


def _place_legend(fig) -> None:
    """(Re)draw the stored legend with as many columns as fit the figure's width, in a
    strip added below the panels (the panels keep their height however long the legend)."""
    spec = getattr(fig, "mbutils_legend", None)
    if not spec or not spec["handles"]:
        return
    for old in [lg for lg in fig.legends if getattr(lg, "mbutils", False)]:
        old.remove()
    renderer = _renderer(fig)
    width = fig.bbox.width * 0.98
    ncol = min(spec["ncol"] or 4, len(spec["handles"]))
    while True:
        legend = fig.legend(handles=spec["handles"], loc="outside lower center", ncol=ncol, frameon=False,
                            fontsize=spec["fontsize"], title=spec["title"], title_fontsize=spec["fontsize"])
        legend.mbutils = True
        plain_text(legend)  # its entries may be names from the data: text, never mathtext
        box = legend.get_window_extent(renderer)
        if ncol == 1 or box.width <= width:
            break
        legend.remove()
        ncol -= 1
    fig.set_figheight(spec["panels_height"] + box.height / fig.dpi + 0.1)


def finish_figure(fig, axes, legend_selectors: Sequence[str] | None = None, ncol: int | None = None,
                  extra_handles: Sequence = ()):
    """The legend below the panels (selectors first, then ``extra_handles``), text fitted."""
    handles = [selector_handle(s) for s in legend_selectors or ()] + list(extra_handles)
    if handles:
        legend_below(fig, handles, ncol=ncol)
    fit_text(fig)
    return fig


def ordered_selectors(selectors_in_table: Sequence[str], selectors: Sequence[str] | None) -> list[str]:
    """The selectors to draw: ``selectors`` (each must have rows in the table), or every one of the table in its
    order."""
    present = list(dict.fromkeys(selectors_in_table))
    if selectors is None:
        return present
    missing = [s for s in selectors if s not in present]
    if missing:
        raise ValueError(f"no rows for selectors {', '.join(missing)} in the table")
    return list(selectors)


def table_sizes(table: pd.DataFrame, sizes: Sequence[int] | None) -> list[int]:
    """The sizes to draw: ``sizes`` (each must have rows in the table), or every size of the table, ascending."""
    present = sorted(int(k) for k in table["size"].unique())
    if sizes is None:
        return present
    missing = [k for k in sizes if k not in present]
    if missing:
        raise ValueError(f"no rows for sizes {', '.join(map(str, missing))} in the table")
    return [int(k) for k in sizes]


# ------------------------------------------------------------------ size ticks
def _roundness(values: np.ndarray) -> np.ndarray:
    """0 for powers of ten, 1 for 5 x 10^n, 2 for 2 or 2.5 x 10^n, 3 otherwise: the order in
    which tick labels are kept when not all fit."""
    values = np.abs(np.asarray(values, float))
    with np.errstate(divide="ignore", invalid="ignore"):
        mantissa = np.round(values / 10.0 ** np.floor(np.log10(values)), 6)
    rank = np.full(len(values), 3)
    rank[np.isin(mantissa, (2.0, 2.5))] = 2
    rank[mantissa == 5.0] = 1
    rank[mantissa == 1.0] = 0
    return rank


def _kept_labels(centres: np.ndarray, half_widths: np.ndarray, gap: float, priority: np.ndarray) -> np.ndarray:
    """Which labels to keep so that none overlaps another: greedily, in ``priority`` order."""
    kept = np.zeros(len(centres), bool)
    for i in np.argsort(priority, kind="stable"):
        clash = kept & (np.abs(centres - centres[i]) < half_widths + half_widths[i] + gap)
        kept[i] = not clash.any()
    return kept


@lru_cache(maxsize=None)
def _thinned_labels_class():
    """The formatter class (built on first use: matplotlib is imported only when drawing)."""
    from matplotlib.ticker import Formatter

    class ThinnedPlainLabels(Formatter):
        """Plain numbers (10, 250, 1000; never 10^1) that, at every draw, leave out the labels
        that would collide at the axis's current length and font size: the ends are kept
        first, then round numbers (powers of ten, then 5s, then 2s and 2.5s)."""

        def __call__(self, x, pos=None):
            return f"{x:g}"

        def format_ticks(self, values):
            values = np.asarray(values, float)
            labels = [self(v) for v in values]
            if len(values) < 2:
                return labels
            axis = self.axis
            lo, hi = axis.get_view_interval()
            scale = axis.get_transform()
            frac = (scale.transform(values) - scale.transform(lo)) / (scale.transform(hi) - scale.transform(lo))
            along_x = axis.axis_name == "x"
            box = axis.axes.bbox
            centres = frac * (box.width if along_x else box.height)
            em = axis.majorTicks[0].label1.get_fontsize() * axis.get_figure(root=True).dpi / 72
            lengths = np.array([len(s) for s in labels]) * 0.64 * em if along_x else np.full(len(labels), 1.2 * em)
            priority = _roundness(values) + np.arange(len(values)) / (2 * len(values))
            priority[[int(np.argmin(values)), int(np.argmax(values))]] = -1
            kept = _kept_labels(centres, lengths / 2, 0.6 * em, priority)
            return [s if k else "" for s, k in zip(labels, kept)]

    return ThinnedPlainLabels


def _thinning_formatter():
    """A fresh plain-number formatter that drops colliding labels (one per axis)."""
    return _thinned_labels_class()()


def fixed_ticks(ax, values: Sequence[float]) -> None:
    """x ticks at exactly ``values`` (linear or log axis), plain labels that never collide."""
    from matplotlib.ticker import FixedLocator, NullLocator

    ax.xaxis.set_major_locator(FixedLocator(sorted(float(v) for v in values)))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(_thinning_formatter())


def _per_size_axis(ax, ylabel: str, log_x: bool = True) -> None:
    if log_x:
        ax.set_xscale("log")
    ax.set_xlabel("micro-benchmark size k (items, log scale)" if log_x else "micro-benchmark size k")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3, which="major")


def _sized_ticks(ax, sizes: Sequence[int]) -> None:
    """Ticks at exactly the sizes run, labelled as plain integers that never collide."""
    fixed_ticks(ax, [int(k) for k in sizes])


def size_axis(ax, sizes: Sequence[int], ylabel: str) -> None:
    """The one look of an axis of micro-benchmark size k: log scale, ticks at the sizes run."""
    _per_size_axis(ax, ylabel)
    _sized_ticks(ax, sizes)


def plain_log_ticks(ax, low: float, high: float) -> None:
    """A log x axis with 1-2-5 ticks between ``low`` and ``high``, as plain numbers (0.5, 2, 10)."""
    decades = np.arange(np.floor(np.log10(low)) - 1, np.ceil(np.log10(high)) + 1)
    ticks = (10.0 ** decades[:, None] * np.array([1.0, 2.0, 5.0])).ravel()
    fixed_ticks(ax, ticks[(ticks >= low / 1.5) & (ticks <= high * 1.5)])


# ------------------------------------------------------------------ text that fits
def _renderer(fig):
    """A renderer to measure text with (an Agg canvas is attached if the figure has none); the
    figure's texts are made plain first, since measuring a text parses it."""
    plain_text(fig)
    if not hasattr(fig.canvas, "get_renderer"):
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(fig)
    return fig.canvas.get_renderer()


def _length(text_artist, renderer) -> float:
    """Extent of a text along its writing direction (pixels): a y label runs upwards."""
    box = text_artist.get_window_extent(renderer)
    return box.height if round(text_artist.get_rotation()) % 180 == 90 else box.width


def _wrap(text_artist, width_px: float, renderer) -> None:
    """Re-wrap a text artist onto as many lines as it needs to be at most ``width_px`` long."""
    text = " ".join(text_artist.get_text().split())
    if not text:
        return
    text_artist.set_text(text)
    actual = _length(text_artist, renderer)
    if actual > width_px > 0:
        chars = max(8, int(len(text) * width_px / actual))
        text_artist.set_text(textwrap.fill(text, chars, break_on_hyphens=False))


def plain_text(fig) -> None:
    """Draw every text of ``fig`` (a figure, or any artist such as a legend) as written: no ``$...$`` mathtext.

    Names come from the data (a subtask called ``cost_$5`` or a model ``a$b``); parsed as
    mathtext, a lone ``$`` fails the drawing. The book's own labels use no mathtext.
    """
    from matplotlib.text import Text

    for text in fig.findobj(Text):
        text.set_parse_math(False)


def fit_text(fig) -> None:
    """Wrap titles and axis labels wider than their axes, and suptitles wider than the figure,
    so that neighbouring panels' texts never run into each other (a y label repeating the one of
    the panel on its left is dropped first)."""
    plain_text(fig)
    tidy_labels(fig)
    renderer = _renderer(fig)
    fig.draw_without_rendering()  # the layout first: axes have their final size
    for ax in fig.axes:
        if not ax.get_visible() or ax.get_label() == "<colorbar>":
            continue
        box = ax.get_window_extent(renderer)
        for title in (ax.title, ax._left_title, ax._right_title):
            _wrap(title, box.width * 1.1, renderer)
        _wrap(ax.xaxis.label, box.width * 1.05, renderer)
        _wrap(ax.yaxis.label, box.height * 1.05, renderer)
    if fig._suptitle is not None:
        _wrap(fig._suptitle, fig.bbox.width * 0.95, renderer)


def scale_text(fig, factor: float) -> None:
    """Scale every text of ``fig`` by ``factor`` (tick labels through the axes' tick parameters,
    so locators plan for the new size), then lay out the legend and wrap long texts again."""
    from matplotlib.text import Text

    ticks = [(axis, which, getattr(axis, f"{which}Ticks")[0].label1.get_fontsize())
             for ax in fig.axes for axis in (ax.xaxis, ax.yaxis) for which in ("major", "minor")]
    for text in fig.findobj(Text):
        text.set_fontsize(text.get_fontsize() * factor)
    for axis, which, size in ticks:
        axis.set_tick_params(which=which, labelsize=size * factor)
    spec = getattr(fig, "mbutils_legend", None)
    if spec:
        spec["fontsize"] *= factor
        _place_legend(fig)
    fit_text(fig)


# ------------------------------------------------------------------ panels by benchmark
def name_panels(fig, names: Sequence[str], axes: Sequence) -> None:
    """Record which axes show which benchmark (or data set), for :func:`panels`."""
    record = getattr(fig, "mbutils_panels", {})
    for name, ax in zip(names, axes):
        record.setdefault(str(name), []).extend(ax if isinstance(ax, (list, tuple)) else [ax])
    fig.mbutils_panels = record


def panels(fig, names: Sequence[str]) -> list:
    """The axes of a figure of several benchmarks that show the benchmarks ``names`` (the
    keys the figure was drawn from): what to pass as ``stand_in=`` when only some of them
    are synthetic stand-ins. A panel mixing several benchmarks counts for each of them."""
    record = getattr(fig, "mbutils_panels", {})
    unknown = [n for n in names if str(n) not in record]
    if unknown:
        raise ValueError(f"the figure has no panels of {', '.join(map(str, unknown))}; "
                         f"it shows {', '.join(record) or 'no named benchmarks'}")
    chosen = [ax for n in names for ax in record[str(n)]]
    return list({id(ax): ax for ax in chosen}.values())


# ------------------------------------------------------------------ the stand-in mark
_CORNERS = {"upper left": (0, 1), "upper right": (1, 1), "lower left": (0, 0), "lower right": (1, 0)}
_INSET = 0.02  # axes fraction between the stamp and the axes' edge


def _drawn_points(ax) -> np.ndarray:
    """Axes-fraction points where ``ax`` draws data: line vertices (and points between them),
    scatter offsets and polygon vertices."""
    to_axes = ax.transAxes.inverted()
    parts = [np.empty((0, 2))]
    for line in ax.get_lines():
        xy = (line.get_transform() - ax.transAxes).transform(line.get_xydata())
        xy = xy[np.isfinite(xy).all(axis=1)]
        if len(xy) > 1:
            t = np.linspace(0, 1, 8)[None, :, None]
            xy = (xy[:-1, None] * (1 - t) + xy[1:, None] * t).reshape(-1, 2)
        parts.append(xy)
    for coll in ax.collections:
        offsets = np.asarray(coll.get_offsets(), float).reshape(-1, 2)
        if len(offsets) > 1 or not coll.get_paths():
            parts.append((coll.get_offset_transform() - ax.transAxes).transform(offsets))
        for path in coll.get_paths():
            parts.append((coll.get_transform() - ax.transAxes).transform(path.vertices))
    for patch in ax.patches:
        box = patch.get_window_extent()
        corners = to_axes.transform([[box.x0, box.y0], [box.x1, box.y1]])
        gx, gy = np.meshgrid(np.linspace(*corners[:, 0], 6), np.linspace(*corners[:, 1], 6))
        parts.append(np.column_stack([gx.ravel(), gy.ravel()]))
    points = np.concatenate(parts)
    return points[np.isfinite(points).all(axis=1)]


def _obstacles(ax, renderer, exclude) -> list:
    """Display boxes of the texts and legends drawn inside ``ax`` (the stamp must not cover them)."""
    from matplotlib.text import Text

    inside = [t for t in ax.findobj(Text) if t is not exclude and t.get_visible() and t.get_text().strip()
              and t.axes is ax and t not in (ax.title, ax._left_title, ax._right_title, ax.xaxis.label,
                                             ax.yaxis.label) and not _is_tick_label(t, ax)]
    boxes = [t.get_window_extent(renderer) for t in inside]
    if ax.get_legend() is not None:
        boxes.append(ax.get_legend().get_window_extent(renderer))
    return boxes


def _is_tick_label(text, ax) -> bool:
    return any(text in (tick.label1, tick.label2) for axis in (ax.xaxis, ax.yaxis)
               for tick in axis.get_major_ticks() + axis.get_minor_ticks())


def _count_inside(points: np.ndarray, x0: float, y0: float, x1: float, y1: float) -> int:
    return int(((points[:, 0] >= x0) & (points[:, 0] <= x1) & (points[:, 1] >= y0) & (points[:, 1] <= y1)).sum())


def _stamp_axes(ax, renderer, fontsize: float) -> None:
    """Put the stand-in stamp in the corner of ``ax`` where it covers the least."""
    stamp = ax.text(0, 0, STAND_IN_TEXT, transform=ax.transAxes, fontsize=fontsize, color=STAND_IN_COLOR,
                    gid=_STAND_IN_GID, zorder=10, clip_on=False,
                    bbox=dict(boxstyle="round,pad=0.25", facecolor="white", edgecolor="#d8b0b0",
                              linewidth=0.6, alpha=0.85))
    points = _drawn_points(ax)
    obstacles = _obstacles(ax, renderer, stamp)
    best, best_cost = None, np.inf
    for name, (cx, cy) in _CORNERS.items():
        stamp.set_position((abs(cx - _INSET), abs(cy - _INSET)))
        stamp.set_horizontalalignment("right" if cx else "left")
        stamp.set_verticalalignment("top" if cy else "bottom")
        box = stamp.get_window_extent(renderer)
        (x0, y0), (x1, y1) = ax.transAxes.inverted().transform([[box.x0, box.y0], [box.x1, box.y1]])
        near = box.expanded(2.0, 2.0)  # ties go to the corner whose surroundings are emptier
        (u0, v0), (u1, v1) = ax.transAxes.inverted().transform([[near.x0, near.y0], [near.x1, near.y1]])
        cost = (_count_inside(points, x0, y0, x1, y1) + 0.25 * _count_inside(points, u0, v0, u1, v1)
                + 1000 * sum(box.overlaps(o) for o in obstacles))
        if cost < best_cost:
            best, best_cost = name, cost
    cx, cy = _CORNERS[best]
    stamp.set_position((abs(cx - _INSET), abs(cy - _INSET)))
    stamp.set_horizontalalignment("right" if cx else "left")
    stamp.set_verticalalignment("top" if cy else "bottom")


def _has_data(ax) -> bool:
    return ax.get_visible() and ax.get_label() != "<colorbar>" and bool(
        ax.get_lines() or ax.collections or ax.patches or ax.images)


def mark_stand_in(fig, axes=True) -> list:
    """Stamp "stand-in data" inside the panels drawn from synthetic stand-ins.

    ``axes`` is True (every panel with data) or a sequence of this figure's Axes. The stamp
    sits in the panel's emptiest corner, in axes coordinates, so it never covers the title
    or an axis label; a panel is stamped once. Returns the stamped axes.
    """
    from matplotlib.axes import Axes

    if axes is True:
        chosen = [ax for ax in fig.axes if _has_data(ax)]
    else:
        chosen = list(axes)
        strangers = [ax for ax in chosen if not isinstance(ax, Axes) or ax.figure is not fig]
        if strangers:
            raise ValueError("stand_in names axes that are not panels of this figure")
    fontsize = MIN_TEXT_PT  # the smallest text a figure has: the stamp never crowds the panel's own
    renderer = _renderer(fig)
    fig.draw_without_rendering()
    placed, seen = [], set()
    for ax in chosen:
        where = tuple(np.round(ax.get_position().bounds, 4))
        if where in seen or any(t.get_gid() == _STAND_IN_GID for t in ax.texts):
            continue
        seen.add(where)
        _stamp_axes(ax, renderer, fontsize)
        placed.append(ax)
    return placed

"""The page a figure is drawn for: the columns it is shown in, its smallest text, and panel grids
that wrap into rows instead of shrinking.

A figure is drawn at the size it is shown: never wider than the narrower of the two columns that
show it (the HTML theme's content column and the PDF's text column), and rendered at 96 dpi, one
PNG pixel per CSS pixel, so that a font of 9 pt in the figure is 9 pt on the screen and at least
that on paper (the PDF stretches every figure to the text width). A figure of several panels that
would be wider puts its panels in rows of as many as fit (:func:`panel_grid`), keeping each panel
at a size its text can be read at.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

#: CSS pixels per inch (CSS's definition; 1 pt is 1/72 inch on screen and on paper alike).
CSS_PX_PER_INCH = 96.0
#: The smallest text of a figure as it is displayed, in points.
MIN_TEXT_PT = 9.0

#: Width (CSS px) of the HTML theme's content column in a 1,400 px wide window, inside its padding,
#: from the CSS of sphinx-book-theme 1.3 on pydata-sphinx-theme 0.17 (the versions requirements.txt
#: pins): the page is at most 88rem wide (pydata ``.bd-page-width``); the primary sidebar takes 20% of
#: it (book theme ``$sidebar-primary-width-widescreen``), the secondary sidebar 17rem
#: (``--pst-sidebar-secondary``; the article container is ``max-width: calc(100% - 17rem)`` from
#: 1,200 px on), and the article has 2rem of padding on each side (book theme ``.bd-article``):
#: 0.8 x 1400 - 272 - 64 = 784 px at 16 px per rem. Chromium measures the same on the built book
#: (tests/publish/test_book_browser.py); a 1,280 px window gives 688 px.
HTML_COLUMN_PX = 0.8 * 1400 - 17 * 16 - 2 * 2 * 16
#: The PDF (``python -m mbutils book-pdf``): A4, 15 mm margins, laid out at 96 CSS px per inch.
PDF_PAGE_MM = (210.0, 297.0)
PDF_MARGIN_MM = 15.0
PDF_COLUMN_PX = (PDF_PAGE_MM[0] - 2 * PDF_MARGIN_MM) / 25.4 * CSS_PX_PER_INCH  # 680.3 px = 7.09 in
#: Padding (inches) the PNG of a figure keeps around the figure's content (``pad_inches``).
PNG_PAD_IN = 0.05
#: The widest a figure is drawn (inches): the narrower column, less the PNG's padding on both sides.
PAGE_WIDTH_IN = math.floor((min(HTML_COLUMN_PX, PDF_COLUMN_PX) / CSS_PX_PER_INCH - 2 * PNG_PAD_IN) * 100) / 100
#: Figures are rendered at this many dots per inch: one PNG pixel per CSS pixel.
FIGURE_DPI = CSS_PX_PER_INCH
#: The narrowest panel (inches) whose ticks, labels and title stay legible at 9-10 pt by default.
MIN_PANEL_IN = 3.3


def displayed_scale(width_px: float) -> dict[str, float]:
    """Displayed size / drawn size of a PNG ``width_px`` CSS px wide (drawn at :data:`FIGURE_DPI`):
    in the HTML column (:data:`HTML_COLUMN_PX`; never enlarged, shrunk to fit) and in the PDF
    (:data:`PDF_COLUMN_PX`; stretched to the text width)."""
    return {"html": min(1.0, HTML_COLUMN_PX / width_px), "pdf": PDF_COLUMN_PX / width_px}


def columns_that_fit(n: int, width: float, min_width: float | None = None) -> int:
    """How many panels of natural width ``width`` (at least ``min_width``) fit side by side on the page."""
    narrowest = min(width, MIN_PANEL_IN if min_width is None else min_width)
    return max(1, min(n, int((PAGE_WIDTH_IN + 1e-9) // narrowest)))


def panel_grid(groups: Sequence[int], width: float, height: float, *, min_width: float | None = None,
               max_cols: int | None = None, sharex: bool = False, sharey: bool = False):
    """A pyplot-free Figure whose panels wrap into rows that fit the page.

    ``groups`` gives the number of panels of each group (a benchmark's row of a grid, say); a group
    starts a new row and continues on the next when it is wider than the page. Panels are at most
    ``width`` and at least ``min_width`` (:data:`MIN_PANEL_IN`) inches wide, ``height`` tall, at most
    ``max_cols`` to a row; a group that needs several rows fills them evenly (4 panels in rows of 3
    are 2 + 2, not 3 + 1). Returns
    the figure and one list of axes per group. ``sharex``/``sharey`` share an axis among all panels; an
    inner panel's shared tick labels are hidden where the panel beside (or below) it shows them.
    """
    from matplotlib.figure import Figure

    groups = [int(n) for n in groups]
    fit = min(columns_that_fit(max(groups), width, min_width), max_cols or max(groups))
    per_row = [-(-n // -(-n // fit)) for n in groups]  # even rows: n panels in ceil(n / fit) rows
    ncols = max(per_row)
    panel_w = min(width, PAGE_WIDTH_IN / ncols)
    places, row = [], 0
    for n, k in zip(groups, per_row):
        places.append([(row + i // k, i % k) for i in range(n)])
        row += -(-n // k)
    fig = Figure(figsize=(panel_w * ncols, height * row), layout="constrained")
    spec = fig.add_gridspec(row, ncols)
    first, cells = None, {}
    out = []
    for group in places:
        axes = []
        for r, c in group:
            ax = fig.add_subplot(spec[r, c], sharex=first if sharex else None, sharey=first if sharey else None)
            first = first or ax
            cells[(r, c)] = ax
            axes.append(ax)
        out.append(axes)
    for (r, c), ax in cells.items():
        if sharey and (r, c - 1) in cells:
            ax.yaxis.set_tick_params(labelleft=False)
        if sharex and (r + 1, c) in cells:
            ax.xaxis.set_tick_params(labelbottom=False)
    fig.mbutils_grid = cells
    return fig, out


def grid_figure(nrows: int = 1, ncols: int = 1, width: float = 4.2, height: float = 3.3, *,
                rows_are_groups: bool = False, min_width: float | None = None, max_cols: int | None = None, **kw):
    """:func:`panel_grid` for a logical ``nrows`` x ``ncols`` grid; returns (figure, 2-D array of axes)
    indexed as the logical grid. The panels run on in reading order, or each logical row starts its
    own rows with ``rows_are_groups``. ``gridspec_kw`` (unequal panels) keeps the logical grid, scaled to
    the page width."""
    if "gridspec_kw" in kw:
        from matplotlib.figure import Figure

        total = min(width * ncols, PAGE_WIDTH_IN)
        fig = Figure(figsize=(total, height * nrows), layout="constrained")
        return fig, fig.subplots(nrows, ncols, squeeze=False, **kw)
    unknown = set(kw) - {"sharex", "sharey"}
    if unknown:
        raise TypeError(f"unexpected keywords {', '.join(sorted(unknown))}")
    groups = [ncols] * nrows if rows_are_groups else [nrows * ncols]
    fig, axes = panel_grid(groups, width, height, min_width=min_width, max_cols=max_cols, sharex=bool(kw.get("sharex")),
                           sharey=bool(kw.get("sharey")))
    flat = [ax for group in axes for ax in group]
    return fig, np.array(flat, dtype=object).reshape(nrows, ncols)


def tidy_labels(fig) -> None:
    """In a :func:`panel_grid` figure, drop a y label that repeats the one of the panel on its left."""
    cells = getattr(fig, "mbutils_grid", None)
    if not cells:
        return
    for (r, c), ax in cells.items():
        left = cells.get((r, c - 1))
        text = ax.get_ylabel()
        if left is not None and text and left.get_visible() and " ".join(left.get_ylabel().split()) == " ".join(text.split()):
            ax.set_ylabel("")

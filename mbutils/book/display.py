"""How chapters show things: notes, figures with numbered captions, tables, downloads and glue."""

from __future__ import annotations

import base64
import html
import re
import warnings
from io import BytesIO

import numpy as np
import pandas as pd
from IPython.display import HTML, display

from mbutils.book.plots import STAND_IN_TEXT, mark_stand_in, scale_text
from mbutils.book.plots.base import plain_text
from mbutils.book.profiles import PROFILE_BLURB, PROFILE_ENV, profile_name
from mbutils.book.findings.reports import fmt_points  # noqa: F401  (chapters call book.fmt_points)
from mbutils.base.names import (CI_FLOOR_MARK, CI_FLOOR_NOTE, ci_bound_text, ci_floored, column_label, label, target_set_label, yes_no)
from mbutils.base.tables import MDAD_VALUE_COLUMNS, NOT_REACHED, OPEN_BOUND, render
from mbutils.book.escaping import MATH_IGNORE, literal
from mbutils.book.numbering import next_number
from mbutils.book.plots.layout import (CSS_PX_PER_INCH, FIGURE_DPI, HTML_COLUMN_PX, MIN_TEXT_PT, PAGE_WIDTH_IN,
                                       PNG_PAD_IN)
from mbutils.data.datasets import BENCHMARKS


def admonition(title: str, body_html: str, kind: str = "note") -> str:
    """HTML with the theme's admonition classes (renders in the book and in nbconvert HTML); ``title`` is
    text (:func:`~mbutils.book.escaping.literal`), ``body_html`` HTML."""
    return (f'<div class="admonition {kind}"><p class="admonition-title">{literal(title)}</p>'
            f"<p>{body_html}</p></div>")


def note(title: str, body: str, kind: str = "note", *, markup: bool = False) -> None:
    """Display an admonition box; ``body`` is plain text, escaped, unless ``markup`` says it is HTML.

    Notes are built from data (model, subtask and bundle names) and from parameters, so they
    are text by default (:func:`~mbutils.book.escaping.literal`): a name like ``<img onerror=...>``
    or ``$x$`` shows as written and never runs or becomes a formula. A caller passing
    ``markup=True`` puts every piece of data in its HTML through ``literal`` itself.
    """
    display(HTML(admonition(title, body if markup else literal(body), kind)))


#: Width (CSS px) of the column a figure is shown in: the book theme's content column in a 1,400 px
#: window (derived in :mod:`mbutils.book.plots.layout`).
COLUMN_PX = HTML_COLUMN_PX
#: The smallest text a reader should have to read on a figure, in CSS px as displayed: 9 pt.
MIN_TEXT_PX = MIN_TEXT_PT * CSS_PX_PER_INCH / 72

def figure_png(fig, dpi: float = FIGURE_DPI) -> bytes:
    """PNG bytes of a Figure (backend independent)."""
    buf = BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight", pad_inches=PNG_PAD_IN)
    return buf.getvalue()


def _readable(fig, narrowed: bool = False) -> None:
    """Scale every text of ``fig`` up so that none is smaller than MIN_TEXT_PT (the figure is shown
    at its own size, so that is its size on the page); lay a ``narrowed`` figure out again.

    Figures of :mod:`mbutils.book.plots` lay themselves out again at every draw (constrained
    layout) and re-flow their legend; other figures get a tight layout after scaling.
    """
    from matplotlib.layout_engine import ConstrainedLayoutEngine
    from matplotlib.text import Text

    stamps = [t for t in fig.findobj(Text) if t.get_text() == STAND_IN_TEXT]
    texts = [t for t in fig.findobj(Text) if t.get_text().strip() and t.get_text() != STAND_IN_TEXT]
    smallest = min((t.get_fontsize() for t in texts), default=np.inf)
    factor = MIN_TEXT_PT / smallest if smallest < MIN_TEXT_PT else 1.0
    for stamp in stamps:  # the stamp is kept small, but readable, and never drives the scaling
        stamp.set_fontsize(max(stamp.get_fontsize(), MIN_TEXT_PT / factor))
    if factor != 1.0:
        scale_text(fig, factor)
    if (factor != 1.0 or narrowed) and not isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine):
        with warnings.catch_warnings():  # a crowded grid keeps its layout; the tight bbox still fits it all
            warnings.filterwarnings("ignore", message="Tight layout not applied", category=UserWarning)
            fig.tight_layout()


def _stand_in_axes(fig, stand_in):
    """The panels to stamp: None for none, True for all, else the given axes of ``fig``."""
    from matplotlib.axes import Axes

    if isinstance(stand_in, (bool, np.bool_)):
        return True if stand_in else None
    if isinstance(stand_in, Axes):
        return [stand_in]
    if isinstance(stand_in, str) or not hasattr(stand_in, "__iter__"):
        raise TypeError("stand_in is True, False or a sequence of the figure's Axes, "
                        f"got {type(stand_in).__name__}")
    axes = list(np.asarray(stand_in, dtype=object).ravel())
    if not all(isinstance(ax, Axes) for ax in axes):
        raise TypeError("stand_in is True, False or a sequence of the figure's Axes")
    return axes or None


def prepare_figure(fig, stand_in=False) -> float:
    """Ready ``fig`` for the page: at most the page's width, its stand-in panels stamped, no text
    below 9 pt; returns the dpi to render it at (one PNG pixel per CSS pixel: shown at its own size).

    ``stand_in`` is an explicit flag (never guessed from a caption): False, True (the
    whole figure is drawn from stand-ins) or the Axes of the panels that are.
    """
    plain_text(fig)  # names from the data are text, never mathtext
    narrowed = fig.get_figwidth() > PAGE_WIDTH_IN + 1e-6
    if narrowed:  # drawn elsewhere, wider than the page: narrowed to it (its text keeps its size)
        fig.set_size_inches(PAGE_WIDTH_IN, fig.get_figheight())
    panels = _stand_in_axes(fig, stand_in)
    if panels is not None:
        mark_stand_in(fig, panels)
    _readable(fig, narrowed)
    return FIGURE_DPI


def render_figure(fig, caption: str, *, alt: str | None = None, stand_in=False, label: str | None = None) -> str:
    """The HTML of a numbered figure: an embedded PNG sized for the column, its alt text and caption.

    The figure is at most the page's width (:data:`mbutils.book.plots.layout.PAGE_WIDTH_IN`) and its
    PNG is shown at its own size, so no text is displayed below 9 pt (:data:`MIN_TEXT_PX`) in the
    HTML column, nor in the PDF, which stretches it to the text width. Panels drawn from
    synthetic stand-ins carry a small "stand-in data" stamp when ``stand_in`` says so
    (True: all panels; or a sequence of Axes); the caption is left as written. The figure
    is numbered per chapter; with a ``label`` the prose can cite it (see :mod:`.numbering`).
    """
    from matplotlib.text import Text

    dpi = prepare_figure(fig, stand_in)
    number, anchor = next_number("figure", label)
    png = figure_png(fig, dpi)
    width = int.from_bytes(png[16:20], "big")  # the PNG header's width field
    alt = alt or caption.split(". ")[0].rstrip(".")
    data = base64.b64encode(png).decode()
    # the smallest text drawn (pt at the PNG's own size), for whoever measures the displayed page
    smallest = min((t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()),
                   default=MIN_TEXT_PT)
    return (f'<figure class="mbutils-figure" id="{anchor}">'
            f'<img src="data:image/png;base64,{data}" alt="{html.escape(alt, quote=True)}" '
            f'width="{width}" data-text-pt="{smallest:.2f}" style="max-width:100%;height:auto">'
            f'<figcaption class="mbutils-caption"><b>Figure {number}.</b> {literal(caption)}</figcaption>'
            "</figure>")


def show(fig, caption: str, *, alt: str | None = None, stand_in=False, label: str | None = None) -> None:
    """Display a numbered figure with its caption (in the book and in papermill runs alike).

    ``stand_in``: False (real data), True (every panel drawn from a synthetic stand-in) or
    the Axes of the panels that are; those panels get a "stand-in data" stamp. ``label``
    glues ``fig-<label>``, the reference the text cites (``{glue:md}`fig-<label>```).
    """
    display(HTML(render_figure(fig, caption, alt=alt, stand_in=stand_in, label=label)))


#: Columns that hold MDAD values (points; NaN = not reached), by their name in the tables
#: of :mod:`mbutils.evaluate.metrics` and :mod:`mbutils.book.findings.reports` and by their display header. Other
#: columns are MDADs only when a caller says so (``mdad_columns=``) or the table does
#: (``table.attrs["mdad_columns"]``).
MDAD_COLUMNS = (*MDAD_VALUE_COLUMNS, "run_ci_low", "run_ci_high", "paper_mdad", "paper_ci_low", "paper_ci_high")
_KNOWN_MDAD = frozenset(MDAD_COLUMNS) | {column_label(c) for c in MDAD_COLUMNS}
_LOWS, _HIGHS = ("ci_low", "run_ci_low", "paper_ci_low"), ("ci_high", "run_ci_high", "paper_ci_high")
#: Lower CI bounds of an MDAD: the paper's symmetric interval can reach below 0 points.
CI_LOW_COLUMNS = frozenset(_LOWS) | {column_label(c) for c in _LOWS}
#: Upper CI bounds of an MDAD: NaN when the interval does not close (too few pairs, or a bound never reached).
CI_HIGH_COLUMNS = frozenset(_HIGHS) | {column_label(c) for c in _HIGHS}


def mdad_cell(value, digits: int = 2, *, lower_bound: bool = False, upper_bound: bool = False) -> str:
    """An MDAD value as tables show it: 'not reached' for NaN ('open' for an upper CI bound), a lower
    CI bound below 0 floored at 0 with :data:`CI_FLOOR_MARK` (explained by :data:`CI_FLOOR_NOTE`)."""
    if not np.isfinite(value):
        return OPEN_BOUND if upper_bound else NOT_REACHED
    return ci_bound_text(value, digits, lower=lower_bound)


def _is_boolean(column) -> bool:
    if column.dtype == bool:
        return True
    values = column.dropna()
    return column.dtype == object and len(values) > 0 and all(isinstance(v, (bool, np.bool_)) for v in values)


def pretty(table, digits: int = 2, *, mdad_columns=()):
    """A copy for display: display names of selectors, target sets and column headers
    (:func:`mbutils.base.names.column_label`), booleans as yes/no, numbers rounded.

    MDAD columns (the known ones, :data:`MDAD_COLUMNS`, plus ``mdad_columns`` and the
    table's ``attrs["mdad_columns"]``) read 'not reached' for NaN ('open' for an upper CI bound); their negative lower CI
    bounds show as '0*', and the returned table's ``attrs["footnotes"]`` then holds
    :data:`CI_FLOOR_NOTE` (:func:`table` prints it under the table).
    """
    out = table.copy()
    mdad = _KNOWN_MDAD | set(mdad_columns) | set(table.attrs.get("mdad_columns", ()))
    floored = False
    for col in out.columns:
        if col == "selector":
            out[col] = out[col].map(label)
        elif col in ("target set", "target_set"):
            out[col] = out[col].map(target_set_label)
        elif _is_boolean(out[col]):
            out[col] = out[col].map(lambda v: v if v is None or v != v else yes_no(v))
        elif out[col].dtype.kind == "f" and col in mdad:
            low = col in CI_LOW_COLUMNS
            out[col] = [mdad_cell(v, digits, lower_bound=low, upper_bound=col in CI_HIGH_COLUMNS) for v in out[col]]
            floored |= low and any(map(ci_floored, out[col]))
        elif out[col].dtype.kind == "f":
            out[col] = out[col].round(digits)
    if not isinstance(out.columns, pd.MultiIndex):
        headers = [column_label(c) for c in out.columns]
        if len(set(headers)) == len(headers):  # never merge two columns under one header
            out.columns = headers
    out.attrs = {"footnotes": [CI_FLOOR_NOTE]} if floored else {}
    return out


def table(df, digits: int = 2, caption: str | None = None, *, mdad_columns=(), label: str | None = None) -> None:
    """Display a numbered table as HTML without the index (readable in the book and nbconvert).

    ``mdad_columns`` names further columns that hold MDADs (see :func:`pretty`); ``label``
    glues ``tab-<label>``, the reference the text cites.
    """
    shown = pretty(df, digits, mdad_columns=mdad_columns)
    # names from the data in the cells are text (escape), and never math (MATH_IGNORE)
    body = shown.to_html(index=False, border=0, classes=f"table mbutils-table {MATH_IGNORE}", na_rep="",
                         escape=True)
    footnotes = list(shown.attrs.get("footnotes", ()))
    if df.attrs.get("ci_floored") and CI_FLOOR_NOTE not in footnotes:  # cells written as 'MDAD [low, high]'
        footnotes.append(CI_FLOOR_NOTE)
    notes = " ".join(footnotes)
    number, anchor = next_number("table", label)
    text = " ".join(part for part in (f"<b>Table {number}.</b>", literal(caption or ""), literal(notes)) if part)
    display(HTML(f'<div class="mbutils-table-wrap" id="{anchor}">{body}</div><p class="mbutils-caption">{text}</p>'))


def download_link(df, filename: str, text: str | None = None) -> str:
    """HTML link that downloads ``df`` as CSV (a data URI: no file to ship or keep in sync)."""

    payload = base64.b64encode(render(df, "csv").encode()).decode()
    text = text or f"Download {filename} ({len(df)} rows, CSV)"
    return (f'<p><a download="{html.escape(filename)}" href="data:text/csv;base64,{payload}">'
            f"{literal(text)}</a></p>")


def download(df, filename: str, text: str | None = None) -> None:

    display(HTML(download_link(df, filename, text)))


def glue(key: str, value, display: bool = False) -> None:
    """Store a value for other pages (myst-nb ``glue``); a no-op outside a notebook kernel."""
    try:
        from myst_nb import glue as _glue
    except ImportError:  # pragma: no cover - myst-nb ships with the book's requirements
        return
    _glue(key, value, display=display)


def glue_claim(key: str, claim) -> str:
    """Glue a computed :class:`mbutils.book.findings.claims.Claim` as ``key`` and its inputs as ``key__claim``,
    so the sentence on the page can be checked against the numbers; returns the sentence."""
    glue(key, claim.text)
    glue(f"{key}__claim", claim.payload())
    return claim.text


def claim_note(title: str, claim, key: str | None = None) -> None:
    """Show a computed claim as a note (glued under ``key`` when given)."""
    if key:
        glue_claim(key, claim)
    note(title, sentence_start(claim.text, _strings(claim.payload())) + ".")


def _strings(value) -> set[str]:
    """Every string inside ``value`` (dicts, lists and tuples opened): the names a claim was made of."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*(_strings(v) | _strings(k) for k, v in value.items())) if value else set()
    if isinstance(value, (list, tuple, set)):
        return set().union(*(_strings(v) for v in value)) if value else set()
    return set()


def sentence_start(text: str, names=()) -> str:
    """``text`` begun as a sentence: its first letter capitalised, unless its first word is a name
    (one of ``names``, a benchmark's key, or a word that holds a digit, ``_``, ``-``, ``/`` or ``.``,
    or ends in a colon, as "bbh14x72: ..." does), whose case is never changed: the sentence is then
    opened with "Per bundle," (before a "name: ..." list) or "In this build,"."""
    match = re.match(r"(\S+)", text)
    if not match or not text[:1].islower():
        return text
    word = match.group(1)
    if word.endswith(":"):
        return "Per bundle, " + text
    bare = re.sub(r"('s|')?[,;:]*$", "", word)
    if bare in set(names) | set(BENCHMARKS) or re.search(r"[\d_/.\-]", bare):
        return "In this build, " + text
    return text[:1].upper() + text[1:]


def settings_list(settings: dict, title: str) -> str:
    """An admonition listing the data and settings of several experiments."""
    items = []
    for s in settings.values():
        flag = " <b>(synthetic stand-in: " + literal(s.data.reason) + ")</b>" if s.data.stand_in else ""
        thin = s.thin_pool()
        flag += f" <b>({literal(thin)})</b>" if thin else ""
        items.append(f"<li>{literal(s.settings_text())}{flag}</li>")
    profile = next(iter(settings.values())).profile if settings else profile_name()
    body = (f"<ul>{''.join(items)}</ul>Profile '{profile}' ({html.escape(PROFILE_BLURB[profile])}); set "
            f"<code>{PROFILE_ENV}</code> to change it.")
    return admonition(title, body, "note")


def settings_caption(settings: dict) -> str:
    """Caption tail for figures drawing on several experiments."""
    return "Data and settings: " + " | ".join(s.settings_text() for s in settings.values()) + "."


def facts_html(facts: dict, setting) -> str:
    """The summary paragraph of a benchmark chapter."""
    return (f"<p>On {literal(facts['data'])}, a random micro-benchmark of {facts['k']} items ranks "
            f"the targets with Kendall τ = {facts['tau_random']} and estimation error "
            f"{facts['error_random']}; its MDAD is {facts['mdad_random']}, and "
            f"{facts['share_below']} of all model pairs of the bundle are closer than that. "
            f"At the smallest size, {literal(facts['small_verdict'])}.</p>")

"""How chapters show things: notes, figures with numbered captions, tables, downloads and glue."""

from __future__ import annotations

import base64
import html
import warnings
from io import BytesIO

import numpy as np
from IPython.display import HTML, display

from ..profiles import PROFILE_BLURB, PROFILE_ENV, profile_name
from ..reports import fmt_points  # noqa: F401  (chapters call book.fmt_points)
from ..styles import label
from ..tables import MDAD_VALUE_COLUMNS, NOT_REACHED, render


def admonition(title: str, body_html: str, kind: str = "note") -> str:
    """HTML with the theme's admonition classes (renders in the book and in nbconvert HTML)."""
    return (f'<div class="admonition {kind}"><p class="admonition-title">{html.escape(title)}</p>'
            f"<p>{body_html}</p></div>")


def note(title: str, body_html: str, kind: str = "note") -> None:
    """Display an admonition box."""

    display(HTML(admonition(title, body_html, kind)))


#: Width (CSS px) a figure is rendered at: the book theme's content column in a 1,400 px
#: window, so a browser shows it at (nearly) its natural size instead of shrinking it.
COLUMN_PX = 720
#: The smallest text a reader should have to read on a figure, in CSS px as displayed.
MIN_TEXT_PX = 9.0
_DPI_RANGE = (24.0, 140.0)  # a wide figure is drawn smaller and its text scaled up, not shrunk on screen
_figures_shown = 0  # figure numbers run through one page (one kernel)


def figure_png(fig, dpi: float = 110) -> bytes:
    """PNG bytes of a Figure (backend independent)."""
    buf = BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    return buf.getvalue()


def _readable(fig, dpi: float) -> None:
    """Scale every text of ``fig`` up so that none is displayed smaller than MIN_TEXT_PX."""
    from matplotlib.text import Text

    texts = [t for t in fig.findobj(Text) if t.get_text().strip()]
    if not texts:
        return
    smallest_px = min(t.get_fontsize() for t in texts) * dpi / 72
    if smallest_px < MIN_TEXT_PX:
        factor = MIN_TEXT_PX / smallest_px
        for t in texts:
            t.set_fontsize(t.get_fontsize() * factor)
        left, bottom, right, top = getattr(fig, "mbutils_layout_rect", (0, 0, 1, 1))
        with warnings.catch_warnings():  # a crowded grid keeps its layout; the tight bbox still fits it all
            warnings.filterwarnings("ignore", message="Tight layout not applied", category=UserWarning)
            fig.tight_layout(rect=(left, min(bottom * factor, 0.4), right, top))  # room for the larger legend


def render_figure(fig, caption: str, *, alt: str | None = None) -> str:
    """The HTML of a numbered figure: an embedded PNG sized for the column, its alt text and caption.

    The PNG's natural width is about :data:`COLUMN_PX`, so it is not shrunk on screen; text
    is scaled so that none is displayed below :data:`MIN_TEXT_PX`; a figure whose caption
    names a synthetic stand-in says so in its title.
    """
    global _figures_shown
    _figures_shown += 1
    number = _figures_shown
    if "synthetic" in caption.lower() and fig._suptitle is None:
        fig.suptitle("Synthetic (simulated) data", fontsize=10, color="#a33")
    dpi = min(max(COLUMN_PX / fig.get_figwidth(), _DPI_RANGE[0]), _DPI_RANGE[1])
    _readable(fig, dpi)
    png = figure_png(fig, dpi)
    width = int.from_bytes(png[16:20], "big")  # the PNG header's width field
    alt = alt or caption.split(". ")[0].rstrip(".")
    data = base64.b64encode(png).decode()
    return (f'<figure class="mbutils-figure" id="figure-{number}">'
            f'<img src="data:image/png;base64,{data}" alt="{html.escape(alt, quote=True)}" '
            f'width="{width}" style="max-width:100%;height:auto">'
            f'<figcaption class="mbutils-caption"><b>Figure {number}.</b> {html.escape(caption)}</figcaption>'
            "</figure>")


def show(fig, caption: str, *, alt: str | None = None) -> None:
    """Display a numbered figure with its caption (in the book and in papermill runs alike)."""
    display(HTML(render_figure(fig, caption, alt=alt)))


def pretty(table, digits: int = 2):
    """A copy for display: selector display names, MDAD NaN spelled 'not reached', rounded."""


    out = table.copy()
    if "selector" in out:
        out["selector"] = out["selector"].map(label)
    for col in out.columns:
        if out[col].dtype.kind == "f":
            values = out[col].round(digits)
            if col in MDAD_VALUE_COLUMNS or str(col).lower().startswith(("mdad", "run_ci")) or col in (
                    "method", "random"):
                out[col] = [NOT_REACHED if not np.isfinite(v) else f"{v:g}" for v in values]
            else:
                out[col] = values
    return out


def table(df, digits: int = 2, caption: str | None = None) -> None:
    """Display a table as HTML without the index (readable in the book and nbconvert)."""

    body = pretty(df, digits).to_html(index=False, border=0, classes="table mbutils-table",
                                      na_rep="", escape=True)
    cap = f'<p class="mbutils-caption"><b>Table.</b> {html.escape(caption)}</p>' if caption else ""
    display(HTML(f'<div class="mbutils-table-wrap">{body}</div>{cap}'))


def download_link(df, filename: str, text: str | None = None) -> str:
    """HTML link that downloads ``df`` as CSV (a data URI: no file to ship or keep in sync)."""

    payload = base64.b64encode(render(df, "csv").encode()).decode()
    text = text or f"Download {filename} ({len(df)} rows, CSV)"
    return (f'<p><a download="{html.escape(filename)}" href="data:text/csv;base64,{payload}">'
            f"{html.escape(text)}</a></p>")


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
    """Glue a computed :class:`mbutils.claims.Claim` as ``key`` and its inputs as ``key__claim``,
    so the sentence on the page can be checked against the numbers; returns the sentence."""
    glue(key, claim.text)
    glue(f"{key}__claim", claim.payload())
    return claim.text


def claim_note(title: str, claim, key: str | None = None) -> None:
    """Show a computed claim as a note (glued under ``key`` when given)."""
    if key:
        glue_claim(key, claim)
    note(title, html.escape(claim.text[:1].upper() + claim.text[1:]) + ".")


def settings_list(settings: dict, title: str) -> str:
    """An admonition listing the data and settings of several experiments."""
    items = []
    for s in settings.values():
        flag = " <b>(synthetic stand-in: " + html.escape(s.data.reason) + ")</b>" if s.data.kind == "synthetic" else ""
        thin = s.thin_pool()
        flag += f" <b>(thin pool: {html.escape(thin)})</b>" if thin else ""
        items.append(f"<li>{html.escape(s.settings_text())}{flag}</li>")
    profile = next(iter(settings.values())).profile if settings else profile_name()
    body = (f"<ul>{''.join(items)}</ul>Profile '{profile}' ({html.escape(PROFILE_BLURB[profile])}); set "
            f"<code>{PROFILE_ENV}</code> to change it.")
    return admonition(title, body, "note")


def settings_caption(settings: dict) -> str:
    """Caption tail for figures drawing on several experiments."""
    return "Data and settings: " + " | ".join(s.settings_text() for s in settings.values()) + "."


def facts_html(facts: dict, setting) -> str:
    """The summary paragraph of a benchmark chapter."""
    return (f"<p>On {html.escape(facts['data'])}, a random micro-benchmark of {facts['k']} items ranks "
            f"the targets with Kendall τ = {facts['tau_random']} and estimation error "
            f"{facts['error_random']}, yet its MDAD is {facts['mdad_random']}: "
            f"{facts['share_below']} of all model pairs of the bundle are closer than that. "
            f"At the smallest size, {html.escape(facts['small_verdict'])}.</p>")

"""Figure and table numbers per chapter ("Figure 4.2"), their anchors, and the references the text cites.

A chapter names itself once, ``book.chapter("measures")``, in its first code cell; its number
is its place in the book's ``_toc.yml`` (the root page is not numbered, every other page is,
as the built table of contents shows). Each figure or table shown with a ``label`` gets an
anchor on the page and a glued reference, ``fig-<label>`` or ``tab-<label>``, that the prose
cites with ``{glue:md}`fig-<label>```: a link reading "Figure 4.2". A label shown several
times in one cell (a figure per benchmark in a loop) is one series, cited as
"Figures 4.2–4.4"; its reference is glued when the cell ends. A figure the data may not
allow is followed by :func:`not_shown`, so its citation reads "no figure (why)" instead of
breaking. Outside a kernel nothing is glued and the numbers still run.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from pathlib import Path

from mbutils.book.escaping import literal

TOC = Path(__file__).resolve().parents[2] / "_toc.yml"
#: kind -> (singular, plural, prefix of anchors and glue keys)
KINDS = {"figure": ("Figure", "Figures", "fig"), "table": ("Table", "Tables", "tab")}
_LABEL = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")


def toc_documents(toc: Path = TOC) -> list[str]:
    """The numbered documents of the book, in table-of-contents order (the root page excluded)."""
    if not toc.is_file():
        return []
    return re.findall(r"^\s*-\s*file:\s*(\S+)", toc.read_text(encoding="utf-8"), re.M)


def chapter_number(name: str, toc: Path = TOC) -> int | None:
    """The number the built book gives chapter ``name`` (None when it is not in the contents)."""
    docs = toc_documents(toc)
    for i, doc in enumerate(docs, start=1):
        if Path(doc).name == name:
            return i
    return None


@dataclass
class _Page:
    """What one page (one kernel) has numbered so far."""

    chapter: str | None = None
    number: int | None = None
    counts: dict = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    series: dict = field(default_factory=dict)  # (kind, label) -> numbers shown in the current cell
    closed: dict = field(default_factory=dict)  # (kind, label) -> numbers, glued in an earlier cell


_page = _Page()
_hooked: set[int] = set()


def chapter(name: str) -> str:
    """Start numbering the page of chapter ``name``; returns its number as text ('' if unnumbered)."""
    global _page
    _page = _Page(chapter=name, number=chapter_number(name))
    _hook()
    return "" if _page.number is None else str(_page.number)


def _number_text(n: int) -> str:
    return f"{_page.number}.{n}" if _page.number is not None else str(n)


def _anchor(kind: str, label: str | None, n: int, position: int) -> str:
    prefix = KINDS[kind][2]
    if label is None:
        return f"{prefix}-{_number_text(n).replace('.', '-')}"
    return f"{prefix}-{label}" if position == 0 else f"{prefix}-{label}-{position + 1}"


def next_number(kind: str, label: str | None = None) -> tuple[str, str]:
    """Number the next ``kind`` ('figure' or 'table') of the page: (its number as text, its anchor id)."""
    if kind not in KINDS:
        raise ValueError(f"kind is one of {', '.join(KINDS)}, got {kind!r}")
    if label is not None:
        if not isinstance(label, str) or not _LABEL.fullmatch(label):
            raise ValueError(f"a label is lower-case letters, digits and single hyphens, got {label!r}")
        if (kind, label) in _page.closed:
            raise ValueError(f"{kind} label {label!r} was used in an earlier cell; give this {kind} its own label")
    _page.counts[kind] += 1
    n = _page.counts[kind]
    shown = _page.series.setdefault((kind, label), []) if label is not None else []
    anchor = _anchor(kind, label, n, len(shown))
    if label is not None:
        shown.append(n)
    _hook()
    return _number_text(n), anchor


def reference_text(kind: str, numbers: list[int]) -> str:
    """'Figure 4.2', 'Figures 4.2–4.4' or 'Tables 4.1, 4.3 and 4.5'."""
    singular, plural, _ = KINDS[kind]
    texts = [_number_text(n) for n in numbers]
    if len(texts) == 1:
        return f"{singular} {texts[0]}"
    if numbers == list(range(numbers[0], numbers[0] + len(numbers))):
        return f"{plural} {texts[0]}–{texts[-1]}"
    return f"{plural} {', '.join(texts[:-1])} and {texts[-1]}"


def reference_html(kind: str, label: str, numbers: list[int]) -> str:
    return (f'<a href="#{KINDS[kind][2]}-{label}" class="mbutils-ref">'
            f"{html.escape(reference_text(kind, numbers))}</a>")


def ref(label: str, kind: str = "figure") -> str:
    """The link to a labelled figure (or table) already shown on this page, for computed sentences."""
    numbers = _page.series.get((kind, label)) or _page.closed.get((kind, label))
    if not numbers:  # never shown, or shown as absent
        raise ValueError(f"no {kind} labelled {label!r} has been shown on this page yet")
    return reference_html(kind, label, numbers)


class Reference:
    """A glued reference: Markdown (the link) for ``{glue:md}``, its plain text for everything else
    (``{glue:text}``, and readers of the notebook's glue records, which see a Python string)."""

    def __init__(self, markdown: str, text: str):
        self.markdown, self.text = markdown, text

    def _repr_markdown_(self) -> str:
        return self.markdown

    def __repr__(self) -> str:
        return repr(self.text)


def not_shown(label: str, reason: str, kind: str = "figure") -> None:
    """Glue the reference of a figure (or table) the page drew no instance of, as 'no figure (reason)'.

    Call it after the cell that shows the figure only when the data allow, so that prose citing
    ``fig-<label>`` reads true on any bundle.
    """
    if (kind, label) in _page.series or (kind, label) in _page.closed:
        return
    text = f"no {kind} ({reason})"  # the reason may name a bundle: Markdown that shows it as written
    _glue(f"{KINDS[kind][2]}-{label}", Reference(literal(text, markdown=True), text))
    _page.closed[kind, label] = []


def _close() -> None:
    """Glue the references of the series shown in the cell that just ended."""
    for (kind, label), numbers in _page.series.items():
        _glue(f"{KINDS[kind][2]}-{label}", Reference(reference_html(kind, label, numbers), reference_text(kind, numbers)))
        _page.closed[kind, label] = numbers
    _page.series = {}


def _glue(key: str, value) -> None:
    from myst_nb import glue

    glue(key, value, display=False)


def _shell():
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython ships with the book's requirements
        return None
    return get_ipython()


def _hook() -> None:
    """Close the series at the end of every cell (once per shell)."""
    shell = _shell()
    if shell is None or id(shell) in _hooked:
        return
    shell.events.register("post_execute", _close)
    _hooked.add(id(shell))

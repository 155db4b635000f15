"""Every number a reader quotes from a page's prose is traceable: glued from the page's computed findings, or a
cited figure of a paper.

The check reads the built book's HTML (the session's quick build, ``quick_book``). On every page, the prose is
the text of its paragraphs and list items, outside code and its outputs (notes, tables and captions a cell
computed), math, tables, figures and links (cross-references and citations). In that prose every number must
be

* inside a glued value (``{glue:text}``, a ``span.pasted-text``): computed by the page from its data; or
* in a sentence that cites a paper (a ``span.bibtex-citation``): a figure of that paper; or
* a convention of the book, listed in :data:`CONVENTIONS` with what it is (the 95% of an interval, the 0.8
  threshold, the 2-point margin ...): a definition, not a finding; or
* a label, not a quantity: part of a name ("GPQA-Diamond", "7B", "τ-b"), a year, a numbered thing ("figure
  3", "step 2"), or an example in quotation marks.

Anything else is a number written into the prose by hand, which the data of another build or another bundle
can contradict: the test fails on it and names the page and the sentence.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

#: Numbers the book's prose may state because they define its measures or settings, not findings of a build:
#: (pattern, what it is). Each pattern matches the number with enough context to say which convention it is.
CONVENTIONS: tuple[tuple[str, str], ...] = (
    (r"\b95 ?%", "the level of every interval"),
    (r"\b(?:2\.5|97\.5|5) ?%", "the tails of a 95% interval and the level of a test"),
    (r"\b0\.[5-9]\b|\b(?:50|60|70|80|90) ?%", "agreement thresholds (and the 80% of the power the book asks)"),
    (r"\b(?:0\.5|1)[- ]point\b|\b0\.5\b", "the gap bins' widths"),
    (r"\b2(?:\.0)?[- ]points?\b|\b2-point\b", "the noise rule's margin"),
    (r"\b62\b", "the fewest distinct target pairs a verdict needs (noise.MIN_PAIRS)"),
    (r"\b20 runs\b|\bfewer than 20\b", "the runs below which a run bootstrap is rough"),
    (r"\b(?:1|2),000\b", "bootstrap draws"),
    (r"×\s?100\b|\b100\s?×|\b0[–-]100\b", "accuracy points: shares times 100, from 0 to 100"),
    (r"\b1, 2 and 5 points\b", "the gaps of the data overview's columns"),
    (r"\b0\b|\b1\b|\b2\b", "zero, one and two (of a scale's ends, of the items a pair must be apart by)"),
)

#: Words after which a number is a label: the paper's figure 3, step 2, session 4.
LABEL_WORDS = r"(?:figures?|fig\.|tables?|steps?|sessions?|sections?|chapters?|equations?|appendix|part|question|exercise)"

NUMBER = re.compile(r"(?<![\w.,\-−])\d+(?:[.,]\d+)*(?![\w\-])")
CITED, GLUED = "\x00CITED\x00", "\x00GLUED\x00"
SKIP_TAGS = {"code", "pre", "kbd", "samp", "tt", "table", "figure", "figcaption", "script", "style", "svg", "math",
             "a", "h1", "h2", "h3", "h4", "h5", "h6", "button", "nav", "label", "dt"}
SKIP_CLASSES = {"math", "cell_output", "output", "highlight", "caption", "headerlink", "sd-summary-title",
                "admonition-title", "toctree-wrapper", "MathJax", "bd-toc", "prev-next-area",
                "exercise", "solution"}  # an exercise states a task (its settings), its solution computes the answer
#: Pages with no findings of a build to quote: reference pages (the API, the bibliography, the glossary, the
#: notation), the course plan (class times) and the pages on running the book (profiles, import costs measured
#: on the project's machine).
NOT_FINDINGS = {"api.html", "references.html", "glossary.html", "notation.html", "teaching.html", "reading.html",
                "own_data.html"}
VOID = {"br", "img", "hr", "input", "meta", "link", "wbr", "col", "source"}


class _Prose(HTMLParser):
    """The prose blocks of a page's article: text of <p> and <li>, glued spans and citations marked."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool, str]] = []  # (tag, skipped, kind) open elements
        self.blocks: list[str] = []
        self.current: list[str] | None = None
        self.in_article = 0

    def _skipped(self) -> bool:
        return any(skip for _, skip, _ in self.stack)

    def handle_starttag(self, tag, attrs):
        if tag in VOID:
            return
        attrs = dict(attrs)
        classes = set((attrs.get("class") or "").split())
        kind = ("glued" if "pasted-text" in classes else "cited" if "bibtex-citation" in classes else
                "article" if tag == "article" or attrs.get("role") == "main" else "")
        skip = tag in SKIP_TAGS or bool(classes & SKIP_CLASSES) or kind in ("glued", "cited")
        if kind == "article":
            self.in_article += 1
        if self.current is not None and not self._skipped() and kind in ("glued", "cited"):
            self.current.append(GLUED if kind == "glued" else CITED)
        self.stack.append((tag, skip, kind))
        if tag in ("p", "li") and self.in_article and not self._skipped():
            if self.current is not None:  # a list inside a paragraph or item: close the outer block first
                self.blocks.append("".join(self.current))
            self.current = []

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        while self.stack:
            open_tag, _, kind = self.stack.pop()
            if kind == "article":
                self.in_article -= 1
            if open_tag in ("p", "li") and self.current is not None and not self._skipped():
                self.blocks.append("".join(self.current))
                self.current = None
            if open_tag == tag:
                break

    def handle_data(self, data):
        if self.current is not None and self.in_article and not self._skipped():
            self.current.append(data)


def prose_blocks(page_html: str) -> list[str]:
    """The prose of a page: one string per paragraph or list item, glued values and citations as markers."""
    parser = _Prose()
    parser.feed(page_html)
    parser.close()
    return [re.sub(r"\s+", " ", b).strip() for b in parser.blocks if b.strip()]


def _unquoted(sentence: str) -> str:
    """The sentence without quoted examples ("1.5 [1.5, 1.5]") and parenthesised quotations of code."""
    return re.sub(r"[\"“][^\"”]*[\"”]", " ", sentence)


def loose_numbers(page_html: str) -> list[tuple[str, str]]:
    """(number, sentence) for every number of the page's prose that is neither glued, nor cited, nor a convention
    or a label (see the module docstring)."""
    found = []
    for block in prose_blocks(page_html):
        for sentence in re.split(r"(?<=[.;:!?])\s+(?=[A-Z(\"“*])", block):
            if CITED in sentence:
                continue  # a cited figure of a paper
            text = _unquoted(sentence.replace(GLUED, " "))
            text = re.sub(rf"\b{LABEL_WORDS}\s+[\d.,]+(?:\s*(?:and|to|,|–|-)\s*[\d.]+)*", " ", text, flags=re.I)
            text = re.sub(r"\b(?:19|20)\d\d\b", " ", text)  # years
            for pattern, _ in CONVENTIONS:
                text = re.sub(pattern, " ", text, flags=re.I)
            found += [(m.group(0), sentence.replace(GLUED, "[glued]")) for m in NUMBER.finditer(text)]
    return found


def pages(build: Path) -> list[Path]:
    """The pages whose prose can quote a build's findings: the front page and every chapter but
    :data:`NOT_FINDINGS`."""
    html = build / "html"
    return sorted([html / "intro.html", *(p for p in (html / "chapters").glob("*.html") if p.name not in NOT_FINDINGS)])


def test_every_number_in_the_prose_of_every_page_is_glued_or_cited(quick_book):
    problems = {}
    for page in pages(quick_book):
        loose = loose_numbers(page.read_text(encoding="utf-8"))
        if loose:
            problems[page.name] = loose
    assert not problems, "\n".join(f"{name}: {number!r} in: {sentence[:200]}" for name, found in problems.items()
                                   for number, sentence in found)


# ------------------------------------------------------------------ the check itself, on constructed pages
PAGE = """<html><body><nav><ul><li>1.2. Measuring reliability</li></ul></nav><article class="bd-article" role="main">
<h1>13. GPQA</h1>
<p>{prose}</p>
<div class="cell_output"><p>A computed note: 12.5 points.</p></div>
<table><tr><td>4.5 [4, 5]</td></tr></table>
<p>Code: <code>k = 25</code> and math <span class="math">\\(k_0 = 3.2\\)</span>.</p>
</article></body></html>"""


@pytest.mark.parametrize("prose, loose", [
    ('At k = <span class="pasted-text">100</span> the MDAD is <span class="pasted-text">4.5 points [4, 5]</span>.', []),
    ('At k = 100 the MDAD is <span class="pasted-text">4.5 points [4, 5]</span>.', ["100"]),
    ("At k = 100 the MDAD is 4.5 points.", ["100", "4.5"]),
    ('Experts reached 65% accuracy <span class="bibtex-citation">[<a href="references.html#id1">RHS+23</a>]</span>. '
     "Our pool has 420 models.", ["420"]),
    ("Every interval is a 95% interval; the threshold is 0.8 and the margin 2 points (the paper's figure 3).", []),
    ('Its ends sit on the grid, such as "1.5 [1.5, 1.5]", in GPQA-Diamond and 7B models (2025).', []),
])
def test_the_check_finds_exactly_the_unglued_numbers_of_a_constructed_page(prose, loose):
    """The check can fail: a number planted in the prose, outside glue and citations, is reported; the same
    number glued, cited, a convention or a label is not; outputs, tables, code and math are not prose."""
    assert [number for number, _ in loose_numbers(PAGE.format(prose=prose))] == loose


def test_a_planted_number_in_a_built_page_fails_the_check(quick_book, tmp_path):
    """On a real page of the build: its prose passes the check until one unglued number is planted in it."""
    page = (quick_book / "html" / "chapters" / "measures.html").read_text(encoding="utf-8")
    planted = page.replace("<p>", "<p>Random sampling's MDAD is 7.25 points here. ", 1)
    assert ("7.25", "Random sampling's MDAD is 7.25 points here.") in [
        (n, s[:len("Random sampling's MDAD is 7.25 points here.")]) for n, s in loose_numbers(planted)]

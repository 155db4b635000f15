"""Every title, banner, note and caption that a parameter or a bundle's text reaches shows that text as
written: no element comes from it, no MyST role, substitution or emphasis, and no formula (MathJax).

Each surface is called directly (the book's display functions, a Setting's banner, the run-on title of
``run-chapter``, an absent figure's reference) with a neutral text and with each hostile payload; the
page fragment it makes (HTML, or Markdown rendered as MyST and as nbconvert renders it) must hold the
same elements as with the neutral text, show the payload's characters, and keep any ``$`` or backslash
inside an element MathJax skips.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from html.parser import HTMLParser
from unittest import mock

import nbformat
import numpy as np
import pandas as pd
import pytest

from mbutils.book import display, numbering, setting, worked
from mbutils.book.escaping import MATH_IGNORE, literal
from mbutils.book.setting import Setting, subtask_setting
from mbutils.publish.chapters import data_names, retitle_for_data
from mbutils.data.benchmark import Benchmark
from mbutils.data.datasets import DataChoice
from mbutils.methods.protocol import Protocol

NEUTRAL = "plain words"
PAYLOADS = [
    "<svg onload=alert(1)>",
    "{{ x }}",
    "{math}`x`",
    "$x$",
    "**bold**",
    "`",
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "[link](javascript:alert(1))",
    "_under_ ~~strike~~",
    "\\(x\\) and $$y$$",
    "a & b &lt; c",
    "# heading | a | b |",
    "line one\nline two",
    "(label)=",
    "1. list",
    "- item",
    "{doc}`intro` and {{x}}",
    "<!-- comment -->",
    "'quote\" = x",
]
IGNORED = set(MATH_IGNORE.split())
RAW = {"script", "style", "pre", "code", "textarea"}
VOID = {"br", "img", "hr", "meta", "link", "input", "col", "area", "base", "wbr", "source", "embed", "param",
        "track"}


class _Page(HTMLParser):
    """Elements (other than MathJax-ignore spans), classes, text, and text MathJax would read, of a fragment."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements, self.classes, self.text, self.math_read = Counter(), set(), [], []
        self._open: list[tuple[str, bool]] = []

    def handle_starttag(self, tag, attrs):
        classes = set((dict(attrs).get("class") or "").split())
        self.classes |= classes
        ignore = tag == "span" and classes == IGNORED
        if not ignore:
            self.elements[tag] += 1
        if tag not in VOID:
            self._open.append((tag, ignore or bool(classes & IGNORED)))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self._open.pop()

    def handle_endtag(self, tag):
        while self._open:
            if self._open.pop()[0] == tag:
                break

    def handle_data(self, data):
        if any(t in RAW for t, _ in self._open):
            return
        self.text.append(data)
        if ("$" in data or "\\" in data) and not any(ignored for _, ignored in self._open):
            self.math_read.append(data)

    def handle_comment(self, data):
        self.elements["<!-- comment -->"] += 1


def parse(fragment: str) -> _Page:
    page = _Page()
    page.feed(fragment)
    page.close()
    return page


def one_line(text: str) -> str:
    return " ".join(str(text).split())


# --------------------------------------------------------------------------- the surfaces


def _captured(call) -> str:
    shown = []
    with mock.patch.object(display, "display", lambda obj: shown.append(obj.data)):
        call()
    assert len(shown) == 1
    return shown[0]


def _benchmark(name="bundle", models=None, subtask="s0", target_set="first_five") -> Benchmark:
    rng = np.random.default_rng(0)
    models = models or [f"m{i:02d}" for i in range(12)]
    return Benchmark(name=name, correct=(rng.random((len(models), 18)) < 0.6).astype(np.int8), models=models,
                     items=[f"q{j:02d}" for j in range(18)], subtasks=[subtask] * 10 + ["s1"] * 8,
                     target_sets={target_set: models[:5]})


def _setting(bench: Benchmark, reason: str = "bundle 'bundle'", target_set: str | None = None) -> Setting:
    s = Setting(data=DataChoice(bench.name, "custom", "custom", bench, reason), profile="quick", sizes=[5],
                protocol=Protocol(n_sources=6, n_targets=5, n_runs=2, target_set=target_set), source_counts=[6],
                source_runs=1, source_size=5)
    s._memo["resolution"] = pd.Series([np.nan], index=[5])  # no experiment: the banner's thin-pool line
    return s


def _no_thin_pool():
    return mock.patch.object(Setting, "thin_pool", lambda self: "")


def figure_caption(text):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(3, 2))
    fig.add_subplot().plot([0, 1], [0, 1])
    return display.render_figure(fig, text)


def banner_of(s: Setting) -> str:
    with _no_thin_pool():
        return s.banner()


def worked_note(name):
    s = _setting(_benchmark())
    with mock.patch.multiple(worked, _without_sources=lambda *a, **k: ([], None, False),
                             bin_pairs=lambda *a, **k: pd.DataFrame(), _recommendation=lambda *a, **k: ([], None),
                             _with_sources=lambda *a, **k: [], glue=lambda *a, **k: None):
        return _captured(lambda: worked.worked_example_note(s, name, 2.0, 0.8, ["random"], pd.DataFrame(), 25))


def stand_in_banner(reason):
    with mock.patch.object(setting, "real_or_stand_in", lambda key: ("synthetic-mmlu", None, reason)):
        return setting.stand_in_banner(["mmlu"])


def facts(text):
    fields = dict(k="10", tau_random="0.50", error_random="3.0 points", mdad_random="4.0 points",
                  share_below="20%")
    return display.facts_html({**fields, "data": text, "small_verdict": text}, None)


#: name -> (the fragment made with ``text``, the text it must show for ``text``)
HTML_SURFACES = {
    "note title": lambda t: (_captured(lambda: display.note(t, "body")), t),
    "note body": lambda t: (_captured(lambda: display.note("Title", t)), t),
    "figure caption": lambda t: (figure_caption(t), t),
    "table caption": lambda t: (_captured(lambda: display.table(pd.DataFrame({"x": [1]}), caption=t)), t),
    "table cell": lambda t: (_captured(lambda: display.table(pd.DataFrame({"model": [t]}))),
                             t.replace("\n", "\\n")),  # pandas writes a line break in a cell as \\n
    "download text": lambda t: (display.download_link(pd.DataFrame({"x": [1]}), "x.csv", text=t), t),
    "banner: bundle name": lambda t: (banner_of(_setting(_benchmark(name=t))), t),
    "banner: provenance": lambda t: (banner_of(_setting(_benchmark(), reason=t)), t),
    "banner: target set": lambda t: (banner_of(_setting(_benchmark(target_set=t), target_set=t)),
                                     setting.target_set_label(t)),
    "banner: subtask": lambda t: (banner_of(subtask_setting(_setting(_benchmark(subtask=t)), t)),
                                  t.replace(" ", "_")),
    "settings list": lambda t: (_no_thin_pool_call(lambda: display.settings_list({"b": _setting(_benchmark(name=t))},
                                                                                 "Benchmarks compared")), t),
    "settings caption": lambda t: (_captured(lambda: display.table(
        pd.DataFrame({"x": [1]}), caption=display.settings_caption({"b": _setting(_benchmark(name=t))}))), t),
    "summary paragraph": lambda t: (facts(t), t),
    "stand-in banner": lambda t: (stand_in_banner(t), t),
    "worked example": lambda t: (worked_note(t), t),
}


def _no_thin_pool_call(call):
    with _no_thin_pool():
        return call()


def title_line(text) -> tuple[str, str]:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# The benchmark data\n\nText.")])
    retitle_for_data(nb, "data", {"data": text})
    return nb.cells[0].source.split("\n")[0], "The benchmark data, run on " + data_names(text)


def absent_reference(text) -> tuple[str, str]:
    glued = []
    with mock.patch.object(numbering, "_glue", lambda key, value: glued.append(value)), \
            mock.patch.object(numbering, "_page", numbering._Page()):
        numbering.not_shown("label", text)
    return glued[0]._repr_markdown_(), f"no figure ({text})"


#: name -> (Markdown made with ``text``, the text it must show)
MARKDOWN_SURFACES = {
    "run-on title": title_line,
    "absent figure's reference": absent_reference,
    "a line of its own": lambda t: (literal(t, markdown=True), t),
}


def _myst(markdown: str) -> str:
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    config = MdParserConfig(enable_extensions={"dollarmath", "substitution", "colon_fence"})
    return create_md_parser(config, RendererHTML).render(markdown)


def _nbconvert(markdown: str) -> str:
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    return markdown2html_mistune(markdown)


RENDERERS = {"MyST": _myst, "nbconvert": _nbconvert}


# --------------------------------------------------------------------------- the checks


def check(fragment: str, neutral: str, expected: str) -> None:
    page, plain = parse(fragment), parse(neutral)
    assert page.elements == plain.elements, f"elements from the text: {page.elements - plain.elements}"
    assert "svg" not in page.elements and "script" not in page.elements
    assert not page.classes & {"math", "substitution", "role", "myst"}, page.classes
    assert one_line(expected) in one_line("".join(page.text)), (expected, fragment)
    assert not page.math_read, f"MathJax would read {page.math_read}"


#: Pairs that cannot happen: a bundle refuses a subtask name with a line break.
IMPOSSIBLE = {("banner: subtask", "line one\nline two")}
CASES = [(name, p) for name in HTML_SURFACES for p in PAYLOADS if (name, p) not in IMPOSSIBLE]


@pytest.mark.parametrize("surface,payload", CASES, ids=[f"{s}-{PAYLOADS.index(p)}" for s, p in CASES])
def test_a_surface_built_as_html_shows_the_text_as_written(surface, payload):
    make = HTML_SURFACES[surface]
    fragment, expected = make(payload)
    neutral, _ = make(NEUTRAL)
    check(fragment, neutral, expected)


MD_CASES = [(name, r, p) for name in MARKDOWN_SURFACES for r in RENDERERS for p in PAYLOADS]


@pytest.mark.parametrize("surface,renderer,payload", MD_CASES,
                         ids=[f"{s}-{r}-{PAYLOADS.index(p)}" for s, r, p in MD_CASES])
def test_a_surface_built_as_markdown_shows_the_text_as_written(surface, renderer, payload):
    make, render = MARKDOWN_SURFACES[surface], RENDERERS[renderer]
    markdown, expected = make(payload)
    neutral, _ = make(NEUTRAL)
    assert "\n" not in markdown.strip(), "a title or reference must stay on one line"
    check(render(markdown), render(neutral), one_line(expected))


def test_the_one_function_escapes_as_the_page_reads_it():
    assert literal("<svg onload=alert(1)>") == "&lt;svg onload=alert(1)&gt;"
    assert literal("plain name-1.2") == "plain name-1.2" == literal("plain name-1.2", markdown=True)
    assert literal("$x$") == f'<span class="{MATH_IGNORE}">$x$</span>'
    assert literal("a\nb", markdown=True) == "a b" and literal("- x", markdown=True).startswith("&#45;")
    assert html.unescape(re.sub(r"<[^>]+>", "", literal("{{ x }} `y` *z*", markdown=True))) == "{{ x }} `y` *z*"

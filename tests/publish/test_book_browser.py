"""The built book in a real browser: every page of the table of contents opens in headless
Chromium with the network blocked, with all images loaded, every equation typeset and no
console error.

The book is built strictly (``-W -n --keep-going``) with the quick profile into a temporary
folder, once per session (``quick_book`` of conftest.py; test_chapters reads its executed
notebooks too), unless ``MBUTILS_BOOK_HTML`` names an existing build to check instead. Screenshots
of the front page and of one chapter are saved to the folder printed by the test
(``MBUTILS_SCREENSHOTS`` if set). The students' and instructors' copies are then built from
this build's execution cache (no notebook runs again) and checked, and the PDF is printed
from it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO
from helpers import StrictBuild

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# Every request that leaves the built folder is aborted (and reported): the book, MathJax
# included, must read offline, in a classroom without network or from a downloaded copy.
OFFLINE = re.compile(r"^(?!file:)")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]
SCREENSHOT_CHAPTER = "chapters/bench_gpqa"


def toc_pages() -> list[str]:
    """Document names in the order of _toc.yml (root first)."""
    toc = (REPO / "_toc.yml").read_text()
    root = re.search(r"^root:\s*(\S+)", toc, re.M).group(1)
    return [root, *re.findall(r"file:\s*(\S+)", toc)]


@pytest.fixture(scope="module")
def book_html(quick_book) -> Path:
    return quick_book / "html"


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (.ci/system-packages installs it)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield b
        b.close()


def _visit(browser, url: str, screenshot: Path | None = None) -> dict:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    console, page_errors, failed = [], [], []
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: page_errors.append(str(e)))
    page.on("requestfailed", lambda r: failed.append(r.url))
    blocked = []
    page.route(OFFLINE, lambda route: (blocked.append(route.request.url), route.abort("internetdisconnected")))
    page.goto(url, wait_until="load")
    page.wait_for_timeout(300)  # let the theme's scripts run (they log their errors after load)
    broken = page.evaluate(
        "Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)")
    n_images = page.evaluate("document.images.length")
    # natural / displayed width of every raster image (vector images pass); alt texts
    shrink = page.evaluate(
        "Array.from(document.images).filter(i => i.naturalWidth > 0 && i.clientWidth > 0 && "
        "!/\\.svg($|\\?)|^data:image\\/svg/.test(i.src))"
        ".map(i => [i.alt, i.naturalWidth / i.clientWidth])")
    alts = page.evaluate("Array.from(document.images).map(i => i.alt || '')")
    title = page.title()
    if screenshot is not None:
        page.screenshot(path=str(screenshot), full_page=False)
    page.close()
    return {"console": console, "errors": page_errors, "failed": failed, "broken": broken,
            "images": n_images, "title": title, "shrink": shrink, "alts": alts,
            "network": [f"needs the network: {u}" for u in blocked]}


def test_every_toc_page_loads_cleanly_in_chromium(book_html, browser, capsys):
    shots = Path(os.environ.get("MBUTILS_SCREENSHOTS") or book_html.parent / "screenshots")
    shots.mkdir(parents=True, exist_ok=True)
    problems, total_images = [], 0
    for doc in toc_pages():
        html = book_html / f"{doc}.html"
        if not html.exists():
            problems.append(f"{doc}: page missing ({html})")
            continue
        shot = None
        if doc in (toc_pages()[0], SCREENSHOT_CHAPTER):
            shot = shots / f"{doc.replace('/', '_')}.png"
        seen = _visit(browser, html.as_uri(), shot)
        total_images += seen["images"]
        for kind in ("console", "errors", "failed", "broken", "network"):
            problems += [f"{doc}: {kind}: {x}" for x in seen[kind]]
        problems += [f"{doc}: figure shrunk {ratio:.2f}x ({alt[:60]!r})" for alt, ratio in seen["shrink"] if ratio > 1.25]
        problems += [f"{doc}: image alt text {alt!r} is a file name or empty" for alt in seen["alts"]
                     if not alt.strip() or re.search(r"\.(png|jpe?g|svg|gif)$", alt.strip())]
    with capsys.disabled():
        print(f"\nbook checked in Chromium: {len(toc_pages())} pages, {total_images} images; "
              f"screenshots in {shots}")
    assert not problems, "\n".join(problems)
    assert total_images >= 40, f"only {total_images} images in the whole book"
    assert (shots / "intro.png").exists() and (shots / f"{SCREENSHOT_CHAPTER.replace('/', '_')}.png").exists()


#: What a figure and its caption look like on a page: the content column's width, each figure's smallest
#: text at the PNG's own size (data-text-pt, written by mbutils.book.display) with its natural and shown
#: widths, and each caption's colour with the page's background.
LEGIBILITY_JS = """() => {
  const article = document.querySelector('article.bd-article');
  const style = getComputedStyle(article);
  const column = article.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  const figures = Array.from(document.querySelectorAll('.mbutils-figure img')).map(
    i => [i.alt.slice(0, 60), parseFloat(i.dataset.textPt), i.naturalWidth, i.getBoundingClientRect().width]);
  const captions = Array.from(document.querySelectorAll('.mbutils-caption')).map(c => getComputedStyle(c).color);
  return {column, figures, captions, background: getComputedStyle(document.body).backgroundColor};
}"""


def _rgb(css: str) -> tuple[float, ...]:
    return tuple(float(v) / 255 for v in re.findall(r"[\d.]+", css)[:3])


def _contrast(fg: str, bg: str) -> float:
    def luminance(rgb):
        linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    a, b = sorted((luminance(_rgb(fg)), luminance(_rgb(bg))))
    return (b + 0.05) / (a + 0.05)


def test_figure_text_and_captions_read_at_their_displayed_size(book_html, browser, capsys):
    """In Chromium at 1,400 px the content column is the width the figures are drawn for
    (mbutils.book.plots.layout.HTML_COLUMN_PX); every figure's smallest text, as shown (its size at
    the PNG's own width x shown width / natural width), is at least 9 pt; every caption's colour has
    WCAG AA contrast (4.5:1) with the page."""
    from mbutils.book.plots.layout import HTML_COLUMN_PX, MIN_TEXT_PT

    problems, shown_pt, contrasts = [], [], []
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.route(OFFLINE, lambda route: route.abort())
    for doc in toc_pages():
        if not (book_html / f"{doc}.html").exists():  # test_every_toc_page_loads_cleanly_in_chromium says so
            continue
        page.goto((book_html / f"{doc}.html").as_uri(), wait_until="load")
        seen = page.evaluate(LEGIBILITY_JS)
        if abs(seen["column"] - HTML_COLUMN_PX) > 1:
            problems.append(f"{doc}: content column {seen['column']} px, not {HTML_COLUMN_PX:g} px")
        for alt, text_pt, natural, width in seen["figures"]:
            pt = text_pt * width / natural
            shown_pt.append(pt)
            if pt < MIN_TEXT_PT - 0.01:
                problems.append(f"{doc}: figure {alt!r} shows text of {pt:.2f} pt")
        for color in seen["captions"]:
            contrasts.append(_contrast(color, seen["background"]))
            if contrasts[-1] < 4.5:
                problems.append(f"{doc}: caption {color} on {seen['background']}: {contrasts[-1]:.2f}:1")
    page.close()
    with capsys.disabled():
        print(f"\n{len(shown_pt)} figures: smallest text shown {min(shown_pt):.2f} pt; "
              f"{len(contrasts)} captions: lowest contrast {min(contrasts):.2f}:1")
    assert len(shown_pt) >= 40 and contrasts
    assert not problems, "\n".join(problems[:30])


def test_the_front_page_links_no_pdf_the_build_did_not_make(book_html):
    """The default build prints no PDF: the front page's sentence about it stays an inert template
    (book-pdf makes it a live link once it writes book.pdf beside the page)."""
    text = (book_html / "intro.html").read_text()
    if (book_html / "book.pdf").exists():  # MBUTILS_BOOK_HTML names a published build, PDF printed
        assert '<span class="mbutils-pdf-link"><a href="book.pdf">' in text
        return
    assert '<template class="mbutils-pdf-link"><a href="book.pdf">' in text
    assert not re.search(r'<a [^>]*href="book\.pdf"', re.sub(r"<template.*?</template>", "", text, flags=re.S))


def test_front_page_shows_computed_findings(book_html):
    text = (book_html / "intro.html").read_text()
    for snippet in ("Kendall", "MDAD", "points"):
        assert snippet in text
    assert "glue" not in re.sub(r"<[^>]+>", "", text).lower(), "an unresolved glue reference is visible"
    # every pasted value is there: numbers next to the sentences that need them
    assert re.search(r"τ\s*=\s*(<[^>]+>\s*)*-?\d\.\d\d", text), "Kendall tau value missing on the front page"


def test_figures_are_numbered_by_chapter_and_cited_by_link_on_every_page(book_html):
    for position, doc in enumerate(toc_pages()):
        text = (book_html / f"{doc}.html").read_text()
        if position:  # the built contents number the page as the figures do
            assert re.search(rf'<h1>(<span class="section-number">)?{position}\.', text), f"{doc}: not chapter {position}"
        for kind, css in (("Figure", "mbutils-figure"), ("Table", "mbutils-table-wrap")):
            numbers = re.findall(rf"<b>{kind} (\d+)\.(\d+)\.</b>", text)
            assert {int(c) for c, _ in numbers} <= {position}, f"{doc}: {kind.lower()}s of another chapter"
            counts = [int(n) for _, n in numbers]
            assert counts == list(range(1, len(counts) + 1)), f"{doc}: {kind.lower()}s numbered {counts}"
            assert text.count(f'class="{css}"') == len(numbers), f"{doc}: an unnumbered {kind.lower()}"
        anchors = set(re.findall(r'class="mbutils-(?:figure|table-wrap)" id="([^"]+)"', text))
        links = set(re.findall(r'<a class="mbutils-ref" href="#([^"]+)"|<a href="#([^"]+)" class="mbutils-ref"', text))
        targets = {a or b for a, b in links}
        assert targets <= anchors, f"{doc}: links to figures or tables it does not show: {sorted(targets - anchors)}"


def test_the_index_lists_the_glossary_terms(book_html):
    glossary = (REPO / "chapters" / "glossary.md").read_text()
    block = glossary.split("```{glossary}", 1)[1].split("```", 1)[0]
    terms = [line.strip() for line in block.splitlines() if line.strip() and not line.startswith(" ")]
    assert len(terms) >= 12
    index = re.sub(r"<[^>]+>", " ", (book_html / "genindex.html").read_text())
    missing = [t for t in terms if t not in index]
    assert not missing, f"the index lacks glossary terms {missing}"


MATH_PAGE = "chapters/measures"


def source_math(text: str) -> int:
    """Equations in a MyST page's Markdown (not its code cells): ``$$...$$`` blocks, ``{math}``
    blocks and roles, and inline ``$...$``."""
    text = re.sub(r"```\{code-cell\}.*?```", "", text, flags=re.S)
    roles = len(re.findall(r"\{math\}`[^`\n]+`", text))
    text = re.sub(r"`[^`\n]*`(?!`)", "", text)  # inline code and roles' contents
    blocks = len(re.findall(r"\$\$.+?\$\$", text, re.S)) + len(re.findall(r"^```\{math\}", text, re.M))
    text = re.sub(r"\$\$.+?\$\$", "", text, flags=re.S)
    inline = len(re.findall(r"(?<![\\$])\$(?=\S)[^$\n]+?(?<=\S)\$(?!\d)", text))
    return blocks + inline + roles


def test_every_equation_is_typeset_offline(book_html, browser):
    """MathJax comes from the built book: with the network blocked every equation of the
    measures chapter is typeset (one mjx-container each, no MathJax error, no raw TeX left)."""
    html = (book_html / f"{MATH_PAGE}.html").read_text()
    marked = len(re.findall(r'class="math notranslate nohighlight"', html))
    in_source = source_math((REPO / f"{MATH_PAGE}.md").read_text())
    assert in_source >= 10 and marked >= in_source, (in_source, marked)
    assert "cdn.jsdelivr" not in html and "_static/mathjax/tex-chtml.js" in html
    assert (book_html / "_static" / "mathjax" / "output" / "chtml" / "fonts").is_dir()
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    blocked = []
    page.route(OFFLINE, lambda route: (blocked.append(route.request.url), route.abort("internetdisconnected")))
    page.goto((book_html / f"{MATH_PAGE}.html").as_uri(), wait_until="load")
    page.wait_for_function("window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=20000)
    page.evaluate("async () => { await MathJax.startup.promise; }")
    typeset = page.evaluate("document.querySelectorAll('mjx-container').length")
    errors = page.evaluate("document.querySelectorAll('mjx-merror').length")
    text = page.evaluate("document.querySelector('article').innerText")
    page.close()
    assert not blocked, blocked
    assert typeset == marked, f"{typeset} of {marked} equations typeset"
    assert errors == 0, f"{errors} equations MathJax could not typeset"
    leftover = [m for m in re.findall(r"\\\(|\\\[|\$\$", text)]
    assert not leftover, f"raw TeX left on the page: {leftover[:5]}"


# --------------------------------------------------------------------------- launch buttons
def test_launch_buttons_open_the_chapter_notebooks_of_the_configured_repository(book_html):
    from mbutils.publish.publish import repository

    url, _ = repository()
    org_repo = url.removeprefix("https://github.com/")
    html = (book_html / "chapters" / "measures.html").read_text()
    assert f"https://colab.research.google.com/github/{org_repo}/blob/notebooks/chapters/measures.ipynb" in html
    assert f"https://mybinder.org/v2/gh/{org_repo}/notebooks?urlpath=tree/chapters/measures.ipynb" in html
    assert f'href="{url}"' in html, "no repository button"


# --------------------------------------------------------------------------- the two copies
SOLUTION = re.compile(r"^```\{solution-start\}.*?^```\{solution-end\}\s*```", re.S | re.M)
CODE = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.S | re.M)


def solutions_in_sources() -> dict[str, int]:
    counts = {}
    for doc in toc_pages():
        path = REPO / f"{doc}.md"
        if path.exists() and (n := len(SOLUTION.findall(path.read_text()))):
            counts[doc] = n
    return counts


def solution_code_lines() -> set[str]:
    """Code lines of the solutions (25 characters or more) found nowhere else in the book's
    sources or the package (whose docstrings the API page shows)."""
    inside, outside = set(), [p.read_text() for p in (REPO / "mbutils").rglob("*.py")]
    for doc in toc_pages():
        path = REPO / f"{doc}.md"
        if not path.exists():
            continue
        text = path.read_text()
        for block in SOLUTION.findall(text):
            for code in CODE.findall(block):
                inside.update(line.strip() for line in code.splitlines() if len(line.strip()) >= 25
                              and not line.strip().startswith(":"))
        outside.append(SOLUTION.sub("", text))
    elsewhere = "\n".join(outside)
    return {line for line in inside if line not in elsewhere}


def _plain(path: Path) -> str:
    import html as html_lib

    return html_lib.unescape(re.sub(r"<[^>]+>", "", path.read_text(errors="replace")))


@pytest.fixture(scope="module")
def copies(book_html, tmp_path_factory) -> dict[str, Path]:
    """The students' and instructors' copies, built strictly with ``python -m mbutils book`` from
    the execution cache of the browser test's build (``book_html``'s ``_build``)."""
    out = tmp_path_factory.mktemp("copies")
    env = {**os.environ, "MBUTILS_PROFILE": os.environ.get("MBUTILS_PROFILE", "quick")}
    commands = {copy: [sys.executable, "-m", "mbutils", "book", "--copy", copy, "--out", str(out / copy),
                       "--execution-cache", str(book_html.parent)] for copy in ("students", "instructors")}
    built = {}
    # Rendering is one process per copy and one core each: the two copies build side by side.
    builds = {copy: StrictBuild(command, env, f"the {copy} copy") for copy, command in commands.items()}
    try:
        for copy, build in builds.items():
            log, minutes = build.result()
            executed = [line for line in log.splitlines() if "Executing notebook" in line]
            assert not executed, f"the {copy}' copy executed notebooks again: {executed[:3]}"
            print(f"{copy}' copy built from the execution cache in {minutes:.1f} min")
            built[copy] = out / copy / "_build" / "html"
    finally:  # one copy failing does not leave the other one building
        for build in builds.values():
            build.stop()
    return built


def _notebook_text(path: Path) -> str:
    """A students' notebook's text without its stubs' check sections: a stub repeats the
    solution's checks (asserts and the ``if`` around them) by design, after its marker line."""
    import json

    from mbutils.publish.student_notebooks import CHECKS_MARKER, STUB_TAG

    cells = json.loads(path.read_text())["cells"]
    texts = []
    for cell in cells:
        source = "".join(cell["source"])
        if STUB_TAG in cell.get("metadata", {}).get("tags", []):
            source = source.split(CHECKS_MARKER)[0]
        texts.append(source)
    return "\n".join(texts)


def test_students_copy_has_no_solution_text(book_html, copies):
    students = copies["students"]
    default_text = "\n".join(_plain(book_html / f"{doc}.html") for doc in solutions_in_sources())
    lines = {line for line in solution_code_lines() if line in default_text}  # shown in the default copy
    assert len(lines) >= 100, f"only {len(lines)} solution code lines to look for"
    files = [f for f in students.rglob("*") if f.suffix in (".html", ".js", ".txt", ".ipynb", ".md", ".json")
             and "_static" not in f.parts]
    # the only notebooks are the students' own (stubs, under notebooks/), scanned below like every page
    assert not list(students.rglob("_sources/**/*.md"))
    assert all("notebooks" in f.relative_to(students).parts for f in students.rglob("*.ipynb"))
    leaks = []
    for f in files:
        raw = f.read_text(errors="replace")
        plain = _notebook_text(f) if f.suffix == ".ipynb" else _plain(f)
        if re.search(r'class="[^"]*\bsolution\b', raw) or "Solution to Exercise" in plain:
            leaks.append(f"{f.relative_to(students)}: a solution admonition")
        leaks += [f"{f.relative_to(students)}: {line!r}" for line in lines if line in plain]
    assert not leaks, "\n".join(leaks[:20])


def test_students_copy_keeps_every_exercise_its_number_and_links(book_html, copies):
    exercise = re.compile(r'<span class="caption-number">(Exercise [\d.]+)')
    for doc in solutions_in_sources():
        default = exercise.findall((book_html / f"{doc}.html").read_text())
        kept = exercise.findall((copies["students"] / f"{doc}.html").read_text())
        assert default and kept == default, f"{doc}: exercises {kept} instead of {default}"
    teaching = (copies["students"] / "chapters" / "teaching.html").read_text()
    assert re.search(r'href="[^"]*sel_random\.html#ex-random-own-selector"', teaching), "a link to an exercise broke"


def test_instructors_copy_shows_every_solution_open(book_html, copies, browser):
    instructors = copies["instructors"]
    for doc, n in solutions_in_sources().items():
        html = (instructors / f"{doc}.html").read_text()
        divs = re.findall(r'<div class="([^"]*\bsolution\b[^"]*)"', html)
        assert len(divs) == n, f"{doc}: {len(divs)} solutions shown of {n}"
        assert not [d for d in divs if "dropdown" in d.split()], f"{doc}: a solution is folded"
        assert len(re.findall(r'<div class="[^"]*\bsolution\b[^"]*\bdropdown\b', (book_html / f"{doc}.html").read_text())) == n
    shown = "Array.from(document.querySelectorAll('div.solution')).map(d => d.querySelector('section').offsetHeight > 0)"
    seen = {}
    for name, root in (("default", book_html), ("instructors", instructors)):
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.route(OFFLINE, lambda route: route.abort())
        page.goto((root / "chapters" / "measures.html").as_uri(), wait_until="load")
        page.wait_for_timeout(300)
        seen[name] = page.evaluate(shown)
        page.close()
    assert seen["instructors"] and all(seen["instructors"]), seen
    assert not any(seen["default"]), f"the default copy's solutions are not folded: {seen['default']}"


# --------------------------------------------------------------------------- the PDF
def test_the_pdf_holds_every_chapter_with_figures_as_wide_as_the_text(book_html, tmp_path):
    import html as html_lib
    import json
    import unicodedata

    from pypdf import PdfReader

    pdf = tmp_path / "book.pdf"
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "mbutils", "book-pdf", "--html", str(book_html), "--out", str(pdf),
                           "--verbose"], capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    print(f"PDF printed in {(time.perf_counter() - start) / 60:.1f} min, {pdf.stat().st_size / 1e6:.1f} MB, "
          f"{len(PdfReader(str(pdf)).pages)} pages")
    reader = PdfReader(str(pdf))
    def norm(t: str) -> str:  # ligatures (fi, ff) as letters, words hyphenated across lines joined
        return re.sub(r"\s+", " ", re.sub(r"-\s+", "-", unicodedata.normalize("NFKC", t))).strip()

    text = norm(" ".join(page.extract_text() or "" for page in reader.pages))
    titles = {}
    for doc in toc_pages():
        title = re.search(r"<title>(.*?)</title>", (book_html / f"{doc}.html").read_text(), re.S).group(1)
        titles[doc] = re.sub(r"\s+", " ", html_lib.unescape(title).split(" — ")[0]).strip()
    missing = [t for t in titles.values() if norm(re.sub(r"^\d+\. ", "", t)) not in text]
    assert not missing, f"the PDF lacks chapters {missing}"
    assert [item.title for item in reader.outline][:len(titles)] == list(titles.values())
    report = json.loads(proc.stdout[: proc.stdout.rindex("}") + 1])  # --verbose: the report, then the one-line summary
    assert proc.stdout.splitlines()[-1].startswith(f"wrote {pdf}: ")
    small = {doc: r["smallest_figure_text_pt"] for doc, r in report.items()
             if r["smallest_figure_text_pt"] is not None and r["smallest_figure_text_pt"] < 9 - 0.01}
    assert not small, f"figure text below 9 pt in the PDF: {small}"
    narrow = {doc: r["narrowest_figure"] for doc, r in report.items()
              if r["narrowest_figure"] is not None and r["narrowest_figure"] < 0.98}
    assert not narrow, f"figures narrower than the text column: {narrow}"
    assert sum(r["figures"] for r in report.values()) >= 40
    assert report[MATH_PAGE]["math"] > 0

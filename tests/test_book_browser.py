"""The built book in a real browser: every page of the table of contents opens in headless
Chromium with all images loaded and no console error.

The book is built strictly (``-W -n --keep-going``) with the quick profile into a temporary
folder, unless ``MBUTILS_BOOK_HTML`` names an existing build to check instead. Screenshots
of the front page and of one chapter are saved to the folder printed by the test
(``MBUTILS_SCREENSHOTS`` if set).
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

from conftest import REPO, real_bundle

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# The one external resource the book loads: MathJax from its CDN, which readers online get and
# this machine (no network) cannot; its failure, and the console error it causes, are expected.
EXTERNAL = ("https://cdn.jsdelivr.net/npm/mathjax@3/",)
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]
SCREENSHOT_CHAPTER = "chapters/bench_gpqa"


def toc_pages() -> list[str]:
    """Document names in the order of _toc.yml (root first)."""
    toc = (REPO / "_toc.yml").read_text()
    root = re.search(r"^root:\s*(\S+)", toc, re.M).group(1)
    return [root, *re.findall(r"file:\s*(\S+)", toc)]


@pytest.fixture(scope="module")
def book_html(tmp_path_factory) -> Path:
    given = os.environ.get("MBUTILS_BOOK_HTML")
    if given:
        path = Path(given)
        assert (path / "index.html").exists(), f"MBUTILS_BOOK_HTML={given} holds no built book"
        return path
    real_bundle("gpqa")
    out = tmp_path_factory.mktemp("book")
    env = {**os.environ, "MBUTILS_PROFILE": "quick"}
    jb = Path(sys.executable).with_name("jupyter-book")
    start = time.perf_counter()
    proc = subprocess.run([str(jb), "build", str(REPO), "--path-output", str(out), "-W", "-n", "--keep-going"],
                          env=env, capture_output=True, text=True, timeout=3600)
    minutes = (time.perf_counter() - start) / 60
    log = proc.stdout + proc.stderr
    warnings = [line for line in log.splitlines() if "WARNING" in line and "IPKernelApp" not in line]
    assert proc.returncode == 0 and not warnings, (
        f"strict build failed (exit {proc.returncode}) after {minutes:.1f} min:\n" + "\n".join(warnings[:30])
        + "\n" + log[-3000:])
    print(f"quick book built in {minutes:.1f} min")
    return out / "_build" / "html"


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
    for prefix in EXTERNAL:
        page.route(prefix + "**", lambda route: route.abort("namenotresolved"))
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
    expected = [u for u in failed if u.startswith(EXTERNAL)]
    failed = [u for u in failed if not u.startswith(EXTERNAL)]
    if expected:  # one "failed to load" console line per blocked external request
        unresolved = [c for c in console if "ERR_NAME_NOT_RESOLVED" in c]
        console = [c for c in console if "ERR_NAME_NOT_RESOLVED" not in c] + unresolved[len(expected):]
    return {"console": console, "errors": page_errors, "failed": failed, "broken": broken,
            "images": n_images, "title": title, "shrink": shrink, "alts": alts}


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
        for kind in ("console", "errors", "failed", "broken"):
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

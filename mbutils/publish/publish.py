"""Publishing the book: its copies, the launched notebooks' install cell, and a PDF.

* :func:`build_book` builds one copy strictly (``jupyter-book build -W -n --keep-going``):
  ``default`` (solutions folded under their exercises), ``students`` (solutions removed) or
  ``instructors`` (solutions open); :mod:`mbutils.publish.sphinxext` does the work, told by
  ``MBUTILS_COPY``. ``execution_cache`` reuses another build's executed notebooks.
* :func:`launch_cell` is the first cell of the notebooks the launch buttons open (Colab has
  no ``mbutils``): it clones the repository named once in ``_config.yml`` and installs it,
  only when ``mbutils`` cannot be imported, so it does nothing on Binder or a local Jupyter.
  It is never part of the book's sources, its build or a papermill run.
* :func:`book_pdf` prints the built HTML pages with Chromium (Playwright) in the order of
  ``_toc.yml`` and joins them into one PDF; written as ``book.pdf`` beside the front page, it
  makes the front page's link to it live (:func:`show_pdf_link`), which is an inert
  ``<template>`` in a build without the PDF.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from mbutils.base.errors import MbutilsError
from mbutils.data.datapath import data_environment
from mbutils.book.plots.layout import PDF_COLUMN_PX, PDF_MARGIN_MM

BOOK_ROOT = Path(__file__).resolve().parents[2]  # the source checkout holding _config.yml
COPIES = ("default", "students", "instructors")
STRICT = ["-W", "-n", "--keep-going"]


def book_root(root: str | Path | None = None) -> Path:
    root = Path(root) if root is not None else BOOK_ROOT
    if not (root / "_config.yml").is_file() or not (root / "_toc.yml").is_file():
        raise MbutilsError(f"{root} is not the book's folder (no _config.yml and _toc.yml): run from a source checkout")
    return root


def repository(root: str | Path | None = None) -> tuple[str, str]:
    """``(url, branch)`` of ``repository:`` in ``_config.yml``: the one place the book names its repository."""
    import yaml

    config = yaml.safe_load((book_root(root) / "_config.yml").read_text(encoding="utf-8")) or {}
    repo = config.get("repository") or {}
    url = str(repo.get("url") or "").rstrip("/")
    if not re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", url):
        raise MbutilsError(f"_config.yml: repository.url must be a GitHub repository URL, got {url!r}")
    return url, str(repo.get("branch") or "main")


def toc_documents(root: str | Path | None = None) -> list[str]:
    """Document names in the order of ``_toc.yml`` (the root first)."""
    toc = (book_root(root) / "_toc.yml").read_text(encoding="utf-8")
    first = re.search(r"^root:\s*(\S+)", toc, re.M).group(1)
    return [first, *re.findall(r"file:\s*(\S+)", toc)]


# --------------------------------------------------------------------------- copies
def build_command(out: str | Path | None = None, root: str | Path | None = None) -> list[str]:
    """The strict ``jupyter-book build`` command line (with ``--path-output`` when ``out`` is given)."""
    jb = shutil.which("jupyter-book", path=str(Path(sys.executable).parent)) or "jupyter-book"
    cmd = [jb, "build", str(book_root(root))]
    if out is not None:
        cmd += ["--path-output", str(out)]
    return cmd + STRICT


def build_book(copy: str = "default", out: str | Path | None = None, *, execution_cache: str | Path | None = None,
               root: str | Path | None = None, capture: bool = False) -> subprocess.CompletedProcess:
    """Build one copy of the book strictly; the HTML lands in ``<out or root>/_build/html``.

    ``execution_cache``: the ``_build`` folder of another build of the same profile, data and
    code whose executed notebooks this build reuses instead of executing them again."""
    if copy not in COPIES:
        raise MbutilsError(f"copy must be one of {', '.join(COPIES)}, got {copy!r}")
    env = {**os.environ, **data_environment(), "MBUTILS_COPY": copy}  # the data path's folders, absolute
    if execution_cache is not None:
        cache = Path(execution_cache).expanduser().resolve()
        if not cache.is_dir():
            raise MbutilsError(f"--execution-cache {cache}: no such folder (give another build's _build folder)")
        env["MBUTILS_EXECUTION_CACHE"] = str(cache)
    else:
        env.pop("MBUTILS_EXECUTION_CACHE", None)
    return subprocess.run(build_command(out, root), env=env, text=True, capture_output=capture)


# --------------------------------------------------------------------------- launched notebooks
LAUNCH_TAG = "remove-cell"


def launch_cell(root: str | Path | None = None) -> str:
    """Source of the install cell the launched notebooks open with (see the module's docstring)."""
    url, branch = repository(root)
    return f'''# Set-up for a launched copy (Colab): install this book's package and data when they are missing.
import importlib.util, os, subprocess, sys
if importlib.util.find_spec("mbutils") is None:
    REPOSITORY, BRANCH = "{url}", "{branch}"  # repository: in the book's _config.yml
    target = os.path.abspath("mbutils-book")
    if not os.path.isdir(target):
        subprocess.run(["git", "clone", "--quiet", "--depth", "1", "--branch", BRANCH, REPOSITORY, target], check=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "-e", target + "[book]"], check=True)
    sys.path.insert(0, target)  # importable now, without restarting the kernel
    os.chdir(os.path.join(target, "chapters"))  # where the book runs its chapters'''


def launch_notebook(nb, root: str | Path | None = None):
    """``nb`` with the install cell first (tagged ``remove-cell``), unless it has one already."""
    import nbformat

    source = launch_cell(root)
    if nb.cells and nb.cells[0].get("source") == source:
        return nb
    cell = nbformat.v4.new_code_cell(source, metadata={"tags": [LAUNCH_TAG]})
    nb.cells.insert(0, cell)
    return nb


# --------------------------------------------------------------------------- PDF
#: Print layout: the page's own text only (no navigation or buttons), figures as wide as the text.
PRINT_CSS = """
.bd-header, .bd-header-article, .bd-sidebar-primary, .bd-sidebar-secondary, .bd-footer, .bd-footer-article,
.prev-next-area, .header-article-items, .sidebar-toggle, .search-button, #pst-back-to-top, .bd-footer-content,
.skip-link, .headerlink, .toggle-button { display: none !important; }
.bd-main, .bd-content, .bd-article-container, .bd-page-width, .bd-container, .bd-container__inner,
.bd-article { max-width: none !important; width: 100% !important; margin: 0 !important; padding: 0 !important; }
.mbutils-figure img, .cell_output img, figure img { width: 100% !important; max-width: 100% !important;
  height: auto !important; break-inside: avoid; }
.mbutils-figure, figure { break-inside: avoid; padding-left: 0 !important; padding-right: 0 !important;
  margin-left: 0 !important; margin-right: 0 !important; }
"""
FIGURES_JS = """() => {
  const column = document.querySelector('article.bd-article') || document.querySelector('main') || document.body;
  const width = column.getBoundingClientRect().width;
  const style = getComputedStyle(column);
  const text = width - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  const imgs = Array.from(document.querySelectorAll('.mbutils-figure img, .cell_output img'));
  // a figure's smallest text as printed: its size at the PNG's own width (data-text-pt) x the shown share of it
  const text_pt = imgs.filter(i => i.dataset.textPt && i.naturalWidth > 0)
    .map(i => parseFloat(i.dataset.textPt) * i.getBoundingClientRect().width / i.naturalWidth);
  return {column: text, figures: imgs.map(i => [i.alt || i.src, i.getBoundingClientRect().width]), text_pt};
}"""
MATHJAX_JS = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) { await MathJax.startup.promise; }
  return document.querySelectorAll('mjx-container').length;
}"""


#: The PDF's name beside the front page (the default of ``book-pdf --out``), which the front page links.
PDF_NAME = "book.pdf"
#: The front page's sentence linking the PDF (intro.md): an inert ``<template>`` (not shown, its link
#: not followed) until the PDF is there.
PDF_LINK = re.compile(r'<template class="mbutils-pdf-link">(.*?)</template>', re.S)


def show_pdf_link(html: str | Path, page: str = "intro") -> bool:
    """Make the link of the built front page (``html``/``page``.html) to :data:`PDF_NAME` live when that
    PDF is in ``html``; returns whether the page links a PDF that is there. Without the PDF, the
    page is left as built: the sentence stays an inert template, so no reader meets a missing file."""
    front = Path(html) / f"{page}.html"
    if not front.is_file() or not (Path(html) / PDF_NAME).is_file():
        return False
    text = front.read_text(encoding="utf-8")
    live = PDF_LINK.sub(lambda m: f'<span class="mbutils-pdf-link">{m.group(1)}</span>', text)
    if live != text:
        front.write_text(live, encoding="utf-8")
    return '<span class="mbutils-pdf-link">' in live


def _chromium() -> str:
    """Chromium (Debian's package), or the Chrome that GitHub's Ubuntu runners ship."""
    for name in (os.environ.get("MBUTILS_CHROMIUM"), "chromium", "google-chrome", "chromium-browser"):
        if name and (found := shutil.which(name)):
            return found
    raise MbutilsError("book-pdf prints with Chromium: apt-get install chromium (or set MBUTILS_CHROMIUM)")


def book_pdf(html: str | Path, out: str | Path, *, root: str | Path | None = None, fmt: str = "A4") -> dict:
    """Print every page of the built book (``html``: its ``_build/html``) in toc order into one PDF.

    The network is blocked (the book needs none: MathJax ships with it); each page waits for
    MathJax to typeset. Returns, per document, its page count, figures, equations, the narrowest
    figure's width as a share of the text column in the printed layout (1.0: as wide as the text),
    and the smallest text of its figures as printed (points). Written as
    :data:`PDF_NAME` into ``html``, the PDF is linked from the front page (:func:`show_pdf_link`)."""
    from playwright.sync_api import sync_playwright
    from pypdf import PdfWriter

    html = Path(html)
    docs = toc_documents(root)
    missing = [d for d in docs if not (html / f"{d}.html").is_file()]
    if missing:
        raise MbutilsError(f"{html} is not a built book: no page for {', '.join(missing[:5])}")
    out = Path(out)
    report: dict[str, dict] = {}
    writer = PdfWriter()
    flags = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
    with tempfile.TemporaryDirectory(prefix="mbutils-pdf-") as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=_chromium(), args=flags, headless=True)
        try:
            # A4 at 96 px/inch less 15 mm margins each side: the width Chromium lays the text out at
            page = browser.new_page(viewport={"width": int(PDF_COLUMN_PX), "height": 1000})
            page.route(re.compile(r"^(?!file:).*"), lambda route: route.abort())
            for i, doc in enumerate(docs):
                page.goto((html / f"{doc}.html").resolve().as_uri(), wait_until="load")
                page.add_style_tag(content=PRINT_CSS)
                page.emulate_media(media="print")
                typeset = page.evaluate(MATHJAX_JS)
                page.wait_for_timeout(100)
                sizes = page.evaluate(FIGURES_JS)
                part = Path(tmp) / f"{i:03d}.pdf"
                page.pdf(path=str(part), format=fmt, print_background=True,
                         margin={side: f"{PDF_MARGIN_MM:g}mm" for side in ("top", "bottom", "left", "right")})
                before = len(writer.pages)
                writer.append(str(part), outline_item=page.title().split(" — ")[0].strip() or doc)
                widths = [w / sizes["column"] for _, w in sizes["figures"] if sizes["column"] > 0]
                report[doc] = {"pages": len(writer.pages) - before, "figures": len(widths),
                               "narrowest_figure": min(widths) if widths else None, "math": typeset,
                               "smallest_figure_text_pt": min(sizes["text_pt"]) if sizes["text_pt"] else None}
        finally:
            browser.close()
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp_out = Path(tmp) / "book.pdf"
        with tmp_out.open("wb") as fh:
            writer.write(fh)
        shutil.move(str(tmp_out), out)
    if out.resolve() == (html / PDF_NAME).resolve():
        show_pdf_link(html, docs[0])
    return report

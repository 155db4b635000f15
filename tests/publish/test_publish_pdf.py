"""The book's PDF: the front page links it only when it is there, and book-pdf says what it wrote in
one line (the per-document report with --verbose)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import REPO
from mbutils.publish import publish
from mbutils.cli.chapters import pdf_summary

FRONT = ('<p>Every number is recomputed. <template class="mbutils-pdf-link"><a href="book.pdf">The whole book as '
         'one PDF</a> is printed from these pages (<code>python -m mbutils book-pdf</code>).</template></p>')


def test_the_front_page_source_keeps_the_pdf_link_in_an_inert_template():
    text = (REPO / "intro.md").read_text(encoding="utf-8")
    links = [line for line in text.splitlines() if "book.pdf" in line]
    assert links and all(publish.PDF_LINK.search(line) for line in links), links


def test_without_the_pdf_the_link_stays_inert(tmp_path):
    (tmp_path / "intro.html").write_text(FRONT)
    assert publish.show_pdf_link(tmp_path) is False
    assert (tmp_path / "intro.html").read_text() == FRONT  # nothing a reader can follow to a missing file


def test_with_the_pdf_beside_the_front_page_the_link_is_live(tmp_path):
    (tmp_path / "intro.html").write_text(FRONT)
    (tmp_path / "book.pdf").write_bytes(b"%PDF-1.7\n")
    assert publish.show_pdf_link(tmp_path, "intro") is True
    html = (tmp_path / "intro.html").read_text()
    assert "<template" not in html and '<span class="mbutils-pdf-link"><a href="book.pdf">' in html
    assert publish.show_pdf_link(tmp_path, "intro") is True  # a second call changes nothing
    assert (tmp_path / "intro.html").read_text() == html


def test_the_sphinx_hook_links_a_pdf_already_in_the_output_folder(tmp_path):
    from types import SimpleNamespace

    from mbutils.publish.sphinxext import _pdf_link

    (tmp_path / "intro.html").write_text(FRONT)
    app = SimpleNamespace(outdir=str(tmp_path), builder=SimpleNamespace(format="html"),
                          config=SimpleNamespace(root_doc="intro"))
    _pdf_link(app, None)
    assert "<template" in (tmp_path / "intro.html").read_text()
    (tmp_path / "book.pdf").write_bytes(b"%PDF-1.7\n")
    _pdf_link(app, None)
    assert "<template" not in (tmp_path / "intro.html").read_text()


REPORT = {"intro": {"pages": 2, "figures": 0, "narrowest_figure": None, "math": 0, "smallest_figure_text_pt": None},
          "chapters/measures": {"pages": 14, "figures": 6, "narrowest_figure": 1.0, "math": 40,
                                "smallest_figure_text_pt": 9.12}}


def test_book_pdf_says_what_it_wrote_in_one_line(tmp_path):
    out = tmp_path / "book.pdf"
    out.write_bytes(b"x" * 2_400_000)
    line = pdf_summary(REPORT, out)
    assert "\n" not in line
    assert line == f"wrote {out}: 16 pages (2 documents, 6 figures, smallest figure text 9.1 pt), 2.4 MB"


def test_book_pdf_prints_the_report_only_when_asked(tmp_path, monkeypatch, capsys):
    """The command's handler, with the printing (Chromium) replaced by a stub that writes a file."""
    from argparse import Namespace

    from mbutils.cli.chapters import cmd_book_pdf

    def fake_book_pdf(html, out):
        Path(out).write_bytes(b"%PDF-1.7\n" * 1000)
        return REPORT

    monkeypatch.setattr(publish, "book_pdf", fake_book_pdf)
    assert cmd_book_pdf(Namespace(html=str(tmp_path), out=str(tmp_path / "a.pdf"), force=False, verbose=False)) == 0
    out = capsys.readouterr().out
    assert len(out.splitlines()) == 1 and out.startswith(f"wrote {tmp_path / 'a.pdf'}: 16 pages")
    assert cmd_book_pdf(Namespace(html=str(tmp_path), out=str(tmp_path / "b.pdf"), force=False, verbose=True)) == 0
    out = capsys.readouterr().out
    assert json.loads(out[: out.rindex("}") + 1]) == REPORT and out.splitlines()[-1].startswith("wrote")

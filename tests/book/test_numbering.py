"""Figures and tables are numbered per chapter and cited through glued references."""

from __future__ import annotations

import matplotlib
import pandas as pd
import pytest

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402

from conftest import REPO  # noqa: E402
from mbutils import book  # noqa: E402
from mbutils.book import numbering  # noqa: E402


def test_chapter_numbers_follow_the_table_of_contents():
    docs = numbering.toc_documents()
    assert docs[0] == "chapters/reading" and numbering.chapter_number("reading") == 1
    assert numbering.chapter_number("measures") == docs.index("chapters/measures") + 1
    assert numbering.chapter_number("no-such-chapter") is None
    toc = (REPO / "_toc.yml").read_text()
    assert toc.count("numbered: true") == toc.count("- caption:"), "every part is numbered, as the numbers assume"


def test_reference_text_spells_single_ranges_and_lists():
    book.chapter("measures")
    n = numbering.chapter_number("measures")
    assert numbering.reference_text("figure", [2]) == f"Figure {n}.2"
    assert numbering.reference_text("figure", [2, 3, 4]) == f"Figures {n}.2–{n}.4"
    assert numbering.reference_text("table", [1, 3, 5]) == f"Tables {n}.1, {n}.3 and {n}.5"


def _figure():
    fig = Figure(figsize=(3, 2))
    fig.add_subplot().plot([0, 1], [1, 0])
    return fig


def test_figures_and_tables_count_separately_with_labelled_anchors():
    book.chapter("sel_random")
    n = numbering.chapter_number("sel_random")
    first = book.display.render_figure(_figure(), "A line.", label="line")
    second = book.display.render_figure(_figure(), "Another line.")
    assert f"<b>Figure {n}.1.</b>" in first and 'id="fig-line"' in first
    assert f"<b>Figure {n}.2.</b>" in second and f'id="fig-{n}-2"' in second
    assert numbering.next_number("table", "mdad") == (f"{n}.1", "tab-mdad")
    assert numbering.ref("line") == f'<a href="#fig-line" class="mbutils-ref">Figure {n}.1</a>'
    with pytest.raises(ValueError, match="no figure labelled 'nothing'"):
        numbering.ref("nothing")
    with pytest.raises(ValueError, match="lower-case letters"):
        numbering.next_number("figure", "Bad Label")


def test_a_page_without_a_chapter_name_numbers_plainly():
    numbering._page = numbering._Page()
    assert numbering.next_number("figure") == ("1", "fig-1")


def test_a_series_in_one_cell_is_glued_once_and_a_reused_label_is_refused():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    glued = []
    shell.push({"glued": glued})
    try:
        setup = shell.run_cell(
            "from mbutils import book\nimport myst_nb, pandas as pd\n"
            "myst_nb.glue = lambda key, value, display=True: glued.append((key, value._repr_markdown_(), repr(value)))\n"
            "book.chapter('bench_gpqa')\n")
        assert setup.success, setup.error_in_exec
        loop = shell.run_cell("for i in range(3):\n    book.table(pd.DataFrame({'x': [i]}), label='per-run')\n")
        assert loop.success, loop.error_in_exec
        n = numbering.chapter_number("bench_gpqa")
        assert glued == [("tab-per-run", f'<a href="#tab-per-run" class="mbutils-ref">Tables {n}.1–{n}.3</a>',
                          repr(f"Tables {n}.1–{n}.3"))]
        again = shell.run_cell("book.table(pd.DataFrame({'x': [0]}), label='per-run')")
        assert isinstance(again.error_in_exec, ValueError) and "earlier cell" in str(again.error_in_exec)
    finally:
        InteractiveShell.clear_instance()

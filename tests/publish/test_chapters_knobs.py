"""A teacher changes a figure by editing a knob in the chapter, not the package."""

from __future__ import annotations

import os
import re

import nbformat

from mbutils.publish.chapters import chapter_path, run_chapter

SMALL = {"data": "synthetic-gpqa", "runs": 2, "sizes": "10,25", "sources": 60, "targets": 12, "seed": 0,
         "selectors": "random,subtask_equal", "source_counts": "20,60", "source_runs": 1}


def _agreement_figure(html_path):
    nb = nbformat.read(html_path.with_suffix(".ipynb"), as_version=4)
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            text = out.get("data", {}).get("text/html", "")
            if 'id="fig-agreement"' in text:
                return text
    raise AssertionError("no agreement figure on the page")


def test_editing_the_bin_width_knob_in_the_chapter_changes_the_figure(tmp_path):
    os.environ.setdefault("MBUTILS_JOBS", "1")
    text = chapter_path("bench_gpqa").read_text(encoding="utf-8")
    knob = "curve_bin_width = 1.0"
    assert knob in text, "the agreement figure's bin width is a parameter of the chapter"
    edited = tmp_path / "bench_gpqa.md"
    edited.write_text(text.replace(knob, "curve_bin_width = 2.0"), encoding="utf-8")
    before = _agreement_figure(run_chapter("bench_gpqa", SMALL, tmp_path / "before", profile="quick"))
    after = _agreement_figure(run_chapter(edited, SMALL, tmp_path / "after", profile="quick"))
    assert "(1-point bins)" in before and "(2-point bins)" in after
    image = re.compile(r'src="data:image/png;base64,([^"]+)"')
    assert image.search(before).group(1) != image.search(after).group(1), "the figure did not change"

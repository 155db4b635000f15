"""Parameters cells fit the page: no comment runs past 88 characters (the HTML cuts longer lines), and a
comment wrapped onto the lines above its parameter (``# name: ...``) is still that parameter's help."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mbutils.publish.chapters import chapter_parameters

CHAPTERS = Path(__file__).resolve().parents[2] / "chapters"
WIDTH = 88


def parameters_cell(path: Path) -> str | None:
    cells = re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", path.read_text(encoding="utf-8"), re.S)
    return next((c for c in cells if ":tags: [parameters]" in c), None)


@pytest.mark.parametrize("page", sorted(p.stem for p in CHAPTERS.glob("*.md") if parameters_cell(p)))
def test_parameter_comments_fit_the_page(page):
    long = [line for line in parameters_cell(CHAPTERS / f"{page}.md").splitlines() if "#" in line and len(line) > WIDTH]
    assert not long, f"{page}: wrap these onto '# name: ...' lines above the parameter: {long}"


def test_a_wrapped_comment_is_the_parameters_help(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("---\njupytext:\n  text_representation:\n    format_name: myst\nkernelspec:\n  name: python3\n"
                    "  display_name: Python 3\n---\n\n# T\n\n```{code-cell}\n:tags: [parameters]\n\n"
                    "# Parameters: a header\n# data: the bundle, or\n# a folder\ndata = 'x'\nruns = 3  # runs\n"
                    "# a stray note\nseed = 0\n```\n")
    params = chapter_parameters(page)
    assert params["data"]["help"] == "the bundle, or a folder"
    assert params["runs"]["help"] == "runs" and params["seed"]["help"] == ""

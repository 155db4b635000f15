"""What a reader reads holds no identifier of the package: the chapters' prose (outside code, inline code,
math and roles) names no parameter of its page and no shipped bundle by its folder name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mbutils.base.errors import MbutilsError
from mbutils.publish.chapters import chapter_parameters

CHAPTERS = Path(__file__).resolve().parents[2] / "chapters"
BUNDLE_IDS = ("bbh-leaderboard", "mmlu-pro-leaderboard", "mmlu-pro-tiger-lab", "gpqa-leaderboard")


def prose(text: str) -> str:
    """A MyST page's reading text: fenced blocks, directives' options, inline code, math, roles, labels,
    comments and link targets removed."""
    text = re.sub(r"^(`{3,}|~{3,})[^\n]*\n.*?^\1\s*$", " ", text, flags=re.S | re.M)  # fenced blocks
    text = re.sub(r"^---\n.*?\n---\n", " ", text, flags=re.S)                          # front matter
    text = re.sub(r"\$\$.*?\$\$|\$[^$\n]+\$", " ", text, flags=re.S)                    # math
    text = re.sub(r"\{[\w:-]+\}`[^`]*`", " ", text)                                    # roles
    text = re.sub(r"`[^`]*`", " ", text)                                               # inline code
    text = re.sub(r"^\([\w-]+\)=\s*$|^%.*$", " ", text, flags=re.M)                    # labels, comments
    text = re.sub(r"\]\([^)]*\)", "]", text)                                           # link targets
    return text


def offending(text: str, names) -> list[str]:
    words = prose(text)
    return sorted({n for n in names if re.search(rf"(?<![\w./-]){re.escape(n)}(?![\w/-])", words)})


@pytest.mark.parametrize("page", sorted(p.stem for p in CHAPTERS.glob("*.md")))
def test_the_prose_names_no_parameter_and_no_bundle_folder(page):
    path = CHAPTERS / f"{page}.md"
    try:
        params = [n for n in chapter_parameters(path) if "_" in n]  # one-word parameters (data, runs) are words too
    except MbutilsError:  # a plain Markdown page: no parameters
        params = []
    found = offending(path.read_text(encoding="utf-8"), [*params, *BUNDLE_IDS])
    assert not found, f"{page}: the prose names {found}; write what they mean, or put a name to type in `code`"


def test_the_scan_sees_a_name_in_prose_and_not_in_code():
    text = "Set `example_gap` in the cell.\n\nThe example_gap is 2.\n\n```{code-cell}\nexample_gap = 2\n```\n"
    assert offending(text, ["example_gap"]) == ["example_gap"]
    assert offending(text.replace("The example_gap is 2.", "The gap is 2."), ["example_gap"]) == []

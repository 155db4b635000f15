"""Every term a page defines in bold has a glossary entry.

A page defines a term when it writes it in bold in its prose (``**term**``, code left out). Bold
is also the book's run-in heading and its emphasis; those phrases are listed in
:data:`NOT_TERMS`, each once, so a new bold phrase must be either a glossary entry (under its
name, its name without a leading "the" or a plural "s", or an alias in :data:`ALIASES`) or a
deliberate addition to that list."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

CHAPTERS = Path(__file__).resolve().parents[2] / "chapters"
#: bold phrase (lower case) -> the glossary entry that defines it under another name.
ALIASES = {
    "irt": "item response theory",
    "synthetic stand-in": "stand-in",
    "subtask-stratified random sampling": "subtask-stratified sampling",
    "discordant counts": "discordant items",
    "random sampling's mdad": "mdad",
    "target's confidence": "confidence",
    "pointwise": "pointwise interval",
}
#: Bold phrases that are headings or emphasis, not terms (run-in headings end with . or : too).
NOT_TERMS = {
    ", then", "compare with the noise rule", "exercises", "homework", "how the simulator works", "import",
    "in class", "objectives", "prerequisites", "random sampling, exactly", "reading before class",
    "optional", "same benchmark, another model pool", "same data, same protocol",
    "the book picks it up", "the models file",
    "with source models", "criterion", "estimator", "update", "the protocol", "two splits",
    "three estimators of one random sample", "time and disk per model",
    # the noise rule's verdicts and reasons on measures, named in bold where the rule states them
    "catches up", "lower", "paired", "unpaired", "within noise", "too few models", "too few runs",
    "too few target pairs",
    # the options of conceptual questions, a worked number, and the teaching page's assessment parts
    "a", "b", "16 points", "checks (60%)", "conceptual questions (10%)", "written answers (30%)",
}


def glossary_terms() -> set[str]:
    text = (CHAPTERS / "glossary.md").read_text(encoding="utf-8")
    block = re.search(r"```\{glossary\}\n(.*?)```", text, flags=re.S).group(1)
    return {line.strip().lower() for line in block.splitlines() if line.strip() and not line.startswith(" ")}


def bold_phrases(text: str) -> set[str]:
    """Bold phrases of a page's prose, lower case, a closing '.' or ':' dropped."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return {b.strip().lower().rstrip(".:").strip() for b in re.findall(r"\*\*([^*\n]+?)\*\*", text)}


def entry_for(phrase: str, terms: set[str]) -> str | None:
    for name in (phrase, ALIASES.get(phrase, ""), re.sub(r"^the ", "", phrase)):
        for candidate in (name, name[:-1] if name.endswith("s") else name):
            if candidate in terms:
                return candidate
    return None


def test_the_glossary_reader_finds_entries_and_a_term_under_its_variants():
    terms = glossary_terms()
    assert {"mdad", "pairwise agreement", "projection dpp", "power"} <= terms
    assert entry_for("the projection dpp", terms) == "projection dpp"
    assert entry_for("medoids", terms) == "medoid" and entry_for("irt", terms) == "item response theory"
    assert entry_for("no such term", terms) is None


@pytest.mark.parametrize("page", sorted(p.stem for p in CHAPTERS.glob("*.md") if p.stem != "glossary"))
def test_every_term_a_page_defines_in_bold_is_in_the_glossary(page):
    terms = glossary_terms()
    phrases = bold_phrases((CHAPTERS / f"{page}.md").read_text(encoding="utf-8")) - NOT_TERMS
    missing = sorted(p for p in phrases if entry_for(p, terms) is None)
    assert not missing, f"chapters/{page}.md defines {missing} in bold: add a glossary entry (chapters/glossary.md), " \
                        "or, for a heading or emphasis, list it in NOT_TERMS here"


def test_every_listed_non_term_is_still_bold_somewhere():
    used = set().union(*(bold_phrases(p.read_text(encoding="utf-8")) for p in CHAPTERS.glob("*.md")))
    assert not NOT_TERMS - used, f"no page writes {sorted(NOT_TERMS - used)} in bold any more: drop them"

"""The course apparatus: every chapter states objectives and prerequisites and closes with key
takeaways; every citation resolves; every term is in the glossary; the notation page's retired
symbols stay retired; the teaching page's sessions fit 90 minutes of class."""

from __future__ import annotations

import re

import pytest

from conftest import REPO
from mbutils.book.numbering import toc_documents

#: Reference pages: looked up, not read through, so they carry no objectives or takeaways.
REFERENCE_PAGES = {"notation", "api", "glossary", "references"}
#: A chapter whose apparatus is still to come (none today); a name here is exempt from the checks.
PENDING: set[str] = set()

CHAPTERS = [d.split("/")[-1] for d in toc_documents()]
TAUGHT = [c for c in CHAPTERS if c not in REFERENCE_PAGES | PENDING]


def _source(name: str) -> str:
    return (REPO / "chapters" / f"{name}.md").read_text(encoding="utf-8")


def _box(text: str, title: str) -> re.Match | None:
    return re.search(rf"^```\{{admonition\}} {title}\n:class: [a-z]+\n(.*?)^```$", text, re.S | re.M)


@pytest.mark.parametrize("name", TAUGHT)
def test_every_chapter_opens_with_objectives_and_prerequisites_and_closes_with_takeaways(name):
    text = _source(name)
    objectives, prerequisites, takeaways = (_box(text, t) for t in ("Objectives", "Prerequisites", "Key takeaways"))
    assert objectives and prerequisites and takeaways, f"{name}: objectives, prerequisites and key takeaways"
    first_section = re.search(r"^## ", text, re.M)
    first_code = text.find("```{code-cell}")
    opening = min(i for i in (first_section.start() if first_section else len(text),
                              first_code if first_code >= 0 else len(text)))
    assert objectives.end() < prerequisites.start() < opening, f"{name}: objectives, then prerequisites, open the page"
    assert len(re.findall(r"^- ", objectives.group(1), re.M)) >= 2, f"{name}: at least two objectives"
    assert "{doc}`notation`" in prerequisites.group(1), f"{name}: the prerequisites link the notation page"
    if name != "reading":
        assert re.search(r"\{doc\}`(?!notation`)", prerequisites.group(1)), f"{name}: no chapter it builds on"
    sections = [m.start() for m in re.finditer(r"^## (?!Exercises$).*$", text, re.M)]
    exercises = re.search(r"^## Exercises$", text, re.M)
    assert all(s < takeaways.start() for s in sections), f"{name}: the key takeaways close the chapter's text"
    if exercises:
        assert takeaways.end() < exercises.start(), f"{name}: key takeaways come before the exercises"
    body = takeaways.group(1)
    for line in re.findall(r"^- (.*)$", body, re.M):
        bare = re.sub(r"\{[a-z:]+\}`[^`]*`|\$[^$]*\$|`[^`]*`|0/1|95%", "", line)
        numbers = re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])", bare)
        # a number in a takeaway is glued, a setting of the method or of a glued count (0.5-point
        # bins, thresholds, a 2-point gap, 90-minute sessions), or the paper's, cited
        allowed = {"0.5", "0.7", "0.8", "0.9", "90", "1", "2"}
        assert set(numbers) <= allowed or "{cite:" in line, f"{name}: a takeaway states {numbers} without glue: {line}"


def _bib_keys() -> set[str]:
    return set(re.findall(r"^@\w+\{([^,]+),", (REPO / "references.bib").read_text(encoding="utf-8"), re.M))


def _pages() -> dict[str, str]:
    pages = {p.stem: p.read_text(encoding="utf-8") for p in sorted((REPO / "chapters").glob("*.md"))}
    pages["intro"] = (REPO / "intro.md").read_text(encoding="utf-8")
    return pages


def test_every_citation_key_resolves_and_every_entry_is_cited():
    keys = _bib_keys()
    cited = set()
    for name, text in _pages().items():
        for group in re.findall(r"\{cite(?::[a-z]+)?\}`([^`]+)`", text):
            for key in (k.strip() for k in group.split(",")):
                assert key in keys, f"{name} cites {key!r}, which references.bib does not hold"
                cited.add(key)
    assert keys <= cited, f"references.bib holds works no page cites: {sorted(keys - cited)}"


def test_adaptive_testing_sources_are_cited_not_named_in_plain_text():
    text = _source("adaptive")
    for key in ("vanderlinden1999", "segall1996", "kingsbury1989", "lord1980"):
        assert key in text, f"the adaptive chapter does not cite {key}"
    prose = re.sub(r"```\{code-cell\}.*?```", "", text, flags=re.S)
    assert not re.search(r"\((?:Lord|Segall|Kingsbury)[^)]*\d{4}\)|van der Linden, 1999", prose)
    assert prose.count("$$") >= 6, "the update, the criterion and the estimator as displayed equations"


def test_related_work_cites_the_neighbouring_literature():
    text = _source("related")
    for key in ("card2020power", "miller2024errorbars", "madaan2024variance", "rodriguez2021leaderboards",
                "kipnis2024metabench", "perlitz2024efficient"):
        assert f"{key}`" in text or f"{key}," in text, f"related work does not cite {key}"


def _glossary_terms() -> set[str]:
    block = re.search(r"```\{glossary\}\n(.*?)^```", _source("glossary"), re.S | re.M).group(1)
    return {line.strip().lower() for line in block.splitlines() if line and not line.startswith(" ")}


def test_every_term_used_is_in_the_glossary_and_the_index_has_every_term():
    terms = _glossary_terms()
    for name, text in _pages().items():
        for term in re.findall(r"\{term\}`([^`<]+?)(?:\s*<([^>]+)>)?`", text):
            used = (term[1] or term[0]).strip().lower()
            assert used in terms, f"{name} uses the term {used!r}, which the glossary does not define"
    assert len(terms) >= 40, f"the glossary (and so the index) holds only {len(terms)} terms"


#: Symbols the notation page retired (one symbol per idea), as they were written before.
RETIRED = {
    r"_\{ab\}": "a pair of models is (m, m'); a and b are discordant counts",
    r"K_\{ii\}|K_ii|n·K": "the DPP weight is w_j = 1/(N K_jj)",
    r"\\theta_i\b|y_\{ij\}": "models are m, items j",
    r"A\(\\beta\) \\ge \\theta": "the agreement threshold is gamma; theta is an ability",
    r"⌊k/S⌋": "L subtasks; S is the set of chosen items",
}


def test_retired_symbols_stay_retired():
    for name, text in _pages().items():
        if name in PENDING:
            continue
        for pattern, why in RETIRED.items():
            assert not re.search(pattern, text), f"{name}: {pattern} ({why})"


def test_notation_page_defines_each_symbol_once():
    rows = [r for r in re.findall(r"^\| (\$[^|]+\$|[A-Za-z]+) \|", _source("notation"), re.M) if r != "symbol"]
    symbols = [s for row in rows for s in re.split(r",\s*", row.strip())]
    assert len(symbols) == len(set(symbols)), f"a symbol defined twice: {sorted(s for s in symbols if symbols.count(s) > 1)}"
    for must in ("$N$", "$k$", "$n$", "$a$", "$b$", "MDAD", "$\\tau_b$", "$K$", "$a_j$", "$b_j$", "$\\theta_m$"):
        assert must in symbols, f"the notation page does not define {must}"


def test_teaching_sessions_fit_ninety_minutes_and_mark_what_is_optional():
    text = _source("teaching")
    sessions = re.split(r"^### Session \d+ — ", text, flags=re.M)[1:]
    assert len(sessions) >= 5
    for session in sessions:
        title = session.splitlines()[0]
        in_class = re.search(r"\*\*In class\*\* \(90 minutes\):(.*?)(?=^- \*\*)", session, re.S | re.M)
        assert in_class, f"session {title!r}: no in-class plan of 90 minutes"
        assert "optional" not in in_class.group(1), f"session {title!r}: an optional exercise in class"
        minutes = sum(int(m) for m in re.findall(r"\((\d+) min\)", in_class.group(1)))
        assert 75 <= minutes <= 90, f"session {title!r}: the in-class plan adds up to {minutes} minutes"
        assert re.search(r"\*\*Objectives:\*\*", session) and re.search(r"\*\*Reading before class", session)
        assert re.search(r"\*\*Homework:\*\*", session), f"session {title!r}: no homework"
    labels = set(re.findall(r"\{ref\}`(ex-[^`]+)`", text))
    for label in labels:  # every exercise the page names has a time
        assert re.search(rf"\{{ref\}}`{label}`[^;()]*\((\d+) min", text), f"{label} has no time estimate"

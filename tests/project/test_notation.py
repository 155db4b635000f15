"""Every symbol a chapter writes in math is on the notation page, or is a local one, listed here with
the page that defines it where it uses it (the notation page allows that for a symbol of one page).

A symbol is a Latin letter or a Greek or other command, read from the chapter's ``$...$`` and
``$$...$$`` spans outside code; subscripts and superscripts are indices and are left out, as are
operators and layout commands (:data:`NOT_SYMBOLS`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

CHAPTERS = Path(__file__).resolve().parents[2] / "chapters"
NOT_SYMBOLS = {
    r"\sum", r"\prod", r"\frac", r"\tfrac", r"\dfrac", r"\sqrt", r"\lvert", r"\rvert", r"\lVert", r"\rVert",
    r"\dots", r"\ldots", r"\cdots", r"\cdot", r"\le", r"\ge", r"\leq", r"\geq", r"\in", r"\notin", r"\top",
    r"\log", r"\exp", r"\min", r"\max", r"\arg", r"\det", r"\approx", r"\left", r"\right", r"\Bigl", r"\Bigr",
    r"\bigl", r"\bigr", r"\big", r"\Big", r"\mid", r"\quad", r"\qquad", r"\times", r"\lfloor", r"\rfloor", r"\lceil", r"\rceil",
    r"\hat", r"\bar", r"\tilde", r"\infty", r"\pm", r"\neq", r"\ne", r"\to", r"\binom", r"\sim", r"\propto",
    r"\subseteq", r"\subset", r"\setminus", r"\cup", r"\cap", r"\begin", r"\end", r"\mathbb", r"\mathcal",
    r"\mathbf", r"\boldsymbol", r"\displaystyle", r"\langle", r"\rangle", r"\equiv", r"\partial", r"\nabla",
    r"\operatorname", r"\mathrm", r"\text",
    "e",   # Euler's number
    "R",   # the reals, \mathbb R
}
#: symbol -> {page: what it is there}: one page's own symbols, defined in its text where used.
LOCAL = {
    "x": {"sel_irt": "the logistic function's argument"},
    "Q": {"sel_diversity": "the orthonormal factor of the monomial matrix"},
    "F": {"sel_diversity": "the monomials evaluated at the items"},
    "B": {"data": "the number of benchmarks a bundle's models are spread over"},
    r"\ell": {"data": "a benchmark's index in that sum"},
    "X": {"measures": "the correct answers a random k-subset holds",
          "use_micro": "the first model's discordant items a k-subset holds"},
    "Y": {"use_micro": "the second model's discordant items a k-subset holds"},
    "r": {"synthetic": "a correlation"},
}


def _math(text: str) -> list[str]:
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    spans = re.findall(r"\$\$(.+?)\$\$", text, flags=re.S)
    text = re.sub(r"\$\$(.+?)\$\$", "", text, flags=re.S)
    return spans + re.findall(r"(?<![\\$])\$([^$\n]+?)\$", text)


def symbols(span: str) -> set[str]:
    """The symbols of one math span (indices, text and operators left out)."""
    span = re.sub(r"\\(?:mathrm|text|operatorname)\{[^}]*\}", "", span)
    for _ in range(2):  # indices nest once at most: y_{j_r}
        span = re.sub(r"[_^](?:\{[^{}]*\}|\\[A-Za-z]+|[A-Za-z0-9'])", "", span)
    return {t for t in re.findall(r"\\[A-Za-z]+|[A-Za-z]", span) if t not in NOT_SYMBOLS}


def _on_notation_page() -> set[str]:
    rows = [line.split("|")[1] for line in (CHAPTERS / "notation.md").read_text().splitlines()
            if line.startswith("| $")]
    return set().union(*(symbols(s) for row in rows for s in _math(row)))


def test_the_symbol_reader_keeps_symbols_and_drops_indices_and_operators():
    assert symbols(r"\hat s_m = \frac1N \sum_{j \in S} y_{mj} / \pi_j") == {"s", "N", "y", r"\pi"}
    assert symbols(r"\tau_b") == {r"\tau"} and symbols(r"\Phi^{-1}(\gamma)") == {r"\Phi", r"\gamma"}


@pytest.mark.parametrize("page", sorted(p.stem for p in CHAPTERS.glob("*.md") if p.stem != "notation"))
def test_every_symbol_of_a_page_is_on_the_notation_page_or_local_to_it(page):
    known = _on_notation_page()
    used = set().union(set(), *(symbols(s) for s in _math((CHAPTERS / f"{page}.md").read_text())))
    missing = sorted(s for s in used - known if page not in LOCAL.get(s, {}))
    assert not missing, f"chapters/{page}.md uses {missing} in math: add them to chapters/notation.md, or " \
                        "define them where used and list them in LOCAL here"


def test_the_local_list_holds_only_symbols_still_used_there():
    for symbol, pages in LOCAL.items():
        for page in pages:
            used = set().union(set(), *(symbols(s) for s in _math((CHAPTERS / f"{page}.md").read_text())))
            assert symbol in used, f"{symbol} is no longer used on {page}: drop it from LOCAL"

"""The book's one display-name map, and one colour, line style and marker per selector.

Every figure and table reads its names here: selectors (:func:`label`), table columns
(:func:`column_label`), target sets (:func:`target_set_label`) and booleans
(:func:`yes_no`), all reachable through :func:`display_name`; :func:`count_noun` writes
"1 run" / "3 runs" so no page says "1 runs", and :func:`possessive` "Anchor Points'", not
"Anchor Points's". It imports nothing but the standard library,
so any layer may.

The styles are built to survive a greyscale print: families (a method and its variants)
share a hue and a marker, members of a family differ in line style, and members that
could still be confused differ in lightness (CIE L*) by a clear margin. The hues are
:data:`PALETTE`'s, eight colours told apart with deuteranopia and protanopia too.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True)
class SelectorStyle:
    """How a selector looks in every figure and table of the book."""

    label: str
    color: str
    linestyle: str = "-"
    marker: str = "o"
    #: Selectors of one family share a hue and a marker; their line styles tell them apart.
    family: str = ""


def _family(name: str, members: Sequence[tuple[str, str, str, str, str]], marker: str) -> dict:
    """The styles of one family: (selector, label, colour, linestyle, marker or '')."""
    return {sel: SelectorStyle(lab, color, ls, mk or marker, name) for sel, lab, color, ls, mk in members}


#: The book's eight series colours: the Okabe-Ito hues (black, blue, vermillion, bluish green,
#: reddish purple, orange, sky blue) and a wine, each darkened or lightened until every two of them
#: differ by at least 16 CIEDE2000 units under normal vision and under simulated deuteranopia and
#: protanopia (Machado et al. 2009), and all but orange and sky blue keep a 3:1 contrast with the white
#: page. Lightness alone cannot tell eight colours apart in greyscale, so every series also has its
#: own marker, and series whose CIE L* differ by less than 20 never share a line style
#: (:data:`mbutils.book.plots.base.SERIES_STYLES`; tests/book/test_plots_legibility.py checks all of it).
PALETTE = {"blue": "#005b8e", "vermillion": "#b55000", "green": "#008662", "purple": "#c2739f",  # L* 37 46 49 58
           "orange": "#e69f00", "sky": "#5eb8ea", "wine": "#6d1b44", "black": "#000000"}       # L* 71 71 25 0

#: The one place where selectors get their names and looks. Each family (a method and its variants)
#: has a colour of :data:`PALETTE` and one marker of its own; its members differ in line style, and
#: members that share a line style or a marker differ in lightness by at least 20 L* (in comments).
#: Subtask 'proportional' is a violet, not a lighter wine: that would be Diversity's purple.
STYLES: dict[str, SelectorStyle] = {
    **_family("random", [
        ("random", "Random", PALETTE["black"], "-", ""),                                # L* 0
        ("random_regression", "Random + regression", "#444444", "--", ""),           # L* 29
        ("random_difference", "Random + difference (AIPW)", "#777777", ":", ""),      # L* 50
    ], "o"),
    **_family("subtask", [
        ("subtask_equal", "Random, subtask-stratified", PALETTE["wine"], "-", "s"),  # L* 25
        ("subtask_equal_weighted", "Subtask-stratified, reweighted", PALETTE["wine"], "--", "s"),
        ("subtask_proportional", "Random, subtask 'proportional'", "#8068f8", "-", "D"),  # L* 53
        ("subtask_proportional_weighted", "Subtask 'proportional', reweighted", "#8068f8", "--", "D"),
    ], "s"),
    **_family("confidence", [("confidence_stratified", "Confidence strata", PALETTE["green"], "-", "")], "^"),
    **_family("diversity", [
        ("diversity", "Diversity (DPP)", PALETTE["purple"], "-", ""),                  # L* 58
        ("diversity_weighted", "Diversity (DPP), weighted", "#6b3f57", "--", ""),     # L* 33
    ], "v"),
    **_family("anchor", [
        ("anchor_points", "Anchor Points", PALETTE["vermillion"], "-", ""),            # L* 46
        ("anchor_points_binary", "Anchor Points (0/1)", "#642c00", "--", ""),         # L* 25
    ], "P"),
    **_family("tinybenchmarks", [
        ("tinybenchmarks", "tinyBenchmarks", PALETTE["blue"], "-", ""),                # L* 37
        ("tinybenchmarks_irt", "tinyBenchmarks IRT", PALETTE["sky"], "--", ""),       # L* 71
        ("tinybenchmarks_pirt", "tinyBenchmarks p-IRT", PALETTE["sky"], ":", ""),
        ("tinybenchmarks_gpirt", "tinyBenchmarks gp-IRT", "#002940", "-.", ""),       # L* 15
    ], "X"),
    **_family("adaptive", [
        ("adaptive_fisher", "Adaptive (max. information)", PALETTE["orange"], "-", ""),  # L* 71
        ("adaptive_randomesque", "Adaptive, randomesque", "#966700", "--", ""),       # L* 47
        ("adaptive_pirt", "Adaptive p-IRT", "#4e3600", ":", ""),                      # L* 25
    ], "*"),
}

_EXTRA_COLORS = ("#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#9467bd")


def style(selector: str) -> SelectorStyle:
    """The style of a selector; unknown names get a stable colour and their own name."""
    if selector in STYLES:
        return STYLES[selector]
    color = _EXTRA_COLORS[zlib.crc32(selector.encode()) % len(_EXTRA_COLORS)]
    return SelectorStyle(selector, color, "-", "o", selector)


def label(selector: str) -> str:
    """Display name of a selector (the same in every figure and table)."""
    return style(selector).label


def palette(selectors: Sequence[str]) -> dict[str, str]:
    """Display name -> colour, for seaborn's ``palette=`` with ``hue`` on display names."""
    return {label(s): style(s).color for s in selectors}


# ----------------------------------------------------------------- table columns
#: Columns whose name does not read well word by word.
COLUMN_LABELS: dict[str, str] = {"mdad": "MDAD", "size": "k"}
#: Words of snake_case column names, spelled for readers ('n' leading a name is dropped:
#: ``n_pairs`` is "pairs").
_WORDS = {"ci": "CI", "sd": "s.d.", "tau": "τ", "mdad": "MDAD", "kl": "KL", "ks": "KS", "irt": "IRT"}
_IDENTIFIER = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*")


def column_label(column) -> str:
    """Display header of a table column: ``run_ci_low`` -> "run CI low", ``tau_sd`` -> "τ s.d.",
    ``n_pairs`` -> "pairs". Headers already written for readers (spaces, capitals) are kept."""
    if not isinstance(column, str) or not _IDENTIFIER.fullmatch(column):
        return column
    if column in COLUMN_LABELS:
        return COLUMN_LABELS[column]
    words = column.split("_")
    if words[0] == "n" and len(words) > 1:
        words = words[1:]
    return " ".join(_WORDS.get(w, w) for w in words)


def target_set_label(name: str) -> str:
    """Display name of a target set: ``7b_instruct`` -> "7B instruct", ``70b_base`` -> "70B base"."""
    words = str(name).split("_")
    return " ".join(w.upper() if re.fullmatch(r"\d+(\.\d+)?[bm]", w) else w for w in words)


def yes_no(value) -> str:
    """A boolean as a table reads it: "yes" / "no"."""
    return "yes" if bool(value) else "no"


_NAMERS = {"selector": label, "column": column_label, "target_set": target_set_label, "bool": yes_no}


def display_name(kind: str, value) -> str:
    """The display name of ``value``: ``kind`` is 'selector', 'column', 'target_set' or 'bool'."""
    if kind not in _NAMERS:
        raise ValueError(f"unknown kind of name {kind!r}; use one of {', '.join(_NAMERS)}")
    return _NAMERS[kind](value)


def possessive(name: str) -> str:
    """``name``'s possessive: "Random's", but "Anchor Points'" for a name that ends in s."""
    name = str(name)
    return name + ("'" if name.endswith("s") else "'s")


def count_noun(count, noun: str, plural: str | None = None) -> str:
    """``count`` and the noun in the right number: "1 run", "3 runs", "1,000 items".

    Irregular plurals are given, never guessed: ``count_noun(2, "child", "children")``.
    """
    number = f"{int(count):,}" if float(count).is_integer() else f"{count:g}"
    return f"{number} {noun if count == 1 else (plural or noun + 's')}"


# ------------------------------------------------------------------ MDAD confidence bounds
#: Marks a lower CI bound shown as 0 although the paper's symmetric interval reaches below it.
CI_FLOOR_MARK = "*"
CI_FLOOR_NOTE = (f"{CI_FLOOR_MARK} lower bound of the symmetric 95% CI below 0 points, shown as 0 "
                 "(an MDAD is never negative).")


def ci_bound_text(value: float, digits: int = 2, *, lower: bool = False) -> str:
    """A finite MDAD or CI bound as tables write it (rounded, no '-0'); a lower bound below 0
    reads '0*' (:data:`CI_FLOOR_MARK`, explained by :data:`CI_FLOOR_NOTE`)."""
    value = round(float(value), digits) + 0.0  # + 0.0: no '-0'
    if lower and value < 0:
        return f"0{CI_FLOOR_MARK}"
    return f"{value:g}"


def ci_floored(text: str) -> bool:
    """Whether a cell written by :func:`ci_bound_text` is a floored lower bound (needs the note)."""
    return isinstance(text, str) and text.endswith(CI_FLOOR_MARK)

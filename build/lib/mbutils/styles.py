"""One display name, colour, line style and marker per selector, for every figure and table.

Reports (tables with display names) and plots both read it; it imports nothing but the
standard library, so any layer may.
"""

from __future__ import annotations

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


#: The one place where selectors get their names and colours (families share a hue).
STYLES: dict[str, SelectorStyle] = {
    "random": SelectorStyle("Random", "#333333", "-", "o"),
    "subtask_equal": SelectorStyle("Random, subtask-stratified", "#949494", "-", "s"),
    "subtask_equal_weighted": SelectorStyle("Subtask-stratified, reweighted", "#949494", "--", "s"),
    "subtask_proportional": SelectorStyle("Random, subtask 'proportional'", "#bdbdbd", "-", "D"),
    "subtask_proportional_weighted": SelectorStyle("Subtask 'proportional', reweighted", "#bdbdbd", "--", "D"),
    "confidence_stratified": SelectorStyle("Confidence strata", "#029e73", "-", "^"),
    "diversity": SelectorStyle("Diversity (DPP)", "#cc78bc", "-", "v"),
    "diversity_weighted": SelectorStyle("Diversity (DPP), weighted", "#cc78bc", "--", "v"),
    "anchor_points": SelectorStyle("Anchor Points", "#d55e00", "-", "P"),
    "anchor_points_binary": SelectorStyle("Anchor Points (0/1)", "#de8f05", "--", "P"),
    "tinybenchmarks": SelectorStyle("tinyBenchmarks", "#0173b2", "-", "X"),
    "tinybenchmarks_irt": SelectorStyle("tinyBenchmarks IRT", "#56b4e9", "--", "X"),
    "tinybenchmarks_pirt": SelectorStyle("tinyBenchmarks p-IRT", "#56b4e9", ":", "X"),
    "tinybenchmarks_gpirt": SelectorStyle("tinyBenchmarks gp-IRT", "#1d4e89", "-.", "X"),
    "adaptive_fisher": SelectorStyle("Adaptive (Fisher information)", "#ca9161", "-", "*"),
    "adaptive_randomesque": SelectorStyle("Adaptive, randomesque", "#ca9161", "--", "*"),
    "adaptive_pirt": SelectorStyle("Adaptive p-IRT", "#8c564b", ":", "*"),
}

_EXTRA_COLORS = ("#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#9467bd")


def style(selector: str) -> SelectorStyle:
    """The style of a selector; unknown names get a stable colour and their own name."""
    if selector in STYLES:
        return STYLES[selector]
    color = _EXTRA_COLORS[zlib.crc32(selector.encode()) % len(_EXTRA_COLORS)]
    return SelectorStyle(selector, color, "-", "o")


def label(selector: str) -> str:
    """Display name of a selector (the same in every figure and table)."""
    return style(selector).label


def palette(selectors: Sequence[str]) -> dict[str, str]:
    """Display name -> colour, for seaborn's ``palette=`` with ``hue`` on display names."""
    return {label(s): style(s).color for s in selectors}

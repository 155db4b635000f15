"""Sentences about the data a page ran on, computed from its bundle, so a re-run never repeats GPQA's facts.

Counts of models, items and subtasks, the number of answer options and the chance level (from the
bundle: :attr:`mbutils.Benchmark.n_options`; unknown when the bundle does not say), how crowded the
pool is, and how many models score near chance. A chapter glues them (``<prefix>_about``,
``<prefix>_chance``, ...) and its prose cites the glue; what a benchmark is *as published* stays in
the prose with its citation.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def subtask_text(benchmark) -> str:
    """'in a single subtask', 'in 3 subtasks of 30 items each' or 'in 27 subtasks of 146 to 250 items'."""
    sizes = pd.Series(np.asarray(benchmark.subtasks, dtype=str)).value_counts()
    if len(sizes) == 1:
        return "in a single subtask"
    if sizes.min() == sizes.max():
        return f"in {len(sizes)} subtasks of {sizes.min():,} items each"
    return f"in {len(sizes)} subtasks of {sizes.min():,} to {sizes.max():,} items"


def chance_text(benchmark) -> str:
    """What the bundle says of its answer options and the accuracy a uniform guess has."""
    options = benchmark.n_options
    known = ~np.isnan(options)
    if not known.any():
        return "the bundle does not say how many answer options its items have, so this page states no chance level"
    if not known.all():
        return (f"the bundle gives the number of answer options for only {int(known.sum()):,} of its "
                f"{benchmark.n_items:,} items, so this page states no chance level")
    low, high = int(options.min()), int(options.max())
    if low == high:
        return f"each item has {low} answer options, so a uniform guess scores {100 / low:.0f}%"
    return (f"items have {low} to {high} answer options, so a uniform guess scores {100 * benchmark.chance:.1f}% "
            "on average")


def crowd_text(benchmark, close: float = 2.0) -> str:
    """How crowded the pool is: the share of model pairs closer than ``close`` points, and the median gap."""
    acc = 100.0 * benchmark.accuracy
    i, j = np.triu_indices(len(acc), 1)
    gaps = np.abs(acc[i] - acc[j])
    if not len(gaps):
        return "the pool has a single model"
    return (f"of its {_count(len(gaps), 'pair')} of models, {np.mean(gaps < close):.0%} are less than {close:g} "
            f"points apart (median gap {np.median(gaps):.1f} points)")


def near_chance_text(benchmark, within: float = 5.0) -> str:
    """How many models score within ``within`` points above chance ("" when chance is unknown)."""
    chance = benchmark.chance
    if chance is None:
        return ""
    acc = 100.0 * benchmark.accuracy
    near = int(np.sum(acc <= 100.0 * chance + within))
    return (f"{near:,} of its {benchmark.n_models:,} models {'scores' if near == 1 else 'score'} within {within:g} "
            "points of chance")


def data_facts(setting, *, close: float = 2.0, near: float = 5.0) -> dict[str, str]:
    """The page's data, in sentences and numbers computed from the bundle it ran on."""
    b = setting.benchmark
    one_subtask = len(b.subtask_names) == 1
    chance, crowd = chance_text(b), crowd_text(b, close)
    about = (f"{setting.page_title} holds {_count(b.n_items, 'item')} {subtask_text(b)}, answered by "
             f"{_count(b.n_models, 'model')}; the seen half has {setting.n_seen:,} items. "
             f"{chance[:1].upper() + chance[1:]}.")
    return {
        "about": about,
        "crowd": crowd[:1].upper() + crowd[1:] + ".",
        "chance": chance,
        "near_chance": near_chance_text(b, near) or "the bundle gives no chance level to compare with",
        "subtasks": subtask_text(b),
        "one_subtask": ("With one subtask, subtask-stratified sampling is uniform random sampling here: the gap "
                        "between their two MDADs is a yardstick of run-to-run noise." if one_subtask else
                        f"With {len(b.subtask_names)} subtasks, subtask-stratified sampling draws from each of them."),
    }


def glue_data_facts(setting, glue_prefix: str, **kwargs) -> dict[str, str]:
    """Glue :func:`data_facts` as ``<glue_prefix>_<name>`` (plain text) for the page's prose; returns them."""
    from mbutils.book.display import glue

    facts = data_facts(setting, **kwargs)
    for name, value in facts.items():
        glue(f"{glue_prefix}_{name}", value)
    return facts

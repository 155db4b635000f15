"""The guidance page's worked example: one question (pairs Δ points apart on one benchmark) answered
without source models (the exact planner, the bin average and the per-pair recommendation) and with
them (the simulated experiments, compared pairwise with random sampling), as one note."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from mbutils.base.errors import MbutilsError
from mbutils.base.names import count_noun, label
from mbutils.book.display import glue, note
from mbutils.book.escaping import literal
from mbutils.methods.selectors.registry import needs_sources
from mbutils.evaluate.noise import MIN_PAIRS, TOO_FEW, too_few_sentence
from mbutils.evaluate.pair_sizes import bin_pairs, share_reaching, size_for_share
from mbutils.evaluate.paired import BETTER, WITHIN, WORSE, compare_selectors
from mbutils.evaluate.planning import plan_table
from mbutils.evaluate.planning_curves import required_size

_VERDICT_WORDS = {BETTER: "better than", WORSE: "worse than", WITHIN: "within noise of",
                  TOO_FEW: "not comparable (too few target pairs to tell) with"}


@dataclass(frozen=True)
class WorkedExample:
    """What the note says, as numbers (for the page's table and its tests)."""

    pairs: pd.DataFrame          # the bin's pairs on the whole benchmark (exact per-pair sizes)
    bin_average: int | None      # the planner's size on the whole benchmark (None: no size reaches it)
    recommended: int | None      # the size that brings 80% of the bin's pairs to the threshold


def _without_sources(setting, gap: float, threshold: float, selectors) -> tuple[list[str], int | None, bool]:
    """The planner's exact answer for random sampling: (note lines, size on the whole benchmark or None
    for never, whether the planner could answer at all)."""
    try:
        plan = plan_table(setting.benchmark, gap, threshold, setting.results(selectors), truth="seen",
                          protocol=setting.protocol)
        full = required_size(setting.benchmark, gap, threshold, truth="full", protocol=setting.protocol)
    except MbutilsError as err:  # e.g. no pair of models is that close on this bundle
        return [f"<b>Without source models:</b> the planner cannot answer here ({literal(err)})."], None, False
    seen = ("never, even with every item" if plan.random_size is None
            else f"{plan.random_size:,} of the {plan.n_items:,} seen items")
    whole = "never" if full is None else f"{full:,} of all {setting.benchmark.n_items:,} items"
    return [f"<b>Without source models:</b> on average over the bin's pairs, random sampling needs {seen} "
            f"(exact, no simulation; judged on the seen half, as the experiments are), or {whole} when judged on "
            "the whole benchmark."], full, True


def _recommendation(setting, pairs: pd.DataFrame, full: int | None, threshold: float) -> tuple[list[str], int | None]:
    recommended = size_for_share(pairs, 0.8) if len(pairs) else None
    if recommended is None:
        return [], None
    average = "more than all items" if full is None else f"{full:,} items"
    reach = "no" if full is None else f"{share_reaching(pairs, full):.0%} of the"
    return [f"<b>Recommended, per pair:</b> {recommended:,} of all {setting.benchmark.n_items:,} items, the size at "
            + ("which the bin's only pair is" if len(pairs) == 1
               else f"which at least 80% of the bin's {count_noun(len(pairs), 'pair')} are each")
            + " ordered correctly with probability "
            + f"{threshold:g} (exact, pair by pair, judged on the whole benchmark; the bin average's {average} bring "
            f"{reach} pairs there). Choose them uniformly at random, e.g. "
            "<code>numpy.random.default_rng(seed).choice(N, k, replace=False)</code>."], recommended


def _with_sources(setting, cells: pd.DataFrame, gap: float, threshold: float, largest: int,
                  planner_answered: bool = True) -> list[str]:
    """The methods with source models: the fewest items any needs, paired with random sampling; or why none
    supports the gap (``planner_answered``: whether random sampling's exact answer above exists to fall back on)."""
    supported = cells[cells["size"].notna()]
    learners = supported[supported["selector"].map(needs_sources).astype(bool)] if len(supported) else supported
    if not len(learners):
        runs, targets = setting.protocol.n_runs, setting.protocol.n_targets
        pooled = runs * targets * (targets - 1) // 2
        if pooled < MIN_PAIRS:  # a thin pool: no interval can close, whatever the size
            return [f"<b>With source models:</b> no method's interval supports a {gap:g}-point gap here, "
                    f"{too_few_sentence(pooled, runs)}"
                    + ("; meanwhile take random sampling's exact answer." if planner_answered
                       else "; and the planner above has no exact answer for random sampling either.")]
        return [f"<b>With source models:</b> no method's interval supports a {gap:g}-point gap at the sizes run "
                f"(up to {largest}); run larger sizes"
                + (", or take random sampling's exact answer." if planner_answered else ".")]
    best = learners.sort_values("size").iloc[0]
    vs = compare_selectors(setting.results([best["selector"], "random"]), best["selector"], "random",
                           threshold=threshold, sizes=[int(best["size"])])
    verdict = vs["verdict"].iloc[0] if len(vs) else "cannot tell"
    words = _VERDICT_WORDS.get(verdict, "not comparable with (an MDAD not reached, or an interval open at one end)")
    return [f"<b>With source models</b> (the same seen halves): the fewest items any method needs by its interval "
            f"is {int(best['size']):,}, for {label(best['selector'])} (MDAD {best['mdad']:g} "
            f"[{max(best['ci_low'], 0):g}, {best['ci_high']:g}]); at that size, compared pairwise with random "
            f"sampling on the shared runs, it is {words} random sampling."]


def worked_example_note(setting, name: str, gap: float, threshold: float, selectors, cells: pd.DataFrame,
                   largest: int, glue_key: str = "guidance_recommended_k") -> WorkedExample:
    """Show the worked example's note for pairs ``gap`` points apart on ``setting``'s benchmark (called
    ``name`` on the page); ``cells`` are the items-needed table's cells of this benchmark and gap, ``largest``
    the largest size run. Glues the recommendation (with the bundle to check it on) as ``glue_key``."""
    gap = float(gap)
    lines = [f"<b>The question:</b> pairs {gap:g} points apart on {literal(name)}, ordered correctly at least "
             f"{threshold:.0%} of the time."]
    text, full, answered = _without_sources(setting, gap, threshold, selectors)
    lines += text
    pairs = bin_pairs(setting.benchmark.correct, gap, threshold=threshold)
    text, recommended = _recommendation(setting, pairs, full, threshold)
    lines += text
    lines += _with_sources(setting, cells, gap, threshold, largest, planner_answered=answered)
    glue(glue_key, json.dumps({"data": setting.data.requested, "hash": setting.benchmark.content_hash, "gap": gap,
                               "threshold": float(threshold), "k": recommended}))
    note(f"Worked example: {gap:g} points on {name}", "<br>".join(lines), markup=True)
    return WorkedExample(pairs=pairs, bin_average=full, recommended=recommended)


def pair_share_table(example: WorkedExample) -> pd.DataFrame:
    """The share of the bin's pairs each candidate size brings to the threshold (the page's table)."""
    rows = []
    for what, k in (("the planner's size (bin average)", example.bin_average if example.bin_average is not None
                     else int(example.pairs.attrs.get("n_items", 0)) or None),
                    ("80% of the pairs", size_for_share(example.pairs, 0.8)),
                    ("90% of the pairs", size_for_share(example.pairs, 0.9))):
        rows.append({"size chosen for": what, "items": "more than all" if k is None else f"{k:,}",
                     "share of the bin's pairs reaching the threshold":
                     np.nan if k is None else share_reaching(example.pairs, k)})
    return pd.DataFrame(rows)

"""Random baselines: uniform, and stratified by subtask (equal and "proportional").

The paper's stratified estimates are plain means, which are biased when subtasks differ in
size; the ``*_weighted`` variants weight each subtask by its share of the seen items.
"""

from __future__ import annotations

import numpy as np

from .base import MicroBenchmark, Selector, SourceData


class RandomSelector(Selector):
    """k distinct seen items uniformly at random; estimate = mean correctness."""

    name = "random"
    uses_sources = False
    light = True

    def select(self, prepared: SourceData, k: int, rng: np.random.Generator) -> MicroBenchmark:
        self.check_size(k, prepared.n_items)
        items = rng.choice(prepared.n_items, size=k, replace=False)
        return MicroBenchmark(np.sort(items), np.full(k, 1.0 / k))


def _subtask_weights(items: np.ndarray, subtasks: np.ndarray, weighted: bool) -> np.ndarray:
    """Plain mean (paper) or weights that give each subtask its share of the population."""
    k = len(items)
    if not weighted:
        return np.full(k, 1.0 / k)
    sizes = np.bincount(subtasks)
    chosen = np.bincount(subtasks[items], minlength=len(sizes))
    own = subtasks[items]
    # Subtasks not sampled get no weight; renormalise over those that were.
    weights = sizes[own] / chosen[own]
    return weights / weights.sum()


class SubtaskEqualSelector(Selector):
    """floor(k/S) items per subtask, the k mod S left over one each to random subtasks.

    A subtask smaller than its allocation gives all its items; the shortfall goes to
    random other subtasks with room, so exactly k items are always chosen.
    """

    name = "subtask_equal"
    uses_sources = False
    light = True

    def __init__(self, weighted: bool = False):
        self.weighted = weighted

    def shared_key(self) -> str:
        return "subtask_equal"  # the weighted variant reweights the same items

    def select(self, prepared: SourceData, k: int, rng: np.random.Generator) -> MicroBenchmark:
        self.check_size(k, prepared.n_items)
        subtasks = prepared.subtasks
        sizes = np.bincount(subtasks)
        n_sub = len(sizes)
        alloc = np.full(n_sub, k // n_sub)
        alloc[rng.choice(n_sub, size=k % n_sub, replace=False)] += 1
        alloc = _fill_shortfall(np.minimum(alloc, sizes), sizes, k, rng)
        items = _sample_within(subtasks, alloc, rng)
        return MicroBenchmark(items, _subtask_weights(items, subtasks, self.weighted))


def _fill_shortfall(alloc: np.ndarray, sizes: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Give the items a capped allocation lost to random subtasks that still have room."""
    alloc = alloc.copy()
    while alloc.sum() < k:
        room = np.flatnonzero(alloc < sizes)
        extra = rng.choice(room, size=min(len(room), k - alloc.sum()), replace=False)
        alloc[extra] += 1
    return alloc


def _sample_within(subtasks: np.ndarray, alloc: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Simple random sample of alloc[s] items from every subtask s, vectorised."""
    order = np.lexsort((rng.random(len(subtasks)), subtasks))
    sorted_codes = subtasks[order]
    rank = np.arange(len(order)) - np.searchsorted(sorted_codes, sorted_codes, side="left")
    return np.sort(order[rank < alloc[sorted_codes]])


class SubtaskProportionalSelector(Selector):
    """The reference code's "proportional" sampling: P(item) proportional to 1/subtask size.

    Despite the name this allocates equally *in expectation* (each subtask gets the same
    total probability); kept for fidelity, the book explains the difference.
    """

    name = "subtask_proportional"
    uses_sources = False
    light = True

    def __init__(self, weighted: bool = False):
        self.weighted = weighted

    def shared_key(self) -> str:
        return "subtask_proportional"

    def select(self, prepared: SourceData, k: int, rng: np.random.Generator) -> MicroBenchmark:
        self.check_size(k, prepared.n_items)
        subtasks = prepared.subtasks
        p = 1.0 / np.bincount(subtasks)[subtasks]
        items = np.sort(rng.choice(len(subtasks), size=k, replace=False, p=p / p.sum()))
        return MicroBenchmark(items, _subtask_weights(items, subtasks, self.weighted))


#: The names this family offers (read by :mod:`mbutils.selectors`, in this order).
SELECTORS = {
    "random": RandomSelector,
    "subtask_equal": SubtaskEqualSelector,
    "subtask_equal_weighted": lambda: SubtaskEqualSelector(weighted=True),
    "subtask_proportional": SubtaskProportionalSelector,
    "subtask_proportional_weighted": lambda: SubtaskProportionalSelector(weighted=True),
}

"""The model pairs a planner's prediction averages over: their discordant counts on the items judged.

Only two counts of a pair matter to a random subset (the items only the better model gets
right, and those only the worse gets right), so a bundle's pairs, over the protocol's seen
halves or the full benchmark, reduce to the distinct (hi, lo) counts and how often each occurs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mbutils.data.benchmark import Benchmark
from mbutils.base.errors import ProtocolError
from mbutils.base.vocabulary import renamed_keywords
from mbutils.evaluate.pair_metrics import gap_bins
from mbutils.methods.protocol import Protocol, draw_run, rng_for, split_items

TRUTHS = ("seen", "full")
PAIR_SETS = ("all", "runs")


@dataclass(frozen=True)
class PairPopulation:
    """Distinct (hi, lo) counts of model pairs, with how many (pair, split) instances have them.

    ``hi``/``lo``: items only the better / only the worse model of the pair gets right on
    the ``n_items`` items the truth is taken from; ``weight``: number of instances.
    """

    hi: np.ndarray
    lo: np.ndarray
    weight: np.ndarray
    n_items: int
    n_splits: int
    description: str

    @property
    def n_pairs(self) -> int:
        return int(self.weight.sum())

    def bins(self, bin_width: float = 0.5) -> np.ndarray:
        """Gap bin of each key, exactly as metrics bins the simulated pairs."""
        return gap_bins(self.hi - self.lo, np.full(len(self.hi), self.n_items), bin_width)


def _as_benchmark(data) -> Benchmark:
    if isinstance(data, Benchmark):
        return data
    correct = np.asarray(data)
    if correct.ndim != 2:
        raise ProtocolError("give a Benchmark or a 2-D models x items 0/1 matrix")
    return Benchmark(name="matrix", correct=correct,
                     models=[f"model_{i}" for i in range(correct.shape[0])],
                     items=[f"item_{j}" for j in range(correct.shape[1])],
                     subtasks=np.full(correct.shape[1], "all"))


def _pair_keys(correct: np.ndarray, models: np.ndarray, items: np.ndarray) -> np.ndarray:
    """(hi, lo) of every pair of ``models`` on ``items``, as int64 keys hi * (N+1) + lo."""
    x = correct[np.ix_(models, items)].astype(np.float64)
    both = x @ x.T
    right = x.sum(1)
    i, j = np.triu_indices(len(models), k=1)
    only_i = np.rint(right[i] - both[i, j]).astype(np.int64)
    only_j = np.rint(right[j] - both[i, j]).astype(np.int64)
    return np.maximum(only_i, only_j) * (len(items) + 1) + np.minimum(only_i, only_j)


@renamed_keywords(data="benchmark")
def pair_population(benchmark, *, truth: str = "seen", pairs: str = "all",
                    protocol: Protocol | None = None) -> PairPopulation:
    """The model pairs whose agreement a prediction averages over.

    ``truth="seen"``: each of ``protocol.n_runs`` seen halves, drawn exactly as
    :func:`mbutils.methods.protocol.draw_run` draws them (same seeds), with N = the seen-half size;
    this is what the experiment's random selector is judged on. ``truth="full"``: the whole
    benchmark (N = all items), the practitioner's question "k of my N items".
    ``pairs="all"``: every pair of every model (or of ``protocol.target_set``); every pair
    is equally likely to be drawn as targets, so this is the expected pair mix of the
    protocol's pooled curves. ``pairs="runs"``: exactly the target pairs of each run.
    """
    bench = _as_benchmark(benchmark)
    protocol = Protocol() if protocol is None else protocol
    if truth not in TRUTHS:
        raise ProtocolError(f"truth must be one of {', '.join(TRUTHS)}, got {truth!r}")
    if pairs not in PAIR_SETS:
        raise ProtocolError(f"pairs must be one of {', '.join(PAIR_SETS)}, got {pairs!r}")
    if protocol.n_runs < 1:
        raise ProtocolError(f"runs must be at least 1, got {protocol.n_runs}")
    if pairs == "all":
        if protocol.target_set is None:
            models = np.arange(bench.n_models)
        elif protocol.target_set in bench.target_sets:
            models = bench.model_index(bench.target_sets[protocol.target_set])
        else:
            known = ", ".join(sorted(bench.target_sets)) or "none"
            raise ProtocolError(f"{bench.name}: no target set named {protocol.target_set!r} "
                                f"(target sets in this bundle: {known})")
        if len(models) < 2:
            raise ProtocolError(f"{bench.name}: at least 2 models are needed to form pairs")
    n_splits = protocol.n_runs if (truth == "seen" or pairs == "runs") else 1
    all_items = np.arange(bench.n_items)
    keys, n_items = [], bench.n_items
    for r in range(n_splits):
        if pairs == "runs":
            run = draw_run(bench, protocol, r)
            items, models = (run.seen if truth == "seen" else all_items), run.targets
        else:
            items = (split_items(bench.subtask_codes, rng_for(protocol.seed, r, "split"))[0]
                     if truth == "seen" else all_items)
        n_items = len(items)
        uniq, counts = np.unique(_pair_keys(bench.correct, models, items), return_counts=True)
        keys.append(np.stack([uniq, counts]))
    stacked = np.concatenate(keys, axis=1)
    uniq, inverse = np.unique(stacked[0], return_inverse=True)
    weight = np.bincount(inverse, weights=stacked[1]).astype(np.int64)
    what = ("the protocol's target pairs" if pairs == "runs" else "all pairs" if protocol.target_set is None
            else f"all pairs of target set {protocol.target_set!r}")
    where = (f"{n_splits} seen halves of {n_items} items" if truth == "seen"
             else f"the full benchmark ({n_items} items)")
    return PairPopulation(hi=uniq // (n_items + 1), lo=uniq % (n_items + 1), weight=weight,
                          n_items=n_items, n_splits=n_splits,
                          description=f"{bench.name}: {what} on {where}")

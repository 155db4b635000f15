"""Random sampling's agreement curves, MDAD and required sizes, computed for a bundle's pairs, not simulated.

Agreement curves, MDAD and required sizes follow by averaging the exact probability of
:mod:`~mbutils.evaluate.planning_probability` over a population of model pairs of a bundle
(:func:`~mbutils.evaluate.planning_population.pair_population`), binned exactly like
:mod:`mbutils.evaluate.metrics`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mbutils.base.errors import ProtocolError
from mbutils.base.vocabulary import renamed_keywords
from mbutils.evaluate.pair_metrics import TIE_RULES, mdad_bin
from mbutils.evaluate.planning_population import PairPopulation, pair_population
from mbutils.evaluate.planning_probability import as_counts, probability_matrix
from mbutils.methods.protocol import Protocol


def check_sizes(sizes, n_items: int) -> np.ndarray:
    """The distinct sizes, ascending, each between 1 and ``n_items``."""
    ks = np.unique(as_counts("sizes", np.atleast_1d(sizes)))
    if len(ks) == 0 or ks[0] < 1 or ks[-1] > n_items:
        raise ProtocolError(f"sizes must lie between 1 and {n_items} (the items pairs are judged on)")
    return ks


def _binned(pop: PairPopulation, ks: np.ndarray, bin_width: float, tie_rule: str,
            method: str) -> tuple[np.ndarray, np.ndarray]:
    """Expected agreeing pairs (sizes x bins) and pairs per bin (bins,) of a population."""
    if tie_rule not in TIE_RULES:
        raise ProtocolError(f"tie rule must be one of {', '.join(TIE_RULES)}, got {tie_rule!r}")
    keep = pop.hi > pop.lo if tie_rule == "exclude" else np.ones(len(pop.hi), bool)
    hi, lo, w = pop.hi[keep], pop.lo[keep], pop.weight[keep]
    bins = pop.bins(bin_width)[keep]
    n_bins = int(bins.max()) + 1 if len(bins) else 1
    probs = probability_matrix(hi, lo, np.full(len(hi), pop.n_items), ks, method)  # keys x sizes
    total = np.bincount(bins, weights=w, minlength=n_bins)
    agree = np.stack([np.bincount(bins, weights=w * probs[:, c], minlength=n_bins)
                      for c in range(len(ks))])
    return agree, total


def _population(benchmark, truth, pairs, protocol) -> PairPopulation:
    return benchmark if isinstance(benchmark, PairPopulation) else pair_population(
        benchmark, truth=truth, pairs=pairs, protocol=protocol)


@renamed_keywords(data="benchmark")
def predicted_curve(benchmark, sizes, *, truth: str = "seen", pairs: str = "all",
                    protocol: Protocol | None = None, bin_width: float = 0.5,
                    tie_rule: str = "paper", method: str = "auto") -> pd.DataFrame:
    """Expected agreement per gap bin of random k-subsets, without simulation.

    Same columns as ``mbutils.agreement_curve`` (selector = "random") plus
    ``kind = "predicted"``; ``n_pairs`` counts the population's (pair, split) instances.
    ``benchmark``: a Benchmark, a 0/1 matrix or a ``PairPopulation`` (then ``truth``,
    ``pairs`` and ``protocol`` are already fixed by it and ignored here).

    Examples
    --------
    >>> import numpy as np, mbutils
    >>> rng = np.random.default_rng(0)
    >>> M = (rng.random((8, 200)) < np.linspace(0.3, 0.7, 8)[:, None]).astype(int)  # 8 models x 200 items
    >>> curve = mbutils.predicted_curve(M, [25])
    >>> curve.columns.tolist()
    ['selector', 'size', 'gap', 'agreement', 'n_pairs', 'kind']
    """
    pop = _population(benchmark, truth, pairs, protocol)
    ks = check_sizes(sizes, pop.n_items)
    agree, total = _binned(pop, ks, bin_width, tie_rule, method)
    keep = np.flatnonzero(total > 0)
    frames = [pd.DataFrame({"selector": "random", "size": int(k), "gap": keep * float(bin_width),
                            "agreement": agree[c, keep] / total[keep],
                            "n_pairs": total[keep].astype(np.int64), "kind": "predicted"})
              for c, k in enumerate(ks)]
    return pd.concat(frames, ignore_index=True)


@renamed_keywords(data="benchmark")
def predicted_mdad(benchmark, sizes, *, threshold: float = 0.8, truth: str = "seen",
                   pairs: str = "all", protocol: Protocol | None = None,
                   bin_width: float = 0.5, tie_rule: str = "paper", mdad_method: str = "first",
                   method: str = "auto") -> pd.DataFrame:
    """MDAD of random sampling per size (points; NaN = not reached), computed not simulated.

    The number of targets does not enter: with ``pairs="all"`` the prediction is the
    expected curve over target draws, which is the same for any number of targets.

    Examples
    --------
    >>> import numpy as np, mbutils
    >>> rng = np.random.default_rng(0)
    >>> M = (rng.random((8, 200)) < np.linspace(0.3, 0.7, 8)[:, None]).astype(int)  # 8 models x 200 items
    >>> mbutils.predicted_mdad(M, [25, 100])[["size", "mdad"]].values.tolist()
    [[25.0, 13.0], [100.0, 1.0]]
    """
    if not 0 < threshold <= 1:
        raise ProtocolError(f"threshold must be in (0, 1], got {threshold}")
    pop = _population(benchmark, truth, pairs, protocol)
    ks = check_sizes(sizes, pop.n_items)
    agree, total = _binned(pop, ks, bin_width, tie_rule, method)
    rows = []
    for c, k in enumerate(ks):
        b = mdad_bin(agree[c], total, threshold, mdad_method)
        rows.append({"selector": "random", "size": int(k), "mdad": b * bin_width if b >= 0 else np.nan,
                     "reached": b >= 0, "n_pairs": int(total.sum()), "kind": "predicted"})
    return pd.DataFrame(rows)


def gap_bin(gap: float, bin_width: float) -> int:
    """The index of the gap bin that holds ``gap`` (accuracy points)."""
    if not np.isfinite(gap) or gap < 0:
        raise ProtocolError(f"gap must be a non-negative number of accuracy points, got {gap}")
    return int(np.floor(round(gap / bin_width, 9)))


def size_curve(benchmark, gap: float, *, sizes=None, truth: str = "seen", pairs: str = "all",
               protocol: Protocol | None = None, bin_width: float = 0.5, tie_rule: str = "paper",
               method: str = "auto") -> pd.DataFrame:
    """Expected agreement of the pairs in ``gap``'s bin for every size (default 1..N).

    Columns: size, agreement, n_pairs, gap_low, gap_high (the bin, in points).
    """
    pop = _population(benchmark, truth, pairs, protocol)
    ks = check_sizes(np.arange(1, pop.n_items + 1) if sizes is None else sizes, pop.n_items)
    b = gap_bin(gap, bin_width)
    keep = _in_bin(pop, b, bin_width, tie_rule)
    if not keep.any():
        raise _empty_bin(pop, b, bin_width)
    w = pop.weight[keep]
    probs = probability_matrix(pop.hi[keep], pop.lo[keep], np.full(int(keep.sum()), pop.n_items), ks, method)
    return pd.DataFrame({"size": ks, "agreement": w @ probs / w.sum(), "n_pairs": int(w.sum()),
                         "gap_low": b * bin_width, "gap_high": (b + 1) * bin_width})


def _empty_bin(pop: PairPopulation, b: int, bin_width: float) -> ProtocolError:
    return ProtocolError(f"{pop.description}: no pair of models differs by {b * bin_width:g}-"
                         f"{(b + 1) * bin_width:g} points; choose another gap or a wider bin")


def _in_bin(pop: PairPopulation, b: int, bin_width: float, tie_rule: str) -> np.ndarray:
    if tie_rule not in TIE_RULES:
        raise ProtocolError(f"tie rule must be one of {', '.join(TIE_RULES)}, got {tie_rule!r}")
    keep = pop.bins(bin_width) == b
    return keep & (pop.hi > pop.lo) if tie_rule == "exclude" else keep


@renamed_keywords(data="benchmark", agreement="threshold")
def required_size(benchmark, gap: float, threshold: float = 0.8, **kwargs) -> int | None:
    """Smallest k whose random subsets rank the pairs of ``gap``'s bin correctly with
    expected rate >= ``threshold`` (so k - 1 falls short); None if no k <= N reaches it.

    Keyword arguments are those of ``size_curve`` but ``sizes``: truth, pairs, protocol,
    bin_width, tie_rule, method. The agreement need not be monotone in k (ties at even k), so
    the sizes are scanned upwards from 1 (in growing blocks) until one reaches the level.

    Examples
    --------
    >>> import numpy as np, mbutils
    >>> rng = np.random.default_rng(0)
    >>> M = (rng.random((8, 200)) < np.linspace(0.3, 0.7, 8)[:, None]).astype(int)  # 8 models x 200 items
    >>> mbutils.required_size(M, 10.0)
    32
    """
    if not 0 < threshold <= 1:
        raise ProtocolError(f"threshold must be in (0, 1], got {threshold}")
    pop = _population(benchmark, kwargs.pop("truth", "seen"), kwargs.pop("pairs", "all"), kwargs.pop("protocol", None))
    table = size_table(pop, [gap], [threshold], **kwargs)
    if table["n_pairs"].iloc[0] == 0:
        raise _empty_bin(pop, gap_bin(gap, kwargs.get("bin_width", 0.5)), kwargs.get("bin_width", 0.5))
    size = table["size"].iloc[0]
    return None if np.isnan(size) else int(size)


@renamed_keywords(data="benchmark", agreements="thresholds")
def size_table(benchmark, gaps, thresholds=(0.7, 0.8, 0.9), **kwargs) -> pd.DataFrame:
    """Required size for every gap x threshold (for a read-off figure); NaN = not reached.

    Keyword arguments: truth, pairs, protocol (as ``size_curve``), bin_width, tie_rule, method."""
    pop = _population(benchmark, kwargs.pop("truth", "seen"), kwargs.pop("pairs", "all"),
                      kwargs.pop("protocol", None))
    bin_width, tie_rule = kwargs.get("bin_width", 0.5), kwargs.get("tie_rule", "paper")
    unknown = set(kwargs) - {"bin_width", "tie_rule", "method"}
    if unknown:
        raise TypeError(f"size_table() got unexpected keyword arguments: {', '.join(sorted(unknown))}")
    levels = np.asarray(thresholds, dtype=np.float64)
    rows = []
    for gap in gaps:  # a bin without pairs gives NaN sizes and n_pairs = 0
        keep = _in_bin(pop, gap_bin(gap, bin_width), bin_width, tie_rule)
        sizes = _first_reaching(pop, keep, levels, kwargs.get("method", "auto"))
        rows += [{"gap": float(gap), "threshold": float(level), "size": float(size) if size > 0 else np.nan,
                  "n_pairs": int(pop.weight[keep].sum())} for level, size in zip(levels, sizes)]
    return pd.DataFrame(rows)


def _first_reaching(pop: PairPopulation, keep: np.ndarray, levels: np.ndarray, method: str,
                    first_block: int = 64) -> np.ndarray:
    """Smallest size k (1..N) at which the ``keep`` pairs' expected agreement reaches each level; 0 where
    none does.

    The same sizes as scanning the whole curve of ``size_curve`` (agreement need not rise with every
    k), but the sizes are scanned in blocks of growing length that stop once every level is reached, so
    a level reached at k computes about 2k sizes instead of N."""
    found = np.zeros(len(levels), dtype=np.int64)
    if not keep.any():
        return found
    hi, lo, w = pop.hi[keep], pop.lo[keep], pop.weight[keep]
    n, start, block = np.full(len(hi), pop.n_items), 1, first_block
    while start <= pop.n_items and (found == 0).any():
        ks = np.arange(start, min(start + block, pop.n_items + 1))
        agreement = w @ probability_matrix(hi, lo, n, ks, method) / w.sum()
        reached = agreement[None, :] >= levels[:, None]
        new = (found == 0) & reached.any(1)
        found[new] = ks[reached.argmax(1)[new]]
        start, block = int(ks[-1]) + 1, 2 * block
    return found

"""How many items do you need? Agreement of random subsets computed, not simulated.

For two models on N items, only two counts matter to a uniformly random k-item subset:
``a`` items only model A gets right and ``b`` items only B gets right (items both get
right or both get wrong add the same to both estimates). The subset holds X of the a
items and Y of the b items, (X, Y) multivariate hypergeometric, and it ranks the pair
like the N items iff X > Y when a > b. Conditioning on M = X + Y gives an exact sum::

    P(X > Y) = sum_m  P(M = m) * P(X > m/2 | M = m),
    M ~ Hypergeom(N, a + b, k),   X | M = m ~ Hypergeom(a + b, a, m).

A pair tied on the N items (a = b) agrees under the paper's rule only if its estimate
difference is positive; by symmetry its probability is P(X > Y) = (1 - P(X = Y)) / 2 for
either pair order, so the same formula covers it (``tie_rule="exclude"`` drops ties).

For large k, D = X - Y is approximately normal with the moments of a sample without
replacement: E D = k (a - b) / N, Var D = k s^2 (N - k) / (N - 1) with
s^2 = (a + b) / N - ((a - b) / N)^2, and P(D > 0) = P(D >= 1) ~ Phi((E D - 1/2) / sd).
The approximation fails where D is coarse: small k, k close to N (few items left out),
few discordant items, or nearly all items discordant (D then has the parity of k).
All of these make M = X + Y nearly constant, so ``method="auto"`` uses the normal only
where sd(M) >= :data:`NORMAL_MIN_SD` (which implies sd(D) >= it too) and the exact sum
elsewhere; tests bound the difference (:data:`NORMAL_MAX_ERROR`) on a grid.

Agreement curves, MDAD and required sizes follow by averaging over a population of model
pairs of a bundle (:func:`pair_population`), binned exactly like :mod:`mbutils.results.metrics`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import gammaln, ndtr
from scipy.stats import hypergeom

from mbutils.data.benchmark import Benchmark
from mbutils.base.errors import ProtocolError
from mbutils.results import noise
from mbutils.results.metrics import TIE_RULES, first_crossing, gap_bins, mdad_bin, mdad_table
from mbutils.methods.protocol import Protocol, draw_run, rng_for, split_items
from mbutils.base.tables import mdad_text

METHODS = ("auto", "exact", "normal")
TRUTHS = ("seen", "full")
PAIR_SETS = ("all", "runs")
#: ``method="auto"`` uses the normal approximation only where sd(M) >= this (then sd(D) is
#: too); the exact sum elsewhere: small k, k close to N, few or nearly all items discordant.
NORMAL_MIN_SD = 4.0
#: Largest |normal - exact| where ``auto`` uses the normal, on the grid of tests/test_planning.py.
NORMAL_MAX_ERROR = 0.003
_TAIL_SD = 12.0  # the exact sum skips m farther than this many sd(M) (+10) from E[M]
_BLOCK = 100_000  # cells per block in the exact sum


# ---------------------------------------------------------------------------------------
# Probability for one pair
# ---------------------------------------------------------------------------------------

def _m_moments(hi, lo, n, k) -> tuple[np.ndarray, np.ndarray]:
    """Mean and sd of M = X + Y, the discordant items in a k-subset (hypergeometric)."""
    n, k = n.astype(np.float64), k.astype(np.float64)
    r = (hi + lo) / n
    var = k * r * (1.0 - r) * (n - k) / np.maximum(n - 1.0, 1.0)
    return k * r, np.sqrt(np.clip(var, 0.0, None))


def _log_choose(lf: np.ndarray, top, bottom) -> np.ndarray:
    """log C(top, bottom) from a log-factorial table; -inf outside 0 <= bottom <= top."""
    ok = (bottom >= 0) & (bottom <= top)
    b = np.where(ok, bottom, 0)
    return np.where(ok, lf[top] - lf[b] - lf[np.where(ok, top - b, 0)], -np.inf)


def _exact_cells(hi, lo, n, k) -> np.ndarray:
    """Exact P(X_hi > X_lo) for each cell (hi, lo, n, k), one cell per entry.

    Sums P(M = m) * P(X > m/2 | M = m) over the m that carry mass. The conditional
    tail g(m) = 1 - F_m(floor(m/2)) is carried along m by the one-draw recurrence
    F_{m+1}(t) = F_m(t) - P(X_m = t) (hi - t) / (d - m), so each cell needs one scipy
    cdf call and a short loop of vector operations (over m, never over pairs).
    """
    out = np.empty(len(hi))
    if len(hi) == 0:
        return out
    lf = gammaln(np.arange(int(n.max()) + 2, dtype=np.float64) + 1.0)
    d, rest = hi + lo, n - hi - lo
    mean, sd = _m_moments(hi, lo, n, k)
    start = np.maximum(np.maximum(k - rest, 0), np.floor(mean - _TAIL_SD * sd - 10)).astype(np.int64)
    stop = np.minimum(np.minimum(k, d), np.ceil(mean + _TAIL_SD * sd + 10)).astype(np.int64)
    order = np.argsort(stop - start, kind="stable")  # blocks of similar window widths
    for first in range(0, len(order), _BLOCK):
        rows = order[first:first + _BLOCK]
        out[rows] = _exact_window(hi[rows], lo[rows], n[rows], k[rows], start[rows], stop[rows], lf)
    return np.clip(out, 0.0, 1.0)


def _exact_window(hi, lo, n, k, start, stop, lf) -> np.ndarray:
    """The sum of :func:`_exact_cells` over each cell's window start..stop of m.

    Cells are processed narrowest window first and each step works only on the cells whose
    window is still open (a suffix), so the cost is the sum of the widths, not their maximum
    times the number of cells. The log binomials a step shares with the next are carried
    over, and those whose arguments are in range by construction skip the range check.
    """
    order = np.argsort(stop - start, kind="stable")
    hi, lo, n, k, start, stop = (v[order] for v in (hi, lo, n, k, start, stop))
    width = stop - start
    d = hi + lo
    rest = n - d
    lf_d, lf_rest = lf[d], lf[rest]
    log_total = _log_choose(lf, n, k)
    m = start.copy()
    t = m // 2
    with np.errstate(invalid="ignore"):
        cdf = np.where(m > 0, hypergeom.cdf(t, np.maximum(d, 1), hi, m), 1.0)  # F_m(t); m = 0: X = 0
    mm = np.minimum(m, d)
    log_d = lf_d - lf[mm] - lf[d - mm]  # log C(d, mm): 0 <= mm <= d always
    log_hi, log_lo = _log_choose(lf, hi, t), _log_choose(lf, lo, mm - t)
    acc = np.zeros(len(hi))
    for step_no in range(int(width.max()) + 1):
        s = slice(int(np.searchsorted(width, step_no)), None)  # the cells with m <= stop
        hi_s, lo_s, k_s, d_s, m_s, t_s = hi[s], lo[s], k[s], d[s], m[s], t[s]
        a_s = log_d[s]
        # log C(n - d, k - m): start >= k - (n - d) and m <= stop <= min(k, d) keep it in range
        km = k_s - np.minimum(m_s, d_s)
        p_m = np.exp(a_s + (lf_rest[s] - lf[km] - lf[rest[s] - km]) - log_total[s])
        acc[s] += p_m * (1.0 - cdf[s])
        # one more draw: F_{m+1}(t) = F_m(t) - P(X_m = t) (hi - t) / (d - m); then t -> floor((m+1)/2)
        p_t = np.exp(log_hi[s] + log_lo[s] - a_s)
        c = cdf[s] - p_t * (hi_s - t_s) / np.maximum(d_s - m_s, 1)
        step = m_s % 2 == 1
        t_s, m_s = t_s + step, m_s + 1
        mm = np.minimum(m_s, d_s)
        a_s = lf_d[s] - lf[mm] - lf[d_s - mm]
        h_s, l_s = _log_choose(lf, hi_s, t_s), _log_choose(lf, lo_s, mm - t_s)
        cdf[s] = np.clip(c + np.where(step & (m_s <= d_s), np.exp(h_s + l_s - a_s), 0.0), 0.0, 1.0)
        t[s], m[s], log_d[s], log_hi[s], log_lo[s] = t_s, m_s, a_s, h_s, l_s
    out = np.empty(len(hi))
    out[order] = acc
    return out


def _normal_cells(hi, lo, n, k) -> np.ndarray:
    """Normal approximation of P(D > 0), D = X_hi - X_lo, with continuity correction."""
    hi, lo, n, k = (v.astype(np.float64) for v in (hi, lo, n, k))
    mu = (hi - lo) / n
    var = k * ((hi + lo) / n - mu**2) * (n - k) / np.maximum(n - 1.0, 1.0)
    mean, sd = k * mu, np.sqrt(np.clip(var, 0.0, None))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = ndtr((mean - 0.5) / sd)  # the standard normal cdf, without scipy.stats' argument checks
    return np.where(sd > 1e-12, p, (mean > 0.5).astype(np.float64))  # sd = 0: D is constant


def _cells(hi, lo, n, k, method: str) -> np.ndarray:
    """P(agree) for 1-D arrays of cells with the chosen method."""
    if method not in METHODS:
        raise ProtocolError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    if method == "normal":
        return _normal_cells(hi, lo, n, k)
    if method == "exact":
        return _exact_cells(hi, lo, n, k)
    exact = _m_moments(hi, lo, n, k)[1] < NORMAL_MIN_SD
    out = np.empty(len(hi))
    out[exact] = _exact_cells(hi[exact], lo[exact], n[exact], k[exact])
    out[~exact] = _normal_cells(hi[~exact], lo[~exact], n[~exact], k[~exact])
    return out


def _matrix(hi, lo, n, ks, method: str) -> np.ndarray:
    """P(agree) for keys (rows) x sizes (columns)."""
    ks = np.asarray(ks, dtype=np.int64)
    shape = (len(hi), len(ks))
    cells = [np.broadcast_to(v, shape).ravel() for v in (hi[:, None], lo[:, None], n[:, None], ks[None, :])]
    return _cells(*cells, method).reshape(shape)


def _as_counts(name: str, value) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iu":
        raise ProtocolError(f"{name} must be whole numbers (counts of items), got {value!r}")
    return arr.astype(np.int64)


def agreement_probability(a, b, n_items, k, method: str = "auto"):
    """Probability that a uniform k-subset of N items ranks a pair like the N items do.

    ``a``/``b``: items only model A / only model B gets right (array-like, broadcast).
    A tied pair (a = b) counts with the paper's rule, which in expectation is symmetric:
    P(X > Y). Returns a float for scalar input, else an array of the broadcast shape.
    """
    a, b, n, k = (_as_counts(label, v) for label, v in
                  (("a", a), ("b", b), ("n_items", n_items), ("k", k)))
    a, b, n, k = np.broadcast_arrays(a, b, n, k)
    if (a < 0).any() or (b < 0).any():
        raise ProtocolError("item counts a and b must be non-negative")
    if (a + b > n).any():
        raise ProtocolError("a + b cannot exceed n_items (they count disjoint sets of items)")
    if (k < 1).any() or (k > n).any():
        raise ProtocolError("k must lie between 1 and n_items")
    cells = np.stack([np.maximum(a, b).ravel(), np.minimum(a, b).ravel(), n.ravel(), k.ravel()])
    keys, inverse = np.unique(cells, axis=1, return_inverse=True)  # compute each distinct cell once
    out = _cells(*keys, method)[inverse.ravel()]
    out = out.reshape(a.shape)
    return float(out) if out.ndim == 0 else out


# ---------------------------------------------------------------------------------------
# Populations of pairs of a bundle
# ---------------------------------------------------------------------------------------

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


def pair_population(data, *, truth: str = "seen", pairs: str = "all",
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
    bench = _as_benchmark(data)
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


# ---------------------------------------------------------------------------------------
# Curves, MDAD, required sizes
# ---------------------------------------------------------------------------------------

def _check_sizes(sizes, n_items: int) -> np.ndarray:
    ks = np.unique(_as_counts("sizes", np.atleast_1d(sizes)))
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
    probs = _matrix(hi, lo, np.full(len(hi), pop.n_items), ks, method)  # keys x sizes
    total = np.bincount(bins, weights=w, minlength=n_bins)
    agree = np.stack([np.bincount(bins, weights=w * probs[:, c], minlength=n_bins)
                      for c in range(len(ks))])
    return agree, total


def _population(data, truth, pairs, protocol) -> PairPopulation:
    return data if isinstance(data, PairPopulation) else pair_population(
        data, truth=truth, pairs=pairs, protocol=protocol)


def predicted_curve(data, sizes, *, truth: str = "seen", pairs: str = "all",
                    protocol: Protocol | None = None, bin_width: float = 0.5,
                    tie_rule: str = "paper", method: str = "auto") -> pd.DataFrame:
    """Expected agreement per gap bin of random k-subsets, without simulation.

    Same columns as :func:`mbutils.results.metrics.agreement_curve` (selector = "random") plus
    ``kind = "predicted"``; ``n_pairs`` counts the population's (pair, split) instances.
    ``data``: a Benchmark, a 0/1 matrix or a :class:`PairPopulation` (then ``truth``,
    ``pairs`` and ``protocol`` are already fixed by it and ignored here).
    """
    pop = _population(data, truth, pairs, protocol)
    ks = _check_sizes(sizes, pop.n_items)
    agree, total = _binned(pop, ks, bin_width, tie_rule, method)
    keep = np.flatnonzero(total > 0)
    frames = [pd.DataFrame({"selector": "random", "size": int(k), "gap": keep * float(bin_width),
                            "agreement": agree[c, keep] / total[keep],
                            "n_pairs": total[keep].astype(np.int64), "kind": "predicted"})
              for c, k in enumerate(ks)]
    return pd.concat(frames, ignore_index=True)


def predicted_mdad(data, sizes, *, threshold: float = 0.8, truth: str = "seen",
                   pairs: str = "all", protocol: Protocol | None = None,
                   bin_width: float = 0.5, tie_rule: str = "paper", mdad_method: str = "first",
                   method: str = "auto") -> pd.DataFrame:
    """MDAD of random sampling per size (points; NaN = not reached), computed not simulated.

    The number of targets does not enter: with ``pairs="all"`` the prediction is the
    expected curve over target draws, which is the same for any number of targets.
    """
    if not 0 < threshold <= 1:
        raise ProtocolError(f"threshold must be in (0, 1], got {threshold}")
    pop = _population(data, truth, pairs, protocol)
    ks = _check_sizes(sizes, pop.n_items)
    agree, total = _binned(pop, ks, bin_width, tie_rule, method)
    rows = []
    for c, k in enumerate(ks):
        b = mdad_bin(agree[c], total, threshold, mdad_method)
        rows.append({"selector": "random", "size": int(k), "mdad": b * bin_width if b >= 0 else np.nan,
                     "reached": b >= 0, "n_pairs": int(total.sum()), "kind": "predicted"})
    return pd.DataFrame(rows)


def _gap_bin(gap: float, bin_width: float) -> int:
    if not np.isfinite(gap) or gap < 0:
        raise ProtocolError(f"gap must be a non-negative number of accuracy points, got {gap}")
    return int(np.floor(round(gap / bin_width, 9)))


def size_curve(data, gap: float, *, sizes=None, truth: str = "seen", pairs: str = "all",
               protocol: Protocol | None = None, bin_width: float = 0.5, tie_rule: str = "paper",
               method: str = "auto") -> pd.DataFrame:
    """Expected agreement of the pairs in ``gap``'s bin for every size (default 1..N).

    Columns: size, agreement, n_pairs, gap_low, gap_high (the bin, in points).
    """
    pop = _population(data, truth, pairs, protocol)
    ks = _check_sizes(np.arange(1, pop.n_items + 1) if sizes is None else sizes, pop.n_items)
    b = _gap_bin(gap, bin_width)
    keep = _in_bin(pop, b, bin_width, tie_rule)
    if not keep.any():
        raise _empty_bin(pop, b, bin_width)
    w = pop.weight[keep]
    probs = _matrix(pop.hi[keep], pop.lo[keep], np.full(int(keep.sum()), pop.n_items), ks, method)
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


def required_size(data, gap: float, agreement: float = 0.8, **kwargs) -> int | None:
    """Smallest k whose random subsets rank the pairs of ``gap``'s bin correctly with
    expected rate >= ``agreement`` (so k - 1 falls short); None if no k <= N reaches it.

    Keyword arguments are those of :func:`size_curve` but ``sizes``: truth, pairs, protocol,
    bin_width, tie_rule, method. The agreement need not be monotone in k (ties at even k), so
    the sizes are scanned upwards from 1 (in growing blocks) until one reaches the level.
    """
    if not 0 < agreement <= 1:
        raise ProtocolError(f"agreement must be in (0, 1], got {agreement}")
    pop = _population(data, kwargs.pop("truth", "seen"), kwargs.pop("pairs", "all"), kwargs.pop("protocol", None))
    table = size_table(pop, [gap], [agreement], **kwargs)
    if table["n_pairs"].iloc[0] == 0:
        raise _empty_bin(pop, _gap_bin(gap, kwargs.get("bin_width", 0.5)), kwargs.get("bin_width", 0.5))
    size = table["size"].iloc[0]
    return None if np.isnan(size) else int(size)


def size_table(data, gaps, agreements=(0.7, 0.8, 0.9), **kwargs) -> pd.DataFrame:
    """Required size for every gap x agreement level (for a read-off figure); NaN = not reached.

    Keyword arguments: truth, pairs, protocol (as :func:`size_curve`), bin_width, tie_rule, method."""
    pop = _population(data, kwargs.pop("truth", "seen"), kwargs.pop("pairs", "all"),
                      kwargs.pop("protocol", None))
    bin_width, tie_rule = kwargs.get("bin_width", 0.5), kwargs.get("tie_rule", "paper")
    unknown = set(kwargs) - {"bin_width", "tie_rule", "method"}
    if unknown:
        raise TypeError(f"size_table() got unexpected keyword arguments: {', '.join(sorted(unknown))}")
    levels = np.asarray(agreements, dtype=np.float64)
    rows = []
    for gap in gaps:  # a bin without pairs gives NaN sizes and n_pairs = 0
        keep = _in_bin(pop, _gap_bin(gap, bin_width), bin_width, tie_rule)
        sizes = _first_reaching(pop, keep, levels, kwargs.get("method", "auto"))
        rows += [{"gap": float(gap), "agreement": float(level), "size": float(size) if size > 0 else np.nan,
                  "n_pairs": int(pop.weight[keep].sum())} for level, size in zip(levels, sizes)]
    return pd.DataFrame(rows)


def _first_reaching(pop: PairPopulation, keep: np.ndarray, levels: np.ndarray, method: str,
                    first_block: int = 64) -> np.ndarray:
    """Smallest size k (1..N) at which the ``keep`` pairs' expected agreement reaches each level; 0 where
    none does.

    The same sizes as scanning the whole curve of :func:`size_curve` (agreement need not rise with every
    k), but the sizes are scanned in blocks of growing length that stop once every level is reached, so
    a level reached at k computes about 2k sizes instead of N."""
    found = np.zeros(len(levels), dtype=np.int64)
    if not keep.any():
        return found
    hi, lo, w = pop.hi[keep], pop.lo[keep], pop.weight[keep]
    n, start, block = np.full(len(hi), pop.n_items), 1, first_block
    while start <= pop.n_items and (found == 0).any():
        ks = np.arange(start, min(start + block, pop.n_items + 1))
        agreement = w @ _matrix(hi, lo, n, ks, method) / w.sum()
        reached = agreement[None, :] >= levels[:, None]
        new = (found == 0) & reached.any(1)
        found[new] = ks[reached.argmax(1)[new]]
        start, block = int(ks[-1]) + 1, 2 * block
    return found


# ---------------------------------------------------------------------------------------
# "How many items do I need?"
# ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Plan:
    """Answer to "how many items do I need?" for one gap and agreement level (what ``mbutils.plan`` returns)."""

    gap: float
    agreement: float
    gap_low: float
    gap_high: float
    random_size: int | None      # predicted smallest size for random sampling
    n_items: int                 # items the truth is taken from (seen half or full)
    population: str
    curve: pd.DataFrame          # predicted agreement in the gap's bin vs size
    table: pd.DataFrame          # per selector: size compared, MDAD, random's MDAD, verdict


def _compare_selectors(results: pd.DataFrame, random_size: int | None, gap_bin_index: int,
                       agreement: float, bin_width: float, tie_rule: str,
                       predicted_random: pd.DataFrame) -> pd.DataFrame:
    """MDAD of every cached selector at the size nearest the random requirement."""
    from mbutils.results.metrics import agreement_curve

    mdads = mdad_table(results, threshold=agreement, bin_width=bin_width, tie_rule=tie_rule)
    curves = agreement_curve(results, bin_width=bin_width, tie_rule=tie_rule)
    sizes = np.sort(mdads["size"].unique())
    target = sizes[-1] if random_size is None or random_size > sizes[-1] else sizes[sizes >= random_size][0]
    in_bin = curves[np.isclose(curves["gap"], gap_bin_index * bin_width)]
    reach = in_bin[in_bin["agreement"] >= agreement].groupby("selector")["size"].min()
    random_sim = mdads[(mdads["selector"] == "random")].set_index("size")["mdad"]
    random_pred = predicted_random.set_index("size")["mdad"]
    at = mdads[mdads["size"] == target].copy()
    at["random_mdad"] = random_sim.get(target, random_pred.get(target, np.nan))
    at["random_source"] = "simulated" if target in random_sim.index else "predicted"
    random_row = mdads[(mdads["selector"] == "random") & (mdads["size"] == target)]
    if len(random_row):  # the noise rule against random's own interval
        r_low, r_high = (float(v[0]) for v in noise.intervals(random_row))
    else:  # predicted: exact, no interval of its own
        r_low = r_high = float(at["random_mdad"].iloc[0]) if np.isfinite(at["random_mdad"].iloc[0]) else np.inf
    low, high = noise.intervals(at)
    verdict = noise.compare(low, high, np.full(len(at), r_low), np.full(len(at), r_high))
    better = at["mdad"].fillna(np.inf) < at["random_mdad"].fillna(np.inf)
    at["beats_random"] = np.where(verdict == noise.BETTER, "yes (disjoint intervals)",
                                  np.where(better, "within noise", "no"))
    at.loc[at["selector"] == "random", "beats_random"] = "-"
    at["smallest_size_reaching"] = at["selector"].map(reach).astype("float64")
    cols = ["selector", "size", "mdad", "ci_low", "ci_high", "random_mdad", "random_source",
            "beats_random", "smallest_size_reaching"]
    return at[cols].sort_values("mdad", na_position="last", kind="stable").reset_index(drop=True)


def plan_table(data, gap: float, agreement: float = 0.8, selector_results: pd.DataFrame | None = None,
               *, truth: str = "seen", protocol: Protocol | None = None, bin_width: float = 0.5,
               tie_rule: str = "paper", method: str = "auto") -> Plan:
    """How many items do you need? The random-subset size that orders pairs ``gap`` points apart reliably.

    Public as ``mbutils.plan``. The random answer is computed, not simulated: for two
    models, a uniformly random k-item subset orders them like the N items do with a
    probability that depends only on the items exactly one of them gets right (a
    hypergeometric sum, or its normal approximation for large k). Averaged over the pairs of
    ``data`` whose gap falls in ``gap``'s bin, this gives the expected agreement for every
    size k = 1..N; the answer is the smallest k whose agreement reaches ``agreement``.

    With ``selector_results`` (a results table of this bundle), every selector's MDAD at
    threshold ``agreement`` is compared with random's at the smallest tested size that is
    at least the random requirement (the largest tested size if none is that large), with
    the book's noise rule: a selector beats random only when their 95% intervals are
    disjoint.

    Parameters
    ----------
    data : Benchmark or array_like of shape (n_models, n_items)
        The bundle, or a 0/1 models x items matrix (one subtask). Every pair of its models
        (or of ``protocol.target_set``) is in the population averaged over.
    gap : float
        Accuracy gap in points, at least 0. The pairs considered are those in its bin,
        ``[b * bin_width, (b + 1) * bin_width)`` with ``b = floor(gap / bin_width)``; a bin
        without pairs is refused.
    agreement : float, default 0.8
        Share of pairs to be ordered correctly, in (0, 1]: the MDAD threshold.
    selector_results : pandas.DataFrame, optional
        Results of an experiment on ``data`` (:func:`run_experiment`, with the same
        ``protocol`` when ``truth="seen"``) whose selectors are compared with random.
    truth : {"seen", "full"}, default "seen"
        What a pair's order and gap are judged on. ``"seen"``: each of the protocol's seen
        halves (N = the seen-half size, drawn with the protocol's seeds), as experiments
        judge micro-benchmarks. ``"full"``: the whole benchmark (N = all items), the
        practitioner's question "k of my N items".
    protocol : Protocol, optional
        Whose runs (``n_runs``, ``seed``) give the seen halves, and whose ``target_set``
        restricts the pairs; default ``Protocol()``, the paper's 50 runs.
    bin_width : float, default 0.5
        Width of the gap bins in points, as in :func:`mdad_table`.
    tie_rule : {"paper", "exclude"}, default "paper"
        Pairs tied on the truth, as in :func:`mdad_table`: counted (a random subset orders
        them "correctly" with probability P(X > Y), by symmetry) or left out.
    method : {"auto", "exact", "normal"}, default "auto"
        How a pair's agreement probability is computed: the exact hypergeometric sum, the
        normal approximation with continuity correction, or ``"auto"``: the normal only
        where it is accurate (the number of discordant items in a subset varies enough),
        the exact sum elsewhere.

    Returns
    -------
    Plan
        A frozen record (``mbutils.results.planning.Plan``) with ``gap``, ``agreement``,
        ``gap_low`` and ``gap_high`` (the bin, points), ``random_size`` (the smallest size
        reaching ``agreement``; None if no size up to N does), ``n_items`` (N),
        ``population`` (which pairs, in words), ``curve`` (a DataFrame: size, agreement,
        n_pairs, gap_low, gap_high for every size 1..N) and ``table`` (one row per selector
        of ``selector_results`` at the compared size: selector, size, mdad, ci_low, ci_high,
        random_mdad, random_source, beats_random, smallest_size_reaching; empty without
        results). Agreement need not rise with every k (ties at even k), so every size is
        scanned.

    Examples
    --------
    >>> from mbutils import Protocol, load_benchmark, plan
    >>> bench = load_benchmark("synthetic-gpqa")
    >>> p = plan(bench, 5.0, protocol=Protocol(n_runs=2))
    >>> p.gap_low, p.gap_high, p.n_items  # pairs 5-5.5 points apart, seen halves of 224 items
    (5.0, 5.5, 224)
    >>> at = p.curve.set_index("size")["agreement"]
    >>> bool(at[p.random_size] >= 0.8 > at.loc[:p.random_size - 1].max())
    True
    >>> p.curve.columns.tolist()
    ['size', 'agreement', 'n_pairs', 'gap_low', 'gap_high']
    """
    pop = pair_population(data, truth=truth, pairs="all", protocol=protocol)
    curve = size_curve(pop, gap, bin_width=bin_width, tie_rule=tie_rule, method=method)
    hit = first_crossing(curve["agreement"].to_numpy()[None, :], agreement)[0]
    random_size = int(curve["size"].iloc[hit]) if hit >= 0 else None
    b = _gap_bin(gap, bin_width)
    if selector_results is None:
        table = pd.DataFrame(columns=["selector", "size", "mdad", "ci_low", "ci_high", "random_mdad",
                                      "random_source", "beats_random", "smallest_size_reaching"])
    else:
        sizes = np.sort(pd.unique(selector_results["size"]).astype(np.int64))
        sizes = sizes[sizes <= pop.n_items]
        pred = predicted_mdad(pop, sizes, threshold=agreement, bin_width=bin_width,
                              tie_rule=tie_rule, method=method) if len(sizes) else pd.DataFrame(
                                  columns=["size", "mdad"])
        table = _compare_selectors(selector_results, random_size, b, agreement, bin_width,
                                   tie_rule, pred)
    return Plan(gap=float(gap), agreement=float(agreement), gap_low=b * bin_width,
                gap_high=(b + 1) * bin_width, random_size=random_size, n_items=pop.n_items,
                population=pop.description, curve=curve, table=table)


def format_plan(plan: Plan) -> str:
    """Plain-text answer for the command line."""
    from mbutils.base.tables import render

    lines = [f"Pairs {plan.gap_low:g}-{plan.gap_high:g} accuracy points apart, "
             f"target agreement {plan.agreement:g} ({plan.population})."]
    if plan.random_size is None:
        best = plan.curve["agreement"].max()
        lines.append(f"Random sampling never reaches it with up to {plan.n_items} items "
                     f"(best expected agreement {best:.3f}).")
    else:
        at = plan.curve.set_index("size")["agreement"]
        below = at.get(plan.random_size - 1, np.nan)
        lines.append(f"Random sampling needs {plan.random_size} of {plan.n_items} items "
                     f"(expected agreement {at[plan.random_size]:.3f}; "
                     f"{plan.random_size - 1} items: {below:.3f}).")
    if len(plan.table):
        size = int(plan.table["size"].iloc[0])
        lines.append(f"\nCached experiments at size {size} (MDAD at threshold {plan.agreement:g}, points):")
        shown = plan.table.copy()
        shown["random_mdad"] = shown["random_mdad"].map(mdad_text)
        shown["smallest_size_reaching"] = shown["smallest_size_reaching"].map(
            lambda v: "none tested" if pd.isna(v) else f"{int(v)}")
        lines.append(render(shown, "markdown").rstrip())
        lines.append("(smallest_size_reaching: smallest tested size whose simulated agreement in "
                     "this gap's bin reaches the target.)")
    return "\n".join(lines) + "\n"


def cached_results(benchmark: Benchmark, sizes, protocol: Protocol | None = None,
                   selectors=None) -> pd.DataFrame | None:
    """The results table of every selector already cached for this bundle, protocol and
    sizes (as ``python -m mbutils experiment`` left them), or None if there are none."""
    from mbutils.methods.experiment import cache_path, check_sizes
    from mbutils.methods.selectors import selector_names

    protocol = Protocol() if protocol is None else protocol
    sizes = check_sizes(benchmark, sizes)
    names = selector_names() if selectors is None else list(selectors)
    paths = [cache_path(benchmark, protocol, sizes, name) for name in names]
    frames = [pd.read_parquet(path) for path in paths if path.exists()]
    return pd.concat(frames, ignore_index=True) if frames else None


# ---------------------------------------------------------------------------------------
# One pair of models: the power of a k-item random micro-benchmark
# ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PairPower:
    """Power of ordering one pair of models with uniform random k-item subsets (what ``pair_power`` returns)."""

    model_a: str
    model_b: str
    a_only: int                  # items only model A gets right
    b_only: int                  # items only model B gets right
    n_items: int
    gap: float                   # accuracy of A minus B on all items, points
    agreement: float
    required_size: int | None    # smallest k whose power reaches ``agreement``; None: no k <= N does
    curve: pd.DataFrame          # size, power


def pair_power(benchmark: Benchmark, model_a: str, model_b: str, sizes=None, agreement: float = 0.8,
               method: str = "exact") -> PairPower:
    """How often a uniformly random k-item subset orders two models as all N items do.

    Only the discordant items matter: ``a`` items model A alone gets right and ``b`` items
    model B alone gets right. A k-subset holds X of the a and Y of the b items and orders
    the pair like the full benchmark iff X > Y when a > b, an exact hypergeometric sum
    (``mbutils.results.planning.agreement_probability``). This is the power of the paired comparison on the
    subset: conditional on the M = X + Y discordant items drawn, X ~ Hypergeom(a + b, a, M),
    the finite-population form of the binomial behind McNemar's test (on discordant pairs,
    X | M ~ Binomial(M, a / (a + b)) for items drawn with replacement). The MDAD is this
    power averaged over the pairs of a gap bin; here it is one pair, from the data.

    Parameters
    ----------
    benchmark : Benchmark
        The bundle holding both models.
    model_a, model_b : str
        Two different models of the bundle.
    sizes : array_like of int, optional
        Subset sizes to report (default every k from 1 to N).
    agreement : float, default 0.8
        The power the required size must reach, in (0, 1].
    method : {"exact", "auto", "normal"}, default "exact"
        As in ``mbutils.results.planning.agreement_probability``.

    Returns
    -------
    PairPower
        ``required_size`` is the smallest k from 1 to N whose power reaches ``agreement``
        (every size is scanned: the power need not rise with every k); ``curve`` has the
        columns size and power for ``sizes``.

    Examples
    --------
    >>> from mbutils import load_benchmark
    >>> bench = load_benchmark("synthetic-gpqa")
    >>> p = pair_power(bench, bench.models[0], bench.models[1], sizes=[10, 100, 448])
    >>> p.n_items, p.curve["size"].tolist()
    (448, [10, 100, 448])
    >>> float(p.curve["power"].iloc[-1]) == (1.0 if p.a_only != p.b_only else 0.0)  # all items: certain
    True
    """
    if not 0 < agreement <= 1:
        raise ProtocolError(f"agreement must be in (0, 1], got {agreement}")
    model_a, model_b = str(model_a), str(model_b)
    if model_a == model_b:
        raise ProtocolError(f"give two different models, not {model_a!r} twice")
    i, j = benchmark.model_index([model_a, model_b])
    x, y = benchmark.correct[i].astype(np.int64), benchmark.correct[j].astype(np.int64)
    a, b, n = int(((x == 1) & (y == 0)).sum()), int(((x == 0) & (y == 1)).sum()), benchmark.n_items
    every = np.arange(1, n + 1)
    ks = every if sizes is None else _check_sizes(sizes, n)
    power_all = np.asarray(agreement_probability(a, b, n, every, method=method), dtype=np.float64)
    hit = first_crossing(power_all[None, :], agreement)[0]
    return PairPower(model_a=model_a, model_b=model_b, a_only=a, b_only=b, n_items=n,
                     gap=100.0 * (a - b) / n, agreement=float(agreement),
                     required_size=int(every[hit]) if hit >= 0 else None,
                     curve=pd.DataFrame({"size": ks, "power": power_all[ks - 1]}))


def format_pair_power(p: PairPower, sizes=None) -> str:
    """Plain-text answer of ``plan --pair`` for the command line."""
    from mbutils.base.tables import render

    lines = [f"{p.model_a} vs {p.model_b} on {p.n_items} items: gap {p.gap:+.2f} points; "
             f"{p.a_only} items only {p.model_a} gets right, {p.b_only} only {p.model_b}."]
    if p.a_only == p.b_only:
        lines.append("They are tied on the full benchmark: no subset size orders them reliably.")
    elif p.required_size is None:
        lines.append(f"No random subset of up to {p.n_items} items orders them with probability {p.agreement:g}.")
    else:
        at = p.curve.set_index("size")["power"]
        lines.append(f"A random micro-benchmark needs {p.required_size} items to order them correctly with "
                     f"probability at least {p.agreement:g}"
                     + (f" ({at[p.required_size]:.3f})." if p.required_size in at.index else "."))
    shown = p.curve if sizes is not None else p.curve[p.curve["size"].isin([10, 25, 50, 100, 200, 500, 1000])]
    if len(shown):
        lines += ["", render(shown.assign(power=shown["power"].round(4)), "markdown").rstrip()]
    lines.append("(power: probability that a uniformly random k-item subset orders the pair as all items do; "
                 "exact hypergeometric sum over the discordant items.)")
    return "\n".join(lines) + "\n"

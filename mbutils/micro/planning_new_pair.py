"""``plan --pair`` for models the bundle does not hold: two models scored on one micro-benchmark.

A practitioner with a micro-benchmark (a folder, or a shipped one) and two models' results on it (two
new models' logs, or one pool model and a new one) asks: does this micro-benchmark order them
correctly, and if not, how many more items would? The answer rests on two numbers:

* their **estimated difference** Δ̂: the micro-benchmark's estimate of A minus B's;
* the micro-benchmark's **noise for a difference**, σ. For uniform random sampling it is exact given
  the pair: the k items are a random sample of the N, so σ² = s²/k · (N-k)/(N-1), s² the variance of
  the per-item difference (estimated on the k items). For the difference estimator (interval
  ``"normal"``) it is the estimator's own variance, for the pair: the two models' cross-fitted
  residuals on the k items are paired item by item, σ² = (1 - k/N) s_r²/k, s_r² the variance of their
  difference (the two models' own variances would ignore that their residuals move together). For
  every other selector it is measured on the pool: the cross-fitted held-out errors of
  ``calibration.csv``, differenced between every two models scored by the same fold's
  micro-benchmark (σ² the mean squared difference of their errors).

The probability of the right order is Φ(|Δ̂|/σ), reading Δ̂ as the true difference (the plug-in
assumption, stated in the output). More items: uniformly random items from the rest of the benchmark,
whose mean difference has variance s²/m (finite-population corrected): for random sampling the k + m
items are one larger random sample, otherwise the m items' mean is combined with the micro-benchmark's
estimate by inverse variance; the smallest m with Φ(|Δ̂|/σ_combined) ≥ threshold (the normal rule of
:mod:`mbutils.evaluate.pair_sizes`, every m scanned at once).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import norm

from mbutils.base.errors import ProtocolError


@dataclass(frozen=True)
class NewPairPower:
    """What ``plan --micro M --pair A B LOGS`` answers (points for gaps and noise)."""

    model_a: str
    model_b: str
    sources: dict          # model -> where its answers came from ("log" or "pool")
    estimate_a: float
    estimate_b: float
    difference: float      # A minus B, points
    noise: float           # sigma of the micro-benchmark's difference, points
    noise_source: str      # how the noise was obtained
    probability: float     # of ordering them as the full benchmark would (plug-in)
    threshold: float
    more_items: int | None  # random items to add to reach ``threshold`` (0: already there; None: no number will)
    k: int
    n_items: int
    assumptions: list = field(default_factory=list)
    card_mdad: str = ""    # the card's MDAD in words (the one every output quotes), "" when it has none


def fold_pair_noise(calibration) -> tuple[float, int]:
    """RMS difference of the held-out errors of two models scored by the same fold's micro-benchmark (a
    fraction), and the number of such pairs."""
    total, pairs = 0.0, 0
    for _, part in calibration.groupby("fold"):
        e = part["error"].to_numpy(np.float64)
        if len(e) < 2:
            continue
        i, j = np.triu_indices(len(e), k=1)
        total += float(((e[i] - e[j]) ** 2).sum())
        pairs += len(i)
    return (math.sqrt(total / pairs) if pairs else float("nan")), pairs


def _rows(folder, names: list[str], paths, metric, log_filter) -> tuple[np.ndarray, dict]:
    """The two models' answers on the folder's index space, from the logs or, for pool models, the bundle."""
    from mbutils.data.datasets import load_benchmark
    from mbutils.micro.answers import folder_metric, read_answers

    logged = read_answers(folder, paths, folder_metric(folder, metric)[0], log_filter) if paths else None
    have = list(logged.models) if logged is not None else []
    rows, sources, bench = [], {}, None
    for name in names:
        if name in have:
            rows.append(logged.correct[have.index(name)])
            sources[name] = "log"
            continue
        if bench is None:
            bench = load_benchmark(folder.meta["bundle"], missing="drop_models")
            if bench.content_hash != folder.meta.get("bundle_hash", bench.content_hash):
                raise ProtocolError(f"bundle {folder.meta['bundle']!r} on the data path is not the one the "
                                    "micro-benchmark was built from; score both models from logs")
        if name not in set(map(str, bench.models)):
            raise ProtocolError(f"model {name!r} is neither in the results given ("
                                f"{', '.join(map(repr, have[:4])) or 'none'}) nor in bundle {bench.name!r}")
        import pandas as pd

        where = pd.Index(bench.items.astype(str)).get_indexer(folder.item_names)
        if (where < 0).any():
            raise ProtocolError(f"bundle {bench.name!r} lacks items of the micro-benchmark; score both models from logs")
        rows.append(bench.correct[bench.model_index([name])[0]][where])
        sources[name] = "pool"
    return np.vstack(rows).astype(np.float64), sources


def _more_items(gap: float, sigma: float, s2: float, k: int, n: int, threshold: float, random: bool) -> int | None:
    """Smallest m of random items to add (1 .. N-k, scanned at once) whose combined noise orders a pair
    ``gap`` apart with probability ``threshold``; None when none does (or the noise cannot be told)."""
    if gap == 0 or not s2 > 0 or n <= k:
        return None
    m = np.arange(1, n - k + 1, dtype=np.float64)
    if random:  # k + m random items of N: one larger random sample
        var = s2 / (k + m) * (n - k - m) / max(n - 1, 1)
    else:       # the micro-benchmark's estimate and the m items' mean (of the N - k others), by inverse variance
        extra = s2 / m * (n - k - m) / max(n - k - 1, 1)
        with np.errstate(divide="ignore"):
            var = 1 / (1 / sigma ** 2 + 1 / extra)
    with np.errstate(divide="ignore"):
        prob = norm.cdf(gap / np.sqrt(var))
    hit = np.flatnonzero(prob >= threshold)
    return int(m[hit[0]]) if len(hit) else None


def new_pair_power(folder, model_a: str, model_b: str, paths=(), *, threshold: float = 0.8, metric=None,
                   log_filter=None) -> NewPairPower:
    """Power of ``folder`` (a MicroFolder) to order two scored models, and the random items that would
    bring it to ``threshold``; each model from ``paths`` (lm-eval logs or responses.csv) or the pool."""
    if not 0.5 < threshold < 1:
        raise ProtocolError(f"threshold must be in (0.5, 1) for a pair of models, got {threshold}")
    if str(model_a) == str(model_b):
        raise ProtocolError(f"give two different models, not {model_a!r} twice")
    names = [str(model_a), str(model_b)]
    rows, sources = _rows(folder, names, list(paths), metric, log_filter)
    micro, k, n = folder.micro, folder.k, folder.n_items
    est = micro.estimate(rows, None)
    diff = float(est[0] - est[1])
    per_item = rows[0, micro.items] - rows[1, micro.items]
    s2 = float(per_item.var(ddof=1)) if k > 1 else float("nan")
    assumptions = ["the estimated difference is taken as the true one (plug-in)",
                   "the difference is normal with the noise below",
                   "more items are drawn uniformly at random from the rest of the benchmark, and their per-item "
                   "difference varies as on this micro-benchmark's items"]
    if folder.meta["interval"] == "hypergeometric":
        sigma = math.sqrt(max(s2, 0.0) / k * (n - k) / max(n - 1, 1))
        how = (f"random sampling: the pair's per-item difference on the {k} items (variance {s2:.3f}), "
               "finite-population corrected")
    elif folder.meta["interval"] == "normal":
        from mbutils.methods.estimators import residual_variance

        _, residuals = micro.residuals(rows)
        sigma = math.sqrt(max(float(residual_variance(residuals[[0]] - residuals[[1]], n)[0]), 0.0))
        how = (f"the difference estimator's variance for the pair: the two models' cross-fitted residuals on the {k} "
               "items, paired item by item, finite-population corrected")
        assumptions.append("the difference's noise is the estimator's variance from the paired cross-fitted residuals "
                           "(not measured on the pool)")
        if "pool" in sources.values():
            assumptions.append("a pool model's own answers are among those the estimator predicts from, so its "
                               "estimate and residuals are in-sample")
    else:
        sigma, pairs = fold_pair_noise(folder.calibration)
        if not math.isfinite(sigma):
            raise ProtocolError(f"{folder.path}: its pool has no cross-fitted errors to measure the noise of a "
                                "difference (a pool too small); no power can be given")
        how = (f"measured on the pool: held-out errors of {pairs} pairs of models scored by the same cross-fitted "
               "micro-benchmark")
        assumptions.append("the two models' errors behave like those of the pool's models")
    if diff == 0 or sigma == 0:
        prob = 0.5 if diff == 0 else 1.0
    else:
        prob = float(norm.cdf(abs(diff) / sigma))
    more = 0 if prob >= threshold else _more_items(abs(diff), sigma, s2, k, n, threshold,
                                                   folder.meta["interval"] == "hypergeometric")
    return NewPairPower(model_a=names[0], model_b=names[1], sources=sources, estimate_a=100 * float(est[0]),
                        estimate_b=100 * float(est[1]), difference=100 * diff, noise=100 * sigma, noise_source=how,
                        probability=prob, threshold=float(threshold), more_items=more, k=k, n_items=n,
                        assumptions=assumptions, card_mdad=card_mdad_text(folder.card))


def card_mdad_text(card: dict) -> str:
    """The card's MDAD as every output quotes it (the monotone fit, its 95% interval over whole runs)."""
    from mbutils.base.tables import mdad_text, upper_bound_text

    mdad = card.get("mdad")
    if mdad is None or not math.isfinite(float(mdad)) or not card.get("protocol"):
        return ""
    return (f"{mdad_text(mdad, unit=' points')} (95% interval {mdad_text(card.get('ci_low'))} to "
            f"{upper_bound_text(card.get('ci_high'))}; {card['protocol']['n_runs']} protocol runs): the gap at which "
            f"pairs of the pool are ordered correctly {100 * float(card['threshold']):g}% of the time")


def format_new_pair(p: NewPairPower) -> str:
    """The plain-text answer of ``plan --micro ... --pair A B``."""
    origin = {"log": "from the results given", "pool": "from the bundle (a pool model)"}
    lines = [f"{p.model_a} ({origin[p.sources[p.model_a]]}): estimated {p.estimate_a:.1f} points; "
             f"{p.model_b} ({origin[p.sources[p.model_b]]}): estimated {p.estimate_b:.1f} points.",
             f"Estimated difference {p.difference:+.1f} points; the micro-benchmark's noise for a difference "
             f"(sd) {p.noise:.1f} points ({p.noise_source}).",
             f"Probability that this {p.k}-item micro-benchmark orders them as all {p.n_items} items would: "
             f"{p.probability:.2f}."]
    if p.more_items == 0:
        lines.append(f"That reaches {p.threshold:g}: no more items are needed.")
    elif p.more_items is None:
        lines.append(f"No number of added random items (up to the {p.n_items - p.k} left) is expected to reach "
                     f"{p.threshold:g}" + (": the estimated difference is 0." if p.difference == 0 else "."))
    else:
        lines.append(f"About {p.more_items} more uniformly random items (of the {p.n_items - p.k} not in it) would "
                     f"bring it to {p.threshold:g}.")
    if p.card_mdad:
        lines.append(f"The card's MDAD is {p.card_mdad}, on average over those pairs; this answer is for this "
                     "pair, whose own items decide its noise.")
    lines.append("Assumed: " + "; ".join(p.assumptions) + ".")
    return "\n".join(lines) + "\n"

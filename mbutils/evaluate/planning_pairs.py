"""The power of random k-item subsets to order one named pair of models as all N items do.

Public as ``mbutils.pair_power``; ``plan --pair`` on the command line prints it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from mbutils.base.tables import render
from mbutils.data.benchmark import Benchmark
from mbutils.base.errors import ProtocolError
from mbutils.base.vocabulary import renamed_keywords, warn_renamed
from mbutils.evaluate.pair_metrics import first_crossing
from mbutils.evaluate.planning_curves import check_sizes
from mbutils.evaluate.planning_probability import agreement_probability


@dataclass(frozen=True)
class PairPower:
    """Power of ordering one pair of models with uniform random k-item subsets (what ``pair_power`` returns)."""

    model_a: str
    model_b: str
    a_only: int                  # items only model A gets right
    b_only: int                  # items only model B gets right
    n_items: int
    gap: float                   # accuracy of A minus B on all items, points
    threshold: float
    required_size: int | None    # smallest k whose power reaches ``threshold``; None: no k <= N does
    curve: pd.DataFrame          # size, power

    @property
    def agreement(self) -> float:
        """The retired name of ``threshold`` (warns; see :mod:`mbutils.base.vocabulary`)."""
        warn_renamed("PairPower.agreement", "PairPower.threshold")
        return self.threshold


@renamed_keywords(agreement="threshold")
def pair_power(benchmark: Benchmark, model_a: str, model_b: str, sizes=None, threshold: float = 0.8,
               method: str = "exact") -> PairPower:
    """How often a uniformly random k-item subset orders two models as all N items do.

    Only the discordant items matter: ``a`` items model A alone gets right and ``b`` items
    model B alone gets right. A k-subset holds X of the a and Y of the b items and orders
    the pair like the full benchmark iff X > Y when a > b, an exact hypergeometric sum
    (``mbutils.evaluate.planning_probability.agreement_probability``). This is the power of the paired comparison on the
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
    threshold : float, default 0.8
        The power the required size must reach, in (0, 1].
    method : {"exact", "auto", "normal"}, default "exact"
        As in ``mbutils.evaluate.planning_probability.agreement_probability``.

    Returns
    -------
    PairPower
        ``required_size`` is the smallest k from 1 to N whose power reaches ``threshold``
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
    if not 0 < threshold <= 1:
        raise ProtocolError(f"threshold must be in (0, 1], got {threshold}")
    model_a, model_b = str(model_a), str(model_b)
    if model_a == model_b:
        raise ProtocolError(f"give two different models, not {model_a!r} twice")
    i, j = benchmark.model_index([model_a, model_b])
    x, y = benchmark.correct[i].astype(np.int64), benchmark.correct[j].astype(np.int64)
    a, b, n = int(((x == 1) & (y == 0)).sum()), int(((x == 0) & (y == 1)).sum()), benchmark.n_items
    every = np.arange(1, n + 1)
    ks = every if sizes is None else check_sizes(sizes, n)
    power_all = np.asarray(agreement_probability(a, b, n, every, method=method), dtype=np.float64)
    hit = first_crossing(power_all[None, :], threshold)[0]
    return PairPower(model_a=model_a, model_b=model_b, a_only=a, b_only=b, n_items=n,
                     gap=100.0 * (a - b) / n, threshold=float(threshold),
                     required_size=int(every[hit]) if hit >= 0 else None,
                     curve=pd.DataFrame({"size": ks, "power": power_all[ks - 1]}))


def format_pair_power(p: PairPower, sizes=None) -> str:
    """Plain-text answer of ``plan --pair`` for the command line."""
    lines = [f"{p.model_a} vs {p.model_b} on {p.n_items} items: gap {p.gap:+.2f} points; "
             f"{p.a_only} items only {p.model_a} gets right, {p.b_only} only {p.model_b}."]
    if p.a_only == p.b_only:
        lines.append("They are tied on the full benchmark: no subset size orders them reliably.")
    elif p.required_size is None:
        lines.append(f"No random subset of up to {p.n_items} items orders them with probability {p.threshold:g}.")
    else:
        at = p.curve.set_index("size")["power"]
        lines.append(f"A random micro-benchmark needs {p.required_size} items to order them correctly with "
                     f"probability at least {p.threshold:g}"
                     + (f" ({at[p.required_size]:.3f})." if p.required_size in at.index else "."))
    shown = p.curve if sizes is not None else p.curve[p.curve["size"].isin([10, 25, 50, 100, 200, 500, 1000])]
    if len(shown):
        lines += ["", render(shown.assign(power=shown["power"].round(4)), "markdown").rstrip()]
    lines.append("(power: probability that a uniformly random k-item subset orders the pair as all items do; "
                 "exact hypergeometric sum over the discordant items.)")
    return "\n".join(lines) + "\n"

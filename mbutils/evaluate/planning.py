"""How many items do you need? The planner's answer for one gap bin, set beside cached selectors' results.

The random answer is computed, not simulated: the exact agreement of random k-item subsets
(:mod:`~mbutils.evaluate.planning_probability`), averaged over the bundle's pairs in the gap's
bin (:mod:`~mbutils.evaluate.planning_curves`). One named pair's power is
:mod:`~mbutils.evaluate.planning_pairs`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from mbutils.data.benchmark import Benchmark
from mbutils.evaluate import noise
from mbutils.evaluate.metrics import agreement_curve, mdad_table
from mbutils.evaluate.pair_metrics import first_crossing
from mbutils.evaluate.paired import BETTER, compare_selectors
from mbutils.evaluate.planning_curves import gap_bin, predicted_mdad, size_curve
from mbutils.evaluate.planning_population import pair_population
from mbutils.methods.experiment import cache_path, check_sizes
from mbutils.methods.protocol import Protocol
from mbutils.base.tables import mdad_text, render
from mbutils.base.vocabulary import renamed_keywords, warn_renamed

# Re-exported: the command line and the chapters import these from here.
from mbutils.evaluate.planning_curves import predicted_curve, required_size, size_table  # noqa: F401  (chapters)
from mbutils.evaluate.planning_pairs import format_pair_power, pair_power  # noqa: F401  (the command line)
from mbutils.evaluate.planning_probability import agreement_probability  # noqa: F401  (chapters)
from mbutils.methods.selectors import selector_names


@dataclass(frozen=True)
class Plan:
    """Answer to "how many items do I need?" for one gap and threshold (what ``mbutils.plan`` returns).

    ``curve`` is the predicted agreement in the gap's bin at each size; ``random_size`` the smallest
    size at which random sampling reaches ``threshold`` (None: not within ``n_items``); ``table``
    compares cached experiments' selectors with random sampling (empty without any).
    ``format_plan`` prints it as ``python -m mbutils plan`` does.

    Examples
    --------
    >>> from mbutils import Plan, Protocol, load_benchmark, plan
    >>> p = plan(load_benchmark("synthetic-gpqa"), 5.0, protocol=Protocol(n_runs=2))
    >>> isinstance(p, Plan), p.gap, p.threshold, p.n_items
    (True, 5.0, 0.8, 224)
    >>> bool(p.curve.set_index("size")["agreement"][p.random_size] >= p.threshold)
    True
    """

    gap: float
    threshold: float
    gap_low: float
    gap_high: float
    random_size: int | None      # predicted smallest size for random sampling
    n_items: int                 # items the truth is taken from (seen half or full)
    population: str
    curve: pd.DataFrame          # predicted agreement in the gap's bin vs size
    table: pd.DataFrame          # per selector: size compared, MDAD, random's MDAD, verdict

    @property
    def agreement(self) -> float:
        """The retired name of ``threshold`` (warns; see :mod:`mbutils.base.vocabulary`)."""
        warn_renamed("Plan.agreement", "Plan.threshold")
        return self.threshold


def _compare_selectors(results: pd.DataFrame, random_size: int | None, gap_bin_index: int,
                       threshold: float, bin_width: float, tie_rule: str,
                       predicted_random: pd.DataFrame) -> pd.DataFrame:
    """MDAD of every cached selector at the size nearest the random requirement."""
    mdads = mdad_table(results, threshold=threshold, bin_width=bin_width, tie_rule=tie_rule)
    curves = agreement_curve(results, bin_width=bin_width, tie_rule=tie_rule)
    sizes = np.sort(mdads["size"].unique())
    target = sizes[-1] if random_size is None or random_size > sizes[-1] else sizes[sizes >= random_size][0]
    in_bin = curves[np.isclose(curves["gap"], gap_bin_index * bin_width)]
    reach = in_bin[in_bin["agreement"] >= threshold].groupby("selector")["size"].min()
    random_sim = mdads[(mdads["selector"] == "random")].set_index("size")["mdad"]
    random_pred = predicted_random.set_index("size")["mdad"]
    at = mdads[mdads["size"] == target].copy()
    at["random_mdad"] = random_sim.get(target, random_pred.get(target, np.nan))
    at["random_source"] = "simulated" if target in random_sim.index else "predicted"
    if target in random_sim.index:  # random ran in this experiment: compare pairwise on the shared runs
        def beats(selector: str) -> str:
            row = compare_selectors(results, selector, "random", threshold=threshold, bin_width=bin_width,
                                    tie_rule=tie_rule, sizes=[int(target)]).iloc[0]
            return "yes (paired interval below 0)" if row["verdict"] == BETTER else str(row["verdict"])
    else:  # predicted: exact, no interval of its own; the selector's interval against that number
        r = float(at["random_mdad"].iloc[0]) if np.isfinite(at["random_mdad"].iloc[0]) else np.inf
        low, high = noise.intervals(at)
        unpaired = dict(zip(at["selector"], noise.compare(low, high, np.full(len(at), r), np.full(len(at), r))))

        def beats(selector: str) -> str:
            return "yes (interval below)" if unpaired[selector] == noise.BETTER else str(unpaired[selector])
    at["beats_random"] = [("-" if s == "random" else beats(s)) for s in at["selector"]]
    at["smallest_size_reaching"] = at["selector"].map(reach).astype("float64")
    cols = ["selector", "size", "mdad", "ci_low", "ci_high", "random_mdad", "random_source",
            "beats_random", "smallest_size_reaching"]
    return at[cols].sort_values("mdad", na_position="last", kind="stable").reset_index(drop=True)


@renamed_keywords(data="benchmark", agreement="threshold")
def plan_table(benchmark, gap: float, threshold: float = 0.8, selector_results: pd.DataFrame | None = None,
               *, truth: str = "seen", protocol: Protocol | None = None, bin_width: float = 0.5,
               tie_rule: str = "paper", method: str = "auto") -> Plan:
    """How many items do you need? The random-subset size that orders pairs ``gap`` points apart reliably.

    Public as ``mbutils.plan``. The random answer is computed, not simulated: for two
    models, a uniformly random k-item subset orders them like the N items do with a
    probability that depends only on the items exactly one of them gets right (a
    hypergeometric sum, or its normal approximation for large k). Averaged over the pairs of
    ``benchmark`` whose gap falls in ``gap``'s bin, this gives the expected agreement for every
    size k = 1..N; the answer is the smallest k whose agreement reaches ``threshold``.

    With ``selector_results`` (a results table of this bundle), every selector's MDAD at
    ``threshold`` is compared with random's at the smallest tested size that is
    at least the random requirement (the largest tested size if none is that large), with
    the book's noise rule: a selector beats random only when their 95% intervals are
    disjoint.

    Parameters
    ----------
    benchmark : Benchmark or array_like of shape (n_models, n_items)
        The bundle, or a 0/1 models x items matrix (one subtask). Every pair of its models
        (or of ``protocol.target_set``) is in the population averaged over.
    gap : float
        Accuracy gap in points, at least 0. The pairs considered are those in its bin,
        ``[b * bin_width, (b + 1) * bin_width)`` with ``b = floor(gap / bin_width)``; a bin
        without pairs is refused.
    threshold : float, default 0.8
        Share of pairs to be ordered correctly, in (0, 1]: the MDAD threshold.
    selector_results : pandas.DataFrame, optional
        Results of an experiment on ``benchmark`` (:func:`run_experiment`, with the same
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
        A frozen record (``mbutils.evaluate.planning.Plan``) with ``gap``, ``threshold``,
        ``gap_low`` and ``gap_high`` (the bin, points), ``random_size`` (the smallest size
        reaching ``threshold``; None if no size up to N does), ``n_items`` (N),
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
    pop = pair_population(benchmark, truth=truth, pairs="all", protocol=protocol)
    curve = size_curve(pop, gap, bin_width=bin_width, tie_rule=tie_rule, method=method)
    hit = first_crossing(curve["agreement"].to_numpy()[None, :], threshold)[0]
    random_size = int(curve["size"].iloc[hit]) if hit >= 0 else None
    b = gap_bin(gap, bin_width)
    if selector_results is None:
        table = pd.DataFrame(columns=["selector", "size", "mdad", "ci_low", "ci_high", "random_mdad",
                                      "random_source", "beats_random", "smallest_size_reaching"])
    else:
        sizes = np.sort(pd.unique(selector_results["size"]).astype(np.int64))
        sizes = sizes[sizes <= pop.n_items]
        pred = predicted_mdad(pop, sizes, threshold=threshold, bin_width=bin_width,
                              tie_rule=tie_rule, method=method) if len(sizes) else pd.DataFrame(
                                  columns=["size", "mdad"])
        table = _compare_selectors(selector_results, random_size, b, threshold, bin_width,
                                   tie_rule, pred)
    return Plan(gap=float(gap), threshold=float(threshold), gap_low=b * bin_width,
                gap_high=(b + 1) * bin_width, random_size=random_size, n_items=pop.n_items,
                population=pop.description, curve=curve, table=table)


def format_plan(plan: Plan) -> str:
    """Plain-text answer for the command line."""
    lines = [f"Pairs {plan.gap_low:g}-{plan.gap_high:g} accuracy points apart, "
             f"target agreement {plan.threshold:g} ({plan.population})."]
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
        lines.append(f"\nCached experiments at size {size} (MDAD at threshold {plan.threshold:g}, points):")
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
    protocol = Protocol() if protocol is None else protocol
    sizes = check_sizes(benchmark, sizes)
    names = selector_names() if selectors is None else list(selectors)
    paths = [cache_path(benchmark, protocol, sizes, name) for name in names]
    frames = [pd.read_parquet(path) for path in paths if path.exists()]
    return pd.concat(frames, ignore_index=True) if frames else None

"""Audit a given micro-benchmark: how well does a fixed list of items rank the models?

Design. The items are fixed (e.g. a published "tiny" benchmark), so there are no sources,
no seen half and no run-to-run re-selection: every model of the bundle (or of a chosen
subset) is a target, and every pair of them is judged. A fixed list was not built from a
seen half, so the truth is the **full benchmark** accuracy by default; ``truth="rest"``
judges against the items *not* in the micro-benchmark instead (no shared items, which
removes the part of the agreement that comes from overlap). The micro-benchmark's estimate
is the weighted mean of each model's 0/1 results on its items (weights normalised).

The baseline is ``n_random`` uniformly random subsets of the same size, each judged the
same way (a seeded draw each). Results are tidy tables in the format of experiments
(:data:`mbutils.evaluate.results_table.RESULT_COLUMNS`), so :func:`~mbutils.evaluate.metrics.mdad_table`,
:func:`~mbutils.evaluate.metrics.agreement_curve` and :func:`~mbutils.evaluate.metrics.summary_table` apply
unchanged: the micro-benchmark is one run, the baseline one run per draw. Audits have no
unseen half; the ``unseen_*`` columns repeat the truth.

With ``truth="full"`` the baseline's expected curve is also computed exactly
(:mod:`mbutils.evaluate.planning_curves`), a check on the simulated baseline.

Reading and resolving the item list is :mod:`mbutils.evaluate.audit_inputs`; the tidy tables
and the bootstrap over models are :mod:`mbutils.evaluate.audit_tables`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from mbutils.data.benchmark import Benchmark
from mbutils.base.errors import ProtocolError
from mbutils.evaluate.audit_inputs import resolve_items, resolve_models
from mbutils.evaluate.audit_tables import MICRO, RANDOM, audit_tables, ci_models, share_closer
from mbutils.evaluate.metrics import mdad_table, agreement_curve, summary_table
from mbutils.evaluate.planning_population import pair_population
from mbutils.methods.protocol import rng_for
from mbutils.base.validation import check_choice
from mbutils.base.tables import mdad_text, render

# Re-exported: the command line imports these from here.
from mbutils.evaluate.audit_inputs import read_items, read_weights  # noqa: F401

TRUTHS = ("full", "rest")
CI_METHODS = ("models", "pairs", "none")

#: Most (random subsets x model pairs) an audit holds at once: about 2 GB of pair arrays.
MAX_RANDOM_PAIRS = 50_000_000


@dataclass(frozen=True)
class AuditReport:
    """Everything an audit found; tables use points for MDAD/gaps and error.

    ``table`` has one row per method (the micro-benchmark, random subsets of its size, and
    random sampling's expected MDAD); ``random_mdads`` the MDAD of each random subset and
    ``mdad_rank`` the share of them at most the micro-benchmark's. ``format_audit`` prints it
    as ``python -m mbutils audit`` does.

    Examples
    --------
    >>> from mbutils import AuditReport, audit, load_benchmark
    >>> bench = load_benchmark("synthetic-gpqa")
    >>> report = audit(bench, bench.items[:20], models=bench.models[:40], n_random=20, ci="none")
    >>> isinstance(report, AuditReport), report.n_models, len(report.items), len(report.random_mdads)
    (True, 40, 20, 20)
    >>> round(float(report.weights.sum()), 9)  # the weights, normalised
    1.0
    """

    name: str                   # bundle name
    items: list[str]
    weights: np.ndarray         # normalised to sum 1
    n_models: int
    n_truth_items: int          # items the truth is measured on
    truth: str
    threshold: float
    n_random: int
    results: pd.DataFrame       # tidy rows of both: selector "micro-benchmark" and "random"
    table: pd.DataFrame         # per method: mdad, ci_low, ci_high, tau, error, share_closer, ...
    curve: pd.DataFrame         # agreement per gap bin: selector, gap, agreement, n_pairs
    random_mdads: np.ndarray    # MDAD of each random draw (points; NaN = not reached)
    mdad_rank: float            # share of random draws whose MDAD is <= the micro-benchmark's


def _bar(total: int, desc: str, show: bool):
    """A progress bar on stderr (a no-op one when hidden): the bootstrap can take tens of seconds."""
    from tqdm.std import tqdm

    return tqdm(total=total, desc=desc, unit="resample", disable=not show, leave=False, file=sys.stderr)


def audit(benchmark: Benchmark, items: Sequence[str], weights=None, *, n_random: int = 100,
          seed: int = 0, threshold: float = 0.8, truth: str = "full", models=None,
          bin_width: float = 0.5, tie_rule: str = "paper", mdad_method: str = "monotone",
          ci: str = "models", n_boot: int = 1000, progress: bool = False) -> AuditReport:
    """Audit a given micro-benchmark: how well a fixed list of items ranks every pair of models, against random subsets.

    For a published "tiny" benchmark or your own list of items. There are no sources and no
    seen half: every model of ``benchmark`` (or of ``models``) is a target, each model's
    estimate is the weighted mean of its 0/1 results on the items, and every pair of models
    is judged against the truth. The baseline is ``n_random`` uniformly random subsets of
    the same size, judged the same way. MDADs, agreement curves, Kendall tau and error are
    those of :func:`mdad_table`, :func:`agreement_curve` and :func:`summary_table`, applied
    to the micro-benchmark as one run and the random subsets as one run each.

    Parameters
    ----------
    benchmark : Benchmark
        The full benchmark the items come from.
    items : sequence of str
        Names of the micro-benchmark's items (each once, all in ``benchmark.items``).
    weights : array_like, optional
        One non-negative weight per item, normalised to sum to 1; None: a plain mean.
    n_random : int, default 100
        Random subsets of the same size in the baseline (each a seeded draw).
    seed : int, default 0
        Root seed of the random subsets and the bootstrap.
    threshold : float, default 0.8
        Agreement the MDAD's bin must reach, in (0, 1].
    truth : {"full", "rest"}, default "full"
        What each pair is judged against: the full-benchmark accuracy, or the accuracy on
        the items *not* in the micro-benchmark (no shared items, so no agreement comes from
        the overlap). With ``"full"`` the random baseline's expected curve and MDAD are also
        computed exactly (the row ``"random (expected)"``), a check on the simulated baseline.
    models : None, str or sequence of str, default None
        The models to rank: all, a target-set name of the bundle, or a list of names (at
        least 2).
    bin_width : float, default 0.5
        Width of the gap bins in accuracy points, as in :func:`mdad_table`.
    tie_rule : {"paper", "exclude"}, default "paper"
        Pairs tied on the truth, as in :func:`mdad_table`.
    mdad_method : {"monotone", "first"}, default "monotone"
        The MDAD's definition, :func:`mdad_table`'s ``method`` (the book's monotone fit, or the paper's
        first crossing).
    ci : {"models", "pairs", "none"}, default "models"
        The 95% interval of the micro-benchmark's and the pooled random MDAD. ``"models"``
        resamples models with replacement (all pairs come from one set of models, and pairs
        sharing a model are dependent) and takes the 2.5% and 97.5% quantiles; ``"pairs"`` is
        the paper's per-bin bootstrap of pairs, far too narrow here (tens of thousands of
        dependent pairs); ``"none"``: no interval.
    n_boot : int, default 1000
        Bootstrap resamples.
    progress : bool, default False
        Show a progress bar (on stderr) for the bootstrap over models.

    Returns
    -------
    AuditReport
        A frozen record (``mbutils.evaluate.auditing.AuditReport``; ``mbutils.evaluate.auditing.format_audit`` prints
        it as the command line does) with ``name``, ``items`` and ``weights`` (normalised),
        ``n_models``, ``n_truth_items`` (items the truth is measured on), ``truth``,
        ``threshold``, ``n_random``; ``results`` (tidy rows in the format of
        :func:`run_experiment`, selector ``"micro-benchmark"`` and ``"random"``), ``table``
        (one row per method: selector, mdad, ci_low, ci_high, n_pairs, reached, n_runs, tau,
        tau_sd, error, error_sd and share_closer, the share of pairs closer than the MDAD),
        ``curve`` (agreement per gap bin: selector, gap, agreement, n_pairs, kind),
        ``random_mdads`` (each random subset's own MDAD, NaN when not reached) and
        ``mdad_rank`` (share of random subsets whose MDAD is at most the micro-benchmark's;
        lower MDAD is better).

    Examples
    --------
    >>> from mbutils import audit, load_benchmark
    >>> bench = load_benchmark("synthetic-gpqa")
    >>> items, models = bench.items[:20], bench.models[:40]
    >>> report = audit(bench, items, models=models, n_random=20, n_boot=100)
    >>> report.table["selector"].tolist()
    ['micro-benchmark', 'random', 'random (expected)']
    >>> report.n_models, report.n_truth_items, len(report.random_mdads)
    (40, 448, 20)
    >>> rest = audit(bench, items, models=models, n_random=20, truth="rest", ci="none")
    >>> rest.n_truth_items, rest.table["selector"].tolist()  # the other 428 items
    (428, ['micro-benchmark', 'random'])
    """
    check_choice(truth, TRUTHS, "truth", ProtocolError)
    if int(n_random) != n_random or n_random < 1:
        raise ProtocolError(f"n_random must be a positive number of random subsets, got {n_random}")
    if not 0 < threshold <= 1:
        raise ProtocolError(f"threshold must be in (0, 1], got {threshold}")
    index, w = resolve_items(benchmark, items, weights)
    if truth == "rest" and len(index) == benchmark.n_items:
        raise ProtocolError("the micro-benchmark holds every item, so no items are left for truth='rest'")
    models_idx = resolve_models(benchmark, models)
    n_pairs = len(models_idx) * (len(models_idx) - 1) // 2
    if int(n_random) * n_pairs > MAX_RANDOM_PAIRS:  # every random subset's pairs are held at once (~40 bytes each)
        most = max(1, MAX_RANDOM_PAIRS // max(1, n_pairs))
        raise ProtocolError(f"{int(n_random):,} random subsets of {len(models_idx)} models ({n_pairs:,} pairs each) "
                            f"would need about {int(n_random) * n_pairs * 40 / 1e9:.0f} GB; use at most {most:,} "
                            "(the baseline's interval is already tight at 1,000)")
    micro, random = audit_tables(benchmark, models_idx, index, w, int(n_random), seed, truth)
    results = pd.concat([micro, random], ignore_index=True)

    opts = dict(threshold=threshold, bin_width=bin_width, tie_rule=tie_rule, method=mdad_method)
    if ci not in CI_METHODS:
        raise ProtocolError(f"ci must be one of {', '.join(CI_METHODS)}, got {ci!r}")
    mdads = mdad_table(results, ci="none" if ci == "models" else ci, n_boot=n_boot, seed=seed, **opts)
    if ci == "models":
        reached = mdads.index[mdads["reached"]]
        with _bar(len(reached) * n_boot, "audit: bootstrap over models", progress) as bar:
            for row in reached:
                name = mdads.at[row, "selector"]
                mdads.loc[row, ["ci_low", "ci_high"]] = ci_models(
                    results[results["selector"] == name], threshold=threshold, bin_width=bin_width,
                    tie_rule=tie_rule, method=mdad_method, n_boot=n_boot, rng=rng_for(seed, "audit-ci", name),
                    bar=bar)
    summary = summary_table(results)[["selector", "tau", "tau_sd", "error", "error_sd"]]
    table = mdads.drop(columns=["size"]).merge(summary, on="selector")
    table["share_closer"] = [share_closer(results[results["selector"] == s], m, bin_width)
                             for s, m in zip(table["selector"], table["mdad"])]

    per_draw = random.assign(selector=RANDOM + "#" + random["run"].astype(str), run=0)
    random_mdads = mdad_table(per_draw, ci="none", **opts)["mdad"].to_numpy(np.float64)
    micro_mdad = float(table.loc[table["selector"] == MICRO, "mdad"].iloc[0])
    rank = float(np.mean(np.nan_to_num(random_mdads, nan=np.inf) <= (np.inf if np.isnan(micro_mdad) else micro_mdad)))

    curve = agreement_curve(results, bin_width=bin_width, tie_rule=tie_rule)
    curve["kind"] = "simulated"
    curve.loc[curve["selector"] == MICRO, "kind"] = "fixed"
    if truth == "full":
        curve, table = _add_prediction(benchmark, models_idx, len(index), curve, table,
                                       threshold, bin_width, tie_rule, mdad_method)
    return AuditReport(
        name=benchmark.name, items=[str(i) for i in benchmark.items[index]], weights=w,
        n_models=len(models_idx), n_truth_items=int(micro["n_seen"].iloc[0]), truth=truth,
        threshold=threshold, n_random=int(n_random), results=results, table=table,
        curve=curve.drop(columns=["size"]), random_mdads=random_mdads, mdad_rank=rank,
    )


def _add_prediction(benchmark, models_idx, k, curve, table, threshold, bin_width, tie_rule, mdad_method):
    """The random baseline's expected curve and MDAD, computed exactly (truth = full)."""
    from mbutils.evaluate.planning_curves import predicted_curve, predicted_mdad

    sub = Benchmark(name=benchmark.name, correct=benchmark.correct[models_idx],
                    models=benchmark.models[models_idx], items=benchmark.items,
                    subtasks=benchmark.subtasks)
    pop = pair_population(sub, truth="full")
    opts = dict(bin_width=bin_width, tie_rule=tie_rule)
    pred = predicted_curve(pop, [k], **opts).drop(columns=["kind"]).assign(selector="random (expected)")
    pred["kind"] = "predicted"
    mdad = predicted_mdad(pop, [k], threshold=threshold, mdad_method=mdad_method, **opts)
    row = {"selector": "random (expected)", "mdad": float(mdad["mdad"].iloc[0]),
           "reached": bool(mdad["reached"].iloc[0]), "n_pairs": int(mdad["n_pairs"].iloc[0])}
    return pd.concat([curve, pred], ignore_index=True), pd.concat([table, pd.DataFrame([row])], ignore_index=True)


def _fmt_mdad(value: float) -> str:
    return mdad_text(value)


def _fmt_ci(low: float, high: float, has_ci: bool) -> str:
    if not has_ci:
        return ""
    return f"{_fmt_mdad(low)} to {_fmt_mdad(high)}"


LABELS = {MICRO: "micro-benchmark", RANDOM: "random, pooled over draws",
          "random (expected)": "random, expected (exact)"}


def format_audit(report: AuditReport, *, max_gap: float = 10.0) -> str:
    """Plain-text audit for the command line: headline, per-method table, agreement by gap."""
    where = ("full-benchmark accuracy" if report.truth == "full"
             else "accuracy on the items not in the micro-benchmark")
    weighted = "" if np.allclose(report.weights, report.weights[0]) else ", weighted"
    lines = [f"Audit of a {len(report.items)}-item micro-benchmark{weighted} on {report.name}: "
             f"{report.n_models} models, truth = {where} ({report.n_truth_items} items), "
             f"threshold {report.threshold:g}, baseline = {report.n_random} random subsets of the same size."]
    t = report.table
    has_ci = t["selector"].isin([MICRO, RANDOM]) & t["reached"].astype(bool)
    shown = pd.DataFrame({
        "method": t["selector"].map(LABELS).fillna(t["selector"]),
        "MDAD": t["mdad"].map(_fmt_mdad),
        "95% CI": [_fmt_ci(lo, hi, c) for lo, hi, c in zip(t["ci_low"], t["ci_high"], has_ci)],
        "tau": t["tau"].map(lambda v: "" if pd.isna(v) else f"{v:.3f}"),
        "error": t["error"].map(lambda v: "" if pd.isna(v) else f"{v:.2f}"),
        "pairs closer than MDAD": t["share_closer"].map(lambda v: "" if pd.isna(v) else f"{100 * v:.0f}%"),
    })
    lines += ["", render(shown, "markdown").rstrip(),
              "(MDAD and error in accuracy points; tau = Kendall tau-b against the truth.)"]
    finite = report.random_mdads[np.isfinite(report.random_mdads)]
    if len(finite):
        lo, hi = np.percentile(finite, [5, 95])
        never = len(report.random_mdads) - len(finite)
        lines.append(f"\nEach random subset's own MDAD: 5th-95th percentile {lo:g} to {hi:g} points"
                     + (f" ({never} draws never reached the threshold)" if never else "") + ".")
    lines.append(f"The micro-benchmark's MDAD is matched or beaten by {100 * report.mdad_rank:.0f}% "
                 "of the random subsets (lower MDAD is better).")
    wide = (report.curve[report.curve["gap"] <= max_gap]
            .pivot_table(index="gap", columns="selector", values="agreement", sort=False).reset_index())
    wide.columns = [LABELS.get(c, c) for c in wide.columns]
    lines += ["", f"Agreement by gap (points, up to {max_gap:g}):", render(wide, "markdown").rstrip()]
    return "\n".join(lines) + "\n"

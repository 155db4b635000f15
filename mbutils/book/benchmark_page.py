"""The steps the four benchmark chapters (GPQA, BBH, MMLU-Pro, MMLU) share, as calls with visible knobs.

Each benchmark chapter runs the paper's protocol with every selector and shows the paper's
per-benchmark figures in the same order: agreement curves by size (the paper's figure 3),
error, τ and MDAD against size (its figure 4), the seen against the unseen half (its
figure 6), MDAD at several thresholds, the sources sweep and the summary
(:mod:`mbutils.book.sections`). The steps are here, once; a chapter calls them with its own
parameters (bin width, thresholds, glue prefix) and shows, in its own cells, only what
differs: the section on its pool and its exercises. Every figure and table keeps the label
the chapters' prose cites (``agreement``, ``metrics``, ``mdad``, ``tau-error``, ``unseen``,
``thresholds``), and a chapter calls ``book.chapter(...)`` before any of them.
"""

from __future__ import annotations

from mbutils.book import plots
from mbutils.book.display import claim_note
from mbutils.book.setting import Setting, configure, paper_selectors
from mbutils.book.findings import claims
from mbutils.evaluate.metrics import INTERVAL_TEXT, agreement_curve, mdad_table
from mbutils.book.findings.reports import mdad_wide, summary_wide, threshold_table


def benchmark_setup(data, *, sizes=None, runs=None, sources=None, targets=None, seed=0, source_counts=None,
                    source_runs=None, missing="error", selectors=None):
    """``(cfg, selectors, res)``: the page's :class:`~mbutils.book.setting.Setting`, the selectors it
    compares (the parameter's names, or the paper's six) and the results table of every selector x
    size x run, one row per target model (cached). The keywords are the chapter's parameters."""
    cfg = configure(data, sizes=sizes, runs=runs, sources=sources, targets=targets, seed=seed,
                    source_counts=source_counts, source_runs=source_runs, missing=missing)
    selectors = paper_selectors(selectors)
    return cfg, selectors, cfg.results(selectors)


def agreement_by_size(cfg: Setting, res, mdad, *, threshold: float, bin_width: float) -> None:
    """Figure ``agreement``: one panel per size, mean pairwise agreement against the true gap in
    bins of ``bin_width`` points, dotted at each method's MDAD."""
    curve = agreement_curve(res, bin_width=bin_width)
    cfg.show(plots.agreement_curves(curve, mdad=mdad, threshold=threshold),
             f"Mean pairwise agreement against the true accuracy gap ({bin_width:g}-point bins) per size; "
             f"dashed: the {threshold:g} threshold, dotted: MDAD.", label="agreement")


def metrics_by_size(cfg: Setting, res, mdad, summary, *, threshold: float, glue_prefix: str) -> None:
    """Figure ``metrics`` (error, τ and MDAD against *k*), table ``mdad`` (the MDADs with their
    intervals), table ``tau-error`` (Kendall τ and the estimation error), and the computed note on
    whether random sampling's MDAD falls with k (glued as ``<glue_prefix>_random_by_size``)."""
    cfg.show(plots.metrics_vs_size(summary, mdad), "Estimation error (points), Kendall tau-b and MDAD (points; band: "
             f"its {INTERVAL_TEXT}) against k, log scale; means over runs.", label="metrics")
    cfg.table(mdad_wide(mdad), f"MDAD (points) at threshold {threshold:g}, with its {INTERVAL_TEXT}.", label="mdad")
    cfg.table(summary_wide(summary), "Kendall tau-b and estimation error (points), mean over runs.", label="tau-error")
    claim_note("Random sampling by size, computed", claims.random_by_size(mdad),
               f"{glue_prefix}_random_by_size")


def unseen_half(cfg: Setting, res, mdad, *, threshold: float, glue_prefix: str):
    """Figure ``unseen``: the MDADs judged on the seen half against those judged on the unseen
    half, and the computed note of which method loses most (glued as ``<glue_prefix>_unseen_loss``).
    Returns the unseen half's MDAD table."""
    unseen = mdad_table(res, threshold=threshold, split="unseen")
    cfg.show(plots.seen_vs_unseen(mdad, unseen), "MDAD judged on the seen half vs on the unseen half.", label="unseen")
    claim_note("Seen vs unseen, computed", claims.unseen_loss(mdad, unseen), f"{glue_prefix}_unseen_loss")
    return unseen


def mdad_by_thresholds(cfg: Setting, res, levels) -> dict:
    """Figure and table ``thresholds``: MDAD against *k* at each agreement level of ``levels``
    (comma-separated, e.g. ``"0.7,0.8,0.9"``). Returns level -> MDAD table."""
    by_level = {float(t): mdad_table(res, threshold=float(t)) for t in str(levels).split(",")}
    cfg.show(plots.mdad_by_threshold(by_level), f"MDAD against k at each threshold (bands: the {INTERVAL_TEXT}).",
             label="thresholds")
    cfg.table(threshold_table(by_level), "MDAD (points) by threshold.", label="thresholds")
    return by_level

"""The sections of a benchmark chapter, one function each, shared by the four benchmark chapters.

A benchmark chapter is prose, a parameters cell and calls to a :class:`BenchmarkStudy`:
``study = BenchmarkStudy(cfg, selectors, threshold)``, then ``study.agreement_by_size()``,
``study.error_tau_mdad()``, ... Each call computes from the study's results, shows its
figure or table, and — where the bundle cannot support the section (too few models for a
sources sweep, too few pairs) — shows a note saying what it needs instead of failing.
"""

from __future__ import annotations

import html

import numpy as np

from . import book, metrics, plots


def _snake(text: str) -> str:
    return text.replace("-", "_")


class BenchmarkStudy:
    """One benchmark chapter's experiment (all selectors × sizes × runs) and its sections."""

    def __init__(self, setting: book.Setting, selectors=None, threshold: float = 0.8):
        self.cfg = setting
        self.selectors = book.paper_selectors(setting, selectors)
        self.threshold = float(threshold)
        self.res = setting.results(self.selectors)
        self.mdad = metrics.mdad_table(self.res, threshold=self.threshold)
        self.summary = metrics.summary_table(self.res)

    def banner(self) -> None:
        from IPython.display import HTML, display

        display(HTML(self.cfg.banner()))

    # ------------------------------------------------------------------ sections
    def agreement_by_size(self) -> None:
        """Figure 3 of the paper: agreement against the true gap, one panel per size."""
        curve = metrics.agreement_curve(self.res, bin_width=1.0)
        book.show(plots.agreement_curves(curve, mdad=self.mdad, threshold=self.threshold),
                  self.cfg.caption(f"Mean pairwise agreement against the true accuracy gap (1-point bins) per "
                                   f"size; dashed: the {self.threshold:g} threshold, dotted: MDAD."))

    def error_tau_mdad(self) -> None:
        """Figure 4 of the paper and its numbers: error, Kendall tau-b and MDAD against k."""
        book.show(plots.metrics_vs_size(self.summary, self.mdad),
                  self.cfg.caption("Estimation error (points), Kendall tau-b and MDAD (points; band: the paper's "
                                   "95% CI) against k, log scale; means over runs."))
        book.table(book.mdad_wide(self.mdad),
                   caption=self.cfg.caption(f"MDAD (points) at threshold {self.threshold:g}, with the paper's 95% CI."))
        book.table(book.summary_wide(self.summary),
                   caption=self.cfg.caption("Kendall tau-b and estimation error (points), mean over runs."))

    def seen_vs_unseen(self) -> dict:
        """Figure 6 of the paper, and which method loses most when judged on the unseen half."""
        unseen = metrics.mdad_table(self.res, threshold=self.threshold, split="unseen")
        book.show(plots.seen_vs_unseen(self.mdad, unseen),
                  self.cfg.caption("MDAD judged against accuracy on the seen half vs on the unseen half."))
        loss = unseen_loss(self.mdad, unseen)
        if loss is None:
            book.note("Seen vs unseen", "No size has a reached MDAD on both halves, so there is no loss to compare.")
            return {}
        book.note("Seen vs unseen, computed", html.escape(loss["sentence"]))
        return loss

    def thresholds(self) -> None:
        """The appendix figure: MDAD at agreement thresholds 0.7, 0.8 and 0.9."""
        tables = {t: metrics.mdad_table(self.res, threshold=t) for t in (0.7, 0.8, 0.9)}
        book.show(plots.mdad_by_threshold(tables),
                  self.cfg.caption("MDAD against k at three agreement thresholds (bands: the paper's 95% CI)."))
        book.table(book.threshold_table(tables), caption=self.cfg.caption("MDAD (points) by threshold."))

    def sources(self) -> None:
        """The appendix figure: MDAD against the number of source models (the counts that fit)."""
        cfg = self.cfg
        if not cfg.can_sweep_sources:
            book.note("No sources sweep on this bundle", html.escape(cfg.sweep_note()), "warning")
            return
        sweep = book.sources_table(cfg.sources_sweep(self.selectors), self.threshold)
        book.show(plots.mdad_vs_sources(sweep, size=cfg.source_size),
                  cfg.caption(f"MDAD (points) at k = {cfg.source_size} against the number of source models "
                              f"(bands: the paper's 95% CI).", runs=cfg.source_runs, sizes=[cfg.source_size],
                              n_sources=", ".join(map(str, cfg.source_counts))))
        spread = sources_spread(sweep)
        if spread:
            book.note("Sources sweep, computed", html.escape(spread))

    def in_short(self, prefix: str) -> dict:
        """The headline numbers, glued as ``<prefix>_<name>`` for the front page, and a paragraph."""
        from IPython.display import HTML, display

        facts = book.benchmark_facts(self.cfg, self.res, self.mdad, self.summary)
        for name, value in facts.items():
            book.glue(f"{_snake(prefix)}_{name}", value)
        display(HTML(book.facts_html(facts, self.cfg)))
        return facts


# ------------------------------------------------------------ computed sentences
def unseen_loss(seen, unseen) -> dict | None:
    """Which method's MDAD grows most from the seen to the unseen half (mean over the sizes
    where both are reached), as numbers and as a sentence whose wording follows them."""
    both = seen.merge(unseen, on=["selector", "size"], suffixes=("_seen", "_unseen"))
    both = both[np.isfinite(both["mdad_seen"]) & np.isfinite(both["mdad_unseen"])]
    if both.empty:
        return None
    loss = (both["mdad_unseen"] - both["mdad_seen"]).groupby(both["selector"]).mean().sort_values()
    worst, best = loss.index[-1], loss.index[0]
    sentence = (f"Judged on the unseen half, the MDAD of {plots.label(worst)} grows most "
                f"({loss.iloc[-1]:+.1f} points on average over the sizes where both are reached) and that of "
                f"{plots.label(best)} least ({loss.iloc[0]:+.1f}).")
    return {"worst": worst, "worst_loss": float(loss.iloc[-1]), "best": best, "best_loss": float(loss.iloc[0]),
            "sentence": sentence}


def sources_spread(sweep) -> str:
    """How much each method's MDAD moves across the source counts run, in one sentence."""
    finite = sweep[np.isfinite(sweep["mdad"])]
    if finite.empty or finite["n_sources"].nunique() < 2:
        return ""
    span = finite.groupby("selector")["mdad"].agg(lambda v: v.max() - v.min()).sort_values()
    counts = sorted(sweep["n_sources"].unique())
    return (f"From {counts[0]} to {counts[-1]} sources, the MDAD of {plots.label(span.index[-1])} moves most "
            f"({span.iloc[-1]:.1f} points between its smallest and largest value) and that of "
            f"{plots.label(span.index[0])} least ({span.iloc[0]:.1f}).")

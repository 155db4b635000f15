"""The sections of a benchmark chapter, one function each, shared by the four benchmark chapters.

A benchmark chapter is prose, a parameters cell and calls to a :class:`BenchmarkStudy`:
``study = BenchmarkStudy(cfg, selectors, threshold)``, then ``study.agreement_by_size()``,
``study.error_tau_mdad()``, ... Each call computes from the study's results, shows its
figure or table, and — where the bundle cannot support the section (too few models for a
sources sweep, too few pairs) — shows a note saying what it needs instead of failing.

Every figure and table has a fixed label, the same in the four chapters, which their prose
cites: figures ``agreement``, ``metrics``, ``unseen``, ``thresholds`` and ``sources`` (absent,
through :func:`mbutils.book.not_shown`, when the pool allows no sweep); tables ``mdad``,
``tau-error`` and ``thresholds``. A chapter calls ``book.chapter(...)`` before building its study.
"""

from __future__ import annotations

import html


from mbutils import book
from mbutils.results import claims, metrics
from mbutils.book import plots


def _snake(text: str) -> str:
    return text.replace("-", "_")


class BenchmarkStudy:
    """One benchmark chapter's experiment (all selectors × sizes × runs) and its sections."""

    def __init__(self, setting: book.Setting, selectors=None, threshold: float = 0.8, glue_prefix: str | None = None):
        self.cfg = setting
        self.prefix = _snake(glue_prefix or setting.data.key)
        self.selectors = book.paper_selectors(selectors)
        self.threshold = float(threshold)
        self.res = setting.results(self.selectors)
        self.mdad = metrics.mdad_table(self.res, threshold=self.threshold)
        self.summary = metrics.summary_table(self.res)

    def banner(self) -> None:
        """The page's data box, and its pool in one sentence glued as ``<prefix>_pool`` for the prose."""
        from IPython.display import HTML, display

        display(HTML(self.cfg.banner()))
        book.glue(f"{self.prefix}_pool", self.cfg.pool_sentence())

    # ------------------------------------------------------------------ sections
    def agreement_by_size(self, bin_width: float = 1.0) -> None:
        """The paper's figure 3: agreement against the true gap, one panel per size."""
        curve = metrics.agreement_curve(self.res, bin_width=bin_width)
        book.show(plots.agreement_curves(curve, mdad=self.mdad, threshold=self.threshold),
                  self.cfg.caption(f"Mean pairwise agreement against the true accuracy gap ({bin_width:g}-point bins) per "
                                   f"size; dashed: the {self.threshold:g} threshold, dotted: MDAD."),
                  stand_in=self.cfg.data.kind == "synthetic", label="agreement")

    def error_tau_mdad(self) -> None:
        """The paper's figure 4 and its numbers: error, Kendall tau-b and MDAD against k."""
        book.show(plots.metrics_vs_size(self.summary, self.mdad),
                  self.cfg.caption("Estimation error (points), Kendall tau-b and MDAD (points; band: the paper's "
                                   "95% CI) against k, log scale; means over runs."),
                  stand_in=self.cfg.data.kind == "synthetic", label="metrics")
        book.table(book.mdad_wide(self.mdad),
                   caption=self.cfg.caption(f"MDAD (points) at threshold {self.threshold:g}, with the paper's 95% CI."), label="mdad")
        book.table(book.summary_wide(self.summary),
                   caption=self.cfg.caption("Kendall tau-b and estimation error (points), mean over runs."), label="tau-error")
        book.claim_note("Kendall τ, computed", claims.tau_from(self.summary), f"{self.prefix}_tau_from")
        book.claim_note("Noise yardstick, computed",
                        claims.noise_yardstick(self.mdad, len(self.cfg.benchmark.subtask_names)),
                        f"{self.prefix}_noise")

    def seen_vs_unseen(self) -> claims.Claim:
        """The paper's figure 6, and which method loses most when judged on the unseen half."""
        unseen = metrics.mdad_table(self.res, threshold=self.threshold, split="unseen")
        book.show(plots.seen_vs_unseen(self.mdad, unseen),
                  self.cfg.caption("MDAD judged against accuracy on the seen half vs on the unseen half."),
                  stand_in=self.cfg.data.kind == "synthetic", label="unseen")
        claim = claims.unseen_loss(self.mdad, unseen)
        book.claim_note("Seen vs unseen, computed", claim, f"{self.prefix}_unseen_loss")
        return claim

    def thresholds(self, levels=(0.7, 0.8, 0.9)) -> None:
        """The paper's appendix figure: MDAD at agreement thresholds 0.7, 0.8 and 0.9."""
        tables = {float(t): metrics.mdad_table(self.res, threshold=float(t)) for t in levels}
        book.show(plots.mdad_by_threshold(tables),
                  self.cfg.caption("MDAD against k at three agreement thresholds (bands: the paper's 95% CI)."),
                  stand_in=self.cfg.data.kind == "synthetic", label="thresholds")
        book.table(book.threshold_table(tables), caption=self.cfg.caption("MDAD (points) by threshold."),
                   label="thresholds")

    def sources(self) -> None:
        """The paper's appendix figure: MDAD against the number of source models (the counts that fit).

        Without two source counts that fit the pool there is no figure: a note says why, and
        ``fig-sources`` reads "no figure (...)".
        """
        cfg = self.cfg
        if not cfg.can_sweep_sources:
            book.note("No sources sweep on this bundle", html.escape(cfg.sweep_note()), "warning")
            book.not_shown("sources", "fewer than two of the source counts fit the pool")
            return
        sweep = book.sources_table(cfg.sources_sweep(self.selectors), self.threshold)
        book.show(plots.mdad_vs_sources(sweep, size=cfg.source_size),
                  cfg.caption(f"MDAD (points) at k = {cfg.source_size} against the number of source models "
                              f"(bands: the paper's 95% CI).", runs=cfg.source_runs, sizes=[cfg.source_size],
                              n_sources=", ".join(map(str, cfg.source_counts))),
                  stand_in=self.cfg.data.kind == "synthetic", label="sources")
        book.claim_note("Sources sweep, computed", claims.sources_spread(sweep), f"{self.prefix}_sources_spread")

    def in_short(self) -> dict:
        """The headline numbers, glued as ``<prefix>_<name>`` for the front page, and a paragraph."""
        from IPython.display import HTML, display

        facts = book.benchmark_facts(self.cfg, self.res, self.mdad, self.summary)
        for name, value in facts.items():
            if name != "small_verdict":  # glued with its payload below (a key glued twice fails the build)
                book.glue(f"{self.prefix}_{name}", value)
        book.glue_claim(f"{self.prefix}_small_verdict", claims.best_at_size(self.mdad, min(self.cfg.sizes)))
        display(HTML(book.facts_html(facts, self.cfg)))
        return facts

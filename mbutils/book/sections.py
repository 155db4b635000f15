"""The two sections of a benchmark chapter that are more than "compute, then plot".

A benchmark chapter shows each of its sections as a short visible cell: one call of
:mod:`mbutils.book.benchmark_page` (or its own computation, then one ``cfg.show(plots.…)``
call) whose knobs are the chapter's parameters. Two sections hold logic a reader need not re-type: the sources sweep (which the pool may not
allow, and then says why) and the closing summary (the computed claims about τ and the noise,
and the headline numbers, glued for the front page). Both keep fixed labels, the same in the four chapters, which their prose cites:
figure ``sources`` (absent, through :func:`mbutils.book.not_shown`, when the pool allows no
sweep). A chapter calls ``book.chapter(...)`` before either.
"""

from __future__ import annotations

from mbutils.book import plots
from mbutils.book.display import claim_note, facts_html, glue, glue_claim, note
from mbutils.book.numbering import not_shown
from mbutils.book.setting import Setting
from mbutils.book.findings import claims
from mbutils.book.findings.reports import benchmark_facts, headline_size, sources_table
from mbutils.evaluate.metrics import INTERVAL_TEXT


def sources_sweep(cfg: Setting, selectors, threshold: float, glue_prefix: str) -> None:
    """The paper's appendix figure: MDAD against the number of source models (the counts that fit).

    Without two source counts that fit the pool there is no figure: a note says why, and
    ``fig-sources`` reads "no figure (...)". The computed spread is glued as
    ``<glue_prefix>_sources_spread``.
    """
    if not cfg.can_sweep_sources:
        note("No sources sweep on this bundle", cfg.sweep_note(), "warning")
        not_shown("sources", "fewer than two of the source counts fit the pool")
        return
    sweep = sources_table(cfg.sources_sweep(selectors), threshold)
    cfg.show(plots.mdad_vs_sources(sweep, size=cfg.source_size),
             f"MDAD (points) at k = {cfg.source_size} against the number of source models (bands: the "
             f"{INTERVAL_TEXT}).", label="sources", runs=cfg.source_runs, sizes=[cfg.source_size],
             n_sources=", ".join(map(str, cfg.source_counts)))
    claim_note("Sources sweep, computed", claims.sources_spread(sweep), f"{glue_prefix}_sources_spread")


def in_short(cfg: Setting, res, mdad, summary, glue_prefix: str) -> dict:
    """The computed claims about τ and the noise, the headline numbers (glued as
    ``<glue_prefix>_<name>`` for the front page) and a paragraph."""
    from IPython.display import HTML, display

    claim_note("Kendall τ, computed", claims.tau_from(summary), f"{glue_prefix}_tau_from")
    glue_claim(f"{glue_prefix}_tau_mdad", claims.tau_and_mdad(summary, mdad, headline_size(cfg.sizes),
                                                              mdad.attrs.get("threshold", 0.8)))
    claim_note("Noise yardstick, computed", claims.noise_yardstick(mdad, len(cfg.benchmark.subtask_names)),
               f"{glue_prefix}_noise")
    small = claims.best_at_size_of(res, min(cfg.sizes), threshold=mdad.attrs.get("threshold", 0.8), mdad=mdad)
    facts = benchmark_facts(cfg, res, mdad, summary, small.text)
    for name, value in facts.items():
        if name != "small_verdict":  # glued with its payload below (a key glued twice fails the build)
            glue(f"{glue_prefix}_{name}", value)
    glue_claim(f"{glue_prefix}_small_verdict", small)
    display(HTML(facts_html(facts, cfg)))
    return facts

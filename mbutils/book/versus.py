"""The selector chapters' common block: one method against random sampling, benchmark by benchmark."""

from __future__ import annotations

from mbutils.book import plots
from mbutils.book.display import claim_note, settings_caption, show, table
from mbutils.evaluate import metrics
from mbutils.evaluate.paired import compare_selectors
from mbutils.book.findings.claims import comparison_records, versus_random_paired
from mbutils.book.findings.reports import relative_table


def versus_random(settings: dict, method: str, threshold: float = 0.8) -> dict:
    """Show MDAD against k for ``method`` and random sampling per benchmark (``fig-mdad``), their
    difference (``fig-difference``), the numbers (``tab-versus-random``) and the computed
    verdict of the paired comparison on shared runs (glued as ``<method>_versus_random``); returns the MDAD tables
    by benchmark title.

    The experiments are the benchmark chapters' own (same runs, splits and draws, read back
    from the cache), so the four selector chapters and the benchmark chapters agree.
    """
    mdads = {s.page_title: metrics.mdad_table(s.results(["random", method]), threshold=threshold)
             for s in settings.values()}
    # the two selectors share their runs: judged by the paired comparison (the noise rule's paired half)
    comparisons = {s.page_title: comparison_records(compare_selectors(s.results(["random", method]), method, "random",
                                                                      threshold=threshold))
                   for s in settings.values()}
    stand_ins = [s.page_title for s in settings.values() if s.data.stand_in]
    name, context = plots.label(method), settings_caption(settings)
    fig = plots.mdad_panels(mdads)
    show(fig, f"MDAD (points) against k: {name} vs Random, per benchmark (bands: the {metrics.INTERVAL_TEXT}). "
         + context, stand_in=plots.panels(fig, stand_ins), label="mdad")
    fig = plots.relative_mdad(mdads, method, comparisons=comparisons)
    show(fig, f"MDAD of {name} minus MDAD of Random (points), with the paired 95% interval of the difference (a "
         "bootstrap over the runs both share): a bar wholly below zero means lower than random sampling's beyond the "
         "noise. " + context, stand_in=plots.panels(fig, stand_ins), label="difference")
    table(relative_table(mdads, method, comparisons=comparisons), caption=f"MDAD (points) of {name} and Random per benchmark "
          "and size with their 95% intervals; 'difference' = method - random, with its paired 95% interval and the "
          "verdict of the noise rule. " + context, label="versus-random")
    claim_note("Against random sampling, computed", versus_random_paired(comparisons, method),
               f"{method}_versus_random")
    return mdads

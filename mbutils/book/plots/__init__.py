"""Figures for the book: one palette and one display name per selector, axes in accuracy points.

Every function takes tidy tables from :mod:`mbutils.evaluate.metrics` and :mod:`mbutils.book.findings.reports`
(agreement curves, MDAD tables, summary tables) or plain arrays, and returns a
:class:`matplotlib.figure.Figure`; nothing is shown or saved here, so chapters decide how a
figure is captioned. By family: ``results`` (curves, MDAD, error and tau), ``data``
(distributions of the data), ``selections`` (what a selector picks), ``use`` (a
micro-benchmark in use: a score among the pool, held-out intervals, a pair's power); ``base`` holds what
they share (the legend area below the panels, size ticks, text that fits, the stand-in
stamp :func:`mark_stand_in`) and :mod:`mbutils.base.names` the selectors' names and colours.
"""

from mbutils.base.names import STYLES, SelectorStyle, label, palette, style
from mbutils.book.plots.base import (NOT_REACHED_NOTE, STAND_IN_TEXT, THRESHOLD_COLOR, fit_text, mark_stand_in, panels, scale_text, size_axis)
from mbutils.book.plots.data import accuracy_histograms, pairwise_histograms, quantile_comparison, subtask_bars
from mbutils.book.plots.results import (agreement_curves, benchmark_grid, curves_and_mdad, estimates_scatter, mdad_by_threshold, mdad_panels, mdad_vs_fraction, mdad_vs_size, mdad_vs_sources, metrics_vs_size, plot_curve, plot_mdad, relative_mdad, seen_vs_unseen, target_set_figure, tau_and_curves)
from mbutils.book.plots.use import coverage_intervals, pair_power_curves, score_picture
from mbutils.book.plots.selections import (allocation_bars, cluster_heatmap, selection_map, selection_maps, strata_picture, weight_profile)

__all__ = ["NOT_REACHED_NOTE", "STAND_IN_TEXT", "STYLES", "SelectorStyle", "THRESHOLD_COLOR", "accuracy_histograms",
           "agreement_curves", "allocation_bars", "benchmark_grid", "cluster_heatmap", "coverage_intervals", "curves_and_mdad",
           "estimates_scatter", "fit_text", "label", "mark_stand_in", "mdad_by_threshold", "mdad_panels", "mdad_vs_fraction", "mdad_vs_size",
           "mdad_vs_sources", "metrics_vs_size", "pair_power_curves", "palette", "pairwise_histograms", "panels", "plot_curve", "plot_mdad",
           "quantile_comparison", "relative_mdad", "scale_text", "score_picture", "seen_vs_unseen", "selection_map", "selection_maps",
           "size_axis", "strata_picture", "style", "subtask_bars", "target_set_figure", "tau_and_curves", "weight_profile"]

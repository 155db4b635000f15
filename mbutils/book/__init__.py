"""What the book's chapters share, under one name: ``from mbutils import book``.

The jobs live in their own modules — :mod:`mbutils.book.profiles` (how much a build computes),
:mod:`mbutils.book.params` (parameter values), :mod:`mbutils.book.setting` (a chapter's
experiment), :mod:`mbutils.book.display` (notes, figures, tables, glue) and
:mod:`mbutils.results.reports` (the analysis tables) — and this package gathers them, so a chapter
reads ``book.configure(...)``, ``book.show(...)``, ``book.mdad_wide(...)``. The Sphinx hook
is :mod:`mbutils.book.sphinxext`.

Names are imported on first use, so ``import mbutils.book.chapters`` (the command line's
run-chapter) does not load the figures' stack.
"""

from __future__ import annotations

#: name -> (module, attribute): what a chapter reads as ``book.<name>``
_NAMES = {
    'BENCHMARK_TITLES': ('mbutils.data.datasets', 'BENCHMARK_TITLES'),
    'BENCHMARKS': ('mbutils.data.datasets', 'BENCHMARKS'),
    'CATALOGUE': ('mbutils.data.datasets', 'CATALOGUE'),
    'DataChoice': ('mbutils.data.datasets', 'DataChoice'),
    'benchmark_key': ('mbutils.data.datasets', 'benchmark_key'),
    'resolve_data': ('mbutils.data.datasets', 'resolve_data'),
    'BookError': ('mbutils.base.errors', 'BookError'),
    'MbutilsError': ('mbutils.base.errors', 'MbutilsError'),
    'PROFILE_ENV': ('mbutils.book.profiles', 'PROFILE_ENV'),
    'PAPER_SOURCES': ('mbutils.book.profiles', 'PAPER_SOURCES'),
    'PAPER_SELECTORS': ('mbutils.book.profiles', 'PAPER_SELECTORS'),
    'BenchProfile': ('mbutils.book.profiles', 'BenchProfile'),
    'PROFILES': ('mbutils.book.profiles', 'PROFILES'),
    'profile_name': ('mbutils.book.profiles', 'profile_name'),
    'default_jobs': ('mbutils.book.profiles', 'default_jobs'),
    'PROFILE_BLURB': ('mbutils.book.profiles', 'PROFILE_BLURB'),
    'variant_benchmarks': ('mbutils.book.profiles', 'variant_benchmarks'),
    'target_cases': ('mbutils.book.profiles', 'target_cases'),
    'selector_stand_in': ('mbutils.book.profiles', 'selector_stand_in'),
    'int_list': ('mbutils.book.params', 'int_list'),
    'name_list': ('mbutils.book.params', 'name_list'),
    'parse_cases': ('mbutils.book.params', 'parse_cases'),
    'chapter': ('mbutils.book.numbering', 'chapter'),
    'not_shown': ('mbutils.book.numbering', 'not_shown'),
    'ref': ('mbutils.book.numbering', 'ref'),
    'claim_note': ('mbutils.book.display', 'claim_note'),
    'glue_claim': ('mbutils.book.display', 'glue_claim'),
    'admonition': ('mbutils.book.display', 'admonition'),
    'note': ('mbutils.book.display', 'note'),
    'figure_png': ('mbutils.book.display', 'figure_png'),
    'show': ('mbutils.book.display', 'show'),
    'pretty': ('mbutils.book.display', 'pretty'),
    'table': ('mbutils.book.display', 'table'),
    'download_link': ('mbutils.book.display', 'download_link'),
    'download': ('mbutils.book.display', 'download'),
    'glue': ('mbutils.book.display', 'glue'),
    'settings_list': ('mbutils.book.display', 'settings_list'),
    'settings_caption': ('mbutils.book.display', 'settings_caption'),
    'facts_html': ('mbutils.book.display', 'facts_html'),
    'Setting': ('mbutils.book.setting', 'Setting'),
    'configure': ('mbutils.book.setting', 'configure'),
    'stand_in_banner': ('mbutils.book.setting', 'stand_in_banner'),
    'diversity_map': ('mbutils.book.geometry', 'diversity_map'),
    'is_book_data': ('mbutils.book.setting', 'is_book_data'),
    'pick_data': ('mbutils.book.setting', 'pick_data'),
    'variant_data': ('mbutils.book.setting', 'variant_data'),
    'compared_settings': ('mbutils.book.setting', 'compared_settings'),
    'picture_run': ('mbutils.book.setting', 'picture_run'),
    'paper_selectors': ('mbutils.book.setting', 'paper_selectors'),
    'held_out_plan': ('mbutils.book.profiles', 'held_out_plan'),
    'run_view': ('mbutils.book.setting', 'run_view'),
    'item_map': ('mbutils.book.geometry', 'item_map'),
    'pick': ('mbutils.book.setting', 'pick'),
    'target_case_list': ('mbutils.book.setting', 'target_case_list'),
    'subtask_setting': ('mbutils.book.setting', 'subtask_setting'),
    'needs_sources': ('mbutils.methods.selectors', 'needs_sources'),
    'subtask_summary': ('mbutils.results.reports', 'subtask_summary'),
    'worked_example': ('mbutils.results.reports', 'worked_example'),
    'pair_table': ('mbutils.results.reports', 'pair_table'),
    'fmt_points': ('mbutils.results.reports', 'fmt_points'),
    'headline_size': ('mbutils.results.reports', 'headline_size'),
    'pair_gaps': ('mbutils.results.reports', 'pair_gaps'),
    'data_overview': ('mbutils.results.reports', 'data_overview'),
    'missing_report': ('mbutils.results.reports', 'missing_report'),
    'mdad_wide': ('mbutils.results.reports', 'mdad_wide'),
    'summary_wide': ('mbutils.results.reports', 'summary_wide'),
    'threshold_table': ('mbutils.results.reports', 'threshold_table'),
    'sources_table': ('mbutils.results.reports', 'sources_table'),
    'relative_table': ('mbutils.results.reports', 'relative_table'),
    'anchor_members': ('mbutils.book.geometry', 'anchor_members'),
    'irt_embedding': ('mbutils.book.geometry', 'irt_embedding'),
    'nearest_anchor': ('mbutils.book.geometry', 'nearest_anchor'),
    'closer_than_mdad': ('mbutils.results.reports', 'closer_than_mdad'),
    'items_needed': ('mbutils.results.reports', 'items_needed'),
    'benchmark_facts': ('mbutils.results.reports', 'benchmark_facts'),
    'full_mdad_table': ('mbutils.results.reports', 'full_mdad_table'),
    'full_summary_table': ('mbutils.results.reports', 'full_summary_table'),
    'largest_subtasks': ('mbutils.results.reports', 'largest_subtasks'),
    'float_gap_bins': ('mbutils.results.reports', 'float_gap_bins'),
    'binning_comparison': ('mbutils.results.reports', 'binning_comparison'),
    'mdad_variants': ('mbutils.results.reports', 'mdad_variants'),
    'not_reached_counts': ('mbutils.results.reports', 'not_reached_counts'),
}


def data_listing():
    """The bundles a name can reach in this build, as the data chapter shows them (``python -m mbutils data``)."""
    from mbutils.data.inventory import listing

    return listing(folders=False)


def __getattr__(name: str):
    if name in _NAMES:
        from importlib import import_module

        module, attribute = _NAMES[name]
        value = getattr(import_module(module), attribute)
        globals()[name] = value
        return value
    from importlib import import_module
    from importlib.util import find_spec

    if find_spec(f"{__name__}.{name}") is not None:  # a submodule: book.display, book.plots
        return import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'mbutils.book' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_NAMES))


__all__ = ["data_listing", *_NAMES]

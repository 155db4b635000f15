"""What the book's chapters share, under one name: ``from mbutils import book``.

The jobs live in their own modules — :mod:`mbutils.profiles` (how much a build computes),
:mod:`mbutils.book.params` (parameter values), :mod:`mbutils.book.setting` (a chapter's
experiment), :mod:`mbutils.book.display` (notes, figures, tables, glue) and
:mod:`mbutils.reports` (the analysis tables) — and this package gathers them, so a chapter
reads ``book.configure(...)``, ``book.show(...)``, ``book.mdad_wide(...)``. The Sphinx hook
is :mod:`mbutils.sphinxext`.
"""

from __future__ import annotations

from ..datasets import BENCHMARK_TITLES, BENCHMARKS, CATALOGUE, DataChoice, benchmark_key, resolve_data
from ..errors import BookError, MbutilsError
from ..profiles import (PROFILE_ENV, PAPER_SOURCES, PAPER_SELECTORS, BenchProfile, PROFILES, profile_name, default_jobs,
    PROFILE_BLURB, variant_benchmarks, target_cases)
from .params import (int_list, name_list, parse_cases)
from .numbering import chapter, not_shown, ref
from .display import (claim_note, glue_claim, admonition, note, figure_png, show, pretty, table, download_link, download, glue, settings_list,
    settings_caption, facts_html)
from .setting import (Setting, configure, stand_in_banner, diversity_map, is_book_data, pick_data, variant_data, paper_selectors, run_view, item_map,
    pick, target_case_list, subtask_setting)
from ..inventory import listing as _listing
from ..selectors import needs_sources
from ..reports import (subtask_summary, worked_example, pair_table, fmt_points, headline_size, pair_gaps, data_overview, missing_report, mdad_wide, summary_wide,
    threshold_table, sources_table, relative_table, anchor_members, irt_embedding, nearest_anchor,
    closer_than_mdad, items_needed, benchmark_facts,
    full_mdad_table, full_summary_table, largest_subtasks, float_gap_bins, binning_comparison,
    mdad_variants, not_reached_counts)



def data_listing():
    """The bundles a name can reach in this build, as the data chapter shows them (``python -m mbutils data``)."""
    return _listing(folders=False)


__all__ = ['chapter', 'not_shown', 'ref', 'data_listing', 'diversity_map', 'needs_sources', 'stand_in_banner', 'subtask_summary', 'worked_example', 'pair_table', 'BENCHMARK_TITLES', 'BENCHMARKS', 'CATALOGUE', 'DataChoice', 'benchmark_key', 'resolve_data',
    'BookError', 'MbutilsError', 'PROFILE_ENV', 'PAPER_SOURCES', 'PAPER_SELECTORS', 'BenchProfile',
    'PROFILES', 'profile_name', 'default_jobs', 'PROFILE_BLURB', 'variant_benchmarks', 'target_cases',
    'int_list', 'name_list', 'parse_cases', 'claim_note', 'glue_claim', 'admonition', 'note', 'figure_png', 'show', 'pretty',
    'table', 'download_link', 'download', 'glue', 'settings_list', 'settings_caption', 'facts_html',
    'Setting', 'configure', 'is_book_data', 'pick_data', 'variant_data', 'paper_selectors', 'run_view',
    'item_map', 'pick', 'target_case_list', 'subtask_setting', 'fmt_points', 'headline_size',
    'pair_gaps', 'data_overview', 'missing_report', 'mdad_wide', 'summary_wide', 'threshold_table',
    'sources_table', 'relative_table', 'anchor_members', 'irt_embedding', 'nearest_anchor',
    'closer_than_mdad', 'items_needed', 'benchmark_facts',
    'full_mdad_table', 'full_summary_table', 'largest_subtasks', 'float_gap_bins', 'binning_comparison',
    'mdad_variants', 'not_reached_counts']

"""What the book's chapters call, under one name: ``from mbutils import book``.

The jobs live in their own modules — :mod:`mbutils.book.profiles` (how much a build computes),
:mod:`mbutils.book.params` (parameter values), :mod:`mbutils.book.setting` (a chapter's
experiment), :mod:`mbutils.book.display` (notes, figures, tables, glue),
:mod:`mbutils.book.numbering` (figure and table numbers) and :mod:`mbutils.results.reports`
(the analysis tables) — and this package re-exports the names the chapters use, so a chapter
reads ``book.configure(...)``, ``book.show(...)``, ``book.mdad_wide(...)``; anything else is
imported from its module. Building and publishing the book (run-chapter, the Sphinx hook,
the copies, the PDF) is the layer above, :mod:`mbutils.build`.

Names are imported on first use, so ``import mbutils.book.profiles`` (which run-chapter
reads) does not load the figures' stack.
"""

from __future__ import annotations

#: module -> the names a chapter reads from it as ``book.<name>`` (each name once)
_MODULES = {
    'mbutils.base.errors': ('MbutilsError',),
    'mbutils.data.datasets': ('resolve_data',),
    'mbutils.methods.selectors': ('needs_sources',),
    'mbutils.book.profiles': ('PAPER_SELECTORS', 'default_jobs', 'selector_stand_in', 'held_out_plan'),
    'mbutils.book.params': ('int_list', 'name_list'),
    'mbutils.book.numbering': ('chapter', 'not_shown'),
    'mbutils.book.display': ('claim_note', 'glue_claim', 'note', 'show', 'table', 'download', 'glue',
                             'settings_list', 'settings_caption'),
    'mbutils.book.setting': ('configure', 'is_book_data', 'pick_data', 'compared_settings', 'picture_run',
                             'paper_selectors', 'run_view', 'pick', 'target_case_list', 'subtask_setting'),
    'mbutils.book.geometry': ('diversity_map', 'item_map', 'anchor_members', 'irt_embedding', 'nearest_anchor'),
    'mbutils.results.reports': ('subtask_summary', 'worked_example', 'pair_table', 'fmt_points',
                                'headline_size', 'pair_gaps', 'data_overview', 'missing_report', 'mdad_wide',
                                'summary_wide', 'threshold_table', 'closer_than_mdad', 'items_needed',
                                'full_mdad_table', 'full_summary_table', 'largest_subtasks',
                                'float_gap_bins', 'binning_comparison', 'mdad_variants', 'not_reached_counts'),
}
#: name -> the module it is read from
_NAMES = {name: module for module, names in _MODULES.items() for name in names}


def data_listing():
    """The bundles a name can reach in this build, as the data chapter shows them (``python -m mbutils data``)."""
    from mbutils.data.inventory import listing

    return listing(folders=False)


def __getattr__(name: str):
    from importlib import import_module

    if name in _NAMES:
        value = getattr(import_module(_NAMES[name]), name)
        globals()[name] = value
        return value
    from importlib.util import find_spec

    if find_spec(f"{__name__}.{name}") is not None:  # a submodule: book.display, book.plots
        return import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'mbutils.book' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_NAMES))


__all__ = ["data_listing", *_NAMES]

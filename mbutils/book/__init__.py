"""What the book's chapters call, under one name: ``from mbutils import book``.

The jobs live in their own modules — :mod:`mbutils.book.profiles` (how much a build computes),
:mod:`mbutils.book.params` (parameter values), :mod:`mbutils.book.setting` (a chapter's
experiment), :mod:`mbutils.book.display` (notes, figures, tables, glue),
:mod:`mbutils.book.numbering` (figure and table numbers) and :mod:`mbutils.book.findings.reports`
(the analysis tables) — and this package re-exports the names the chapters use, so a chapter
reads ``book.configure(...)``, ``book.show(...)``, ``book.mdad_wide(...)``, and the figures
as ``book.plots``. Chapters import nothing else of the package but its public names
(``mbutils.__all__``): ``tests/book/test_chapter_api.py`` checks it. Building and publishing the book
(run-chapter, the Sphinx hook,
the copies, the PDF) is the layer above, :mod:`mbutils.publish`.

Names are imported on first use, so ``import mbutils.book.profiles`` (which run-chapter
reads) does not load the figures' stack.
"""

from __future__ import annotations

from mbutils.data.inventory import listing

#: module -> the names a chapter reads from it as ``book.<name>`` (each name once)
_MODULES = {
    'mbutils.base.errors': ('MbutilsError',),
    'mbutils.base.names': ('label', 'target_set_label', 'count_noun'),
    'mbutils.data.datasets': ('resolve_data',),
    'mbutils.data.datapath': ('describe_data_path',),
    'mbutils.data.synthetic': ('compare_to_reference',),
    'mbutils.methods.selectors.tinybench': ('gp_lambda',),
    'mbutils.book.profiles': ('PAPER_SELECTORS', 'default_jobs', 'selector_stand_in', 'held_out_plan'),
    'mbutils.book.params': ('int_list', 'name_list'),
    'mbutils.book.numbering': ('chapter', 'not_shown'),
    'mbutils.book.escaping': ('literal',),
    'mbutils.book.display': ('claim_note', 'glue_claim', 'note', 'show', 'table', 'download', 'glue',
                             'settings_list', 'settings_caption'),
    'mbutils.book.setting': ('configure', 'is_book_data', 'pick_data', 'compared_settings', 'picture_run',
                             'run_view', 'pick', 'target_case_list', 'subtask_setting', 'stand_in_banner'),
    'mbutils.book.geometry': ('diversity_map', 'item_map', 'anchor_members', 'irt_embedding', 'nearest_anchor'),
    'mbutils.book.sections': ('sources_sweep', 'in_short'),
    'mbutils.book.benchmark_page': ('benchmark_setup', 'agreement_by_size', 'metrics_by_size', 'unseen_half',
                                    'mdad_by_thresholds'),
    'mbutils.book.versus': ('versus_random',),
    'mbutils.book.facts': ('glue_data_facts',),
    'mbutils.book.beyond': ('SPLITS', 'split_results', 'estimator_table', 'estimators_versus_random'),
    'mbutils.evaluate.estimator_checks': ('signal_to_noise', 'snr_mdad_agreement'),
    'mbutils.methods.estimators': ('difference_estimate', 'knn_predictions'),
    'mbutils.methods.protocol': ('fit_frontier', 'draw_run'),
    'mbutils.book.worked': ('worked_example_note', 'pair_share_table'),
    'mbutils.book.adaptive': ('adaptive_data', 'applicability', 'exposure_table', 'helps_table', 'not_run_reason',
                              'path_figure', 'path_table', 'stops_helping', 'scoring_display', 'scoring_figure'),
    'mbutils.book.findings.ability_scoring': ('ability_selector', 'scoring_comparison', 'comparison_rows', 'scoring_claim'),
    'mbutils.book.exercises': ('plain_stratified_bias', 'random_sampling_error', 'within_stratum_sd',
                               'neyman_allocation', 'stratified_variance', 'dpp_moments',
                               'check', 'check_mode', 'check_summary', 'grading', 'exercise_status'),
    'mbutils.book.findings.reports': ('subtask_summary', 'worked_example', 'pair_table', 'fmt_points',
                                'headline_size', 'pair_gaps', 'data_overview', 'missing_report', 'mdad_wide',
                                'closer_than_mdad', 'items_needed',
                                'full_mdad_table', 'full_summary_table', 'largest_subtasks',
                                'float_gap_bins', 'binning_comparison', 'mdad_variants', 'not_reached_counts',
                                'mdad_cell'),
    'mbutils.evaluate.pair_metrics': ('gap_bins', 'pair_agreement'),
    'mbutils.evaluate.results_table': ('iter_groups',),
    'mbutils.evaluate.planning': ('size_table',),
    'mbutils.evaluate.pair_sizes': ('rule_size',),
    'mbutils.book.findings.claims': ('best_at_size_of', 'not_reached', 'tau_from', 'catch_up_paired', 'estimator_claim',
                               'comparison_records', 'versus_random_paired', 'tau_and_mdad',
                               'coverage_claim'),
    'mbutils.evaluate.noise': ('MIN_PAIRS', 'too_few', 'too_few_text', 'unpaired_records', 'catch_up'),
    'mbutils.evaluate.interval_coverage': ('mdad_coverage',),
    'mbutils.evaluate.metrics': ('INTERVAL_TEXT',),
    'mbutils.book.findings.calibration': ('calibration_report', 'parse_pairs'),
    'mbutils.book.findings.coverage': ('coverage_sentence', 'coverage_summary', 'exact_random_coverage',
                                 'held_out_scores'),
    'mbutils.micro.folder': ('read_micro', 'write_micro'),
    'mbutils.book.findings.paper_results': ('CONCLUSION_LEVELS', 'PAPER_MODELS', 'compare_conclusions', 'comparison_kind',
                                      'disagreements', 'display_table', 'estimation_bias', 'estimation_summary',
                                      'find_folder', 'mdad_at', 'paper_benchmark', 'paper_source_count',
                                      'pick_profile', 'random_within_ci_from', 'side_by_side'),
}
#: names whose module's own name would clash with another (a submodule of the book, another
#: module's function): ``book.<alias>`` -> (module, attribute)
_ALIASES = {
}
#: the book's sub-namespace a chapter may use as a whole (``from mbutils.book import plots``)
SUBMODULES = ('plots',)
#: name -> the module it is read from
_NAMES = {name: (module, name) for module, names in _MODULES.items() for name in names} | _ALIASES


def data_listing():
    """The bundles a name can reach in this build, as the data chapter shows them (``python -m mbutils data``)."""
    return listing(folders=False)


def __getattr__(name: str):
    from importlib import import_module

    if name in _NAMES:
        module, attribute = _NAMES[name]
        value = getattr(import_module(module), attribute)
        globals()[name] = value
        return value
    from importlib.util import find_spec

    if find_spec(f"{__name__}.{name}") is not None:  # a submodule: book.display, book.plots
        return import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'mbutils.book' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_NAMES))


__all__ = ["data_listing", *_NAMES]

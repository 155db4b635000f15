"""Shared fixtures: the real data shipped in data/, a private cache per session; the fast lane's
markers (``slow``, ``book``, ``browser``), given from the table below."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

# Timings on a shared 2-core machine vary; correctness, not speed, is what these tests check.
settings.register_profile("mbutils", deadline=None, derandomize=True)
settings.load_profile("mbutils")

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent

#: The session's quick book once started: its build and output folder ("build": (StrictBuild, folder));
#: and the session's ``tmp_path_factory`` ("factory"), for the hook that starts the background work.
_QUICK_BOOK: dict = {}
#: The environment once the session's private caches are set: what work started in the background
#: runs with (a snapshot, so that no test's monkeypatching reaches it).
_SESSION_ENV: dict = {}
#: Work started in the background (anything with a ``stop()``), ended with the session.
_BACKGROUND: list = []


def session_env(**changes) -> dict:
    """A copy of the session's environment (private caches set), with ``changes``."""
    return {**_SESSION_ENV, **changes}


def stopped_with_the_session(work):
    """``work`` (started in the background, with a ``stop()``), ended if the session is cut short."""
    _BACKGROUND.append(work)
    return work


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """Tests never read or pollute the user's caches: mbutils' results, and matplotlib's font
    list (a list left by another installation names font files that are gone, and matplotlib
    then logs 'findfont' lines to stderr in every chapter kernel)."""
    names = ("MBUTILS_CACHE", "MPLCONFIGDIR")
    old = {name: os.environ.get(name) for name in names}
    os.environ["MBUTILS_CACHE"] = str(tmp_path_factory.mktemp("mbutils-cache"))
    os.environ["MPLCONFIGDIR"] = str(tmp_path_factory.mktemp("matplotlib"))
    _SESSION_ENV.update(os.environ)  # background work runs with these, whatever a test changes
    _QUICK_BOOK["factory"] = tmp_path_factory  # for the first test's hook below
    yield
    for name, value in old.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def _reads_the_quick_book(item) -> bool:
    return "quick_book" in item.fixturenames


def _start_quick_book(tmp_path_factory) -> tuple:
    """Start the strict build of the quick book (in the background); returns (build, output folder)."""
    from helpers import StrictBuild

    if "build" not in _QUICK_BOOK:
        real_bundle("gpqa")
        out = tmp_path_factory.mktemp("book")
        env = session_env(MBUTILS_PROFILE="quick")
        jb = Path(sys.executable).with_name("jupyter-book")
        _QUICK_BOOK["build"] = (StrictBuild([str(jb), "build", str(REPO), "--path-output", str(out), "-W", "-n",
                                             "--keep-going"], env, "the quick book"), out)
    return _QUICK_BOOK["build"]


@pytest.hookimpl(trylast=True)
def pytest_runtest_setup(item):
    """Once the first test's fixtures are set up (the private caches among them), start what the
    selected tests will read and can be computed ahead: the quick book's build, and the batches of
    chapter runs of the modules that define ``start_in_background(tmp_path_factory, items)``. The
    build keeps one or two cores busy for minutes and the batches are niced, while most tests need
    one core for a second."""
    if "checked" in _QUICK_BOOK:
        return
    _QUICK_BOOK["checked"] = ()
    items, factory = item.session.items, _QUICK_BOOK["factory"]
    if not os.environ.get("MBUTILS_BOOK_HTML") and any(map(_reads_the_quick_book, items)):
        _start_quick_book(factory)
    for module in dict.fromkeys(i.module for i in items if hasattr(i, "module")):
        if hasattr(module, "start_in_background"):
            module.start_in_background(factory, items)


def pytest_sessionfinish(session):
    """A session cut short does not leave the build or a batch running."""
    if "build" in _QUICK_BOOK:
        _QUICK_BOOK["build"][0].stop()
    for work in _BACKGROUND:
        work.stop()


@pytest.fixture(scope="session")
def quick_book(tmp_path_factory) -> Path:
    """The book built strictly with the quick profile, once per session: its ``_build`` folder
    (``html/``, and the execution cache ``.jupyter_cache*`` that holds every executed page). The
    browser tests read its pages; test_chapters reads its executed chapters as their run on the real
    data. The build starts with the session's first test. ``MBUTILS_BOOK_HTML`` may name the
    ``html`` folder of an existing build to check instead."""
    given = os.environ.get("MBUTILS_BOOK_HTML")
    if given:
        path = Path(given)
        assert (path / "index.html").exists(), f"MBUTILS_BOOK_HTML={given} holds no built book"
        return path.parent
    build, out = _start_quick_book(tmp_path_factory)
    log, minutes = build.result()
    # every page was executed ahead, two at a time (mbutils.publish.page_runs), and read from the cache
    serial = [line for line in log.splitlines() if "Executing notebook" in line]
    assert not serial, f"myst-nb executed pages one by one, after mbutils.publish.page_runs: {serial[:3]}"
    assert "[mbutils] executing" in log
    print(f"quick book built in {minutes:.1f} min (started with the session's first test)")
    return out / "_build"


def real_bundle(name: str) -> Path:
    """Path of a real bundle shipped in the repository's data/ (its absence is a failure)."""
    path = REPO / "data" / name
    if not (path / "responses.csv.gz").is_file():
        pytest.fail(f"real bundle {name!r} is not in {REPO / 'data'}; the repository ships it")
    return path


def real_table(name: str, file: str = "responses.csv") -> Path:
    """The stored file (plain or gzipped) of a shipped bundle, for tests that read it with pandas."""
    from mbutils.data.bundle.search import stored_file

    return stored_file(real_bundle(name), file)


# ------------------------------------------------------------------------------ the fast lane
# ``pytest -m "not slow"`` is the developers' fast lane (unit, property and command-line tests);
# plain ``pytest`` (what .ci/run runs) still runs everything. The markers are given here, from one
# table, not in the test modules:
#   book     executes chapters (papermill, through run_chapter / run-chapter) or builds the book
#            (jupyter-book, ``mbutils book``);
#   browser  drives Chromium (playwright, ``mbutils book-pdf``);
#   slow     everything above, and other tests that take many seconds.
# Times are from one full run on the shared 2-core machine (pytest --durations=0, setup of module
# and session fixtures included). tests/project/test_markers.py checks that every test whose code runs
# a chapter, the book build or Chromium is marked book/browser here, and that every entry still names
# a module or test that exists. Modules are named by their path in tests/ (``publish/test_chapters.py``).

#: Whole modules -> markers.
LANE_MODULES: dict[str, set[str]] = {
    # The session fixture `quick_book` (above) builds the whole book with jupyter-book (strict,
    # every chapter executed; 208 s alone on 2026-12-03; started with the session's first test),
    # then the module builds the students' and instructors' copies with `mbutils book --copy`, side
    # by side (14-18 s); some of its tests then open every page in Chromium (see LANE_TESTS).
    "publish/test_book_browser.py": {"book"},
    # Runs bench_gpqa through run_chapter twice, before and after editing a knob (41 s).
    "publish/test_chapters_knobs.py": {"book"},
    # Runs the real lm-evaluation-harness (dummy model, local dataset) four times, the last the group task (38 s).
    "micro/test_lm_eval_task_harness.py": {"slow"},
    # Builds two folders, moves one, and runs the real harness (dummy model, local dataset) three times (20-50 s).
    "micro/test_lm_eval_export_portable.py": {"slow"},
    # Indexes the installed harness's 14,000 task configs twice (its task index, then its TaskManager over
    # three exports of the shipped leaderboard bundles) and builds them (17 s alone).
    "micro/test_lm_eval_export.py": {"slow"},
    # Builds four difference (random_difference) micro-benchmarks of synthetic-gpqa, one with a leave-one-out
    # calibration of 390 folds, and reads an edited copy of a folder thirteen times (18 s alone, 7 s of it the
    # harness's task index that the session's first written folder builds).
    "micro/test_difference.py": {"slow"},
}

#: Single tests (module, name; ``Class::name`` for a method) -> markers. A name without
#: parameters covers all of them; ``name[id]`` marks one parametrisation only.
LANE_TESTS: dict[tuple[str, str], set[str]] = {
    # run-chapter's checks before the kernel, and what a failing or dying kernel prints
    ("publish/test_preflight_run_chapter.py", "test_a_cell_that_fails_on_the_pool_is_reported_with_run_chapters_names"): {"book"},
    ("publish/test_preflight_run_chapter.py", "test_a_failed_chapter_says_one_thing_and_the_kernel_nothing"): {"book"},
    ("publish/test_preflight_run_chapter.py", "test_a_kernel_that_dies_is_a_refusal_not_an_internal_error"): {"book"},
    ("publish/test_preflight_run_chapter.py", "test_a_page_run_on_a_bundle_named_like_markup_shows_the_name_as_written"): {"book"},
    # --- book: execute chapters (run_chapter, run-chapter) or build the book (jupyter-book)
    # session fixture `shape_runs`: every chapter on four shapes of bundle, two at a time, notebooks
    # only (512 s on 2026-12-03; six shapes with their HTML pages took 1497 s on an earlier day);
    # since 2026-12-04 in a niced background process from the session's first test on
    ("publish/test_chapters_shapes.py", "test_chapter_finishes_on_shape"): {"book"},
    ("publish/test_chapters_shapes.py", "test_no_name_from_the_data_is_live_markup_in_a_page"): {"book"},
    ("publish/test_chapters_shapes.py", "test_chapter_runs_leave_no_scratch_folder"): {"book"},
    # these use the session fixture `executed`: every chapter through run_chapter on synthetic data
    # (a niced background batch, like the shape runs), and the quick book build (`quick_book`) for
    # the real data
    ("publish/test_chapters.py", "test_chapter_executes_with_every_figure"): {"book"},
    # read every page of the quick book's HTML (`quick_book`) for numbers in prose that are neither glued nor cited
    ("publish/test_traceability.py", "test_every_number_in_the_prose_of_every_page_is_glued_or_cited"): {"book"},
    ("publish/test_traceability.py", "test_a_planted_number_in_a_built_page_fails_the_check"): {"book"},
    ("publish/test_chapters.py", "test_every_glued_catch_up_or_match_had_the_power_to_see_two_points"): {"book"},
    # runs a three-cell page that fails on purpose (a kernel, two seconds)
    ("publish/test_chapters_failure.py", "test_a_failed_chapter_keeps_its_notebook_up_to_the_failing_cell"): {"book"},
    ("publish/test_chapters.py", "test_every_figure_and_table_is_labelled_and_cited"): {"book"},
    ("publish/test_chapters.py", "test_every_value_the_prose_pastes_is_glued_by_its_page"): {"book"},
    ("publish/test_chapters.py", "test_no_chapter_glues_a_key_twice"): {"book"},
    ("publish/test_chapters.py", "test_front_page_glue_keys_are_produced_by_their_chapters"): {"book"},
    ("publish/test_chapters.py", "test_glued_claims_say_what_their_inputs_say"): {"book"},
    ("publish/test_chapters.py", "test_no_glued_comparison_crowns_a_winner_inside_the_noise"): {"book"},
    ("publish/test_chapters.py", "test_no_guidance_cell_states_fewer_items_than_its_interval_supports"): {"book"},
    ("publish/test_chapters.py", "test_the_guidance_recommended_size_brings_80_percent_of_the_bins_pairs_to_the_threshold"): {"book"},
    ("publish/test_chapters_odd_data.py", "test_a_chapter_on_a_readers_bundle_states_that_bundles_facts"): {"book"},
    ("publish/test_chapters.py", "test_benchmark_claims_follow_the_chapters_results"): {"book"},
    ("publish/test_chapters.py", "test_synthetic_data_is_announced_on_the_page"): {"book"},
    # starts a kernel for the guidance chapter, which fails in its data cell (7 s)
    ("publish/test_chapters.py", "test_run_chapter_failure_names_the_cell_and_keeps_only_the_failed_notebook"): {"book"},
    # a copy of the repository runs three benchmark chapters and the replication chapter with
    # run-chapter (module fixture, 92 s; a niced background batch); another copy builds the front
    # page and the BBH chapter with jupyter-book (48 s). The module's two other tests (the copy, its
    # data command) stay.
    ("project/test_clone.py", "test_a_clone_runs_the_benchmark_chapters_on_its_own_real_bundles"): {"book"},
    ("project/test_clone.py", "test_a_clone_runs_the_mmlu_chapter_on_its_stand_in_and_says_so"): {"book"},
    ("project/test_clone.py", "test_a_clone_shows_the_papers_tables_beside_its_own"): {"book"},
    ("project/test_clone.py", "test_without_the_real_bbh_the_front_page_and_its_chapter_say_stand_in"): {"book"},
    # two small books (three pages, one failing; two pages) built with jupyter-book and the book's
    # Sphinx hook, the first one twice (about 15 s)
    ("publish/test_page_runs.py", "test_pages_run_ahead_and_a_failing_page_is_left_to_myst_nb"): {"book"},
    ("publish/test_page_runs.py", "test_one_page_at_a_time_leaves_execution_to_myst_nb"): {"book"},
    # a two-page book built with the book's Sphinx hook, its progress lines on stderr read (4 s)
    ("publish/test_page_runs_progress.py", "test_a_book_build_reports_each_page_on_stderr"): {"book"},
    # four students' notebooks (one per kind of page) through run_chapter (quick profile, the synthetic runs'
    # small parameters, so their experiments come from the session's cache) to the end with every stub unsolved
    # (Run All), and one instructors' notebook (bench_gpqa) to the end (about 60 s for the module alone)
    ("publish/test_student_notebooks.py", "test_run_all_on_a_students_notebook_with_every_stub_unsolved_reaches_the_end"): {"book"},
    ("publish/test_student_notebooks.py", "test_an_instructors_notebook_runs_to_completion"): {"book"},
    # grades three submissions of the measures chapter (right, wrong, empty) with `mbutils book --grade`: three
    # kernels, each running the chapter with the synthetic runs' small parameters (about 50 s)
    ("publish/test_grading.py", "test_grading_three_submissions_gives_the_expected_table"): {"book"},
    # every check of every chapter's synthetic run (the `executed` batch) passed and rejected its wrong answers
    ("publish/test_chapters.py", "test_every_check_passes_and_rejects_wrong_answers"): {"book"},
    # two builds of a three-page book with the book's Sphinx hook, reading its own build times (16-20 s)
    ("publish/test_build_times.py", "test_a_build_records_its_times_and_the_next_build_states_them"): {"book"},
    # runs sel_random with a broken solution until its assertion fails (10 s)
    ("publish/test_chapters_exercises.py", "test_a_broken_solution_fails_the_chapter"): {"book"},
    # runs the measures chapter on real GPQA and checks its standalone page (20 s)
    ("publish/test_standalone.py", "test_run_chapter_writes_plain_html"): {"book"},
    # run-chapter on a small sleeping chapter: killed (4 s), and timed out after 3 s (5 s)
    ("publish/test_kernel_guard.py", "test_killed_run_chapter_takes_its_kernel_and_workers_along"): {"book"},
    ("publish/test_kernel_guard.py", "test_a_cell_timeout_names_the_cell_and_the_limit"): {"book"},
    # --- browser: drive Chromium (playwright; book-pdf prints every page, 90 s)
    ("publish/test_book_browser.py", "test_every_toc_page_loads_cleanly_in_chromium"): {"browser"},
    ("publish/test_book_browser.py", "test_every_equation_is_typeset_offline"): {"browser"},
    ("publish/test_book_browser.py", "test_instructors_copy_shows_every_solution_open"): {"browser"},
    ("publish/test_book_browser.py", "test_the_pdf_holds_every_chapter_with_figures_as_wide_as_the_text"): {"browser"},
    # every page at 1,400 px: the figures' smallest text as shown, the captions' contrast (8 s)
    ("publish/test_book_browser.py", "test_figure_text_and_captions_read_at_their_displayed_size"): {"browser"},
    # --- slow: neither, but many seconds each
    # adaptive experiments on real GPQA and a large stand-in, run independently and nested (52 s, 20 s)
    ("methods/test_selectors_speed_equivalence.py", "test_nested_adaptive_tests_keep_real_gpqa_mdad_within_the_run_to_run_spread"): {"slow"},
    ("methods/test_selectors_speed_equivalence.py", "test_nested_adaptive_tests_keep_a_large_stand_in_within_the_run_to_run_spread"): {"slow"},
    # start a dask cluster and a ray cluster (7 s, 10 s); the threading backend (0.2 s) stays
    ("methods/test_experiment.py", "test_identical_across_backends[dask]"): {"slow"},
    ("methods/test_experiment.py", "test_identical_across_backends[ray]"): {"slow"},
    # starts a dask cluster (6 s); the loky parametrisation stays
    ("test_api.py", "test_a_test_module_selector_runs_on_workers_as_in_process[dask]"): {"slow"},
    # draw every figure of the book (about 18 each) and measure ticks, lines and the texts' boxes,
    # 0.2-3 s a figure (38 s, 36 s, 23 s, 10 s); the module's other figure tests stay
    ("book/test_plots_figures.py", "test_size_axes_tick_the_sizes_run_as_plain_integers"): {"slow"},
    ("book/test_plots_figures.py", "test_selector_lines_are_drawn_in_their_style"): {"slow"},
    ("book/test_plots_figures.py", "test_texts_do_not_overlap_as_the_book_shows_them"): {"slow"},
    ("book/test_plots_figures.py", "test_texts_do_not_overlap_and_stay_on_the_canvas"): {"slow"},
    # runs the README's offline harness loop: build-micro and score in-process, the real harness (dummy model) (20 s)
    ("cli/test_example.py", "test_the_readme_harness_example_runs_offline"): {"slow"},
    # runs the README's Python example in a fresh interpreter (8 s)
    ("project/test_readme.py", "test_the_readme_python_example_runs"): {"slow"},
    # reads every chapter into the book's index of labels, titles and citations (7 s)
    ("publish/test_standalone.py", "test_the_books_references_read_as_author_and_year"): {"slow"},
    # two fresh interpreters compute one cache entry at once (6 s)
    ("base/test_cache.py", "test_two_processes_computing_the_same_entry"): {"slow"},
    # the adaptive experiment twice, the second time on a pool of two workers (5 s)
    ("methods/test_adaptive.py", "test_tables_are_identical_for_one_and_two_workers"): {"slow"},
    # a fresh interpreter with the book's packages blocked runs an experiment and the CLI (3 s)
    ("project/test_dependencies.py", "test_library_and_command_line_run_without_the_book_packages"): {"slow"},
    # three fresh interpreters: `notebook all --launch`, its first cell, `notebook measures` (3 s)
    ("publish/test_publish.py", "test_launched_notebooks_open_with_the_install_cell_that_is_a_no_op_where_mbutils_imports"): {"slow"},
    # k-medoids anchors on MMLU-Pro's 6,016 seen items under two BLAS thread counts (4 s)
    ("methods/test_anchor.py", "test_a_chapter_recomputes_the_experiments_anchors_whatever_the_blas_threads"): {"slow"},
    # builds a wheel from a copy of the sources (pip, isolated build), installs it into a folder and runs
    # `micro list`, `score` and `micro export` from it in an empty folder (7 s)
    ("cli/test_shipped.py", "test_an_installed_wheel_lists_exports_and_scores_shipped_micro_benchmarks_without_the_repository"): {"slow"},
    # copies the repository (data/ included) and runs `mbutils data` in it (3 s)
    ("project/test_clone.py", "test_the_data_command_of_a_clone_lists_its_shipped_bundles"): {"slow"},
}


#: Every collected item's node id (before ``-m`` deselects any) -> its markers, as the hook below left
#: them; tests/project/test_markers.py checks them against the table.
MARKED_AT_COLLECTION: dict[str, set[str]] = {}


def lane_key(path) -> str:
    """A test module's key in the lane table: its path in tests/ (``publish/test_chapters.py``)."""
    path = Path(path).resolve()
    return path.relative_to(TESTS).as_posix() if path.is_relative_to(TESTS) else path.name


def lane_marks(module: str, name: str) -> set[str]:
    """The markers of the test ``name`` (``test_x`` or ``test_x[id]``) of ``module`` (its path in
    tests/, as :func:`lane_key` gives it); book and browser tests are always slow too."""
    marks = (LANE_MODULES.get(module, set()) | LANE_TESTS.get((module, name.split("[", 1)[0]), set())
             | LANE_TESTS.get((module, name), set()))
    return marks | {"slow"} if marks & {"book", "browser"} else marks


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects anything
def pytest_collection_modifyitems(config, items):
    """The lane table's markers; and an order that keeps both cores busy to the end. The quick
    book builds, and the niced batches of chapter runs work, in the background from the first test
    on (``pytest_runtest_setup`` above), so the one-core tests come first, then those that read the
    quick book (Chromium and the PDF are mostly one core, and the batches take the other), and last
    the modules that read a batch (``start_in_background``), whose two workers then have both cores.
    Each module's tests stay together and in order."""
    rank = {}
    for item in items:
        module = getattr(item, "module", None)
        here = 2 if hasattr(module, "start_in_background") else 1 if _reads_the_quick_book(item) else 0
        rank[item.path] = max(rank.get(item.path, 0), here)
    items.sort(key=lambda item: rank[item.path])  # a stable sort: the order is kept otherwise
    for item in items:
        name = item.nodeid.split("::", 1)[1] if "::" in item.nodeid else ""
        for mark in sorted(lane_marks(lane_key(item.path), name)):
            item.add_marker(mark)
        MARKED_AT_COLLECTION[item.nodeid] = {m.name for m in item.iter_markers()}

"""The fast lane (``pytest -m "not slow"``) leaves out every test that executes a chapter, builds
the book or drives Chromium: such a test must be marked ``book`` or ``browser`` by the lane table
of ``conftest.py`` (which also makes it ``slow``).

Which tests those are is read from the test modules' source, not from their names: a test
*executes a chapter or builds the book* when its code, a fixture it requests (of its module or of
conftest.py, autouse ones included) or a helper, class or constant of its module that any of these
use, refers to

* ``run_chapter`` (:func:`mbutils.publish.chapters.run_chapter`, the one way the package runs a
  chapter through papermill), papermill's ``execute_notebook`` or the tests' ``ChapterBatch`` (which
  runs ``run_chapter`` in a background process);
* the commands ``run-chapter`` or ``mbutils book`` (the command-line doors to the same), as a
  string that starts a command list or call (``run("run-chapter", ...)``, ``["run-chapter", ...]``)
  or follows ``"mbutils"`` in one;
* the ``jupyter-book`` executable (the string ``"jupyter-book"`` given to a call or joined to a
  path);

and it *drives Chromium* when that code refers to playwright's ``sync_playwright`` /
``async_playwright``, a ``.chromium`` attribute, the string ``"chromium"`` given to a call
(``shutil.which("chromium")``) or the ``book-pdf`` command (which prints the book with Chromium).

A test or helper that refers to one of these without running it (a refusal before any kernel
starts) is listed in :data:`REFERS_BUT_DOES_NOT_RUN` with the reason, so the exemption is visible.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

from conftest import LANE_MODULES, LANE_TESTS, MARKED_AT_COLLECTION, REPO, TESTS, lane_key, lane_marks


#: (module, test or module-level helper/fixture) -> why its code names a chapter run, the book
#: build or Chromium without running one. An exempted helper adds nothing to the tests using it.
#: Modules are named by their path in tests/, as in the lane table.
REFERS_BUT_DOES_NOT_RUN: dict[tuple[str, str], str] = {
    ("publish/test_preflight_run_chapter.py", "test_sizes_past_the_seen_half_are_refused_as_experiment_refuses_them"):
        "papermill is a stub that must not be called; refused before any kernel",
    ("publish/test_preflight_run_chapter.py", "test_a_bundle_that_does_not_exist_is_refused_before_the_kernel"):
        "papermill is a stub that must not be called; refused before any kernel",
    ("publish/test_preflight_run_chapter.py", "test_a_pool_too_small_is_refused_with_run_chapters_names"):
        "papermill is a stub that must not be called; refused before any kernel",
    ("publish/test_preflight_run_chapter.py", "test_a_new_model_the_bundle_lacks_is_named_by_its_parameter"):
        "papermill is a stub that must not be called; refused before any kernel",
    ("publish/test_chapters.py", "test_run_chapter_refuses_unknown_chapters_and_parameters"):
        "run_chapter refuses an unknown chapter and an unknown parameter before it starts a kernel",
    ("cli/test_micro_hostile.py", "test_run_chapter_refuses_an_absurd_runs_before_executing"):
        "papermill is replaced by a stub that fails the test if called; the parameters are refused first",
    ("cli/test_cli_properties.py", "_bases"):
        "the run-chapter command line of the hostile-input table names no chapter that exists; "
        "it is refused before any kernel starts",
    ("cli/test_chapters_list.py", "test_the_list_names_every_runnable_chapter_with_its_parameters"):
        "run-chapter --list reads the chapters' parameter cells and exits; no kernel starts",
    ("cli/test_chapters_list.py", "test_without_a_chapter_or_with_both_the_command_says_what_to_give"):
        "run-chapter without a chapter, or with --list and a chapter, is refused before any kernel starts",
}

#: ``ChapterBatch`` (tests/chapter_batch.py) runs ``run_chapter`` in a background process.
BOOK_NAMES = {"run_chapter", "execute_notebook", "ChapterBatch"}
BROWSER_NAMES = {"sync_playwright", "async_playwright", "chromium"}
BOOK_COMMANDS = {"run-chapter", "book"}
BROWSER_COMMANDS = {"book-pdf"}
#: Commands recognised at the start of a command list or call ("book" alone is too common a word).
STARTING_COMMANDS = {"run-chapter", "book-pdf"}


def _string(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _commands(node) -> set[str]:
    """Commands a list, tuple or call starts with, or names right after ``"mbutils"``."""
    if isinstance(node, (ast.List, ast.Tuple)):
        seq = node.elts
    elif isinstance(node, ast.Call):
        seq = node.args
    else:
        return set()
    words = [_string(n) for n in seq]
    found = {words[0]} if words and words[0] in STARTING_COMMANDS else set()
    found |= {b for a, b in zip(words, words[1:]) if a == "mbutils" and b is not None}
    return found


def _executable(node) -> str | None:
    """A string given to a call or joined to a path (``which("chromium")``, ``bin / "jupyter-book"``)."""
    if isinstance(node, ast.Call):
        return next((t for t in map(_string, node.args) if t in ("jupyter-book", "chromium")), None)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return _string(node.right)
    return None


def direct_kinds(node: ast.AST) -> set[str]:
    """``book`` and/or ``browser``: what the code of ``node`` itself refers to."""
    kinds = set()
    for n in ast.walk(node):
        name = (n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute)
                else n.name.rsplit(".", 1)[-1] if isinstance(n, ast.alias) else None)
        text = _executable(n)
        commands = _commands(n)
        if name in BOOK_NAMES or text == "jupyter-book" or commands & BOOK_COMMANDS:
            kinds.add("book")
        if name in BROWSER_NAMES or text == "chromium" or commands & BROWSER_COMMANDS:
            kinds.add("browser")
    return kinds


def _is_fixture(node) -> tuple[bool, bool]:
    """(is a pytest fixture, is autouse)."""
    for deco in getattr(node, "decorator_list", []):
        call = deco if isinstance(deco, ast.Call) else None
        target = call.func if call else deco
        if isinstance(target, ast.Attribute) and target.attr == "fixture" or (
                isinstance(target, ast.Name) and target.id == "fixture"):
            autouse = bool(call) and any(k.arg == "autouse" and getattr(k.value, "value", False)
                                         for k in call.keywords)
            return True, autouse
    return False, False


def _definitions(tree: ast.Module) -> dict[str, ast.AST]:
    """Module-level functions, classes and assigned names."""
    defs: dict[str, ast.AST] = {}
    for st in tree.body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defs[st.name] = st
        elif isinstance(st, (ast.Assign, ast.AnnAssign)):
            for target in (st.targets if isinstance(st, ast.Assign) else [st.target]):
                for n in ast.walk(target):
                    if isinstance(n, ast.Name):
                        defs[n.id] = st
    return defs


def _tests(tree: ast.Module):
    """(qualified name, node) of every test function and method of a module."""
    for st in tree.body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) and st.name.startswith("test"):
            yield st.name, st
        elif isinstance(st, ast.ClassDef) and st.name.startswith("Test"):
            for m in st.body:
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name.startswith("test"):
                    yield f"{st.name}::{m.name}", m


@functools.cache
def what_tests_run() -> dict[tuple[str, str], set[str]]:
    """(module, test) -> the kinds (book, browser) its code reaches, for every test of tests/ and its
    folders (the module named by its path in tests/, as in the lane table)."""
    conftest = _definitions(ast.parse((TESTS / "conftest.py").read_text(encoding="utf-8")))
    found = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        if path.resolve() == Path(__file__).resolve():  # this checker names them only to look for them
            continue
        module = lane_key(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        defs = {**conftest, **_definitions(tree)}
        autouse = [name for name, node in defs.items() if _is_fixture(node)[1]]
        refs_of: dict[str, set[str]] = {}
        kinds_of: dict[str, set[str]] = {}

        def refs(node) -> set[str]:
            names = set()
            for n in ast.walk(node):
                if isinstance(n, ast.Name) and n.id in defs:
                    names.add(n.id)
                elif isinstance(n, ast.arg) and n.arg in defs:  # a fixture requested by argument
                    names.add(n.arg)
                elif _string(n) in defs and _is_fixture(defs[_string(n)])[0]:  # usefixtures("name")
                    names.add(_string(n))
            return names

        def reached(node) -> set[str]:
            """The module's (and conftest's) names the code of node uses, directly or not."""
            todo, seen = refs(node) | set(autouse), set()
            while todo:
                name = todo.pop()
                seen.add(name)
                if name not in refs_of:
                    exempt = (module, name) in REFERS_BUT_DOES_NOT_RUN
                    refs_of[name] = set() if exempt else refs(defs[name])
                todo |= refs_of[name] - seen
            return seen

        for name, node in _tests(tree):
            if (module, name) in REFERS_BUT_DOES_NOT_RUN:
                found[module, name] = set()
                continue
            kinds = direct_kinds(node)
            for other in reached(node):
                if (module, other) not in REFERS_BUT_DOES_NOT_RUN:
                    if other not in kinds_of:
                        kinds_of[other] = direct_kinds(defs[other])
                    kinds |= kinds_of[other]
            found[module, name] = kinds
    return found



def test_the_criterion_finds_the_known_chapter_book_and_browser_tests():
    """The source reading is not vacuous: it reads every test module, in every folder of tests/, and
    sees the suite's known cases."""
    modules = {module for module, _ in what_tests_run()}
    assert len(modules) == len(list(TESTS.rglob("test_*.py"))) - 1  # all but this checker
    assert "book" in what_tests_run()["publish/test_chapters.py", "test_chapter_executes_with_every_figure"]  # via a fixture
    assert "book" in what_tests_run()["publish/test_chapters_knobs.py",
                                      "test_editing_the_bin_width_knob_in_the_chapter_changes_the_figure"]
    assert "browser" in what_tests_run()["publish/test_book_browser.py", "test_every_equation_is_typeset_offline"]
    assert "book" in what_tests_run()["project/test_clone.py",
                                      "test_without_the_real_bbh_the_front_page_and_its_chapter_say_stand_in"]
    assert "book" in what_tests_run()["publish/test_kernel_guard.py", "test_a_cell_timeout_names_the_cell_and_the_limit"]
    assert not what_tests_run()["publish/test_chapters.py", "test_parameter_values_are_typed_like_papermill"]


@pytest.mark.parametrize("kind", ["book", "browser"])
def test_every_test_that_runs_chapters_or_chromium_is_out_of_the_fast_lane(kind):
    unmarked = [f"{module}::{name}" for (module, name), kinds in what_tests_run().items()
                if kind in kinds and kind not in lane_marks(module, name)
                and (module, name) not in REFERS_BUT_DOES_NOT_RUN]
    assert not unmarked, (f"these tests reach a {kind} run but the lane table of tests/conftest.py does not "
                          f"mark them {kind}: {unmarked}")


def test_exemptions_are_current():
    for (module, name), why in REFERS_BUT_DOES_NOT_RUN.items():
        tree = ast.parse((TESTS / module).read_text(encoding="utf-8"))
        node = {**_definitions(tree), **dict(_tests(tree))}.get(name)
        assert node is not None, f"{module}::{name} is exempted but does not exist"
        assert direct_kinds(node), f"{module}::{name} no longer names a chapter run or Chromium: drop its exemption"
        assert not lane_marks(module, name) & {"book", "browser"}, f"{module}::{name} is marked: drop its exemption"


def test_every_entry_of_the_lane_table_names_a_test_that_exists():
    modules = {module for module, _ in what_tests_run()}
    for module in LANE_MODULES:
        assert module in modules, f"LANE_MODULES names {module}, which is not in tests/"
    for module, name in LANE_TESTS:
        assert (module, name.split("[", 1)[0]) in what_tests_run(), f"LANE_TESTS names {module}::{name}, which is no test"


def test_book_and_browser_are_always_slow():
    for marks in [*LANE_MODULES.values(), *LANE_TESTS.values()]:
        assert marks <= {"slow", "book", "browser"}
    for module, name in what_tests_run():
        marks = lane_marks(module, name)
        assert not marks & {"book", "browser"} or "slow" in marks, (module, name)


def test_the_collected_items_carry_the_table_marks(request):
    """The hook put the table's marks on every item collected, before ``-m`` deselected any (so the fast
    lane checks the slow items it leaves out too): the module of an item is read from its node id here,
    not by the hook's key, and every entry of the table marks each collected test it names."""
    assert {item.nodeid for item in request.session.items} <= set(MARKED_AT_COLLECTION)
    collected: dict[tuple[str, str], set[str]] = {}
    for nodeid, marks in MARKED_AT_COLLECTION.items():
        path, _, name = nodeid.partition("::")
        module = (REPO / path).resolve().relative_to(TESTS).as_posix()
        collected[module, name] = marks
        assert not marks & {"book", "browser"} or "slow" in marks, nodeid
    entries = [((module, None), marks) for module, marks in LANE_MODULES.items()] + list(LANE_TESTS.items())
    for (module, name), marks in entries:
        named = {test: got for (mod, test), got in collected.items()
                 if mod == module and (name is None or test == name or test.split("[", 1)[0] == name)}
        for test, got in named.items():
            assert marks <= got, f"{module}::{test} lacks the table's marks {sorted(marks - got)}"
    for item in request.session.items:
        assert {m.name for m in item.iter_markers()} >= MARKED_AT_COLLECTION[item.nodeid], item.nodeid
    assert "slow" not in {m.name for m in request.node.iter_markers()}

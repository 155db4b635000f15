"""Every computing chapter has a derive-then-check exercise (issue 50): an exercise whose solution
checks, with ``assert``, a number the student recomputed against the library's number.

What is a computing chapter: a MyST notebook (a kernelspec) with at least one gated solution, as
:func:`mbutils.publish.student_notebooks.computing_chapters` lists them.

The rule, read from the chapter's text (nothing is executed). An exercise counts when the code
cells of its solution (between ``{solution-start}`` and ``{solution-end}``) hold an ``assert``
whose test reads a *library value*, or a named check (``book.check(label, name, found, expected)``,
issue 64) whose expected value reads one:

* a library call itself: ``mb.<name>(...)`` or ``mbutils.<name>(...)`` (the public API), a call of
  a name imported from ``mbutils`` (``from mbutils import ks_distance``), or ``book.<name>(...)``
  when the book's facade re-exports that name from the library's own modules (``mbutils.evaluate``,
  ``.methods``, ``.data``, ``.base``) and not from its own helpers in ``mbutils.book`` (pages,
  notes, settings, picks, and the exercise helpers such as ``book.plain_stratified_bias``, which
  are no number of the library a reader checks against); the calls that only bring the data in
  (``load_benchmark``, ``resolve_data``, ``run_experiment``, ``Protocol``, ``Benchmark``: the
  bundle and the results table a student recomputes from) are not library values;
* or a name the chapter's code assigns from a library value, directly or through other such
  names (``summary = mb.summary_table(res)``, then ``lib = summary.set_index("size")``). An
  assignment is ``x = ...`` (also ``x[...] = ...``, ``x += ...``, ``for x in ...``), a
  ``x.append(...)`` (``extend``, ``update``, ``add``, ``insert``) with a library value in its
  arguments, or a function whose body makes a library call.

A method of a library value is a library value too (``micro.estimate(tgt)`` with ``micro`` from
``mb.make_selector``). The rule is a floor, kept simple on purpose: it cannot tell an identity
(a recomputation equal to the library's number) from an assert that only reads a library value,
so which exercise of a chapter is its derive-then-check was audited by hand. It does fail a chapter whose asserts compare only numbers of the page or of the
book's helpers, as the tests on constructed chapters below show.
"""

from __future__ import annotations

import ast
import re

import pytest

from mbutils import book
from mbutils.publish.chapters import chapter_path
from mbutils.publish.student_notebooks import computing_chapters

_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
_SOLUTION = re.compile(r"^```\{solution-start\}[ \t]*(\S+)[^\n]*\n.*?^```\{solution-end\}", re.M | re.S)
#: Calls on a name that put their arguments into it.
_FILLING = {"append", "extend", "update", "add", "insert"}
#: The book facade's names that compute (re-exported from outside mbutils.book, or from its findings).
LIBRARY_FACADE = {name for name, (module, _) in book._NAMES.items()
                  if not module.startswith("mbutils.book") or module.startswith("mbutils.book.findings")}
#: Calls that bring the data in (a bundle, an experiment's results table): what a student recomputes
#: from, not a number to check against.
INPUTS = {"load_benchmark", "resolve_data", "run_experiment", "Protocol", "Benchmark"}


def _trees(text: str) -> list[ast.Module]:
    """The parsed code cells of a MyST text (cell options such as ``:tags:`` and magics blanked)."""
    trees = []
    for cell in _CELL.findall(text):
        source = "\n".join("" if re.match(r"\s*(:\w+:|[%!])", line) else line for line in cell.splitlines())
        try:
            trees.append(ast.parse(source))
        except SyntaxError:
            continue
    return trees


class _Library:
    """Which calls of one chapter are library calls, and which names hold library values."""

    def __init__(self, trees: list[ast.Module]):
        self.modules, self.imported, self.facades = {"mb", "mbutils"}, set(), {"book"}
        for tree in trees:
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    for alias in node.names:
                        if alias.name == "mbutils":
                            self.modules.add(alias.asname or "mbutils")
                elif isinstance(node, ast.ImportFrom) and node.module == "mbutils":
                    for alias in node.names:
                        if alias.name == "book":
                            self.facades.add(alias.asname or "book")
                        else:
                            self.imported.add(alias.asname or alias.name)
        self.names: set[str] = set()
        while True:  # names assigned from library values, to a fixed point
            before = len(self.names)
            for tree in trees:
                for node in ast.walk(tree):
                    self._assigned(node)
            if len(self.names) == before:
                break

    def is_call(self, node) -> bool:
        if not isinstance(node, ast.Call):
            return False
        func = node.func
        if (func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)) in INPUTS:
            return False
        if isinstance(func, ast.Name):
            return func.id in self.imported
        root = func
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name):
            return False
        if root.id in self.modules:
            return True
        first = func
        while isinstance(first.value, ast.Attribute):
            first = first.value
        return root.id in self.facades and first.attr in LIBRARY_FACADE

    def reads(self, node) -> bool:
        """Whether an expression makes a library call or reads a name holding a library value."""
        return any(self.is_call(n) or (isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in self.names)
                   for n in ast.walk(node))

    def _assigned(self, node) -> None:
        def store(target):
            for n in ast.walk(target):
                if isinstance(n, ast.Name):
                    self.names.add(n.id)  # x, (x, y), and the x of x[...] = or x.attr =

        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            if self.reads(node.value):
                for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                    store(target)
        elif isinstance(node, (ast.For, ast.comprehension)) and self.reads(node.iter):
            store(node.target)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _FILLING
              and isinstance(node.func.value, ast.Name) and node.func.value.id not in self.facades | self.modules
              and any(self.reads(a) for a in [*node.args, *(k.value for k in node.keywords)])):
            self.names.add(node.func.value.id)
        elif isinstance(node, (ast.FunctionDef, ast.Lambda)) and any(self.is_call(n) for n in ast.walk(node)):
            if isinstance(node, ast.FunctionDef):
                self.names.add(node.name)


def derive_exercises(text: str) -> list[str]:
    """Labels of the exercises of a MyST chapter whose solution asserts on a library value (the rule above)."""
    library = _Library(_trees(text))
    found = []
    for match in _SOLUTION.finditer(text):
        if any((isinstance(node, ast.Assert) and library.reads(node.test)) or _named_check_on_library(node, library)
               for tree in _trees(match.group(0)) for node in ast.walk(tree)):
            found.append(match.group(1))
    return found


def _named_check_on_library(node, library: _Library) -> bool:
    """A named check (``book.check(label, name, found, expected, ...)``, issue 64) whose expected value reads
    a library value: the exercise's answer is compared with the library's number."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "check"
            and isinstance(node.func.value, ast.Name) and node.func.value.id in library.facades):
        return False
    expected = [*node.args[3:], *(k.value for k in node.keywords if k.arg not in ("of", "choices"))]
    return any(library.reads(e) for e in expected)


def check_chapter(chapter: str, text: str) -> None:
    """Fail unless the chapter's text has a derive-then-check exercise by the rule above."""
    assert derive_exercises(text), (
        f"{chapter}: no exercise's solution asserts a recomputation against a library value (mb.<name>, a name "
        "imported from mbutils, a book.<name> of the library's modules, or a name assigned from one)")


@pytest.mark.parametrize("chapter", computing_chapters())
def test_every_computing_chapter_has_a_derive_then_check_exercise(chapter):
    check_chapter(chapter, chapter_path(chapter).read_text(encoding="utf-8"))


def test_the_list_of_computing_chapters_is_the_real_one():
    chapters = computing_chapters()
    assert len(chapters) >= 15 and {"measures", "sel_diversity", "bench_bbh", "bench_mmlu"} <= set(chapters)
    assert "teaching" not in chapters and "notation" not in chapters  # no kernel, or no solution


def _page(page_code: str, solution_code: str, label: str = "ex-x") -> str:
    """A small constructed chapter: a page cell, then one exercise with a gated solution."""
    return (f"# A page\n\n```{{code-cell}}\nimport numpy as np\nimport mbutils as mb\nfrom mbutils import book\n"
            f"{page_code}\n```\n\n## Exercises\n\n```{{exercise}} One\n:label: {label}\n\nDo it.\n```\n\n"
            f"```{{solution-start}} {label}\n:class: dropdown\n```\n\nHow.\n\n```{{code-cell}}\n{solution_code}\n```\n\n"
            "```{solution-end}\n```\n")


def test_a_check_against_the_library_counts_directly_and_through_names():
    assert derive_exercises(_page("res = book.pick_data(1)", "mine = res.mean()\n"
                                  "assert np.isclose(mine, mb.summary_table(res)['error'].mean())")) == ["ex-x"]
    transitive = _page("res = 1\nsummary = mb.summary_table(res)",
                       "lib = summary.set_index('size')\nmine = 3\nassert np.allclose(mine, lib['error'])")
    assert derive_exercises(transitive) == ["ex-x"]
    imported = _page("from mbutils import ks_distance\nx = 1",
                     "rows = []\nrows.append({'library': ks_distance(x, x)})\nassert rows[0]['library'] == 0")
    assert derive_exercises(imported) == ["ex-x"]
    facade = _page("res = 1", "mine, theirs = 3, book.random_within_ci_from(res)\nassert mine == theirs")
    assert derive_exercises(facade) == ["ex-x"]  # re-exported from mbutils.evaluate
    method = _page("sel = mb.make_selector('random')", "micro = sel.select(1, 2, 3)\n"
                   "assert np.allclose(micro.estimate(1), 2)")
    assert derive_exercises(method) == ["ex-x"]


def test_a_named_check_against_the_library_counts_and_one_against_a_constant_does_not():
    assert derive_exercises(_page("res = 1", "mine = 3\n# --- checks ---\n"
                                  "book.check('ex-x', 'mine', mine, mb.summary_table(res)['error'].mean())")) == ["ex-x"]
    assert derive_exercises(_page("res = 1", "mine = 3\nbook.check('ex-x', 'mine', mine, 3)")) == []
    assert derive_exercises(_page("res = mb.summary_table(1)", "mine = 3\n"
                                  "book.check('ex-x', 'mine', mine, 3, of=lambda m: res)")) == []


def test_a_chapter_without_one_fails_the_rule():
    """The checker fails a chapter whose asserts read only the page's numbers or the book's helpers."""
    page_number = _page("facts = book.in_short(1)\nshare = 0.5", "mine = 0.5\nassert f'{mine:.0%}' == facts['share']")
    helper = _page("tgt = np.ones((2, 3))", "predicted = book.plain_stratified_bias(tgt, np.zeros(3))\n"
                   "by_hand = 0.0\nassert np.isclose(predicted[0], by_hand)")
    outside = _page("x = mb.summary_table(1)\nassert x is not None", "mine = 2\nassert mine == 2")
    no_assert = _page("", "mine = mb.summary_table(1)\nprint(mine)")
    input_only = _page("res = mb.run_experiment(1, ['random'], [5], mb.Protocol())",
                       "mine = res['estimate'].mean()\nassert 0 <= mine <= 1")
    for text in (page_number, helper, outside, no_assert, input_only):
        assert derive_exercises(text) == []
    with pytest.raises(AssertionError, match="constructed: no exercise's solution asserts"):
        check_chapter("constructed", helper)
    assert "plain_stratified_bias" not in LIBRARY_FACADE and "in_short" not in LIBRARY_FACADE
    assert {"random_within_ci_from", "difference_estimate", "full_mdad_table"} <= LIBRARY_FACADE

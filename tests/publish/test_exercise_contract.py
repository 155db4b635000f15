"""What every exercise promises a student (issue 64), read from the chapters' text (nothing executed):

* its text lists what the student must produce ("**You produce**": each name, its type, the rules);
* its solution ends with named checks (``book.check``, after ``# --- checks ---``), each reading one of
  those names as its answer, every listed name checked;
* the checks read nothing but those names, the page's own names and what the check block defines:
  never a name the solution makes on the way (``row_tau``, ``c_tau`` were), so a solution written from
  the text alone, by another method, passes;
* what a check expects never reads the student's names (a check that compares an answer with itself
  passes whatever the student computes);
* the page's own cells never read a name only a solution defines, so in a students' notebook every
  cell after an unsolved stub runs.
"""

from __future__ import annotations

import ast
import builtins
import re

import pytest

from mbutils.publish.chapters import chapter_path
from mbutils.publish.student_notebooks import check_block, computing_chapters, exercises_of, visible_checks

_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
_SOLUTION = re.compile(r"^```\{solution-start\}[ \t]*(\S+)[^\n]*\n.*?^```\{solution-end\}", re.M | re.S)
BUILTINS = set(dir(builtins))


def _source(cell: str) -> str:
    return "\n".join("" if re.match(r"\s*(:\w+:|[%!])", line) else line for line in cell.splitlines())


def _defined(tree) -> set[str]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.alias):
            out.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
    return out


def _loaded(tree) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _chapter(name: str):
    """(exercises, solutions: label -> code sources, page code sources) of a chapter."""
    text = chapter_path(name).read_text(encoding="utf-8")
    solutions = {m.group(1): [_source(c) for c in _CELL.findall(m.group(0))] for m in _SOLUTION.finditer(text)}
    page = [_source(c) for c in _CELL.findall(_SOLUTION.sub("", text))]
    return exercises_of(text), solutions, page


def _check_calls(tree) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == "check" and isinstance(n.func.value, ast.Name) and n.func.value.id == "book"]


CHAPTERS = computing_chapters()


def test_the_chapters_hold_fifty_exercises_and_conceptual_questions():
    labels = [label for c in CHAPTERS for label in _chapter(c)[0]]
    assert len([l for l in labels if l.startswith("ex-")]) >= 50
    questions = {c: [l for l in _chapter(c)[0] if l.startswith("q-")] for c in CHAPTERS}
    for chapter in ("measures", "sel_random", "bench_gpqa"):
        assert len(questions[chapter]) >= 2, f"{chapter}: conceptual questions"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_exercise_states_what_its_checks_read_and_checks_only_that(chapter):
    exercises, solutions, page = _chapter(chapter)
    page_names = set().union(*(_defined(ast.parse(s)) for s in page)) | BUILTINS
    assert set(exercises) == set(solutions), f"{chapter}: an exercise without a solution, or the reverse"
    for label, exercise in exercises.items():
        names = [n for n, _ in exercise["names"]]
        assert names, f"{label}: the exercise lists no name to produce (\"**You produce**\")"
        for name, what in exercise["names"]:
            assert len(what) >= 10, f"{label}: `{name}` has no type or description in the exercise's text"
        block = check_block(solutions[label])
        assert block, f"{label}: the solution has no '# --- checks ---' block"
        tree = ast.parse(block)
        calls = _check_calls(tree)
        assert calls, f"{label}: no book.check in its checks"
        checked = set()
        for call in calls:
            assert isinstance(call.args[0], ast.Constant) and call.args[0].value == label, \
                f"{label}: a check names another exercise: {ast.unparse(call)[:80]}"
            found = call.args[2]
            assert isinstance(found, ast.Name) and found.id in names, \
                f"{label}: a check's answer is not a listed name: {ast.unparse(found)}"
            checked.add(found.id)
            expected = [*call.args[3:], *(k.value for k in call.keywords if k.arg != "of")]
            read = set().union(*(_loaded(e) for e in expected)) if expected else set()
            assert not read & set(names), f"{label}: what {found.id}'s check expects reads the answer itself"
        assert checked == set(names), f"{label}: listed but never checked: {sorted(set(names) - checked)}"
        # outside `of=` functions, the block reads only the listed names, the page's and its own
        own = _defined(tree)
        stray = _loaded(tree) - set(names) - page_names - own
        assert not stray, f"{label}: its checks read names only its solution defines: {sorted(stray)}"
        if label.startswith("q-"):
            assert any(k.arg == "hidden" for c in calls for k in c.keywords), f"{label}: the answer must be hidden"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_no_page_cell_reads_a_name_only_a_solution_defines(chapter):
    _, solutions, page = _chapter(chapter)
    page_defined = set().union(*(_defined(ast.parse(s)) for s in page))
    solution_defined = set().union(*(_defined(ast.parse(s)) for code in solutions.values() for s in code))
    for source in page:
        read = _loaded(ast.parse(source)) - page_defined - BUILTINS
        assert not read & solution_defined, f"{chapter}: a page cell reads {sorted(read & solution_defined)}"


def test_hidden_checks_are_left_out_of_the_students_checks():
    block = ('x = 1\nbook.check("ex-a", "a", a, x)\nif x:\n    book.check("ex-a", "b", b, 2,\n'
             '               hidden=True)\nbook.check("ex-a", "c", c, 3, hidden=True)')
    shown = visible_checks(block)
    assert "hidden" not in shown and '"b"' not in shown and '"c"' not in shown
    assert 'book.check("ex-a", "a", a, x)' in shown and "    pass" in shown
    compile(shown, "stub", "exec")
    hidden = sum("hidden=True" in check_block(code) for c in CHAPTERS for code in _chapter(c)[1].values())
    assert hidden >= 30, "the instructors' copy holds hidden checks"

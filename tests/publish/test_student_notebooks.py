"""The students' and instructors' notebooks (mbutils/publish/student_notebooks.py): one per computing
chapter, no solution in the students' (compared with the instructors'), each students' notebook
stopping at its first stub with the "your turn" message, never a number of its own."""

from __future__ import annotations

import ast
import re
import zipfile
from pathlib import Path

import nbformat
import pytest

from conftest import REPO
from mbutils.base.errors import ChapterError
from mbutils.publish.chapters import chapter_parameters, read_chapter, run_chapter
from mbutils.publish.publish import launch_cell
from mbutils.publish.student_notebooks import STUB_TAG, YOUR_TURN, computing_chapters, students_notebook, write_notebooks
from test_chapters import params_for  # the chapters' small parameters: one table

#: Computing chapters, found here independently of the module: a kernelspec and a gated solution.
CHAPTERS = sorted(p.stem for p in (REPO / "chapters").glob("*.md")
                  if "kernelspec:" in p.read_text(encoding="utf-8")[:2000]
                  and "{solution-start}" in p.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def copies(tmp_path_factory):
    out = tmp_path_factory.mktemp("notebooks")
    return {copy: write_notebooks(copy, out / copy) for copy in ("students", "instructors")}


def _solutions(nb) -> list[tuple[list[str], list[str]]]:
    """(Markdown texts, code sources) of each solution of an instructors' notebook, read from its
    cells between the solution-start and solution-end fences."""
    found, inside = [], False
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for piece in re.split(r"(```\{solution-(?:start|end)\}[^\n]*\n(?::[^\n]*\n)*```)", cell.source):
                if piece.startswith("```{solution-start}"):
                    inside = True
                    found.append(([], []))
                elif piece.startswith("```{solution-end}"):
                    inside = False
                elif inside:
                    found[-1][0].append(piece)
        elif inside:
            found[-1][1].append(cell.source)
    return found


def _assert_lines(source: str) -> set[int]:
    """Line numbers (1-based) of a source's assert statements, and of an ``if`` or ``for`` holding
    asserts only: the checks a stub may repeat."""
    lines = set()
    for node in ast.walk(ast.parse(source)):
        inner = [*node.body, *node.orelse] if isinstance(node, (ast.If, ast.For)) else []
        if isinstance(node, ast.Assert) or (isinstance(node, (ast.If, ast.For)) and inner
                                            and all(isinstance(s, ast.Assert) for s in inner)):
            lines.update(range(node.lineno, node.end_lineno + 1))
    return lines


def test_every_computing_chapter_gets_a_notebook_and_the_zip_holds_them(copies):
    assert len(CHAPTERS) >= 15 and "measures" in CHAPTERS  # the list reads the real chapters
    assert computing_chapters() == CHAPTERS
    for copy, (written, archive) in copies.items():
        assert sorted(p.stem for p in written) == CHAPTERS
        with zipfile.ZipFile(archive) as zf:
            assert sorted(Path(n).stem for n in zf.namelist()) == CHAPTERS
            assert zf.read(f"{copy}-notebooks/measures.ipynb") == (archive.parent / "measures.ipynb").read_bytes()


def test_the_instructors_notebook_is_the_chapter_with_its_install_cell(copies):
    for path in copies["instructors"][0]:
        nb = nbformat.read(path, as_version=4)
        chapter = read_chapter(path.stem)
        assert nb.cells[0].source == launch_cell()
        assert [c.source for c in nb.cells[1:]] == [c.source for c in chapter.cells]
        assert _solutions(nb), f"{path.stem}: no solution found in the instructors' notebook"


def test_no_students_notebook_holds_a_solution(copies):
    students = {p.stem: p for p in copies["students"][0]}
    for path in copies["instructors"][0]:
        teacher = nbformat.read(path, as_version=4)
        student = nbformat.read(students[path.stem], as_version=4)
        text = "\n".join(c.source for c in student.cells)
        solutions = _solutions(teacher)
        stubs = [c for c in student.cells if c.cell_type == "code" and STUB_TAG in c.metadata.get("tags", [])]
        assert len(stubs) == sum(1 for _, code in solutions if code), path.stem
        for stub in stubs:
            compile(stub.source, path.stem, "exec")  # a stub is valid Python: it raises "your turn", nothing else
        assert "{solution-start}" not in text and "{solution-end}" not in text
        outside = "\n".join(c.source for c in teacher.cells)  # a line also used outside a solution may stay
        for prose, code in solutions:
            for para in "\n".join(prose).split("\n\n"):
                para = para.strip()
                if len(para) >= 40:
                    assert para not in text, f"{path.stem}: a solution's text is in the students' notebook"
            for source in code:
                checks = _assert_lines(source)
                for number, line in enumerate(source.splitlines(), 1):
                    line = line.strip()
                    if number in checks or len(line) < 25 or line.startswith("#") or outside.count(line) > 1:
                        continue
                    assert line not in text, f"{path.stem}: solution line {line!r} is in the students' notebook"
        # everything but the solutions is kept, in order
        kept = [c.source for c in student.cells if STUB_TAG not in c.metadata.get("tags", [])]
        code_kept = [s for s, c in zip(kept, [c for c in student.cells if STUB_TAG not in c.metadata.get("tags", [])])
                     if c.cell_type == "code"]
        solution_code = {s for _, code in solutions for s in code}
        assert code_kept == [c.source for c in teacher.cells if c.cell_type == "code" and c.source not in solution_code]


def test_a_stub_raises_before_it_checks_and_names_what_the_checks_read():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("```{exercise} Sum\n:label: ex-sum\n\nAdd.\n```\n\n"
                                              "```{solution-start} ex-sum\n:class: dropdown\n```\n\nAdd them."),
                nbformat.v4.new_code_cell("total = 1 + 2\nfor x in [total]:\n    assert x == 3\nprint(total)"),
                nbformat.v4.new_markdown_cell("```{solution-end}\n```\n\nAfter.")]
    out = students_notebook(nb)
    assert [c.cell_type for c in out.cells] == ["markdown", "markdown", "code", "markdown"]
    assert out.cells[-1].source == "After." and "Add them." not in str(out)
    stub = out.cells[2].source
    assert "total = 1 + 2" not in stub and "print(total)" not in stub
    assert "for x in [total]:\n    assert x == 3" in stub and "they read: total" in stub
    namespace: dict = {}
    with pytest.raises(NotImplementedError, match=f"^{YOUR_TURN}: exercise ex-sum"):
        exec(stub, namespace)  # the raise comes before any check or number
    assert set(namespace) <= {"__builtins__"}


def _first_stub(path: Path) -> tuple[int, str]:
    """Index among code cells, and exercise label, of a students' notebook's first stub."""
    code = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    index = next(i for i, c in enumerate(code) if STUB_TAG in c.metadata.get("tags", []))
    return index, re.search(r"exercise (\S+)", code[index].source).group(1)


#: Students' notebooks run here, one of each kind of page (the book's data, a selector, the measures).
#: The others need no run of their own: every cell before a notebook's first stub is its chapter's
#: (the install cell aside; test_no_students_notebook_holds_a_solution and the instructors' test check
#: that, cell by cell), and test_chapters runs every chapter to its end with these same parameters; a
#: stub raises before anything else (test_a_stub_raises_before_it_checks_and_names_what_the_checks_read).
#: Running all 21 took 122 s of the suite's foreground (a clean-clone run on 2026-12-06).
RUN_CHAPTERS = ("data", "sel_random", "measures")


def test_the_notebooks_run_here_are_computing_chapters():
    assert set(RUN_CHAPTERS) <= set(CHAPTERS)


@pytest.mark.parametrize("chapter", RUN_CHAPTERS)
def test_a_students_notebook_runs_up_to_its_first_stub_and_stops_there(chapter, tmp_path, monkeypatch):
    """Quick profile, the small parameters of the chapters' synthetic runs (test_chapters): run
    after them, the experiments before the first stub are read from the session's results cache."""
    written, _ = write_notebooks("students", tmp_path / "nb", [chapter])
    params = {key: str(value) for key, value in params_for(chapter).items()}
    assert set(params) <= set(chapter_parameters(chapter)), "the small parameters are the chapter's own"
    with pytest.raises(ChapterError) as err:
        run_chapter(written[0], params, tmp_path / "out", profile="quick", html=False)
    index, label = _first_stub(written[0])
    assert f"NotImplementedError: {YOUR_TURN}: exercise {label}" in str(err.value)
    failed = nbformat.read(tmp_path / "out" / f"{chapter}.failed.ipynb", as_version=4)
    code = [c for c in failed.cells  # papermill's injected cell is not in the written notebook
            if c.cell_type == "code" and "injected-parameters" not in c.metadata.get("tags", [])]
    errors = [i for i, c in enumerate(code) if any(o.get("output_type") == "error" for o in c.get("outputs", []))]
    assert errors == [index], "the first stub, and only it, stops the notebook"
    assert all(c.get("execution_count") for c in code[:index]), "every cell before the stub ran"


def test_an_instructors_notebook_runs_to_completion(tmp_path):
    written, _ = write_notebooks("instructors", tmp_path / "nb", ["bench_gpqa"])
    params = {key: str(value) for key, value in params_for("bench_gpqa").items()}
    executed = run_chapter(written[0], params, tmp_path / "out", profile="quick", html=False)
    nb = nbformat.read(executed, as_version=4)
    assert not [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]

"""The students' and instructors' notebooks (mbutils/publish/student_notebooks.py): one per computing
chapter, no solution in the students' (compared with the instructors'), each stub setting the names its
exercise lists to ``...`` and repeating its visible checks, and Run All of a students' notebook with every
stub unsolved running to the end, saying "not done" for each (issue 64)."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import nbformat
import pytest

from conftest import REPO
from mbutils.publish.chapters import chapter_parameters, read_chapter, run_chapter
from mbutils.publish.publish import launch_cell
from mbutils.publish.student_notebooks import (CHECKS_TAG, STUB_TAG, YOUR_TURN, check_block, computing_chapters,
                                               students_notebook, visible_checks, write_notebooks)
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
            shown = visible_checks(check_block(code))  # the checks a stub repeats, on purpose
            for source in code:
                for number, line in enumerate(source.splitlines(), 1):
                    line = line.strip()
                    if len(line) < 25 or line.startswith("#") or outside.count(line) > 1 or line in shown:
                        continue
                    assert line not in text, f"{path.stem}: solution line {line!r} is in the students' notebook"
        assert "hidden=True" not in text, f"{path.stem}: a hidden check is in the students' notebook"
        # everything but the solutions is kept, in order
        ours = (STUB_TAG, CHECKS_TAG)
        code_kept = [c.source for c in student.cells if c.cell_type == "code"
                     and not any(tag in c.metadata.get("tags", []) for tag in ours)]
        solution_code = {s for _, code in solutions for s in code}
        assert code_kept == [c.source for c in teacher.cells if c.cell_type == "code" and c.source not in solution_code]


def test_a_stub_sets_the_listed_names_to_ellipsis_and_repeats_the_visible_checks(capsys):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("```{exercise} Sum\n:label: ex-sum\n\nAdd.\n\n**You produce** (the "
                                              "checks read these names):\n\n- `total`: an int, the sum.\n```\n\n"
                                              "```{solution-start} ex-sum\n:class: dropdown\n```\n\nAdd them."),
                nbformat.v4.new_code_cell("total = 1 + 2\nprint(total)\n# --- checks ---\n"
                                          'book.check("ex-sum", "total", total, 3)\n'
                                          'book.check("ex-sum", "total", total, 3, hidden=True)'),
                nbformat.v4.new_markdown_cell("```{solution-end}\n```\n\nAfter.")]
    out = students_notebook(nb)
    kinds = [(c.cell_type, tuple(c.metadata.get("tags", []))) for c in out.cells]
    assert kinds == [("code", (CHECKS_TAG,)), ("markdown", ()), ("markdown", (STUB_TAG,)), ("code", (STUB_TAG,)),
                     ("markdown", ()), ("code", (CHECKS_TAG,))]
    assert out.cells[-2].source == "After." and "Add them." not in str(out)
    stub = out.cells[3].source
    assert out.cells[3].metadata["mbutils_exercise"] == "ex-sum"
    assert "total = 1 + 2" not in stub and "print(total)" not in stub and "hidden" not in stub
    assert "total = ...\n" in stub and 'book.check("ex-sum", "total", total, 3)' in stub
    from mbutils import book

    namespace: dict = {"book": book}
    exec(stub, namespace)  # unsolved: says "not done", raises nothing
    said = capsys.readouterr().out
    assert "check ex-sum: total — not done" in said and "exercise ex-sum: not done (total still `...`)" in said
    exec(stub.replace("total = ...", "total = 3"), namespace)
    assert "passed" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="expected 3 .*found 4"):
        exec(stub.replace("total = ...", "total = 4"), namespace)  # outside report mode a wrong answer stops


def test_every_stub_of_every_notebook_names_what_its_checks_read(copies):
    for path in copies["students"][0]:
        nb = nbformat.read(path, as_version=4)
        stubs = [c for c in nb.cells if c.cell_type == "code" and STUB_TAG in c.metadata.get("tags", [])]
        for stub in stubs:
            assert re.search(r"^\w+ = \.\.\.$", stub.source, re.M), f"{path.stem}: a stub sets no name"
            assert "book.exercise_status(" in stub.source
            compile(stub.source, path.stem, "exec")
        assert nb.metadata["mbutils"]["chapter"] == path.stem


#: Students' notebooks run here with every stub unsolved, one of each kind of page (the book's data, a selector,
#: the measures, a benchmark): Run All must reach the end. The others' cells are their chapters' (the install and
#: checks cells aside; test_no_students_notebook_holds_a_solution checks that cell by cell), test_chapters runs every
#: chapter to its end with these same parameters, and test_exercise_contract checks that no page cell reads a
#: solution's name; a stub never raises (test_a_stub_sets_the_listed_names_to_ellipsis_and_repeats_the_visible_checks).
RUN_CHAPTERS = ("data", "sel_random", "measures", "bench_gpqa")


def test_the_notebooks_run_here_are_computing_chapters():
    assert set(RUN_CHAPTERS) <= set(CHAPTERS)


@pytest.mark.parametrize("chapter", RUN_CHAPTERS)
def test_run_all_on_a_students_notebook_with_every_stub_unsolved_reaches_the_end(chapter, tmp_path):
    """Quick profile, the small parameters of the chapters' synthetic runs (test_chapters): run after them,
    the experiments are read from the session's results cache."""
    written, _ = write_notebooks("students", tmp_path / "nb", [chapter])
    params = {key: str(value) for key, value in params_for(chapter).items()}
    assert set(params) <= set(chapter_parameters(chapter)), "the small parameters are the chapter's own"
    executed = run_chapter(written[0], params, tmp_path / "out", profile="quick", html=False)  # raises on any error
    nb = nbformat.read(executed, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.get("execution_count") for c in code), "every cell ran"
    stubs = [c for c in code if STUB_TAG in c.metadata.get("tags", [])]
    assert stubs
    for stub in stubs:
        label = stub.metadata["mbutils_exercise"]
        said = "".join(o.get("text", "") for o in stub.outputs if o.get("output_type") == "stream")
        assert f"exercise {label}: not done" in said, f"{chapter}: the stub of {label} did not say 'not done'"
    summary = "".join(str(o.get("data", {}).get("text/plain", "")) for o in code[-1].outputs)
    assert "not done" in summary and "failed" in summary  # the closing table of each exercise's state


def test_an_instructors_notebook_runs_to_completion(tmp_path):
    written, _ = write_notebooks("instructors", tmp_path / "nb", ["bench_gpqa"])
    params = {key: str(value) for key, value in params_for("bench_gpqa").items()}
    executed = run_chapter(written[0], params, tmp_path / "out", profile="quick", html=False)
    nb = nbformat.read(executed, as_version=4)
    assert not [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]

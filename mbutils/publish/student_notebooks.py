"""The chapters as notebooks to hand out: students' (solutions replaced by stubs) or instructors'.

Why: the students' HTML copy shows no solutions, but students work in notebooks. A students'
notebook is its chapter's ``.ipynb`` with every gated solution (``{solution-start}`` to
``{solution-end}``: its text and code cells) replaced by two cells: a "your turn" note and a
code stub. The stub sets each name the exercise's "You produce" list asks for to ``...``, where
the student's code goes, then repeats the checks the book's solution ends with (its code after
the ``# --- checks ---`` line, without the checks marked ``hidden=True``). A check of a name still
``...`` says "not done" and raises nothing, so Run All runs every cell of the chapter whatever
the student has done; a wrong answer is printed with what was expected and what was found
(:func:`mbutils.book.exercises.check`, in ``report`` mode: the notebook opens with a cell that sets
it, and ends with a cell that lists each exercise's state). Nothing after a stub reads a
student's name: the page's own cells never read a solution's names (tests/publish/
test_student_notebooks.py checks it). An instructors' notebook is the chapter as it is, hidden
checks included; :mod:`mbutils.publish.grading` runs those after each answer of a submitted
students' notebook.

Only computing chapters get a notebook: MyST notebooks (a kernelspec) with at least one
solution. Each notebook opens with the install cell of the launched notebooks
(:func:`mbutils.publish.publish.launch_cell`), which does nothing where ``mbutils`` is installed.
:func:`write_notebooks` writes them and a zip; ``python -m mbutils book --copy students`` calls
it (``--notebooks-only`` skips the HTML build).
"""

from __future__ import annotations

import ast
import os
import textwrap
import re
import zipfile
from pathlib import Path

#: Tag of a students' notebook's stub cells (code and note).
STUB_TAG = "your-turn"
#: Tag of the cells a students' notebook adds around the chapter: the checks' mode first, their summary last.
CHECKS_TAG = "checks"
#: Words every stub's note and code start with.
YOUR_TURN = "Your turn"
#: The folder of the built HTML that holds the notebooks (the students' pages link into it).
NOTEBOOK_FOLDER = "notebooks"
#: The line of a solution's code after which come its checks (``book.check`` calls, and the lines
#: that compute what they expect from the page's names only).
SOLUTION_CHECKS = "# --- checks ---"
#: The line of a stub after which come the solution's checks (shown to the student on purpose).
CHECKS_MARKER = "# --- the checks your answer must pass ---"
#: The words that open an exercise's list of the names its checks read (``- `name`: type, rules``).
PRODUCE = "**You produce**"
#: Key of a stub cell's metadata naming its exercise (the grader finds the answers by it).
EXERCISE_KEY = "mbutils_exercise"
ZIP_NAMES = {"students": "students-notebooks.zip", "instructors": "instructors-notebooks.zip"}

_FENCE = r"^(?P<fence>`{3,}|:{3,})\{%s\}(?P<arg>[^\n]*)\n.*?^(?P=fence)[ \t]*$\n?"
_START = re.compile(_FENCE % "solution-start", re.M | re.S)
_END = re.compile(_FENCE % "solution-end", re.M | re.S)
_EXERCISE = re.compile(r"^(`{3,}|:{3,})\{exercise\}(?P<title>[^\n]*)\n(?P<body>.*?)^\1[ \t]*$", re.M | re.S)


def computing_chapters() -> list[str]:
    """Chapters that execute code and have at least one solution, by name."""
    from mbutils.publish.chapters import chapter_names, chapter_path

    return [name for name in chapter_names()
            if _START.search(chapter_path(name).read_text(encoding="utf-8"))]


def produced_names(body: str) -> list[tuple[str, str]]:
    """(name, what it is) of each item of an exercise's "You produce" list, in order."""
    start = body.find(PRODUCE)
    if start < 0:
        return []
    found = []
    for item in re.findall(r"^- (`.*?)(?=^- |^\s*$|\Z)", body[start:], re.M | re.S):
        head, _, what = item.partition(":")
        for name in re.findall(r"`([A-Za-z_]\w*)`", head):
            found.append((name, " ".join(what.split())))
    return found


def exercises_of(text: str) -> dict[str, dict]:
    """label -> {"title", "body", "names"} of every exercise of a chapter's text (or a Markdown cell's)."""
    found = {}
    for m in _EXERCISE.finditer(text):
        label = re.search(r"^:label:\s*(\S+)", m.group("body"), re.M)
        if label:
            found[label.group(1)] = {"title": m.group("title").strip(), "body": m.group("body"),
                                     "names": produced_names(m.group("body"))}
    return found


def _exercise_titles(nb) -> dict[str, dict]:
    """label -> the exercise (title, body, names) of every exercise of a notebook's Markdown cells."""
    found = {}
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            found.update(exercises_of(cell.source))
    return found


def check_block(sources: list[str]) -> str:
    """The checks of a solution: its code after the ``# --- checks ---`` line ("" when it has none)."""
    for source in sources:
        lines = source.splitlines()
        for number, line in enumerate(lines):
            if line.strip() == SOLUTION_CHECKS:
                return "\n".join(lines[number + 1:]).strip("\n")
    return ""


def _is_hidden(stmt) -> bool:
    """A statement that is a ``check(..., hidden=True)`` call."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    return (isinstance(call, ast.Call) and (getattr(call.func, "attr", None) or getattr(call.func, "id", None)) == "check"
            and any(k.arg == "hidden" and isinstance(k.value, ast.Constant) and k.value.value is True
                    for k in call.keywords))


def visible_checks(block: str) -> str:
    """A check block without its hidden checks (the students' copy of it): each hidden check's
    lines removed, at any depth (a block left empty holds ``pass``)."""
    if not block.strip():
        return ""
    lines = block.splitlines()
    drop, passes = set(), {}
    for node in ast.walk(ast.parse(block)):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if not isinstance(body, list) or not body or not isinstance(body[0], ast.stmt):
                continue
            hidden = [s for s in body if _is_hidden(s)]
            for s in hidden:
                drop.update(range(s.lineno - 1, s.end_lineno))
            if hidden and len(hidden) == len(body) and not isinstance(node, ast.Module):
                passes[body[0].lineno - 1] = " " * body[0].col_offset + "pass"
    kept = [passes.get(i, line) for i, line in enumerate(lines) if i not in drop or i in passes]
    text = "\n".join(kept).strip("\n")
    return text if text.strip() else ""


def checks(sources: list[str]) -> tuple[list[str], list[str]]:
    """The visible checks of a solution's code cells (one string) and the names they read that the
    solution defines (what the student must produce)."""
    block = visible_checks(check_block(sources))
    if not block:
        return [], []
    defined = set()
    solution = "\n".join(sources)
    try:
        tree = ast.parse(solution)
    except SyntaxError:
        tree = ast.parse("")
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            defined.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined.add(node.name)
    own = {n.id for n in ast.walk(ast.parse(block)) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    used = {n.id for n in ast.walk(ast.parse(block)) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return [block], sorted((used & defined) - own)


def stub_source(label: str, title: str, sources: list[str], names: list[tuple[str, str]] | None = None) -> str:
    """The code of one exercise's stub: each name to produce set to ``...``, then the solution's
    visible checks (which say "not done" while a name is ``...``)."""
    found, read = checks(sources)
    names = list(names or [])
    listed = [n for n, _ in names]
    names += [(n, "") for n in read if n not in listed]  # a name the checks read is always set
    head = [f"# YOUR TURN: exercise {label}" + (f" ({title})" if title else ""),
            "# Compute each name below in place of `...` (the exercise's \"You produce\" list says its type and rules).",
            "# Until you do, the checks at the end say \"not done\" and Run All goes on; a wrong answer is reported."]
    body = [*head]
    for name, what in names:
        body.append(f"{name} = ...")
    body += ["", CHECKS_MARKER]
    body += found or ["# (no check is shown for this one: your instructor's checks grade it)"]
    status = ", ".join(f"{name}={name}" for name, _ in names)
    body.append(f"book.exercise_status({label!r}" + (f", {status})" if status else ")"))
    return "\n".join(body)


def _split_markdown(text: str, inside: bool) -> list[tuple[str, str, bool]]:
    """A Markdown cell's text cut at solution fences: (kind, text, inside) parts, kind being
    ``text``, ``start`` (its text is the label) or ``end``."""
    parts, pos = [], 0
    while True:
        pattern = _END if inside else _START
        m = pattern.search(text, pos)
        if m is None:
            parts.append(("text", text[pos:], inside))
            return parts
        parts.append(("text", text[pos:m.start()], inside))
        if inside:
            parts.append(("end", "", True))
        else:
            parts.append(("start", m.group("arg").strip(), False))
        inside = not inside
        pos = m.end()


def students_notebook(nb):
    """``nb`` (a chapter read by jupytext) with each solution replaced by its stub cells."""
    import nbformat

    exercises = _exercise_titles(nb)
    cells, inside, label, code = [], False, None, []

    def keep_markdown(text: str) -> None:
        if text.strip():
            cells.append(nbformat.v4.new_markdown_cell(text.strip("\n")))

    for cell in nb.cells:
        if cell.cell_type != "markdown":
            if inside:
                if cell.cell_type == "code":
                    code.append(cell.source)
            else:
                cells.append(cell)
            continue
        for kind, text, was_inside in _split_markdown(cell.source, inside):
            if kind == "text" and not was_inside:
                keep_markdown(text)
            elif kind == "start":
                inside, label, code = True, text, []
            elif kind == "end":
                exercise = exercises.get(label, {})
                title = exercise.get("title", "")
                cells.append(nbformat.v4.new_markdown_cell(
                    f"**{YOUR_TURN}** — exercise `{label}`" + (f", *{title}*" if title else "") + ": "
                    + ("write your code in the cell below, then write your explanation here."
                       if code else "write your answer here."),
                    metadata={"tags": [STUB_TAG]}))
                if code:
                    cells.append(nbformat.v4.new_code_cell(
                        stub_source(label, title, code, exercise.get("names")),
                        metadata={"tags": [STUB_TAG], EXERCISE_KEY: label}))
                inside, label, code = False, None, []
    if inside:
        raise ValueError(f"solution {label!r} has no solution-end")
    out = nbformat.v4.new_notebook(metadata=nb.metadata)
    params = [i for i, c in enumerate(cells) if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])]
    cells.insert(params[0] + 1 if params else 0, nbformat.v4.new_code_cell(CHECKS_SETUP, metadata={"tags": [CHECKS_TAG]}))
    cells.append(nbformat.v4.new_code_cell(CHECKS_SUMMARY, metadata={"tags": [CHECKS_TAG]}))
    out.cells = cells
    return out


#: The students' notebook's cell after the parameters: checks report, and Run All goes on.
CHECKS_SETUP = ("# Your answers' checks: a wrong answer is reported (with what was expected and what was found)\n"
                "# and Run All goes on; an answer still `...` is \"not done\". The book's own build stops instead.\n"
                "from mbutils import book\n"
                "book.check_mode(\"report\")")
#: The students' notebook's last cell: each exercise's state.
CHECKS_SUMMARY = ("# Your exercises so far: how many checks passed, failed or are not done.\n"
                  "book.check_summary()")


def write_notebooks(copy: str, out: str | Path, chapters: list[str] | None = None) -> tuple[list[Path], Path]:
    """Write one notebook per computing chapter (``copy``: ``students`` or ``instructors``) into
    ``out`` and a zip of them beside; returns (notebooks, zip)."""
    import nbformat

    from mbutils.publish.chapters import read_chapter
    from mbutils.publish.publish import launch_notebook

    if copy not in ZIP_NAMES:
        raise ValueError(f"notebooks are written for the students' or instructors' copy, not {copy!r}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in chapters or computing_chapters():
        nb = read_chapter(name)
        if copy == "students":
            nb = students_notebook(nb)
        nb = launch_notebook(nb)
        nb.metadata["mbutils"] = {"chapter": name, "copy": copy}  # the grader reads which chapter it answers
        path = out / f"{name}.ipynb"
        tmp = path.with_name(f".{path.name}.tmp")
        nbformat.write(nb, tmp)
        os.replace(tmp, path)
        written.append(path)
    archive = out / ZIP_NAMES[copy]
    tmp = archive.with_name(f".{archive.name}.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in written:
            zf.write(path, f"{copy}-notebooks/{path.name}")
    os.replace(tmp, archive)
    return written, archive

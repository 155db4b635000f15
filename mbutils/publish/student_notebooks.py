"""The chapters as notebooks to hand out: students' (solutions replaced by stubs) or instructors'.

Why: the students' HTML copy shows no solutions, but students work in notebooks. A students'
notebook is its chapter's ``.ipynb`` with every gated solution (``{solution-start}`` to
``{solution-end}``: its text and code cells) replaced by two cells: a "your turn" note and a
code stub. The stub holds ``...`` where the student's code goes, then a ``raise`` that stops
the notebook with a clear "Your turn" error, then the checks the book's solution passes (its
statements that ``assert``), so a student who writes the code and deletes the ``raise`` line
learns at once whether the answer is the library's number. A stub never computes a number of
its own, so nothing wrong can be read off it. An instructors' notebook is the chapter as it is.

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
#: The error a stub raises: every stub's message starts with it.
YOUR_TURN = "Your turn"
#: The folder of the built HTML that holds the notebooks (the students' pages link into it).
NOTEBOOK_FOLDER = "notebooks"
#: The line of a stub after which come the solution's checks (shown to the student on purpose).
CHECKS_MARKER = "# --- the checks your answer must pass ---"
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


def _exercise_titles(nb) -> dict[str, str]:
    """label -> title of every exercise of a notebook's Markdown cells."""
    titles = {}
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for m in _EXERCISE.finditer(cell.source):
            label = re.search(r"^:label:\s*(\S+)", m.group("body"), re.M)
            if label:
                titles[label.group(1)] = m.group("title").strip()
    return titles


def _is_check(stmt) -> bool:
    """An ``assert``, or control flow (``if``, ``for``, ``while``, ``with``) around checks only."""
    if isinstance(stmt, ast.Assert):
        return True
    if isinstance(stmt, (ast.If, ast.For, ast.While, ast.With)):
        inner = [*stmt.body, *getattr(stmt, "orelse", [])]
        return all(_is_check(s) or isinstance(s, ast.Pass) for s in inner)
    return False


def _find_checks(body, source: str, found: list) -> None:
    for stmt in body:
        if _is_check(stmt):
            found.append(textwrap.dedent(ast.get_source_segment(source, stmt, padded=True)))
        elif any(isinstance(n, ast.Assert) for n in ast.walk(stmt)):
            for field in ("body", "orelse", "finalbody", "handlers"):
                _find_checks(getattr(stmt, field, []) or [], source, found)


def checks(sources: list[str]) -> tuple[list[str], list[str]]:
    """The checks of a solution's code cells and the names they need that the solution defines.

    A check is a statement of asserts only (an ``if`` or ``for`` around asserts included), found
    at any depth; the code around it (the solution) is left out."""
    found, defined = [], set()
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                defined.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                defined.add(node.name)
        _find_checks(tree.body, source, found)
    used = {n.id for text in found for n in ast.walk(ast.parse(text))
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return found, sorted(used & defined)


def stub_source(label: str, title: str, sources: list[str]) -> str:
    """The code of one exercise's stub: ``...``, the "your turn" raise, then the solution's checks."""
    found, names = checks(sources)
    head = [f"# YOUR TURN: exercise {label}" + (f" ({title})" if title else ""),
            "# Write your code in place of `...`, then delete the `raise` line and run this cell."]
    if found:
        head.append("# The checks below are the ones the book's solution passes"
                    + (f"; they read: {', '.join(names)}." if names else "."))
    message = (f"{YOUR_TURN}: exercise {label} is yours to solve. Write your code in this cell in place of "
               "`...`, then delete this raise line to run the checks.")
    body = [*head, "...", f"raise NotImplementedError({message!r})"]
    if found:
        body += ["", CHECKS_MARKER, *found]
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

    titles = _exercise_titles(nb)
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
                title = titles.get(label, "")
                cells.append(nbformat.v4.new_markdown_cell(
                    f"**Your turn** — exercise `{label}`" + (f", *{title}*" if title else "") + ": "
                    + ("write your code in the cell below." if code else "write your answer here."),
                    metadata={"tags": [STUB_TAG]}))
                if code:
                    cells.append(nbformat.v4.new_code_cell(stub_source(label, title, code),
                                                           metadata={"tags": [STUB_TAG]}))
                inside, label, code = False, None, []
    if inside:
        raise ValueError(f"solution {label!r} has no solution-end")
    out = nbformat.v4.new_notebook(metadata=nb.metadata)
    out.cells = cells
    return out


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

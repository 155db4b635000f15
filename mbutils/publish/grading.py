"""Grade a folder of submitted students' notebooks into a table: ``python -m mbutils book --grade DIR``.

Why our own grader, on top of the exercises' named checks (:func:`mbutils.book.exercises.check`),
rather than otter-grader or nbgrader: both install here beside the pinned Jupyter stack, but both
bring ipywidgets (with it, ``tqdm.auto`` in the chapters' kernels draws widget progress bars instead
of text, which the book's pages would carry), nbgrader a Jupyter server, JupyterLab and a course
database, and otter-grader's ``grade`` runs each submission in a Docker image of its own. Neither
runs a papermill-parameterised chapter with the book's profiles and data path, which is what a
submission is: a chapter notebook. The format is otter's in spirit: named checks with messages,
the public ones in the students' notebooks, the hidden ones only in the instructors' copy (the
chapters' solutions), and one command that grades a folder.

How a submission is graded. Its chapter is read from the notebook's metadata (``mbutils.chapter``,
written by :func:`mbutils.publish.student_notebooks.write_notebooks`), else from its file name. The
notebook is executed as submitted, with every error allowed (a student's broken cell does not stop
the rest), and after each exercise's answer cell (the stub the student filled, found by its
metadata or its first line) the grader runs that exercise's checks from the chapter's own source,
hidden ones included, inside ``book.grading(label)``: so a check the student deleted or edited still
runs, and a name never set is the exercise's error, not the notebook's. Each check appends a record
to a log (``$MBUTILS_CHECKS_LOG``); an exercise is *passed* when all its checks pass, *failed* when
one fails, *not done* when a name is still ``...``, *error* when its checks could not run, and
*missing* when the submission has no answer cell for it. A passed exercise scores one point.
"""

from __future__ import annotations

import json
import re
import tempfile
import textwrap
from pathlib import Path

import pandas as pd

from mbutils.base.errors import MbutilsError
from mbutils.data.datapath import data_environment
from mbutils.publish.chapters import temporary_environment
from mbutils.publish.student_notebooks import EXERCISE_KEY, check_block, exercises_of

#: The states of an exercise in the grades table, best first.
STATES = ("passed", "failed", "not done", "error", "missing")
#: Tag of the cells the grader adds to a submission.
GRADING_TAG = "grading"
_STUB_LINE = re.compile(r"^# YOUR TURN: exercise (\S+)", re.M)
_SOLUTION = re.compile(r"^```\{solution-start\}[ \t]*(\S+)[^\n]*\n.*?^```\{solution-end\}", re.M | re.S)
_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)


def chapter_checks(chapter: str) -> dict[str, str]:
    """label -> the full check block (hidden checks included) of each exercise of a chapter, read from
    its source (the instructors' copy)."""
    from mbutils.publish.chapters import chapter_path

    text = chapter_path(chapter).read_text(encoding="utf-8")
    found = {}
    for m in _SOLUTION.finditer(text):
        sources = ["\n".join(line for line in cell.splitlines() if not re.match(r"\s*:\w+:", line))
                   for cell in _CELL.findall(m.group(0))]
        found[m.group(1)] = check_block(sources)
    return found


def _stub_label(cell) -> str | None:
    if cell.cell_type != "code":
        return None
    label = cell.metadata.get(EXERCISE_KEY)
    if label:
        return label
    m = _STUB_LINE.search(cell.source)
    return m.group(1) if m else None


def grading_cell_source(label: str, block: str) -> str:
    """The cell the grader runs after an answer: the exercise's checks inside ``book.grading``."""
    body = textwrap.indent(block, "    ") if block.strip() else "    pass"
    return f"from mbutils import book\nwith book.grading({label!r}):\n{body}"


def grading_notebook(nb, chapter: str):
    """``nb`` (a submission) with report mode set first and the grader's cell after each answer;
    returns (notebook, labels answered)."""
    import nbformat

    checks = chapter_checks(chapter)
    cells, answered = [], []
    for cell in nb.cells:
        cells.append(cell)
        label = _stub_label(cell)
        if label in checks and label not in answered:
            answered.append(label)
            cells.append(nbformat.v4.new_code_cell(grading_cell_source(label, checks[label]),
                                                   metadata={"tags": [GRADING_TAG]}))
    params = [i for i, c in enumerate(cells) if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])]
    cells.insert(params[0] + 1 if params else 0, nbformat.v4.new_code_cell(
        'from mbutils import book\nbook.check_mode("report")', metadata={"tags": [GRADING_TAG]}))
    out = nbformat.v4.new_notebook(metadata=nb.metadata)
    out.cells = cells
    return out, answered


def submission_chapter(path: Path, nb) -> str | None:
    """The chapter a submitted notebook answers: its metadata's, else its file name's (or None)."""
    from mbutils.publish.chapters import chapter_names

    meta = nb.metadata.get("mbutils", {})
    if isinstance(meta, dict) and meta.get("chapter"):
        return str(meta["chapter"])
    names = chapter_names()
    if path.stem in names:
        return path.stem
    ends = [n for n in names if path.stem.endswith(f"_{n}") or path.stem.endswith(f"-{n}")]
    return max(ends, key=len) if ends else None


def grade_notebook(path: str | Path, *, params: dict | None = None, profile: str | None = None,
                   timeout: int | None = None, keep: str | Path | None = None) -> tuple[str, dict[str, str], list[dict]]:
    """Execute one submission with its grader's cells; returns (chapter, label -> state, check records).
    ``keep``: a folder where the executed notebook is written."""
    import nbformat
    from nbclient import NotebookClient

    from mbutils.publish.chapters import chapter_path

    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    chapter = submission_chapter(path, nb)
    if chapter is None:
        raise MbutilsError(f"{path}: cannot tell which chapter this notebook answers (no mbutils metadata, and its "
                           "name is no chapter's)")
    labels = [label for label, ex in exercises_of(chapter_path(chapter).read_text(encoding="utf-8")).items()]
    graded, answered = grading_notebook(nb, chapter)
    if params:
        graded = with_parameters(graded, {k: _value(v) for k, v in params.items()})
    with tempfile.TemporaryDirectory(prefix="mbutils-grade-") as tmp:
        log = Path(tmp) / "checks.jsonl"
        env = {**data_environment(), "MBUTILS_CHECKS_LOG": str(log), **({"MBUTILS_PROFILE": profile} if profile else {})}
        env.pop("MBUTILS_CHECKS_MUTATE", None)
        with temporary_environment(env):
            client = NotebookClient(graded, timeout=timeout, kernel_name="python3", allow_errors=True,
                                    resources={"metadata": {"path": str(chapter_path(chapter).parent)}})
            try:
                client.execute()
                died = None
            except Exception as err:  # a dead kernel or a timeout: every exercise not graded yet is an error
                died = f"{type(err).__name__}: {err}"
        records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []
    if keep is not None:
        Path(keep).mkdir(parents=True, exist_ok=True)
        nbformat.write(graded, Path(keep) / path.name)
    mine = [r for r in records if r.get("grading")]
    states = {}
    for label in labels:
        rs = [r for r in mine if r["grading"] == label]
        statuses = {r["status"] for r in rs}
        if label not in answered:
            states[label] = "missing"
        elif "error" in statuses or (not rs and died):
            states[label] = "error"
        elif "failed" in statuses:
            states[label] = "failed"
        elif "not done" in statuses or not rs:
            states[label] = "not done"
        else:
            states[label] = "passed"
    if died:
        records.append({"label": "", "name": "", "grading": "", "status": "error", "message": died})
    return chapter, states, records


def with_parameters(nb, values: dict):
    """``nb`` with a cell assigning ``values`` after its parameters cell (papermill's injection, by hand)."""
    import nbformat

    source = "# Parameters of the grading run\n" + "\n".join(f"{key} = {value!r}" for key, value in values.items())
    cell = nbformat.v4.new_code_cell(source, metadata={"tags": ["injected-parameters", GRADING_TAG]})
    params = [i for i, c in enumerate(nb.cells)
              if c.cell_type == "code" and "parameters" in c.get("metadata", {}).get("tags", [])]
    nb.cells.insert(params[0] + 1 if params else 0, cell)
    return nb


def _value(text):
    from mbutils.publish.chapters import parse_value

    return parse_value(text) if isinstance(text, str) else text


def submissions(folder: str | Path) -> list[Path]:
    """The notebooks of a folder of submissions (any depth; checkpoints left out), sorted."""
    folder = Path(folder)
    if not folder.is_dir():
        raise MbutilsError(f"--grade {folder}: no such folder")
    return sorted(p for p in folder.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def grade_folder(folder: str | Path, *, params: dict | None = None, profile: str | None = None,
                 timeout: int | None = None, keep: str | Path | None = None, progress=None):
    """Grade every notebook of ``folder``; returns (table, details): the table has one row per
    submission (its path in the folder, without ``.ipynb``), its chapter, one column per exercise
    with its state, and the score ("3/4": exercises passed of all); the details one row per check
    (submission, exercise, name, hidden, status, message)."""
    folder = Path(folder)
    rows, details = [], []
    for path in submissions(folder):
        who = path.relative_to(folder).with_suffix("").as_posix()
        if progress:
            progress(f"grading {who}")
        try:
            chapter, states, records = grade_notebook(path, params=params, profile=profile, timeout=timeout,
                                                      keep=None if keep is None else Path(keep) / path.parent.relative_to(folder))
        except MbutilsError as err:
            rows.append({"submission": who, "chapter": None, "score": "0/0", "note": str(err)})
            continue
        passed = sum(s == "passed" for s in states.values())
        rows.append({"submission": who, "chapter": chapter, **states, "score": f"{passed}/{len(states)}"})
        for r in records:
            if r.get("grading") or r.get("status") == "error":
                details.append({"submission": who, "exercise": r.get("label", ""), "name": r.get("name", ""),
                                "hidden": bool(r.get("hidden")), "status": r["status"],
                                "message": r.get("message", "")})
    table = pd.DataFrame(rows)
    front = ["submission", "chapter"]
    table = table[front + [c for c in table.columns if c not in front + ["score", "note"]]
                  + ["score"] + (["note"] if "note" in table else [])] if len(table) else table
    return table, pd.DataFrame(details, columns=["submission", "exercise", "name", "hidden", "status", "message"])

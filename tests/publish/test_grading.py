"""Grading a folder of submitted students' notebooks (mbutils/publish/grading.py, ``mbutils book --grade``):
three submissions of the measures chapter, one right, one wrong, one empty, give the expected table; and the
grader's pieces on a constructed notebook (issue 64)."""

from __future__ import annotations

import re

import nbformat
import pandas as pd
import pytest

from mbutils.cli import main
from mbutils.publish.chapters import chapter_path
from mbutils.publish.grading import chapter_checks, grading_cell_source, grading_notebook, submission_chapter
from mbutils.publish.student_notebooks import STUB_TAG, write_notebooks
from test_chapters import params_for

_SOLUTION = re.compile(r"^```\{solution-start\}[ \t]*(\S+)[^\n]*\n.*?^```\{solution-end\}", re.M | re.S)
_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)


def _solutions(chapter: str) -> dict[str, str]:
    """label -> the book's solution code of each exercise (what a right submission writes)."""
    text = chapter_path(chapter).read_text(encoding="utf-8")
    return {m.group(1): "\n".join("\n".join(line for line in cell.splitlines() if not re.match(r"\s*:\w+:", line))
                                  for cell in _CELL.findall(m.group(0)))
            for m in _SOLUTION.finditer(text)}


def _answered(nb, answers: dict[str, str]):
    for cell in nb.cells:
        label = cell.metadata.get("mbutils_exercise")
        if cell.cell_type == "code" and STUB_TAG in cell.metadata.get("tags", []) and label in answers:
            cell.source = answers[label]
    return nb


def test_the_grader_runs_every_check_after_each_answer_hidden_ones_too(tmp_path):
    checks = chapter_checks("measures")
    assert "hidden=True" in checks["ex-measures-tau-by-hand"] and "hidden=True" in checks["q-measures-tau"]
    source = grading_cell_source("q-measures-tau", checks["q-measures-tau"])
    compile(source, "grading", "exec")
    assert source.startswith("from mbutils import book\nwith book.grading('q-measures-tau'):\n    ")
    written, _ = write_notebooks("students", tmp_path, ["measures"])
    nb = nbformat.read(written[0], as_version=4)
    graded, answered = grading_notebook(nb, "measures")
    assert answered == list(dict.fromkeys(c.metadata["mbutils_exercise"] for c in nb.cells
                                          if "mbutils_exercise" in c.metadata))
    assert len(graded.cells) == len(nb.cells) + len(answered) + 1
    assert submission_chapter(written[0], nb) == "measures"


def test_grading_three_submissions_gives_the_expected_table(tmp_path, capsys):
    """One right (the book's solutions), one wrong (one exercise and one question off), one empty (the stubs as
    handed out), graded through the command line; quick profile, the synthetic runs' small parameters."""
    written, _ = write_notebooks("students", tmp_path / "handed-out", ["measures"])
    handed = nbformat.read(written[0], as_version=4)
    right = _solutions("measures")
    wrong = {**right, "ex-measures-tau-by-hand": right["ex-measures-tau-by-hand"].replace(
        "# --- checks ---", "tau_mean = tau_mean + 0.01  # a slip\n# --- checks ---"),
        "q-measures-tau": right["q-measures-tau"].replace('q_measures_tau = "B"', 'q_measures_tau = "A"')}
    assert wrong["q-measures-tau"] != right["q-measures-tau"]
    folder = tmp_path / "submissions"
    for who, answers in (("right", right), ("wrong", wrong), ("empty", {})):
        (folder / who).mkdir(parents=True)
        nbformat.write(_answered(nbformat.from_dict(handed), answers), folder / who / "measures.ipynb")
    params = [arg for key, value in params_for("measures").items() for arg in ("-p", key, str(value))]
    table_csv = tmp_path / "grades.csv"
    assert main(["book", "--grade", str(folder), "--table", str(table_csv), "--profile", "quick", *params]) == 0
    printed = capsys.readouterr().out
    table = pd.read_csv(table_csv).set_index("submission")
    labels = [c for c in table.columns if c.startswith(("ex-", "q-"))]
    assert set(labels) == set(right) and len(labels) == 6
    assert (table.loc["right/measures", labels] == "passed").all(), table.loc["right/measures"].to_dict()
    assert table.loc["right/measures", "score"] == "6/6"
    wrong_row = table.loc["wrong/measures", labels]
    assert set(wrong_row[wrong_row != "passed"].index) == {"ex-measures-tau-by-hand", "q-measures-tau"}
    assert (wrong_row[["ex-measures-tau-by-hand", "q-measures-tau"]] == "failed").all()
    assert table.loc["wrong/measures", "score"] == "4/6"
    assert (table.loc["empty/measures", labels] == "not done").all()
    assert table.loc["empty/measures", "score"] == "0/6"
    assert "wrong/measures" in printed and "not done" in printed
    details = pd.read_csv(tmp_path / "grades-checks.csv")
    slip = details[(details["submission"] == "wrong/measures") & (details["status"] == "failed")]
    assert any("tau_mean — expected" in m and "found" in m for m in slip["message"])
    assert slip["hidden"].any(), "the question's answer is a hidden check, run by the grader"


def test_grade_refuses_a_folder_without_notebooks_and_options_without_grade(tmp_path, capsys):
    assert main(["book", "--grade", str(tmp_path)]) != 0
    assert "no notebook" in capsys.readouterr().err
    assert main(["book", "--table", str(tmp_path / "x.csv")]) != 0

"""The chapters' exercises (issue 14): every chapter's Exercises section has at least two
exercises with a solution each; a solution's assertion really guards the chapter run; and a
reader's own selector, written against the public API, runs through run_experiment and
mdad_table like a built-in one.
"""

from __future__ import annotations

import os
import re
import shutil

import numpy as np
import pytest

from conftest import REPO
from helpers import random_benchmark
from mbutils.evaluate import metrics
from mbutils.publish.chapters import ChapterError, chapter_names, chapter_path, run_chapter
from mbutils.methods.experiment import run_experiment
from mbutils.methods.protocol import Protocol
from mbutils.methods.selectors import MicroBenchmark, Selector, selector_names

#: Chapters without exercises: none. The set is asserted to be exact, so a new chapter must
#: come with its exercises (or be listed here, visibly).
WITHOUT_EXERCISES: set[str] = set()

EXERCISE = re.compile(r"^```\{exercise\}[^\n]*\n:label: (\S+)", re.M)
SOLUTION = re.compile(r"^```\{solution-start\} (\S+)\n:class: dropdown\n```\n\n(?:(?!```\{solution-end\}).)*?"
                      r"```\{code-cell\}\n(?:(?!```\{solution-end\}).)*?```\{solution-end\}\n```", re.M | re.S)


def _exercises(chapter: str) -> tuple[list[str], list[str]]:
    text = chapter_path(chapter).read_text(encoding="utf-8")
    return EXERCISE.findall(text), SOLUTION.findall(text)


@pytest.mark.parametrize("chapter", [c for c in chapter_names() if c not in WITHOUT_EXERCISES])
def test_a_chapter_with_exercises_has_two_with_solutions(chapter):
    text = chapter_path(chapter).read_text(encoding="utf-8")
    exercises, solutions = _exercises(chapter)
    assert len(exercises) >= 2, f"{chapter}: fewer than two exercises"
    assert sorted(solutions) == sorted(exercises), f"{chapter}: each exercise needs one folded solution with code"
    assert "\n## " not in text[text.index("\n## Exercises") + 1:], f"{chapter}: the Exercises section must come last"


def test_without_exercises_list_is_current():
    missing = {c for c in chapter_names() if not _exercises(c)[0]}
    assert missing == WITHOUT_EXERCISES


def test_labels_are_unique_and_the_teaching_page_references_them():
    labels = [label for c in chapter_names() for label in _exercises(c)[0]]
    assert len(labels) == len(set(labels))
    teaching = (REPO / "chapters" / "teaching.md").read_text(encoding="utf-8")
    assert set(re.findall(r"\{ref\}`((?:ex|q)-[^`]+)`", teaching)) == set(labels)  # exercises and questions
    assert "chapters/teaching" in (REPO / "_toc.yml").read_text(encoding="utf-8")
    assert "sphinx_exercise" in (REPO / "_config.yml").read_text(encoding="utf-8")


def test_a_broken_solution_fails_the_chapter(tmp_path):
    copy = tmp_path / "sel_random.md"
    text = chapter_path("sel_random").read_text(encoding="utf-8")
    good = 'assert set(own_res["selector"]) == {"random", EasinessStrata.name}'
    assert good in text
    copy.write_text(text.replace(good, 'assert set(own_res["selector"]) == {"random"}'), encoding="utf-8")
    os.environ.setdefault("MBUTILS_JOBS", "1")
    params = {"data": "synthetic-gpqa", "picture_data": "synthetic-gpqa",
              "picture_k": 10, "runs": 2, "sizes": "10,25", "sources": 60, "targets": 12, "seed": 0}
    with pytest.raises(ChapterError, match="AssertionError"):
        run_chapter(copy, params, tmp_path / "out", profile="quick")
    shutil.rmtree(tmp_path / "out", ignore_errors=True)


class _EveryOther(Selector):
    """A reader's selector: k evenly spaced items of the easiness ranking."""

    name = "test_every_other"

    def select(self, prepared, k, rng):
        self.check_size(k, prepared.n_items)
        order = np.argsort(prepared.proxy.mean(axis=0), kind="stable")
        items = order[np.linspace(0, prepared.n_items - 1, k).round().astype(int)]
        return MicroBenchmark(np.sort(items), np.full(k, 1.0 / k))


def test_a_readers_selector_runs_through_run_experiment_and_mdad_table():
    bench = random_benchmark(n_models=40)
    res = run_experiment(bench, ["random", _EveryOther()], [5, 10], Protocol(n_sources=20, n_targets=10, n_runs=2),
                         use_cache=False, progress=False)
    assert set(res["selector"]) == {"random", _EveryOther.name}
    assert _EveryOther.name not in selector_names()  # an object needs no registration
    table = metrics.mdad_table(res)
    assert set(table["selector"]) == {"random", _EveryOther.name}
    assert len(table) == 4

"""Every chapter finishes, through papermill, on every shape of bundle a reader may bring.

The shapes are generated here (not shipped): a tiny pool (8 models x 40 items, one
subtask), a wide one (14 models x 5,000 items, 50 subtasks), one whose every name is markup
and which has confidences and target sets, and one with empty cells (loaded with a drop
option) whose seen half is smaller than some of the sizes asked for. Each chapter gets
``-p data FOLDER`` and tiny run counts: the point is that no section crashes — sections the
data cannot support show a note instead — not the numbers. Two hard conditions share a shape
where they are independent, so that every chapter runs four times, not six; the tests read
the executed notebooks only, so no HTML page is rendered.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest

from chapter_batch import ChapterBatch
from conftest import session_env, stopped_with_the_session
from helpers import random_benchmark
from mbutils.data.bundle import load_bundle, save_bundle
from mbutils.publish.chapters import chapter_names, chapter_parameters

TINY_RUN = {"runs": 1, "sizes": "5,10", "seed": 0}


def _blank_cells(folder):
    """Empty cells for two models in ``responses.csv``: the bundle loads only with a drop option."""
    path = folder / "responses.csv"
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    table.iloc[1, 1:8] = ""
    table.iloc[4, 11:13] = ""
    table.to_csv(path, index=False)
    return folder


HOSTILE = ("<img src=x onerror=alert(1)>", "<script>alert(2)</script>", "*star* _under_ [link](x)",
           "{ref}`nope`", "$\\frac{1}{$", "a|b", "<svg onload=alert(3)>")


def _hostile_names():
    """Every name of the bundle is markup of some kind: HTML, Markdown, a MyST role, mathtext, a
    pipe; it has confidences (for the confidence-reading selectors) and a target set."""
    bench = random_benchmark(n_models=30, subtask_sizes=(60, 30, 30), seed=6, confidence=True, name="hostile")
    models = [f"{HOSTILE[i % len(HOSTILE)]} m{i}" for i in range(bench.n_models)]
    items = [f"{HOSTILE[j % len(HOSTILE)]} q{j}" for j in range(bench.n_items)]
    subtasks = np.select([np.asarray(bench.subtasks) == "s0", np.asarray(bench.subtasks) == "s1"],
                         [HOSTILE[0], HOSTILE[4]], HOSTILE[2])
    return type(bench)(name="hostile", correct=bench.correct, confidence=bench.confidence, models=models,
                       items=items, subtasks=subtasks, target_sets={"first_five": models[:5]})


SHAPES = {
    "tiny": lambda: random_benchmark(n_models=8, subtask_sizes=(40,), seed=1, name="tiny"),
    "wide": lambda: random_benchmark(n_models=14, subtask_sizes=(100,) * 50, seed=2, name="wide"),
    "hostile": _hostile_names,
    # empty cells for two models, and a seen half (4 + 3 = 7 items) smaller than the sizes asked for
    "missing-small-seen": lambda: random_benchmark(n_models=24, subtask_sizes=(9, 7), seed=5,
                                                   name="missing-small-seen"),
}
HOLES = "missing-small-seen"
SIZES = {"missing-small-seen": "5,10,25"}


def shape_params(chapter: str, shape: str, folder: str) -> dict:
    """``data`` = the bundle, tiny runs, and the drop option where the bundle has holes."""
    known = chapter_parameters(chapter)
    params = {"data": folder}
    for key, value in {**TINY_RUN, "sizes": SIZES.get(shape, TINY_RUN["sizes"])}.items():
        if key in known:
            params[key] = value
    if shape == HOLES and "missing" in known:
        params["missing"] = "drop_models"
    # one held-out set and one protocol run per card: use_micro's coverage check on the wide shape
    # took 32 s with the profile's plan (12 builds on 5,000 items), and the shapes check it runs, not its numbers
    for key, value in {"source_runs": 1, "picture_k": 5, "per_subtask_count": 2, "folds": 1, "card_runs": 1}.items():
        if key in known:
            params[key] = value
    return params


SHAPE_CHAPTERS = [c for c in chapter_names() if "data" in chapter_parameters(c)]
CASES = [(c, s) for c in SHAPE_CHAPTERS for s in SHAPES]
#: shape_runs' entry for what the runs left in the temporary folder
LEFT = "left in the temporary folder"


_STARTED: dict = {}


def start_in_background(tmp_path_factory, items) -> dict:
    """Start the shape runs of the chapters this session selected (``-k bench_gpqa`` runs five, not
    all), niced, in a background process; conftest calls this with the session's first test.
    Returns {"batch": ChapterBatch, "scratch": the kernels' temporary folder} (empty when no selected
    test reads the runs)."""
    if not _STARTED and any("shape_runs" in item.fixturenames for item in items):
        selected = {item.callspec.params.get("chapter") for item in items if hasattr(item, "callspec")}
        cases = [c for c in CASES if c[0] in selected]
        root = tmp_path_factory.mktemp("shapes")
        folders = {s: save_bundle(make(), root / "bundles" / s) for s, make in SHAPES.items()}
        folders = {s: str(_blank_cells(f) if s == HOLES else f) for s, f in folders.items()}
        # the kernels' temporary folder is one of this session's own, so that what they leave is theirs
        scratch = root / "tmp"
        scratch.mkdir()
        env = session_env(MBUTILS_JOBS="1", MBUTILS_PROFILE="quick", TMPDIR=str(scratch))
        runs = [(case, case[0], shape_params(*case, folders[case[1]]), root / case[1], False) for case in cases]
        batch = ChapterBatch(runs, env, root / "batch", timeout=600)
        _STARTED.update(batch=stopped_with_the_session(batch), scratch=scratch)
    return _STARTED


@pytest.fixture(scope="session")
def shape_runs(tmp_path_factory, request):
    """(chapter, shape) -> executed notebook, or the exception; two chapters at a time, in the
    background from the session's first test on (:func:`start_in_background`)."""
    started = start_in_background(tmp_path_factory, request.session.items)
    os.environ.update({"MBUTILS_JOBS": "1", "MBUTILS_PROFILE": "quick"})  # as the runs had it, for the tests
    results = {case: nbformat.read(path, as_version=4) if isinstance(path, Path) else path
               for case, path in started["batch"].results().items()}
    return {**results, LEFT: sorted(started["scratch"].glob("mbutils-*"))}


#: Chapters that show the package's own shipped files whatever the reader's data (no data parameter).
WITHOUT_DATA = {"micro_shipped"}


def test_every_chapter_takes_a_data_parameter():
    assert set(SHAPE_CHAPTERS) == set(chapter_names()) - WITHOUT_DATA


def test_the_holed_shape_really_has_holes_and_a_small_seen_half(tmp_path):
    folder = _blank_cells(save_bundle(SHAPES[HOLES](), tmp_path / "m"))
    with pytest.raises(Exception, match="missing|empty"):
        load_bundle(str(folder))
    bench = load_bundle(str(folder), missing="drop_models")
    assert bench.n_models == 22 and bench.n_items == 16  # a seen half of 4 + 3 items, below the sizes 10 and 25


def test_the_hostile_shape_has_confidences_and_a_target_set():
    bench = SHAPES["hostile"]()
    assert bench.confidence is not None and bench.confidence.shape == bench.correct.shape
    assert set(bench.target_sets) == {"first_five"} and len(set(bench.subtasks)) == 3


@pytest.mark.parametrize("chapter,shape", CASES, ids=[f"{c}-{s}" for c, s in CASES])
def test_chapter_finishes_on_shape(shape_runs, chapter, shape):
    nb = shape_runs[(chapter, shape)]
    if isinstance(nb, Exception):
        raise nb
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    stderr = [o["text"] for c in nb.cells for o in c.get("outputs", [])
              if o.get("output_type") == "stream" and o.get("name") == "stderr"]
    assert not stderr, f"{chapter} on {shape} wrote to stderr: {stderr[:2]}"


LIVE = re.compile(r"<(?:script|svg|img[^>]*onerror)", re.I)


@pytest.mark.parametrize("chapter", SHAPE_CHAPTERS)
def test_no_name_from_the_data_is_live_markup_in_a_page(shape_runs, chapter):
    """On the bundle whose every name is markup, the page's outputs hold the names as text only."""
    nb = shape_runs[(chapter, "hostile")]
    if isinstance(nb, Exception):
        raise nb
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            for kind in ("text/html", "text/markdown"):
                text = data.get(kind, "")
                text = "".join(text) if isinstance(text, list) else text
                # the book's own figures: <img src="data:..." alt="(escaped caption)" ...>; html.escape turns any
                # '>' or '"' of a name into an entity, so the tag ends at its first '>'
                text = re.sub(r'<img src="data:image/png;base64,[^"]*"[^>]*>', "", text)
                assert not LIVE.search(text), f"{chapter}: live markup in a {kind} output: {LIVE.search(text)[0]}"


def test_chapter_runs_leave_no_scratch_folder(shape_runs):
    """A chapter's scratch files (use_micro's folders and answer files, the coverage checks' builds) go
    when its kernel ends: the runs leave no ``mbutils-*`` folder in their kernels' temporary folder."""
    assert not shape_runs[LEFT], f"left behind: {[p.name for p in shape_runs[LEFT]]}"

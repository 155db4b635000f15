"""The book as a user gets it: a copy of the repository with nothing beside it.

The copy holds exactly the files git would hand a user (tracked, plus new files not
ignored), in a temporary folder with no ``shared/`` next to it, and runs with that copy's
``mbutils`` first on the path and no ``MBUTILS_DATA``: the real bundles must come from its
own ``data/``. A second copy hides the real BBH bundle and builds the front page and the
BBH chapter, which must then say "stand-in" and never name the bundle that is not there.
"""

from __future__ import annotations

import json
from html import unescape
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from chapter_batch import CommandBatch
from conftest import REPO, session_env, stopped_with_the_session

PY = sys.executable
JUPYTER_BOOK = Path(PY).parent / "jupyter-book"


def user_copy(dest: Path, *, without: tuple[str, ...] = ()) -> Path:
    """The repository's files as a clone has them, in ``dest`` (minus the paths ``without``)."""
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():  # a tracked file deleted in the work tree is not copied
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    for name in without:
        shutil.rmtree(dest / name)
    assert not (dest.parent / "shared").exists() and not (dest / ".." / "shared").exists()
    return dest


def user_env(copy: Path, cache: Path, base: dict | None = None) -> dict:
    """``base`` (default: the current environment) as a user of ``copy`` has it."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if k != "MBUTILS_DATA"}
    env.update(PYTHONPATH=str(copy), MBUTILS_CACHE=str(cache), MBUTILS_PROFILE="quick", MBUTILS_JOBS="1")
    return env


def html_outputs(notebook: Path) -> str:
    nb = nbformat.read(notebook, as_version=4)
    return "\n".join(o.get("data", {}).get("text/html", "") for c in nb.cells if c.cell_type == "code"
                     for o in c.get("outputs", []))


def visible_text(html: str) -> str:
    """The words of a page (scripts, styles and tags removed)."""
    html = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", html)
    return re.sub(r"\s+", " ", unescape(re.sub(r"(?s)<[^>]+>", " ", html)))


SMALL = ["-p", "runs", "2", "-p", "sizes", "10,25", "-p", "source_runs", "1"]
CHEAP = ["-p", "selectors", "random,subtask_equal,anchor_points"]
CHAPTERS = {
    "bench_gpqa": SMALL + CHEAP,
    "bench_bbh": SMALL + CHEAP,
    "bench_mmlu_pro": SMALL + CHEAP,
    "bench_mmlu": SMALL + CHEAP + ["-p", "sources", "60", "-p", "targets", "12"],
    "replication": ["-p", "runs", "2", "-p", "sizes", "10,25"],
}


_STARTED: dict = {}


def start_in_background(tmp_path_factory, items) -> dict:
    """The copy, and its chapters run by its own command line two at a time, niced, in a background
    process; conftest calls this with the session's first test (nothing when no selected test reads
    the runs). Returns {"batch": CommandBatch, "root": folder}."""
    if not _STARTED and any("clone_runs" in item.fixturenames for item in items):
        root = tmp_path_factory.mktemp("user")
        copy = user_copy(root / "clone")
        env = user_env(copy, root / "cache", session_env())
        where = subprocess.run([PY, "-c", "import mbutils, mbutils.data.datapath as d; print(mbutils.__file__); "
                                "print(d.REPO_DATA)"], cwd=copy, env=env, capture_output=True, text=True, check=True)
        assert where.stdout.split() == [str(copy / "mbutils" / "__init__.py"), str(copy / "data")]
        commands = {chapter: [PY, "-m", "mbutils", "run-chapter", chapter, *CHAPTERS[chapter],
                              "--out", root / "out" / chapter] for chapter in CHAPTERS}
        batch = CommandBatch(commands, copy, env, root / "batch")
        _STARTED.update(batch=stopped_with_the_session(batch), root=root)
    return _STARTED


@pytest.fixture(scope="module")
def clone_runs(tmp_path_factory, request):
    """Each chapter of CHAPTERS run by the copy's own command line: chapter -> (exit code, stderr, out folder)."""
    started = start_in_background(tmp_path_factory, request.session.items)
    return {chapter: (code, stderr, started["root"] / "out" / chapter)
            for chapter, (code, stderr) in started["batch"].results().items()}


@pytest.mark.parametrize("chapter,bundle", [("bench_gpqa", "gpqa"), ("bench_bbh", "bbh-leaderboard"),
                                            ("bench_mmlu_pro", "mmlu-pro-leaderboard")])
def test_a_clone_runs_the_benchmark_chapters_on_its_own_real_bundles(clone_runs, chapter, bundle):
    code, stderr, out = clone_runs[chapter]
    assert code == 0, stderr[-2000:]
    shown = html_outputs(out / f"{chapter}.ipynb")
    assert f"(bundle &#x27;{bundle}&#x27;): real results;" in shown  # named by benchmark and source, folder quoted
    assert "Synthetic data" not in shown and "synthetic-" not in shown


def test_a_clone_runs_the_mmlu_chapter_on_its_stand_in_and_says_so(clone_runs):
    code, stderr, out = clone_runs["bench_mmlu"]
    assert code == 0, stderr[-2000:]
    shown = html_outputs(out / "bench_mmlu.ipynb")
    assert "Synthetic data" in shown and "<b>Data:</b> synthetic-mmlu: SYNTHETIC data" in shown
    assert "no real MMLU bundle on the data path" in shown


def test_a_clone_shows_the_papers_tables_beside_its_own(clone_runs):
    code, stderr, out = clone_runs["replication"]
    assert code == 0, stderr[-2000:]
    shown = html_outputs(out / "replication.ipynb")
    assert "not on the data path" not in shown
    assert "Read from the <code>paper-results</code> folder on the data path" in shown
    for bundle in ("gpqa", "bbh-leaderboard", "mmlu-pro-leaderboard"):
        assert f"(bundle &#x27;{bundle}&#x27;): real results;" in shown  # named by benchmark and source, folder quoted
    nb = nbformat.read(out / "replication.ipynb", as_version=4)
    glued = {o["metadata"]["scrapbook"]["name"] for c in nb.cells if c.cell_type == "code"
             for o in c.get("outputs", []) if "scrapbook" in o.get("metadata", {})}
    assert {"replication_bbh_same_answers", "replication_mmlu_pro_same_answers"} <= glued


def test_the_data_command_of_a_clone_lists_its_shipped_bundles(tmp_path):
    copy = user_copy(tmp_path / "clone")
    done = subprocess.run([PY, "-m", "mbutils", "data", "--format", "csv"], cwd=copy,
                          env=user_env(copy, tmp_path / "cache"), capture_output=True, text=True, check=True)
    rows = {line.split(",")[0]: line for line in done.stdout.splitlines()[1:]}
    for name in ("gpqa", "bbh-leaderboard", "mmlu-pro-leaderboard", "mmlu-pro-tiger-lab"):
        assert rows[name].startswith(f"{name},real,") and str(copy / "data" / name) in rows[name]
    assert f"the paper's published tables: {copy / 'data' / 'paper-results'}" in done.stderr


def test_without_the_real_bbh_the_front_page_and_its_chapter_say_stand_in(tmp_path):
    """Front page and BBH chapter built (quick profile) from a copy whose data/ lacks bbh-leaderboard."""
    copy = user_copy(tmp_path / "clone", without=("data/bbh-leaderboard",))
    (copy / "_toc_bbh.yml").write_text("format: jb-book\nroot: intro\nchapters:\n  - file: chapters/bench_bbh\n")
    out = tmp_path / "built"
    done = subprocess.run([str(JUPYTER_BOOK), "build", str(copy), "--toc", str(copy / "_toc_bbh.yml"),
                           "--path-output", str(out)], cwd=copy, env=user_env(copy, tmp_path / "cache"),
                          capture_output=True, text=True, timeout=1500)
    html = out / "_build" / "html"
    assert done.returncode == 0 and (html / "index.html").is_file(), (done.stdout + done.stderr)[-3000:]
    front = (html / "intro.html").read_text(encoding="utf-8")
    chapter = (html / "chapters" / "bench_bbh.html").read_text(encoding="utf-8")
    assert re.search(r'class="admonition warning"><p class="admonition-title">Synthetic data</p>', front)
    assert "<b>BBH:</b> no real BBH bundle on the data path" in front
    assert "Synthetic data" in chapter and "synthetic-bbh: SYNTHETIC data" in chapter
    assert "This page runs on synthetic-bbh, a synthetic stand-in" in visible_text(chapter)
    for page in (front, chapter):
        words = visible_text(page)
        assert "bbh-leaderboard" not in words
        assert not re.search(r"\b78\s*(models|×|x)", words), re.search(r".{80}\b78\s*(models|×|x).{40}", words)
    # the page's glued facts come from the stand-in too
    assert "synthetic-bbh (synthetic)" in visible_text(front)


def test_a_copy_is_what_git_would_hand_a_user(tmp_path):
    copy = user_copy(tmp_path / "clone")
    assert (copy / "data" / "gpqa" / "responses.csv.gz").is_file() and not (copy / ".venv").exists()
    assert json.loads((copy / "data" / "gpqa" / "provenance.json").read_text())["licence"] == "MIT"

"""A build says where it is: while the book's pages run ahead (mbutils.publish.page_runs), a line on
stderr when a page starts or ends and one every 30 s in between, each with the pages done of all,
the pages running and for how long, the time elapsed and an estimate of the time left."""

from __future__ import annotations

import io
import re
import time

from mbutils.publish.page_runs import HEARTBEAT_SECONDS, Progress, _clock

LINE = re.compile(r"^\[mbutils\] (?:(?P<what>.+?): )?(?P<done>\d+)/(?P<total>\d+) pages done, (?P<elapsed>[\d:]+) "
                  r"elapsed, (?P<left>about \d+ (?:s|min) left|none left); running: (?P<running>.+)$")


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def _lines(out: io.StringIO) -> list[re.Match]:
    lines = out.getvalue().splitlines()
    matches = [LINE.match(line) for line in lines]
    assert all(matches), [line for line, m in zip(lines, matches) if not m]
    return matches


def test_a_line_per_page_started_and_finished_with_done_running_elapsed_and_left():
    clock, out = Clock(), io.StringIO()
    progress = Progress(3, 2, typical=20.0, stream=out, clock=clock)
    progress.started("chapters/guidance")
    clock.now += 5
    progress.started("chapters/use_micro")
    clock.now += 55
    progress.finished("chapters/guidance", "executed chapters/guidance in 60 s")
    progress.started("intro")
    clock.now += 10
    progress.finished("chapters/use_micro", "chapters/use_micro failed (CellExecutionError); myst-nb runs it again")
    clock.now += 5
    progress.finished("intro", "executed intro in 15 s")
    lines = _lines(out)
    assert len(lines) == 6  # three starts, three ends: nothing else without a heartbeat
    assert [m["what"] for m in lines] == [
        "started chapters/guidance", "started chapters/use_micro", "executed chapters/guidance in 60 s",
        "started intro", "chapters/use_micro failed (CellExecutionError); myst-nb runs it again",
        "executed intro in 15 s"]
    assert [int(m["done"]) for m in lines] == [0, 0, 1, 1, 2, 3] and {m["total"] for m in lines} == {"3"}
    assert [m["elapsed"] for m in lines] == ["0:00", "0:05", "1:00", "1:00", "1:10", "1:15"]
    assert lines[1]["running"] == "chapters/guidance (0:05), chapters/use_micro (0:00)"
    assert lines[2]["running"] == "chapters/use_micro (0:55)"
    assert lines[0]["left"] == "about 40 s left"  # 3 pages of 20 s (the profile's typical page), 2 at a time
    assert lines[2]["left"] == "about 60 s left"  # a page takes 60 s so far: one waiting, one 55 s in
    assert lines[-1]["left"] == "none left" and lines[-1]["running"] == "none"


def test_a_page_its_worker_ended_is_not_running_beside_the_next_one():
    """A worker ends its page and starts the next before the build reports the first: never more
    pages running than workers, and the page is done once, with its own time."""
    clock, out = Clock(), io.StringIO()
    progress = Progress(3, 2, typical=20.0, stream=out, clock=clock)
    progress.started("a")
    progress.started("b")
    clock.now += 10
    progress.ended("a")
    progress.started("c")
    clock.now += 1
    progress.finished("a", "executed a in 10 s")
    lines = _lines(out)
    assert max(m["running"].count(" (") for m in lines) == 2
    assert lines[-1]["done"] == "1" and lines[-1]["running"] == "b (0:11), c (0:01)"
    assert progress.durations == {"a": 10.0}


def test_the_long_pages_that_start_first_do_not_set_the_estimate_for_the_others():
    clock, out = Clock(), io.StringIO()
    progress = Progress(10, 2, typical=20.0, stream=out, clock=clock, long={"long1", "long2"})
    progress.started("long1")
    progress.started("long2")
    assert "about 2 min left" in progress.status()  # 8 waiting pages of 20 s after the two: 100 s
    clock.now += 200
    progress.finished("long1", "executed long1 in 200 s")
    progress.started("a")
    assert "about 80 s left" in progress.status()  # still 20 s a page: long1 is no usual page
    clock.now += 10
    progress.finished("a", "executed a in 10 s")
    assert "about 40 s left" in progress.status()  # 7 waiting pages of 10 s, two at a time (long2 overdue)


def test_a_heartbeat_while_a_page_runs_and_none_once_the_pages_are_done():
    import threading

    out = io.StringIO()
    progress = Progress(1, 2, typical=20.0, stream=out, heartbeat=0.05)
    beat = threading.Thread(target=progress.beat, daemon=True)
    beat.start()
    progress.started("slow")
    time.sleep(0.3)
    progress.finished("slow", "executed slow in 0 s")
    quiet = len(out.getvalue().splitlines())
    time.sleep(0.2)
    progress.stop()
    beat.join(2)
    lines = _lines(out)
    beats = [m for m in lines if m["what"] is None]
    assert 3 <= len(beats) <= 7, out.getvalue()  # one every 0.05 s while the page ran
    assert all(m["running"].startswith("slow (") for m in beats)
    assert len(lines) == quiet and not beat.is_alive()  # no line once no page runs; the thread ends
    assert HEARTBEAT_SECONDS == 30.0


def test_clock_reads_minutes_and_hours():
    assert (_clock(0), _clock(59.6), _clock(61), _clock(3725)) == ("0:00", "1:00", "1:01", "1:02:05")



def test_a_book_build_reports_each_page_on_stderr(tmp_path):
    """A small book (two pages run ahead, two at a time) built with the book's Sphinx hook: stderr has
    a start and an end line for each page, with the counts (a heartbeat comes only after 30 s)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from helpers import MYST_FRONT_MATTER

    book = tmp_path / "book"
    book.mkdir()
    (book / "_config.yml").write_text("title: mini\nonly_build_toc_files: true\nexecute:\n  execute_notebooks: cache\n"
                                      "sphinx:\n  extra_extensions: [mbutils.publish.sphinxext]\n")
    (book / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n  - file: other\n")
    for name in ("intro", "other"):
        (book / f"{name}.md").write_text(f"{MYST_FRONT_MATTER}\n# {name}\n\n```{{code-cell}}\nimport time\n"
                                         "time.sleep(1)\n```\n")
    jb = Path(sys.executable).with_name("jupyter-book")
    proc = subprocess.run([str(jb), "build", str(book), "--path-output", str(tmp_path / "out")], capture_output=True,
                          text=True, timeout=600, env={**os.environ, "MBUTILS_BOOK_PAGES": "2"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [line for line in proc.stderr.splitlines() if line.startswith("[mbutils]")]
    matches = [LINE.match(line) for line in lines]
    assert all(matches), lines
    whats = sorted(m["what"].split(" in ")[0] for m in matches if m["what"])
    assert whats == ["executed intro", "executed other", "started intro", "started other"], lines
    assert {m["total"] for m in matches} == {"2"} and matches[-1]["done"] == "2"
    assert "[mbutils] executing 2 pages, 2 at a time" in proc.stdout

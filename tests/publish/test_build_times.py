"""Build times from the builds' own measurements (mbutils/publish/build_times.py): a build records its
time and each page's, and the pages that state times read them, saying so where none exists yet."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import REPO
from helpers import MYST_FRONT_MATTER
from mbutils.publish.build_times import TIMES_FILE, minutes, profile_sentences


def test_minutes_reads_as_seconds_minutes_or_hours():
    assert minutes(42.4) == "42 s"
    assert minutes(18 * 60 + 10) == "18 minutes"
    assert minutes(3 * 3600) == "3.0 hours"


def test_each_profile_gets_its_last_measure_or_says_none_was_made():
    record = {"finished": "2026-12-06T14:00:00+00:00", "cores": 2, "pages_at_once": 2, "build_seconds": 1080.0,
              "executed_pages": 20, "pages": {"chapters/a": 600.0, "chapters/b": 479.0}}
    sentences = profile_sentences({"default": record})
    assert sentences[0] == "quick: no build with this profile has been measured in this book folder yet."
    assert sentences[1] == ("default: the last build took 18 minutes (2026-12-06, 2 cores, 2 pages at once), "
                            "executing 20 of its 2 computing pages; those pages take 18 minutes of execution in all.")
    assert "reusing the executed notebooks" in profile_sentences({"paper": {**record, "executed_pages": 0}})[2]


#: Words of the sentences that may state a time by hand: class time, reading time and the exercises' sizes
#: (the teaching page's plan), none of them a build's.
NOT_BUILD_TIMES = ("class", "read", "session", "check", "project", "optional")


def test_no_page_states_a_hand_written_build_time():
    """The reading guide and the course page state build times only through the directive: a time
    in any other sentence must be one of the plan's (class, reading, exercise sizes)."""
    for name in ("reading", "teaching"):
        text = (REPO / "chapters" / f"{name}.md").read_text(encoding="utf-8")
        assert "{mbutils-build-times}" in text, f"{name} states no measured build times"
        sentences = re.split(r"(?<=[.;:|])\s+", re.sub(r"\s+", " ", re.sub(r"\(\d+ min\)", "", text)))
        timed = [s for s in sentences if re.search(r"\d+(?:\.\d+)? ?(?:s|min|minutes?|hours?|seconds?)\b|an hour", s)]
        assert name == "reading" or timed  # the check reads the real pages
        stated = [s for s in timed if not any(word in s.lower() for word in NOT_BUILD_TIMES)]
        assert not stated, f"{name} states a time by hand: {stated}"


TIMES_PAGE = """# Times

```{mbutils-build-times}
:show: profiles
```

```{mbutils-build-times}
:show: pages
```
"""


def _build(root: Path, out: Path) -> str:
    jb = Path(sys.executable).with_name("jupyter-book")
    env = {**os.environ, "MBUTILS_PROFILE": "quick", "MBUTILS_BOOK_PAGES": "2"}
    proc = subprocess.run([str(jb), "build", str(root), "--path-output", str(out), "-W", "-n", "--keep-going"],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", (out / "_build" / "html" / "times.html").read_text()))


def test_a_build_records_its_times_and_the_next_build_states_them(tmp_path):
    root = tmp_path / "book"
    root.mkdir()
    (root / "_config.yml").write_text(
        "title: mini\nonly_build_toc_files: true\n"
        "execute:\n  execute_notebooks: cache\n  allow_errors: false\n  run_in_temp: false\n"
        "sphinx:\n  extra_extensions: [mbutils.publish.sphinxext]\n")
    (root / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n  - file: slow\n  - file: times\n")
    for name, code in (("intro", "print(1)"), ("slow", "import time\ntime.sleep(2)")):
        (root / f"{name}.md").write_text(f"{MYST_FRONT_MATTER}\n# {name}\n\n```{{code-cell}}\n{code}\n```\n")
    (root / "times.md").write_text(TIMES_PAGE)
    out = tmp_path / "out"

    first = _build(root, out)
    assert "quick: no build with this profile has been measured in this book folder yet." in first
    seconds = re.search(r"\(profile quick; .*?\): (.*?)\.", first).group(1)
    slow = float(re.search(r"slow (\d+) s", seconds).group(1))
    assert slow >= 2 and "intro" in seconds
    recorded = json.loads((out / "_build" / TIMES_FILE).read_text())["quick"]
    assert recorded["executed_pages"] == 2 and recorded["pages"]["slow"] >= 2
    assert recorded["build_seconds"] >= recorded["pages"]["slow"]

    second = _build(root, out)  # nothing changed: the times page is read again, from the first build's record
    assert f"quick: the last build took {minutes(recorded['build_seconds'])}" in second
    assert "executing 2 of its 2 computing pages" in second
    again = json.loads((out / "_build" / TIMES_FILE).read_text())["quick"]
    caches = list((out / "_build").glob(".jupyter_cache-*"))
    if len(caches) == 1:  # the same execution cache: the pages' measures are the first build's
        assert again["executed_pages"] == 0 and again["pages"] == recorded["pages"]
    else:  # the data path changed between the builds (another process wrote to data/): executed again
        assert again["executed_pages"] == 2

"""How many book pages run at once (mbutils.publish.page_runs); the full build is checked in
tests/publish/test_book_browser.py, whose build log must show no page executed one by one."""

from __future__ import annotations

import re

import pytest

from conftest import REPO
from helpers import MYST_FRONT_MATTER
from mbutils.publish.page_runs import PAGES_ENV, pages_at_once


def test_two_pages_at_once_by_default_and_never_more_than_the_cores(monkeypatch):
    monkeypatch.delenv(PAGES_ENV, raising=False)
    monkeypatch.setattr("os.cpu_count", lambda: 8)
    assert pages_at_once() == 2
    monkeypatch.setattr("os.cpu_count", lambda: 1)
    assert pages_at_once() == 1
    monkeypatch.setattr("os.cpu_count", lambda: None)
    assert pages_at_once() == 1


@pytest.mark.parametrize("value,expected", [("1", 1), ("3", 3), (" 4 ", 4)])
def test_the_environment_sets_the_pages_at_once(monkeypatch, value, expected):
    monkeypatch.setenv(PAGES_ENV, value)
    assert pages_at_once() == expected


@pytest.mark.parametrize("value", ["0", "-2", "two", "1.5"])
def test_a_bad_count_is_refused_with_the_variable_named(monkeypatch, value):
    monkeypatch.setenv(PAGES_ENV, value)
    with pytest.raises(ValueError, match=f"{PAGES_ENV}=.*whole number"):
        pages_at_once()


PAGE = MYST_FRONT_MATTER.replace("{", "{{").replace("}", "}}") + """
# {title}

```{{code-cell}}
{code}
```
"""


def _mini_book(root, pages: dict[str, str]):
    """A book of one-cell pages, built with the book's Sphinx hook, as the real book is."""
    root.mkdir()
    (root / "_config.yml").write_text(
        "title: mini\nonly_build_toc_files: true\n"
        "execute:\n  execute_notebooks: cache\n  allow_errors: false\n  run_in_temp: false\n"
        "sphinx:\n  extra_extensions: [mbutils.publish.sphinxext]\n")
    names = list(pages)
    (root / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n"
                                   + "".join(f"  - file: {n}\n" for n in names[1:]))
    for name, code in pages.items():
        (root / f"{name}.md").write_text(PAGE.format(title=name, code=code))
    return root


def _build(root, out, pages_env: str) -> tuple[int, str]:
    import os
    import subprocess
    import sys
    from pathlib import Path

    jb = Path(sys.executable).with_name("jupyter-book")
    env = {**os.environ, PAGES_ENV: pages_env}
    proc = subprocess.run([str(jb), "build", str(root), "--path-output", str(out)], env=env,
                          capture_output=True, text=True, timeout=600)
    return proc.returncode, proc.stdout + proc.stderr


def test_pages_run_ahead_and_a_failing_page_is_left_to_myst_nb(tmp_path):
    """Three pages run ahead, two at a time, and are read from the cache; the failing one is
    not stored, so myst-nb executes it itself and reports the failure as it always does."""
    book = _mini_book(tmp_path / "book", {"intro": "print(6 * 7)", "fine": "x = sum(range(10))\nx",
                                          "broken": "raise RuntimeError('page broken on purpose')"})
    code, log = _build(book, tmp_path / "out", "2")
    assert "[mbutils] executing 3 pages, 2 at a time" in log, log[-3000:]
    assert "[mbutils] broken failed (CellExecutionError); myst-nb runs it again" in log
    executed_by_myst_nb = [line for line in log.splitlines() if "Executing notebook using" in line]
    assert len(executed_by_myst_nb) == 1 and "broken" in executed_by_myst_nb[0], executed_by_myst_nb
    assert "Executing notebook failed" in log  # a warning: the strict build (-W) fails on it
    report = tmp_path / "out" / "_build" / "html" / "reports" / "broken.err.log"
    assert "page broken on purpose" in report.read_text()
    html = (tmp_path / "out" / "_build" / "html" / "fine.html").read_text()
    assert "45" in re.sub(r"<[^>]+>", " ", html).split()  # the cached page's output is on the page
    # edited, every page is read again: the good ones come from the cache, only the broken one runs
    for name in ("intro", "fine", "broken"):
        page = book / f"{name}.md"
        page.write_text(page.read_text() + "\nEdited.\n")
    code, log = _build(book, tmp_path / "out", "2")
    assert "[mbutils] executing 1 pages, 2 at a time" in log and "[mbutils] broken failed" in log


def test_one_page_at_a_time_leaves_execution_to_myst_nb(tmp_path):
    book = _mini_book(tmp_path / "book", {"intro": "print(1)", "other": "print(2)"})
    code, log = _build(book, tmp_path / "out", "1")
    assert code == 0 and "[mbutils]" not in log
    assert len([line for line in log.splitlines() if "Executing notebook using" in line]) == 2


def test_long_pages_start_first_then_the_rest_by_name():
    from mbutils.publish.page_runs import LONG_PAGES, start_order

    names = ["intro", "chapters/bench_gpqa", "chapters/guidance", "chapters/use_micro", "chapters/adaptive", "chapters/data"]
    assert start_order(names) == ["chapters/guidance", "chapters/use_micro", "chapters/adaptive",
                                  "chapters/bench_gpqa", "chapters/data", "intro"]
    assert len(set(LONG_PAGES)) == len(LONG_PAGES)
    chapters = {p.stem for p in (REPO / "chapters").glob("*.md")}
    assert {name.removeprefix("chapters/") for name in LONG_PAGES} <= chapters  # no stale name

"""run-chapter refuses, before a kernel starts, what a chapter would fail on or quietly change, in the
library's words with its own ``-p`` names (exit 2); its failures are one message, without the kernel's
noise, never an internal error; and a page run on a bundle named like markup shows the name as written.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

from helpers import MYST_FRONT_MATTER, random_benchmark, run_cli
from mbutils.base.errors import ChapterError
from mbutils.publish.chapters import chapter_parameters, run_chapter
from mbutils.publish.preflight import ChapterParameterError, check_values, run_chapter_wording
from mbutils.data.bundle import save_bundle

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def b30(tmp_path_factory):
    """40 models x 60 items in two subtasks of 30: a seen half of 30 items."""
    return save_bundle(random_benchmark(n_models=40, subtask_sizes=(30, 30), name="b30"),
                       tmp_path_factory.mktemp("bundles") / "b30")


@pytest.fixture
def no_kernel(monkeypatch):
    """papermill replaced by a stub that records a call: a refusal must come before any kernel starts."""
    import papermill

    calls = []

    def fake(*args, **kwargs):
        calls.append(args)
        raise RuntimeError("the chapter was executed")

    monkeypatch.setattr(papermill, "execute_notebook", fake)
    return calls


def refused_with_2(result, calls) -> str:
    code, out, err = result
    assert code == 2, (code, err)
    assert not calls, "a kernel was started before the parameters were checked"
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    return lines[0]


# --------------------------------------------------------------------------- 2. sizes


@pytest.mark.parametrize("sizes", ["500", "5,500"])
def test_sizes_past_the_seen_half_are_refused_as_experiment_refuses_them(b30, tmp_path, no_kernel, sizes):
    code, _, err = run_cli("experiment", "--data", b30, "--sizes", sizes, "--sources", "20", "--targets", "5",
                           "--runs", "1", "--quiet", "--out", tmp_path / "r.parquet")
    assert code == 1
    experiments_words = err.strip().removeprefix("error: ")
    assert experiments_words == "b30: sizes 500 do not fit the seen half (30 items); use sizes from 1 to 30"
    line = refused_with_2(run_cli("run-chapter", "sel_random", "-p", "data", b30, "-p", "sizes", sizes,
                                  "--out", tmp_path / "out", "--quiet"), no_kernel)
    assert line == f"error: chapter 'sel_random', parameter sizes: {experiments_words}"
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_sizes_that_fit_pass_and_a_chapter_whose_sizes_are_its_own_is_not_held_to_the_seen_half(b30):
    check_values("sel_random", chapter_parameters("sel_random"), {"data": str(b30), "sizes": "5,30"})
    check_values("use_micro", chapter_parameters("use_micro"), {"data": str(b30), "sizes": "50"})
    with pytest.raises(ChapterParameterError, match="gpqa: sizes 300 do not fit the seen half \\(224 items\\)"):
        check_values("target_sets", chapter_parameters("target_sets"), {"sizes": 300}, profile="quick")


# --------------------------------------------------------------------------- 1. bundles that do not exist


def test_a_bundle_that_does_not_exist_is_refused_before_the_kernel(tmp_path, no_kernel):
    line = refused_with_2(run_cli("run-chapter", "data", "-p", "data", "gpqa,<svg onload=alert(9)>",
                                  "--out", tmp_path / "out", "--quiet"), no_kernel)
    assert line.startswith("error: chapter 'data', parameter data: no bundle named '<svg onload=alert(9)>'")
    assert "Bundles available:" in line


def test_each_bundle_parameter_is_checked_as_its_chapter_reads_it():
    synthetic = chapter_parameters("synthetic")
    check_values("synthetic", synthetic, {"data": "no-such-bundle:synthetic-bbh,gpqa:synthetic-gpqa"})  # noted there
    with pytest.raises(ChapterParameterError, match="parameter data: no bundle named 'synthetic-nope'"):
        check_values("synthetic", synthetic, {"data": "gpqa:synthetic-nope"})
    with pytest.raises(ChapterParameterError, match="parameter others: no bundle named 'elsewhere'"):
        check_values("synthetic", synthetic, {"others": "elsewhere"})
    cases = chapter_parameters("target_sets")
    check_values("target_sets", cases, {"cases": "synthetic-gpqa:7b_instruct"})
    with pytest.raises(ChapterParameterError, match="parameter cases: no bundle named 'nob'"):
        check_values("target_sets", cases, {"cases": "gpqa:7b_instruct,nob:x"})
    with pytest.raises(ChapterParameterError, match="parameter picture_data: no bundle named 'nope'"):
        check_values("sel_random", chapter_parameters("sel_random"), {"picture_data": "nope"})


# --------------------------------------------------------------------------- 4. advice in -p words


def test_a_pool_too_small_is_refused_with_run_chapters_names(b30, tmp_path, no_kernel):
    line = refused_with_2(run_cli("run-chapter", "sel_random", "-p", "data", b30, "-p", "sources", "100",
                                  "--out", tmp_path / "out", "--quiet"), no_kernel)
    assert line == ("error: chapter 'sel_random': b30 has 40 models, too few for 13 targets + 100 sources; "
                    "lower -p sources N or -p targets N")


def test_advice_names_the_options_of_the_command_that_raised_it():
    params = chapter_parameters("bench_gpqa")
    assert run_chapter_wording("lower --sources or --targets", params) == "lower -p sources N or -p targets N"
    assert (run_chapter_wording("choose missing=\"drop_models\" (command line: --missing drop-models)", params)
            == "choose missing=\"drop_models\" (command line: -p missing drop_models)")
    assert run_chapter_wording("raise --frontier", params) == "raise --frontier"  # not a parameter there
    assert run_chapter_wording("raise --frontier", chapter_parameters("beyond")) == "raise -p frontier SHARE"
    assert run_chapter_wording("--sources-file x", params) == "--sources-file x"


def test_an_incomplete_bundle_is_refused_with_the_missing_parameter_to_give():
    with pytest.raises(ChapterParameterError) as caught:
        check_values("sel_random", chapter_parameters("sel_random"),
                     {"data": str(REPO / "tests" / "bad_bundles" / "missing-cells")})
    said = str(caught.value)
    assert "is incomplete" in said and "(command line: -p missing drop_models)" in said and "--missing" not in said


POOL_PAGE = MYST_FRONT_MATTER + """
# A page whose pool is too small

```{code-cell}
:tags: [parameters]

sources = 300
targets = 50
```

```{code-cell}
import mbutils as mb
from mbutils.methods.protocol import check_protocol

check_protocol(mb.load_benchmark("gpqa"), mb.Protocol(n_sources=sources, n_targets=targets))
```
"""


def test_a_cell_that_fails_on_the_pool_is_reported_with_run_chapters_names(tmp_path):
    page = tmp_path / "pool.md"
    page.write_text(POOL_PAGE)
    with pytest.raises(ChapterError) as caught:
        run_chapter(page, {"sources": "400"}, tmp_path / "out", html=False)
    assert "lower -p sources N or -p targets N" in str(caught.value) and "--sources" not in str(caught.value)


# --------------------------------------------------------------------------- 5. new_model


def test_a_new_model_the_bundle_lacks_is_named_by_its_parameter(b30, tmp_path, no_kernel):
    line = refused_with_2(run_cli("run-chapter", "use_micro", "-p", "data", b30, "-p", "new_model", "nosuch",
                                  "--out", tmp_path / "out", "--quiet"), no_kernel)
    assert line.startswith("error: chapter 'use_micro', parameter new_model: 'nosuch' is not a model of b30")
    assert "models to exclude" not in line
    check_values("use_micro", chapter_parameters("use_micro"), {"data": str(b30), "new_model": "m007"})


# --------------------------------------------------------------------------- 3. the kernel's noise


NOISY_PAGE = MYST_FRONT_MATTER + """
# A page whose kernel logs what an interrupted kernel logs, then fails

```{code-cell}
:tags: [parameters]

runs = 3
```

```{code-cell}
get_ipython().kernel.log.error("KeyboardInterrupt caught in kernel")
raise ValueError("on purpose")
```
"""

DYING_PAGE = MYST_FRONT_MATTER + """
# A page whose kernel dies

```{code-cell}
:tags: [parameters]

runs = 3
```

```{code-cell}
import os
os._exit(3)
```

```{code-cell}
print("never")
```
"""


def _run_chapter_process(page: Path, out: Path) -> subprocess.CompletedProcess:
    """run-chapter in a process of its own: the kernel writes to that process's standard error."""
    return subprocess.run([sys.executable, "-m", "mbutils", "run-chapter", str(page), "-p", "runs", "4",
                           "--out", str(out), "--quiet"], capture_output=True, text=True, cwd=REPO, timeout=180,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"})


def test_a_failed_chapter_says_one_thing_and_the_kernel_nothing(tmp_path):
    page = tmp_path / "noisy.md"
    page.write_text(NOISY_PAGE)
    proc = _run_chapter_process(page, tmp_path / "out")
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        f"error: chapter 'noisy' failed: cell [3] raised ValueError: on purpose; the notebook executed up to the "
        f"failing cell is {tmp_path / 'out' / 'noisy.failed.ipynb'}"], proc.stderr
    assert proc.stdout == ""


def test_a_kernel_that_dies_is_a_refusal_not_an_internal_error(tmp_path):
    page = tmp_path / "dying.md"
    page.write_text(DYING_PAGE)
    proc = _run_chapter_process(page, tmp_path / "out")
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: chapter 'dying': its kernel died while code cell 2 of 3 "
                                                   "('import os') ran"), proc.stderr


# --------------------------------------------------------------------------- 1. a real page


PAYLOAD = "<svg onload=alert(1)> {{ x }} {math}`x` $x$ **bold** `"


class _Page(HTMLParser):
    """Elements, the title's text, and the payload's formula where MathJax would read it (outside code and
    MathJax-ignore elements)."""

    IGNORED = {"tex2jax_ignore", "mathjax_ignore"}
    VOID = {"br", "img", "hr", "meta", "link", "input", "col", "area", "base", "wbr", "source"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements, self.h1, self.math_read, self.text = Counter(), [], [], []
        self._open: list[tuple[str, bool]] = []

    def handle_starttag(self, tag, attrs):
        self.elements[tag] += 1
        if tag not in self.VOID:
            self._open.append((tag, bool(set((dict(attrs).get("class") or "").split()) & self.IGNORED)))

    def handle_endtag(self, tag):
        while self._open:
            if self._open.pop()[0] == tag:
                break

    def handle_data(self, data):
        tags = [t for t, _ in self._open]
        if {"script", "style", "pre", "code", "textarea"} & set(tags):
            return
        self.text.append(data)
        if "h1" in tags and "a" not in tags:
            self.h1.append(data)
        if "$x$" in data and not any(ignored for _, ignored in self._open):  # the page's own math aside
            self.math_read.append(data)


def test_a_page_run_on_a_bundle_named_like_markup_shows_the_name_as_written(tmp_path):
    folder = save_bundle(random_benchmark(n_models=12, subtask_sizes=(10, 8)), tmp_path / "plain")
    hostile = folder.rename(tmp_path / PAYLOAD)
    code, _, err = run_cli("run-chapter", "data", "-p", "data", hostile, "--out", tmp_path / "out", "--quiet")
    assert code == 0, err
    page = _Page()
    page.feed((tmp_path / "out" / "data.html").read_text(encoding="utf-8"))
    assert page.elements["svg"] == 0 and page.elements["h1"] == 1
    assert " ".join("".join(page.h1).split()) == f"The benchmark data, run on {PAYLOAD}"
    assert not page.math_read, page.math_read[:3]
    text = " ".join("".join(page.text).split())
    assert text.count(PAYLOAD) >= 3  # the title, the note naming the bundle, the tables' captions

"""Chapters read like lectures: their code calls the package only through its public names.

A chapter's code cells may use ``mbutils.<name>`` (or ``mb.<name>``, ``from mbutils import <name>``)
for the names in ``mbutils.__all__``, and the book's facade ``mbutils.book`` for the names it
re-exports (``book.<name>``) and its figures' namespace ``book.plots``. An import of, or an
attribute path into, any other module of the package (``from mbutils.evaluate import metrics``,
``mbutils.methods.irt.sigmoid``) fails here; prose may still name a module for the reader.

The four benchmark chapters share their steps through library calls
(:mod:`mbutils.book.benchmark_page`), so no six consecutive non-blank code lines of one appear
in another.
"""

from __future__ import annotations

import ast
import itertools
import re
from pathlib import Path

import pytest

import mbutils
from mbutils import book

CHAPTERS = Path(mbutils.__file__).resolve().parents[1] / "chapters"
PUBLIC = set(mbutils.__all__)
FACADE = set(book.__all__)
SUBMODULES = set(book.SUBMODULES)
BENCHMARK_CHAPTERS = ("bench_gpqa", "bench_bbh", "bench_mmlu_pro", "bench_mmlu")
#: the length of a run of identical code lines two benchmark chapters may not share
SHARED_RUN = 6


def code_cells(path: Path) -> list[str]:
    """The source of every ``{code-cell}`` of a MyST chapter, its cell options (``:tags:``) included."""
    return re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", path.read_text(encoding="utf-8"), re.S)


def _python(cell: str) -> str:
    """A cell's Python: its MyST options (``:tags: [...]``) and shell or magic lines blanked."""
    return "\n".join("" if re.match(r"\s*(:\w+:|[%!])", line) else line for line in cell.splitlines())


def private_uses(source: str) -> list[str]:
    """Every import of, or attribute path into, a part of mbutils that is not public, in ``source``."""
    bad, roles = [], {}  # local name -> "root" (mbutils), "book" (the facade), "plots" (the figures)
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "mbutils":
                    roles[alias.asname or "mbutils"] = "root"
                elif alias.name == "mbutils.book" and alias.asname:
                    roles[alias.asname] = "book"
                elif alias.name.split(".")[0] == "mbutils" and alias.name not in {f"mbutils.book.{s}" for s in SUBMODULES}:
                    bad.append(f"import {alias.name}")
                elif alias.name.split(".")[0] == "mbutils":
                    roles[alias.asname or "mbutils"] = "root"  # `import mbutils.book.plots` binds mbutils
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "mbutils":
            names = [a.name for a in node.names]
            if node.module == "mbutils":
                allowed = PUBLIC | {"book"}
                for alias in node.names:
                    if alias.name == "book":
                        roles[alias.asname or "book"] = "book"
            elif node.module == "mbutils.book":
                allowed = FACADE | SUBMODULES
                for alias in node.names:
                    if alias.name in SUBMODULES:
                        roles[alias.asname or alias.name] = alias.name
            elif node.module in {f"mbutils.book.{s}" for s in SUBMODULES}:
                allowed = set(names)  # a public sub-namespace of the book
            else:
                allowed = set()
            bad += [f"from {node.module} import {n}" for n in names if n not in allowed]
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            role, name = roles.get(node.value.id), node.attr
            if role == "root" and name not in PUBLIC | {"book"}:
                bad.append(f"{node.value.id}.{name}")
            elif role == "book" and name not in FACADE | SUBMODULES:
                bad.append(f"{node.value.id}.{name}")
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
                and isinstance(node.value.value, ast.Name) and roles.get(node.value.value.id) == "root"
                and node.value.attr == "book" and node.attr not in FACADE | SUBMODULES):
            bad.append(f"{node.value.value.id}.book.{node.attr}")
    return bad


def _chapters():
    return sorted(p for p in CHAPTERS.glob("*.md") if code_cells(p))


@pytest.mark.parametrize("path", _chapters(), ids=lambda p: p.stem)
def test_a_chapter_calls_only_public_names(path):
    source = "\n".join(_python(cell) for cell in code_cells(path))
    bad = private_uses(source)
    assert not bad, f"{path.name} reaches past the public API: {', '.join(sorted(set(bad)))}"


def test_the_check_catches_private_imports_and_paths():
    assert private_uses("import mbutils as mb\nfrom mbutils import book\nfrom mbutils.book import plots\n"
                        "mb.mdad_table(1)\nbook.configure(1)\nplots.panels\nbook.plots.label\n") == []
    assert private_uses("from mbutils.evaluate import metrics\n") == ["from mbutils.evaluate import metrics"]
    assert private_uses("from mbutils.methods.irt import sigmoid\n") == ["from mbutils.methods.irt import sigmoid"]
    assert private_uses("import mbutils.evaluate.noise\n") == ["import mbutils.evaluate.noise"]
    assert private_uses("import mbutils as mb\nmb.results.metrics.gap_bins(1)\n") == ["mb.results"]
    assert private_uses("import mbutils\nmbutils.book.sections.in_short()\n") == ["mbutils.book.sections"]
    assert private_uses("from mbutils import book\nbook.setting.Setting\n") == ["book.setting"]
    assert private_uses("from mbutils.book import sections\n") == ["from mbutils.book import sections"]
    assert private_uses("from mbutils import gap_bins\n") == ["from mbutils import gap_bins"]


def test_every_public_name_is_in_the_api_reference():
    api = (CHAPTERS / "api.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^   (\w+)$|^\.\. auto(?:function|class):: (\w+)$", api, re.M))
    listed = {name for pair in listed for name in pair if name}
    missing = sorted(PUBLIC - listed - {"__version__"})
    assert not missing, f"chapters/api.md does not list {missing}"


def code_lines(path: Path) -> list[str]:
    """The non-blank lines of a chapter's code cells, in order (cell options included), but its parameters
    cell: that declares the page's knobs, papermill's contract, alike in every chapter by design."""
    return [line.rstrip() for cell in code_cells(path) if ":tags: [parameters]" not in cell
            for line in cell.splitlines() if line.strip()]


def shared_runs(a: list[str], b: list[str], n: int = SHARED_RUN) -> list[list[str]]:
    """Every run of ``n`` consecutive lines of ``a`` that also appears, consecutively, in ``b``."""
    windows = {tuple(b[j:j + n]) for j in range(len(b) - n + 1)}
    return [a[i:i + n] for i in range(len(a) - n + 1) if tuple(a[i:i + n]) in windows]


def test_the_benchmark_chapters_share_no_run_of_six_code_lines():
    lines = {name: code_lines(CHAPTERS / f"{name}.md") for name in BENCHMARK_CHAPTERS}
    found = []
    for a, b in itertools.combinations(BENCHMARK_CHAPTERS, 2):
        for run in shared_runs(lines[a], lines[b]):
            found.append(f"{a} and {b}:\n    " + "\n    ".join(run))
    assert not found, "shared code (move it into mbutils.book.benchmark_page):\n" + "\n".join(found[:3])


def test_the_run_check_finds_a_shared_run():
    a = [f"line {i}" for i in range(10)]
    assert shared_runs(a, ["x", *a[2:8], "y"]) == [a[2:8]]
    assert shared_runs(a, ["x", *a[2:7], "y", *a[7:9]]) == []

"""The package's modules form layers: every import (module-level or inside a function) points
down or stays in its layer, so there is no cycle, and the folders are the layers.

The table below is the README's layout section, one line per layer, lowest first.
"""

from __future__ import annotations

import ast
from pathlib import Path

import mbutils
from helpers import import_graph

PACKAGE = Path(mbutils.__file__).resolve().parent

#: (layer, what it holds), lowest first: a module imports only its own layer and those above it here.
LAYERS = (
    ("base", "errors, validation, display names, results tables' text, the cache, provenance, the code fingerprint"),
    ("data", "bundles on disk, the data path, the catalogue, stand-ins, importers, the in-memory Benchmark"),
    ("methods", "the protocol, run seeding, IRT, DPP, adaptive tests, the selectors, the experiment engine"),
    ("evaluate", "the meta-evaluation: metrics, the MDAD and its interval, the noise rule, paired comparisons, "
                 "the planner, the audit"),
    ("micro", "the micro-benchmark product: build, the folder, cards, the auto choice, intervals, scoring with "
              "verdicts, shipped sets, the lm-eval export and filter"),
    ("book", "what chapters call: settings, profiles, parameters, display, numbering, figures and their geometry, "
             "sections, the benchmark pages' shared steps, exercises, the adaptive chapter's pictures, versus random, "
             "and what only the book needs: computed claims, reports, the paper's tables, calibration, coverage"),
    ("publish", "building and publishing the book: run-chapter, the standalone page, the kernel guard, the Sphinx "
              "hook, pages run ahead, the copies, the PDF"),
    ("interface", "the package's public names (mbutils/__init__.py), the command line (the cli package, __main__.py) and the checks for users' extensions (testing.py)"),
)


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == "open":
                return stack[stack.index(dep):] + [dep]
            if dep not in state:
                found = visit(dep)
                if found:
                    return found
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_package_has_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, " -> ".join(cycle or [])


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


#: The interface layer's top-level names: the package root, ``python -m mbutils`` and the command line's package.
INTERFACE = ("__init__.py", "__main__.py", "cli", "testing.py")


def layer_of(module: str) -> str:
    """The layer a module's folder says it is in (the root, __main__ and the cli package: interface)."""
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in dict(LAYERS):
        return parts[1]
    return "interface"  # mbutils, mbutils.__main__, the cli package, mbutils.testing (INTERFACE: nothing else)


def test_every_module_lives_in_a_layer_folder():
    top = sorted(p.name for p in PACKAGE.iterdir() if p.suffix == ".py" or (p.is_dir() and p.name != "__pycache__"))
    assert top == sorted([*INTERFACE, *(name for name, _ in LAYERS if name != "interface")])


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import that points up the layer table (the package root is the interface layer)."""
    rank = {name: i for i, (name, _) in enumerate(LAYERS)}
    return [f"{module} ({layer_of(module)}) imports {dep} ({layer_of(dep)})"
            for module, deps in sorted(graph.items()) for dep in sorted(deps)
            if rank[layer_of(dep)] > rank[layer_of(module)]]


def test_every_import_points_down_the_layer_table():
    graph = import_graph()
    assert "mbutils" in graph and graph["mbutils"], "the package root must be read too"
    bad = upward_imports(graph)
    assert not bad, "\n".join(bad)


def test_the_layer_check_fails_on_an_injected_upward_import(tmp_path):
    """A copy of the package with one upward import added (from the root, and from a higher layer)
    shows exactly those arrows: the check can fail."""
    import shutil

    copy = Path(shutil.copytree(PACKAGE, tmp_path / "mbutils", ignore=shutil.ignore_patterns("__pycache__")))
    assert upward_imports(import_graph(copy)) == []
    target = copy / "base" / "errors.py"
    target.write_text(target.read_text() + "\nfrom mbutils import __version__\n"
                      "\n\ndef _late():\n    from mbutils.evaluate.metrics import mdad_table\n")
    assert upward_imports(import_graph(copy)) == [
        "mbutils.base.errors (base) imports mbutils (interface)",
        "mbutils.base.errors (base) imports mbutils.evaluate.metrics (evaluate)"]


def test_the_readme_layout_is_the_layer_table():
    readme = (PACKAGE.parent / "README.md").read_text()
    for name, holds in LAYERS:
        assert f"| `{name}` | {holds} |" in readme, f"README layout lacks the line of layer {name}"


def test_the_layer_check_sees_an_upward_import():
    rank = {name: i for i, (name, _) in enumerate(LAYERS)}
    assert rank[layer_of("mbutils.book.display")] > rank[layer_of("mbutils.data.bundle.read")]
    assert layer_of("mbutils.cli") == "interface" and layer_of("mbutils.methods.selectors.base") == "methods"
    assert layer_of("mbutils.cli.common") == "interface" and layer_of("mbutils.__main__") == "interface"
    assert rank[layer_of("mbutils.cli.chapters")] > rank[layer_of("mbutils.publish.chapters")]


def test_the_book_facade_is_what_the_chapters_call():
    """``mbutils.book`` re-exports each name the chapters read as ``book.<name>`` once, and no other;
    the build machinery is reached from the layer above it, never from the book."""
    import re

    from mbutils import book

    exported = [name for names in book._MODULES.values() for name in names] + list(book._ALIASES)
    assert len(exported) == len(set(exported)), "a name is re-exported twice"
    text = "\n".join(p.read_text(encoding="utf-8") for p in (PACKAGE.parent / "chapters").glob("*.md"))
    front = (PACKAGE.parent / "intro.md").read_text(encoding="utf-8")  # the front page's code cells call it too
    text += "\n".join(re.findall(r"```\{code-cell\}(.*?)```", front, flags=re.S))
    # the cells the students' and graders' copies add call the book too
    for copy in ("student_notebooks.py", "grading.py"):
        text += (PACKAGE / "publish" / copy).read_text(encoding="utf-8")
    used = set(re.findall(r"(?<![\w.])book\.([A-Za-z_]\w*)", text)) - set(book.SUBMODULES)
    assert used == {*exported, "data_listing"}, (sorted(used - set(exported)), sorted(set(exported) - used))
    assert all(getattr(book, name) is not None for name in used)
    rank = {name: i for i, (name, _) in enumerate(LAYERS)}
    assert rank["book"] < rank["publish"] < rank["interface"]


def test_every_module_is_small_and_names_its_one_job():
    """No module of the package over 500 lines; each opens with a docstring whose first line says its job."""
    long, silent = [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text()
        if len(source.splitlines()) > 500:
            long.append(f"{path.relative_to(PACKAGE)} ({len(source.splitlines())} lines)")
        doc = ast.get_docstring(ast.parse(source))
        if not doc or len(doc.splitlines()[0].split()) < 4:
            silent.append(str(path.relative_to(PACKAGE)))
    assert not long, f"modules over 500 lines: {long}"
    assert not silent, f"modules without a docstring naming their job: {silent}"

"""The package's modules form layers: every import (module-level or inside a function) points
down, so there is no cycle, and the data layer never reaches up to the book."""

from __future__ import annotations

import ast
from pathlib import Path

import mbutils

PACKAGE = Path(mbutils.__file__).resolve().parent


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join(["mbutils", *parts])


def import_graph() -> dict[str, set[str]]:
    """mbutils module -> the mbutils modules it imports anywhere in its source."""
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
                candidates = [target] + [f"{target}.{a.name}" for a in node.names]
                deps |= {c for c in candidates if c in modules}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mbutils"):
                deps |= {c for c in [node.module, *(f"{node.module}.{a.name}" for a in node.names)] if c in modules}
            elif isinstance(node, ast.Import):
                deps |= {a.name for a in node.names if a.name in modules}
        deps.discard(name)
        deps.discard("mbutils")  # the package's __init__ only re-exports
        graph[name] = deps
    return graph


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


def test_the_data_layer_does_not_import_the_book_or_the_simulator():
    graph = import_graph()
    for low in ("mbutils.benchmark", "mbutils.bundle", "mbutils.catalogue", "mbutils.protocol"):
        assert not graph[low] & {"mbutils.book", "mbutils.plots", "mbutils.synthetic", "mbutils.experiment"}, low

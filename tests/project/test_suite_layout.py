"""The tests mirror the package: ``tests/<layer>/test_<module>.py`` tests ``mbutils/<layer>/<module>.py``
(a suffix may follow the module's name: ``test_micro_hostile.py``); no test module defines a test twice.

The folders of tests/ are not packages, so pytest imports each test module by its file name: two test
modules with one name in two folders would clash, and the names stay unique instead. Shared helpers
live beside conftest.py (``helpers.py``, ``chapter_batch.py``), which every test module imports by name.
"""

from __future__ import annotations

import ast
import collections
from pathlib import Path

import mbutils
from conftest import TESTS

PACKAGE = Path(mbutils.__file__).resolve().parent
#: Folders of tests/ that are no layer of the package -> what they hold.
EXTRA_FOLDERS = {
    "project": "repository-level checks: the README, dependencies, the layers, the lane markers, a clone, "
               "the shipped data and this layout",
    "fixtures": "committed input files (no tests)",
    "bad_bundles": "the bad-input corpus (no tests)",
}
#: Test modules at the top of tests/ test the package root's public API (mbutils/__init__.py).
ROOT_MODULES = {"api": "__init__.py"}
#: Test modules named after what they check rather than after one module, with the reason.
NAMED_OTHERWISE = {
    "publish/test_book_browser.py": "the whole built book, its copies and its PDF in Chromium",
    "publish/test_book_course.py": "the course apparatus every chapter carries (objectives, citations, glossary)",
    "book/test_chapter_api.py": "what the chapters call: the public names and the book's facade (book/__init__.py)",
    "publish/test_exercise_contract.py": "every chapter's exercises: what they ask the student to produce is what "
                                         "their checks read",
    "publish/test_traceability.py": "every number in the prose of the built book is glued or cited",
}


def layer_folders() -> set[str]:
    """The package's layer folders: its sub-packages (``cli`` among them)."""
    return {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}


def module_names(folder: Path) -> set[str]:
    """Names a test module of the layer ``folder`` may start with: the layer itself, its modules and its
    sub-packages, and their modules (``anchor`` for methods/selectors/anchor.py)."""
    names = {folder.name}
    for path in folder.rglob("*.py"):
        names.add(path.stem if path.stem != "__init__" else path.parent.name)
    return names


def _test_modules() -> list[Path]:
    return sorted(TESTS.rglob("test_*.py"))


def test_every_folder_of_tests_is_a_layer_of_the_package_or_named_here():
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert "project" in folders and len(folders & layer_folders()) >= 6  # the check reads the real tree
    stray = folders - layer_folders() - set(EXTRA_FOLDERS)
    assert not stray, f"tests/ has folders that are no layer of mbutils ({sorted(layer_folders())}): {sorted(stray)}"
    nested = [p.relative_to(TESTS).as_posix() for p in _test_modules() if len(p.relative_to(TESTS).parts) > 2]
    assert not nested, f"test modules below a layer folder (keep tests/<layer>/test_<module>.py): {nested}"
    without_tests = [name for name in folders - set(EXTRA_FOLDERS) if not list((TESTS / name).glob("test_*.py"))]
    assert not without_tests, f"layer folders of tests/ without a test module: {without_tests}"


def test_every_test_module_is_named_after_a_module_of_its_layer():
    wrong = []
    for path in _test_modules():
        rel = path.relative_to(TESTS)
        name = path.stem.removeprefix("test_")
        if len(rel.parts) == 1:
            allowed = set(ROOT_MODULES)
        elif rel.parts[0] in EXTRA_FOLDERS or rel.as_posix() in NAMED_OTHERWISE:
            continue
        else:
            allowed = module_names(PACKAGE / rel.parts[0])
        if not any(name == m or name.startswith(m + "_") for m in allowed):
            wrong.append(rel.as_posix())
    assert not wrong, f"test modules not named test_<module>[_suffix].py after a module of their layer: {wrong}"
    assert all((TESTS / rel).is_file() for rel in NAMED_OTHERWISE), "NAMED_OTHERWISE names a file that is gone"


def test_test_module_names_are_unique():
    """The folders are not packages: pytest imports a test module by its file name alone."""
    names = collections.Counter(path.name for path in _test_modules())
    assert not [n for n, count in names.items() if count > 1], f"test modules sharing a name: {names.most_common(3)}"
    assert not list(TESTS.rglob("__init__.py")), "a folder of tests/ became a package; keep names unique instead"


def defined_twice(source: str) -> list[str]:
    """Names of tests (``test*`` functions, ``Test*`` classes and their ``test*`` methods) bound more than
    once in one namespace of a module: Python keeps the last, so pytest never sees the others."""
    found = []

    def scan(body, prefix=""):
        bound = collections.Counter()
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound[node.name] += 1
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                bound.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                bound.update((a.asname or a.name).split(".")[0] for a in node.names)
            if isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                scan(node.body, f"{prefix}{node.name}::")
        found.extend(prefix + name for name, count in bound.items() if count > 1 and name.startswith(("test", "Test")))

    scan(ast.parse(source).body)
    return found


def test_the_duplicate_finder_sees_a_shadowed_test():
    assert defined_twice("def test_a():\n    assert False\n\n\ndef test_a():\n    pass\n") == ["test_a"]
    assert defined_twice("class TestX:\n    def test_b(self): pass\n    def test_b(self): pass\n") == ["TestX::test_b"]
    assert defined_twice("def test_c(): pass\ntest_c = None\n") == ["test_c"]
    assert defined_twice("def helper(): pass\ndef helper(): pass\ndef test_d(): pass\n") == []


def test_no_test_module_defines_a_test_twice():
    shadowed = {path.relative_to(TESTS).as_posix(): twice for path in [*_test_modules(), TESTS / "conftest.py"]
                if (twice := defined_twice(path.read_text(encoding="utf-8")))}
    assert len(_test_modules()) > 60
    assert not shadowed, f"tests defined twice (only the last runs): {shadowed}"

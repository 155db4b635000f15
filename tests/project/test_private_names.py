"""A leading underscore means "this file's own": no module of the package reads another's private name,
and every exception class of the package is defined in mbutils/base/errors.py.

A name one module needs from another is public there (no underscore), as in scikit-learn; a private
name stays in the file that defines it, so it can change without a search of the package. The
exceptions live in the lowest layer, so that any module can raise or catch any of them.
"""

from __future__ import annotations

import ast
import builtins
import textwrap
from pathlib import Path

import mbutils

PACKAGE = Path(mbutils.__file__).resolve().parent


def package_sources(package: Path = PACKAGE) -> dict[str, str]:
    """Each module's path inside the package (``data/bundle/read.py``) -> its source text."""
    return {p.relative_to(package).as_posix(): p.read_text(encoding="utf-8") for p in sorted(package.rglob("*.py"))}


def module_of(path: str) -> str:
    """``data/bundle/read.py`` -> ``mbutils.data.bundle.read``; a package's ``__init__.py`` is the package."""
    parts = [p for p in path.removesuffix(".py").split("/") if p != "__init__"]
    return ".".join(["mbutils", *parts])


def is_private(name: str) -> bool:
    """One leading underscore (``_name``), not a dunder (``__version__``)."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_uses(sources: dict[str, str]) -> list[str]:
    """Every ``from mbutils.X import _name`` (absolute or relative) and every ``module._name`` read on a module
    of the package, in a file other than the one that defines ``_name``: ``path:line what``."""
    modules = {module_of(path): path for path in sources}
    found = []
    for path, source in sorted(sources.items()):
        self = module_of(path)
        package = self if path.endswith("__init__.py") or path == "__init__.py" else self.rpartition(".")[0]
        tree = ast.parse(source)
        bound: dict[str, str] = {}  # local name -> the package module it names
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(parts + ([target] if target else []))
                if target.split(".")[0] != "mbutils":
                    continue
                for alias in node.names:
                    if f"{target}.{alias.name}" in modules:
                        bound[alias.asname or alias.name] = f"{target}.{alias.name}"
                    elif is_private(alias.name) and target != self:
                        found.append(f"{path}:{node.lineno} imports {alias.name} from {target}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "mbutils":
                        if alias.asname:
                            bound[alias.asname] = alias.name
                        else:
                            bound["mbutils"] = "mbutils"
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and is_private(node.attr)):
                continue
            chain, value = [], node.value
            while isinstance(value, ast.Attribute):
                chain.insert(0, value.attr)
                value = value.value
            if not isinstance(value, ast.Name) or value.id not in bound:
                continue
            module = bound[value.id]
            for part in chain:
                module = f"{module}.{part}" if f"{module}.{part}" in modules else None
                if module is None:
                    break
            if module is not None and module != self:
                found.append(f"{path}:{node.lineno} reads {ast.unparse(node)} (a private name of {module})")
    return found


def test_no_module_imports_a_private_name_of_another():
    sources = package_sources()
    assert len(sources) > 100 and "cli/__init__.py" in sources  # the check reads the real package
    found = private_uses(sources)
    assert not found, ("private names read across files (make the name public where it is defined, or move it "
                       "to its one user):\n" + "\n".join(found))


def test_the_private_name_check_finds_each_kind_of_use():
    sources = {
        "__init__.py": "",
        "base/__init__.py": "",
        "base/tools.py": "_HIDDEN = 1\n\n\ndef _helper():\n    return _HIDDEN\n\n\ndef helper():\n    return _helper()\n",
        "data/__init__.py": "",
        "data/reader.py": textwrap.dedent("""
            import mbutils.base.tools
            import mbutils.base.tools as t
            from mbutils.base import tools
            from mbutils.base.tools import _helper, helper
            from ..base.tools import _HIDDEN


            def read():
                from mbutils.base.tools import _HIDDEN as hidden
                return tools._helper(), t._HIDDEN, mbutils.base.tools._HIDDEN, tools.helper(), hidden, _helper
            """).lstrip("\n"),
        "data/fine.py": "from mbutils.base.tools import helper\n\n_MINE = 2\n\n\ndef f(obj):\n    return obj._x, _MINE\n",
    }
    assert sorted(private_uses(sources)) == sorted([
        "data/reader.py:4 imports _helper from mbutils.base.tools",
        "data/reader.py:5 imports _HIDDEN from mbutils.base.tools",
        "data/reader.py:9 imports _HIDDEN from mbutils.base.tools",
        "data/reader.py:10 reads tools._helper (a private name of mbutils.base.tools)",
        "data/reader.py:10 reads t._HIDDEN (a private name of mbutils.base.tools)",
        "data/reader.py:10 reads mbutils.base.tools._HIDDEN (a private name of mbutils.base.tools)",
    ])
    sources["data/reader.py"] = "from mbutils.base.tools import helper\n"
    assert private_uses(sources) == []


#: The builtin exception classes (``Exception``, ``ValueError``, ``Warning``, ...).
BUILTIN_EXCEPTIONS = {name for name, value in vars(builtins).items()
                      if isinstance(value, type) and issubclass(value, BaseException)}


def exception_classes(sources: dict[str, str]) -> list[str]:
    """Every class of the package deriving from an exception (a builtin one, one of the package's, or a base
    named ``...Error``/``...Exception``/``...Warning`` from elsewhere), nested ones included: ``path:line Name``."""
    classes = []
    for path, source in sorted(sources.items()):
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(b).rpartition(".")[2] for b in node.bases]
                classes.append((path, node.lineno, node.name, bases))
    exceptions, grown = set(BUILTIN_EXCEPTIONS), True
    while grown:  # a subclass of a subclass of an exception is one too
        grown = False
        for _, _, name, bases in classes:
            if name not in exceptions and any(b in exceptions or b.endswith(("Error", "Exception", "Warning"))
                                              for b in bases):
                exceptions.add(name)
                grown = True
    return [f"{path}:{line} {name}" for path, line, name, bases in classes
            if name in exceptions and any(b in exceptions or b.endswith(("Error", "Exception", "Warning"))
                                          for b in bases)]


def test_every_exception_class_is_defined_in_base_errors():
    found = exception_classes(package_sources())
    assert any(f.startswith("base/errors.py:") and f.endswith(" MbutilsError") for f in found)
    elsewhere = [f for f in found if not f.startswith("base/errors.py:")]
    assert not elsewhere, ("exception classes outside mbutils/base/errors.py (define them there; a module may "
                           "re-import one to offer it under its own name):\n" + "\n".join(elsewhere))


def test_the_exception_check_finds_one_elsewhere():
    sources = {
        "base/errors.py": "class MbutilsError(Exception):\n    pass\n",
        "data/reader.py": textwrap.dedent("""
            from mbutils.base import errors
            from mbutils.base.errors import MbutilsError


            class Oops(MbutilsError):
                pass


            class Deeper(Oops):
                pass


            class NotAnError:
                pass


            def f():
                class Local(errors.MbutilsError, ValueError):
                    pass

                class Stop(StopIteration):
                    pass
                return Local, Stop
            """).lstrip("\n"),
    }
    found = exception_classes(sources)
    assert found == ["base/errors.py:1 MbutilsError", "data/reader.py:5 Oops", "data/reader.py:9 Deeper",
                     "data/reader.py:18 Local", "data/reader.py:21 Stop"]

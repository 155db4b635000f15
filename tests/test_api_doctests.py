"""The public API's docstrings: every name in ``mbutils.__all__`` has an example, and every example runs.

The examples are the API reference's (chapters/api.md): they must stay true, so they run
here as doctests, with the results cache in a private folder.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import inspect
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import mbutils
from mbutils.methods.selectors import CLASSES

OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
PUBLIC = [name for name in mbutils.__all__ if name != "__version__"]
#: Modules with examples of their own beyond the public names (helpers the examples cite).
EXTRA_MODULES = ("mbutils", "mbutils.methods.selectors.spec", "mbutils.methods.runs")
#: Methods of the base class a subclass implements or calls, documented in the reference.
SELECTOR_METHODS = ("prepare", "select", "validate_params", "clone", "get_params", "set_params")
#: An example may take this long (seconds; generous for a busy shared machine).
SLOW = 2.0


def _public_object(name: str):
    return getattr(mbutils, name)


def _modules() -> list[str]:
    """Every module that defines a public name, and those with examples of their own."""
    defining = {inspect.getmodule(_public_object(name)).__name__ for name in PUBLIC}
    return sorted(defining | set(EXTRA_MODULES))


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory):
    """One private cache for all examples: the synthetic stand-in is simulated once, not per module.
    The installed harness's task index is read here too: a once-per-process cost (about 5 s) that the
    first example writing a micro-benchmark would otherwise be timed with (and the scan of its configs'
    ``task:`` lines, about a second more)."""
    from mbutils.micro.lm_eval_task import _task_lines, harness_index

    harness_index()
    _task_lines()
    return tmp_path_factory.mktemp("doctest-cache")


@pytest.mark.parametrize("module_name", _modules())
def test_examples_run(module_name, shared_cache, monkeypatch):
    monkeypatch.setenv("MBUTILS_CACHE", str(shared_cache))
    monkeypatch.setenv("MBUTILS_JOBS", "1")
    for name in PUBLIC:  # the public names first: see test_submodules_do_not_shadow_public_names
        _public_object(name)
    module = importlib.import_module(module_name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    # verbose=False: doctest's default is "-v in sys.argv", and `pytest -v` would then report every example.
    runner = doctest.DocTestRunner(verbose=False, optionflags=OPTIONS)
    tests = [t for t in finder.find(module, module_name) if t.examples]
    assert tests, f"{module_name} has no examples"
    # The report goes to the stream the test started with: while an example runs, doctest puts its own
    # buffer in sys.stdout, and a report printed there became the example's output (a failure's details
    # were lost, and under `pytest -v` every example failed).
    report = sys.stdout.write
    slow = []
    for test in tests:
        start = time.perf_counter()
        runner.run(test, out=report)
        seconds = time.perf_counter() - start
        if seconds > SLOW:
            slow.append(f"{test.name} ({seconds:.1f} s)")
    results = runner.summarize(verbose=False)
    assert results.failed == 0, f"{results.failed} of {results.attempted} examples failed in {module_name} (above)"
    assert not slow, f"examples slower than {SLOW:g} s: {', '.join(slow)}"


def _has_example(obj) -> bool:
    doc = inspect.getdoc(obj) or ""
    lines = [line.strip() for line in doc.splitlines()]
    return any(a == "Examples" and b.startswith("---") for a, b in zip(lines, lines[1:])) and ">>>" in doc


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_has_an_example(name):
    obj = _public_object(name)
    assert _has_example(obj), f"mbutils.{name} needs a docstring with an Examples section holding '>>>' lines"


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_selector_class_has_an_example_and_parameters(cls):
    assert _has_example(cls), f"{cls.__name__} needs a docstring with an Examples section"
    assert cls.__name__ in mbutils.__all__, f"{cls.__name__} is not public"
    doc = inspect.getdoc(cls)
    for parameter in cls._parameter_names():  # every constructor parameter is explained
        assert parameter in doc.split("Examples\n")[0], f"{cls.__name__}'s docstring does not explain {parameter!r}"


@pytest.mark.parametrize("method", SELECTOR_METHODS)
def test_selector_methods_have_examples(method):
    assert _has_example(getattr(mbutils.Selector, method)), f"Selector.{method} needs an Examples section"


def test_submodules_do_not_shadow_public_names():
    """Importing a submodule binds it on the package, so a public function named like its module
    (a module named like the function, as ``mbutils/audit.py`` once was) must still be the function once something has
    imported the module (the command line, a test). Checked in a fresh interpreter, where the
    order of imports is known."""
    clashing = [name for name in PUBLIC if importlib.util.find_spec(f"mbutils.{name}") is not None]
    code = ("import importlib, inspect, sys\n"
            f"for name in {clashing!r}:\n"
            "    importlib.import_module('mbutils.' + name)\n"
            "import mbutils\n"
            f"bad = [n for n in {clashing!r} if inspect.ismodule(getattr(mbutils, n))]\n"
            "print(','.join(bad))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(mbutils.__file__).parents[1]),
                                                                    os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    bad = [name for name in out.stdout.strip().split(",") if name]
    assert not bad, (f"after importing the module of the same name, mbutils.{bad[0]} is that module, "
                     f"not the public {bad[0]}: `from mbutils import {bad[0]}` then returns a module")

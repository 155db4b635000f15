"""One word per idea: a function of the methods, data and evaluate layers takes a ``benchmark``, never a
``bench``; the retired keyword still works for one release, with a FutureWarning."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pytest

import mbutils

PACKAGE = Path(mbutils.__file__).resolve().parent


def _functions_taking(word: str, layers=("methods", "data", "evaluate")) -> list[str]:
    found = []
    for layer in layers:
        for path in sorted((PACKAGE / layer).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    args = node.args
                    if word in [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]:
                        found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}")
    return found


def test_no_function_takes_bench():
    assert _functions_taking("bench") == []
    assert _functions_taking("benchmark")  # the scan reads the real tree


def test_the_old_keyword_still_works_with_a_warning(tmp_path):
    from mbutils.data.bundle.write import _write_bundle

    bench = mbutils.simulate(mbutils.BenchmarkSpec(n_models=4, subtasks=(("a", 3, 2),)), seed=0, name="tiny")
    with pytest.warns(FutureWarning, match="'bench' is renamed 'benchmark'"):
        _write_bundle(bench=bench, folder=tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (tmp_path / "again").mkdir()
        _write_bundle(benchmark=bench, folder=tmp_path / "again")
    assert (tmp_path / "responses.csv").read_bytes() == (tmp_path / "again" / "responses.csv").read_bytes()
    with pytest.raises(TypeError, match="got both 'bench' and 'benchmark'"):
        _write_bundle(bench=bench, benchmark=bench, folder=tmp_path)

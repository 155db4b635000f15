"""Caches cannot go stale: result keys follow the code that computes the results."""

from __future__ import annotations

import shutil

from helpers import random_benchmark
from mbutils.methods import experiment
from mbutils.base import fingerprint
from mbutils.methods.protocol import Protocol


def test_an_edited_selector_changes_the_fingerprint_and_a_plot_does_not(tmp_path):
    copy = tmp_path / "mbutils"
    shutil.copytree(fingerprint.PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = fingerprint.source_fingerprint(copy)
    assert before == fingerprint.code_fingerprint()  # the copy is the installed code
    book_before = fingerprint.source_fingerprint(copy, include_downstream=True)

    figure = copy / "book" / "plots" / "base.py"
    figure.write_text(figure.read_text() + "\n# a new colour\n")
    assert fingerprint.source_fingerprint(copy) == before  # presentation: same numbers
    assert fingerprint.source_fingerprint(copy, include_downstream=True) != book_before  # pages re-run

    selector = copy / "methods" / "selectors" / "random_sampling.py"
    selector.write_text(selector.read_text().replace('"""', '"""Edited. ', 1))
    assert fingerprint.source_fingerprint(copy) != before


def test_the_result_cache_key_includes_the_code_fingerprint(monkeypatch):
    bench, protocol = random_benchmark(), Protocol(n_sources=20, n_targets=10, n_runs=1)
    path = experiment.cache_path(bench, protocol, [10], "random")
    monkeypatch.setattr(experiment, "code_fingerprint", lambda: "0123456789abcdef")
    assert experiment.cache_path(bench, protocol, [10], "random") != path


def test_the_experiment_never_imports_a_module_left_out_of_its_fingerprint():
    # Leaving a module out of the results fingerprint is only safe if no result depends on it.
    from helpers import import_graph

    graph = import_graph()
    reached, todo = set(), ["mbutils.methods.experiment", "mbutils.methods.selectors", "mbutils.data.datasets"]
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo.extend(graph.get(name, ()))
    left_out = {"mbutils." + p.removesuffix('.py').replace('/', '.') for p in fingerprint.DOWNSTREAM}
    used = {m for m in reached if any(m == lo or m.startswith(lo + ".") for lo in left_out)}
    assert not used, f"the experiment imports {sorted(used)}, which the fingerprint leaves out"

"""Caches cannot go stale: result keys follow the code that computes the results."""

from __future__ import annotations

import shutil

from helpers import random_benchmark
from mbutils import experiment, fingerprint
from mbutils.protocol import Protocol


def test_an_edited_selector_changes_the_fingerprint_and_a_plot_does_not(tmp_path):
    copy = tmp_path / "mbutils"
    shutil.copytree(fingerprint.PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = fingerprint.source_fingerprint(copy)
    assert before == fingerprint.code_fingerprint()  # the copy is the installed code
    book_before = fingerprint.source_fingerprint(copy, include_presentation=True)

    figure = copy / "plots" / "base.py"
    figure.write_text(figure.read_text() + "\n# a new colour\n")
    assert fingerprint.source_fingerprint(copy) == before  # presentation: same numbers
    assert fingerprint.source_fingerprint(copy, include_presentation=True) != book_before  # pages re-run

    selector = copy / "selectors" / "random_sampling.py"
    selector.write_text(selector.read_text().replace('"""', '"""Edited. ', 1))
    assert fingerprint.source_fingerprint(copy) != before


def test_the_result_cache_key_includes_the_code_fingerprint(monkeypatch):
    bench, protocol = random_benchmark(), Protocol(n_sources=20, n_targets=10, n_runs=1)
    path = experiment.cache_path(bench, protocol, [10], "random")
    monkeypatch.setattr(experiment, "code_fingerprint", lambda: "0123456789abcdef")
    assert experiment.cache_path(bench, protocol, [10], "random") != path

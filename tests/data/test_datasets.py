"""Benchmarks by name (mbutils.data.datasets): their keys, and the stand-in chosen when no real bundle is on
the data path."""

from __future__ import annotations

from conftest import REPO
from mbutils import book
from mbutils.data.datasets import benchmark_key


def test_benchmark_names_and_stand_ins(monkeypatch, tmp_path):
    names = ("gpqa", "synthetic-mmlu-pro", "mmlu-pro-tiger-lab", "mmlu-pro-leaderboard", "bbh-leaderboard", "mmlu", "x")
    assert [benchmark_key(n) for n in names] == ["gpqa", "mmlu-pro", "mmlu-pro", "mmlu-pro", "bbh", "mmlu", "custom"]
    from mbutils.data import datapath

    monkeypatch.setattr(datapath, "REPO_DATA", tmp_path / "empty-data")  # the shipped bundles hidden
    monkeypatch.setenv("MBUTILS_DATA", str(REPO / "no-such-folder"))
    choice = book.resolve_data("gpqa")
    assert choice.kind == "synthetic" and choice.name == "synthetic-gpqa"
    assert choice.reason.startswith("no real GPQA bundle on the data path (MBUTILS_DATA's 1 folder, then the "
                                    "repository's data/; ")
    assert f"{REPO / 'no-such-folder'} (does not exist)" in choice.reason

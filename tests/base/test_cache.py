"""The result cache: concurrent writers, listing and clearing."""

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

from conftest import TESTS
from mbutils.base import cache

SCRIPT = """
import sys
sys.path.insert(0, {tests!r})
from helpers import random_benchmark
from mbutils.methods.experiment import run_experiment
from mbutils.methods.protocol import Protocol
res = run_experiment(random_benchmark(seed=21), ["random", "subtask_equal"], [5, 10],
                     Protocol(n_sources=20, n_targets=10, n_runs=30, seed=1), progress=False)
res.to_parquet(sys.argv[1])
"""


def test_two_processes_computing_the_same_entry(tmp_path):
    env = {**os.environ, "MBUTILS_CACHE": str(tmp_path / "cache")}
    code = SCRIPT.format(tests=str(TESTS))
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path / f"out{i}.parquet")], env=env)
             for i in range(2)]
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    a, b = (pd.read_parquet(tmp_path / f"out{i}.parquet") for i in range(2))
    pd.testing.assert_frame_equal(a, b)
    files = [p for p in (tmp_path / "cache" / "results").iterdir() if not p.name.endswith(".lock")]
    assert len(files) == 2 and not any(p.name.endswith(".tmp") for p in files)


def test_list_and_clear(tmp_path, monkeypatch):
    monkeypatch.setenv("MBUTILS_CACHE", str(tmp_path))
    key = cache.content_key("x")
    cache.atomic_write(cache.entry_path("results", "bench", "random", key, suffix=".parquet"),
                       lambda p: pd.DataFrame({"x": [1]}).to_parquet(p))
    cache.atomic_write(cache.entry_path("synthetic", "synthetic-gpqa", "0", key, suffix=".npz"),
                       lambda p: p.write_bytes(b"123"))
    cache.atomic_write(cache.entry_path("medoids", "fasterpam-2000x10", key, suffix=".npz"),
                       lambda p: p.write_bytes(b"456"))
    listed = cache.list_entries()
    assert sorted(listed["kind"]) == ["medoids", "results", "synthetic"]
    assert cache.clear("medoids") == (1, [])
    assert cache.clear("synthetic") == (1, [])
    assert cache.list_entries()["kind"].tolist() == ["results"]
    assert cache.clear() == (1, []) and cache.list_entries().empty


def test_clear_removes_only_what_the_cache_wrote(tmp_path, monkeypatch):
    """A user's files under the cache folder survive every clear, and are reported, not counted."""
    monkeypatch.setenv("MBUTILS_CACHE", str(tmp_path))
    key = cache.content_key("y")
    entry = cache.entry_path("results", "bench", "random", key, suffix=".parquet")
    cache.atomic_write(entry, lambda p: pd.DataFrame({"x": [1]}).to_parquet(p))
    Path(str(entry) + ".lock").write_text("")
    (tmp_path / f".{entry.name}.abc123.tmp").write_text("")  # not in its kind's folder: not ours
    (entry.parent / f".{entry.name}.abc123.tmp").write_text("half")  # an interrupted write: ours
    mine = [tmp_path / "p" / "thesis.tex", tmp_path / "results" / "mine" / "paper.csv",
            tmp_path / "results" / "notes.parquet", tmp_path / "synthetic" / f"x-{key}.parquet"]
    for path in mine:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("keep me")
    removed, left = cache.clear("results")
    assert removed == 1 and not entry.exists() and not Path(str(entry) + ".lock").exists()
    assert not (entry.parent / f".{entry.name}.abc123.tmp").exists()
    assert all(p.read_text() == "keep me" for p in mine)
    assert set(left) == {tmp_path / "results" / "mine" / "paper.csv", tmp_path / "results" / "notes.parquet"}
    removed, left = cache.clear()
    assert removed == 0 and all(p.exists() for p in mine) and set(mine) <= set(left)


def test_atomic_write_leaves_nothing_on_failure(tmp_path):
    def broken(path):
        path.write_text("half")
        raise RuntimeError("disk full")

    try:
        cache.atomic_write(tmp_path / "x.parquet", broken)
    except RuntimeError:
        pass
    assert list(tmp_path.iterdir()) == []


def test_cache_clear_on_the_command_line_says_what_it_left(tmp_path, monkeypatch):
    from helpers import run_cli

    monkeypatch.setenv("MBUTILS_CACHE", str(tmp_path))
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "thesis.tex").write_text("x")
    code, _, err = run_cli("cache", "clear")
    assert code == 0 and (tmp_path / "p" / "thesis.tex").read_text() == "x"
    assert "removed 0 entries" in err and "left 1 files the cache did not write (p/thesis.tex)" in err

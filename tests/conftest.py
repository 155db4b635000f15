"""Shared fixtures: the real data shipped in data/, a private cache per session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# Timings on a shared 2-core machine vary; correctness, not speed, is what these tests check.
settings.register_profile("mbutils", deadline=None, derandomize=True)
settings.load_profile("mbutils")

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """Tests never read or pollute the user's caches: mbutils' results, and matplotlib's font
    list (a list left by another installation names font files that are gone, and matplotlib
    then logs 'findfont' lines to stderr in every chapter kernel)."""
    names = ("MBUTILS_CACHE", "MPLCONFIGDIR")
    old = {name: os.environ.get(name) for name in names}
    os.environ["MBUTILS_CACHE"] = str(tmp_path_factory.mktemp("mbutils-cache"))
    os.environ["MPLCONFIGDIR"] = str(tmp_path_factory.mktemp("matplotlib"))
    yield
    for name, value in old.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def real_bundle(name: str) -> Path:
    """Path of a real bundle shipped in the repository's data/ (its absence is a failure)."""
    path = REPO / "data" / name
    if not (path / "responses.csv.gz").is_file():
        pytest.fail(f"real bundle {name!r} is not in {REPO / 'data'}; the repository ships it")
    return path


def real_table(name: str, file: str = "responses.csv") -> Path:
    """The stored file (plain or gzipped) of a shipped bundle, for tests that read it with pandas."""
    from mbutils.data.bundle.read import stored_file

    return stored_file(real_bundle(name), file)

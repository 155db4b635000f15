"""Shared fixtures: real data from $MBUTILS_DATA when present, a private cache per session."""

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
    """Path of a real bundle on $MBUTILS_DATA; CI sets it, so absence is a failure there."""
    for root in filter(None, os.environ.get("MBUTILS_DATA", "").split(os.pathsep)):
        path = Path(root) / name
        if (path / "responses.csv").exists():
            return path
    if os.environ.get("CI"):
        pytest.fail(f"real bundle {name!r} not found on MBUTILS_DATA in CI")
    pytest.skip(f"real bundle {name!r} not on MBUTILS_DATA")

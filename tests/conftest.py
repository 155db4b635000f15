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
    """Tests never read or pollute the user's cache."""
    old = os.environ.get("MBUTILS_CACHE")
    os.environ["MBUTILS_CACHE"] = str(tmp_path_factory.mktemp("mbutils-cache"))
    yield
    if old is None:
        os.environ.pop("MBUTILS_CACHE", None)
    else:
        os.environ["MBUTILS_CACHE"] = old


def real_bundle(name: str) -> Path:
    """Path of a real bundle on $MBUTILS_DATA; CI sets it, so absence is a failure there."""
    for root in filter(None, os.environ.get("MBUTILS_DATA", "").split(os.pathsep)):
        path = Path(root) / name
        if (path / "responses.csv").exists():
            return path
    if os.environ.get("CI"):
        pytest.fail(f"real bundle {name!r} not found on MBUTILS_DATA in CI")
    pytest.skip(f"real bundle {name!r} not on MBUTILS_DATA")

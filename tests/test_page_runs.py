"""How many book pages run at once (mbutils.book.page_runs); the full build is checked in
tests/test_book_browser.py, whose build log must show no page executed one by one."""

from __future__ import annotations

import pytest

from mbutils.book.page_runs import PAGES_ENV, pages_at_once


def test_two_pages_at_once_by_default_and_never_more_than_the_cores(monkeypatch):
    monkeypatch.delenv(PAGES_ENV, raising=False)
    monkeypatch.setattr("os.cpu_count", lambda: 8)
    assert pages_at_once() == 2
    monkeypatch.setattr("os.cpu_count", lambda: 1)
    assert pages_at_once() == 1
    monkeypatch.setattr("os.cpu_count", lambda: None)
    assert pages_at_once() == 1


@pytest.mark.parametrize("value,expected", [("1", 1), ("3", 3), (" 4 ", 4)])
def test_the_environment_sets_the_pages_at_once(monkeypatch, value, expected):
    monkeypatch.setenv(PAGES_ENV, value)
    assert pages_at_once() == expected


@pytest.mark.parametrize("value", ["0", "-2", "two", "1.5"])
def test_a_bad_count_is_refused_with_the_variable_named(monkeypatch, value):
    monkeypatch.setenv(PAGES_ENV, value)
    with pytest.raises(ValueError, match=f"{PAGES_ENV}=.*whole number"):
        pages_at_once()

"""Chapter parameters as papermill passes them (mbutils.book.params): lists of sizes and names, whole
numbers, cases."""

from __future__ import annotations

import pytest

from mbutils import book
from mbutils.base.errors import BookError
from mbutils.book.params import parse_cases


def test_parameter_lists():
    assert book.int_list("10, 25,50") == [10, 25, 50] and book.int_list(None) is None
    assert book.int_list([5]) == [5] and book.int_list(7) == [7]
    with pytest.raises(BookError, match="parameter 'sizes': expected whole numbers"):
        book.int_list("10,x")
    with pytest.raises(BookError, match="parameter 'sizes': expected whole numbers"):
        book.int_list("10,2.5")
    from mbutils.book.params import optional_int

    assert optional_int("3", "runs") == 3 and optional_int(3.0, "runs") == 3 and optional_int(None, "runs") is None
    for bad in (2.9, float("inf"), 1e999, float("nan"), "abc", "2.9", True):
        with pytest.raises(BookError, match="parameter 'runs': expected a whole number"):
            optional_int(bad, "runs")
    assert book.name_list("a, b") == ["a", "b"] and book.name_list("None") is None
    assert parse_cases("gpqa:7b_instruct, bbh:x") == [("gpqa", "7b_instruct"), ("bbh", "x")]

"""The analysis tables the chapters show (mbutils.book.findings.reports): the items needed per gap, the share of
pairs closer than the MDAD, and the pairs float binning loses."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import mdad_rows
from mbutils import book


def test_items_needed_reads_the_table_correctly():
    mdad = mdad_rows([("random", 10, 12.0), ("random", 50, 4.0), ("random", 100, 2.5),
                  ("anchor_points", 10, 8.0), ("anchor_points", 50, 3.0), ("anchor_points", 100, np.nan)])
    mdad["ci_low"], mdad["ci_high"] = mdad["mdad"] - 1, mdad["mdad"] + 1  # upper ends 13, 5, 3.5 / 9, 4, -
    need = book.items_needed({"B": mdad}, [1, 3, 10])
    random_row = need.set_index("selector").loc["Random"]
    assert random_row.tolist() == ["B", "no", "> 100", "> 100", "50 (MDAD 4 [3, 5])"]
    anchor = need.set_index("selector").loc["Anchor Points"]
    assert anchor["needs source models"] == "yes" and anchor["10 pts"] == "> 100"  # not reached at 100
    assert [c["size"] for c in need.attrs["cells"]] == [None, None, 50, None, None, None]


def test_share_of_pairs_closer_than_mdad():
    mdad = mdad_rows([("random", 10, 4.5), ("random", 25, np.nan)])
    table = book.closer_than_mdad("b", "s", np.array([0.30, 0.31, 0.35, 0.50]), mdad)
    assert table["share closer than MDAD"].tolist() == [pytest.approx(2 / 6), 1.0]


def test_float_binning_loses_pairs_on_bin_edges():
    n = np.array([224])
    diff = np.arange(0, 225)[None, :]
    from mbutils.evaluate.pair_metrics import gap_bins

    exact, approx = gap_bins(diff, n), book.float_gap_bins(diff, n)
    assert (approx <= exact).all()
    assert (exact == (200 * diff) // 224).all()
    # edges where 200*d/224 is an integer: exactly d = 28, 56, ... ; float may floor one lower
    assert set(np.flatnonzero(approx != exact)) <= set(range(0, 225, 28))

"""How chapters show tables (mbutils.book.display): display names and headers, 'not reached', MDADs
formatted only where known, CI bounds floored at 0 with a note, and CSV downloads."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from helpers import mdad_rows
from mbutils.base import names as styles
from mbutils.book import display
from mbutils.book.display import download_link, pretty
from mbutils.base.names import column_label
from mbutils.base.tables import NOT_REACHED


def test_pretty_spells_not_reached_and_uses_display_names():
    shown = pretty(mdad_rows([("anchor_points", 10, np.nan), ("random", 10, 2.5)]))
    assert shown["selector"].tolist() == ["Anchor Points", "Random"]
    assert shown["MDAD"].tolist() == ["not reached", "2.5"]  # the display name of the column


def test_download_link_embeds_the_csv():
    import base64

    link = download_link(pd.DataFrame({"a": [1, 2]}), "x.csv")
    payload = re.search(r"base64,([^\"]+)", link).group(1)
    assert base64.b64decode(payload).decode() == "a\n1\n2\n"
    assert 'download="x.csv"' in link


def test_pretty_names_headers_and_booleans():
    table = pd.DataFrame({"selector": ["random", "anchor_points"], "size": [10, 10], "mdad": [np.nan, 2.5],
                          "run_ci_low": [np.nan, 1.0], "tau_sd": [0.1234, 0.2], "n_pairs": [10, 12],
                          "reached": [False, True], "target set": ["7b_instruct", "70b_base"]})
    shown = display.pretty(table)
    assert list(shown.columns) == ["selector", "k", "MDAD", "run CI low", "τ s.d.", "pairs", "reached", "target set"]
    assert shown["selector"].tolist() == ["Random", "Anchor Points"]
    assert shown["MDAD"].tolist() == ["not reached", "2.5"]
    assert shown["run CI low"].tolist() == ["not reached", "1"]
    assert shown["τ s.d."].tolist() == [0.12, 0.2]
    assert shown["reached"].tolist() == ["no", "yes"]
    assert shown["target set"].tolist() == ["7B instruct", "70B base"]


def test_pretty_formats_mdads_only_where_known_or_told():
    table = pd.DataFrame({"benchmark": ["a", "b"], "method": [np.nan, 3.0], "random": [4.0, np.nan]})
    plain = display.pretty(table)  # 'method' and 'random' are just names: no MDAD formatting guessed
    assert plain["method"].isna().tolist() == [True, False] and plain["random"].tolist()[0] == 4.0
    told = display.pretty(table, mdad_columns=["method", "random"])
    assert told["method"].tolist() == ["not reached", "3"] and told["random"].tolist() == ["4", "not reached"]
    table.attrs["mdad_columns"] = ["method"]
    assert display.pretty(table)["method"].tolist() == ["not reached", "3"]


def test_negative_lower_ci_bounds_show_as_zero_with_a_note(monkeypatch):
    table = pd.DataFrame({"selector": ["random"] * 2, "mdad": [1.5, 3.0], "ci_low": [-4.5, 1.0],
                          "ci_high": [7.5, 5.0]})
    shown = display.pretty(table)
    assert shown["CI low"].tolist() == ["0" + display.CI_FLOOR_MARK, "1"]
    assert shown["CI high"].tolist() == ["7.5", "5"]
    assert shown.attrs["footnotes"] == [display.CI_FLOOR_NOTE]
    assert "footnotes" not in display.pretty(table.assign(ci_low=[0.5, 1.0])).attrs
    assert display.mdad_cell(-0.001, 2) == "0" and display.mdad_cell(-1.0, lower_bound=True) == "0*"
    assert styles.ci_bound_text(-4.5, lower=True) == "0*" and styles.ci_bound_text(-4.5) == "-4.5"
    assert styles.ci_floored("0*") and not styles.ci_floored("0") and not styles.ci_floored(0.0)
    html_out = []
    monkeypatch.setattr(display, "display", html_out.append)
    display.table(table, caption="MDAD.")
    assert "0*" in html_out[0].data and "shown as 0" in html_out[0].data


def test_an_upper_ci_bound_that_does_not_close_reads_open_and_a_missing_mdad_not_reached():
    """A thin pool widens the interval to [0, open] (ci_high NaN): the table says 'open', not 'not reached'."""
    table = pd.DataFrame({"selector": ["random", "anchor_points"], "mdad": [np.nan, 2.5], "ci_low": [np.nan, 0.0],
                          "ci_high": [np.nan, np.nan], "run_ci_high": [4.0, np.nan]})
    shown = display.pretty(table)
    assert shown["MDAD"].tolist() == [NOT_REACHED, "2.5"]
    assert shown["CI high"].tolist() == [display.OPEN_BOUND, display.OPEN_BOUND]
    assert shown[column_label("run_ci_high")].tolist() == ["4", display.OPEN_BOUND]

"""The paper's published tables in our conventions, and the comparisons built on them."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mbutils.data import datapath
from mbutils.evaluate import noise
from mbutils.book.findings import paper_comparison as pc
from mbutils.book.findings import paper_results as pr

HEADER = ",Technique,Number of source models,Split,Fraction of sampled points,MDAD,MDAD lower CI,MDAD upper CI\n"


def real_folder() -> Path:
    """The paper-results folder shipped in the repository's data/ (its absence is a failure)."""
    found = pr.find_folder()
    if found is None:
        pytest.fail("paper-results not found on the data path; the repository ships it in data/")
    return found


def tiny_folder(tmp_path: Path, rows: str) -> Path:
    folder = tmp_path / "data" / pr.FOLDER
    folder.mkdir(parents=True)
    (folder / "gpqa-mdad-results.csv").write_text(HEADER + rows)
    return folder


def table(rows) -> pd.DataFrame:
    """An MDAD table from (selector, size, mdad, ci_low, ci_high) tuples."""
    return pd.DataFrame(rows, columns=["selector", "size", "mdad", "ci_low", "ci_high"]).astype(
        {"mdad": float, "ci_low": float, "ci_high": float})


# ----------------------------------------------------------------------- finding
def test_folder_found_on_the_data_path_in_order(tmp_path, monkeypatch):
    monkeypatch.setattr(datapath, "REPO_DATA", tmp_path / "repo-data")
    (tmp_path / "a").mkdir()
    (tmp_path / "b" / pr.FOLDER).mkdir(parents=True)
    (tmp_path / "c" / pr.FOLDER).mkdir(parents=True)
    monkeypatch.setenv("MBUTILS_DATA", os.pathsep.join(str(tmp_path / x) for x in "abc"))
    assert pr.find_folder() == tmp_path / "b" / pr.FOLDER


def test_absent_folder_is_none_or_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(datapath, "REPO_DATA", tmp_path / "repo-data")
    monkeypatch.setenv("MBUTILS_DATA", str(tmp_path))
    assert pr.find_folder() is None
    with pytest.raises(pr.PaperResultsError, match="no 'paper-results' folder"):
        pr.require_folder()
    with pytest.raises(pr.PaperResultsError, match="no 'paper-results' folder"):
        pr.mdad("gpqa")


def test_unknown_benchmark_and_missing_file_are_named(tmp_path):
    folder = tiny_folder(tmp_path, "")
    with pytest.raises(pr.PaperResultsError, match="no results for 'hellaswag'"):
        pr.mdad("hellaswag", folder)
    with pytest.raises(pr.PaperResultsError, match="bbh-mdad-results.csv is missing"):
        pr.mdad("bbh", folder)


# ----------------------------------------------------------------------- reading
def test_sentinel_becomes_not_reached_and_fractions_become_points(tmp_path):
    folder = tiny_folder(tmp_path, "0,Random (uniform),300,seen,10,0.095,0.08500000000000002,0.105\n"
                                   "1,tinyBenchmarks,300,seen,10,0.5,0.195,0.805\n"
                                   "2,Anchor Points,300,seen,10,0.18,-0.14,0.5\n"
                                   "3,Diversity,300,unseen,25,0.06,0.05,0.07\n")
    m = pr.mdad("gpqa", folder).set_index(["selector", "split"])
    assert m.loc[("random", "seen"), ["mdad", "ci_low", "ci_high"]].tolist() == [9.5, 8.5, 10.5]
    tiny = m.loc[("tinybenchmarks", "seen")]
    assert not tiny["reached"] and np.isnan([tiny["mdad"], tiny["ci_low"], tiny["ci_high"]]).all()
    anchor = m.loc[("anchor_points", "seen")]  # upper bound = sentinel: open, lower floored at 0
    assert anchor["reached"] and anchor["mdad"] == 18.0 and anchor["ci_low"] == 0.0 and np.isnan(anchor["ci_high"])
    at = pr.mdad_at("gpqa", 300, "seen", folder)
    assert list(at.columns) == ["selector", "size", "mdad", "ci_low", "ci_high", "reached"]
    assert len(at) == 3
    with pytest.raises(pr.PaperResultsError, match="no rows for 50 sources"):
        pr.mdad_at("gpqa", 50, "seen", folder)


def test_unknown_technique_is_an_error(tmp_path):
    folder = tiny_folder(tmp_path, "0,Magic,300,seen,10,0.1,0.09,0.11\n")
    with pytest.raises(pr.PaperResultsError, match="unknown technique"):
        pr.mdad("gpqa", folder)


def test_known_values_of_the_released_gpqa_table():
    folder = real_folder()
    m = pr.mdad_at("gpqa", 300, "seen", folder).set_index(["selector", "size"])
    assert m.loc[("random", 10), ["mdad", "ci_low", "ci_high"]].tolist() == [25.5, 18.0, 33.0]
    assert m.loc[("anchor_points", 10), "mdad"] == 6.5
    assert m.loc[("diversity", 25), ["mdad", "ci_low", "ci_high"]].tolist() == [9.0, 8.0, 10.0]
    assert len(m) == 6 * 5 and m["reached"].all()
    full = pr.mdad("gpqa", folder)
    assert len(full) == 420 and (~full["reached"]).sum() == 1  # the one sentinel in the file
    bad = full[~full["reached"]].iloc[0]
    assert (bad["selector"], bad["n_sources"], bad["split"], bad["size"]) == ("tinybenchmarks", 200, "unseen", 10)
    assert set(full["selector"]) == set(pr.SELECTOR_NAMES.values()) - {"subtask_proportional"}


def test_known_values_of_the_released_estimation_tables():
    folder = real_folder()
    est = pr.estimation("gpqa", folder)
    assert est.loc[0, "error_seen"] == pytest.approx(17.623214285714284)
    runs = pr.estimation_summary("gpqa", 300, folder).set_index(["selector", "size"])["n_runs"]
    # run counts differ by technique in the released tables
    assert runs[("random", 10)] == 50 and runs[("diversity", 10)] == 40 and runs[("subtask_proportional", 10)] == 10
    bbh = pr.mdad_at("bbh", 300, "seen", folder).set_index(["selector", "size"])
    assert bbh.loc[("anchor_points", 10), "mdad"] == 6.0 and bbh.loc[("random", 10), "mdad"] == 21.5
    assert pr.paper_source_count(60, "gpqa", folder) == 300 and pr.paper_source_count(50, "gpqa", folder) == 50


# ----------------------------------------------------------------------- comparisons
def test_side_by_side_flags_exactly_the_disjoint_intervals():
    ours = table([("random", 10, 20.0, 15.0, 25.0),    # overlaps [24, 30]
                  ("random", 25, 10.0, 9.0, 11.0),     # disjoint from [12, 14]
                  ("diversity", 10, np.nan, np.nan, np.nan),   # not reached vs open upper end: overlap
                  ("diversity", 25, np.nan, np.nan, np.nan),   # not reached vs closed interval: disjoint
                  ("anchor_points", 10, 5.0, np.nan, np.nan),  # no CI: the point 5, inside [4, 6]
                  ("extra", 10, 1.0, 0.5, 1.5)])               # only ours: dropped
    paper = table([("random", 10, 27.0, 24.0, 30.0), ("random", 25, 13.0, 12.0, 14.0),
                   ("diversity", 10, 12.0, 8.0, np.nan), ("diversity", 25, 12.0, 8.0, 16.0),
                   ("anchor_points", 10, 5.0, 4.0, 6.0)])
    out = pc.side_by_side(ours, paper).set_index(["selector", "size"])
    assert len(out) == 5
    assert out["overlap"].to_dict() == {("random", 10): True, ("random", 25): False, ("diversity", 10): True,
                                        ("diversity", 25): False, ("anchor_points", 10): True}
    assert out.loc[("random", 25), "difference"] == -3.0
    dis = pc.disagreements(out.reset_index()).set_index(["selector", "size"])["direction"]
    assert dis.to_dict() == {("random", 25): "ours lower", ("diversity", 25): "one not reached"}


def test_touching_intervals_overlap():
    ours, paper = table([("random", 10, 10.0, 8.0, 12.0)]), table([("random", 10, 14.0, 12.0, 16.0)])
    assert pc.side_by_side(ours, paper)["overlap"].item()


CONSTRUCTED = table([
    ("random", 10, 20.0, 15.0, 25.0), ("random", 25, 12.0, 10.0, 14.0), ("random", 100, 5.0, 4.0, 6.0),
    ("random", 250, 3.0, 2.5, 3.5),
    ("anchor_points", 10, 8.0, 6.0, 10.0), ("anchor_points", 25, 6.0, 5.0, 7.0),
    ("anchor_points", 100, 4.5, 4.0, 5.0), ("anchor_points", 250, 3.0, 2.0, 4.0),
    ("diversity", 10, 8.0, 7.0, 9.0), ("diversity", 25, 9.0, 8.0, 10.0),
    ("diversity", 100, 4.0, 3.0, 4.5), ("diversity", 250, np.nan, np.nan, np.nan),
])


def test_best_methods_name_a_method_only_beyond_the_noise():
    # intervals extended up by 0.5: at k = 10 anchor [6, 10.5] and diversity [7, 9.5] overlap;
    # at k = 25 anchor [5, 7.5] lies below diversity [8, 10.5] and random [10, 14.5]
    best = pc.best_methods(CONSTRUCTED, max_size=25)
    assert best["size"].tolist() == [10, 25]
    assert best["best"].tolist() == ["none beyond noise", "anchor_points"]
    assert best["mdad"].tolist() == [8.0, 6.0]


def test_random_catch_up_needs_every_larger_size():
    # the unpaired difference's upper bound is random's upper end + 0.5 minus the other's lower end: at k = 100
    # 6.5 - 4 = 2.5 against anchor and 6.5 - 3 = 3.5 against diversity, above the 2-point margin; at k = 250
    # 4 - 2 = 2.0 against anchor, and diversity is not reached: random catches up from 250 only
    assert noise.random_within_ci_from(CONSTRUCTED) == 250
    assert noise.random_within_ci_from(CONSTRUCTED, margin=3.5) == 100
    tighter = CONSTRUCTED.copy()
    tighter.loc[(tighter["selector"] == "random") & (tighter["size"] == 100), ["mdad", "ci_low", "ci_high"]] = [4.0, 3.5, 4.5]
    tighter.loc[(tighter["selector"] == "diversity") & (tighter["size"] == 100), ["ci_low"]] = 3.5
    assert noise.random_within_ci_from(tighter) == 100  # 5 - 4 = 1.0 and 5 - 3.5 = 1.5
    # a dip back above another method's interval at the largest size means "never"
    worse = CONSTRUCTED.copy()
    worse.loc[(worse["selector"] == "random") & (worse["size"] == 250), ["mdad", "ci_low", "ci_high"]] = [6.0, 5.5, 6.5]
    assert noise.random_within_ci_from(worse) is None


def test_reaching_a_level_and_the_conclusion_table():
    reach = pc.reaching(CONSTRUCTED, 4.0).set_index("selector")["first_size"]
    assert reach["random"] == 250 and reach["diversity"] == 100 and reach["anchor_points"] == 250
    assert np.isnan(pc.reaching(CONSTRUCTED, 2.0).set_index("selector")["first_size"]).all()
    other = CONSTRUCTED.copy()
    other.loc[other["selector"] == "anchor_points", ["mdad", "ci_low", "ci_high"]] += 10.0
    cmp = pc.compare_conclusions(other, CONSTRUCTED, level=4.0).set_index("question")
    assert cmp.loc["best at k = 10", "paper"] == "none beyond noise"
    assert cmp.loc["best at k = 10", "ours"] == "diversity"  # [7, 9.5] below random [15, 25.5], anchor [16, 20.5]
    assert cmp.loc["best at k = 25", "paper"] == "anchor_points"
    assert cmp.loc["best at k = 25", "ours"] == "none beyond noise"  # diversity [8, 10.5] meets random [10, 14.5]
    assert not cmp.loc["best at k = 25", "same answer"]
    assert cmp.loc["any method reaches MDAD <= 4 points at some k", "same answer"]
    assert cmp.loc["any method reaches MDAD <= 4 points at k <= 25", "ours"] == "no"


def test_conclusions_compare_only_common_cells():
    ours = CONSTRUCTED[CONSTRUCTED["size"] <= 100]   # we did not run k = 250
    cmp = pc.compare_conclusions(ours, CONSTRUCTED).set_index("question")
    key = "random within 2 points of every method (noise rule) from k ="
    assert cmp.loc[key, "paper"] == "never" and cmp.loc[key, "same answer"]  # 250 is not common
    wider = pc.compare_conclusions(ours, CONSTRUCTED).set_index("question")
    assert wider.loc[key, "ours"] == "never"
    smaller = CONSTRUCTED[CONSTRUCTED["size"] <= 25]
    assert pc.compare_conclusions(smaller, CONSTRUCTED).set_index("question").loc[key, "paper"] == "never"

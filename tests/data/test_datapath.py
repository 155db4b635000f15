"""The data path (mbutils.data.datapath): MBUTILS_DATA's folders first, then the repository's data/;
relative entries pinned where they were given; a missing folder named once."""

from __future__ import annotations

import os

import pytest

from conftest import REPO
from mbutils.data import datapath
from mbutils.data.bundle import find_bundle, list_bundles

DATA = REPO / "data"


def test_the_repository_data_folder_is_always_searched_after_mbutils_data(tmp_path, monkeypatch):
    mine = tmp_path / "mine" / "gpqa"
    mine.mkdir(parents=True)
    (mine / "responses.csv").write_text("model,q1\na,1\nb,0\n")
    (mine / "items.csv").write_text("item,subtask\nq1,s\n")
    monkeypatch.setenv("MBUTILS_DATA", str(tmp_path / "mine"))
    assert find_bundle("gpqa") == mine.resolve()  # the reader's own bundle wins
    assert list_bundles()["bbh-leaderboard"] == (DATA / "bbh-leaderboard").resolve()
    monkeypatch.setenv("MBUTILS_DATA", "")
    assert find_bundle("gpqa") == (DATA / "gpqa").resolve()


def test_relative_entries_are_pinned_to_the_folder_they_were_given_in(tmp_path, monkeypatch):
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MBUTILS_DATA", os.pathsep.join(["here", "nowhere"]))
    pinned = datapath.pin_environment()
    assert pinned.split(os.pathsep) == [str(tmp_path / "here"), str(tmp_path / "nowhere")]
    monkeypatch.chdir(REPO / "chapters")  # a kernel's working directory
    assert [f.path for f in datapath.data_folders()][:2] == [tmp_path / "here", tmp_path / "nowhere"]
    text = datapath.describe_data_path()
    assert text.count("does not exist") == 1 and f"{tmp_path / 'nowhere'} (does not exist)" in text
    assert str(DATA) in text


def test_a_missing_folder_is_named_once_in_the_not_found_message(tmp_path, monkeypatch):
    monkeypatch.setenv("MBUTILS_DATA", str(tmp_path / "absent"))
    from mbutils.base.errors import BundleError

    with pytest.raises(BundleError) as err:
        find_bundle("no-such-bundle")
    message = str(err.value)
    assert message.count(f"{tmp_path / 'absent'} (does not exist)") == 1
    assert message.count(str(tmp_path / "absent")) == 1
    assert str(DATA) in message and "gpqa" in message  # what is available, from the repository

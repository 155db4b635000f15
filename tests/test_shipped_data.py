"""The real results shipped in data/: lossless, compact, documented, and read as they are stored."""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import json
import os
from pathlib import Path

import pytest

from conftest import REPO
from mbutils.data import datapath
from mbutils.data.bundle import find_bundle, list_bundles, load_bundle, validate_bundle

DATA = REPO / "data"
SHIPPED = ("gpqa", "bbh-leaderboard", "mmlu-pro-leaderboard", "mmlu-pro-tiger-lab", "paper-results")
#: Where the bundles were delivered to the team; absent in a user's clone.
DELIVERED = REPO.parent / "shared" / "data"
#: Expected shapes (models x items, subtasks), from the delivery's own description.
SHAPES = {"gpqa": (420, 448, 1), "bbh-leaderboard": (78, 5761, 24), "mmlu-pro-leaderboard": (40, 12032, 14),
          "mmlu-pro-tiger-lab": (29, 12032, 14)}


def provenance(name: str) -> dict:
    return json.loads((DATA / name / "provenance.json").read_text(encoding="utf-8"))


def unpacked(name: str, file: str) -> bytes:
    stored = DATA / name / provenance(name)["files"][file]["stored_as"]
    data = stored.read_bytes()
    return gzip.decompress(data) if stored.suffix == ".gz" else data


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_file_unpacks_to_the_bytes_its_provenance_records(name):
    record = provenance(name)
    assert record["source"] and record["licence"] and record["derived"]
    on_disk = {p.name for p in (DATA / name).iterdir()} - {"provenance.json"}
    assert on_disk == {f["stored_as"] for f in record["files"].values()}
    for file, info in record["files"].items():
        data = unpacked(name, file)
        assert len(data) == info["bytes"] and hashlib.sha256(data).hexdigest() == info["sha256"], file


@pytest.mark.skipif(not DELIVERED.is_dir(), reason="the delivery folder is not beside this clone (a user's clone)")
@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_copies_equal_the_delivered_files_byte_for_byte(name):
    delivered = {p.name for p in (DELIVERED / name).iterdir() if p.is_file()}
    assert delivered == set(provenance(name)["files"])
    for file in delivered:
        assert unpacked(name, file) == (DELIVERED / name / file).read_bytes(), file
    if name in SHAPES:
        assert load_bundle(DATA / name, missing="drop_models").content_hash == \
            load_bundle(DELIVERED / name, missing="drop_models").content_hash


@pytest.mark.parametrize("name", SHAPES)
def test_shipped_bundles_load_by_name_with_their_shape_and_recorded_hash(name, monkeypatch):
    monkeypatch.delenv("MBUTILS_DATA", raising=False)
    assert find_bundle(name) == (DATA / name).resolve()
    models, items, subtasks = SHAPES[name]
    problems = validate_bundle(name)
    assert [p for p in problems if p.severity == "error"] == []
    bench = load_bundle(name, missing="drop_models")
    assert bench.n_items == items and len(bench.subtask_names) == subtasks
    assert bench.n_models == models - (3 if name == "mmlu-pro-tiger-lab" else 0)
    assert bench.content_hash == provenance(name)["content_hash"]


def test_the_shipped_data_stays_small():
    total = sum(p.stat().st_size for p in DATA.rglob("*") if p.is_file())
    assert total < 5 * 2**20, f"data/ holds {total:,} bytes"


def test_data_readme_gives_each_bundle_its_source_licence_shape_and_hash():
    spec = importlib.util.spec_from_file_location("pack", DATA / "pack.py")
    pack = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pack)
    assert set(pack.SOURCES) == set(SHIPPED)
    readme = (DATA / "README.md").read_text(encoding="utf-8")
    block = readme.split(pack.START, 1)[1].split(pack.END, 1)[0]
    assert block == "\n" + pack.shipped_table(DATA)  # the section is the provenance records, current
    for name in SHIPPED:
        record = provenance(name)
        assert f"### `{name}`" in block and record["licence"] in block
        assert all(info["sha256"] in block for info in record["files"].values())


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

"""The real results shipped in data/: lossless, compact, documented, and read as they are stored."""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import json

import pytest

from conftest import REPO
from mbutils.data.bundle import find_bundle, load_bundle, validate_bundle

DATA = REPO / "data"
SHIPPED = ("gpqa", "bbh-leaderboard", "mmlu-pro-leaderboard", "musr-leaderboard", "math-hard-leaderboard",
           "ifeval-leaderboard", "mmlu-pro-tiger-lab", "paper-results")
#: Where the bundles were delivered to the team; absent in a user's clone.
DELIVERED = REPO.parent / "shared" / "data"
#: Expected shapes (models x items, subtasks), from the delivery's own description.
SHAPES = {"gpqa": (420, 448, 1), "bbh-leaderboard": (78, 5761, 24), "mmlu-pro-leaderboard": (40, 12032, 14),
          "mmlu-pro-tiger-lab": (29, 12032, 14), "musr-leaderboard": (78, 756, 3),
          "math-hard-leaderboard": (81, 1324, 7), "ifeval-leaderboard": (81, 541, 1)}


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


def test_repacking_keeps_the_provenance_keys_packing_does_not_compute(tmp_path):
    """lm_eval, answer_options and any other key already in provenance.json survive a re-pack; the
    computed files record is replaced by the new one."""
    spec = importlib.util.spec_from_file_location("pack", DATA / "pack.py")
    pack = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pack)
    source, target = tmp_path / "source", tmp_path / "target"
    source.mkdir()
    target.mkdir()
    (source / "items.csv").write_text("item,subtask\na,s\n", encoding="utf-8")
    old = {"title": "old title", "lm_eval": {"tasks": {"s": "leaderboard_s"}, "metric": "acc_norm"},
           "answer_options": {"a": 4}, "someone_elses": [1, 2], "files": {"gone.csv": {"bytes": 1}}}
    (target / "provenance.json").write_text(json.dumps(old), encoding="utf-8")
    record = pack.pack_folder(source, target, {"title": "new title", "source": "s", "licence": "MIT", "derived": "d"})
    written = json.loads((target / "provenance.json").read_text(encoding="utf-8"))
    assert written == record
    assert written["lm_eval"] == old["lm_eval"] and written["answer_options"] == {"a": 4}
    assert written["someone_elses"] == [1, 2] and written["title"] == "new title"
    assert set(written["files"]) == {"items.csv"}
    assert gzip.decompress((target / "items.csv.gz").read_bytes()) == b"item,subtask\na,s\n"

"""Hardening IV, the shipped micro-benchmarks on the command line: one test (or more) per defect.

1. shipped data is verified against the SHA-256 the package carries, never sealed again;
2. one check of a micro-benchmark's values wherever it is read (shipped records and written folders);
3. the cache's copy is keyed on every file it is written from, rewritten when it fails its check, and
   ``cache clear`` removes it;
4. malformed shipped records and stray folders: a message naming the file, or skipped;
5. ``micro export --out LINK --force``: refused, nothing left behind;
6. a file or folder named like a shipped micro-benchmark does not shadow it;
7. ``micro list`` says which MDAD was measured and which is the planner's prediction.

Every refusal: exit 1, one ``error:`` line naming the file, no traceback, no internal error (70), nothing
written. The shipped data is edited only in temporary copies (the module's ``SHIPPED`` pointed at them)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from helpers import run_command as run, shipped_estimate
from mbutils.base import cache
from mbutils.micro import shipped as micro_shipped
from mbutils.micro.folder import read_micro
from mbutils.micro.shipped import (HASHES, SHIPPED, cache_key, export_shipped, freeze, shipped_folder, record,
                                           shipped_names, thaw, verify, write_hashes)

STAMP = "2026-01-01T00-00-00"


@pytest.fixture(autouse=True, scope="module")
def _package_data_untouched():
    before = {p: p.read_bytes() for p in SHIPPED.rglob("*") if p.is_file()}
    yield
    assert {p: p.read_bytes() for p in SHIPPED.rglob("*") if p.is_file()} == before


@pytest.fixture
def shipped(tmp_path, monkeypatch) -> Path:
    """A temporary copy of the whole shipped data, which the module reads instead of the package's."""
    root = tmp_path / "package" / "shipped_micro"
    shutil.copytree(SHIPPED, root)
    monkeypatch.setattr(micro_shipped, "SHIPPED", root)
    return root


@pytest.fixture
def own_cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("MBUTILS_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def refused(result, *names: str, code: int = 1) -> str:
    got, out, err = result
    assert got == code, (got, out[-300:], err[-800:])
    assert "Traceback" not in err and "internal error" not in err, err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, err
    assert "estimated accuracy" not in out and "MDAD -5" not in out, out
    for name in names:
        assert name in errors[0], (name, errors[0])
    return errors[0]


def full_log(folder: Path, correct_docs: set[int]) -> Path:
    """A samples log of the leaderboard's GPQA split (448 documents): acc_norm 1 on ``correct_docs``."""
    folder.mkdir(parents=True)
    (folder / f"results_{STAMP}.json").write_text(json.dumps({"model_name": "org/new", "configs": {}}))
    path = folder / f"samples_leaderboard_gpqa_main_{STAMP}.jsonl"
    path.write_text("".join(json.dumps({"doc_id": d, "doc": {"question": f"q{d}"}, "target": "0", "filter": "none",
                                        "acc_norm": float(d in correct_docs)}) + "\n" for d in range(448)))
    return path


def chosen_docs(root: Path, name: str) -> list[int]:
    return [int(item.rsplit("_", 1)[1]) for item in pd.read_csv(root / name / "items.csv")["item"]]


def set_cell(path: Path, row: int, column: str, value: str) -> None:
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    table.loc[row, column] = value
    table.to_csv(path, index=False)


def edit_record(folder: Path, change) -> None:
    rec = json.loads((folder / "shipped.json").read_text())
    change(rec)
    (folder / "shipped.json").write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n")


def reseal_micro(folder: Path) -> None:
    """A written micro-benchmark folder's manifest.json recomputed for its files as they are now."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name != "manifest.json")
    (folder / "manifest.json").write_text(json.dumps(
        {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}))


def leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith("."))


# -- 1. verified, not sealed again ---------------------------------------------------------------------

def test_every_shipped_folder_carries_the_hashes_its_build_writes():
    """hashes.json of each of the 18 shipped folders verifies, and is what write_hashes writes (byte for byte)."""
    assert len(shipped_names()) == 18
    always = {"shipped.json", "items.csv", "pool.csv", "calibration.csv"}
    for name in shipped_names():
        files = set(verify(name)["files"])
        assert always <= files <= always | {"pool_answers.csv", "item_params.csv"}  # the estimator's own file
        listed = (SHIPPED / name / HASHES).read_bytes()
        assert json.loads(listed)["name"] == name


def test_write_hashes_reproduces_the_shipped_manifest(tmp_path):
    for name in shipped_names():
        copy = shutil.copytree(SHIPPED / name, tmp_path / name)
        (copy / HASHES).unlink()
        write_hashes(copy)
        assert (copy / HASHES).read_bytes() == (SHIPPED / name / HASHES).read_bytes()


def test_freeze_writes_the_hashes_and_reproduces_a_shipped_folder(tmp_path, monkeypatch):
    """The maintainers' writer (freeze, which rebuild calls) stores hashes.json last: a thawed build frozen
    again is the shipped folder, file for file."""
    built, _ = thaw("gpqa-25")
    freeze(built, tmp_path / "shipped_micro" / "gpqa-25")
    for file in (SHIPPED / "gpqa-25").iterdir():
        assert (tmp_path / "shipped_micro" / "gpqa-25" / file.name).read_bytes() == file.read_bytes(), file.name
    monkeypatch.setattr(micro_shipped, "SHIPPED", tmp_path / "shipped_micro")
    assert record("gpqa-25")["k"] == 25


def test_an_item_not_in_the_bundle_is_refused_not_exported_as_its_last_item(shipped, own_cache, tmp_path):
    """Before: the unknown item silently became the bundle's last item (get_indexer's -1), exit 0."""
    set_cell(shipped / "gpqa-25" / "items.csv", 0, "item", "gpqa_main_not_there")
    line = refused(run("micro", "export", "gpqa-25", "--out", tmp_path / "out"), "gpqa-25/items.csv")
    assert "modified" in line and "reinstall" in line and "micro rebuild" in line
    assert not (tmp_path / "out").exists()
    write_hashes(shipped / "gpqa-25")  # sealed again by hand: the value check still finds it
    line = refused(run("micro", "export", "gpqa-25", "--out", tmp_path / "out"), "gpqa-25/items.csv")
    assert "gpqa_main_not_there" in line and "does not hold" in line
    assert not (tmp_path / "out").exists() and leftovers(tmp_path) == []


def test_a_changed_weight_is_refused_not_scored(shipped, own_cache, tmp_path):
    """Before: one weight of gpqa-100 set to 0.9 made `score gpqa-100` print 186.0 points."""
    log = full_log(tmp_path / "run", set(chosen_docs(shipped, "gpqa-100")))
    set_cell(shipped / "gpqa-100" / "items.csv", 0, "weight", "0.9")
    for command in (("score", "gpqa-100", log), ("micro", "show", "gpqa-100"), ("micro", "list"),
                    ("micro", "export", "gpqa-100", "--out", tmp_path / "out"),
                    ("plan", "--micro", "gpqa-100", "--pair", "org/new", "org/new", "--results-of", log)):
        code, out, err = result = run(*command)
        refused(result, "gpqa-100/items.csv")
        assert out == "", (command, out)
    with pytest.raises(micro_shipped.ShippedError, match="items.csv"):
        thaw("gpqa-100")
    assert not (tmp_path / "out").exists()


def test_a_copy_exported_before_an_edit_is_not_sealed_again(shipped, own_cache, tmp_path):
    """The export re-read the shipped files each time: an edit after a first export is refused, not sealed
    into a second one."""
    assert run("micro", "export", "gpqa-50", "--out", tmp_path / "first")[0] == 0
    edit_record(shipped / "gpqa-50", lambda rec: rec["card"].__setitem__("mdad", 1.0))
    refused(run("micro", "export", "gpqa-50", "--out", tmp_path / "second"), "gpqa-50/shipped.json")
    assert not (tmp_path / "second").exists()
    assert json.loads((tmp_path / "first" / "card.json").read_text())["mdad"] == 5.0


# -- 2. one value check wherever a micro-benchmark is read ------------------------------------------------

def test_a_negative_mdad_in_a_shipped_card_is_refused_by_list_and_export(shipped, own_cache, tmp_path):
    """Before: `micro list` printed "MDAD -5 points" and `micro export` wrote it, exit 0."""
    edit_record(shipped / "gpqa-25", lambda rec: rec["card"].__setitem__("mdad", -5))
    write_hashes(shipped / "gpqa-25")
    for command in (("micro", "list"), ("micro", "list", "--format", "json"), ("micro", "show", "gpqa-25"),
                    ("micro", "export", "gpqa-25", "--out", tmp_path / "out")):
        line = refused(run(*command), "gpqa-25/shipped.json")
        assert "mdad" in line and "-5" in line
    assert not (tmp_path / "out").exists()


def test_a_duplicated_shipped_item_is_refused(shipped, own_cache, tmp_path):
    path = shipped / "gpqa-50" / "items.csv"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join([lines[0], lines[1], *lines[1:-1]]))  # k rows, the first item twice
    write_hashes(shipped / "gpqa-50")
    for command in (("micro", "list"), ("micro", "export", "gpqa-50", "--out", tmp_path / "out")):
        line = refused(run(*command), "gpqa-50/items.csv")
        assert "twice" in line


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    return export_shipped("gpqa-100", tmp_path_factory.mktemp("exported") / "gpqa-100")


@pytest.fixture
def written(exported, tmp_path) -> Path:
    return shutil.copytree(exported, tmp_path / "m")


WRITTEN_EDITS = {
    "weights-sum-2": ("items.csv", lambda f: set_cell(f / "items.csv", 0, "weight", "1.01")),
    "weight-zero": ("items.csv", lambda f: set_cell(f / "items.csv", 0, "weight", "0")),
    "weight-text": ("items.csv", lambda f: set_cell(f / "items.csv", 0, "weight", "heavy")),
    "item-twice": ("items.csv", lambda f: set_cell(f / "items.csv", 1, "item",
                                                   pd.read_csv(f / "items.csv")["item"][0])),
    "ci-low-above-mdad": ("card.json", lambda f: (f / "card.json").write_text(json.dumps(
        {**json.loads((f / "card.json").read_text()), "ci_low": 9.0}))),
    "random-mdad-text": ("card.json", lambda f: (f / "card.json").write_text(json.dumps(
        {**json.loads((f / "card.json").read_text()), "random_mdad": "abc"}))),
    "mdad-infinite": ("card.json", lambda f: (f / "card.json").write_text(json.dumps(
        {**json.loads((f / "card.json").read_text()), "mdad": float("inf")}))),  # JSON text "Infinity"
    "no-accuracy": ("pool.csv", lambda f: pd.read_csv(f / "pool.csv").drop(columns="accuracy")
                    .to_csv(f / "pool.csv", index=False)),
}


@pytest.mark.parametrize("edit", list(WRITTEN_EDITS))
def test_a_written_folder_with_values_no_build_writes_is_refused(written, tmp_path, edit):
    """The same value check reads a written folder (read_micro): weights that do not sum to 1, a zero
    weight, an interval that does not hold its MDAD, a random MDAD of text, all sealed again by hand."""
    file, change = WRITTEN_EDITS[edit]
    change(written)
    reseal_micro(written)
    log = full_log(tmp_path / "run", set(range(448)))
    refused(run("score", written, log), f"m/{file}")


# -- 3. the cache's copy ----------------------------------------------------------------------------------

def test_the_cache_key_covers_every_file_it_is_written_from(shipped, own_cache):
    """Before: the key hashed shipped.json only; a changed pool.csv (hashes written again) reused the old copy."""
    first = shipped_folder("gpqa-25").path
    assert first.name == f"gpqa-25-{cache_key('gpqa-25')}"
    set_cell(shipped / "gpqa-25" / "pool.csv", 0, "accuracy", "0.5")
    write_hashes(shipped / "gpqa-25")
    second = shipped_folder("gpqa-25")
    assert second.path != first and second.pool["accuracy"].iloc[0] == 0.5


def test_an_intact_cached_copy_is_reused_not_written_again(own_cache, monkeypatch):
    first = {name: shipped_folder(name).path for name in ("gpqa-25", "bbh-leaderboard-50")}

    def no_export(*args, **kwargs):
        raise AssertionError("the intact cached copy was written again")

    monkeypatch.setattr(micro_shipped, "export_shipped", no_export)
    assert {name: shipped_folder(name).path for name in first} == first


def test_an_edited_cached_copy_is_written_again_without_a_word_about_force(own_cache):
    """Before: `micro show` refused for good, telling the user about a --force they never passed."""
    path = shipped_folder("gpqa-25").path
    (path / "card.md").write_text("edited")
    code, out, err = run("micro", "show", "gpqa-25")
    assert code == 0 and out.startswith("# Micro-benchmark of gpqa: 25 of 448") and "--force" not in err, err
    assert read_micro(path).k == 25 and (path / "card.md").read_text() == out


def test_a_cached_copy_sealed_again_with_other_items_is_written_again(own_cache):
    path = shipped_folder("gpqa-100").path
    chosen = pd.read_csv(path / "items.csv")["item"].tolist()
    other = next(f"gpqa_main_{d:03d}" for d in range(448) if f"gpqa_main_{d:03d}" not in chosen)
    set_cell(path / "items.csv", 0, "item", other)
    reseal_micro(path)
    assert read_micro(path).items["item"].tolist()[0] == other  # a folder that passes its own check
    again = shipped_folder("gpqa-100")
    assert again.items["item"].tolist() == pd.read_csv(SHIPPED / "gpqa-100" / "items.csv")["item"].tolist()


def test_a_link_in_the_cached_copys_place_is_replaced_not_followed(own_cache, tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("mine")
    path = own_cache / "micro" / f"gpqa-25-{cache_key('gpqa-25')}"
    path.parent.mkdir(parents=True)
    path.symlink_to(victim, target_is_directory=True)
    folder = shipped_folder("gpqa-25")
    assert folder.path == path and not path.is_symlink() and (victim / "keep.txt").read_text() == "mine"


def test_cache_clear_removes_the_micro_folders_it_wrote_and_says_so(own_cache):
    """Before: "removed 0 entries" and "left 10 files the cache did not write (micro/...)": untrue."""
    shipped_folder("gpqa-25")
    shipped_folder("gpqa-50")
    assert len([p for p in (own_cache / "micro").iterdir() if p.is_dir()]) == 2
    code, _, err = run("cache", "clear")
    assert code == 0 and "removed 2 entries" in err and "did not write" not in err, err
    assert list((own_cache / "micro").iterdir()) == []
    assert run("micro", "show", "gpqa-25")[0] == 0  # and it is written again on demand


def test_cache_clear_leaves_and_reports_a_file_the_cache_did_not_write_in_a_micro_folder(own_cache, tmp_path):
    path = shipped_folder("gpqa-25").path
    (path / "notes.txt").write_text("mine")
    stale = own_cache / "micro" / f".{path.name}.new-999999999-abcd1234"  # a killed writer's work folder
    stale.mkdir()
    (stale / "items.csv").write_text("half")
    code, _, err = run("cache", "clear")
    assert code == 0 and "removed 1 entries" in err, err
    assert "left 1 files the cache did not write" in err and f"{path.name}/notes.txt" in err, err
    assert (path / "notes.txt").read_text() == "mine" and sorted(p.name for p in path.iterdir()) == ["notes.txt"]
    assert not stale.exists()
    assert cache.clear("results") == (0, [])  # another kind: the micro folders are not its business


# -- 4. malformed records, stray folders -------------------------------------------------------------------

MALFORMED = {
    "not-json": lambda f: (f / "shipped.json").write_text("{bad json"),
    "missing-keys": lambda f: edit_record(f, lambda rec: [rec.pop(k) for k in ("card", "interval")]),
    "random-mdad-text": lambda f: edit_record(f, lambda rec: rec["card"].__setitem__("random_mdad", "abc")),
    "coverage-of-no-model": lambda f: edit_record(f, lambda rec: rec["card"]["coverage"].__setitem__(
        "calibration", {"models": 0, "covered": 0})),
}


@pytest.mark.parametrize("resealed", [False, True], ids=["edited", "hashes-written-again"])
@pytest.mark.parametrize("edit", list(MALFORMED))
def test_a_malformed_shipped_record_is_one_message_naming_it(shipped, own_cache, edit, resealed):
    """Before: exit 70 (JSONDecodeError, KeyError, ValueError, ZeroDivisionError) in micro list/show."""
    MALFORMED[edit](shipped / "gpqa-25")
    if resealed:
        write_hashes(shipped / "gpqa-25")
    for command in (("micro", "list"), ("micro", "show", "gpqa-25"), ("micro", "list", "--format", "json")):
        refused(run(*command), "gpqa-25/shipped.json")


@pytest.mark.parametrize("stray", ["gpqa-x", "gpqa-07", "gpqa", "-25", "notes"])
def test_a_folder_that_is_no_shipped_micro_benchmark_is_skipped(shipped, own_cache, stray):
    """Before: a folder gpqa-x holding a shipped.json made `micro list` exit 70 (no int size)."""
    shutil.copytree(shipped / "gpqa-25", shipped / stray)
    code, out, err = run("micro", "list")
    assert code == 0 and err == "", err
    assert [line.split(":")[0] for line in out.splitlines()] == shipped_names() and stray not in shipped_names()
    refused(run("micro", "show", stray), "no shipped micro-benchmark")


def test_a_well_named_folder_without_hashes_is_refused_naming_the_missing_file(shipped, own_cache):
    (shipped / "gpqa-30").mkdir()
    shutil.copy(shipped / "gpqa-25" / "shipped.json", shipped / "gpqa-30")
    refused(run("micro", "list"), "gpqa-30/hashes.json", "missing")
    (shipped / "gpqa-30" / "shipped.json").unlink()
    assert run("micro", "list")[0] == 0  # an empty folder is no shipped micro-benchmark: skipped


def test_a_copy_under_another_name_is_refused(shipped, own_cache):
    shutil.copytree(shipped / "gpqa-25", shipped / "gpqa-26")
    write_hashes(shipped / "gpqa-26")
    refused(run("micro", "show", "gpqa-26"), "gpqa-26/shipped.json", "not those of its folder gpqa-26")


# -- 5. a link as --out --------------------------------------------------------------------------------------

def test_export_to_a_link_with_force_is_refused_leaving_nothing_behind(own_cache, tmp_path):
    """Before: "Is a directory", and an empty .LINK.old-PID-hex folder left beside the link."""
    assert run("micro", "export", "gpqa-25", "--out", tmp_path / "real")[0] == 0
    before = {p.name: p.read_bytes() for p in (tmp_path / "real").rglob("*") if p.is_file()}
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    line = refused(run("micro", "export", "gpqa-50", "--out", tmp_path / "link", "--force"), "link")
    assert "symbolic link" in line
    assert leftovers(tmp_path) == [] and (tmp_path / "link").is_symlink()
    assert {p.name: p.read_bytes() for p in (tmp_path / "real").rglob("*") if p.is_file()} == before
    assert run("micro", "export", "gpqa-50", "--out", tmp_path / "real", "--force")[0] == 0  # the folder itself
    assert read_micro(tmp_path / "real").k == 50


# -- 6. a name shadowed by a file or folder ------------------------------------------------------------------

@pytest.mark.parametrize("what", ["file", "empty-folder", "folder-of-logs"])
def test_a_file_or_other_folder_named_like_a_shipped_one_does_not_shadow_it(own_cache, tmp_path, monkeypatch,
                                                                             what):
    """Before: `score gpqa-100 LOGS` with a file gpqa-100 in the working folder: "no such micro-benchmark
    folder"."""
    monkeypatch.chdir(tmp_path)
    right = set(chosen_docs(SHIPPED, "gpqa-100")[:30])
    if what == "file":
        (tmp_path / "gpqa-100").write_text("not a micro-benchmark")
        log = full_log(tmp_path / "run", right)
    elif what == "empty-folder":
        (tmp_path / "gpqa-100").mkdir()
        log = full_log(tmp_path / "run", right)
    else:
        log = full_log(tmp_path / "gpqa-100", right)
    code, out, err = run("score", "gpqa-100", log, "--format", "json")
    assert code == 0, err
    assert json.loads(out)["org/new"]["estimate"] == pytest.approx(shipped_estimate("gpqa-100", right), abs=1e-3)


def test_a_micro_benchmark_folder_of_the_name_wins_and_the_rule_is_in_the_help(own_cache, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    export_shipped("gpqa-25", tmp_path / "gpqa-100")  # a folder named gpqa-100 holding gpqa-25
    log = full_log(tmp_path / "run", set(range(448)))
    code, out, err = run("score", "gpqa-100", log, "--format", "json")
    scored = json.loads(out)["org/new"] if code == 0 else {}
    assert code == 0 and scored["estimate"] - scored["bias_correction"] == pytest.approx(100.0), err  # the raw mean
    assert micro_shipped.open_micro("gpqa-100").k == 25 and micro_shipped.open_micro("./gpqa-100").k == 25
    (tmp_path / "gpqa-100" / "manifest.json").unlink()  # a damaged micro-benchmark folder: still that folder
    refused(run("score", "gpqa-100", log), "manifest.json")
    for command in (("score", "--help"), ("plan", "--help")):
        code, out, _ = run(*command)
        text = " ".join(out.split())
        assert code == 0 and "a file or any other folder of that name does not shadow it" in text, text
        assert "./NAME" in text


# -- 7. which MDAD is which ----------------------------------------------------------------------------------

def test_micro_list_labels_the_measured_mdad_and_the_planners_prediction():
    """Before: "MDAD 4.5 points (random sampling 4)" for a random sample, two MDADs of one method unlabelled."""
    code, out, err = run("micro", "list")
    assert code == 0, err
    for line, name in zip(out.splitlines(), shipped_names()):
        rec = record(name)
        card, k = rec["card"], rec["k"]
        assert f"MDAD {card['mdad']:g} points (measured in {card['protocol']['n_runs']} protocol runs on the pool" \
            in line, line
        assert f"random sampling of {k} items: MDAD {card['random_mdad']:g} points (the exact planner's prediction)" \
            in line, line
    code, out, _ = run("micro", "list", "--help")
    assert "planner" in " ".join(out.split()) and "measured" in out
    rows = json.loads(run("micro", "list", "--format", "json")[1])
    assert all(row["runs"] == 20 for row in rows)

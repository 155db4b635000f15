"""Shipped micro-benchmarks edited file by file (Hardening IV): every edit is refused, naming the file.

Two families of generated cases, each run on a temporary copy of one shipped folder (the module's
``SHIPPED`` pointed at it; the package data itself is never written):

* an edit of the bytes (a byte changed, a row dropped, swapped or duplicated, a weight changed, a blank
  line, other line endings, values of shipped.json changed, a file removed or added, the hashes damaged):
  refused by the SHA-256 check of ``hashes.json``;
* an edit of the values whose ``hashes.json`` is then written again (as a careless rebuild would): refused
  by the value check every reader shares with ``read_micro``.

Each refusal is one ``error:`` line of ``micro list`` (exit 1) naming the file and saying that the
shipped data was modified."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from helpers import run_command
from mbutils.micro import shipped as micro_shipped
from mbutils.micro.shipped import PLAN, HASHES, SHIPPED, ShippedError, record, shipped_names, write_hashes

NAMES = shipped_names()  # the real package's, read once at collection
CSVS = ("items.csv", "pool.csv", "calibration.csv")


@pytest.fixture(autouse=True, scope="module")
def _package_data_untouched():
    """The package's shipped data is the same after these tests as before."""
    before = {p: p.read_bytes() for p in SHIPPED.rglob("*") if p.is_file()}
    yield
    assert {p: p.read_bytes() for p in SHIPPED.rglob("*") if p.is_file()} == before


@pytest.fixture
def copy(tmp_path, monkeypatch):
    """``copy(name)``: a temporary shipped folder holding only ``name``, which the module then reads."""
    def make(name: str) -> Path:
        root = tmp_path / "shipped_micro"
        shutil.copytree(SHIPPED / name, root / name)
        monkeypatch.setattr(micro_shipped, "SHIPPED", root)
        return root / name
    return make


def refused_by_list(file: str) -> str:
    """``micro list`` refuses the copy: exit 1, one error line naming ``file``, no listing."""
    code, out, err = run_command("micro", "list")
    assert code == 1, (code, out[-300:], err[-600:])
    assert out == "" and "Traceback" not in err and "internal error" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert f"/{file}" in lines[0] and "shipped micro-benchmark data was modified" in lines[0], err
    return lines[0]


# -- edits of the bytes: refused by the hashes ---------------------------------------------------------

def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def _put(path: Path, lines: list[str]) -> None:
    path.write_text("".join(lines), encoding="utf-8")


def _byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    i = len(data) // 2
    data[i] = ord("7") if data[i] != ord("7") else ord("3")
    path.write_bytes(bytes(data))


def _drop_row(path: Path) -> None:
    _put(path, _lines(path)[:-1])


def _duplicate_row(path: Path) -> None:
    lines = _lines(path)
    row = lines[1] if len(lines) > 1 else lines[0]
    _put(path, [*lines, row if row.endswith("\n") else row + "\n"])


def _swap_rows(path: Path) -> None:
    lines = _lines(path)
    if len(lines) > 2:
        lines[1], lines[2] = lines[2], lines[1]
    else:  # a header only: its first two columns swapped
        cells = lines[0].rstrip("\n").split(",")
        cells[0], cells[1] = cells[1], cells[0]
        lines[0] = ",".join(cells) + "\n"
    _put(path, lines)


def _swap_item(path: Path) -> None:
    """The first row's name (item or model) replaced by one the folder does not hold."""
    lines = _lines(path)
    if len(lines) > 1:
        lines[1] = "not_shipped_x" + lines[1][lines[1].index(","):]
    else:
        lines.append("not_shipped_x" + ",0" * lines[0].count(",") + "\n")
    _put(path, lines)


def _weight(path: Path) -> None:
    """The first row's last number (an item's weight, a pool model's accuracy, a calibration error) -> 0.9."""
    lines = _lines(path)
    if len(lines) > 1:
        lines[1] = lines[1].rstrip("\n").rpartition(",")[0] + ",0.9\n"
    else:
        lines.append("x" + ",0.9" * lines[0].count(",") + "\n")
    _put(path, lines)


def _blank_line(path: Path) -> None:
    path.write_bytes(path.read_bytes() + b"\n")


def _crlf(path: Path) -> None:
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))


CSV_EDITS = {"byte": _byte, "drop-row": _drop_row, "duplicate-row": _duplicate_row, "swap-rows": _swap_rows,
             "swap-item": _swap_item, "weight": _weight, "blank-line": _blank_line, "crlf": _crlf}


def _json_edit(change):
    def edit(path: Path) -> None:
        value = json.loads(path.read_text(encoding="utf-8"))
        change(value)
        path.write_text(json.dumps(value, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return edit


def _card(key, value):
    return _json_edit(lambda rec: rec["card"].__setitem__(key, value))


JSON_EDITS = {
    "byte": _byte,
    "mdad-negative": _card("mdad", -5),
    "random-mdad-text": _card("random_mdad", "abc"),
    "no-card": _json_edit(lambda rec: rec.pop("card")),
    "k-text": _json_edit(lambda rec: rec.__setitem__("k", str(rec["k"]))),
    "extra-key": _json_edit(lambda rec: rec.__setitem__("extra", 1)),
    "not-json": lambda path: path.write_text(path.read_text(encoding="utf-8")[:40], encoding="utf-8"),
    "reformatted": lambda path: path.write_text(json.dumps(json.loads(path.read_text(encoding="utf-8"))),
                                                encoding="utf-8"),
}

BYTE_CASES = [pytest.param(name, file, edit, id=f"{name}-{file}-{edit}")
              for name in NAMES for file in CSVS for edit in CSV_EDITS] + \
             [pytest.param(name, "shipped.json", edit, id=f"{name}-shipped.json-{edit}")
              for name in NAMES for edit in JSON_EDITS]


@pytest.mark.parametrize("name, file, edit", BYTE_CASES)
def test_an_edited_shipped_file_is_refused_naming_it(copy, name, file, edit):
    folder = copy(name)
    before = (folder / file).read_bytes()
    (CSV_EDITS if file != "shipped.json" else JSON_EDITS)[edit](folder / file)
    assert (folder / file).read_bytes() != before, "the edit changed nothing"
    line = refused_by_list(file)
    assert "SHA-256" in line and HASHES in line
    with pytest.raises(ShippedError, match=file.replace(".", r"\.")):
        record(name)


FOLDER_EDITS = {
    **{f"remove-{file}": (lambda f, file=file: (f / file).unlink(), file) for file in ("shipped.json", *CSVS)},
    "add-a-file": (lambda f: (f / "item_params.csv").write_text("item,b,a_0\n"), "item_params.csv"),
    "add-in-a-sub-folder": (lambda f: (f / "sub").mkdir() or (f / "sub" / "x.csv").write_text("x\n"), "sub/x.csv"),
    "remove-hashes": (lambda f: (f / HASHES).unlink(), HASHES),
    "hashes-not-json": (lambda f: (f / HASHES).write_text("{"), HASHES),
    "hashes-of-another-folder": (lambda f: (f / HASHES).write_text(
        (f / HASHES).read_text().replace(f'"name": "{f.name}"', '"name": "gpqa-7"')), HASHES),
    "hashes-without-a-file": (lambda f: (f / HASHES).write_text(json.dumps(
        {**json.loads((f / HASHES).read_text()), "files": {
            k: v for k, v in json.loads((f / HASHES).read_text())["files"].items() if k != "pool.csv"}})), "pool.csv"),
    "hashes-bad-digest": (lambda f: (f / HASHES).write_text(json.dumps(
        {**json.loads((f / HASHES).read_text()), "files": {
            **json.loads((f / HASHES).read_text())["files"], "items.csv": "0" * 63}})), HASHES),
}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("edit", list(FOLDER_EDITS))
def test_a_shipped_folder_with_a_file_removed_or_added_is_refused_naming_the_file(copy, name, edit):
    folder = copy(name)
    change, file = FOLDER_EDITS[edit]
    change(folder)
    refused_by_list(file)


# -- edits of the values, the hashes written again: refused by the value check ---------------------------

def _table_edit(change):
    def edit(path: Path) -> None:
        table = pd.read_csv(path, dtype=str, keep_default_na=False)
        path.write_text(change(table).to_csv(index=False), encoding="utf-8")
    return edit


def _first(column, value):
    def change(table):
        table.loc[0, column] = value
        return table
    return _table_edit(change)


def _reweighted(table):
    """The last item dropped, the others' weights scaled to sum to 1 again."""
    kept = table.iloc[:-1].copy()
    weights = pd.to_numeric(kept["weight"])
    kept["weight"] = [repr(float(w)) for w in weights / weights.sum()]
    return kept


def _ci_above(rec):
    rec["card"]["ci_low"] = rec["card"]["mdad"] + 1


def _coverage_models(rec):
    rec["card"]["coverage"] = {"level": 0.9, "calibration": {"models": 0, "covered": 3}, "excluded": None,
                               "width": 5.0}


#: edit -> (file edited, function, file the refusal names)
VALUE_EDITS = {
    "items-duplicated": ("items.csv", _table_edit(lambda t: pd.concat([t, t.iloc[[0]]])), "items.csv"),
    "items-one-repeated": ("items.csv", _table_edit(lambda t: t.assign(item=[t["item"][1], *t["item"][1:]])),
                           "items.csv"),
    "items-row-dropped": ("items.csv", _table_edit(lambda t: t.iloc[:-1]), "items.csv"),  # weights sum below 1
    "items-row-dropped-reweighted": ("items.csv", _table_edit(_reweighted), "shipped.json"),  # k does not fit
    "weight-0.9": ("items.csv", _first("weight", "0.9"), "items.csv"),
    "weight-negative": ("items.csv", _first("weight", "-0.01"), "items.csv"),
    "weight-zero": ("items.csv", _first("weight", "0"), "items.csv"),
    "weight-text": ("items.csv", _first("weight", "heavy"), "items.csv"),
    "weight-nan": ("items.csv", _first("weight", "nan"), "items.csv"),
    "item-empty": ("items.csv", _first("item", ""), "items.csv"),
    "no-weight-column": ("items.csv", _table_edit(lambda t: t.drop(columns="weight")), "items.csv"),
    "mdad-negative": ("shipped.json", _card("mdad", -5), "shipped.json"),
    "mdad-above-100": ("shipped.json", _card("mdad", 101), "shipped.json"),
    "mdad-text": ("shipped.json", _card("mdad", "7"), "shipped.json"),
    "random-mdad-text": ("shipped.json", _card("random_mdad", "abc"), "shipped.json"),
    "ci-low-above-mdad": ("shipped.json", _json_edit(_ci_above), "shipped.json"),
    "threshold-zero": ("shipped.json", _card("threshold", 0), "shipped.json"),
    "coverage-of-no-model": ("shipped.json", _json_edit(_coverage_models), "shipped.json"),
    "card-unknown-key": ("shipped.json", _card("verdict", "great"), "shipped.json"),
    "card-choice-text": ("shipped.json", _card("choice", "auto"), "shipped.json"),
    "no-card": ("shipped.json", _json_edit(lambda rec: rec.pop("card")), "shipped.json"),
    "no-format": ("shipped.json", _json_edit(lambda rec: rec.pop("format")), "shipped.json"),
    "k-text": ("shipped.json", _json_edit(lambda rec: rec.__setitem__("k", str(rec["k"]))), "shipped.json"),
    "k-other": ("shipped.json", _json_edit(lambda rec: rec.__setitem__("k", rec["k"] + 1)), "shipped.json"),
    "name-other": ("shipped.json", _json_edit(lambda rec: rec.__setitem__("name", "gpqa-7")), "shipped.json"),
    "interval-other": ("shipped.json", _json_edit(lambda rec: rec.__setitem__("interval", "wide")), "shipped.json"),
    "estimator-other": ("shipped.json", _json_edit(lambda rec: rec.__setitem__("estimator", {"kind": "x"})),
                        "shipped.json"),
    "seed-negative": ("shipped.json", _json_edit(lambda rec: rec.__setitem__("seed", -1)), "shipped.json"),
    "not-json": ("shipped.json", lambda path: path.write_text("{bad", encoding="utf-8"), "shipped.json"),
    "a-list": ("shipped.json", lambda path: path.write_text("[]", encoding="utf-8"), "shipped.json"),
    "accuracy-7": ("pool.csv", _first("accuracy", "7"), "pool.csv"),
    "model-twice": ("pool.csv", _table_edit(lambda t: pd.concat([t, t.iloc[[0]]])), "pool.csv"),
    "no-accuracy": ("pool.csv", _table_edit(lambda t: t.drop(columns="accuracy")), "pool.csv"),
    "calibration-row": ("calibration.csv", _table_edit(
        lambda t: pd.concat([t, pd.DataFrame([{c: "x" if c == "model" else "nan" for c in t.columns}])])),
        "calibration.csv"),
}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("edit", list(VALUE_EDITS))
def test_a_shipped_value_no_build_writes_is_refused_though_the_hashes_were_written_again(copy, name, edit):
    folder = copy(name)
    file, change, named = VALUE_EDITS[edit]
    change(folder / file)
    write_hashes(folder)
    line = refused_by_list(named)
    assert "SHA-256" not in line, line  # the hashes hold: the value check refused it


def test_the_generated_cases_are_many():
    """At least 100 generated refusals (the brief's floor), over every shipped folder."""
    assert len(BYTE_CASES) + len(NAMES) * (len(FOLDER_EDITS) + len(VALUE_EDITS)) >= 100
    assert len(NAMES) == sum(len(sizes) for sizes in PLAN.values()) == 18

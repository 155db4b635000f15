"""Hardening IV: the number of answer options, from provenance.json or items.csv, is one rule checked once.

A count is a whole number from 2 to 1,000; provenance.json's ``answer_options`` gives one for every item
or one per subtask, as a JSON number. Anything else (2.5, ``"four"``, ``[4, 4]``, ``true``, ``null``,
nested objects, ``1e400``, 1) is refused by ``validate`` and by loading with one message naming the file
and key (or row and column), never read as unknown, never an internal error. Generated values check the
verdict against a rule written independently here.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import tempfile
from decimal import Decimal, InvalidOperation
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mbutils
from conftest import REPO
from mbutils.base.errors import BundleError
from mbutils.data.bundle import load_bundle, validate_bundle

SUBTASKS = ["s1", "s1", "s2"]
MAX_PROBLEM_CHARS = 600


def write_bundle(folder: Path, *, column: str | None = None, cells=None, provenance=None, raw: str | None = None):
    """Three models x three items (a, b in s1; c in s2); items.csv with an options ``column`` of ``cells``;
    provenance.json holding ``provenance`` (as JSON) or the text ``raw``."""
    folder.mkdir(parents=True)
    (folder / "responses.csv").write_text("model,a,b,c\nm1,1,0,1\nm2,0,0,1\nm3,1,1,0\n")
    header = "item,subtask" + (f",{column}" if column else "")
    rows = [f"{item},{sub}" + (f",{cell}" if column else "") for item, sub, cell in
            zip("abc", SUBTASKS, cells or ["", "", ""])]
    (folder / "items.csv").write_text(header + "\n" + "\n".join(rows) + "\n")
    if provenance is not None:
        (folder / "provenance.json").write_text(json.dumps(provenance))
    if raw is not None:
        (folder / "provenance.json").write_text(raw)
    return folder


def errors_of(folder) -> list:
    return [p for p in validate_bundle(folder) if p.severity == "error"]


def refused_once(folder, file: str, fragment: str):
    """Exactly one error, in ``file``, holding ``fragment``; loading raises BundleError with the same."""
    errors = errors_of(folder)
    assert len(errors) == 1, [str(p) for p in errors]
    text = str(errors[0])
    assert errors[0].file == file and fragment in text, text
    assert "\n" not in text and len(text) <= MAX_PROBLEM_CHARS, text
    with pytest.raises(BundleError) as raised:
        load_bundle(folder)
    assert fragment in str(raised.value)
    return errors[0]


# -- 1. provenance 2.5 is refused as items.csv's 2.5 is ----------------------------------------------------------


def test_a_fractional_count_in_provenance_is_refused_like_the_same_in_items_csv(tmp_path):
    problem = refused_once(write_bundle(tmp_path / "p", provenance={"answer_options": {"n_options": 2.5}}),
                           "provenance.json", "2.5 is not a number of answer options")
    assert problem.location == "key 'answer_options', \"n_options\"" and "whole number" in problem.message
    refused_once(write_bundle(tmp_path / "i", column="n_options", cells=["4", "2.5", "4"]), "items.csv", "'2.5'")


def test_a_fractional_count_for_one_subtask_is_refused_naming_the_subtask(tmp_path):
    folder = write_bundle(tmp_path / "b", provenance={"answer_options": {"n_options": {"s1": 4, "s2": 2.5}}})
    problem = refused_once(folder, "provenance.json", "subtask \"s2\": 2.5 is not a number of answer options")
    assert "whole number from 2 to 1,000" in problem.message


# -- 2. wrong shapes: one message each, never an internal error or a silent "unknown" --------------------------


SHAPES = {
    "text": ('"four"', "text, not a number"),
    "list": ("[4, 4]", "a list, not a number"),
    "one-list": ("[4]", "a list, not a number"),
    "text-per-subtask": ('{"s1": "x", "s2": 4}', "subtask \"s1\": \"x\""),
    "null": ("null", "null, not a number"),
    "nested": ('{"s1": {"a": 4}, "s2": 4}', "an object, not a number"),
    "deeper": ('{"s1": {"a": {"b": 4}}, "s2": 4}', "an object, not a number"),
    "infinite": ("1e400", "infinite"),
    "one": ("1", "fewer than 2"),
    "true": ("true", "true or false, not a number"),
    "false-per-subtask": ('{"s1": false, "s2": 4}', "true or false, not a number"),
    "nan": ("NaN", "not a number"),
    "too-many": ("1001", "more than 1,000"),
    "quoted-number": ('"4"', "write the number without quotes"),
    "empty-object": ("{}", "empty object"),
}


@pytest.mark.parametrize("name", SHAPES)
def test_a_count_of_the_wrong_shape_is_one_message_naming_the_key(name, tmp_path):
    value, fragment = SHAPES[name]
    folder = write_bundle(tmp_path / name, raw='{"answer_options": {"n_options": ' + value + ', "source": "t"}}')
    problem = refused_once(folder, "provenance.json", fragment)
    assert problem.location.startswith("key 'answer_options', \"n_options\"")


@pytest.mark.parametrize("entry", ['4', 'null', '[{"n_options": 4}]', '{"source": "no counts"}',
                                   '{"n_option": 4}'])
def test_an_answer_options_entry_without_counts_is_refused(entry, tmp_path):
    folder = write_bundle(tmp_path / "b", raw='{"answer_options": ' + entry + '}')
    problem = refused_once(folder, "provenance.json", "answer_options")
    assert problem.location == "key 'answer_options'"


@pytest.mark.parametrize("text, fragment", [
    ("{not json", "line 1, column 2: not valid JSON"),
    ("[1, 2]", "must be a JSON object"),
    ('{"answer_options": {"n_options": 4}, "answer_options": {"n_options": 5}}', "is given more than once"),
    ('{"answer_options": {"n_options": {"s1": 4, "s1": 5, "s2": 4}}}', "is given more than once"),
    ("[" * 50_000, "nested too deeply"),
    ('{"answer_options": {"n_options": 1' + "0" * 5000 + "}}", "number too long"),
])
def test_a_provenance_file_that_cannot_be_read_is_a_problem_of_the_bundle(text, fragment, tmp_path):
    refused_once(write_bundle(tmp_path / "b", raw=text), "provenance.json", fragment)


def test_a_provenance_file_that_is_a_folder_is_named(tmp_path):
    folder = write_bundle(tmp_path / "b")
    (folder / "provenance.json").mkdir()
    refused_once(folder, "provenance.json", "is a folder, not a file")


def test_a_mapping_key_that_is_no_subtask_is_a_warning_and_its_subtask_stays_unknown(tmp_path):
    folder = write_bundle(tmp_path / "b", provenance={"answer_options": {"n_options": {"s1": 4, "S2": 5}}})
    problems = validate_bundle(folder)
    assert [p.severity for p in problems] == ["warning"]
    assert "'S2'" in problems[0].message and "'s2'" in problems[0].message
    bench = load_bundle(folder)
    assert bench.n_options[:2].tolist() == [4.0, 4.0] and np.isnan(bench.n_options[2]) and bench.chance is None


@pytest.mark.parametrize("spec, expected", [
    (4, [4, 4, 4]), (4.0, [4, 4, 4]), (2, [2, 2, 2]), (1000, [1000, 1000, 1000]),
    ({"s1": 2, "s2": 10}, [2, 2, 10]),
])
def test_usable_counts_are_read_as_given(spec, expected, tmp_path):
    folder = write_bundle(tmp_path / "b", provenance={"answer_options": {"n_options": spec, "source": "test"}})
    assert errors_of(folder) == []
    bench = mbutils.load_benchmark(str(folder))
    assert bench.n_options.tolist() == expected
    assert bench.chance == pytest.approx(np.mean([1 / n for n in expected]))
    assert bench.item_info.attrs["n_options_source"] == "test"


def test_items_csv_wins_but_a_bad_provenance_count_is_still_refused(tmp_path):
    folder = write_bundle(tmp_path / "b", column="n_options", cells=["4", "4", "5"],
                          provenance={"answer_options": {"n_options": 2.5}})
    refused_once(folder, "provenance.json", "2.5")
    good = write_bundle(tmp_path / "g", column="n_options", cells=["4", "4", "5"],
                        provenance={"answer_options": {"n_options": 3}})
    assert load_bundle(good).n_options.tolist() == [4, 4, 5]


# -- 3. items.csv: non-finite and absurd counts -----------------------------------------------------------------


@pytest.mark.parametrize("cell, fragment", [
    ("inf", "infinite"), ("-inf", "infinite"), ("Infinity", "infinite"), ("1e400", "infinite"), ("nan", "not a number"),
    ("1e308", "more than 1,000"), ("1001", "more than 1,000"), ("1" + "0" * 300, "more than 1,000"),
    ("4.5", "not a whole number"), ("0", "fewer than 2"), ("True", "not a number"), ("four", "not a number"),
])
def test_an_items_csv_count_that_is_not_finite_or_too_large_is_named_with_its_row(cell, fragment, tmp_path):
    folder = write_bundle(tmp_path / "b", column="n_options", cells=["4", cell, "4"])
    problem = refused_once(folder, "items.csv", fragment)
    assert problem.location == "row 3 (item 'b'), column 'n_options'"
    assert "a whole number from 2 to 1,000" in problem.message and len(problem.message) < 300


def test_the_bound_is_one_named_constant_and_the_messages_say_it():
    from mbutils.data.bundle import options

    assert options.MAX_OPTIONS == 1_000 and f"{options.MAX_OPTIONS:,}" in options.RULE
    assert options.number_fault(options.MAX_OPTIONS) is None and options.number_fault(options.MAX_OPTIONS + 1)


def test_a_benchmark_built_in_memory_never_carries_an_infinite_count():
    items = ["a", "b", "c", "d"]
    info = pd.DataFrame({"item": items, "subtask": ["s"] * 4, "n_options": [4, np.inf, 2.5, 1e308]})
    bench = mbutils.Benchmark(name="m", correct=np.eye(4, dtype=int), models=list("wxyz"), items=items,
                              subtasks=["s"] * 4, item_info=info)
    assert bench.n_options[0] == 4 and np.isnan(bench.n_options[1:]).all() and bench.chance is None


# -- generated: provenance shapes, scalar and per subtask (over 100 drawn) ----------------------------------------


def usable(value) -> bool:
    """The rule, written here independently: a JSON number (not a bool), whole, from 2 to 1,000."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return math.isfinite(value) and value == int(value) and 2 <= value <= 1000


LEAF = st.one_of(
    st.integers(-3, 1100), st.integers(10**20, 10**40),
    st.floats(allow_nan=True, allow_infinity=True), st.floats(1.5, 20).map(lambda x: round(x * 2) / 2),
    st.booleans(), st.none(), st.sampled_from(["4", "four", "", "inf", "2.5"]),
)
VALUE = st.recursive(LEAF, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.sampled_from(["s1", "s2", "a"]), inner, max_size=2), max_leaves=4)
SPEC = st.one_of(VALUE, st.dictionaries(st.sampled_from(["s1", "s2"]), VALUE, min_size=1, max_size=2))


@settings(max_examples=150)
@given(spec=SPEC)
def test_generated_provenance_counts_are_read_or_refused_by_the_rule(spec):
    per_subtask = isinstance(spec, dict)
    values = list(spec.values()) if per_subtask else [spec]
    good = all(map(usable, values)) and spec != {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = write_bundle(Path(tmp) / "b", raw=json.dumps({"answer_options": {"n_options": spec}}))
        problems = validate_bundle(folder)
        errors = [p for p in problems if p.severity == "error"]
        if good:
            assert errors == [], [str(p) for p in errors]
            expected = [spec.get(s, math.nan) if per_subtask else spec for s in SUBTASKS]
            got = load_bundle(folder).n_options
            assert np.array_equal(got, np.array(expected, dtype=float), equal_nan=True)
            return
        assert len(errors) == max(1, sum(not usable(v) for v in values)), [str(p) for p in errors]
        for problem in errors:
            assert problem.file == "provenance.json" and problem.location.startswith("key 'answer_options'")
            assert "\n" not in str(problem) and len(str(problem)) <= MAX_PROBLEM_CHARS
        with pytest.raises(BundleError, match="answer_options"):
            load_bundle(folder)


# -- generated: items.csv cells (over 100 drawn) -------------------------------------------------------------------

NUMBER = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*")


def cell_usable(text: str) -> bool | None:
    """None for an empty cell (unknown); else whether it is a count, by decimal arithmetic."""
    if not text.strip():
        return None
    if not NUMBER.fullmatch(text):
        return False
    try:
        number = Decimal(text.strip())
    except InvalidOperation:
        return False
    return number == number.to_integral_value() and 2 <= number <= 1000


CELL = st.one_of(
    st.integers(-5, 1200).map(str), st.integers(10**15, 10**320).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr), st.floats(-10, 2000).map(lambda x: f"{x:.1f}"),
    st.integers(0, 1200).map(lambda n: f"{n}.0"), st.integers(0, 400).map(lambda n: f"1e{n}"),
    st.sampled_from(["", " ", "four", "inf", "-inf", "Infinity", "nan", "NaN", "True", "0x10", "1_000", "4 ", "1e-400",
                     "+4", "4.", ".5e1"]),
)


@settings(max_examples=150)
@given(cell=CELL)
def test_generated_items_csv_counts_are_read_or_refused_by_the_rule(cell):
    verdict = cell_usable(cell)
    with tempfile.TemporaryDirectory() as tmp:
        folder = write_bundle(Path(tmp) / "b", column="n_options", cells=["4", f'"{cell}"', "5"])
        errors = errors_of(folder)
        if verdict is False:
            assert len(errors) == 1 and errors[0].location == "row 3 (item 'b'), column 'n_options'", errors
            assert len(str(errors[0])) <= MAX_PROBLEM_CHARS
            with pytest.raises(BundleError, match="n_options"):
                load_bundle(folder)
            return
        assert errors == [], [str(p) for p in errors]
        got = load_bundle(folder).n_options
        assert got[0] == 4 and got[2] == 5
        assert np.isnan(got[1]) if verdict is None else got[1] == float(Decimal(cell.strip()))


# -- through the command line: a real process for a few cases ------------------------------------------------------


def validate_process(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mbutils", "validate", str(folder)], capture_output=True, text=True,
                          cwd=REPO, timeout=120)


@pytest.mark.parametrize("case", ["provenance-2.5", "provenance-shape", "items-inf", "usable"])
def test_validate_in_a_real_process_exits_1_with_one_message_or_0(case, tmp_path):
    folder = {
        "provenance-2.5": lambda: write_bundle(tmp_path / "b", provenance={"answer_options": {"n_options": 2.5}}),
        "provenance-shape": lambda: write_bundle(tmp_path / "b", raw='{"answer_options": {"n_options": [4, 4]}}'),
        "items-inf": lambda: write_bundle(tmp_path / "b", column="n_options", cells=["4", "inf", "4"]),
        "usable": lambda: write_bundle(tmp_path / "b",
                                       provenance={"answer_options": {"n_options": {"s1": 2, "s2": 4}}}),
    }[case]()
    proc = validate_process(folder)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    if case == "usable":
        assert proc.returncode == 0 and proc.stdout.strip().endswith("valid bundle"), proc.stdout + proc.stderr
        return
    lines = [line for line in proc.stdout.splitlines() if line.startswith("error: ")]
    assert proc.returncode == 1 and len(lines) == 1, proc.stdout + proc.stderr
    where = "items.csv, row 3 (item 'b'), column 'n_options'" if case == "items-inf" else \
        "provenance.json, key 'answer_options', \"n_options\""
    assert lines[0].startswith(f"error: {where}: ") and "1,000" in lines[0], lines[0]
    assert proc.stderr.strip() == f"{folder}: 1 error(s); the bundle cannot be used until they are fixed"

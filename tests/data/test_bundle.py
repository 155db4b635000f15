"""The bundle folder format: finding, validating, loading and saving.

Bad bundles are written into tmp folders by each test, starting from a tiny good one, so
every problem is shown next to the message it must produce.
"""

from __future__ import annotations

import json
import os
import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mbutils.data.bundle.files as files_mod
import mbutils.data.bundle.metadata as metadata_mod
from mbutils.data import datapath
import mbutils.data.bundle.write as write_mod
from mbutils.data.bundle import (Benchmark, Problem, find_bundle, list_bundles, load_bundle, save_bundle, validate_bundle)
from mbutils.base.errors import BundleError

from conftest import real_bundle

RESPONSES = "model,q1,q2,q3,q4\norg/a,1,0,1,1\norg/b,0,0,1,0\norg/c,1,1,0,0\n"
ITEMS = "item,subtask\nq1,s1\nq2,s1\nq3,s2\nq4,s2\n"


def make(tmp_path: Path, files: dict[str, str | bytes | None] | None = None, name: str = "b") -> Path:
    """A bundle folder: the tiny good bundle with some files replaced (None removes one)."""
    folder = tmp_path / name
    folder.mkdir(parents=True)
    for file, content in {"responses.csv": RESPONSES, "items.csv": ITEMS, **(files or {})}.items():
        if content is None:
            continue
        data = content if isinstance(content, bytes) else content.encode()
        (folder / file).write_bytes(data)
    return folder


def errors(folder: Path) -> list[str]:
    return [str(p) for p in validate_bundle(folder) if p.severity == "error"]


def warnings(folder: Path) -> list[str]:
    return [str(p) for p in validate_bundle(folder) if p.severity == "warning"]


def one_error(folder: Path) -> str:
    found = errors(folder)
    assert len(found) == 1, found
    return found[0]


# -- real bundles ------------------------------------------------------------------------------


def test_real_gpqa_loads_with_the_papers_target_sets():
    folder = real_bundle("gpqa")
    bench = load_bundle(folder)
    assert (bench.n_models, bench.n_items) == (420, 448)
    assert list(bench.subtask_names) == ["gpqa_main"]
    assert {k: len(v) for k, v in bench.target_sets.items()} == {
        "7b_instruct": 50, "7b_base": 29, "70b_instruct": 12, "70b_base": 5,
    }
    assert bench.name == "gpqa" and bench.origin == str(folder.resolve())
    assert bench.confidence is None and list(bench.item_info.columns) == ["item", "subtask", "n_options"]
    assert bench.chance == 0.25  # four options, from the bundle's provenance
    assert set(bench.correct.ravel()) == {0, 1}
    # GPQA main has four options: accuracies sit around chance and below one half.
    assert 0.15 < bench.accuracy.min() and bench.accuracy.max() < 0.6
    assert validate_bundle(folder) == []


def test_real_gpqa_found_by_name_on_the_search_path(monkeypatch):
    folder = real_bundle("gpqa")
    monkeypatch.delenv("MBUTILS_DATA", raising=False)
    assert find_bundle("gpqa") == folder.resolve()
    assert list_bundles()["gpqa"] == folder.resolve()


def test_real_mmlu_pro_refuses_missing_cells_until_told_what_to_drop():
    folder = real_bundle("mmlu-pro-tiger-lab")
    with pytest.raises(BundleError) as err:
        load_bundle(folder)
    message = str(err.value)
    for fragment in ("DeepSeek-Coder-V2", "misses 1,681 items", "gemini-1.5-flash-002", "misses 20 items",
                     "gemini-1.5-pro-002", "misses 12 items", "1,706 of 12,032 items", "drop_models", "drop_items"):
        assert fragment in message
    by_models = load_bundle(folder, missing="drop_models")
    assert (by_models.n_models, by_models.n_items) == (26, 12032)
    assert not {"DeepSeek-Coder-V2", "gemini-1.5-flash-002", "gemini-1.5-pro-002"} & set(by_models.models)
    by_items = load_bundle(folder, missing="drop_items")
    assert (by_items.n_models, by_items.n_items) == (29, 12032 - 1706)
    assert len(by_models.subtask_names) == len(by_items.subtask_names) == 14
    # The kept cells are the same data: model rows agree on the items both keep.
    shared = pd.Index(by_models.items).isin(by_items.items)  # np.isin on objects is quadratic
    rows = by_items.model_index(by_models.models)
    np.testing.assert_array_equal(by_models.correct[:, shared], by_items.correct[rows])


def test_real_mmlu_pro_validates_with_one_warning_that_says_what_each_option_keeps():
    problems = validate_bundle(real_bundle("mmlu-pro-tiger-lab"))
    assert [p.severity for p in problems] == ["warning"]
    text = str(problems[0])
    assert text.startswith("responses.csv.gz: 1,713 empty cells")  # named as stored
    assert "keeps 26 models x 12,032 items" in text and "keeps 29 models x 10,326 items" in text
    assert "--missing drop-models" in text


# -- a good bundle ------------------------------------------------------------------------------


def test_tiny_bundle_loads_in_responses_column_order(tmp_path):
    folder = make(tmp_path, {
        "items.csv": "subtask,item,n_choices,source\ns2,q4,5,x\ns1,q2,4,\ns2,q3,5,y\ns1,q1,4,z\n",
        "models.csv": "model,size_b,instruct\norg/c,70,True\norg/a,7.5,False\n",
    })
    bench = load_bundle(folder)
    assert list(bench.models) == ["org/a", "org/b", "org/c"]
    assert list(bench.items) == ["q1", "q2", "q3", "q4"]
    assert list(bench.subtasks) == ["s1", "s1", "s2", "s2"]
    np.testing.assert_array_equal(bench.correct, [[1, 0, 1, 1], [0, 0, 1, 0], [1, 1, 0, 0]])
    info = bench.item_info
    assert list(info["item"]) == list(bench.items) and list(info["n_choices"]) == [4, 4, 5, 5]
    assert info["n_choices"].dtype == np.int64
    assert info["source"].tolist()[0] == "z" and pd.isna(info["source"].tolist()[1])
    models = bench.model_info
    assert list(models["model"]) == list(bench.models)
    assert models["size_b"].tolist()[0] == 7.5 and np.isnan(models["size_b"].tolist()[1])
    assert validate_bundle(folder) == [
        Problem("models.csv", "", "no row, so no metadata, for models of responses.csv: 'org/b'", "warning"),
    ]


def test_decimal_spellings_and_blank_lines_are_accepted(tmp_path):
    folder = make(tmp_path, {"responses.csv": "model,q1,q2,q3,q4\r\norg/a,1.0,0.0,1,0\r\n\r\norg/b,0,1,0.0,1.0\r\n"})
    np.testing.assert_array_equal(load_bundle(folder).correct, [[1, 0, 1, 0], [0, 1, 0, 1]])


def test_utf8_with_byte_order_mark_and_quoted_names(tmp_path):
    folder = make(tmp_path, {"responses.csv": '\ufeffmodel,q1,q2,q3,q4\n"org/a,v2",1,0,1,1\n"say ""hi""",0,0,1,0\n'})
    assert list(load_bundle(folder).models) == ["org/a,v2", 'say "hi"']


# -- every validation problem ---------------------------------------------------------------------


def test_problem_text_names_file_row_and_column(tmp_path):
    folder = make(tmp_path, {"responses.csv": RESPONSES.replace("org/b,0,0,1,0", "org/b,0,0,2,0")})
    assert one_error(folder) == "responses.csv, row 3 (model 'org/b'), column 'q3': value '2' is not 0 or 1"
    problem = validate_bundle(folder)[0]
    assert (problem.file, problem.location, problem.severity) == (
        "responses.csv", "row 3 (model 'org/b'), column 'q3'", "error")


def test_every_bad_value_is_reported_with_a_hint(tmp_path):
    folder = make(tmp_path, {"responses.csv": "model,q1,q2,q3,q4\norg/a,NaN,0.5,yes,1\norg/b,0,1,0,1.00\n"})
    found = errors(folder)
    assert found == [
        "responses.csv, row 2 (model 'org/a'), column 'q1': value 'NaN' is not 0 or 1 "
        "(leave the cell empty for a missing answer)",
        "responses.csv, row 2 (model 'org/a'), column 'q2': value '0.5' is not 0 or 1 "
        "(responses are correctness, 0 or 1; probabilities belong in confidence.csv)",
        "responses.csv, row 2 (model 'org/a'), column 'q3': value 'yes' is not 0 or 1",
        "responses.csv, row 3 (model 'org/b'), column 'q4': value '1.00' is not 0 or 1",
    ]


def test_long_invalid_values_are_not_mistaken_for_valid_ones(tmp_path):
    # Values are classified from their first 4 characters; '1.0x' and '0.000' must stay invalid.
    folder = make(tmp_path, {"responses.csv": "model,q1,q2,q3,q4\norg/a,1.0x,0.000,10,1\n"})
    assert len(errors(folder)) == 3
    # An empty field next to a two-character one must not pass as a row of single 0/1 characters.
    balanced = make(tmp_path, {"responses.csv": "model,q1,q2,q3,q4\norg/a,,10,1,1\n"}, name="balanced")
    assert errors(balanced) == ["responses.csv, row 2 (model 'org/a'), column 'q2': value '10' is not 0 or 1"]


def test_many_problems_of_one_kind_are_capped_with_a_count(tmp_path):
    rows = "".join(f"m{i},2,2,2,2\n" for i in range(30))
    folder = make(tmp_path, {"responses.csv": "model,q1,q2,q3,q4\n" + rows})
    found = errors(folder)
    assert len(found) == 11
    assert found[9] == "responses.csv, row 4 (model 'm2'), column 'q2': value '2' is not 0 or 1"
    assert found[10] == "responses.csv: ... and 110 more values that are not 0 or 1"


def test_duplicate_models_name_their_rows(tmp_path):
    folder = make(tmp_path, {"responses.csv": RESPONSES + "org/a,0,0,0,0\n"})
    assert one_error(folder) == (
        "responses.csv, rows 2 and 5: model 'org/a' appears more than once; keep one row per model")


def test_duplicate_items_in_the_responses_header_name_their_columns(tmp_path):
    folder = make(tmp_path, {"responses.csv": RESPONSES.replace("q4", "q2", 1)})
    found = errors(folder)
    assert ("responses.csv, row 1 (header): item 'q2' appears in columns 3 and 5; "
            "item names must be unique") in found
    assert any(f.startswith("items.csv, row 5 (item 'q4'): this item is not a column") for f in found)


def test_duplicate_items_in_items_csv_name_their_rows(tmp_path):
    folder = make(tmp_path, {"items.csv": ITEMS + "q2,s2\n"})
    assert one_error(folder) == "items.csv, rows 3 and 6: item 'q2' appears more than once; keep one row per item"


def test_items_missing_from_items_csv_and_extra_items_are_both_reported(tmp_path):
    folder = make(tmp_path, {"items.csv": "item,subtask\nq1,s1\nq2,s1\nq3,s2\nq9,s2\n"})
    assert errors(folder) == [
        "items.csv: item 'q4' (column 5 of responses.csv) has no row; add it with its subtask",
        "items.csv, row 5 (item 'q9'): this item is not a column of responses.csv; remove the row or add the column",
    ]


def test_ragged_rows_give_their_line_numbers(tmp_path):
    text = "model,q1,q2,q3,q4\norg/a,1,0,1\norg/b,0,0,1,0\norg/c,1,1,0,0,\n"
    found = errors(make(tmp_path, {"responses.csv": text}))
    assert found == [
        "responses.csv, row 2 (model 'org/a'): has 4 fields but the header has 5; "
        "every row needs exactly one field per header column",
        "responses.csv, row 4 (model 'org/c'): has 6 fields but the header has 5 "
        "(the extra fields are empty: a trailing comma?); every row needs exactly one field per header column",
    ]


def test_ragged_rows_in_items_csv_name_the_item(tmp_path):
    found = errors(make(tmp_path, {"items.csv": ITEMS.replace("q3,s2", "q3")}))
    assert found[0].startswith("items.csv, row 4 (item 'q3'): has 1 fields but the header has 2")


@pytest.mark.parametrize("content, fragment", [
    ("", "responses.csv: the file is empty; expected a header row"),
    ("\n\n", "responses.csv: the file is empty"),
    ("model,q1,q2,q3,q4\n", "responses.csv: the file has a header but no model rows"),
    ("model\norg/a\n", "responses.csv, row 1 (header): no item columns"),
    (None, "responses.csv: file not found in"),
])
def test_unusable_responses_files(tmp_path, content, fragment):
    found = errors(make(tmp_path, {"responses.csv": content}))
    assert found[0].startswith(fragment), found
    with pytest.raises(BundleError, match="cannot be loaded"):
        load_bundle(tmp_path / "b")


@pytest.mark.parametrize("content, fragment", [
    (None, "items.csv: file not found in"),
    ("", "items.csv: the file is empty"),
    ("item,subtask\n", "items.csv: the file has a header but no item rows"),
    ("item,category\nq1,a\n", "items.csv, row 1 (header): no 'subtask' column (columns found: item, category)"),
    ("name,subtask\nq1,a\n", "items.csv, row 1 (header): no 'item' column"),
    ("id,group\nq1,a\n", "items.csv, row 1 (header): no 'item' or 'subtask' column"),
])
def test_unusable_items_files(tmp_path, content, fragment):
    assert one_error(make(tmp_path, {"items.csv": content})).startswith(fragment)


def test_empty_subtask_names(tmp_path):
    folder = make(tmp_path, {"items.csv": "item,subtask\nq1,s1\nq2,\nq3,s2\nq4,\n"})
    found = errors(folder)
    assert [f.split(":")[0] for f in found] == ["items.csv, row 3 (item 'q2')", "items.csv, row 5 (item 'q4')"]
    assert "empty subtask name" in found[0]


def test_first_column_not_called_model_is_a_warning(tmp_path):
    folder = make(tmp_path, {"responses.csv": RESPONSES.replace("model,", "name,", 1)})
    assert errors(folder) == []
    assert warnings(folder) == [
        "responses.csv, row 1 (header): the first column is named 'name'; it is read as the model names "
        "(call it 'model')"]


def test_files_that_are_not_utf8_say_so_and_how_to_fix_it(tmp_path):
    latin1 = RESPONSES.replace("org/c", "org/café").encode("latin-1")
    found = one_error(make(tmp_path, {"responses.csv": latin1}))
    assert found.startswith("responses.csv, row 4: the file is not UTF-8 text (byte 0xe9")
    assert "re-save it as UTF-8" in found
    utf16 = make(tmp_path, {"items.csv": ITEMS.encode("utf-16")}, name="u16")
    assert one_error(utf16).startswith("items.csv, row 1: the file is not UTF-8 text")


# -- confidences ---------------------------------------------------------------------------------

CONF = "model,q1,q2,q3,q4\norg/a,0.9,0.2,0.8,0.7\norg/b,0.1,0.3,0.6,0.4\norg/c,0.6,0.5,0.5,0.25\n"


def test_confidences_load_matched_by_name_in_any_order(tmp_path):
    reordered = "model,q4,q3,q2,q1\norg/c,0.25,0.5,0.5,0.6\norg/a,0.7,0.8,0.2,0.9\norg/b,0.4,0.6,0.3,0.1\n"
    bench = load_bundle(make(tmp_path, {"confidence.csv": reordered}))
    np.testing.assert_array_equal(bench.confidence, [[.9, .2, .8, .7], [.1, .3, .6, .4], [.6, .5, .5, .25]])


def test_confidences_outside_the_unit_interval_or_not_numbers(tmp_path):
    bad = CONF.replace("0.2,", "1.5,").replace("0.1,", "-0.1,").replace("0.5,0.5", "abc,nan").replace("0.4", "inf")
    found = errors(make(tmp_path, {"confidence.csv": bad}))
    assert found == [
        "confidence.csv, row 2 (model 'org/a'), column 'q2': value '1.5' is outside [0, 1]; "
        "confidences are probabilities between 0 and 1",
        "confidence.csv, row 3 (model 'org/b'), column 'q1': value '-0.1' is outside [0, 1]; "
        "confidences are probabilities between 0 and 1",
        "confidence.csv, row 3 (model 'org/b'), column 'q4': value 'inf' is outside [0, 1]; "
        "confidences are probabilities between 0 and 1",
        "confidence.csv, row 4 (model 'org/c'), column 'q2': value 'abc' is not a number; "
        "confidences are probabilities between 0 and 1",
        "confidence.csv, row 4 (model 'org/c'), column 'q3': value 'nan' is not a number; "
        "confidences are probabilities between 0 and 1",
    ]


def test_confidence_models_and_items_must_match_responses(tmp_path):
    other = "model,q1,q2,q3,q9\norg/a,0.9,0.2,0.8,0.7\norg/x,0.1,0.3,0.6,0.4\n"
    found = errors(make(tmp_path, {"confidence.csv": other}))
    assert found == [
        "confidence.csv: has models that responses.csv lacks: 'org/x'",
        "confidence.csv: lacks models of responses.csv: 'org/b' and 'org/c'",
        "confidence.csv: has items that responses.csv lacks: 'q9'",
        "confidence.csv: lacks items of responses.csv: 'q4'",
        "confidence.csv: has 2 models x 4 items but responses.csv has 3 x 4; it must have the same models and items",
    ]


def test_empty_confidence_only_where_the_response_is_empty(tmp_path):
    responses = RESPONSES.replace("org/b,0,0,1,0", "org/b,0,0,1,")
    conf = CONF.replace("0.6,0.4", "0.6,").replace("0.9,0.2", "0.9,")
    found = errors(make(tmp_path, {"responses.csv": responses, "confidence.csv": conf}))
    assert found == ["confidence.csv, row 2 (model 'org/a'), column 'q2': empty, but responses.csv has an answer; "
                     "give both or leave both empty"]


def test_dropping_items_drops_their_confidences_too(tmp_path):
    responses = RESPONSES.replace("org/b,0,0,1,0", "org/b,0,,1,0")
    conf = CONF.replace("0.1,0.3,", "0.1,,")
    bench = load_bundle(make(tmp_path, {"responses.csv": responses, "confidence.csv": conf}), missing="drop_items")
    assert list(bench.items) == ["q1", "q3", "q4"]
    np.testing.assert_array_equal(bench.confidence, [[.9, .8, .7], [.1, .6, .4], [.6, .5, .25]])


# -- target sets and models.csv -------------------------------------------------------------------


@pytest.mark.parametrize("content, expected", [
    ('{"a": ["org/a",]}', "target_sets.json, line 1, column 16: not valid JSON (Expecting value)"),
    ('["org/a"]', "target_sets.json: must be a JSON object mapping each set name to a list of model names"),
    ('{"a": "org/a"}', "target_sets.json, set 'a': must be a list of model names (strings)"),
    ('{"a": ["org/a", 3]}', "target_sets.json, set 'a': must be a list of model names (strings)"),
    ('{"a": ["org/a", "org/zz"]}', "target_sets.json, set 'a': names models not in responses.csv: 'org/zz'"),
    ('{"a": ["org/a", "org/a"]}', "target_sets.json, set 'a': names 'org/a' more than once"),
])
def test_bad_target_sets(tmp_path, content, expected):
    assert one_error(make(tmp_path, {"target_sets.json": content})).startswith(expected)


def test_target_sets_json_must_be_utf8(tmp_path):
    found = one_error(make(tmp_path, {"target_sets.json": '{"caf\xe9": ["org/a"]}'.encode("latin-1")}))
    assert found.startswith("target_sets.json, line 1: the file is not UTF-8 text")


def test_models_csv_needs_a_model_column_and_unique_models(tmp_path):
    assert one_error(make(tmp_path, {"models.csv": "name,size\norg/a,7\n"})).startswith(
        "models.csv, row 1 (header): no 'model' column (columns found: name, size)")
    found = errors(make(tmp_path, {"models.csv": "model,size\norg/a,7\norg/a,8\n"}, name="dup"))
    assert found == ["models.csv, rows 2 and 3: model 'org/a' appears more than once"]


# -- missing cells -----------------------------------------------------------------------------------

HOLES = "model,q1,q2,q3,q4\norg/a,1,,1,1\norg/b,0,0,1,0\norg/c,,1,,0\n"


def test_missing_cells_are_a_warning_that_suggests_both_drops(tmp_path):
    folder = make(tmp_path, {"responses.csv": HOLES})
    problems = validate_bundle(folder)
    assert [p.severity for p in problems] == ["warning"]
    assert str(problems[0]) == (
        "responses.csv: 3 empty cells (missing answers) in 2 of 3 models and 3 of 4 items: "
        "org/a (row 2) misses 1 item; org/c (row 4) misses 2 items. To load it, choose: "
        'missing="drop_models" (command line: --missing drop-models) keeps 1 model x 4 items; '
        'missing="drop_items" (--missing drop-items) keeps 3 models x 1 item.')


def test_missing_cells_stop_the_default_load_and_each_drop_resolves_them(tmp_path):
    folder = make(tmp_path, {
        "responses.csv": HOLES,
        "target_sets.json": json.dumps({"ac": ["org/a", "org/c"], "b": ["org/b"]}),
        "items.csv": "item,subtask,n\nq1,s1,1\nq2,s1,2\nq3,s2,3\nq4,s2,4\n",
        "models.csv": "model,size\norg/a,1\norg/b,2\norg/c,3\n",
    })
    with pytest.raises(BundleError, match=r"org/a \(row 2\) misses 1 item; org/c \(row 4\) misses 2 items"):
        load_bundle(folder)
    by_models = load_bundle(folder, missing="drop_models")
    assert list(by_models.models) == ["org/b"] and by_models.target_sets == {"ac": [], "b": ["org/b"]}
    assert list(by_models.model_info["size"]) == [2]
    by_items = load_bundle(folder, missing="drop_items")
    assert list(by_items.items) == ["q4"] and list(by_items.subtasks) == ["s2"]
    assert list(by_items.item_info["n"]) == [4] and by_items.target_sets["ac"] == ["org/a", "org/c"]
    np.testing.assert_array_equal(by_items.correct, [[1], [0], [0]])


def test_a_drop_that_leaves_nothing_says_so(tmp_path):
    folder = make(tmp_path, {"responses.csv": "model,q1,q2\norg/a,1,\norg/b,,0\n",
                             "items.csv": "item,subtask\nq1,s\nq2,s\n"})
    with pytest.raises(BundleError, match="leaves nothing"):
        load_bundle(folder, missing="drop_models")


def test_unknown_missing_policy_is_an_error(tmp_path):
    with pytest.raises(BundleError, match="missing must be one of 'error', 'drop_models', 'drop_items'"):
        load_bundle(make(tmp_path), missing="drop-models")


def test_dropping_does_not_excuse_a_target_set_naming_an_unknown_model(tmp_path):
    folder = make(tmp_path, {"responses.csv": HOLES, "target_sets.json": '{"x": ["org/b", "org/nobody"]}'})
    with pytest.raises(BundleError, match="set 'x': names models not in responses.csv: 'org/nobody'"):
        load_bundle(folder, missing="drop_models")


# -- all at once ----------------------------------------------------------------------------------------


def test_validation_finds_every_problem_and_load_lists_the_same_text(tmp_path):
    folder = make(tmp_path, {
        "responses.csv": "model,q1,q2,q3,q3\norg/a,1,0,2\norg/b,0,0,1,0\norg/b,1,x,0,\n",
        "items.csv": "item,subtask\nq1,s1\nq2,\nq3,s2\nq7,s2\n",
        "confidence.csv": "model,q1\norg/a,3\n",
        "target_sets.json": '{"t": ["org/a"]',
    })
    problems = validate_bundle(folder)
    text = [str(p) for p in problems]
    expected_starts = [
        "responses.csv, row 1 (header): item 'q3' appears in columns 4 and 5",
        "responses.csv, row 2 (model 'org/a'): has 4 fields but the header has 5",
        "responses.csv, row 4 (model 'org/b'), column 'q2': value 'x' is not 0 or 1",
        "responses.csv, rows 3 and 4: model 'org/b' appears more than once",
        "responses.csv: 1 empty cell (missing answers)",
        "items.csv, row 3 (item 'q2'): empty subtask name",
        "items.csv, row 5 (item 'q7'): this item is not a column of responses.csv",
        "confidence.csv, row 2 (model 'org/a'), column 'q1': value '3' is outside [0, 1]",
        "target_sets.json, line 1, column 16: not valid JSON",
    ]
    for start in expected_starts:
        assert sum(t.startswith(start) for t in text) == 1, (start, text)
    with pytest.raises(BundleError) as err:
        load_bundle(folder)
    message = str(err.value)
    for problem in problems:
        assert (str(problem) in message) == (problem.severity == "error")
    assert "python -m mbutils validate" in message


def test_validate_and_load_read_each_file_once(tmp_path, monkeypatch):
    folder = make(tmp_path, {"confidence.csv": CONF, "target_sets.json": '{"t": ["org/a"]}',
                             "models.csv": "model,size\norg/a,1\n"})
    opened = []
    original = files_mod.decode
    for module in (files_mod, metadata_mod):  # the CSV files are opened in files, target_sets.json in metadata
        monkeypatch.setattr(module, "decode", lambda path, log: opened.append(path.name) or original(path, log))
    load_bundle(folder)
    assert sorted(opened) == sorted(["responses.csv", "items.csv", "confidence.csv", "models.csv", "target_sets.json"])


# -- saving ------------------------------------------------------------------------------------------------


def rich_benchmark() -> Benchmark:
    rng = np.random.default_rng(7)
    n_models, n_items = 6, 9
    conf = rng.random((n_models, n_items))
    conf[0, :3] = [1 / 3, 1e-300, 0.1 + 0.2]  # values whose decimal text must round-trip exactly
    conf[1, :2] = [0.0, 1.0]
    models = np.array(["org/a", "org/b,v2", 'say "x"', "naïve-λ", "m5", "m6"], dtype=object)
    items = np.array([f"q{j}" for j in range(n_items)], dtype=object)
    return Benchmark(
        name="rich", correct=(conf > 0.5).astype(np.int8), models=models, items=items,
        subtasks=np.array(["alg"] * 4 + ["geo"] * 5, dtype=object), confidence=conf,
        item_info=pd.DataFrame({"item": items, "n_choices": np.arange(n_items) % 3 + 2,
                                "weight": [0.1, np.nan, 1 / 7, 2.5, 1e-9, 3.0, 4.0, 5.0, 6.0],
                                "note": ["a", None, "b,c", "d", "e", "f", "g", "h", "i"]}),
        model_info=pd.DataFrame({"model": models, "size_b": [7, 70, 8, 1, 2, 3],
                                 "instruct": [True, False, True, True, False, False]}),
        target_sets={"odd": ["org/b,v2", "naïve-λ"], "one": ["m6"]},
    )


def test_save_then_load_round_trips_exactly(tmp_path):
    bench = rich_benchmark()
    folder = save_bundle(bench, tmp_path / "saved")
    assert sorted(p.name for p in folder.iterdir()) == [
        "confidence.csv", "items.csv", "models.csv", "responses.csv", "target_sets.json"]
    assert validate_bundle(folder) == []
    back = load_bundle(folder)
    assert back.name == "saved" and back.origin == str(folder)
    np.testing.assert_array_equal(back.correct, bench.correct)
    assert (back.confidence == bench.confidence).all()  # bit-exact, not approximately
    assert list(back.models) == list(bench.models) and list(back.items) == list(bench.items)
    assert list(back.subtasks) == list(bench.subtasks)
    assert back.target_sets == bench.target_sets
    assert back.content_hash == bench.content_hash
    assert list(back.item_info["n_choices"]) == list(bench.item_info["n_choices"])
    np.testing.assert_array_equal(back.item_info["weight"], bench.item_info["weight"])
    assert back.item_info["note"].tolist()[2] == "b,c" and pd.isna(back.item_info["note"].tolist()[1])
    assert list(back.model_info.columns) == ["model", "size_b", "instruct"]
    assert list(back.model_info["model"]) == list(bench.models)
    assert back.model_info["size_b"].tolist() == [7, 70, 8, 1, 2, 3]
    assert back.model_info["instruct"].tolist() == [True, False, True, True, False, False]
    assert back.model_info["instruct"].dtype == bool
    assert (folder / "responses.csv").read_text().splitlines()[1].startswith("org/a,")


def test_a_minimal_benchmark_saves_only_the_required_files(tmp_path):
    bench = Benchmark(name="x", correct=[[1, 0], [0, 1]], models=["a", "b"], items=["i", "j"], subtasks=["s", "s"])
    folder = save_bundle(bench, tmp_path / "x")
    assert sorted(p.name for p in folder.iterdir()) == ["items.csv", "responses.csv"]
    assert (folder / "responses.csv").read_text() == "model,i,j\na,1,0\nb,0,1\n"
    assert (folder / "items.csv").read_text() == "item,subtask\ni,s\nj,s\n"


def test_save_refuses_a_non_empty_folder_unless_told_to_overwrite(tmp_path):
    target = tmp_path / "out"
    target.mkdir()
    save_bundle(rich_benchmark(), target)  # an empty folder is fine
    small = Benchmark(name="x", correct=[[1, 0]], models=["a"], items=["i", "j"], subtasks=["s", "s"])
    with pytest.raises(BundleError, match="exists and is not empty; pass overwrite=True"):
        save_bundle(small, target)
    assert load_bundle(target).n_models == 6
    save_bundle(small, target, overwrite=True)
    assert sorted(p.name for p in target.iterdir()) == ["items.csv", "responses.csv"]  # no stale files
    assert load_bundle(target).n_models == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no temporary folders left


def test_a_failed_save_leaves_nothing_behind(tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(write_mod.json, "dump", broken)  # target_sets.json is written last
    with pytest.raises(OSError, match="disk full"):
        save_bundle(rich_benchmark(), tmp_path / "new")
    assert list(tmp_path.iterdir()) == []


def test_a_failed_overwrite_keeps_the_old_bundle(tmp_path, monkeypatch):
    target = save_bundle(rich_benchmark(), tmp_path / "old")
    before = {p.name: p.read_bytes() for p in target.iterdir()}
    monkeypatch.setattr(write_mod.json, "dump", lambda *a, **k: (_ for _ in ()).throw(OSError("disk full")))
    small = Benchmark(name="x", correct=[[1, 0]], models=["a"], items=["i", "j"], subtasks=["s", "s"],
                      target_sets={"t": ["a"]})
    with pytest.raises(OSError):
        save_bundle(small, target, overwrite=True)
    assert {p.name: p.read_bytes() for p in target.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old"]


def test_save_refuses_a_file_in_the_way(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(BundleError, match="it is a file"):
        save_bundle(rich_benchmark(), tmp_path / "f", overwrite=True)


# -- finding bundles ---------------------------------------------------------------------------------------


def test_search_order_is_mbutils_data_in_order_then_the_repository_data_folder(tmp_path, monkeypatch):
    first, second, repo = tmp_path / "first", tmp_path / "second", tmp_path / "repo"
    make(first, name="shared")
    make(second, name="shared")
    make(second, name="only2")
    make(repo, name="shared")
    make(repo, name="onlyrepo")
    (second / ".hidden").mkdir()
    (second / ".hidden" / "responses.csv").write_text(RESPONSES)
    (second / "notabundle").mkdir()
    monkeypatch.setattr(datapath, "REPO_DATA", repo)
    monkeypatch.setenv("MBUTILS_DATA", f"{first}{os.pathsep}{os.pathsep}{second}")
    assert find_bundle("shared") == (first / "shared").resolve()
    assert find_bundle("only2") == (second / "only2").resolve()
    assert find_bundle("onlyrepo") == (repo / "onlyrepo").resolve()
    assert list_bundles() == {"shared": (first / "shared").resolve(), "only2": (second / "only2").resolve(),
                              "onlyrepo": (repo / "onlyrepo").resolve()}
    monkeypatch.setenv("MBUTILS_DATA", str(second))
    assert find_bundle("shared") == (second / "shared").resolve()
    monkeypatch.delenv("MBUTILS_DATA")
    assert find_bundle("shared") == (repo / "shared").resolve()


def test_a_folder_path_is_used_as_given(tmp_path, monkeypatch):
    folder = make(tmp_path, name="anywhere")
    monkeypatch.chdir(tmp_path)
    assert find_bundle("anywhere") == folder.resolve()
    assert find_bundle(folder) == folder.resolve()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert find_bundle(empty) == empty.resolve()  # used as is; validation then says what is missing
    assert [p.file for p in validate_bundle(empty)] == ["responses.csv", "items.csv"]


def test_not_found_names_what_was_searched_and_what_exists(tmp_path, monkeypatch):
    make(tmp_path / "root", name="mine")
    monkeypatch.setattr(datapath, "REPO_DATA", tmp_path / "repo-data")
    monkeypatch.setenv("MBUTILS_DATA", str(tmp_path / "root"))
    with pytest.raises(BundleError) as err:
        find_bundle("theirs")
    message = str(err.value)
    assert "no bundle named 'theirs'" in message and str(tmp_path / "root") in message
    assert str(tmp_path / "repo-data") in message and "Bundles available: mine." in message
    with pytest.raises(BundleError, match="no folder"):
        find_bundle(tmp_path / "nowhere" / "x")
    with pytest.raises(BundleError, match="is a file"):
        find_bundle(tmp_path / "root" / "mine" / "responses.csv")
    with pytest.raises(BundleError, match="no bundle given"):
        find_bundle("")


def test_synthetic_names_are_generated_unless_a_folder_has_that_name(tmp_path, monkeypatch):
    calls = []
    fake = types.ModuleType("mbutils.data.synthetic")
    fake.make_synthetic = lambda name: calls.append(name) or Benchmark(
        name=name, correct=[[1]], models=["m"], items=["i"], subtasks=["s"])
    monkeypatch.setitem(sys.modules, "mbutils.data.synthetic", fake)
    monkeypatch.setattr(datapath, "REPO_DATA", tmp_path / "repo-data")
    monkeypatch.setenv("MBUTILS_DATA", str(tmp_path))
    from mbutils.data.datasets import load_benchmark as load_any

    assert load_any("synthetic-gpqa").name == "synthetic-gpqa" and calls == ["synthetic-gpqa"]
    make(tmp_path, name="synthetic-bbh")
    assert load_any("synthetic-bbh").origin == str((tmp_path / "synthetic-bbh").resolve())
    assert calls == ["synthetic-gpqa"]
    with pytest.raises(BundleError, match="no bundle named 'gpqa-synthetic'"):
        load_any("gpqa-synthetic")
    with pytest.raises(BundleError, match="no bundle named 'synthetic-mmlu'"):
        load_bundle("synthetic-mmlu")  # the folder reader never simulates: that is the catalogue's job


# -- compressed files ---------------------------------------------------------


def gz(text: str) -> bytes:
    import gzip

    return gzip.compress(text.encode(), mtime=0)


def test_a_gzipped_bundle_loads_like_the_plain_one(tmp_path):
    plain = load_bundle(make(tmp_path / "plain"))
    packed = make(tmp_path / "packed", {"responses.csv": None, "items.csv": None,
                                        "responses.csv.gz": gz(RESPONSES), "items.csv.gz": gz(ITEMS)})
    assert find_bundle(packed) == packed.resolve() and validate_bundle(packed) == []
    loaded = load_bundle(packed)
    assert loaded.content_hash == plain.content_hash
    np.testing.assert_array_equal(loaded.correct, plain.correct)


def test_problems_in_a_gzipped_file_name_the_stored_file_row_and_column(tmp_path):
    lines = RESPONSES.splitlines()
    bad = lines[:2] + [lines[2].rsplit(",", 1)[0] + ",7"] + lines[3:]
    folder = make(tmp_path, {"responses.csv": None, "responses.csv.gz": gz("\n".join(bad) + "\n")})
    message = one_error(folder)
    assert message.startswith("responses.csv.gz, row 3 (model ") and "column '" in message
    assert "value '7' is not 0 or 1" in message


def test_a_broken_gzip_file_and_a_doubled_file_are_refused_by_name(tmp_path):
    broken = make(tmp_path, {"responses.csv": None, "responses.csv.gz": gz(RESPONSES)[:-9]}, name="broken")
    message = one_error(broken)
    assert message.startswith("responses.csv.gz: is not a readable gzip file") and "uncompressed as responses.csv" in message
    doubled = make(tmp_path, {"items.csv.gz": gz(ITEMS)}, name="doubled")
    assert one_error(doubled) == ("items.csv: both items.csv and items.csv.gz exist, and they may differ; keep one")
    with pytest.raises(BundleError, match="both items.csv and items.csv.gz"):
        load_bundle(doubled)

"""Hardening IV: names validate and build-micro judge alike, and names that only look alike.

* Task names build-micro would export under (read off the item ids, or stated by items.csv or
  provenance.json) are judged by validate with build-micro's own rule: a bundle is refused by both or by
  neither (``Alpha`` and ``alpha`` are one file on some systems). Loading does not need them fixed.
* A bad task name provenance.json states is blamed on provenance.json and its key, not on items.csv.
* Items, models and subtasks that differ only in Unicode normalisation (NFC against NFD) are refused
  as duplicates, one message naming both spellings, escaped.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import REPO
from helpers import run_cli
from mbutils.base.errors import BundleError
from mbutils.data.bundle import load_bundle, validate_bundle
from mbutils.data.bundle.harness import harness_map

NFC, NFD = unicodedata.normalize("NFC", "café"), unicodedata.normalize("NFD", "café")
KELVIN = "\u212a"  # KELVIN SIGN: NFC makes it 'K'


def write_bundle(folder: Path, items, subtasks, *, models=None, columns=None, provenance=None, rows_items=None):
    """A bundle of ``items`` (with ``subtasks``) answered by ``models``; ``columns`` adds items.csv columns
    (name -> cells); ``rows_items`` spells items.csv's item column differently from responses.csv."""
    folder.mkdir(parents=True)
    models = models or ["m1", "m2", "m3", "m4"]
    with open(folder / "responses.csv", "w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh, lineterminator="\n")
        out.writerow(["model", *items])
        out.writerows([model, *[(i + j) % 2 for j in range(len(items))]] for i, model in enumerate(models))
    columns = columns or {}
    with open(folder / "items.csv", "w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh, lineterminator="\n")
        out.writerow(["item", "subtask", *columns])
        out.writerows(zip(rows_items or items, subtasks, *columns.values()))
    if provenance is not None:
        (folder / "provenance.json").write_text(json.dumps(provenance), encoding="utf-8")
    return folder


def errors_of(folder) -> list:
    return [p for p in validate_bundle(folder) if p.severity == "error"]


def build_micro(folder: Path, out: Path) -> tuple[int, str, str]:
    return run_cli("build-micro", "--data", folder, "--selector", "random", "--k", "2", "--runs", "1", "--out", out,
                   "--quiet")


def build_micro_refuses(folder: Path) -> str | None:
    """What build-micro checks first (its task names), as build-micro calls it: the message, or None."""
    from mbutils.micro.lm_eval_task import check_exportable, item_documents

    bench = load_bundle(folder)
    try:
        harness = harness_map(bench)
        if harness is None or not harness.unavailable:
            check_exportable(bench.items, bench.subtasks, parsed=item_documents(bench.items, bench.subtasks, harness))
    except BundleError as err:
        return str(err)
    return None


# -- 4. validate applies build-micro's rule to task names --------------------------------------------------------


def alpha_items() -> tuple[list[str], list[str]]:
    items = [f"Alpha_{j}" for j in range(3)] + [f"alpha_{j}" for j in range(3)]
    return items, ["Alpha"] * 3 + ["alpha"] * 3


def test_subtasks_alpha_and_alpha_are_refused_by_validate_as_by_build_micro(tmp_path):
    items, subtasks = alpha_items()
    folder = write_bundle(tmp_path / "b", items, subtasks)
    (problem,) = errors_of(folder)
    assert problem.file == "items.csv" and problem.kind == "export"
    assert problem.location == "rows 2 and 5 (items 'Alpha_0' and 'alpha_0')"
    assert "task names 'Alpha' and 'alpha' differ only in case" in problem.message
    code, out, err = run_cli("validate", folder)
    assert code == 1 and out.count("error: ") == 1 and "build-micro refuses the bundle" in err, out + err
    code, _, err = build_micro(folder, tmp_path / "out")
    assert code == 1 and "'Alpha' and 'alpha' differ only in case" in err and not (tmp_path / "out").exists()
    assert load_bundle(folder).n_items == 6  # experiments can still use it


def test_subtasks_alpha_and_alpha_whose_items_are_no_documents_are_accepted_by_both(tmp_path):
    folder = write_bundle(tmp_path / "b", [f"q{j}" for j in range(6)], ["Alpha"] * 3 + ["alpha"] * 3)
    assert errors_of(folder) == [] and build_micro_refuses(folder) is None


CONSISTENCY = {
    "case": alpha_items(),
    "dash-underscore": ([f"a-b:{j}" for j in range(3)] + [f"a_b:{j}" for j in range(3)], ["x"] * 6),
    "dot-underscore": ([f"t.1:{j}" for j in range(3)] + [f"T_1:{j}" for j in range(3)], ["x"] * 6),
    "space": ([f"my task:{j}" for j in range(4)], ["s"] * 4),
    "leading-dash": ([f"-t:{j}" for j in range(4)], ["s"] * 4),
    "non-ascii": ([f"t\u00e2che:{j}" for j in range(4)], ["s"] * 4),
    "too-long": ([f"{'t' * 101}:{j}" for j in range(4)], ["s"] * 4),
    "suffix": ([f"t:{j}" for j in range(3)] + [f"t_micro:{j}" for j in range(3)], ["s"] * 6),
    "fine-colon": ([f"gpqa:{j}" for j in range(4)], ["s"] * 4),
    "fine-suffix-ids": ([f"s_{j}" for j in range(4)], ["s"] * 4),
    "fine-two-tasks": ([f"a:{j}" for j in range(3)] + [f"b:{j}" for j in range(3)], ["s"] * 6),
    "not-documents": ([f"Q{j}" for j in range(4)], ["S"] * 4),
}


@pytest.mark.parametrize("name", CONSISTENCY)
def test_validate_and_build_micro_judge_task_names_alike(name, tmp_path):
    items, subtasks = CONSISTENCY[name]
    folder = write_bundle(tmp_path / "b", items, subtasks)
    refused = build_micro_refuses(folder)
    errors = errors_of(folder)
    assert bool(errors) == bool(refused), (errors, refused)
    if refused:
        (problem,) = errors
        assert problem.kind == "export" and problem.file == "items.csv" and problem.location.startswith("row")
        assert refused.removeprefix("items.csv: ") in problem.message, (problem.message, refused)


def test_validate_names_the_items_csv_column_that_states_a_bad_task(tmp_path):
    items = [f"q{j}" for j in range(4)]
    folder = write_bundle(tmp_path / "b", items, ["s"] * 4,
                          columns={"lm_eval_task": ["ok", "ok", "bad task", "bad task"], "doc_id": [0, 1, 0, 1]})
    (problem,) = errors_of(folder)
    assert (problem.file, problem.location, problem.kind) == ("items.csv", "column lm_eval_task, item 'q2'", "export")
    assert "task name 'bad task' cannot name an lm-eval task" in problem.message


# -- 6. a bad task name from provenance.json is blamed on provenance.json -----------------------------------------


def lm_eval_bundle(folder: Path, tasks: dict) -> Path:
    items = [f"alpha_{j}" for j in range(3)] + [f"beta_{j}" for j in range(3)]
    return write_bundle(folder, items, ["alpha"] * 3 + ["beta"] * 3,
                        provenance={"lm_eval": {"tasks": tasks, "doc_id": "item_suffix", "metric": "acc"}})


@pytest.mark.parametrize("tasks, location, fragment", [
    ({"alpha": "bad task!", "beta": "ok"}, "key 'lm_eval', \"tasks\" entry \"alpha\"", "task name 'bad task!'"),
    ({"alpha": "My-Task", "beta": "my_task"}, "key 'lm_eval', \"tasks\" entries \"alpha\" and \"beta\"",
     "'My-Task' and 'my_task' differ only in case"),
    ({"alpha": "t", "beta": "t_micro"}, "key 'lm_eval', \"tasks\" entries \"beta\" and \"alpha\"",
     "is the name the export gives task 't'"),
])
def test_a_bad_task_name_from_provenance_names_provenance_and_its_key(tasks, location, fragment, tmp_path):
    folder = lm_eval_bundle(tmp_path / "b", tasks)
    (problem,) = errors_of(folder)
    assert (problem.file, problem.location, problem.kind) == ("provenance.json", location, "export")
    assert fragment in problem.message
    with pytest.raises(BundleError) as raised:
        harness_map(load_bundle(folder))
    message = str(raised.value)
    assert message.startswith(f"{folder / 'provenance.json'}, {location}: ") and "items.csv" not in message
    code, _, err = build_micro(folder, tmp_path / "out")
    assert code == 1 and "provenance.json, key 'lm_eval'" in err and "items.csv" not in err, err


def test_usable_task_names_from_provenance_pass_both(tmp_path):
    folder = lm_eval_bundle(tmp_path / "b", {"alpha": "leaderboard_alpha", "beta": "leaderboard-beta.v2"})
    assert errors_of(folder) == [] and build_micro_refuses(folder) is None


# -- the rule validate uses is build-micro's, until build-micro imports it (generated) ----------------------------

PIECE = st.sampled_from(["a", "A", "b", "t", "T", "-", "_", ".", " ", "\u00e9", ":", "1", "_micro", "x" * 98])
NAMES = st.lists(st.lists(PIECE, min_size=1, max_size=4).map("".join), min_size=1, max_size=3)


@settings(max_examples=120)
@given(names=NAMES, docs=st.lists(st.integers(0, 3), min_size=1, max_size=4))
def test_the_bundle_rule_is_the_export_rule(names, docs):
    from mbutils.data.bundle import tasknames
    from mbutils.micro import lm_eval_task

    items = [f"{name}:{doc}" for name in names for doc in docs] + [f"{names[0]}_{docs[0]}"]
    subtasks = [name for name in names for _ in docs] + [names[0]]
    verdicts = []
    for module in (tasknames, lm_eval_task):
        try:
            module.check_exportable(items, subtasks)
            verdicts.append(None)
        except BundleError as err:
            verdicts.append(str(err))
    assert verdicts[0] == verdicts[1]
    assert tasknames.split_item(items[-1], subtasks[-1]) == lm_eval_task.split_item(items[-1], subtasks[-1])
    fault = tasknames.names_fault(tasknames.item_documents(items, subtasks))
    if fault is not None:  # a name fault is what check_exportable says first
        assert verdicts[0] == f"items.csv: {fault[1]}" or verdicts[0].endswith(fault[1])
    elif verdicts[0] is not None:
        assert "both name document" in verdicts[0]  # only the document rule is build-micro's alone


# -- 5. names that differ only in Unicode normalisation ----------------------------------------------------------


def test_two_items_spelt_nfc_and_nfd_are_refused_once_naming_both(tmp_path):
    folder = write_bundle(tmp_path / "b", [NFC, NFD, "q"], ["s", "s", "s"])
    (problem,) = errors_of(folder)
    assert (problem.file, problem.location) == ("responses.csv", "row 1 (header)")
    assert "'caf\\xe9' (column 2) and 'cafe\\u0301' (column 3)" in problem.message
    with pytest.raises(BundleError, match="Unicode spellings"):
        load_bundle(folder)


def test_two_models_spelt_nfc_and_nfd_are_refused_naming_both_rows(tmp_path):
    folder = write_bundle(tmp_path / "b", ["q1", "q2", "q3"], ["s"] * 3, models=["m", NFC, "n", NFD])
    (problem,) = errors_of(folder)
    assert (problem.file, problem.location) == ("responses.csv", "rows 3 and 5")
    assert "models 'caf\\xe9' (row 3) and 'cafe\\u0301' (row 5)" in problem.message


def test_two_subtasks_spelt_nfc_and_nfd_are_refused_naming_both_rows(tmp_path):
    folder = write_bundle(tmp_path / "b", ["q1", "q2", "q3", "q4"], [NFC, NFC, NFD, NFD])
    (problem,) = errors_of(folder)
    assert (problem.file, problem.location) == ("items.csv", "rows 2 and 4, column 'subtask'")
    assert "subtasks 'caf\\xe9' (row 2) and 'cafe\\u0301' (row 4)" in problem.message


def test_an_item_spelt_differently_in_the_two_files_is_one_message(tmp_path):
    folder = write_bundle(tmp_path / "b", [NFC, "q2", "q3"], ["s"] * 3, rows_items=[NFD, "q2", "q3"])
    (problem,) = errors_of(folder)
    assert problem.file == "items.csv" and problem.location.startswith("row 2 (item ")
    assert "'cafe\\u0301' here but 'caf\\xe9' in responses.csv (column 2)" in problem.message


def test_a_compatibility_character_that_composes_to_ascii_is_caught(tmp_path):
    folder = write_bundle(tmp_path / "b", [KELVIN, "K", "q"], ["s"] * 3)
    (problem,) = errors_of(folder)
    assert "'\\u212a' (column 2) and 'K' (column 3)" in problem.message


def test_distinct_accented_names_and_ascii_names_pass(tmp_path):
    folder = write_bundle(tmp_path / "b", [NFC, "cafe", "q"], [NFD, NFD, "s"], models=[NFD, "cafe", "m", "n"])
    assert errors_of(folder) == []


# -- through a real process ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["alpha", "nfd"])
def test_validate_in_a_real_process_exits_1_with_one_message(case, tmp_path):
    if case == "alpha":
        folder = write_bundle(tmp_path / "b", *alpha_items())
    else:
        folder = write_bundle(tmp_path / "b", ["q1", "q2", "q3"], ["s"] * 3, models=[NFC, "m", NFD])
    proc = subprocess.run([sys.executable, "-m", "mbutils", "validate", str(folder)], capture_output=True,
                          text=True, encoding="utf-8", cwd=REPO, timeout=120)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("error: ")]
    assert proc.returncode == 1 and len(lines) == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    expected = "error: items.csv, rows 2 and 5" if case == "alpha" else "error: responses.csv, rows 2 and 4: models"
    assert lines[0].startswith(expected), lines[0]

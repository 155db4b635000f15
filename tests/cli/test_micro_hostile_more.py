"""The second hostile review of the micro-benchmark commands, as regression tests.

Same contract as tests/cli/test_micro_hostile.py (whose helpers these use): a wrong input is refused with
exit 1 and one ``error:`` line naming the offending file, no traceback, nothing written outside
``--out``; never a number printed with exit 0."""

from __future__ import annotations

import importlib.util
import json
import py_compile
import shutil
from pathlib import Path

import pandas as pd
import pytest

from mbutils.data.bundle import save_bundle
from test_micro_hostile import (_base, build, experiment, gpqa, micro, my_micro, named_bench,  # noqa: F401
                                record, refused, reseal, responses, run, write_bundle, write_log)

MYTASK = [f"mytask:{j}" for j in range(30)]


def full_log(folder: Path, docs, task="mytask"):
    """A samples log of the original task ``task``, every document of ``docs`` answered right."""
    return write_log(folder, task, [record(d, 1) for d in docs])


# -- HIGH ------------------------------------------------------------------------------------------

def test_a_chosen_item_naming_no_document_refuses_a_full_task_log(tmp_path):
    """H1: 30 items mytask:N plus 'bonus' (no document), all 31 chosen: a log of mytask cannot answer 'bonus';
    refused naming items.csv, never the 96.8 of scoring the other 30."""
    bundle = write_bundle(tmp_path / "bundle", [*MYTASK, "bonus"], ["mytask"] * 31)
    code, _, err = build(bundle, tmp_path / "micro", "--k", "31")
    assert code == 0, err
    log = full_log(tmp_path / "runs" / "new-model", range(30))
    err = refused(run("score", tmp_path / "micro", log), "items.csv")
    assert "bonus" in err, err


@pytest.mark.parametrize("extra", [["mytask:05", "mytask:005"], ["mytask_5"]], ids=["zero-padded", "underscore"])
def test_two_items_naming_one_document_are_refused_by_build_micro(extra, tmp_path):
    """H2: mytask:5 beside mytask:05 (or mytask_5 of subtask mytask): one document, two items. validate lets the
    bundle pass (distinct names); build-micro refuses naming both, and writes nothing."""
    items = [*MYTASK, *extra]
    bundle = write_bundle(tmp_path / "bundle", items, ["mytask"] * len(items))
    code, out, err = run("validate", bundle)
    assert code == 0, (out, err)
    refused(build(bundle, tmp_path / "out"), "mytask:5", extra[0])
    assert not (tmp_path / "out").exists()


def test_force_replaces_no_folder_with_a_bare_manifest(gpqa, tmp_path):
    """H3: a folder of the user's holding only '{}' as manifest.json: --force refused, thesis.tex kept."""
    own = tmp_path / "own"
    own.mkdir()
    (own / "manifest.json").write_text("{}\n")
    (own / "thesis.tex").write_text("precious\n")
    refused(build(gpqa, own, "--force"), "own")
    assert (own / "thesis.tex").read_text() == "precious\n"
    assert sorted(p.name for p in own.iterdir()) == ["manifest.json", "thesis.tex"]


def test_force_replaces_only_an_unedited_micro_folder(gpqa, my_micro):
    """H3: a real micro folder plus the user's notes: --force refused, notes kept; unedited, it is replaced."""
    (my_micro / "mynotes.txt").write_text("my notes\n")
    refused(build(gpqa, my_micro, "--force"), "micro")
    assert (my_micro / "mynotes.txt").read_text() == "my notes\n"
    (my_micro / "mynotes.txt").unlink()
    code, _, err = build(gpqa, my_micro, "--force")
    assert code == 0, err


@pytest.fixture(scope="module")
def result_csv(tmp_path_factory) -> Path:
    """An experiment written as CSV, beside it its provenance sidecar."""
    root = tmp_path_factory.mktemp("result")
    data = save_bundle(named_bench([f"q{j:03d}" for j in range(30)], ["s"] * 30), root / "bench")
    code, _, err = experiment(data, root / "r.csv")
    assert code == 0, err
    assert (root / "r.csv.provenance.json").is_file()
    return root / "r.csv"


def _protocols(node):
    """Every ``protocol`` map (with n_runs) within a JSON document."""
    if isinstance(node, dict):
        if isinstance(node.get("protocol"), dict) and "n_runs" in node["protocol"]:
            yield node["protocol"]
        for value in node.values():
            yield from _protocols(value)
    elif isinstance(node, list):
        for value in node:
            yield from _protocols(value)


@pytest.mark.parametrize("n_runs", [10**12, "two"], ids=["huge", "text"])
def test_a_provenance_sidecar_promising_absurd_runs_is_refused(result_csv, n_runs, tmp_path):
    """H4: the sidecar's protocol.n_runs set to 10**12 (a memory blow-up) or "two": mdad exits 1 naming the file."""
    path = tmp_path / "r.csv"
    shutil.copyfile(result_csv, path)
    side = json.loads(Path(str(result_csv) + ".provenance.json").read_text())
    protocols = list(_protocols(side))
    assert protocols, side
    for protocol in protocols:
        protocol["n_runs"] = n_runs
    Path(str(path) + ".provenance.json").write_text(json.dumps(side))
    refused(run("mdad", path, "--bootstrap", "50"), "r.csv")


def test_compiled_python_added_to_a_micro_folder_is_refused(my_micro, responses):
    """H5: lm_eval/__pycache__/micro_docs.cpython-311.pyc added (it would run in place of micro_docs.py): refused."""
    cache = my_micro / "lm_eval" / "__pycache__"
    cache.mkdir()
    (cache / "micro_docs.cpython-311.pyc").write_bytes(b"\x00not really bytecode\x00")
    refused(run("score", my_micro, responses), "micro_docs.cpython-311.pyc")


def test_forged_bytecode_resealed_into_a_micro_folder_is_refused(my_micro, responses, tmp_path):
    """H5, resealed: an unchecked-hash .pyc of other code, listed in a recomputed manifest. lm-eval loads the filter
    with spec_from_file_location(.../micro_docs.py), which runs this bytecode instead of the sealed source."""
    source = tmp_path / "other.py"
    source.write_text("import os\n\ndef process_0(dataset):\n    return dataset\n")
    cached = Path(importlib.util.cache_from_source(str(my_micro / "lm_eval" / "micro_docs.py")))
    py_compile.compile(str(source), cfile=str(cached), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    reseal(my_micro)
    refused(run("score", my_micro, responses), cached.name)


def test_the_bytecode_python_caches_when_lm_eval_imports_the_filter_is_accepted(my_micro, responses):
    """H5's counterpart: lm-eval run with --include_path <micro>/lm_eval (PYTHONDONTWRITEBYTECODE unset) leaves
    __pycache__/micro_docs.cpython-*.pyc, the compilation of the sealed filter; scoring afterwards still works."""
    py_compile.compile(str(my_micro / "lm_eval" / "micro_docs.py"))  # what the import writes
    assert list((my_micro / "lm_eval" / "__pycache__").glob("micro_docs.*.pyc"))
    code, _, err = run("score", my_micro, responses)
    assert code == 0, err


# -- MEDIUM ----------------------------------------------------------------------------------------

def test_a_task_named_like_another_tasks_export_is_refused(tmp_path):
    """M1: tasks mytask and mytask_micro: the export of mytask would be named mytask_micro; refused."""
    items = [f"mytask:{j}" for j in range(15)] + [f"mytask_micro:{j}" for j in range(15)]
    bundle = write_bundle(tmp_path / "bundle", items, ["mytask"] * 15 + ["mytask_micro"] * 15)
    refused(build(bundle, tmp_path / "out"), "mytask_micro")
    assert not (tmp_path / "out").exists()


def _edit(path: Path, old: str, new: str, count: int = 1) -> str:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, count))
    return path.name


def _append(path: Path, text: str) -> str:
    path.write_text(path.read_text() + text)
    return path.name


def _weight(folder: Path) -> str:
    items = pd.read_csv(folder / "items.csv", dtype=str)
    items.loc[0, "weight"] = "-5"
    items.to_csv(folder / "items.csv", index=False)
    return "items.csv"


def _pool(folder: Path) -> str:
    pool = pd.read_csv(folder / "pool.csv", dtype=str)
    pool.loc[0, "accuracy"] = "7"
    pool.to_csv(folder / "pool.csv", index=False)
    return "pool.csv"


RESEALED = {
    "filter-code": lambda f: _append(f / "lm_eval" / "micro_docs.py", "import os\n"),
    "task-key": lambda f: _append(f / "lm_eval" / "gpqa_main_micro.yaml", "metric_list: [1]\n"),
    "weight": _weight,
    "k": lambda f: _edit(f / "micro.json", '"k": 5', '"k": 3'),
    "mdad-text": lambda f: _edit(f / "card.json", '"mdad": 40.0', '"mdad": "big"'),
    "mdad-negative": lambda f: _edit(f / "card.json", '"mdad": 40.0', '"mdad": -3'),
    "pool-accuracy": _pool,
}


@pytest.mark.parametrize("edit", list(RESEALED))
def test_an_edited_and_resealed_micro_folder_is_refused(my_micro, responses, edit):
    """M2: an edit covered by a recomputed manifest: the exported filter or task file, a negative weight, k that
    does not fit the items, an MDAD that is text or negative, a pool accuracy of 7: refused naming the file."""
    name = RESEALED[edit](my_micro)
    reseal(my_micro)
    result = run("score", my_micro, responses)
    refused(result, name)
    assert result[1] == "", result[1]


def test_a_model_name_with_a_line_break_in_a_results_file_is_refused(micro, tmp_path):
    """M3: model_name "evil\\nerror: fake" in the results json: refused; no output line forged to read 'error: fake'."""
    log = write_log(tmp_path / "runs" / "evil", "gpqa_main", [record(d, 1) for d in range(30)],
                    model="evil\nerror: fake")
    code, out, err = result = run("score", micro, log)
    refused(result)
    assert not [line for line in (out + err).splitlines() if line.startswith("error: fake")], (out, err)


def test_a_model_name_with_a_unicode_line_separator_in_responses_is_refused(micro, tmp_path):
    """M3: a responses.csv model named 'new\\u2028error: fake': refused naming the file."""
    path = tmp_path / "responses.csv"
    pd.DataFrame([[1] * 30], columns=[f"gpqa_main_{j:03d}" for j in range(30)]) \
        .assign(model="new\u2028error: fake").to_csv(path, index=False)
    code, out, err = result = run("score", micro, path)
    refused(result, "responses.csv")
    assert "\u2028" not in out + err


def test_a_bundle_with_deeply_nested_provenance_does_not_break_the_data_command(tmp_path, monkeypatch):
    """M4: on MBUTILS_DATA, bundle 'deep' whose provenance.json is '[' * 100000 beside a valid 'good': data and
    data show good work; data show deep exits 0 or 1, never an internal error."""
    items = [f"q{j:03d}" for j in range(30)]
    save_bundle(named_bench(items, ["s"] * 30), tmp_path / "store" / "good")
    save_bundle(named_bench(items, ["s"] * 30, seed=1), tmp_path / "store" / "deep")
    (tmp_path / "store" / "deep" / "provenance.json").write_text("[" * 100_000)
    monkeypatch.setenv("MBUTILS_DATA", str(tmp_path / "store"))
    code, out, err = run("data")
    assert code == 0 and "good" in out and "Traceback" not in err, (code, out, err)
    code, out, err = run("data", "show", "good")
    assert code == 0 and "Traceback" not in err, (code, out, err)
    code, out, err = run("data", "show", "deep")
    assert code in (0, 1) and "Traceback" not in err and "internal error" not in err, (code, out, err)


# -- LOW -------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def chosen_docs(micro) -> list[int]:
    return json.loads((micro / "micro.json").read_text())["lm_eval_tasks"]["gpqa_main_micro"]["docs"]


@pytest.mark.parametrize("how", ["instead", "plus"])
def test_a_full_task_log_with_documents_beyond_the_tasks_size_is_refused(micro, chosen_docs, how, tmp_path):
    """L4: the task had documents 0-29; a log holding document 100 (in place of one not chosen, or beside all
    30) is of another dataset: refused naming the log."""
    unchosen = min(set(range(30)) - set(chosen_docs))
    docs = [d for d in range(30) if how == "plus" or d != unchosen]
    log = write_log(tmp_path / "runs" / "m", "gpqa_main", [record(d, 1) for d in [*docs, 100]])
    refused(run("score", micro, log), log.name)


def test_a_log_of_two_filters_needs_filter(micro, tmp_path):
    """M6: records of filters 'none' and 'strict' for each document: refused mentioning --filter; with
    --filter strict the strict records are scored."""
    records = [{**record(d, 1), "filter": "none"} for d in range(30)] + \
              [{**record(d, 0), "filter": "strict"} for d in range(30)]
    log = write_log(tmp_path / "runs" / "m", "gpqa_main", records)
    err = refused(run("score", micro, log), log.name)
    assert "--filter" in err, err
    code, out, err = run("score", micro, log, "--filter", "strict", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["new-model"]["estimate"] == pytest.approx(0.0)

"""A hostile-input review of the micro-benchmark commands, as regression tests.

The contract for every wrong input: exit 1 (2 only for a malformed command line), one ``error:``
message naming the offending file (and row, column or key), no traceback, no internal error (70),
nothing written outside ``--out`` and no half-written output; never a score printed with exit 0."""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
import yaml

from conftest import REPO
from helpers import random_benchmark
from helpers import run_command as run  # (one runner of the command line for the hostile suites)
from mbutils.data.bundle import save_bundle

STAMP = "2026-01-01T00-00-00"
BREAKS = ["\u2028", "\u2029", "\x85", "\n", "\r", "\x0b", "\x0c"]
ALLOWED_KEYS = {"include", "task", "process_docs"}


_BASE: list[str] = []  # pytest's base temporary folder


@pytest.fixture(autouse=True, scope="module")
def _base(tmp_path_factory):
    _BASE[:] = [str(tmp_path_factory.getbasetemp())]


def scrub(text: str) -> str:
    """``text`` with each temporary folder (named after its test) as <tmp>, so names are not matched there."""
    return re.sub(re.escape(_BASE[0]) + r"/[^/\s'\"]+", "<tmp>", text) if _BASE else text


def refused(result, *names: str, codes=(1,)) -> str:
    """Assert the contract of a refusal; returns stderr (temporary folders scrubbed)."""
    code, out, err = result
    err = scrub(err)
    assert code in codes, f"exit {code} (wanted {codes}); stdout: {out[-400:]!r}; stderr: {err[-800:]!r}"
    assert "Traceback" not in err and "internal error" not in err, err
    assert len([line for line in err.splitlines() if line.startswith("error:")]) == 1, err
    assert "estimated accuracy" not in out, out
    for name in names:
        assert name in err, f"{name!r} is not named in: {err!r}"
    return err


def build(data, out, *extra):
    return run("build-micro", "--data", data, "--selector", "random", "--k", "5", "--runs", "2", "--quiet",
               "--out", out, *extra)


def experiment(data, out, *extra):
    return run("experiment", "--data", data, "--selectors", "random", "--sizes", "5", "--runs", "2",
               "--sources", "8", "--targets", "4", "--quiet", "--out", out, *extra)


def named_bench(items, subtasks, seed=0, n_models=16):
    bench = random_benchmark(n_models=n_models, subtask_sizes=(len(items),), seed=seed)
    return dataclasses.replace(bench, items=np.array(items, dtype=object), subtasks=np.array(subtasks, dtype=object),
                               target_sets={})


def write_bundle(folder: Path, items, subtasks, n_models=16) -> Path:
    """A bundle written by hand (names the Benchmark class might refuse)."""
    bench = random_benchmark(n_models=n_models, subtask_sizes=(len(items),))
    folder.mkdir(parents=True)
    with open(folder / "responses.csv", "w", newline="", encoding="utf-8") as fh:  # names quoted: a CSV's own syntax
        csv.writer(fh, lineterminator="\n", quoting=csv.QUOTE_ALL).writerow(["model", *items])
        csv.writer(fh, lineterminator="\n").writerows([m, *row] for m, row in zip(bench.models, bench.correct.tolist()))
    with open(folder / "items.csv", "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n", quoting=csv.QUOTE_ALL).writerows([("item", "subtask"), *zip(items, subtasks)])
    return folder


def record(doc_id, acc, **doc) -> dict:
    return {"doc_id": doc_id, "doc": {"question": f"question {doc_id}", **doc}, "target": "0", "filter": "none",
            "acc": acc}


def write_log(folder: Path, task: str, records, stamp=STAMP, model="new-model") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"results_{stamp}.json").write_text(json.dumps({"model_name": model, "configs": {}}))
    path = folder / f"samples_{task}_{stamp}.jsonl"
    path.write_text("".join(r if isinstance(r, str) else json.dumps(r) + "\n" for r in records))
    return path


def reseal(folder: Path) -> None:
    """Rewrite manifest.json for the files as they are now (an editor covering their tracks)."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name != "manifest.json")
    (folder / "manifest.json").write_text(json.dumps(
        {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}))


class _Loader(yaml.SafeLoader):
    """yaml.safe_load that reads any tag (``!function``) as None."""


_Loader.add_multi_constructor("!", lambda loader, suffix, node: None)


def injected_yaml(root: Path) -> list:
    """(file, document) of every exported task file whose YAML holds keys other than the three written."""
    return [(path, doc) for path in root.rglob("*_micro.yaml")
            for doc in yaml.load_all(path.read_text(encoding="utf-8"), Loader=_Loader)
            if not isinstance(doc, dict) or set(doc) - ALLOWED_KEYS]


# -- shared fixtures: one GPQA-style bundle, one micro folder, a few experiments -------------------

@pytest.fixture(scope="module")
def gpqa(tmp_path_factory) -> Path:
    items = [f"gpqa_main_{j:03d}" for j in range(30)]
    return save_bundle(named_bench(items, ["gpqa_main"] * 30), tmp_path_factory.mktemp("gpqa") / "gpqa_bundle")


@pytest.fixture(scope="module")
def micro(gpqa, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("micro") / "micro"
    code, _, err = build(gpqa, out)
    assert code == 0, err
    return out


@pytest.fixture(scope="module")
def chosen(micro) -> list[int]:
    """The original doc_ids the micro-benchmark chose (increasing)."""
    docs = json.loads((micro / "micro.json").read_text())["lm_eval_tasks"]["gpqa_main_micro"]["docs"]
    items = pd.read_csv(micro / "items.csv")["item"].tolist()
    assert sorted(int(i.rsplit("_", 1)[1]) for i in items) == docs and docs != list(range(5))
    return docs


@pytest.fixture
def my_micro(micro, tmp_path) -> Path:
    return Path(shutil.copytree(micro, tmp_path / "micro"))


@pytest.fixture(scope="module")
def responses(tmp_path_factory) -> Path:
    """A valid responses.csv of one new model on every item of the GPQA-style bundle."""
    path = tmp_path_factory.mktemp("resp") / "responses.csv"
    pd.DataFrame([[1] * 30], columns=[f"gpqa_main_{j:03d}" for j in range(30)]).assign(model="new") \
        .to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[str, Path]:
    """Experiments: bundle A (8 sources, also as CSV), bundle B, A with 6 sources (and another seed), and A
    as before with another seed (d: a second draw of a's design)."""
    root = tmp_path_factory.mktemp("results")
    items = [f"q{j:03d}" for j in range(30)]
    a = save_bundle(named_bench(items, ["s"] * 30, seed=0), root / "bench_a")
    b = save_bundle(named_bench(items, ["s"] * 30, seed=1), root / "bench_b")
    made = {}
    for name, data, extra in [("a.parquet", a, ()), ("a.csv", a, ()), ("b.parquet", b, ()),
                              ("c.parquet", a, ("--sources", "6", "--seed", "1")), ("d.parquet", a, ("--seed", "1"))]:
        code, _, err = experiment(data, root / name, *extra)
        assert code == 0, err
        made[name] = root / name
    return made


# -- HIGH ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("style", ["gpqa", "bbh"])
@pytest.mark.parametrize("char", BREAKS, ids=[f"U+{ord(c):04X}" for c in BREAKS])
def test_a_subtask_with_a_line_break_is_refused_and_never_exported(char, style, tmp_path):
    """Case 1: a subtask holding a (Unicode) line break: validate names items.csv, row, 'subtask'; build-micro refuses."""
    subtask = f"gpqa_main{char}trust_remote_code: true" if style == "gpqa" else f"bool{char}dataset_path: evil"
    items = ([f"{subtask}_{j:03d}" for j in range(30)] if style == "gpqa"
             else [f"boolean_expressions:{j}" for j in range(30)])
    bundle = write_bundle(tmp_path / "bundle", items, [subtask] * 30)
    code, out, err = run("validate", bundle)
    text = scrub(out + err)
    assert code == 1 and "Traceback" not in text, text
    assert "items.csv" in text and "subtask" in text and re.search(r"row[^\n]{0,12}\d", text), text
    refused(build(bundle, tmp_path / "out"))
    assert not (tmp_path / "out").exists() and injected_yaml(tmp_path) == []


@pytest.mark.parametrize("char", BREAKS, ids=[f"U+{ord(c):04X}" for c in BREAKS])
def test_an_item_id_with_a_line_break_is_refused_and_never_exported(char, tmp_path):
    """Case 1: an item id holding a (Unicode) line break: validate names items.csv and 'item'; build-micro refuses."""
    items = [f"boolean_expressions{char}dataset_path: evil:{j}" for j in range(30)]
    bundle = write_bundle(tmp_path / "bundle", items, ["boolean_expressions"] * 30)
    code, out, err = run("validate", bundle)
    text = scrub(out + err)
    assert code == 1 and "Traceback" not in text and "items.csv" in text and re.search(r"\bitem\b", text), text
    refused(build(bundle, tmp_path / "out"))
    assert not (tmp_path / "out").exists() and injected_yaml(tmp_path) == []


def test_a_log_of_the_full_task_is_scored_on_the_chosen_documents(micro, chosen, tmp_path):
    """Case 2: a log of all 30 documents of the original task is scored by original doc_id, not position."""
    write_log(tmp_path / "runs" / "new-model", "gpqa_main", [record(d, int(d in chosen)) for d in range(30)])
    code, out, err = run("score", micro, tmp_path / "runs", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["new-model"]["estimate"] == pytest.approx(100.0)
    write_log(tmp_path / "runs2" / "new-model", "gpqa_main", [record(d, int(d not in chosen)) for d in range(30)])
    code, out, err = run("score", micro, tmp_path / "runs2", "--format", "json")
    assert code == 0 and json.loads(out)["new-model"]["estimate"] == pytest.approx(0.0), err


def test_a_stamped_log_of_the_micro_task_is_scored(micro, chosen, tmp_path):
    """Case 2 (control): the exported micro task's log, each doc stamped with its original index, is scored."""
    records = [record(p, 1, mbutils_doc_id=d) for p, d in enumerate(chosen)]
    write_log(tmp_path / "runs" / "new-model", "gpqa_main_micro", records)
    code, out, err = run("score", micro, tmp_path / "runs", "--format", "json")
    assert code == 0 and json.loads(out)["new-model"]["estimate"] == pytest.approx(100.0), err


@pytest.mark.parametrize("n_docs", [30, 12, 40])
def test_an_unstamped_micro_task_log_of_another_size_is_refused(micro, n_docs, tmp_path):
    """Cases 2 and 10: a <task>_micro log of another dataset size, without original indices, is not scored by position."""
    path = write_log(tmp_path / "runs" / "new-model", "gpqa_main_micro", [record(d, int(d < 5)) for d in range(n_docs)])
    refused(run("score", micro, tmp_path / "runs"), path.name)


def test_task_names_differing_only_in_dash_and_underscore_are_refused(tmp_path):
    """Case 3: subtasks task-a and task_a would be one exported task file: refused, naming both."""
    items = [f"task-a:{j}" for j in range(15)] + [f"task_a:{j}" for j in range(15)]
    bundle = write_bundle(tmp_path / "bundle", items, ["task-a"] * 15 + ["task_a"] * 15)
    refused(build(bundle, tmp_path / "out"), "task-a", "task_a")
    assert not (tmp_path / "out").exists()


# -- MEDIUM ----------------------------------------------------------------------------------------

def test_two_runs_of_one_model_in_one_folder_are_refused(micro, tmp_path):
    """Case 4: two samples files of one task, different answers, one folder: refused naming both (not the latest)."""
    folder = tmp_path / "runs" / "new-model"
    one = write_log(folder, "gpqa_main", [record(d, 1) for d in range(30)], stamp="2026-01-01T00-00-00")
    two = write_log(folder, "gpqa_main", [record(d, 0) for d in range(30)], stamp="2026-01-02T00-00-00")
    refused(run("score", micro, tmp_path / "runs"), one.name, two.name)


def test_two_folders_naming_one_model_are_refused(micro, tmp_path):
    """Case 4: two folders whose results files name the same model, different answers: refused naming both."""
    write_log(tmp_path / "runs" / "run1", "gpqa_main", [record(d, 1) for d in range(30)])
    write_log(tmp_path / "runs" / "run2", "gpqa_main", [record(d, 0) for d in range(30)])
    refused(run("score", micro, tmp_path / "runs"), "run1", "run2")


def _put(path: Path, text: str) -> str:
    path.write_text(text)
    return path.name


def _unlisted(edit):
    """``edit``, then the edited file's entry deleted from manifest.json."""
    def both(folder):
        name = edit(folder)
        manifest = json.loads((folder / "manifest.json").read_text())
        _put(folder / "manifest.json", json.dumps({k: v for k, v in manifest.items() if k != name}))
        return name
    return both


EDITS = {
    "items": lambda f: _put(f / "items.csv", (f / "items.csv").read_text().replace(",0.2", ",0.9")),
    "card": lambda f: _put(f / "card.json", (f / "card.json").read_text().replace('"mdad": ', '"mdad": 0.01, "x": ')),
    "extra-file": lambda f: _put(f / "lm_eval" / "extra_micro.yaml", "task: extra_micro\ndataset_path: evil/data\n"),
    "manifest-list": lambda f: _put(f / "manifest.json", "[]"),
    "manifest-nested": lambda f: _put(f / "manifest.json", "[" * 100_000),
}
EDITS["items-unlisted"], EDITS["card-unlisted"] = _unlisted(EDITS["items"]), _unlisted(EDITS["card"])


@pytest.mark.parametrize("edit", list(EDITS))
def test_an_edited_micro_folder_is_refused(my_micro, responses, edit):
    """Cases 5 and 11: an edited items.csv or card.json (even unlisted), an extra file, a malformed manifest."""
    name = EDITS[edit](my_micro)
    refused(run("score", my_micro, responses), name)


def test_lm_eval_tasks_folder_without_the_task_is_refused(gpqa, tmp_path):
    """Case 6: --lm-eval-tasks DIR with no YAML defining the task: exit 1 naming it, --out not created."""
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "other.yaml").write_text("task: other_task\ndataset_path: x\n")
    refused(build(gpqa, tmp_path / "out", "--lm-eval-tasks", tasks), "gpqa_main")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("other", ["b.parquet", "c.parquet"], ids=["other-bundle", "other-protocol"])
def test_combine_refuses_results_of_different_bundles_or_protocols(results, other, tmp_path):
    """Case 7: combine of results of different bundles, or of different protocols: exit 1 naming both files."""
    out = tmp_path / "both.parquet"
    refused(run("combine", results["a.parquet"], results[other], "--out", out), "a.parquet", other)
    assert not out.exists()


def test_a_duplicated_item_column_in_responses_is_refused(micro, tmp_path):
    """Case 8: responses.csv naming one item twice (pandas would read item.1): exit 1 naming the column."""
    first = pd.read_csv(micro / "items.csv")["item"].iloc[0]
    items = [f"gpqa_main_{j:03d}" for j in range(30)]
    path = tmp_path / "responses.csv"
    path.write_text(",".join(["model", *items, first]) + "\n" + ",".join(["new", *["1"] * 30, "0"]) + "\n")
    refused(run("score", micro, path), first)


def _drop_run(source: Path, dest: Path) -> Path:
    if source.suffix == ".csv":
        table = pd.read_csv(source, dtype=str, keep_default_na=False)
        table[table["run"] != "1"].to_csv(dest, index=False)
        shutil.copyfile(source.with_name(source.name + ".provenance.json"), dest.with_name(dest.name + ".provenance.json"))
    else:
        arrow = pq.read_table(source)
        pq.write_table(arrow.filter(pc.not_equal(arrow["run"], 1)), dest)
    return dest


@pytest.mark.parametrize("kind", ["a.csv", "a.parquet"])
@pytest.mark.parametrize("command", ["mdad", "summary"])
def test_a_results_file_missing_a_run_is_refused_unless_partial_is_allowed(results, kind, command, tmp_path):
    """Case 9: a results file with one run's rows deleted: refused mentioning --allow-partial; allowed with it."""
    path = _drop_run(results[kind], tmp_path / f"cut{Path(kind).suffix}")
    extra = ("--bootstrap", "50") if command == "mdad" else ()
    err = refused(run(command, path, *extra))
    assert "--allow-partial" in err and "run" in err, err
    code, out, err = run(command, path, *extra, "--allow-partial")
    assert code == 0 and "partial" in (out + err).lower(), (code, out, err)


# -- LOW -------------------------------------------------------------------------------------------

def _nested_micro_json(micro, tmp_path):
    (micro / "micro.json").write_text("[" * 100_000)
    reseal(micro)
    return micro, [], "micro.json"


def _nested_log_array(micro, tmp_path):
    path = write_log(tmp_path / "runs" / "m", "gpqa_main", ["[" * 100_000])
    return micro, [path], path.name


def _nested_log_line(micro, tmp_path):
    path = write_log(tmp_path / "runs" / "m", "gpqa_main", [record(0, 1), '{"doc_id": ' + "[" * 100_000 + "\n"])
    return micro, [path], path.name


def _nested_results_json(micro, tmp_path):
    path = write_log(tmp_path / "runs" / "m", "gpqa_main", [record(d, 1) for d in range(30)])
    (path.parent / f"results_{STAMP}.json").write_text("[" * 100_000)
    return micro, [path], f"results_{STAMP}.json"


@pytest.mark.parametrize("make", [_nested_micro_json, _nested_log_array, _nested_log_line, _nested_results_json],
                         ids=["micro.json", "log-array", "log-line", "results-json"])
def test_deeply_nested_json_is_refused_not_a_crash(my_micro, responses, make, tmp_path):
    """Case 11: deeply nested JSON in micro.json, a samples log (whole or one line), a results file: exit 1."""
    folder, files, name = make(my_micro, tmp_path)
    refused(run("score", folder, *(files or [responses])), name)


def test_a_huge_doc_id_is_refused_naming_file_and_line(micro, tmp_path):
    """Case 12: doc_id 10**30 in a samples log: exit 1 naming the file and the line."""
    records = [record(d, 1) for d in range(30)]
    records[2]["doc_id"] = 10**30
    path = write_log(tmp_path / "runs" / "m", "gpqa_main", records)
    refused(run("score", micro, path), path.name, "line 3")


@pytest.mark.parametrize("how", ["dot", "absolute"])
def test_build_micro_refuses_the_working_directory_as_out(gpqa, how, tmp_path, monkeypatch):
    """Case 13: build-micro --out . --force (or --out $(pwd)) from a folder of user files: refused, files kept."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "precious.txt").write_text("keep me")
    monkeypatch.chdir(work)
    refused(build(gpqa, "." if how == "dot" else str(work), "--force"))
    assert (work / "precious.txt").read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work"] and [p.name for p in work.iterdir()] == ["precious.txt"]


@pytest.mark.parametrize("where", ["etc", "empty"])
def test_data_show_of_a_folder_that_is_no_bundle_is_refused(where, tmp_path):
    """Case 14: data show /etc, or of a folder holding no bundle files: exit 1, 'not a bundle'."""
    folder = Path("/etc") if where == "etc" else tmp_path / "nothing"
    folder.mkdir(exist_ok=True)
    err = refused(run("data", "show", folder))
    assert "bundle" in err, err


def test_experiment_refuses_an_existing_provenance_sidecar(results, tmp_path):
    """Case 15: experiment --out r.csv when r.csv.provenance.json exists (r.csv does not): exit 1, sidecar kept."""
    side = tmp_path / "r.csv.provenance.json"
    side.write_text('{"mine": true}\n')
    data = results["a.parquet"].parent / "bench_a"
    refused(experiment(data, tmp_path / "r.csv"), "r.csv")
    assert side.read_text() == '{"mine": true}\n' and not (tmp_path / "r.csv").exists()


def test_a_stale_empty_lock_file_in_the_cache_is_recovered(results, tmp_path, monkeypatch):
    """Case 16: a 0-byte lock file left in the results cache: the next run completes (exit 0)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("MBUTILS_CACHE", str(cache))
    data = results["a.parquet"].parent / "bench_a"
    assert experiment(data, tmp_path / "first.parquet")[0] == 0
    entries = list((cache / "results").glob("*.parquet"))
    assert entries
    for entry in entries:
        entry.unlink()
        Path(str(entry) + ".lock").write_bytes(b"")
    command = [sys.executable, "-m", "mbutils", "experiment", "--data", data, "--selectors", "random", "--sizes", "5",
               "--runs", "2", "--sources", "8", "--targets", "4", "--quiet", "--out", tmp_path / "second.parquet"]
    proc = subprocess.run([str(c) for c in command], capture_output=True, text=True, timeout=60, cwd=REPO,
                          env={**os.environ, "MBUTILS_CACHE": str(cache)})
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "second.parquet").is_file()


def test_run_chapter_refuses_an_absurd_runs_before_executing(tmp_path, monkeypatch):
    """Case 17: run-chapter bench_gpqa -p runs 1000000000 is refused before any cell runs (the limit named)."""
    import papermill

    executed = []

    def fake(*args, **kwargs):
        executed.append(args)
        raise RuntimeError("the chapter was executed")

    monkeypatch.setattr(papermill, "execute_notebook", fake)
    err = refused(run("run-chapter", "bench_gpqa", "-p", "runs", "1000000000", "--out", tmp_path / "out"),
                  codes=(1, 2))
    assert not executed, "the chapter was executed before its parameters were checked"
    assert "runs" in err and re.search(r"at most|limit|maximum|up to|no more than|<=|100[,_ ]?000", err, re.I), err

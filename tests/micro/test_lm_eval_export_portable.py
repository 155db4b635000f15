"""A micro-benchmark folder runs anywhere, and scores only the documents it chose, by their content.

Built on "one machine" (a folder A: the task YAML, its JSONL dataset named by a relative path, the bundle), the
folder is moved to "another" (B, another path; A deleted, the dataset copied to B as another machine would
hold it): lm-eval 0.4.13's TaskManager indexes it there, ``lm_eval --model dummy`` runs its group offline,
and ``score`` equals a count by hand of the log. No file of the folder names A, the venv or its
site-packages; the task's own Python function (its prompt) travels in the folder. Then the dataset is reordered (same size): a log of the micro task, and a log of the whole
task, are refused for their documents' content; a log of another micro-benchmark of the same bundle is
refused as such.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from helpers import run_command as run

if os.environ.get("CI"):  # in CI the harness is installed: its absence is a failure, never a skip
    import lm_eval  # noqa: F401
else:
    pytest.importorskip("lm_eval", reason='pip install "mbutils[harness]" to run the real harness')

N_DOCS, K = 24, 8
DATA = Path("data") / "arith.jsonl"  # relative: the harness reads it from its working folder


def _questions(order) -> str:
    return "".join(json.dumps({"question": f"What is {i} + {i + 1}?", "choices": [str(2 * i + d) for d in range(4)],
                               "answer": 1}) + "\n" for i in order)


def _one_error(result) -> str:
    code, out, err = result
    assert code == 1 and out == "", (code, out[-300:], err[-800:])
    assert "Traceback" not in err and len([line for line in err.splitlines() if line.startswith("error:")]) == 1, err
    return err


@pytest.fixture(scope="module")
def machines(tmp_path_factory):
    """(B, the moved folder): built in A with A as the working folder, then moved to B; A deleted."""
    a, b = tmp_path_factory.mktemp("machine_a"), tmp_path_factory.mktemp("machine_b")
    (a / "data").mkdir()
    (a / DATA).write_text(_questions(range(N_DOCS)))
    (a / "tasks").mkdir()
    config = {"task": "arith", "dataset_path": "json", "dataset_kwargs": {"data_files": {"test": str(DATA)}},
              "test_split": "test", "output_type": "multiple_choice", "doc_to_choice": "{{choices}}",
              "doc_to_target": "{{answer}}", "metric_list": [{"metric": "acc"}]}
    # a function of the task's own, beside its YAML: it must travel with the folder
    (a / "tasks" / "arith.yaml").write_text(yaml.safe_dump(config) + "doc_to_text: !function helpers.prompt\n")
    (a / "tasks" / "helpers.py").write_text("def prompt(doc):\n    return 'Q: ' + doc['question'] + '\\nA:'\n")
    (a / "bundle").mkdir()
    items = [f"arith:{i}" for i in range(N_DOCS)]
    correct = (np.random.default_rng(1).random((14, N_DOCS)) < 0.6).astype(int)
    pd.DataFrame(correct, columns=items).assign(model=[f"m{j}" for j in range(14)])[["model", *items]] \
        .to_csv(a / "bundle" / "responses.csv", index=False)
    pd.DataFrame({"item": items, "subtask": "arith"}).to_csv(a / "bundle" / "items.csv", index=False)
    here = Path.cwd()
    os.chdir(a)
    try:
        for out, seed in (("micro", 0), ("other", 5)):
            code, _, err = run("build-micro", "--data", "bundle", "--selector", "random", "--k", K, "--runs", 2,
                               "--seed", seed, "--quiet", "--lm-eval-tasks", "tasks", "--out", out)
            assert code == 0, err
    finally:
        os.chdir(here)
    (b / "elsewhere").mkdir()
    shutil.move(str(a / "micro"), str(b / "elsewhere" / "micro"))
    shutil.move(str(a / "other"), str(b / "other"))
    (b / "data").mkdir()
    shutil.copyfile(a / DATA, b / DATA)
    shutil.copytree(a / "tasks", b / "tasks")
    shutil.rmtree(a)
    return b, b / "elsewhere" / "micro", str(a)


def _harness(cwd: Path, task: str, include: Path, out: Path) -> Path:
    """The dummy model on ``task`` from ``cwd``, offline, samples logged; the folder of its logs."""
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "HF_HOME": str(cwd / "hf")}
    done = subprocess.run([sys.executable, "-m", "lm_eval", "--model", "dummy", "--tasks", task, "--include_path",
                           str(include), "--log_samples", "--output_path", str(out)], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def test_the_folder_names_no_place_of_the_machine_it_was_built_on(machines):
    import lm_eval

    _, folder, built_in = machines
    venv = str(Path(lm_eval.__file__).resolve().parents[1])
    for path in folder.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            assert built_in not in text and venv not in text and "site-packages" not in text, path
    manifest = json.loads((folder / "manifest.json").read_text())
    assert all(not Path(name).is_absolute() and ".." not in Path(name).parts for name in manifest)
    meta = json.loads((folder / "micro.json").read_text())
    (entry,) = meta["lm_eval_tasks"].values()
    assert entry["include"] == "arith.original_yaml" and entry["config"] == "--lm-eval-tasks: arith.yaml"
    assert "doc_to_text: !function 'micro_docs.function_0'" in (folder / "lm_eval" / entry["include"]).read_text()
    assert (folder / "lm_eval" / "functions" / "helpers.py").is_file()
    assert len(entry["fingerprints"]) == K and entry["fingerprint_fields"] == ["question", "choices", "answer"]


def test_moved_it_is_indexed_run_and_scored_as_a_count_by_hand(machines):
    from lm_eval.tasks import TaskManager

    b, folder, _ = machines
    manager = TaskManager(include_path=str(folder / "lm_eval"), include_defaults=False)
    assert "arith_micro" in manager.all_subtasks and "bundle_micro" in manager.all_groups
    assert Path(manager.task_index["arith_micro"].yaml_path).parent == folder / "lm_eval"
    logs = _harness(b, "bundle_micro", folder / "lm_eval", b / "runs")
    (log,) = logs.rglob("samples_arith_micro_*.jsonl")
    records = [json.loads(line) for line in log.read_text().splitlines()]
    chosen = sorted(int(i.split(":")[1]) for i in pd.read_csv(folder / "items.csv")["item"])
    assert sorted(r["doc"]["mbutils_doc_id"] for r in records) == chosen
    assert all(r["arguments"]["gen_args_0"]["arg_0"].startswith("Q: What is ") for r in records)  # the copied function
    assert not list((folder / "lm_eval" / "functions").glob("__pycache__"))  # run from source: nothing beside it
    by_hand = 100 * sum(r["acc"] for r in records) / K
    code, out, err = run("score", folder, logs, "--format", "json")
    assert code == 0, err
    ((_, row),) = json.loads(out).items()
    assert row["estimate"] == pytest.approx(by_hand, abs=1e-3) and row["metric"] == "acc"  # printed to 4 places


def test_a_reordered_dataset_of_the_same_size_is_refused_for_its_content(machines):
    b, folder, _ = machines
    shutil.copyfile(b / DATA, b / "data" / "kept.jsonl")
    (b / DATA).write_text(_questions(reversed(range(N_DOCS))))
    try:
        micro = _harness(b, "arith_micro", folder / "lm_eval", b / "reordered_micro")
        full = _harness(b, "arith", b / "tasks", b / "reordered_full")
    finally:
        shutil.copyfile(b / "data" / "kept.jsonl", b / DATA)
    (log,) = micro.rglob("samples_arith_micro_*.jsonl")
    assert len(log.read_text().splitlines()) == K  # the same size: the filter kept and stamped K documents
    for logs in (micro, full):
        err = _one_error(run("score", folder, logs))
        assert "reordered or different dataset of the same size" in err and "content fingerprint" in err


def test_a_log_of_another_micro_benchmark_of_the_bundle_is_named_as_such(machines):
    b, folder, _ = machines
    logs = b / "runs"
    if not logs.exists():
        _harness(b, "bundle_micro", folder / "lm_eval", logs)
    err = _one_error(run("score", b / "other", logs))
    assert "a log of another micro-benchmark" in err and "are not this one's" in err
    assert "run the model on all of them" not in err

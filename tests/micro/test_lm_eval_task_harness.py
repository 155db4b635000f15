"""The exported micro-benchmark through the real lm-evaluation-harness (the harness extra: lm-eval 0.4.13).

A local JSONL dataset defines task ``mytask`` (30 documents); a bundle of 12 models has its items
``mytask:0`` .. ``mytask:29``. The harness's ``dummy`` model runs offline. Checked: the harness
indexes the exported task; ``score`` on the micro task's samples log scores exactly the chosen
documents (the harness's own accuracy on them); the exported group ``bundle_micro`` runs the micro task
and its mean is that estimate; a log of the full task is cut to the chosen documents by their original
index; a micro task run on a dataset of another size, and two logs of one model, are refused.
"""

from __future__ import annotations

import json
import os
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

N_DOCS, K = 30, 6


def _write_task(folder: Path, n_docs: int) -> Path:
    rng = np.random.default_rng(n_docs)
    data = folder / "data.jsonl"
    data.write_text("".join(json.dumps({"question": f"Question {i}?", "choices": ["w", "x", "y", "z"],
                                        "answer": int(rng.integers(4))}) + "\n" for i in range(n_docs)))
    tasks = folder / "tasks"
    tasks.mkdir(exist_ok=True)
    config = {"task": "mytask", "dataset_path": "json", "dataset_kwargs": {"data_files": {"test": str(data)}},
              "test_split": "test", "output_type": "multiple_choice", "doc_to_text": "{{question}}",
              "doc_to_choice": "{{choices}}", "doc_to_target": "{{answer}}", "metric_list": [{"metric": "acc"}]}
    (tasks / "mytask.yaml").write_text(yaml.safe_dump(config))
    return tasks


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("harness")
    tasks = _write_task(root, N_DOCS)
    bundle = root / "bundle"
    bundle.mkdir()
    rng = np.random.default_rng(0)
    items = [f"mytask:{i}" for i in range(N_DOCS)]
    correct = (rng.random((12, N_DOCS)) < 0.5).astype(int)
    pd.DataFrame(correct, columns=items).assign(model=[f"m{j}" for j in range(12)])[["model", *items]] \
        .to_csv(bundle / "responses.csv", index=False)
    pd.DataFrame({"item": items, "subtask": "mytask"}).to_csv(bundle / "items.csv", index=False)
    code, _, err = run("build-micro", "--data", bundle, "--selector", "random", "--k", K, "--runs", 2, "--quiet",
                       "--lm-eval-tasks", tasks, "--out", root / "micro")
    assert code == 0, err
    return root


def _harness(root: Path, task: str, include: Path, out: Path) -> dict:
    """Run the dummy model on ``task`` with samples logged; the results file's JSON."""
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "HF_HOME": str(root / "hf")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as on most machines: the import of the filter caches its bytecode
    done = subprocess.run([sys.executable, "-m", "lm_eval", "--model", "dummy", "--tasks", task, "--include_path",
                           str(include), "--log_samples", "--output_path", str(out)], env=env, cwd=root,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(next(out.rglob("results_*.json")).read_text())


def _chosen(root: Path) -> list[int]:
    return [int(i.split(":")[1]) for i in pd.read_csv(root / "micro" / "items.csv")["item"]]


def test_the_harness_indexes_the_exported_task(setup):
    from lm_eval.tasks import TaskManager

    manager = TaskManager(include_path=str(setup / "micro" / "lm_eval"), include_defaults=False)
    assert "mytask_micro" in manager.all_tasks
    assert "bundle_micro" in manager.all_groups and manager.task_index["bundle_micro"].cfg["task"] == ["mytask_micro"]


def test_score_reads_exactly_the_chosen_documents_of_a_micro_log(setup):
    results = _harness(setup, "mytask_micro", setup / "micro" / "lm_eval", setup / "runs")
    log = next((setup / "runs").rglob("samples_mytask_micro_*.jsonl"))
    # the bytecode Python cached for the sealed filter is its own compilation: the folder still scores
    assert list((setup / "micro" / "lm_eval" / "__pycache__").glob("micro_docs.*.pyc"))
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert sorted(r["doc"]["mbutils_doc_id"] for r in records) == sorted(_chosen(setup))
    code, out, err = run("score", setup / "micro", log, "--format", "json")
    assert code == 0, err
    (estimate,) = [row["estimate"] for row in json.loads(out).values()]
    assert estimate == pytest.approx(100 * results["results"]["mytask_micro"]["acc,none"])


def test_the_group_runs_every_micro_task_and_its_mean_is_the_estimate(setup):
    results = _harness(setup, "bundle_micro", setup / "micro" / "lm_eval", setup / "group")
    group = results["results"]["bundle_micro"]["acc,none"]
    assert group == pytest.approx(results["results"]["mytask_micro"]["acc,none"])
    code, out, err = run("score", setup / "micro", setup / "group", "--format", "json")
    assert code == 0, err
    ((model, row),) = json.loads(out).items()
    assert row["estimate"] == pytest.approx(100 * group) and row["metric"] == "acc"


def test_a_full_log_is_cut_to_the_chosen_documents_by_their_index(setup):
    _harness(setup, "mytask", setup / "tasks", setup / "full")
    log = next((setup / "full").rglob("samples_mytask_*.jsonl"))
    records = {json.loads(line)["doc_id"]: json.loads(line)["acc"] for line in log.read_text().splitlines()}
    assert len(records) == N_DOCS
    chosen = _chosen(setup)
    code, out, err = run("score", setup / "micro", log, "--format", "json")
    assert code == 0, err
    (estimate,) = [row["estimate"] for row in json.loads(out).values()]
    assert estimate == pytest.approx(100 * np.mean([records[d] for d in chosen]))
    code, _, err = run("score", setup / "micro", log, next((setup / "runs").rglob("samples_*.jsonl")))
    assert code == 1 and "one log per model and task" in err and err.count("\n") == 1


def test_a_micro_task_on_a_dataset_of_another_size_is_refused(setup, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    _write_task(other, N_DOCS + 10)
    code, _, err = run("build-micro", "--data", setup / "bundle", "--selector", "random", "--k", K, "--runs", 2,
                       "--quiet", "--lm-eval-tasks", other / "tasks", "--out", tmp_path / "micro")
    assert code == 0, err  # the export points at the 40-document dataset; the bundle had 30
    _harness(tmp_path, "mytask_micro", tmp_path / "micro" / "lm_eval", tmp_path / "runs")
    log = next((tmp_path / "runs").rglob("samples_mytask_micro_*.jsonl"))
    assert len(log.read_text().splitlines()) == N_DOCS + 10  # nothing filtered: the harness ran all of it
    code, out, err = run("score", tmp_path / "micro", log)
    assert code == 1 and out == "" and "dataset of another size" in err and str(log) in err


@pytest.mark.parametrize("task", ["leaderboard_gpqa_main", "leaderboard_bbh_boolean_expressions",
                                  "leaderboard_bbh_web_of_lies", "leaderboard_mmlu_pro"])
def test_the_quick_lookup_of_a_task_config_finds_the_file_the_harness_index_names(task):
    """The text scan that spares every exporting process the harness's index agrees with that index."""
    from mbutils.micro import lm_eval_task

    index = lm_eval_task.harness_index()
    assert task in index
    assert lm_eval_task._declared_once(task) == lm_eval_task._yaml_entry_path(index[task])


def test_a_task_declared_by_several_files_is_left_to_the_harness_index(monkeypatch):
    from mbutils.micro import lm_eval_task

    monkeypatch.setattr(lm_eval_task, "_task_lines", lambda: {"twice": ("/a.yaml", "/b.yaml"), "once": ("/c.yaml",)})
    assert lm_eval_task._declared_once("twice") is None
    assert lm_eval_task._declared_once("once") == "/c.yaml"
    assert lm_eval_task._declared_once("absent") is None

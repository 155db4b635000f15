"""An offline example of the whole loop: a small local benchmark, its bundle and its lm-eval task.

``python -m mbutils example harness --out DIR`` writes (:func:`write_harness_example`)::

    DIR/data/arithmetic_questions.jsonl   60 multiple-choice arithmetic questions, 4 options each (JSON lines)
    DIR/tasks/arithmetic_questions.yaml   the lm-eval task over it (dataset_path: json, data_files, test split)
    DIR/toy-arithmetic/                   the bundle: the 0/1 answers of 30 synthetic models on the 60
                                          questions, items.csv stating each item's harness task and document
    DIR/example.json                      what was written, and the commands that run the loop

so that ``build-micro``, ``lm_eval --model dummy`` and ``score`` run without the network, from DIR (the
task names its data file by a path relative to the folder the harness runs in, so DIR can be moved)::

    cd DIR
    python -m mbutils build-micro --data ./toy-arithmetic --selector random --k 15 --lm-eval-tasks tasks --out micro
    HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 lm_eval --model dummy --tasks toy-arithmetic_micro \\
        --include_path micro/lm_eval --log_samples --output_path runs
    python -m mbutils score micro runs

Everything is drawn from a fixed seed: the same command writes the same bytes. The models are
synthetic (a two-parameter IRT model: abilities spread over the range of the questions' difficulties),
not real results, and the bundle's provenance says so.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from mbutils.base.errors import MbutilsError
from mbutils.base.folders import check_output_folder, replace_folder

TASK = "arithmetic_questions"
BUNDLE = "toy-arithmetic"
DATA = f"data/{TASK}.jsonl"
MARK = "example.json"
N_PER_KIND, N_MODELS, K = 20, 30, 15
KINDS = {"addition": "+", "subtraction": "-", "multiplication": "*"}
COMMANDS = (
    f"python -m mbutils build-micro --data ./{BUNDLE} --selector random --k {K} --lm-eval-tasks tasks --out micro",
    f"HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 lm_eval --model dummy --tasks {BUNDLE}_micro "
    "--include_path micro/lm_eval --log_samples --output_path runs",
    "python -m mbutils score micro runs",
)


def questions(seed: int = 0) -> list[dict]:
    """The benchmark: per kind of operation, N_PER_KIND questions with four options (the answer and three
    near misses: off by one, by ten, or the operands' digits swapped), the answer's position drawn."""
    rng = np.random.default_rng(seed)
    out = []
    for kind, sign in KINDS.items():
        for n in range(N_PER_KIND):
            high = 10 + 9 * n if kind != "multiplication" else 4 + n
            a, b = (int(x) for x in rng.integers(2, high + 2, size=2))
            value = {"+": a + b, "-": a - b, "*": a * b}[sign]
            swapped = int(str(abs(value))[::-1]) * (1 if value >= 0 else -1)
            wrong = [value + 1, value - 1, value + 10, value - 10, swapped]
            misses = [w for w in dict.fromkeys(wrong) if w != value]
            options = [value, *(int(w) for w in rng.choice(misses, size=3, replace=False))]
            order = rng.permutation(4)
            choices = [str(options[i]) for i in order]
            out.append({"question": f"What is {a} {sign} {b}?", "choices": choices,
                        "answer": int(np.flatnonzero(order == 0)[0]), "kind": kind,
                        "difficulty": round(float(np.log10(abs(value) + 10) + (0.8 if sign == "*" else 0.0)), 3)})
    return out


def responses(docs: list[dict], seed: int = 0) -> pd.DataFrame:
    """The 0/1 answers of N_MODELS synthetic models (rows) on the questions (columns q00 ...), drawn from a
    two-parameter IRT model whose item difficulties follow the questions'."""
    rng = np.random.default_rng(seed + 1)
    difficulty = np.array([d["difficulty"] for d in docs])
    b = (difficulty - difficulty.mean()) / difficulty.std() + rng.normal(0, 0.4, len(docs))
    a = rng.uniform(0.8, 2.0, len(docs))
    theta = np.sort(rng.normal(0.3, 1.1, N_MODELS))
    p = 0.25 + 0.75 / (1 + np.exp(-a * (theta[:, None] - b)))  # four options: a guess is right a quarter of the time
    correct = (rng.random(p.shape) < p).astype(int)
    table = pd.DataFrame(correct, columns=[f"q{i:02d}" for i in range(len(docs))])
    table.insert(0, "model", [f"toy/model-{j + 1:02d}" for j in range(N_MODELS)])
    return table


def task_config() -> dict:
    """The lm-eval task over the JSONL file (its data file named relative to the harness's working folder)."""
    return {"task": TASK, "dataset_path": "json", "dataset_kwargs": {"data_files": {"test": DATA}},
            "test_split": "test", "output_type": "multiple_choice",
            "doc_to_text": "Question: {{question}}\nAnswer:", "doc_to_choice": "{{choices}}",
            "doc_to_target": "{{answer}}",
            "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}],
            "metadata": {"version": 1.0}}


def _write(folder: Path) -> None:
    docs = questions()
    (folder / "data").mkdir()
    (folder / DATA).write_text("".join(json.dumps(doc) + "\n" for doc in docs), encoding="utf-8")
    (folder / "tasks").mkdir()
    (folder / "tasks" / f"{TASK}.yaml").write_text(
        "# An lm-evaluation-harness task over data/arithmetic_questions.jsonl (written by python -m mbutils example "
        "harness).\n" + yaml.safe_dump(task_config(), sort_keys=False), encoding="utf-8")
    bundle = folder / BUNDLE
    bundle.mkdir()
    table = responses(docs)
    table.to_csv(bundle / "responses.csv", index=False)
    items = pd.DataFrame({"item": table.columns[1:], "subtask": [d["kind"] for d in docs], "lm_eval_task": TASK,
                          "doc_id": range(len(docs)), "lm_eval_metric": "acc", "n_options": 4})
    items.to_csv(bundle / "items.csv", index=False)
    (bundle / "provenance.json").write_text(json.dumps({
        "title": "Toy arithmetic: synthetic answers of 30 models on 60 multiple-choice questions",
        "source": "synthetic: written by `python -m mbutils example harness` (fixed seed); not real model results",
        "licence": "CC0-1.0",
        "derived": "0/1 answers drawn from a two-parameter IRT model whose item difficulties follow the "
                   "questions'; item qNN is document NN of the lm-eval task arithmetic_questions (items.csv columns "
                   "lm_eval_task and doc_id)"}, indent=2) + "\n", encoding="utf-8")
    (folder / MARK).write_text(json.dumps({
        "example": "harness", "task": TASK, "bundle": BUNDLE, "data": DATA, "questions": len(docs),
        "models": N_MODELS, "commands": ["cd THIS_FOLDER", *COMMANDS]}, indent=2) + "\n", encoding="utf-8")


def write_harness_example(out, *, force: bool = False) -> Path:
    """Write the offline example into the folder ``out`` (new or empty; with ``force``, an earlier example
    folder is replaced, whole or not at all) and return its path."""
    path = check_output_folder(out, force, error=MbutilsError, owned_by=[MARK])
    return replace_folder(path, _write)

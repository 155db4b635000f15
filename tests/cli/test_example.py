"""``example harness``: a small local benchmark, its bundle and its lm-eval task, and the README's offline loop on it.

The example's questions are right (the option marked as the answer is the arithmetic's value), its bundle
validates and states each item's harness document, the same command writes the same bytes, and an earlier
example is replaced only with --force. The README's harness section runs as written (build-micro, the real
lm-evaluation-harness's dummy model offline, score), and ``score`` equals a count by hand of the log.
The practitioner's install is the package's ``harness`` extra, which pins what requirements-harness.txt pins.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import REPO
from helpers import run_command as run


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_example_is_a_local_benchmark_its_bundle_and_its_task(tmp_path):
    code, out, err = run("example", "harness", "--out", tmp_path / "toy")
    assert code == 0, err
    folder = tmp_path / "toy"
    assert "cd " in out and "build-micro --data ./toy-arithmetic" in out and "lm_eval --model dummy" in out
    docs = [json.loads(line) for line in (folder / "data" / "arithmetic_questions.jsonl").read_text().splitlines()]
    assert len(docs) == 60
    for doc in docs:
        a, sign, b = re.fullmatch(r"What is (\d+) ([+*-]) (\d+)\?", doc["question"]).groups()
        value = {"+": int(a) + int(b), "-": int(a) - int(b), "*": int(a) * int(b)}[sign]
        assert len(set(doc["choices"])) == 4 and doc["choices"][doc["answer"]] == str(value)
    config = yaml.safe_load((folder / "tasks" / "arithmetic_questions.yaml").read_text())
    assert config["task"] == "arithmetic_questions" and config["dataset_path"] == "json"
    assert config["dataset_kwargs"]["data_files"]["test"] == "data/arithmetic_questions.jsonl"  # relative: movable
    code, out, err = run("validate", folder / "toy-arithmetic")
    assert code == 0, out + err
    items = pd.read_csv(folder / "toy-arithmetic" / "items.csv")
    assert items["lm_eval_task"].eq("arithmetic_questions").all() and items["doc_id"].tolist() == list(range(60))
    responses = pd.read_csv(folder / "toy-arithmetic" / "responses.csv")
    assert responses.shape == (30, 61) and "synthetic" in json.loads((folder / "toy-arithmetic" /
                                                                       "provenance.json").read_text())["source"]
    run("example", "harness", "--out", tmp_path / "again")
    assert _files(tmp_path / "again") == _files(folder)  # a fixed seed: the same bytes


def test_an_earlier_example_is_replaced_only_with_force(tmp_path):
    assert run("example", "harness", "--out", tmp_path / "toy")[0] == 0
    code, _, err = run("example", "harness", "--out", tmp_path / "toy")
    assert code == 1 and "--force" in err
    assert run("example", "harness", "--out", tmp_path / "toy", "--force")[0] == 0
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine")
    code, _, err = run("example", "harness", "--out", tmp_path / "mine", "--force")
    assert code == 1 and "did not write" in err and (tmp_path / "mine" / "notes.txt").read_text() == "mine"


def test_the_harness_extra_pins_what_requirements_harness_pins():
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    pins = [line.split("#")[0].strip() for line in (REPO / "requirements-harness.txt").read_text().splitlines()]
    assert extras["harness"] == [pin for pin in pins if pin] == ["lm_eval==0.4.13"]


def test_no_message_sends_a_wheel_user_to_a_requirements_file():
    for path in (REPO / "mbutils").rglob("*.py"):
        assert "requirements-harness" not in path.read_text(encoding="utf-8"), path


def test_the_readme_harness_example_runs_offline(tmp_path):
    """The README's block that starts with ``example harness``, run as written by bash (``python`` and
    ``lm_eval`` are this interpreter and its harness), offline; score equals a count by hand."""
    if os.environ.get("CI"):  # in CI the harness is installed: its absence is a failure, never a skip
        import lm_eval  # noqa: F401
    else:
        pytest.importorskip("lm_eval", reason='pip install "mbutils[harness]" to run the real harness')
    blocks = [b for b in re.findall(r"```bash\n(.*?)```", (REPO / "README.md").read_text(), re.S)
              if "mbutils example harness" in b]
    assert len(blocks) == 1, "the README's harness section has one block running the example"
    shims = tmp_path / "bin"
    shims.mkdir()
    for name, command in (("python", f'"{sys.executable}"'), ("lm_eval", f'"{sys.executable}" -m lm_eval')):
        (shims / name).write_text(f"#!/bin/sh\nexec {command} \"$@\"\n")
        (shims / name).chmod(0o755)
    env = {**os.environ, "PATH": f"{shims}{os.pathsep}{os.environ['PATH']}", "HF_HOME": str(tmp_path / "hf"),
           "MBUTILS_CACHE": str(tmp_path / "cache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    start = time.monotonic()
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", blocks[0]], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600)
    seconds = time.monotonic() - start
    assert done.returncode == 0, done.stderr[-3000:]
    assert "estimated accuracy" in done.stdout and "interval" in done.stdout
    toy = tmp_path / "toy"
    (log,) = (toy / "runs").rglob("samples_arithmetic_questions_micro_*.jsonl")
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(records) == 15
    code, out, err = run("score", toy / "micro", toy / "runs", "--format", "json")
    assert code == 0, err
    ((_, row),) = json.loads(out).items()
    by_hand = 100 * sum(r["acc"] for r in records) / 15
    assert row["estimate"] == pytest.approx(by_hand, abs=1e-3)  # printed to four decimals
    print(f"the README's offline loop took {seconds:.0f} s")
    assert seconds < 300

"""score reads logs with the metric the bundle was built on (acc_norm for the leaderboard's GPQA), and says which.

A log of ``leaderboard_gpqa_main`` (the harness task the shipped GPQA items are documents of) records
``acc`` and ``acc_norm`` for every document, different on purpose: the default reads ``acc_norm``,
``--metric acc`` reads ``acc``, and both outputs name the metric they read.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from conftest import real_bundle
from helpers import run_command as run
from mbutils import build_micro, load_benchmark

STAMP = "2026-01-01T00-00-00"


@pytest.fixture(scope="module")
def micro(tmp_path_factory) -> Path:
    real_bundle("gpqa")
    return build_micro(load_benchmark("gpqa"), "random", 30, runs=2,
                       out=tmp_path_factory.mktemp("metric") / "micro").path


def _log(folder: Path, task: str, docs, stamped: bool = False) -> Path:
    """acc is 1 everywhere, acc_norm only on even documents."""
    folder.mkdir(parents=True)
    (folder / f"results_{STAMP}.json").write_text(json.dumps({"model_name": "org/new", "configs": {}}))
    lines = []
    for position, doc in enumerate(docs):
        record = {"doc_id": position if stamped else doc, "doc": {"question": f"q{doc}"}, "target": "0",
                  "filter": "none", "acc": 1.0, "acc_norm": float(doc % 2 == 0)}
        if stamped:
            record["doc"]["mbutils_doc_id"] = doc
        lines.append(json.dumps(record) + "\n")
    path = folder / f"samples_{task}_{STAMP}.jsonl"
    path.write_text("".join(lines))
    return path


def _chosen(micro: Path) -> list[int]:
    return sorted(int(i.rsplit("_", 1)[1]) for i in pd.read_csv(micro / "items.csv")["item"])


def test_the_default_metric_is_the_bundles_and_the_output_says_so(micro, tmp_path):
    chosen = _chosen(micro)
    even = 100 * sum(d % 2 == 0 for d in chosen) / len(chosen)
    log = _log(tmp_path / "full", "leaderboard_gpqa_main", range(448))
    code, out, err = run("score", micro, log, "--format", "json")
    assert code == 0, err
    assert json.loads(out)["org/new"]["estimate"] == pytest.approx(even)
    assert json.loads(out)["org/new"]["metric"] == "acc_norm"
    code, out, err = run("score", micro, log)
    assert code == 0 and "Metric: acc_norm (the metric the micro-benchmark's bundle was built on)" in out, err
    code, out, err = run("score", micro, log, "--metric", "acc")
    assert code == 0 and "Metric: acc (given)" in out and "estimated accuracy 100.0 points" in out, err


def test_a_micro_task_log_is_read_with_the_bundles_metric(micro, tmp_path):
    chosen = _chosen(micro)
    log = _log(tmp_path / "micro-run", "leaderboard_gpqa_main_micro", chosen, stamped=True)
    code, out, err = run("score", micro, log, "--format", "json")
    assert code == 0, err
    assert json.loads(out)["org/new"]["estimate"] == pytest.approx(100 * sum(d % 2 == 0 for d in chosen) / len(chosen))


def test_a_responses_csv_names_no_metric(micro, tmp_path):
    items = pd.read_csv(micro / "items.csv")["item"].tolist()
    path = tmp_path / "new.csv"
    pd.DataFrame([[1] * len(items)], columns=items).assign(model="new").to_csv(path, index=False)
    code, out, err = run("score", micro, path)
    assert code == 0 and "no lm-eval metric or filter read" in out, err
    code, out, err = run("score", micro, path, "--format", "json")
    assert code == 0 and json.loads(out)["new"]["metric"] is None, err

"""``score`` reads the metrics of the leaderboard's MuSR, MATH-Hard and IFEval tasks from lm-eval logs.

The bundles state their harness tasks and metrics (provenance.json): ``acc_norm`` for the three
``leaderboard_musr_*`` tasks, ``exact_match`` (a float 0.0/1.0 per document) for the seven
``leaderboard_math_*_hard`` tasks, ``prompt_level_strict_acc`` (true/false) for ``leaderboard_ifeval``.
Logs of the exported micro tasks, as the harness writes them (documents stamped by the filter; the metric's
value per record), are scored with those metrics, and the estimate of a random micro-benchmark is the count
by hand. These bundles' datasets come from the Hub, so their folders record no content fingerprints: two logs
that disagree on a document's content are still refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from conftest import real_bundle
from helpers import run_command as run
from mbutils import build_micro, load_benchmark
from mbutils.micro.lm_eval_filter import FINGERPRINT, IDENTITY, STAMP, identity

STAMPED = "2026-12-07T10-00-00.000001"
METRICS = {"musr-leaderboard": ("acc_norm", lambda r: int(r)), "math-hard-leaderboard": ("exact_match", float),
           "ifeval-leaderboard": ("prompt_level_strict_acc", bool)}


def _micro_logs(folder: Path, logs: Path, metric: str, value, seed: int) -> float:
    """One samples log per micro task of ``folder`` (model ORG/NEW), each document's metric drawn; returns the
    mean of the values written (the plain mean a random micro-benchmark estimates)."""
    meta = json.loads((folder / "micro.json").read_text())
    rng = np.random.default_rng(seed)
    run_dir = logs / "ORG__NEW"
    run_dir.mkdir(parents=True)
    (run_dir / f"results_{STAMPED}.json").write_text(json.dumps({"model_name": "ORG/NEW", "results": {}}))
    written = []
    for micro_task, entry in meta["lm_eval_tasks"].items():
        name = identity(entry["task"], entry["n_docs"], entry["docs"])
        lines = []
        for position, doc in enumerate(entry["docs"]):
            right = int(rng.random() < 0.4)
            written.append(right)
            lines.append(json.dumps({"doc_id": position, "doc": {"text": f"document {doc}", STAMP: doc,
                                                                 FINGERPRINT: f"{doc:064x}", IDENTITY: name},
                                     "target": "x", "filter": "none", "metrics": [metric], metric: value(right)}))
        (run_dir / f"samples_{micro_task}_{STAMPED}.jsonl").write_text("\n".join(lines) + "\n")
    return float(np.mean(written))


@pytest.mark.parametrize("name", list(METRICS))
def test_the_leaderboard_metric_of_each_added_bundle_is_read_from_its_micro_logs(name, tmp_path):
    real_bundle(name)
    metric, value = METRICS[name]
    built = build_micro(load_benchmark(name), "random", 12, runs=2, out=tmp_path / "micro")
    meta = json.loads((built.path / "micro.json").read_text())
    assert meta["lm_eval_metric"] == metric and meta["lm_eval_group"]["metric"] == metric
    assert all(e["fingerprints"] is None for e in meta["lm_eval_tasks"].values())  # Hub datasets: not read
    by_hand = _micro_logs(built.path, tmp_path / "runs", metric, value, seed=len(name))
    code, out, err = run("score", built.path, tmp_path / "runs", "--format", "json")
    assert code == 0, err
    row = json.loads(out)["ORG/NEW"]
    assert row["metric"] == metric and row["estimate"] == pytest.approx(100 * by_hand, abs=1e-3)


def test_logs_that_disagree_on_a_documents_content_are_refused_without_a_record(tmp_path):
    real_bundle("ifeval-leaderboard")
    built = build_micro(load_benchmark("ifeval-leaderboard"), "random", 8, runs=2, out=tmp_path / "micro")
    _micro_logs(built.path, tmp_path / "runs", "prompt_level_strict_acc", bool, seed=1)
    other = tmp_path / "runs" / "ORG__OTHER"
    other.mkdir()
    (other / f"results_{STAMPED}.json").write_text(json.dumps({"model_name": "ORG/OTHER", "results": {}}))
    (log,) = (tmp_path / "runs" / "ORG__NEW").glob("samples_*.jsonl")
    records = [json.loads(line) for line in log.read_text().splitlines()]
    records[2]["doc"][FINGERPRINT] = "f" * 64  # the other model ran on another dataset's third document
    (other / log.name).write_text("\n".join(json.dumps(r) for r in records) + "\n")
    code, out, err = run("score", built.path, tmp_path / "runs")
    assert code == 1 and out == "" and err.count("error:") == 1
    assert "holds other content in the two logs" in err and "different datasets" in err

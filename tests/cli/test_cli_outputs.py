"""The second hostile review's remaining classes: outputs replaced only on request, CSV results that
keep their names, provenance and spreadsheets safe, and messages that name what went wrong."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from helpers import random_benchmark
from helpers import run_cli as run
from mbutils.base.tables import read_csv_table
from mbutils.data.bundle import Benchmark, save_bundle

#: Names a spreadsheet or pandas would change: numbers, missing-value words, formulas, a quote.
AWKWARD = ["001", "1", "NaN", "", "=1+1", "+x", "-y", "@z", "'quoted", "null", "1e5", " pad "]


@pytest.fixture(scope="module")
def awkward_bundle(tmp_path_factory) -> Path:
    base = random_benchmark(n_models=len(AWKWARD) + 8, subtask_sizes=(40,), seed=3)
    models = [name if name.strip() else "blank?" for name in AWKWARD] + [f"m{i}" for i in range(8)]
    bench = Benchmark(name="awkward", correct=base.correct, models=models, items=base.items,
                      subtasks=base.subtasks)
    return save_bundle(bench, tmp_path_factory.mktemp("b") / "awkward")


@pytest.fixture(scope="module")
def tiny_bundle(tmp_path_factory) -> Path:
    return save_bundle(random_benchmark(n_models=30, subtask_sizes=(30,), seed=1),
                       tmp_path_factory.mktemp("t") / "tiny")


def experiment(bundle, out, *extra):
    return run("experiment", "--data", bundle, "--sizes", "10", "--runs", "2", "--sources", "10",
               "--targets", "8", "--quiet", "--no-cache", "--out", out, *extra)


# -- existing outputs are replaced only with --force ------------------------------------------------

def test_results_outputs_need_force(tiny_bundle, tmp_path):
    first, second = tmp_path / "a.parquet", tmp_path / "b.parquet"
    assert experiment(tiny_bundle, first)[0] == 0
    assert run("experiment", "--data", tiny_bundle, "--sizes", "10", "--runs", "2", "--sources", "10",
               "--targets", "8", "--seed", "1", "--quiet", "--no-cache", "--out", second)[0] == 0
    both = tmp_path / "both.parquet"
    assert run("combine", first, second, "--out", both)[0] == 0
    before = both.read_bytes()
    code, _, err = run("combine", first, second, "--out", both)
    assert code == 1 and f"{both} exists; pass --force to replace it" in err
    assert both.read_bytes() == before
    code, _, err = run("combine", first, second, "--out", both, "--force")
    assert code == 0 and "replaced the existing" in err
    items = tmp_path / "items.txt"
    items.write_text("q0000\nq0001\nq0002\n")
    audit_out = tmp_path / "audit.csv"
    audit_out.write_text("keep me\n")
    code, _, err = run("audit", "--data", tiny_bundle, "--items", items, "--random", "5", "--quiet",
                       "--out", audit_out)
    assert code == 1 and "pass --force" in err and audit_out.read_text() == "keep me\n"


def test_import_into_a_taken_folder_says_force(tmp_path):
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine")
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "samples_x.jsonl").write_text("{}\n")
    code, _, err = run("import", "lm-eval", logs, "--out", taken, "--quiet")
    assert code == 1 and "pass --force to replace it" in err and "overwrite=True" not in err
    assert (taken / "notes.txt").read_text() == "mine"
    code, _, err = run("import", "lm-eval", logs / "samples_x.jsonl", "--out", logs, "--quiet", "--force")
    assert code == 1 and "holds the input" in err and (logs / "samples_x.jsonl").exists()


def test_notebook_needs_force_to_replace(tmp_path):
    out = tmp_path / "measures.ipynb"
    out.write_text("my own notebook")
    code, _, err = run("notebook", "measures", "--out", out)
    assert code == 1 and "pass --force" in err and out.read_text() == "my own notebook"
    code, _, err = run("notebook", "measures", "--out", out, "--force")
    assert code == 0 and json.loads(out.read_text())["cells"]


# -- CSV results: names, formulas and provenance survive ---------------------------------------------


def test_results_csv_keeps_names_and_provenance(awkward_bundle, tmp_path):
    csv_out, parquet_out = tmp_path / "r.csv", tmp_path / "r.parquet"
    assert experiment(awkward_bundle, csv_out, "--sources", "12")[0] == 0
    assert experiment(awkward_bundle, parquet_out, "--sources", "12")[0] == 0
    raw = pd.read_csv(csv_out, dtype=str, keep_default_na=False)
    assert not raw["model"].str.startswith(("=", "+", "-", "@")).any()  # a spreadsheet shows them as text
    back = read_csv_table(csv_out, ("model", "selector", "experiment"))
    truth = pd.read_parquet(parquet_out)
    assert back["model"].tolist() == truth["model"].tolist()
    assert set(back["model"]) & {"001", "1", "NaN", "=1+1", "'quoted"}
    np.testing.assert_allclose(back["estimate"], truth["estimate"])
    side = csv_out.with_name("r.csv.provenance.json")
    record = json.loads(side.read_text())
    assert list(record["experiments"]) == truth["experiment"].unique().tolist()
    code, out_csv, _ = run("mdad", csv_out)
    code2, out_pq, _ = run("mdad", parquet_out)
    assert code == code2 == 0 and out_csv == out_pq


def test_a_sidecar_of_another_table_is_refused(tiny_bundle, tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    assert experiment(tiny_bundle, a)[0] == 0
    assert run("experiment", "--data", tiny_bundle, "--sizes", "10", "--runs", "2", "--sources", "12",
               "--targets", "8", "--quiet", "--no-cache", "--out", b)[0] == 0
    a.with_name("a.csv.provenance.json").write_text(b.with_name("b.csv.provenance.json").read_text())
    code, _, err = run("summary", a)
    assert code == 1 and "the sidecar belongs to another table" in err
    a.with_name("a.csv.provenance.json").write_text("{not json")
    code, _, err = run("summary", a)
    assert code == 1 and "is not valid JSON" in err


def test_plan_refuses_a_csv_whose_sidecar_names_another_bundle(tiny_bundle, tmp_path):
    other = save_bundle(random_benchmark(n_models=30, subtask_sizes=(30,), seed=2, name="other"),
                        tmp_path / "other")
    results = tmp_path / "r.csv"
    assert experiment(tiny_bundle, results)[0] == 0
    code, _, err = run("plan", "--data", other, "--results", results, "--gap", "5")
    assert code == 1 and "these results come from bundle 'tiny'" in err  # read from the sidecar


# -- messages ----------------------------------------------------------------------------------------

def test_control_characters_in_messages_are_escaped(tmp_path):
    code, _, err = run("mdad", tmp_path / "x\x1b[31mred.parquet")
    assert code == 1 and "\x1b" not in err and "x\\x1b[31mred" in err


def test_a_full_disk_names_the_output(tiny_bundle, tmp_path, monkeypatch):
    import mbutils.base.cache as cache

    def full(path, write):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cache, "atomic_write", full)
    out = tmp_path / "r.parquet"
    code, _, err = experiment(tiny_bundle, out)
    assert code == 1 and str(out) in err and "No space left on device" in err and not out.exists()


def test_a_micro_benchmark_folder_keeps_awkward_names(awkward_bundle, tmp_path):
    from mbutils.micro.folder import read_micro

    out = tmp_path / "micro"
    code, _, err = run("build-micro", "--data", awkward_bundle, "--selector", "random", "--k", "5", "--runs", "2",
                       "--quiet", "--out", out)
    assert code == 0, err
    raw = pd.read_csv(out / "pool.csv", dtype=str, keep_default_na=False)
    assert not raw["model"].str.startswith(("=", "+", "-", "@")).any()
    folder = read_micro(out)
    models = pd.read_csv(awkward_bundle / "responses.csv", dtype=str, keep_default_na=False)["model"]
    assert set(folder.pool["model"]) <= set(models) and {"001", "NaN", "=1+1"} & set(folder.pool["model"])

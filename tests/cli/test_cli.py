"""The command-line contract: outputs, exit codes and messages, never a traceback."""

import json
import subprocess
import sys

import pandas as pd
import pytest

from conftest import TESTS
from helpers import random_benchmark, run_cli
from mbutils.data.bundle import save_bundle


run = run_cli


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    return save_bundle(random_benchmark(n_models=40), tmp_path_factory.mktemp("b") / "tiny")


@pytest.fixture(scope="module")
def results(bundle, tmp_path_factory):
    out = tmp_path_factory.mktemp("r") / "r.parquet"
    code, _, err = run("experiment", "--data", bundle, "--selectors", "random,subtask_equal",
                       "--sizes", "5,10", "--runs", "4", "--sources", "20", "--targets", "10",
                       "--quiet", "--out", out)
    assert code == 0, err
    return out


def test_experiment_then_mdad_and_summary(results):
    table = pd.read_parquet(results)
    assert len(table) == 2 * 2 * 4 * 10
    code, out, _ = run("mdad", results, "--bootstrap", "200")
    assert code == 0
    lines = out.strip().splitlines()
    assert lines[0] == "selector,size,mdad,ci_low,ci_high,n_pairs"
    assert len(lines) == 1 + 4 and all(line.endswith(",180") for line in lines[1:])
    code, out, _ = run("mdad", results, "--format", "markdown", "--threshold", "0.9", "--ci", "runs")
    assert code == 0 and out.startswith("| selector") and len(out.splitlines()) == 2 + 4
    code, out, _ = run("summary", results)
    assert code == 0 and out.splitlines()[0].startswith("selector,size,n_runs,tau")


def test_jobs_do_not_change_the_table(bundle, tmp_path):
    outs = []
    for jobs in (1, 2):
        out = tmp_path / f"j{jobs}.csv"
        code, _, err = run("experiment", "--data", bundle, "--selectors", "random", "--sizes", "5",
                           "--runs", "3", "--sources", "20", "--targets", "10", "--jobs", jobs,
                           "--no-cache", "--quiet", "--out", out)
        assert code == 0, err
        outs.append(pd.read_csv(out))
    pd.testing.assert_frame_equal(*outs)


@pytest.mark.parametrize("args, message", [
    (["--selectors", "nope"], "unknown selector 'nope'; choose from: random, subtask_equal"),
    (["--sizes", "5,31"], "sizes 31 do not fit the seen half (30 items)"),
    (["--sources", "39"], "too few for 10 targets + 39 sources"),
    (["--target-set", "missing"], "no target set named 'missing'"),
])
def test_experiment_errors_exit_1_and_leave_no_file(bundle, tmp_path, args, message):
    out = tmp_path / "r.parquet"
    base = ["experiment", "--data", bundle, "--runs", "2", "--sources", "20", "--targets", "10",
            "--sizes", "5", "--quiet", "--out", out]
    code, stdout, err = run(*base, *args)
    assert code == 1 and message in err and "Traceback" not in err
    assert not out.exists()


def test_unknown_bundle_and_bad_results_file(tmp_path):
    code, _, err = run("experiment", "--data", "no-such-bundle", "--out", tmp_path / "x.parquet")
    assert code == 1 and "no-such-bundle" in err
    code, _, err = run("mdad", tmp_path / "absent.parquet")
    assert code == 1 and "no such results file" in err
    junk = tmp_path / "junk.parquet"
    junk.write_text("not parquet")
    code, _, err = run("summary", junk)
    assert code == 1 and "cannot read it as a results table" in err


def test_validate_reports_every_problem_with_place(tmp_path, bundle):
    code, out, _ = run("validate", bundle)
    assert code == 0 and "valid bundle" in out
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "responses.csv").write_text("model,q1,q2\nm1,1,0\nm2,2,1\nm1,0,1\nm3,1\n")
    (bad / "items.csv").write_text("item,subtask\nq1,a\nq3,a\n")
    code, out, err = run("validate", bad)
    assert code == 1 and "Traceback" not in out + err
    assert "'2'" in out and "row 3" in out                       # non-0/1 value, with its row
    assert "rows 2 and 4: model 'm1' appears more than once" in out  # duplicate model
    assert "line 5" in out or "row 5" in out                     # ragged row
    assert "q2" in out and "q3" in out                           # items missing either way


def test_module_entry_point_has_no_traceback(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "mbutils", "validate", str(tmp_path / "nothing")],
                          capture_output=True, text=True)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr and proc.stderr.strip()


def test_not_reached_is_spelled_out():
    import numpy as np
    from mbutils.base.tables import render

    table = pd.DataFrame({"selector": ["random"], "size": [10], "mdad": [np.nan], "ci_low": [np.nan],
                          "ci_high": [np.nan], "n_pairs": [1225]})
    assert render(table).splitlines()[1] == "random,10,not reached,not reached,not reached,1225"
    assert "| not reached |" in render(table, "markdown")


def test_import_commands_write_valid_bundles(tmp_path):
    from mbutils.data.bundle import load_bundle

    fixtures = TESTS / "fixtures"
    code, _, err = run("import", "lm-eval", fixtures / "lm_eval", "--out", tmp_path / "lm", "--quiet")
    assert code == 0, err
    bench = load_bundle(tmp_path / "lm")
    assert bench.n_models == 3 and bench.has_confidence
    models = tmp_path / "models.txt"
    models.write_text("org-a/tiny-1\norg-b/tiny-2\norg-c/tiny-3\n")
    code, _, err = run("import", "leaderboard", "--models", models, "--benchmark", "gpqa",
                       "--source", fixtures / "leaderboard" / "raw", "--out", tmp_path / "lb", "--quiet")
    assert code == 0, err
    assert load_bundle(tmp_path / "lb").n_models == 3
    code, _, err = run("import", "lm-eval", tmp_path / "nothing-here", "--out", tmp_path / "x", "--quiet")
    assert code == 1 and "Traceback" not in err and not (tmp_path / "x").exists()


def test_plan_and_audit_commands(bundle, results, tmp_path):
    code, out, err = run("plan", "--data", bundle, "--gap", "10", "--agreement", "0.7", "--bin-width", "5",
                         "--results", results, "--runs", "4", "--sources", "20", "--targets", "10")
    assert code == 0, err
    assert "Random sampling" in out and "of 30 items" in out
    items = tmp_path / "items.txt"
    items.write_text("q0001\nq0005\nq0010\nq0020\nq0030\n")
    code, out, err = run("audit", "--data", bundle, "--items", items, "--random", "20", "--bin-width", "5",
                         "--bootstrap", "100", "--out", tmp_path / "audit.csv")
    assert code == 0, err
    assert "Audit of a 5-item micro-benchmark" in out and (tmp_path / "audit.csv").exists()
    items.write_text("q0001\nnot-an-item\n")
    code, _, err = run("audit", "--data", bundle, "--items", items)
    assert code == 1 and "not-an-item" in err and "Traceback" not in err


# -- data --------------------------------------------------------------------------------------


def test_data_lists_a_readers_folder_first_then_the_shipped_bundles_and_the_stand_ins(bundle, monkeypatch):
    monkeypatch.setenv("MBUTILS_DATA", str(bundle.parent))
    code, out, err = run("data", "--format", "csv")
    assert code == 0
    rows = [line.split(",") for line in out.splitlines()]
    assert rows[0] == ["name", "kind", "models", "complete_models", "items", "subtasks", "confidences", "folder",
                       "licence"]
    names = [r[0] for r in rows[1:]]
    assert names[0] == "tiny" and rows[1][1:4] == ["real", "40", "40"] and rows[1][-1] == "not stated"
    assert names.index("gpqa") < names.index("synthetic-gpqa") and "synthetic-mmlu" in names
    assert f"searched: MBUTILS_DATA {bundle.parent.resolve()}, then the repository's data folder" in err


def test_data_show_gives_provenance_and_refuses_unknown_names_and_stray_arguments():
    code, out, _ = run("data", "show", "gpqa")
    assert code == 0 and out.startswith("gpqa: real\n")
    assert "licence:" in out and "MIT" in out and "target sets:" in out and "7b_instruct" in out
    assert "file responses.csv:" in out and "stored as responses.csv.gz, 395,031 bytes" in out
    code, _, err = run("data", "show", "no-such-bundle")
    assert code == 1 and err.startswith("error: no bundle named 'no-such-bundle' on the data path")
    code, _, err = run("data", "show")
    assert code == 1 and "data show needs a bundle name" in err
    code, _, err = run("data", "list", "gpqa")
    assert code == 1 and "data list takes no name" in err


def test_data_lists_an_unreadable_bundle_with_its_problem_instead_of_failing(tmp_path, monkeypatch):
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "responses.csv").write_text("model,q1\na,7\n")
    monkeypatch.setenv("MBUTILS_DATA", str(tmp_path))
    code, out, _ = run("data")
    assert code == 0 and "| broken " in out and "real, invalid" in out
    code, out, _ = run("data", "show", "broken")
    assert code == 0 and "problem:" in out and "value '7' is not 0 or 1" in out and "validate" in out


def test_data_show_states_only_what_a_hand_written_provenance_gives(tmp_path, monkeypatch):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "responses.csv").write_text("model,q1,q2\na,1,0\nb,0,1\n")
    (folder / "items.csv").write_text("item,subtask\nq1,s\nq2,s\n")
    (folder / "provenance.json").write_text(json.dumps({"title": "mine", "files": {"responses.csv": {"bytes": 28},
                                                                                   "items.csv": {}}}))
    monkeypatch.setenv("MBUTILS_DATA", str(tmp_path))
    code, out, _ = run("data", "show", "mine")
    assert code == 0 and "None" not in out
    assert "file responses.csv:" in out and "28 bytes" in out and "file items.csv:" in out and "listed, with no details" in out

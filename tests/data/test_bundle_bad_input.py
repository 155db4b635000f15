"""The bad-input corpus (tests/bad_bundles) end to end, through the command line and the API.

test_bundle.py checks the wording of every bundle problem in detail; here each committed
case is refused the way a user meets it: exit code 1, one message holding the case's
fragment (file, row, column), no traceback, nothing written next to ``--out`` and nothing
changed in the bundle; and the Python API raises the case's exception with the same fragment.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pandas as pd
import pytest

from conftest import REPO, TESTS
from mbutils.base import errors
from mbutils.data.bundle import load_bundle, validate_bundle
from mbutils.base.cache import cache_dir
from mbutils.cli import main
from mbutils.methods.experiment import run_experiment
from mbutils.methods.protocol import Protocol

CORPUS = TESTS / "bad_bundles"
INDEX = json.loads((CORPUS / "cases.json").read_text(encoding="utf-8"))
BASE, CASES = INDEX["experiment"], INDEX["cases"]
BUNDLE_FILES = ("responses.csv", "items.csv", "confidence.csv", "models.csv", "target_sets.json")
MAX_PROBLEM_CHARS = 600  # one problem is one readable line, not a dump of the file
VALID = CORPUS / "valid-6x8"  # the bundle the protocol-level cases share


def folder_of(name: str) -> Path:
    return CORPUS / CASES[name].get("bundle", name)


def cases(*stages: str) -> list:
    """Case names of the given stages; known bad behaviours are marked strict xfail."""
    return [
        pytest.param(name, id=name, marks=[pytest.mark.xfail(strict=True, reason=case["xfail"])]
                     if "xfail" in case else [])
        for name, case in CASES.items() if case["stage"] in stages
    ]


def run_cli(*args) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main([str(a) for a in args])
        except SystemExit as exit:  # argparse's usage errors
            code = exit.code
    return code, out.getvalue(), err.getvalue()


def run_settings(name: str) -> dict:
    """The case's experiment: the shared settings with its ``run`` overrides."""
    return {**BASE, **CASES[name].get("run", {})}


def experiment_args(folder: Path, run: dict, out: Path) -> list:
    """Command-line arguments of an experiment with the settings ``run`` (cases.json's names)."""
    args = ["experiment", "--data", folder, "--selectors", ",".join(run["selectors"]),
            "--sizes", ",".join(map(str, run["sizes"])), "--runs", run["runs"], "--sources", run["sources"],
            "--targets", run["targets"], "--seed", run["seed"], "--backend", "sequential", "--quiet",
            "--out", out]
    return args + (["--target-set", run["target_set"]] if run.get("target_set") else [])


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def out_dir(tmp_path) -> Path:
    folder = tmp_path / "out"
    folder.mkdir()
    return folder


def assert_refused(code: int, text: str, fragment: str, exit_code: int = 1) -> None:
    assert code == exit_code, text
    assert fragment in text, text
    assert "Traceback" not in text and 'File "' not in text, text


# -- the corpus itself ---------------------------------------------------------------------------------


def test_every_folder_is_a_case_and_the_corpus_stays_tiny():
    folders = {p.name for p in CORPUS.iterdir() if p.is_dir()}
    used = {CASES[name].get("bundle", name) for name in CASES}
    assert folders == used
    assert {c["stage"] for c in CASES.values()} == {"bundle", "load", "experiment"}
    for name, case in CASES.items():
        if case["stage"] == "bundle":  # a bundle problem names its file first
            assert case["expect"].startswith(BUNDLE_FILES), name
        if case["stage"] == "experiment":
            assert hasattr(errors, case["raises"]), name
    assert sum(p.stat().st_size for p in CORPUS.rglob("*") if p.is_file()) < 12_000


# -- bad bundles: validate, experiment, API -------------------------------------------------------------


@pytest.mark.parametrize("name", cases("bundle"))
def test_validate_refuses_a_bad_bundle_with_the_place_of_each_problem(name):
    folder, case = folder_of(name), CASES[name]
    before = snapshot(folder)
    code, out, err = run_cli("validate", folder)
    assert_refused(code, out + err, case["expect"])
    error_lines = [line for line in out.splitlines() if line.startswith("error: ")]
    assert len(error_lines) == case.get("errors", 1), out
    assert err.strip() == f"{folder}: {len(error_lines)} error(s); the bundle cannot be used until they are fixed"
    assert snapshot(folder) == before


@pytest.mark.parametrize("name", cases("bundle", "load"))
def test_experiment_on_a_bad_bundle_exits_1_and_writes_nothing(name, out_dir):
    folder, case = folder_of(name), CASES[name]
    before = snapshot(folder)
    code, out, err = run_cli(*experiment_args(folder_of(name), run_settings(name), out_dir / "x.parquet"))
    assert_refused(code, err, case["expect"])
    assert out == "" and err.count("error: ") == 1 and f"bundle '{folder.name}' ({folder})" in err
    assert list(out_dir.iterdir()) == []
    assert snapshot(folder) == before


@pytest.mark.parametrize("name", cases("bundle", "load"))
def test_load_bundle_raises_bundle_error_with_the_same_fragment(name):
    case = CASES[name]
    with pytest.raises(errors.BundleError) as raised:
        load_bundle(folder_of(name))
    assert case["expect"] in str(raised.value)
    problems = validate_bundle(folder_of(name))
    found = [p for p in problems if p.severity == "error"]
    assert len(found) == (case.get("errors", 1) if case["stage"] == "bundle" else 0)
    for problem in problems:
        text = str(problem)
        assert "\n" not in text and len(text) <= MAX_PROBLEM_CHARS, text
        assert text.startswith(problem.file) and problem.file in BUNDLE_FILES


# -- valid bundles, refused experiments ------------------------------------------------------------------


@pytest.mark.parametrize("folder", sorted({CASES[n].get("bundle", n) for n in CASES
                                           if CASES[n]["stage"] in ("load", "experiment")}))
def test_bundles_of_later_stages_are_valid_in_format(folder):
    code, out, err = run_cli("validate", CORPUS / folder)
    assert code == 0 and "valid bundle" in out and "error" not in out + err, out + err


@pytest.mark.parametrize("name", cases("experiment"))
def test_experiment_refuses_what_the_bundle_cannot_support(name, out_dir, tmp_path, monkeypatch):
    case = CASES[name]
    # a cache of its own: other tests' chapters may be writing to the shared one in the background
    monkeypatch.setenv("MBUTILS_CACHE", str(tmp_path / "cache"))
    leftovers = lambda: sorted(p.name for p in cache_dir().rglob("*.tmp"))  # noqa: E731
    before, stray = snapshot(folder_of(name)), leftovers()
    code, out, err = run_cli(*experiment_args(folder_of(name), run_settings(name), out_dir / "x.parquet"))
    assert_refused(code, err, case.get("cli_expect", case["expect"]), case.get("cli_exit", 1))
    message = err.strip().splitlines()[-1 if "cli_exit" in case else 0]  # usage errors follow the usage lines
    assert out == "" and err.count("error: ") == 1 and err.strip().endswith(message), err
    assert len(err.strip().splitlines()) == 1 or case.get("cli_exit") == 2, err
    assert list(out_dir.iterdir()) == []
    assert snapshot(folder_of(name)) == before and leftovers() == stray


@pytest.mark.parametrize("name", cases("experiment"))
def test_run_experiment_raises_the_specific_error(name):
    case, run = CASES[name], run_settings(name)
    bench = load_bundle(folder_of(name))
    protocol = Protocol(n_sources=run["sources"], n_targets=run["targets"], n_runs=run["runs"],
                        seed=run["seed"], target_set=run.get("target_set"))
    with pytest.raises(getattr(errors, case["raises"])) as raised:
        run_experiment(bench, run["selectors"], run["sizes"], protocol, backend="sequential", progress=False)
    assert case["expect"] in str(raised.value)


def test_the_shared_settings_run_on_the_valid_bundle(out_dir):
    """Control: the refusals above come from each case's one change, not from the shared settings."""
    out = out_dir / "x.parquet"
    code, _, err = run_cli(*experiment_args(VALID, BASE, out))
    assert code == 0, err
    assert [p.name for p in out_dir.iterdir()] == ["x.parquet"]
    assert len(pd.read_parquet(out)) == BASE["runs"] * BASE["targets"] * len(BASE["sizes"])


# -- through a real process ------------------------------------------------------------------------------


def test_a_real_process_shows_one_message_and_no_traceback(out_dir):
    case = CASES["latin1-encoding"]
    args = experiment_args(folder_of("latin1-encoding"), BASE, out_dir / "x.parquet")
    proc = subprocess.run([sys.executable, "-m", "mbutils", *map(str, args)],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert_refused(proc.returncode, proc.stderr, case["expect"])
    assert proc.stdout == "" and proc.stderr.startswith("error: bundle 'latin1-encoding'")
    assert list(out_dir.iterdir()) == []


# -- known bad behaviours outside the committed corpus ---------------------------------------------------


def test_an_output_path_that_is_a_folder_is_refused(out_dir):
    (out_dir / "x.parquet").mkdir()
    code, _, err = run_cli(*experiment_args(VALID, BASE, out_dir / "x.parquet"), "--no-cache")
    assert_refused(code, err, "x.parquet")
    assert [p.name for p in out_dir.iterdir()] == ["x.parquet"] and not any((out_dir / "x.parquet").iterdir())


def test_deeply_nested_target_sets_json_is_a_problem_not_a_crash(tmp_path):
    folder = tmp_path / "deep"
    shutil.copytree(VALID, folder)
    depth = 20 * sys.getrecursionlimit()
    (folder / "target_sets.json").write_text('{"a": ' + "[" * depth + "]" * depth + "}")
    code, out, err = run_cli("validate", folder)
    assert_refused(code, out + err, "target_sets.json")


def test_a_written_results_file_has_ordinary_permissions(out_dir):
    out = out_dir / "x.csv"
    old = os.umask(0o022)  # the usual umask, whatever the test runner's
    try:
        code, _, err = run_cli(*experiment_args(VALID, BASE, out))
    finally:
        os.umask(old)
    assert code == 0, err
    assert out.stat().st_mode & 0o777 == 0o644


def test_validate_refuses_names_no_command_can_take(tmp_path):
    """Names with a line break, a tab, or only spaces: validate says which row, before any command trips on them."""
    import csv

    from helpers import run_cli

    folder = tmp_path / "names"
    folder.mkdir()
    with open(folder / "responses.csv", "w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["model", "q1", "q\t2", "q3"])
        out.writerows([["a", 1, 0, 1], ["b\nc", 0, 1, 1], ["   ", 1, 1, 0], ["d", 0, 0, 1]])
    (folder / "items.csv").write_text("item,subtask\nq1,s\n\"q\t2\",s\nq3,s\n")
    code, out_text, err = run_cli("validate", folder)
    assert code == 1, out_text + err
    assert "have an item name that is only white space or holds a line break, tab or other control" in out_text
    assert "model name that is only white space or holds a line break, tab or other control" in out_text


def test_validate_warns_of_model_names_a_spreadsheet_would_run(tmp_path):
    from helpers import run_cli

    folder = tmp_path / "f"
    folder.mkdir()
    (folder / "responses.csv").write_text("model,q1,q2\n=HYPERLINK(1),1,0\nplain,0,1\n+a,1,1\n")
    (folder / "items.csv").write_text("item,subtask\nq1,s\nq2,s\n")
    code, out_text, _ = run_cli("validate", folder)
    assert code == 0 and "warning" in out_text and "may run it as a formula" in out_text and "row(s) 2 and 4" in out_text

"""Issue 12's hostile inputs, each through the command line (and the API where it has one):
known messages, exit codes, and the files on disk before and after."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from conftest import REPO, TESTS
from helpers import random_benchmark
from helpers import run_command as run
from mbutils.base import cache
from mbutils.data.bundle import save_bundle
from mbutils.cli import build_parser
from mbutils.base.errors import CacheError, ResultsError
from mbutils.methods.experiment import run_experiment, worker_count
from mbutils.evaluate.metrics import mdad_table
from mbutils.methods.protocol import Protocol

VALID = TESTS / "bad_bundles" / "valid-6x8"
PROTO = Protocol(n_sources=20, n_targets=10, n_runs=3, seed=0)


def tree(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    return save_bundle(random_benchmark(n_models=40), tmp_path_factory.mktemp("b") / "tiny")


def experiment(bundle, out, *extra) -> tuple[int, str, str]:
    return run("experiment", "--data", bundle, "--selectors", "random", "--sizes", "5", "--runs", "3",
               "--sources", "20", "--targets", "10", "--quiet", "--out", out, *extra)


# -- 1. nothing touched outside its place ----------------------------------------------------------

def test_cache_clear_takes_only_known_kinds_and_deletes_nothing_outside(tmp_path, monkeypatch):
    monkeypatch.setenv("MBUTILS_CACHE", str(tmp_path / "cache"))
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("keep me")
    for kind in (str(victim), "../victim", "results/../../victim", ""):
        code, _, err = run("cache", "clear", "--kind", kind)
        assert code == 2 and "invalid choice" in err, err
    (tmp_path / "cache" / "results").mkdir(parents=True)
    (tmp_path / "cache" / "results" / "link").symlink_to(victim, target_is_directory=True)
    (tmp_path / "cache" / "synthetic").symlink_to(victim, target_is_directory=True)
    assert run("cache", "clear")[0] == 0 and run("cache", "clear", "--kind", "synthetic")[0] == 0
    assert (victim / "precious.txt").read_text() == "keep me"
    with pytest.raises(CacheError, match="cache kind must be one of 'results', 'synthetic', 'medoids', not '../victim'"):
        cache.clear("../victim")


def test_a_bundle_name_cannot_put_a_cache_file_outside_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MBUTILS_CACHE", str(tmp_path / "cache"))
    before = tree(tmp_path)
    run_experiment(random_benchmark(name="../../escaped"), ["random"], [5], PROTO, progress=False)
    created = tree(tmp_path) - before
    assert created and all(p.startswith("cache") for p in created), created
    assert cache.safe_name("../../x/é") == "_.._x_" and cache.safe_name("...") == "_"


# -- 2. mixed experiments are refused; combining them is on purpose --------------------------------

def test_two_concatenated_experiments_are_refused_with_how_to_split(bundle, tmp_path):
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    assert experiment(bundle, a, "--seed", "1")[0] == 0 and experiment(bundle, b, "--seed", "2")[0] == 0
    both = tmp_path / "both.parquet"
    pd.concat([pd.read_parquet(a), pd.read_parquet(b)]).to_parquet(both)
    for command in ("mdad", "summary"):
        code, out, err = run(command, both)
        assert code == 1 and out == "" and "results table mixes 2 experiments" in err, err
        assert "table[table['experiment'] ==" in err and "mbutils combine" in err
    stripped = tmp_path / "stripped.csv"  # without the experiment column, the repeated keys give it away
    pd.concat([pd.read_parquet(a), pd.read_parquet(a)]).drop(columns="experiment").to_csv(stripped, index=False)
    code, _, err = run("mdad", stripped)
    assert code == 1 and "repeats 30 (run, selector, size, model) key(s), e.g. run 0" in err, err
    code, _, err = run("plan", "--data", bundle, "--gap", "10", "--bin-width", "5", "--results", both)
    assert code == 1 and "mixes 2 experiments" in err


def test_combine_numbers_runs_apart_and_keeps_both_provenances(bundle, tmp_path):
    a, b, ab = tmp_path / "a.parquet", tmp_path / "b.parquet", tmp_path / "ab.parquet"
    experiment(bundle, a, "--seed", "1"), experiment(bundle, b, "--seed", "2")
    code, _, err = run("combine", a, b, "--out", ab)
    assert code == 0, err
    table = pd.read_parquet(ab)
    assert sorted(table["run"].unique()) == [0, 1, 2, 3, 4, 5] and table["experiment"].nunique() == 1
    code, out, _ = run("mdad", ab, "--bootstrap", "50")
    assert code == 0 and out.splitlines()[1].endswith(",270")  # 6 runs x 45 pairs
    from mbutils.base.provenance import read_parquet

    seeds = sorted(r["protocol"]["seed"] for r in read_parquet(ab).attrs["provenance"]["experiments"].values())
    assert seeds == [1, 2]


def test_combine_refuses_an_experiment_pooled_with_itself(bundle, tmp_path):
    """A with A, with a copy or its CSV, and (A+B)+A would count A's pairs twice: each is refused."""
    a, b, ab = tmp_path / "a.parquet", tmp_path / "b.parquet", tmp_path / "ab.parquet"
    experiment(bundle, a, "--seed", "1"), experiment(bundle, b, "--seed", "2")
    copy, as_csv = tmp_path / "copy.parquet", tmp_path / "a.csv"
    shutil.copy(a, copy)
    pd.read_parquet(a).to_csv(as_csv, index=False)
    assert run("combine", a, b, "--out", ab)[0] == 0
    for inputs in ((a, a), (a, copy), (a, as_csv), (ab, a), (as_csv, ab)):
        code, _, err = run("combine", *inputs, "--out", tmp_path / "x.parquet")
        assert code == 1 and ("hold the same draw" in err or "same file twice" in err), (inputs, err)
        assert not (tmp_path / "x.parquet").exists()


def test_results_carry_provenance_in_the_parquet_metadata(bundle, tmp_path):
    from mbutils.base.provenance import read_parquet

    out = tmp_path / "r.parquet"
    assert experiment(bundle, out)[0] == 0
    (record,) = read_parquet(out).attrs["provenance"]["experiments"].values()
    assert record["protocol"]["n_targets"] == 10 and record["sizes"] == [5]
    assert set(record) >= {"bundle_hash", "selectors", "mbutils_version", "code"}
    assert "random" in record["selectors"]


def test_plan_refuses_another_bundles_results(bundle, tmp_path):
    out = tmp_path / "r.parquet"
    other = save_bundle(random_benchmark(n_models=40, seed=3), tmp_path / "other")
    assert experiment(bundle, out)[0] == 0
    code, _, err = run("plan", "--data", other, "--gap", "10", "--bin-width", "5", "--results", out)
    assert code == 1 and "these results come from bundle 'tiny'" in err, err


# -- 3, 4. workers and the cache ------------------------------------------------------------------

def test_workers_are_capped_at_tasks_and_cores():
    assert worker_count(1000, 3) == min(3, os.cpu_count() or 1)
    assert worker_count(-1, 1000) == (os.cpu_count() or 1) and worker_count(1, 5) == 1


def test_an_edited_cache_entry_is_recomputed(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MBUTILS_CACHE", str(tmp_path))
    bench = random_benchmark(seed=31)
    first = run_experiment(bench, ["random"], [5], PROTO, progress=False)
    (entry,) = (tmp_path / "results").glob("*.parquet")
    edited = pd.read_parquet(entry).assign(estimate=0.5)
    edited.to_parquet(entry)  # valid Parquet, other numbers
    again = run_experiment(bench, ["random"], [5], PROTO, progress=False)
    pd.testing.assert_frame_equal(first, again)
    assert "carries no checksum" in capsys.readouterr().err
    assert cache.read_table(entry) is not None  # rewritten with its checksum


def test_an_unwritable_cache_is_reported_once_and_the_run_goes_on(tmp_path, monkeypatch, bundle):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    monkeypatch.setenv("MBUTILS_CACHE", str(blocker))
    monkeypatch.setattr(cache, "_reported", set())
    out = tmp_path / "r.parquet"
    code, _, err = run("experiment", "--data", bundle, "--selectors", "random,subtask_equal", "--sizes", "5",
                       "--runs", "3", "--sources", "20", "--targets", "10", "--quiet", "--out", out)
    assert code == 0 and out.exists(), err
    assert err.count("the cache cannot be written") == 1 and "Traceback" not in err
    assert blocker.read_text() == "x"


def test_a_cache_entry_that_is_a_folder_is_ignored(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MBUTILS_CACHE", str(tmp_path))
    monkeypatch.setattr(cache, "_reported", set())
    bench = random_benchmark(seed=37)
    from mbutils.methods.experiment import cache_path

    path = cache_path(bench, PROTO, [5], "random")
    path.mkdir(parents=True)
    table = run_experiment(bench, ["random"], [5], PROTO, progress=False)
    assert len(table) == 30 and path.is_dir()
    assert "is not a file" in capsys.readouterr().err


# -- 5. messages, not tracebacks -----------------------------------------------------------------

@pytest.mark.parametrize("args, message", [
    (["--bin-width", "inf"], "bin width (points) must be a finite number, not inf"),
    (["--bin-width", "0.0001"], "bin width (points) must be at least 0.01, not 0.0001"),
    (["--bootstrap", "0"], "bootstrap resamples must be at least 1, not 0"),
    (["--seed", "-1"], "seed must be at least 0, not -1"),
    (["--threshold", "nan"], "threshold must be a finite number, not nan"),
])
def test_mdad_options_are_usage_errors(args, message, tmp_path):
    code, out, err = run("mdad", tmp_path / "absent.parquet", *args)
    assert code == 2 and message in err and "Traceback" not in err and out == ""


def test_empty_selectors_and_plan_bin_width(bundle, tmp_path):
    code, _, err = experiment(bundle, tmp_path / "x.parquet", "--selectors", "")
    assert code == 2 and "selectors must name at least one, not an empty list" in err
    code, _, err = run("plan", "--data", bundle, "--gap", "2", "--bin-width", "0")
    assert code == 2 and "bin width (points) must be at least 0.01, not 0" in err
    assert list(tmp_path.iterdir()) == []


def test_one_target_per_run_and_foreign_tables(tmp_path, bundle):
    from helpers import results_table

    one = results_table([0.5], [3], 10)
    with pytest.raises(ResultsError, match="each run has 1 target model; at least 2"):
        mdad_table(one)
    path = tmp_path / "foreign.parquet"
    pd.DataFrame({"a": [1, 2]}).to_parquet(path)
    code, _, err = run("plan", "--data", bundle, "--gap", "10", "--results", path)
    assert code == 1 and "results table lacks columns" in err


def test_unreadable_results_file_and_folder(tmp_path):
    folder = tmp_path / "dir.parquet"
    folder.mkdir()
    code, _, err = run("summary", folder)
    assert code == 1 and "is a folder" in err
    if os.geteuid() != 0:  # root reads anything
        locked = tmp_path / "locked.parquet"
        locked.write_bytes(b"x")
        locked.chmod(0)
        code, _, err = run("summary", locked)
        assert code == 1 and "permission denied" in err


def test_an_unexpected_error_is_one_line_and_a_traceback_only_with_debug(monkeypatch, tmp_path):
    import mbutils.cli.experiments as summary_command

    def bug(args):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(summary_command, "cmd_summary", bug)
    code, _, err = run("summary", tmp_path / "x.parquet")
    assert code == 70 and err.count("\n") == 1 and "internal error (ZeroDivisionError: boom)" in err
    assert "report it" in err and "--debug" in err and "Traceback" not in err
    code, _, err = run("--debug", "summary", tmp_path / "x.parquet")
    assert code == 70 and "Traceback" in err and "ZeroDivisionError" in err


# -- 6. no silent data changes -------------------------------------------------------------------

def test_repeated_target_set_keys_are_a_problem(tmp_path):
    folder = tmp_path / "dup"
    shutil.copytree(VALID, folder)
    (folder / "target_sets.json").write_text('{"pair": ["m1", "m2"], "pair": ["m3", "m4"]}')
    code, out, _ = run("validate", folder)
    assert code == 1 and "target_sets.json, set 'pair': is defined more than once" in out


def _lm_eval_log(folder: Path, model: str, doc_ids) -> None:
    folder.mkdir(parents=True)
    stamp = "2024-01-01T00-00-00.000000"
    (folder / f"results_{stamp}.json").write_text(json.dumps({"model_name": model}))
    lines = [json.dumps({"doc_id": d, "target": "0", "acc": 1.0 if i % 2 else 0.0, "filter": "none"})
             for i, d in enumerate(doc_ids)]
    (folder / f"samples_task_{stamp}.jsonl").write_text("\n".join(lines) + "\n")


def test_lm_eval_fractional_doc_id_and_namesake_folders_are_refused(tmp_path):
    _lm_eval_log(tmp_path / "a", "org/m", [0, 1, 2.7])
    code, _, err = run("import", "lm-eval", tmp_path / "a", "--out", tmp_path / "x", "--quiet")
    assert code == 1 and "line 3: doc_id '2.7' is not a document index" in err, err
    _lm_eval_log(tmp_path / "b" / "one", "org/m", [0, 1, 2])
    _lm_eval_log(tmp_path / "b" / "two", "org/m", [0, 1, 2])
    code, _, err = run("import", "lm-eval", tmp_path / "b", "--out", tmp_path / "y", "--quiet")
    assert code == 1 and "two folders log the same model name 'org/m'" in err, err
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


def test_lm_eval_non_utf8_byte_is_reported_by_line(tmp_path):
    _lm_eval_log(tmp_path / "a", "org/m", [0, 1, 2])
    (log,) = (tmp_path / "a").glob("samples_*.jsonl")
    log.write_bytes(log.read_bytes().replace(b'"target": "0"', b'"target": "\xe9"', 2))
    code, _, err = run("import", "lm-eval", tmp_path / "a", "--out", tmp_path / "x", "--quiet")
    assert code == 1 and "line 1: not UTF-8 text (byte 0xe9" in err, err


def test_confidence_fallback_and_replaced_output_are_said(bundle, tmp_path):
    out = tmp_path / "r.parquet"
    code, _, err = experiment(bundle, out, "--selectors", "anchor_points")
    assert code == 0 and "has no confidence.csv, so anchor_points read 0/1 correctness" in err
    code, _, err = experiment(bundle, out)
    assert code == 1 and f"{out} exists; pass --force to replace it" in err
    code, _, err = experiment(bundle, out, "--force")
    assert code == 0 and f"note: replaced the existing {out}" in err


# -- 7. messages that help -----------------------------------------------------------------------

def test_folder_fifo_and_link_loop_are_named(tmp_path):
    for kind in ("folder", "fifo", "loop"):
        folder = tmp_path / kind
        shutil.copytree(VALID, folder)
        target = folder / "items.csv"
        target.unlink()
        if kind == "folder":
            target.mkdir()
        elif kind == "fifo":
            os.mkfifo(target)
        else:
            target.symlink_to(folder / "items.csv")
        code, out, _ = run("validate", folder)
        expect = {"folder": "is a folder, not a file", "fifo": "is a FIFO (named pipe), not a file",
                  "loop": "is a symbolic link that leads nowhere"}[kind]
        assert code == 1 and f"items.csv: {expect}" in out, out


def test_nfc_and_nfd_spellings_name_one_bundle(tmp_path):
    import unicodedata

    nfc = unicodedata.normalize("NFC", "café")
    shutil.copytree(VALID, tmp_path / nfc)
    code, out, _ = run("validate", tmp_path / unicodedata.normalize("NFD", "café"))
    assert code == 0 and "valid bundle" in out


def test_a_semicolon_separated_file_gets_a_hint(tmp_path):
    folder = tmp_path / "semi"
    shutil.copytree(VALID, folder)
    text = (folder / "responses.csv").read_text().replace(",", ";")
    (folder / "responses.csv").write_text(text)
    code, out, _ = run("validate", folder)
    assert code == 1 and "separated by semicolons, not commas" in out


def test_csv_output_quotes_names_with_quotes_and_commas(tmp_path):
    from mbutils.base.tables import render

    text = render(pd.DataFrame({"selector": ['my "best", selector'], "size": [5]}))
    assert text.splitlines()[1] == '"my ""best"", selector",5'


# -- 8. the command line itself ------------------------------------------------------------------

def _subparsers(parser):
    return next(a for a in parser._actions if isinstance(a, __import__("argparse")._SubParsersAction)).choices


def test_help_lists_every_subcommand_and_every_option_has_help_and_default():
    parser = build_parser("mbutils")
    subs = _subparsers(parser)
    top = parser.format_help()
    assert len(subs) == 18 and all(name in top for name in subs)
    for name, sub in subs.items():
        formatter = sub._get_formatter()
        for action in sub._actions:
            if action.dest == "help":
                continue
            assert action.help, (name, action.dest)
            # every default is stated once: by the formatter, or in the help's own words; a required
            # option or one without a value (None) has none to state
            if action.option_strings and action.default not in ("==SUPPRESS==", None) and not action.required:
                text = formatter._get_help_string(action)
                assert "default" in text or str(action.default) in text or "%(default)" in text, (name, action.dest)


def test_version_and_program_names(tmp_path):
    code, out, _ = run("--version")
    assert code == 0 and out.strip().startswith("mbutils ")
    proc = subprocess.run([sys.executable, "-m", "mbutils", "mdad"], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 2 and proc.stderr.startswith("usage: python -m mbutils mdad")
    script = Path(sys.executable).parent / "mbutils"
    if script.exists():
        proc = subprocess.run([str(script), "mdad"], capture_output=True, text=True, cwd=REPO)
        assert proc.returncode == 2 and proc.stderr.startswith("usage: mbutils mdad")


def test_validate_says_when_a_valid_bundle_needs_missing(tmp_path):
    code, out, _ = run("validate", TESTS / "bad_bundles" / "missing-cells")
    assert code == 0 and "incomplete: experiment, plan and audit refuse it unless given --missing" in out


def test_run_chapter_uses_an_ipc_kernel_with_private_sockets(tmp_path):
    from mbutils.publish.chapters import kernel_manager_class

    manager = kernel_manager_class(str(tmp_path))
    if manager is not None:  # None on Windows, which has no Unix sockets
        km = manager()
        assert km.transport == "ipc" and km.ip == str(tmp_path / "kernel")  # never a shared path in chapters/


def test_a_chapter_planted_in_the_current_folder_does_not_replace_the_books(tmp_path, monkeypatch):
    from mbutils.publish.chapters import SOURCE_CHAPTERS, chapter_path

    monkeypatch.delenv("MBUTILS_CHAPTERS", raising=False)
    planted = tmp_path / "chapters" / "bench_gpqa.md"
    planted.parent.mkdir()
    planted.write_text("---\nkernelspec:\n  name: python3\n---\n\n```{code-cell}\nraise SystemExit('planted')\n```\n")
    monkeypatch.chdir(tmp_path)
    assert chapter_path("bench_gpqa") == SOURCE_CHAPTERS / "bench_gpqa.md"
    assert chapter_path(str(planted)) == planted.resolve()  # by path, on purpose: it runs
    (tmp_path / "chapters" / "mine.md").write_text(planted.read_text())
    assert chapter_path("mine") == (tmp_path / "chapters" / "mine.md").resolve()  # a name the book lacks


def test_an_output_never_replaces_the_commands_own_input(tmp_path):
    bundle = save_bundle(random_benchmark(n_models=20), tmp_path / "b")
    responses = (bundle / "responses.csv").read_bytes()
    code, _, err = run("experiment", "--data", bundle, "--selectors", "random", "--sizes", "5", "--runs", "1",
                       "--sources", "10", "--targets", "5", "--out", bundle / "responses.csv", "--quiet")
    assert code != 0 and "inside the input folder" in err and (bundle / "responses.csv").read_bytes() == responses
    code, _, err = run("experiment", "--data", bundle, "--selectors", "random", "--sizes", "5", "--runs", "1",
                       "--sources", "10", "--targets", "5", "--out", tmp_path / "r.parquet", "--quiet")
    assert code == 0, err
    before = (tmp_path / "r.parquet").read_bytes()
    code, _, err = run("combine", tmp_path / "r.parquet", "--out", tmp_path / "r.parquet")
    assert code != 0 and "also this command's input" in err and (tmp_path / "r.parquet").read_bytes() == before
    items = tmp_path / "items.txt"
    items.write_text("q0000\nq0001\nq0002\n")
    code, _, err = run("audit", "--data", bundle, "--items", items, "--out", items.with_suffix(".csv"), "--random", "5")
    assert code == 0, err
    items_csv = tmp_path / "items.csv"
    code, _, err = run("audit", "--data", bundle, "--items", items_csv, "--out", items_csv, "--random", "5")
    assert code != 0 and "also this command's input" in err


def test_names_from_the_data_never_run_in_a_page_or_break_a_figure(tmp_path):
    """A model named like markup shows as text in a note; a '$' in a subtask name draws as written."""
    from unittest import mock

    from mbutils.book import display, plots

    shown = []
    with mock.patch.object(display, "display", lambda obj: shown.append(obj.data)):
        display.note("Answer", "model <img src=x onerror=alert(1)> wins")
        display.note("Markup", "<code>ok</code>", markup=True)
    assert "<img" not in shown[0] and "&lt;img src=x onerror=alert(1)&gt;" in shown[0]
    assert "<code>ok</code>" in shown[1]
    fig = plots.subtask_bars(["cost_$5", "bad$\\qq$name", "a$_$"], [3, 4, 5], [0.2, 0.5, 0.7])  # invalid as mathtext
    html = display.render_figure(fig, "Subtasks with dollars.", label=None)
    assert html.startswith('<figure class="mbutils-figure"')


@pytest.mark.parametrize("column,value,message", [
    ("estimate", float("nan"), "column 'estimate', row 2 holds nan, not a finite number"),
    ("estimate", float("inf"), "not a finite number"),

    ("seen_correct", 999, "'seen_correct' is not between 0 and 'n_seen'"),
    ("seen_correct", -1, "'seen_correct' is not between 0 and 'n_seen'"),
    ("n_seen", 0, "'n_seen' is below 1"),
    ("size", "5x", "column 'size', row 2 holds '5x', not a finite number"),
    ("selector", None, "row 2 has no selector"),
])
def test_impossible_values_in_a_results_table_are_refused_by_row(bundle, tmp_path, column, value, message):
    out = tmp_path / "r.parquet"
    assert experiment(bundle, out)[0] == 0
    table = pd.read_parquet(out)
    table[column] = table[column].astype(object)
    table.loc[table.index[0], column] = value
    broken = tmp_path / "broken.csv"
    table.to_csv(broken, index=False)
    for command in (("mdad", broken), ("summary", broken)):
        code, out_text, err = run(*command)
        assert code == 1 and out_text == "" and message in err and "Traceback" not in err, err


def test_a_results_table_in_percentages_is_refused_but_a_small_extrapolation_is_not(bundle, tmp_path):
    out = tmp_path / "r.parquet"
    assert experiment(bundle, out)[0] == 0
    table = pd.read_parquet(out)
    as_points = tmp_path / "points.csv"
    table.assign(estimate=100 * table["estimate"]).to_csv(as_points, index=False)
    code, _, err = run("mdad", as_points)
    assert code == 1 and "column 'estimate' looks like percentages" in err, err
    nudged = tmp_path / "nudged.csv"
    table.assign(estimate=table["estimate"].where(table.index != 0, 1.13)).to_csv(nudged, index=False)
    assert run("mdad", nudged)[0] == 0  # an estimator may extrapolate past 1


def test_results_from_a_newer_mbutils_are_refused(bundle, tmp_path):
    import json

    import pyarrow.parquet as pq

    from mbutils.base.provenance import METADATA_KEY

    out = tmp_path / "r.parquet"
    assert experiment(bundle, out)[0] == 0
    arrow = pq.read_table(out)
    prov = json.loads(arrow.schema.metadata[METADATA_KEY])
    for record in prov["experiments"].values():
        record["mbutils_version"] = "99.0.0"
    pq.write_table(arrow.replace_schema_metadata({**arrow.schema.metadata, METADATA_KEY: json.dumps(prov).encode()}),
                   tmp_path / "future.parquet")
    code, _, err = run("mdad", tmp_path / "future.parquet")
    assert code == 1 and "written by mbutils 99.0.0, newer than this" in err, err


def test_combine_on_an_empty_or_malformed_table_and_an_unknown_home_are_refusals(bundle, tmp_path):
    import json

    import pyarrow.parquet as pq

    from mbutils.base.provenance import METADATA_KEY

    a = tmp_path / "a.parquet"
    experiment(bundle, a, "--seed", "1")
    empty = tmp_path / "empty.csv"
    pd.read_parquet(a).iloc[:0].to_csv(empty, index=False)
    code, _, err = run("combine", a, empty, "--out", tmp_path / "x.parquet")
    assert code == 1 and "empty.csv: results table is empty" in err, err
    arrow = pq.read_table(a)
    bad = tmp_path / "bad.parquet"
    pq.write_table(arrow.replace_schema_metadata({METADATA_KEY: json.dumps({"experiments": ["x"]}).encode()}), bad)
    code, _, err = run("combine", bad, a, "--out", tmp_path / "y.parquet")
    assert code == 1 and "provenance metadata is malformed" in err, err
    code, _, err = run("validate", "~no-such-user-here/bundle")
    assert code == 1 and "a user name this machine does not know" in err, err


def test_work_folders_of_killed_writers_are_cleared_and_live_ones_kept(tmp_path):
    """A writer killed mid-way leaves '.NAME.new-PID-HEX/'; the next write of NAME removes it, unless PID lives."""
    from mbutils.base.folders import fresh_sibling

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    target = tmp_path / "b"
    stale = tmp_path / f".b.new-{dead_pid}-abcd1234"
    live = tmp_path / f".b.new-{os.getpid()}-0000ffff"
    other = tmp_path / ".c.new-1-abcd"
    for folder in (stale, live, other):
        folder.mkdir()
    fresh = fresh_sibling(target, "new")
    assert not stale.exists() and live.exists() and other.exists() and fresh.name.startswith(f".b.new-{os.getpid()}-")


def test_plan_refuses_a_csv_of_another_bundle_with_the_same_model_names(bundle, tmp_path):
    """CSV has no provenance; the counts give another bundle away (same names, other answers)."""
    out = tmp_path / "r.parquet"
    assert experiment(bundle, out)[0] == 0
    twin = save_bundle(random_benchmark(n_models=40, seed=9), tmp_path / "twin")  # same names, other answers
    as_csv = tmp_path / "r.csv"
    pd.read_parquet(out).to_csv(as_csv, index=False)
    code, _, err = run("plan", "--data", twin, "--gap", "10", "--bin-width", "5", "--results", as_csv)
    assert code == 1 and "which is not its result on bundle" in err, err
    code, _, err = run("plan", "--data", bundle, "--gap", "10", "--bin-width", "5", "--results", as_csv)
    assert code == 0, err

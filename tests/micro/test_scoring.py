"""score (mbutils.micro.scoring) on the command line: every bad input's one message; the intervals it
prints are checked in test_intervals.py."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from conftest import TESTS
from helpers import run_cli

FIXTURES = TESTS / "fixtures"
LM_EVAL = FIXTURES / "lm_eval"
STAMP = "2024-06-26T15-48-21.123456"


run = run_cli


def _refused(err: str, *needles: str) -> None:
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err


# -- bad input ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("score")
    code, _, err = run("import", "lm-eval", LM_EVAL, "--out", root / "bundle", "--quiet")
    assert code == 0, err
    code, _, err = run("build-micro", "--data", root / "bundle", "--selector", "random", "--k", 5, "--seed", 2,
                       "--out", root / "micro", "--quiet")
    assert code == 0, err
    return root


def test_a_responses_csv_of_several_models(built, tmp_path):
    bundle = pd.read_csv(built / "bundle" / "responses.csv")
    bundle.to_csv(tmp_path / "responses.csv", index=False)
    code, out, err = run("score", built / "micro", tmp_path / "responses.csv", "--format", "json", "--level", 0.8)
    assert code == 0, err
    scored = json.loads(out)
    assert list(scored) == bundle["model"].tolist()
    items = pd.read_csv(built / "micro" / "items.csv")["item"].tolist()
    for row in bundle.itertuples(index=False):
        expected = 100 * bundle.loc[bundle["model"] == row.model, items].to_numpy().mean()
        assert scored[row.model]["estimate"] == pytest.approx(expected)
        assert scored[row.model]["level"] == 0.8
    code, text, err = run("score", built / "micro", tmp_path / "responses.csv")
    assert code == 0 and "exact finite-population (hypergeometric) interval" in text


def test_a_log_of_another_task(built, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    source = LM_EVAL / "tiny-3" / f"samples_piqa_{STAMP}.jsonl"
    (other / f"samples_hellaswag_{STAMP}.jsonl").write_text(source.read_text())
    code, _, err = run("score", built / "micro", other)
    assert code == 1
    _refused(err, "none of these logs is of a task this micro-benchmark", "hellaswag", "another task or bundle")


def test_items_missing_from_the_log(built):
    chosen = pd.read_csv(built / "micro" / "items.csv")["item"].tolist()
    only = "piqa" if any(c.startswith("arc_easy") for c in chosen) else "arc_easy"
    code, _, err = run("score", built / "micro", LM_EVAL / "tiny-3" / f"samples_{only}_{STAMP}.jsonl")
    assert code == 1
    _refused(err, "has no log of task", "arc_easy" if only == "piqa" else "piqa", "lm-eval tasks")


def test_a_folder_built_from_another_bundle(built, tmp_path):
    """Results of another bundle (a synthetic stand-in) against this folder: refused, naming the bundle."""
    from mbutils import load_benchmark

    bench = load_benchmark("synthetic-gpqa")
    pd.DataFrame(bench.correct[:2], columns=bench.items).assign(model=bench.models[:2]).to_csv(
        tmp_path / "responses.csv", index=False)
    code, _, err = run("score", built / "micro", tmp_path / "responses.csv")
    assert code == 1
    _refused(err, "micro-benchmark of 'bundle'", "another task or bundle")


def test_a_corrupt_folder(built, tmp_path):
    import shutil

    copy = tmp_path / "micro"
    shutil.copytree(built / "micro", copy)
    items = copy / "items.csv"
    items.write_text(items.read_text().replace("0.2", "0.3", 1))
    code, _, err = run("score", copy, LM_EVAL / "tiny-3")
    assert code == 1
    _refused(err, "items.csv", "changed since it was written", "build it again")
    (copy / "manifest.json").unlink()
    code, _, err = run("score", copy, LM_EVAL / "tiny-3")
    _refused(err, "manifest.json", "missing")
    code, _, err = run("score", tmp_path / "nothing", LM_EVAL / "tiny-3")
    assert code == 1
    _refused(err, "no such micro-benchmark folder")


def test_bad_responses_files(built, tmp_path):
    bundle = pd.read_csv(built / "bundle" / "responses.csv")
    chosen = pd.read_csv(built / "micro" / "items.csv")["item"].tolist()
    bundle.drop(columns=["model"]).to_csv(tmp_path / "nomodel.csv", index=False)
    code, _, err = run("score", built / "micro", tmp_path / "nomodel.csv")
    _refused(err, "needs a 'model' column")
    bad = bundle.copy()
    bad[chosen[0]] = bad[chosen[0]].astype(object)
    bad.loc[0, chosen[0]] = "maybe"
    bad.to_csv(tmp_path / "bad.csv", index=False)
    code, _, err = run("score", built / "micro", tmp_path / "bad.csv")
    assert code == 1
    _refused(err, "row 2", "must be 0 or 1")
    bundle.drop(columns=[chosen[1]]).to_csv(tmp_path / "short.csv", index=False)
    code, _, err = run("score", built / "micro", tmp_path / "short.csv")
    _refused(err, "1 of the micro-benchmark's 5 items are missing", chosen[1])
    code, _, err = run("score", built / "micro", tmp_path / "short.csv", LM_EVAL)
    _refused(err, "not both")
    code, _, err = run("score", built / "micro", tmp_path / "absent.csv")
    _refused(err, "no such file")


def test_confidence_needed_but_absent(built, tmp_path):
    code, _, err = run("build-micro", "--data", built / "bundle", "--selector", "anchor_points", "--k", 3,
                       "--out", tmp_path / "anchor", "--quiet")
    assert code == 0, err
    pd.read_csv(built / "bundle" / "responses.csv").to_csv(tmp_path / "responses.csv", index=False)
    code, _, err = run("score", tmp_path / "anchor", tmp_path / "responses.csv")
    assert code == 1
    _refused(err, "confidence", "anchor_points_binary")


def test_level_is_checked_at_the_command_line(built):
    code, _, err = run_usage("score", built / "micro", LM_EVAL, "--level", 1.5)
    assert code == 2


def run_usage(*args):
    try:
        return run(*args)
    except SystemExit as exit_:
        return exit_.code, "", ""


def test_verdicts_need_the_interval_and_the_chance_of_being_wrong(tmp_path):
    """A verdict is made only where the 95% interval excludes the pool model's accuracy and the posterior chance
    of being wrong is at most 5%; the card's MDAD plays no part; the text says the level."""
    import numpy as np

    from helpers import random_benchmark
    from mbutils import build_micro, score
    from mbutils.micro.folder import read_micro
    from mbutils.micro.heldout import posterior_for, raw_evidence
    from mbutils.micro.scoring import card_mdad, format_scores

    bench = random_benchmark(n_models=40, subtask_sizes=(200,), seed=3, name="verdicts")
    new = [str(m) for m in bench.models[:3]]
    folder = build_micro(bench, "random", 60, exclude=new, runs=3, out=tmp_path / "micro").path
    micro = read_micro(folder)
    pd.DataFrame(bench.correct[:3], columns=bench.items).assign(model=new).to_csv(tmp_path / "new.csv", index=False)
    table = score(folder, [tmp_path / "new.csv"])
    pool = micro.pool["accuracy"].to_numpy()
    names = micro.pool["model"].astype(str).to_numpy()
    evidence = raw_evidence("hypergeometric", micro.micro, bench.correct[:3], None)
    post = posterior_for("hypergeometric", micro.micro, evidence, pool, n_items=bench.n_items)
    for i, row in enumerate(table.itertuples()):
        low, high = row.verdict_low / 100, row.verdict_high / 100
        better = names[(low > pool) & (post.at_most(pool)[i] <= 0.05)]
        worse = names[(high < pool) & (post.at_least(pool)[i] <= 0.05)]
        assert sorted(row.above) == sorted(better) and sorted(row.below) == sorted(worse)
        assert len(row.above) + len(row.below) + len(row.indistinguishable) == len(names)
    assert sum(len(a) + len(b) for a, b in zip(table["above"], table["below"])) > 0  # it can say something
    assert "Verdicts at 95%" in format_scores(table, micro)
    assert card_mdad({"mdad": 2.5, "ci_high": 4.0}) == 2.5 and np.isnan(card_mdad({"mdad": 2.5, "ci_high": None}))
    assert np.isnan(card_mdad({"mdad": None, "ci_high": 4.0}))

"""A micro-benchmark folder of the difference (AIPW-style) estimator: the pool's answers it reads, its normal
interval in ``score``, ``plan`` and the card, its coverage on held-out models, and an edited folder refused."""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from helpers import run_command as run
from mbutils import build_micro, load_benchmark
from mbutils.base.errors import SelectorError
from mbutils.methods.estimators import default_neighbours, normal_interval as two_sided
from mbutils.methods.selectors.random_sampling import DifferenceMicroBenchmark
from mbutils.micro.intervals import normal_interval
from mbutils.micro.difference import ANSWERS, DESCRIPTION, NEIGHBOUR_RULE, names_digest
from mbutils.micro.folder import MicroFolderError, read_micro
from mbutils.micro.planning_new_pair import format_new_pair, new_pair_power
from mbutils.micro.scoring import format_scores, score

K, HELD = 40, 30


def reseal(folder: Path) -> None:
    """manifest.json rewritten for the files as they are now: an edit the hashes no longer catch."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name != "manifest.json")
    (folder / "manifest.json").write_text(json.dumps(
        {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}))


@pytest.fixture(scope="module")
def setting(tmp_path_factory):
    """synthetic-gpqa, its first HELD models held out; a difference micro-benchmark of K items written as a
    folder; the held-out models' answers as a responses.csv."""
    bench = load_benchmark("synthetic-gpqa")
    root = tmp_path_factory.mktemp("difference")
    held = [str(m) for m in bench.models[:HELD]]
    built = build_micro(bench, "random_difference", K, exclude=held, runs=2, seed=3, out=root / "micro")
    responses = root / "held.csv"
    pd.DataFrame(bench.correct[:HELD], columns=bench.items).assign(model=held).to_csv(responses, index=False)
    return bench, built, responses


def test_the_folder_holds_the_pools_answers_and_the_estimators_state(setting):
    bench, built, _ = setting
    folder = built.path
    answers = pd.read_csv(folder / ANSWERS)
    assert list(answers.columns) == ["model", *bench.items]  # the bundle's responses.csv format
    assert answers["model"].tolist() == built.pool["model"].tolist() == list(bench.models[HELD:])
    np.testing.assert_array_equal(answers.drop(columns="model").to_numpy(), bench.correct[HELD:])
    state = json.loads((folder / "micro.json").read_text())["estimator"]
    micro = built.micro
    assert isinstance(micro, DifferenceMicroBenchmark) and built.interval == "normal"
    assert state["kind"] == "difference" and state["reads"] == "correct" and state["answers"] == ANSWERS
    assert state["folds"] == [micro.folds[0].tolist(), micro.folds[1].tolist()]
    assert sorted(state["folds"][0] + state["folds"][1]) == list(range(K))
    assert state["neighbours"] == {"rule": NEIGHBOUR_RULE, "count": default_neighbours(bench.n_models - HELD)}
    assert state["items_sha256"] == names_digest(bench.items)
    assert json.loads((folder / "micro.json").read_text())["interval"] == "normal"
    manifest = json.loads((folder / "manifest.json").read_text())  # sealed like every other file
    assert manifest[ANSWERS] == hashlib.sha256((folder / ANSWERS).read_bytes()).hexdigest()
    chosen = pd.read_csv(folder / "items.csv")["item"].tolist()
    assert chosen == list(bench.items[micro.items])


def test_the_folders_score_is_the_estimators_estimate_and_variance(setting):
    """Round trip build -> write -> read -> score: the folder scores exactly as the micro-benchmark object."""
    bench, built, responses = setting
    folder = read_micro(built.path)
    assert isinstance(folder.micro, DifferenceMicroBenchmark) and folder.item_names == list(bench.items)
    np.testing.assert_array_equal(folder.micro.source_correct, built.micro.source_correct)
    table = score(folder, [responses], level=0.8)
    estimate, low, high = built.micro.interval(bench.correct[:HELD].astype(float), 0.8)
    np.testing.assert_allclose(table["estimate"], 100 * estimate, rtol=0, atol=1e-10)
    np.testing.assert_allclose(table["low"], 100 * low, rtol=0, atol=1e-10)
    np.testing.assert_allclose(table["high"], 100 * high, rtol=0, atol=1e-10)
    assert set(table["interval"]) == {"normal"} and set(table["level"]) == {0.8}
    assert DESCRIPTION in format_scores(table, folder)
    scored = json.loads(format_scores(table, folder, "json"))
    assert {row["interval_kind"] for row in scored.values()} == {"normal"}
    assert {row["interval_method"] for row in scored.values()} == {DESCRIPTION}


def _answers(folder: Path) -> pd.DataFrame:
    return pd.read_csv(folder / ANSWERS, dtype={"model": str})


def _set_answer(value):
    def edit(folder: Path) -> str:
        table = _answers(folder)
        column = table.columns[5]
        table[column] = table[column].astype(object)
        table.loc[3, column] = value
        table.to_csv(folder / ANSWERS, index=False)
        return ANSWERS
    return edit


def _flip(folder: Path) -> str:
    """One answer flipped: still 0/1, but the row's mean is no longer the model's accuracy in pool.csv."""
    table = _answers(folder)
    column = table.columns[7]
    table[column] = 1 - table[column]
    table.to_csv(folder / ANSWERS, index=False)
    return ANSWERS


def _rename_model(folder: Path) -> str:
    table = _answers(folder)
    table.loc[2, "model"] = "someone-else"
    table.to_csv(folder / ANSWERS, index=False)
    return ANSWERS


def _swap_models(folder: Path) -> str:
    table = _answers(folder)
    table.iloc[[0, 1]] = table.iloc[[1, 0]].to_numpy()
    table.to_csv(folder / ANSWERS, index=False)
    return ANSWERS


def _rename_item(folder: Path) -> str:
    table = _answers(folder)
    table.rename(columns={table.columns[-1]: "not_an_item"}).to_csv(folder / ANSWERS, index=False)
    return ANSWERS


def _drop_item(folder: Path) -> str:
    table = _answers(folder)
    table.drop(columns=table.columns[-1]).to_csv(folder / ANSWERS, index=False)
    return ANSWERS


def _state(change):
    def edit(folder: Path) -> str:
        meta = json.loads((folder / "micro.json").read_text())
        change(meta["estimator"])
        (folder / "micro.json").write_text(json.dumps(meta))
        return "micro.json"
    return edit


def _remove_answers(folder: Path) -> str:
    (folder / ANSWERS).unlink()
    return ANSWERS


EDITS = {
    "answer-2": _set_answer(2),
    "answer-empty": _set_answer(""),
    "answer-flipped": _flip,
    "model-renamed": _rename_model,
    "models-swapped": _swap_models,
    "item-renamed": _rename_item,
    "item-dropped": _drop_item,
    "answers-removed": _remove_answers,
    "folds-overlap": _state(lambda s: s["folds"][0].append(s["folds"][1][0])),
    "fold-of-one": _state(lambda s: s.update(folds=[s["folds"][0][:1], s["folds"][0][1:] + s["folds"][1]])),
    "fold-beyond-k": _state(lambda s: s["folds"][1].__setitem__(-1, K)),
    "folds-not-two": _state(lambda s: s.update(folds=[s["folds"][0] + s["folds"][1]])),
    "neighbours": _state(lambda s: s["neighbours"].update(count=3)),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_an_edited_and_resealed_difference_folder_is_refused_naming_the_file(setting, edit, tmp_path):
    """The manifest recomputed after the edit: the value checks of read_micro, not the hashes, refuse it,
    in one message that names the file (through the library and the command line)."""
    _, built, responses = setting
    copy = Path(shutil.copytree(built.path, tmp_path / "micro"))
    name = EDITS[edit](copy)
    reseal(copy)
    with pytest.raises(MicroFolderError, match=f"{name}: .*damaged or incomplete"):
        read_micro(copy)
    code, out, err = run("score", copy, responses)
    assert code == 1 and out == "" and "Traceback" not in err, err
    assert err.startswith("error: ") and err.count("\n") == 1 and name in err, err


def test_the_student_t_interval_covers_held_out_models_within_monte_carlo_bounds(setting, tmp_path):
    """Leave-one-out calibration (one fold per pool model, so each model is scored by its own independent draw
    of K items): the 90% Student-t interval's coverage lies within three binomial standard deviations of 0.9;
    the card's numbers are those of calibration.csv."""
    bench, _, _ = setting
    level = 0.9
    pool = bench.n_models - HELD
    built = build_micro(bench, "random_difference", K, exclude=list(bench.models[:HELD]), runs=2, seed=11,
                        folds=pool)
    calibration = built.calibration
    assert len(calibration) == pool and calibration["fold"].nunique() == pool
    box = np.stack(built.micro.bounds(calibration["estimate"], calibration["variance"], bench.n_items, level), axis=1)
    inside = (box[:, 0] <= calibration["truth"]) & (calibration["truth"] <= box[:, 1])
    coverage = built.card.coverage
    assert coverage["level"] == level and coverage["calibration"]["models"] == pool
    assert coverage["calibration"]["covered"] == int(inside.sum())
    assert coverage["calibration"]["width"] == pytest.approx(100 * (box[:, 1] - box[:, 0]).mean())
    assert coverage["width"] == pytest.approx(float(np.median(100 * (box[:, 1] - box[:, 0]))))
    bound = 3 * math.sqrt(level * (1 - level) / pool)  # 3 binomial sd of a share of `pool` independent models
    assert abs(inside.mean() - level) <= bound, (inside.mean(), bound)
    excluded = coverage["excluded"]  # one draw for all 30: correlated, so only checked against its own count
    _, low, high = built.micro.interval(bench.correct[:HELD].astype(float), level)
    held_box = np.stack([low, high], axis=1)
    truth = bench.accuracy[:HELD]
    assert excluded["covered"] == int(((held_box[:, 0] <= truth) & (truth <= held_box[:, 1])).sum())


def test_the_card_describes_the_normal_interval(setting):
    _, built, _ = setting
    text = (built.path / "card.md").read_text(encoding="utf-8")
    card = json.loads((built.path / "card.json").read_text())
    calibration, excluded = card["coverage"]["calibration"], card["coverage"]["excluded"]
    assert "normal interval from the cross-fitted residuals of the difference estimator" in text
    assert "exact for uniform random sampling" not in text and "cross-fitted difference estimator" in text
    assert f"covered {calibration['covered']} of them" in text and f"{calibration['models']} models" in text
    assert f"covered {excluded['covered']} of them" in text and excluded["models"] == HELD
    assert f"is {card['coverage']['width']:.1f} points wide" in text and "median over the held-out models" in text
    assert "`pool_answers.csv`" in text


def test_plan_for_two_new_models_uses_the_estimators_variance_of_their_difference(setting):
    bench, built, responses = setting
    folder = read_micro(built.path)
    a, b = (str(m) for m in bench.models[:2])
    power = new_pair_power(folder, a, b, [responses])
    rows = bench.correct[:2].astype(float)
    estimate, residuals = built.micro.residuals(rows)
    paired = residuals[0] - residuals[1]
    sigma = math.sqrt((1 - K / bench.n_items) * paired.var(ddof=1) / K)
    assert power.noise == pytest.approx(100 * sigma) and power.difference == pytest.approx(
        100 * (estimate[0] - estimate[1]))
    assert power.probability == pytest.approx(norm.cdf(abs(estimate[0] - estimate[1]) / sigma))
    text = format_new_pair(power)
    assert "difference estimator's variance for the pair" in text and "Assumed:" in text
    assert "paired cross-fitted residuals" in text.split("Assumed:")[1]


def test_fewer_than_four_items_are_refused_naming_the_minimum(tmp_path):
    from mbutils.methods.estimators import MIN_ITEMS

    bench = load_benchmark("synthetic-gpqa")
    with pytest.raises(SelectorError, match=str(MIN_ITEMS)):
        build_micro(bench, "random_difference", MIN_ITEMS - 1, runs=1, out=tmp_path / "micro")
    assert not (tmp_path / "micro").exists()


def test_the_command_line_builds_and_scores_a_difference_micro_benchmark(setting, tmp_path):
    _, _, responses = setting
    code, out, err = run("build-micro", "--data", "synthetic-gpqa", "--selector", "random_difference", "--k", 20,
                         "--runs", 2, "--out", tmp_path / "micro", "--quiet")
    assert code == 0, err
    assert "chosen by random_difference" in out and (tmp_path / "micro" / ANSWERS).is_file()
    code, text, err = run("score", tmp_path / "micro", responses)
    assert code == 0, err
    assert DESCRIPTION in text and "90% interval" in text
    code, text, err = run("score", tmp_path / "micro", responses, "--format", "json")
    assert code == 0 and {row["interval_kind"] for row in json.loads(text).values()} == {"normal"}


def test_the_command_line_refuses_random_regression_pointing_at_random_difference(tmp_path):
    code, out, err = run("build-micro", "--data", "synthetic-gpqa", "--selector", "random_regression", "--k", 20,
                         "--runs", 2, "--out", tmp_path / "micro", "--quiet")
    assert code == 1 and out == "" and "Traceback" not in err
    assert err.startswith("error: ") and err.count("\n") == 1 and "'random_difference'" in err, err
    assert not (tmp_path / "micro").exists()

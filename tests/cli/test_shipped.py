"""python -m mbutils micro list|show|export, score by a shipped name, and the same from an installed wheel."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from conftest import REPO
from helpers import run_cli as run, shipped_estimate
from mbutils.micro.shipped import record, shipped_names

STAMP = "2026-01-01T00-00-00"


def _full_log(folder: Path, correct_docs: set[int]) -> Path:
    """A made-up samples log of the whole leaderboard GPQA split: acc_norm 1 on ``correct_docs``."""
    folder.mkdir(parents=True)
    (folder / f"results_{STAMP}.json").write_text(json.dumps({"model_name": "org/new", "configs": {}}))
    lines = [json.dumps({"doc_id": d, "doc": {"question": f"q{d}"}, "target": "0", "filter": "none",
                         "acc_norm": float(d in correct_docs)}) + "\n" for d in range(448)]
    path = folder / f"samples_leaderboard_gpqa_main_{STAMP}.jsonl"
    path.write_text("".join(lines))
    return path


def _docs(name: str) -> list[int]:
    from mbutils.micro.shipped import SHIPPED

    return [int(i.rsplit("_", 1)[1]) for i in pd.read_csv(SHIPPED / name / "items.csv")["item"]]


def test_micro_list_names_every_shipped_one_with_its_selector_and_mdad():
    code, out, err = run("micro", "list")
    assert code == 0, err
    lines = out.strip().splitlines()
    assert [line.split(":")[0] for line in lines] == shipped_names()
    for line, name in zip(lines, shipped_names()):
        rec = record(name)
        assert f", {rec['selector']};" in line and f"{rec['k']} of {rec['n_items']} items of {rec['bundle']}" in line
    code, out, _ = run("micro", "list", "--format", "json")
    assert [row["name"] for row in json.loads(out)] == shipped_names()


def test_micro_show_prints_the_card_in_words():
    code, out, err = run("micro", "show", "gpqa-50")
    assert code == 0, err
    assert out.startswith("# Micro-benchmark of gpqa: 50 of 448 items")
    assert "How the selector was chosen" in out
    assert record("gpqa-50")["card"]["choice"]["reason"] in out.replace("\\", "")  # Markdown escapes removed


def test_export_then_score_and_score_by_name_agree_with_the_log(tmp_path):
    code, out, err = run("micro", "export", "gpqa-100", "--out", tmp_path / "m")
    assert code == 0 and "wrote" in out, err
    assert (tmp_path / "m" / "lm_eval" / "_group.yaml").is_file()
    chosen = _docs("gpqa-100")
    right = set(chosen[:37])
    log = _full_log(tmp_path / "run", right)
    for folder in (tmp_path / "m", "gpqa-100"):
        code, out, err = run("score", folder, log, "--format", "json")
        assert code == 0, err
        # the folder and the name give the library's estimate (gpqa-100 reads the difference estimator)
        assert json.loads(out)["org/new"]["estimate"] == pytest.approx(shipped_estimate("gpqa-100", right), abs=1e-3)


def test_unknown_names_and_a_second_export_are_refused_with_one_message(tmp_path):
    code, out, err = run("micro", "show", "gpqa-7")
    assert code == 1 and "no shipped micro-benchmark 'gpqa-7'" in err and len(err.strip().splitlines()) == 1
    assert run("micro", "export", "gpqa-25", "--out", tmp_path / "m")[0] == 0
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "keep.txt").write_text("mine")
    code, _, err = run("micro", "export", "gpqa-25", "--out", tmp_path / "other", "--force")
    assert code == 1 and (tmp_path / "other" / "keep.txt").read_text() == "mine"


def test_plan_pair_of_two_new_models_on_a_shipped_micro_benchmark(tmp_path):
    chosen = _docs("gpqa-100")
    log_a = _full_log(tmp_path / "a", set(chosen[:60]))
    log_b = _full_log(tmp_path / "b", set(chosen[:40]))
    for path, model in ((log_a, "org/a"), (log_b, "org/b")):
        (path.parent / f"results_{STAMP}.json").write_text(json.dumps({"model_name": model, "configs": {}}))
    code, out, err = run("plan", "--micro", "gpqa-100", "--pair", "org/a", "org/b", "--results-of", log_a, log_b)
    assert code == 0, err
    gap = shipped_estimate("gpqa-100", set(chosen[:60])) - shipped_estimate("gpqa-100", set(chosen[:40]))
    assert f"Estimated difference {gap:+.1f} points" in out and "Assumed:" in out
    code, _, err = run("plan", "--micro", "gpqa-100", "--pair", "org/a", "org/b", "--gap", "2")
    assert code == 1 and "--micro goes with --pair" in err


def _copy_source(target: Path) -> Path:
    """The files a wheel is built from (the package, data/, setup.py, pyproject.toml, README.md), without caches."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    shutil.copytree(REPO / "mbutils", target / "mbutils", ignore=ignore)
    shutil.copytree(REPO / "data", target / "data", ignore=ignore)
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy(REPO / name, target / name)
    return target


def test_an_installed_wheel_lists_exports_and_scores_shipped_micro_benchmarks_without_the_repository(tmp_path):
    source = _copy_source(tmp_path / "src")
    wheels = tmp_path / "wheels"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-q", "-w", str(wheels)],
                           capture_output=True, text=True)
    if built.returncode and "No matching distribution found for setuptools" in built.stderr:
        pytest.skip("the build backend (setuptools>=77) cannot be fetched here: no package index")
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = wheels.glob("mbutils-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for bundle in ("gpqa", "bbh-leaderboard", "mmlu-pro-leaderboard", "mmlu-pro-tiger-lab"):
        assert f"mbutils/data/shipped/{bundle}/responses.csv.gz" in names
    assert not any("paper-results" in n for n in names)
    assert {f"mbutils/micro/shipped_micro/{n}/shipped.json" for n in shipped_names()} <= set(names)
    assert wheel.stat().st_size < 3_000_000
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
                   check=True, capture_output=True)
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {**os.environ, "PYTHONPATH": str(target), "MBUTILS_CACHE": str(tmp_path / "cache")}
    env.pop("MBUTILS_DATA", None)

    def mbutils(*args):
        return subprocess.run([sys.executable, "-m", "mbutils", *map(str, args)], cwd=empty, env=env,
                              capture_output=True, text=True)

    where = subprocess.run([sys.executable, "-c", "import mbutils; print(mbutils.__file__)"], cwd=empty, env=env,
                           capture_output=True, text=True)
    assert where.stdout.strip().startswith(str(target)), where.stdout  # the wheel, not the repository
    listed = mbutils("micro", "list")
    assert listed.returncode == 0, listed.stderr
    assert [line.split(":")[0] for line in listed.stdout.strip().splitlines()] == shipped_names()
    chosen = _docs("gpqa-100")
    log = _full_log(tmp_path / "run", set(chosen[:25]))
    scored = mbutils("score", "gpqa-100", log, "--format", "json")
    assert scored.returncode == 0, scored.stderr
    assert json.loads(scored.stdout)["org/new"]["estimate"] == pytest.approx(shipped_estimate("gpqa-100",
                                                                                               set(chosen[:25])), abs=1e-3)
    exported = mbutils("micro", "export", "bbh-leaderboard-100")
    assert exported.returncode == 0, exported.stderr
    assert (empty / "bbh-leaderboard-100" / "card.md").is_file()

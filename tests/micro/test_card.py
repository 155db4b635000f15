"""card.md: the reliability card in words holds the numbers of card.json, escapes names, and is sealed."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from helpers import random_benchmark
from helpers import run_command as run
from mbutils import build_micro, load_benchmark
from mbutils.base.tables import mdad_text
from mbutils.data.bundle import save_bundle
from mbutils.micro.card import md_text

NAME = "my_[bench](x)*<b>"


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("card")
    bench = random_benchmark(n_models=40, subtask_sizes=(30, 30), seed=5)
    bench = dataclasses.replace(bench, items=np.array([f"toy_task:{j}" for j in range(60)], dtype=object))
    bundle = save_bundle(bench, root / NAME)
    held = [str(m) for m in bench.models[:6]]
    built = build_micro(load_benchmark(bundle), "anchor_points", 12, exclude=held, runs=3, out=root / "micro")
    return built.path


def _card(folder: Path) -> tuple[dict, str]:
    return json.loads((folder / "card.json").read_text()), (folder / "card.md").read_text(encoding="utf-8")


def test_card_md_holds_the_numbers_of_card_json(folder):
    card, text = _card(folder)
    micro = json.loads((folder / "micro.json").read_text())
    assert f"{micro['k']} of {micro['n_items']} items" in text
    assert f"MDAD at {100 * card['threshold']:g}% agreement**: {mdad_text(card['mdad'], unit=' points')}" in text
    assert f"95% interval {mdad_text(card['ci_low'])} to {mdad_text(card['ci_high'], unit=' points')}" in text
    assert f"MDAD {mdad_text(card['random_mdad'], unit=' points')}" in text
    assert f"{card['protocol']['n_runs']} runs" in text and "seed 0" in text and "pool of 34 models" in text
    coverage = card["coverage"]
    calibration, excluded = coverage["calibration"], coverage["excluded"]
    assert calibration["models"] == 34 and excluded["models"] == 6
    assert f"covered {calibration['covered']} of them" in text and f"covered {excluded['covered']} of them" in text
    assert f"mean width {excluded['width']:.1f} points" in text and f"{coverage['width']:.1f} points wide" in text
    if card["mdad"] is not None:
        assert f"{100 * card['share_separated']:.0f}% of the pool's model pairs" in text
        assert (f"closer than {mdad_text(card['mdad'], unit=' points')} are ordered correctly less than "
                f"{100 * card['threshold']:g}% of the time; {100 * (1 - card['share_separated']):.0f}%") in text
    else:
        assert "MDAD not reached" in text
    assert f"group {md_text(micro['lm_eval_group']['name'])}" in text
    # anchor points weight their items: the group's mean is only an approximation, and the card says so
    assert micro["lm_eval_group"]["exact"] is False and "only an approximation" in text
    # no harness defines toy_task: the card says where its YAML goes
    assert micro["lm_eval_group"]["unresolved"] == ["toy_task_micro"] and "--lm-eval-tasks DIR" in text


def test_names_from_the_data_are_shown_escaped(folder):
    _, text = _card(folder)
    assert md_text(NAME) in text and NAME not in text
    assert md_text(NAME) == "my\\_\\[bench\\](x)\\*\\<b\\>"


def test_card_md_is_sealed_by_the_manifest(folder, tmp_path):
    import shutil

    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["card.md"] == hashlib.sha256((folder / "card.md").read_bytes()).hexdigest()
    copy = Path(shutil.copytree(folder, tmp_path / "micro"))
    (copy / "card.md").write_text((copy / "card.md").read_text() + "\nAll pairs are told apart.\n")
    responses = tmp_path / "new.csv"
    responses.write_text("model," + ",".join(f"q{j}" for j in range(3)) + "\nnew,1,0,1\n")
    code, out, err = run("score", copy, responses)
    assert code == 1 and "card.md" in err and "changed since it was written" in err and out == ""


def test_random_sampling_card_says_its_interval_is_exact(tmp_path):
    built = build_micro(load_benchmark("synthetic-gpqa"), "random", 25, runs=2, out=tmp_path / "micro")
    _, text = _card(built.path)
    assert "exact for uniform random sampling" in text and "No coverage was measured" not in text
    assert "Caution" in text and "too few for this MDAD" in text  # two runs: the card says they are too few

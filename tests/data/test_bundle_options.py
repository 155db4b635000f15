"""Answer options and the chance level come from the bundle (items.csv or provenance.json), never assumed."""

from __future__ import annotations

import json

import numpy as np
import pytest

import mbutils
from mbutils.base.errors import BundleError
from mbutils.data.bundle import validate_bundle


def write_bundle(folder, items_header="item,subtask", rows=None, provenance=None):
    folder.mkdir()
    (folder / "responses.csv").write_text("model,a,b,c\nm1,1,0,1\nm2,0,0,1\nm3,1,1,0\n")
    rows = rows or ["a,s1", "b,s1", "c,s2"]
    (folder / "items.csv").write_text(items_header + "\n" + "\n".join(rows) + "\n")
    if provenance is not None:
        (folder / "provenance.json").write_text(json.dumps(provenance))
    return folder


def test_options_from_items_csv_give_the_chance_level(tmp_path):
    folder = write_bundle(tmp_path / "b", "item,subtask,n_options", ["a,s1,4", "b,s1,4", "c,s2,2"])
    bench = mbutils.load_benchmark(str(folder))
    assert bench.n_options.tolist() == [4.0, 4.0, 2.0]
    assert bench.chance == pytest.approx((0.25 + 0.25 + 0.5) / 3)


def test_n_choices_is_read_as_n_options(tmp_path):
    folder = write_bundle(tmp_path / "b", "item,subtask,n_choices", ["a,s1,5", "b,s1,5", "c,s2,5"])
    assert mbutils.load_benchmark(str(folder)).chance == pytest.approx(0.2)


def test_without_options_the_chance_level_is_unknown(tmp_path):
    bench = mbutils.load_benchmark(str(write_bundle(tmp_path / "b")))
    assert np.isnan(bench.n_options).all() and bench.chance is None
    partial = write_bundle(tmp_path / "p", "item,subtask,n_options", ["a,s1,4", "b,s1,", "c,s2,4"])
    assert mbutils.load_benchmark(str(partial)).chance is None


def test_provenance_gives_options_per_subtask(tmp_path):
    folder = write_bundle(tmp_path / "b", provenance={"answer_options": {"n_options": {"s1": 2, "s2": 10},
                                                                         "source": "test"}})
    bench = mbutils.load_benchmark(str(folder))
    assert bench.n_options.tolist() == [2.0, 2.0, 10.0]


@pytest.mark.parametrize("value", ["1", "four", "2.5", "-3"])
def test_an_unusable_number_of_options_is_named_with_its_row(tmp_path, value):
    folder = write_bundle(tmp_path / "b", "item,subtask,n_options", ["a,s1,4", f"b,s1,{value}", "c,s2,4"])
    errors = [p for p in validate_bundle(str(folder)) if p.severity == "error"]
    assert len(errors) == 1 and "n_options" in str(errors[0]) and "'b'" in str(errors[0]), errors
    with pytest.raises(BundleError, match="n_options"):
        mbutils.load_benchmark(str(folder))


def test_the_shipped_bundles_state_their_options():
    for name, chance in (("gpqa", 0.25), ("mmlu-pro-leaderboard", 0.10)):
        assert mbutils.load_benchmark(name, missing="drop_models").chance == pytest.approx(chance)
    bbh = mbutils.load_benchmark("bbh-leaderboard", missing="drop_models")
    assert not np.isnan(bbh.n_options).any() and bbh.n_options.min() == 2 and bbh.n_options.max() == 19

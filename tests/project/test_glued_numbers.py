"""benchmarks/glued_numbers.py: the reference of a build's glued values that speed work is checked against."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import nbformat

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "glued_numbers.py"
spec = importlib.util.spec_from_file_location("glued_numbers", SCRIPT)
glued_numbers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(glued_numbers)


def _glue(name: str, text: str) -> dict:
    return nbformat.v4.new_output("display_data", data={"text/plain": text},
                                  metadata={"scrapbook": {"name": name, "mime_prefix": ""}})


def _build(folder: Path, values: dict[str, str]) -> Path:
    cell = nbformat.v4.new_code_cell("glue(...)")
    cell.outputs = [_glue(k, v) for k, v in values.items()] + [
        nbformat.v4.new_output("display_data", data={"text/plain": "not glued"})]
    nb = nbformat.v4.new_notebook(cells=[cell])
    page = folder / "jupyter_execute" / "chapters" / "sel_random.ipynb"
    page.parent.mkdir(parents=True)
    nbformat.write(nb, page)
    return folder


def test_collect_reads_each_glued_value_by_page_and_nothing_else(tmp_path):
    build = _build(tmp_path, {"mdad": "3.5", "claim": "random needs 1,200 items"})
    assert glued_numbers.collect(build) == {"chapters/sel_random": {"claim": "random needs 1,200 items",
                                                                    "mdad": "3.5"}}



def test_collect_reads_the_values_myst_nb_moved_to_the_pages_glue_file(tmp_path):
    """A Jupyter Book build keeps a page's glued outputs in ``PAGE.glue.json``, not in the notebook."""
    build = _build(tmp_path, {"kept": "1"})
    stored = {"moved": {"data": {"text/plain": "'MDAD 3.5'", "text/markdown": ["MDAD ", "3.5"]},
                        "metadata": {"scrapbook": {"name": "moved"}}, "output_type": "display_data"}}
    (build / "jupyter_execute" / "chapters" / "sel_random.glue.json").write_text(json.dumps(stored))
    assert glued_numbers.collect(build) == {"chapters/sel_random": {"kept": "1", "moved": "'MDAD 3.5'"}}

def test_compare_finds_a_changed_number_and_lists_keys_on_one_side():
    old = {"p": {"a": "3.5 points", "b": "x", "gone": "1"}}
    new = {"p": {"a": "3.6 points", "b": "x", "new": "2"}}
    differences, one_side = glued_numbers.compare(new, old)
    assert differences == ["p: a: '3.5 points' -> '3.6 points'"]
    assert one_side == ["p: gone is gone", "p: new is new"]


def test_a_tolerance_admits_close_numbers_but_never_changed_words():
    old = {"p": {"a": "MDAD 1,000.0 at k = 10", "b": "better"}}
    assert glued_numbers.compare({"p": {"a": "MDAD 1,000.4 at k = 10", "b": "better"}}, old, rtol=1e-3)[0] == []
    assert len(glued_numbers.compare({"p": {"a": "MDAD 1,002 at k = 10", "b": "better"}}, old, rtol=1e-3)[0]) == 1
    assert len(glued_numbers.compare({"p": {"a": "MDAD 1,000.4 at k = 10", "b": "worse"}}, old, rtol=1e-3)[0]) == 1


def test_save_then_compare_round_trips_and_a_change_exits_1(tmp_path, capsys):
    build = _build(tmp_path / "b", {"mdad": "3.5"})
    ref = tmp_path / "ref.json"
    assert glued_numbers.main(["save", str(build), str(ref)]) == 0
    assert json.loads(ref.read_text()) == {"chapters/sel_random": {"mdad": "3.5"}}
    assert glued_numbers.main(["compare", str(build), str(ref)]) == 0
    ref.write_text(json.dumps({"chapters/sel_random": {"mdad": "4.0"}}))
    assert glued_numbers.main(["compare", str(build), str(ref)]) == 1
    assert "'4.0' -> '3.5'" in capsys.readouterr().out

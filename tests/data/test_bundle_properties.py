"""Property-based tests of the bundle folder format: whatever is saved loads back the same.

Benchmarks are drawn at random (1-6 models x 1-8 items, names with commas, quotes, spaces
and non-ASCII text, repeated subtasks, optional confidences with awkward floats, optional
target sets); the loader must return identical arrays, names, subtasks and content hash.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from mbutils.data.bundle import Benchmark, load_bundle, save_bundle, validate_bundle
from mbutils.base.errors import BundleError

# Printable text of any script: no control characters (tabs, newlines) and no lone surrogates,
# which cannot be UTF-8 encoded. Spaces, commas, quotes and look-alikes of numbers are all fair.
# a valid name: no control characters, and not only white space (validate refuses those, by row)
TEXT = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp", "Cf")), min_size=1,
               max_size=8).filter(str.strip)
TRICKY = st.sampled_from(["nan", "NA", "None", "0", "1.0", "true", " padded ", 'say "hi"', "a,b", "ﬁ", "名前",
                          "🙂", "model", "item", "subtask", "-", "soft\u00adhyphen"])
NAME = st.one_of(TEXT, TRICKY)
# Floats whose shortest decimal text is long or whose exponent is extreme.
AWKWARD = st.sampled_from([0.0, 1.0, 1 / 3, 0.1 + 0.2, 5e-324, 2.2250738585072014e-308, 1 - 2**-53, 1e-300])
PROBABILITY = st.one_of(st.floats(0, 1, allow_subnormal=True), AWKWARD)


@st.composite
def benchmarks(draw) -> Benchmark:
    n_models, n_items = draw(st.integers(1, 6)), draw(st.integers(1, 8))
    models = draw(st.lists(NAME, min_size=n_models, max_size=n_models, unique=True))
    items = draw(st.lists(NAME, min_size=n_items, max_size=n_items, unique=True))
    labels = draw(st.lists(NAME, min_size=1, max_size=3, unique=True))
    subtasks = draw(st.lists(st.sampled_from(labels), min_size=n_items, max_size=n_items))
    correct = draw(hnp.arrays(np.int8, (n_models, n_items), elements=st.integers(0, 1)))
    confidence = draw(st.none() | hnp.arrays(np.float64, (n_models, n_items), elements=PROBABILITY))
    members = st.lists(st.sampled_from(models), max_size=n_models, unique=True)  # any order, maybe empty
    target_sets = draw(st.dictionaries(NAME, members, max_size=3))
    return Benchmark(name="drawn", correct=correct, models=models, items=items, subtasks=subtasks,
                     confidence=confidence, target_sets=target_sets)


def assert_same(back: Benchmark, bench: Benchmark) -> None:
    assert back.correct.dtype == np.int8 and np.array_equal(back.correct, bench.correct)
    if bench.confidence is None:
        assert back.confidence is None
    else:  # bit for bit, so -0.0, subnormals and 0.1 + 0.2 survive
        assert back.confidence.tobytes() == bench.confidence.tobytes()
    assert back.models.tolist() == bench.models.tolist()
    assert back.items.tolist() == bench.items.tolist()
    assert back.subtasks.tolist() == bench.subtasks.tolist()
    assert back.subtask_names.tolist() == bench.subtask_names.tolist()
    assert back.target_sets == bench.target_sets
    assert back.content_hash == bench.content_hash


@settings(max_examples=100)
@given(bench=benchmarks())
def test_any_valid_benchmark_round_trips_through_save_and_load(bench):
    with tempfile.TemporaryDirectory() as tmp:
        folder = save_bundle(bench, Path(tmp) / "saved")
        assert [p for p in validate_bundle(folder) if "formula" not in p.message] == []  # only the spreadsheet warning
        back = load_bundle(folder)
        assert_same(back, bench)
        # Saving what was loaded writes the very same bytes: the format has one spelling per benchmark.
        again = save_bundle(back, Path(tmp) / "again")
        for file in folder.iterdir():
            assert (again / file.name).read_bytes() == file.read_bytes(), file.name
        assert sorted(p.name for p in again.iterdir()) == sorted(p.name for p in folder.iterdir())


@settings(max_examples=40)
@given(bench=benchmarks(), data=st.data())
def test_empty_cells_are_refused_or_dropped_exactly(bench, data):
    """Blank some cells: the default load refuses; each drop keeps exactly the complete rows or columns."""
    holes = data.draw(hnp.arrays(bool, bench.correct.shape, elements=st.booleans()).filter(np.any))
    with tempfile.TemporaryDirectory() as tmp:
        folder = save_bundle(bench, Path(tmp) / "holes")
        lines = (folder / "responses.csv").read_text(encoding="utf-8").split("\n")
        for i, row_holes in enumerate(holes):  # responses rows end in "c,c,...,c" with 0/1 cells
            cells = np.array(list(lines[i + 1][-(2 * bench.n_items - 1):][::2]))
            cells[row_holes] = ""
            lines[i + 1] = lines[i + 1][:-(2 * bench.n_items - 1)] + ",".join(cells)
        (folder / "responses.csv").write_text("\n".join(lines), encoding="utf-8")
        with pytest.raises(BundleError, match=f"is incomplete: {int(holes.sum()):,} empty cell"):
            load_bundle(folder)
        for policy, axis in (("drop_models", 1), ("drop_items", 0)):
            keep = np.flatnonzero(~holes.any(axis=axis))
            if keep.size == 0:
                with pytest.raises(BundleError, match="leaves nothing"):
                    load_bundle(folder, missing=policy)
                continue
            back = load_bundle(folder, missing=policy)
            if policy == "drop_models":
                assert back.models.tolist() == bench.models[keep].tolist()
                assert np.array_equal(back.correct, bench.correct[keep])
                rows, cols = keep, slice(None)
                kept = set(back.models)
                assert back.target_sets == {k: [m for m in v if m in kept] for k, v in bench.target_sets.items()}
            else:
                assert back.items.tolist() == bench.items[keep].tolist()
                assert back.subtasks.tolist() == bench.subtasks[keep].tolist()
                assert np.array_equal(back.correct, bench.correct[:, keep])
                rows, cols = slice(None), keep
            if bench.confidence is not None:  # confidences of dropped cells go with them
                assert back.confidence.tobytes() == bench.confidence[rows][:, cols].tobytes()


@pytest.mark.parametrize("field", ["models", "items", "subtasks"])
def test_a_carriage_return_in_a_name_is_kept_or_refused_never_changed(tmp_path, field):
    names = {"models": ["org/a\r", "org/b"], "items": ["q1\r", "q2"], "subtasks": ["alg\r", "geo"]}
    kwargs = {"models": ["org/a", "org/b"], "items": ["q1", "q2"], "subtasks": ["alg", "geo"], field: names[field]}
    try:
        bench = Benchmark(name="cr", correct=[[1, 0], [0, 1]], **kwargs)
        folder = save_bundle(bench, tmp_path / "cr")
    except BundleError as err:  # refusing such names at the boundary is a fine fix too
        assert repr(names[field][0]) in str(err) or names[field][0].strip() in str(err)
        return
    assert_same(load_bundle(folder), bench)

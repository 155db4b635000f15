"""Audit of a fixed micro-benchmark: tables, invariants, baseline, item/weight files, errors."""

import numpy as np
import pandas as pd
import pytest

from conftest import real_bundle
from helpers import random_benchmark
from mbutils.evaluate.audit_inputs import read_items, read_weights, resolve_items
from mbutils.evaluate.audit_tables import MICRO, RANDOM
from mbutils.evaluate.auditing import audit, format_audit
from mbutils.data.datasets import load_benchmark
from mbutils.base.errors import ProtocolError
from mbutils.evaluate.metrics import mdad_table
from mbutils.evaluate.pair_metrics import pair_agreement
from mbutils.evaluate.results_table import RESULT_COLUMNS


@pytest.fixture(scope="module")
def bench():
    return random_benchmark(n_models=40, subtask_sizes=(60, 40), seed=4)


def test_all_items_rank_every_pair_right(bench):
    report = audit(bench, list(bench.items), n_random=3, tie_rule="exclude", n_boot=50)
    micro = report.table.set_index("selector").loc[MICRO]
    assert micro["tau"] == pytest.approx(1.0) and micro["error"] < 1e-9
    curve = report.curve[report.curve["selector"] == MICRO]
    assert (curve["agreement"] == 1).all()
    # MDAD = the first non-empty bin (100 items: differences are whole points, ties excluded)
    assert micro["mdad"] == curve["gap"].min() == 1.0
    assert micro["share_closer"] == pytest.approx(np.mean(report.results.query("selector == @MICRO")
                                                          .pipe(_pair_gaps) < 1.0))
    # the paper's rule: every non-tied pair agrees; estimated ties of tied pairs disagree
    paper = audit(bench, list(bench.items), n_random=3, n_boot=50)
    rows = paper.results[paper.results["selector"] == MICRO].sort_values("model")
    est, cor = rows["estimate"].to_numpy(), rows["seen_correct"].to_numpy()
    i, j = np.triu_indices(len(est), k=1)
    agrees, _ = pair_agreement(est[i] - est[j], cor[i] - cor[j])
    assert agrees[cor[i] != cor[j]].all() and not agrees[cor[i] == cor[j]].any()
    assert paper.table.set_index("selector").loc[MICRO, "mdad"] == 1.0  # bin 0 holds only ties


def _pair_gaps(rows: pd.DataFrame) -> np.ndarray:
    acc = 100 * rows["seen_correct"].to_numpy() / rows["n_seen"].to_numpy()
    i, j = np.triu_indices(len(acc), k=1)
    return np.abs(acc[i] - acc[j])


def test_tables_have_the_experiment_format(bench):
    items = list(bench.items[::4])
    report = audit(bench, items, n_random=7, n_boot=50)
    assert set(RESULT_COLUMNS) <= set(report.results.columns)
    micro = report.results[report.results["selector"] == MICRO]
    random = report.results[report.results["selector"] == RANDOM]
    assert len(micro) == bench.n_models and random["run"].nunique() == 7
    assert (report.results["size"] == len(items)).all()
    # estimate = mean correctness on the items; truth = full-benchmark correct counts
    cols = bench.model_index(micro["model"])
    assert np.allclose(micro["estimate"], bench.correct[cols][:, ::4].mean(1))
    assert (micro["seen_correct"].to_numpy() == bench.correct[cols].sum(1)).all()
    assert (micro["n_seen"] == bench.n_items).all()
    # metrics apply unchanged and give the audit's numbers
    again = mdad_table(report.results, ci="none").set_index("selector")["mdad"]
    got = report.table.set_index("selector")["mdad"]
    assert again[MICRO] == got[MICRO] or (np.isnan(again[MICRO]) and np.isnan(got[MICRO]))
    assert len(report.random_mdads) == 7
    # deterministic under the seed
    same = audit(bench, items, n_random=7, n_boot=50)
    pd.testing.assert_frame_equal(report.table, same.table)


def test_truth_rest_uses_the_other_items(bench):
    items = list(bench.items[:30])
    report = audit(bench, items, truth="rest", n_random=4, n_boot=50)
    micro = report.results[report.results["selector"] == MICRO]
    cols = bench.model_index(micro["model"])
    assert (micro["n_seen"] == bench.n_items - 30).all()
    assert (micro["seen_correct"].to_numpy() == bench.correct[cols][:, 30:].sum(1)).all()
    random = report.results[report.results["selector"] == RANDOM]
    # each draw's truth excludes that draw's own items: counts differ between draws
    per_draw = random.pivot(index="model", columns="run", values="seen_correct")
    assert (per_draw.nunique(axis=1) > 1).any()
    assert "random (expected)" not in set(report.table["selector"])


def test_weights_are_normalised_and_used(bench):
    items = list(bench.items[:5])
    report = audit(bench, items, weights=[2, 2, 2, 2, 2], n_random=2, n_boot=20)
    plain = audit(bench, items, n_random=2, n_boot=20)
    pd.testing.assert_frame_equal(report.results, plain.results)
    weighted = audit(bench, items, weights=[1, 0, 0, 0, 3], n_random=2, n_boot=20)
    micro = weighted.results[weighted.results["selector"] == MICRO]
    cols = bench.model_index(micro["model"])
    want = 0.25 * bench.correct[cols, 0] + 0.75 * bench.correct[cols, 4]
    assert np.allclose(micro["estimate"], want)
    assert np.allclose(weighted.weights, [0.25, 0, 0, 0, 0.75])
    assert "weighted" in format_audit(weighted)


@pytest.fixture(scope="module")
def gpqa():
    return load_benchmark(real_bundle("gpqa"))


def test_random_fixed_subset_is_like_the_random_baseline(gpqa):
    """A fixed random 50-item subset is one more draw of the baseline: its MDAD lies within
    the range of 40 random draws' MDADs (fixed seeds; chance of failing ~2/41 per seed), and
    the pooled baseline curve matches the exact expectation (pair-weighted mean |diff| <= 0.02)."""
    items = list(gpqa.items[np.random.default_rng(11).choice(gpqa.n_items, 50, replace=False)])
    report = audit(gpqa, items, n_random=40, n_boot=100)
    table = report.table.set_index("selector")
    micro = table.loc[MICRO, "mdad"]
    assert np.nanmin(report.random_mdads) <= micro <= np.nanmax(report.random_mdads)
    assert 0.0 < report.mdad_rank < 1.0
    assert abs(table.loc[RANDOM, "mdad"] - table.loc["random (expected)", "mdad"]) <= 1.0
    sim = report.curve[report.curve["selector"] == RANDOM]
    exp = report.curve[report.curve["selector"] == "random (expected)"]
    both = sim.merge(exp, on="gap", suffixes=("_sim", "_exp"))
    diff = (both["agreement_sim"] - both["agreement_exp"]).abs()
    assert np.average(diff, weights=both["n_pairs_sim"]) <= 0.02
    # model-bootstrap CI is not narrower than the paper's pair bootstrap (dependent pairs)
    assert table.loc[MICRO, "ci_low"] <= micro <= table.loc[MICRO, "ci_high"]
    pairs = audit(gpqa, items, n_random=2, ci="pairs", n_boot=200).table.set_index("selector")
    assert (table.loc[MICRO, "ci_high"] - table.loc[MICRO, "ci_low"]
            >= pairs.loc[MICRO, "ci_high"] - pairs.loc[MICRO, "ci_low"])
    text = format_audit(report)
    assert "Audit of a 50-item micro-benchmark on gpqa: 420 models" in text
    assert "random, expected (exact)" in text


def test_target_set_and_model_list(gpqa):
    items = list(gpqa.items[:40])
    report = audit(gpqa, items, models="7b_instruct", n_random=5, n_boot=50)
    assert report.n_models == 50
    names = list(gpqa.models[:3])
    assert audit(gpqa, items, models=names, n_random=2, n_boot=20).n_models == 3


def test_item_files(tmp_path, bench):
    text = tmp_path / "tiny.txt"
    text.write_text("# my items\nq0001\n\n  q0003  \nq0002\n")
    assert read_items(text) == (["q0001", "q0003", "q0002"], None)
    table = tmp_path / "tiny.csv"
    table.write_text("item,weight\nq0001,0.5\nq0002,1.5\n")
    names, weights = read_items(table)
    assert names == ["q0001", "q0002"] and np.allclose(weights, [0.5, 1.5])
    aligned = tmp_path / "w.csv"
    aligned.write_text("weight,item\n3,q0002\n1,q0001\n")
    assert np.allclose(read_weights(aligned, names), [1, 3])
    plain = tmp_path / "w.txt"
    plain.write_text("1\n2\n")
    assert np.allclose(read_weights(plain, names), [1, 2])
    index, w = resolve_items(bench, names, [1, 3])
    assert list(index) == [1, 2] and np.allclose(w, [0.25, 0.75])


def test_bad_inputs_give_clear_errors(tmp_path, bench):
    with pytest.raises(ProtocolError, match=r"2 of 3 items are not in tiny: nope, q9999 .*look like q0000"):
        resolve_items(bench, ["q0001", "nope", "q9999"])
    dup = tmp_path / "dup.txt"
    dup.write_text("q0001\nq0002\nq0001\n")
    with pytest.raises(ProtocolError, match=r"dup.txt: items listed more than once: 'q0001' \(lines 1, 3\)"):
        read_items(dup)
    with pytest.raises(ProtocolError, match="more than once"):
        audit(bench, ["q0001", "q0001"])
    with pytest.raises(ProtocolError, match="3 weights for 2 items"):
        resolve_items(bench, ["q0001", "q0002"], [1, 2, 3])
    with pytest.raises(ProtocolError, match="must not be negative: q0002=-1"):
        resolve_items(bench, ["q0001", "q0002"], [1, -1])
    with pytest.raises(ProtocolError, match="all zero"):
        resolve_items(bench, ["q0001", "q0002"], [0, 0])
    bad = tmp_path / "w.txt"
    bad.write_text("1\nabc\n")
    with pytest.raises(ProtocolError, match=r"w.txt: weights must be finite numbers; not at line 2 \('abc'\)"):
        read_weights(bad, ["q0001", "q0002"])
    short = tmp_path / "short.txt"
    short.write_text("1\n")
    with pytest.raises(ProtocolError, match="1 weights for 2 items"):
        read_weights(short, ["q0001", "q0002"])
    other = tmp_path / "other.csv"
    other.write_text("weight,item\n1,q0001\n2,q0005\n")
    with pytest.raises(ProtocolError, match="no weight for q0002; weights for items not in it: q0005"):
        read_weights(other, ["q0001", "q0002"])
    nocol = tmp_path / "x.csv"
    nocol.write_text("name\nq0001\n")
    with pytest.raises(ProtocolError, match="needs an 'item' column; it has name"):
        read_items(nocol)
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n\n")
    with pytest.raises(ProtocolError, match="lists no items"):
        read_items(empty)
    with pytest.raises(ProtocolError, match="no such items file"):
        read_items(tmp_path / "missing.txt")
    with pytest.raises(ProtocolError, match="no items are left"):
        audit(bench, list(bench.items), truth="rest")
    with pytest.raises(ProtocolError, match="no target set named 'big'"):
        audit(bench, ["q0001"], models="big")


def test_items_starting_with_a_hash_are_ids_and_huge_weights_do_not_overflow(tmp_path):
    import numpy as np

    from mbutils.data.benchmark import Benchmark
    from mbutils.evaluate.audit_inputs import read_items, resolve_items

    listed = tmp_path / "items.txt"
    listed.write_text("# chosen by hand\n#q1\nq2\n#\n\n#q3\n")
    assert read_items(listed)[0] == ["#q1", "q2", "#q3"]
    bench = Benchmark(name="h", correct=np.eye(4, dtype=np.int8), models=["a", "b", "c", "d"],
                      items=["#q1", "q2", "#q3", "q4"], subtasks=["s"] * 4)
    index, weights = resolve_items(bench, ["#q1", "q2", "#q3"], [1e308, 1e308, 5e307])
    assert index.tolist() == [0, 1, 2] and np.allclose(weights, [0.4, 0.4, 0.2])


def test_an_audit_too_large_for_memory_is_refused_with_the_largest_that_fits():
    from mbutils import load_benchmark
    from mbutils.base.errors import ProtocolError
    from mbutils.evaluate.auditing import audit

    bench = load_benchmark("synthetic-gpqa")
    with pytest.raises(ProtocolError, match=r"87,990 pairs each\) would need about 352 GB; use at most 568 \(the"):
        audit(bench, list(bench.items[:10]), n_random=100_000)

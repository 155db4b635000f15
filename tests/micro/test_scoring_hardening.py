"""Hardening IV, estimates: every estimate and interval end in [0, 1] (points: [0, 100]), a pool that answers
alike refused and a residual spread of 0 never a zero-width interval, a filter a log does not record refused
and the filter read named, a pool model scored as new said to be one and not compared with itself, too few
items or runs refused or warned about, and the difference estimator's Student-t interval (its coverage is
measured in tests/methods/test_estimators_coverage.py)."""

from __future__ import annotations

import hashlib
import json
import shutil
from itertools import product
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm, t as student_t

from conftest import TESTS
from helpers import run_cli as run
from mbutils import Protocol, build_micro, load_benchmark, run_experiment
from mbutils.base.errors import MbutilsError, ProtocolError, SelectorError
from mbutils.data.bundle import Benchmark
from mbutils.data.importers.records import watch_filters
from mbutils.methods.estimators import MIN_ITEMS, difference_interval, residual_floor
from mbutils.methods.selectors.base import SourceData
from mbutils.methods.selectors.random_sampling import DifferenceMicroBenchmark, RandomDifference
from mbutils.evaluate.metrics import FEW_RUNS, few_runs_warnings
from mbutils.micro.difference import DESCRIPTION, LEGACY_DESCRIPTION
from mbutils.micro.folder import read_micro
from mbutils.micro.build import check_pool_varies
from mbutils.micro.scoring import ScoreError, format_scores, score

LM_EVAL = TESTS / "fixtures" / "lm_eval"
STAMP = "2024-06-26T15-48-21.123456"


def one_line_error(err: str, *needles: str) -> None:
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err


def reseal(folder: Path) -> None:
    """manifest.json rewritten for the files as they are now (an edit the hashes no longer see)."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name != "manifest.json")
    (folder / "manifest.json").write_text(json.dumps(
        {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}))


def bench_of(correct, name="made", models=None) -> Benchmark:
    correct = np.asarray(correct, dtype=np.int8)
    n_models, n_items = correct.shape
    return Benchmark(name=name, correct=correct,
                     models=np.array(models if models is not None else [f"m{i:03d}" for i in range(n_models)]),
                     items=np.array([f"q{j:04d}" for j in range(n_items)]), subtasks=np.array(["s"] * n_items))


def extreme_pool(seed: int, high: bool, n_sources=30, n_targets=5, n_items=100):
    """Sources and targets whose accuracies all lie within 10 points of 100% (``high``) or of 0%."""
    rng = np.random.default_rng(seed)
    low_acc, high_acc = (0.9, 1.0) if high else (0.0, 0.1)
    acc = rng.uniform(low_acc, high_acc, n_sources + n_targets)
    correct = (rng.random((n_sources + n_targets, n_items)) < acc[:, None]).astype(float)
    return correct[:n_sources], correct[n_sources:]


# -- 1. estimates and interval ends within [0, 1] ------------------------------------------------------


def test_the_difference_estimate_of_a_strong_pool_stays_at_most_100_points():
    """Seed 3 of a pool within 10 points of 100%: the cross-fitted correction carried four of five
    targets to 104.4 points (the estimate, and with it score, the card and the experiment)."""
    sources, targets = extreme_pool(3, high=True)
    micro = RandomDifference().select(SourceData(correct=sources, subtasks=np.zeros(100, dtype=int)), 10,
                                      np.random.default_rng(3))
    estimate, _ = micro.estimate_with_variance(targets)
    assert estimate.max() <= 1.0 and estimate.min() >= 0.0, estimate


@pytest.mark.parametrize("seed,high", list(product(range(40), (True, False))))
def test_generated_extreme_pools_keep_estimate_and_interval_in_0_1(seed, high):
    sources, targets = extreme_pool(seed, high)
    micro = RandomDifference().select(SourceData(correct=sources, subtasks=np.zeros(100, dtype=int)), 10,
                                      np.random.default_rng(seed))
    for level in (0.9, 0.95):
        estimate, low, high_end = micro.interval(targets, level)
        assert ((0 <= low) & (low <= estimate) & (estimate <= high_end) & (high_end <= 1)).all()
        assert (high_end > low).all()  # never zero width (the floor)
    assert np.array_equal(micro.estimate(targets), estimate)


def test_experiment_tables_clip_every_estimate():
    """An experiment on a strong bundle: random_difference's estimates went to 107.3 points (and to -7.3 on
    the weak mirror image; -23.9 was reported); the table now holds accuracies only."""
    sources, targets = extreme_pool(0, high=True, n_sources=50, n_targets=30, n_items=120)
    strong = bench_of(np.vstack([sources, targets]), name="strong")
    weak = bench_of(1 - np.vstack([sources, targets]), name="weak")
    for bench in (strong, weak):
        table = run_experiment(bench, ["random_difference"], [6, 10],
                               Protocol(n_sources=40, n_targets=20, n_runs=3), progress=False, use_cache=False)
        assert table["estimate"].between(0, 1).all(), table["estimate"].describe()


def test_score_of_a_difference_folder_stays_at_most_100_points(tmp_path):
    """build-micro and score on a 30-model pool within 10 points of 100%: the scored models' estimates and
    interval ends lie in [0, 100] (this seed gave 100.2; 103.9 with an interval of 88.8 to 100 was reported)."""
    sources, targets = extreme_pool(7, high=True, n_sources=30, n_targets=5, n_items=100)
    bench = bench_of(np.vstack([sources, targets]))
    new = [str(m) for m in bench.models[30:]]
    built = build_micro(bench, "random_difference", 10, exclude=new, runs=1, seed=7, out=tmp_path / "micro")
    responses = tmp_path / "new.csv"
    pd.DataFrame(bench.correct[30:], columns=bench.items).assign(model=new).to_csv(responses, index=False)
    table = score(built.path, [responses], level=0.9)
    assert table["estimate"].between(0, 100).all() and table["low"].between(0, 100).all()
    assert table["high"].between(0, 100).all()
    assert (table["low"] <= table["estimate"]).all() and (table["estimate"] <= table["high"]).all()


@pytest.mark.parametrize("estimator", ["irt", "pirt", "gpirt", "anchor"])
def test_tinybenchmarks_estimates_stay_in_0_1(estimator):
    from mbutils.methods.selectors.tiny_estimators import IRTMicroBenchmark

    rng = np.random.default_rng(1)
    micro = IRTMicroBenchmark(items=np.arange(5), weights=np.full(5, 0.25), item_a=rng.normal(0, 3, (40, 1)),
                              item_b=rng.normal(0, 3, 40), estimator=estimator, gp_lambda=0.5)
    estimate = micro.estimate(np.ones((3, 40)))  # weights summing to 1.25: the anchor estimate would be 1.25
    assert ((0 <= estimate) & (estimate <= 1)).all(), estimate


# -- 2. a pool that answers alike; a residual spread of 0 ----------------------------------------------

PATTERNS = {"all-right": lambda shape, rng: np.ones(shape), "all-wrong": lambda shape, rng: np.zeros(shape),
            "identical": lambda shape, rng: np.tile(rng.random(shape[1]) < 0.6, (shape[0], 1))}


@pytest.mark.parametrize("pattern,selector", list(product(
    PATTERNS, ["random_difference", "tinybenchmarks_irt", "anchor_points_binary", "subtask_equal", "diversity"])))
def test_build_micro_refuses_a_pool_that_answers_alike(pattern, selector):
    rng = np.random.default_rng(0)
    bench = bench_of(PATTERNS[pattern]((25, 60), rng))
    with pytest.raises(ProtocolError, match=r"answer all 60 items alike .*--selector random"):
        build_micro(bench, selector, 10, runs=1)


def test_the_command_line_refuses_a_pool_that_answers_alike(tmp_path):
    from mbutils.data.bundle.write import save_bundle

    save_bundle(bench_of(np.ones((25, 60)), name="alike"), tmp_path / "alike")
    code, out, err = run("build-micro", "--data", tmp_path / "alike", "--selector", "random_difference", "--k", 10,
                         "--runs", 1, "--out", tmp_path / "micro", "--quiet")
    assert code == 1 and out == "" and not (tmp_path / "micro").exists()
    one_line_error(err, "pool's 25 models answer all 60 items alike", "every one of them right on every item",
                   "--selector random")


@pytest.mark.parametrize("seed", range(10))
def test_a_pool_alike_on_the_chosen_items_only_is_refused_there(seed):
    """Items 0-29 answered alike by every pool model, the rest not: items chosen among the first 30 are
    refused, naming the selector's choice; one item beyond them is enough to pass."""
    rng = np.random.default_rng(seed)
    correct = (rng.random((20, 60)) < 0.5).astype(np.int8)
    correct[:, :30] = rng.random(30) < 0.5
    bench = bench_of(correct)
    rows = np.arange(20)
    alike = type("Chosen", (), {"items": np.sort(rng.choice(30, 8, replace=False)), "size": 8})()
    with pytest.raises(ProtocolError, match="answer the 8 items random_difference chose alike"):
        check_pool_varies(RandomDifference(), bench, rows, alike, "normal")
    varied = type("Chosen", (), {"items": np.append(alike.items[:-1], 30 + seed), "size": 8})()
    check_pool_varies(RandomDifference(), bench, rows, varied, "normal")
    check_pool_varies(RandomDifference(), bench, rows, alike, "hypergeometric")  # the exact interval needs no pool


def two_camp_folder(tmp_path: Path, k=10):
    """A difference folder of a pool of two camps (6 models right on every item, 6 wrong on every item) and
    a new model wrong on the chosen items but right on 75% of the others: it answers the sample exactly as
    its nearest pool models predict, a residual spread of 0."""
    n_items = 80
    pool = np.vstack([np.ones((6, n_items)), np.zeros((6, n_items))])
    bench = bench_of(pool)
    built = build_micro(bench, "random_difference", k, runs=1, seed=1, out=tmp_path / "micro")
    new = np.zeros(n_items)
    others = np.setdiff1d(np.arange(n_items), built.micro.items)
    new[others[: round(0.75 * n_items)]] = 1  # 75% of all items
    responses = tmp_path / "new.csv"
    pd.DataFrame([new], columns=bench.items).assign(model="new").to_csv(responses, index=False)
    return built, responses, new.mean()


def test_a_residual_spread_of_0_gives_no_zero_width_interval(tmp_path):
    """Reported: "0.0, 90% interval 0.0 to 0.0" for a model whose accuracy is 75."""
    built, responses, truth = two_camp_folder(tmp_path)
    assert truth == 0.75
    row = score(built.path, [responses], level=0.9).iloc[0]
    assert row["estimate"] == 0.0 and row["low"] == 0.0
    k, n = built.k, len(built.items)
    floor_sd = np.sqrt((1 - k / n) * residual_floor(k) / k)
    assert row["high"] == pytest.approx(100 * student_t.ppf(0.95, k - 2) * floor_sd)
    assert row["high"] > 10  # not what the data allow to be exact


@pytest.mark.parametrize("k,level", list(product([4, 5, 10, 25, 60], [0.5, 0.8, 0.9, 0.95])))
def test_generated_zero_spreads_get_the_floor_not_zero_width(k, level):
    for estimate in (0.0, 0.3, 1.0):
        low, high = difference_interval(np.array([estimate]), np.array([0.0]), k, 100, level)
        assert high[0] - low[0] > 0 and 0 <= low[0] <= estimate <= high[0] <= 1


# -- 3. filters ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def logged(tmp_path_factory):
    """A random micro-benchmark of 5 items of the lm-eval fixture bundle (as in test_scoring.py)."""
    root = tmp_path_factory.mktemp("filters")
    code, _, err = run("import", "lm-eval", LM_EVAL, "--out", root / "bundle", "--quiet")
    assert code == 0, err
    code, _, err = run("build-micro", "--data", root / "bundle", "--selector", "random", "--k", 5, "--seed", 2,
                       "--out", root / "micro", "--quiet")
    assert code == 0, err
    return root


def logs_with(folder: Path, filters: list[str]) -> Path:
    """tiny-3's logs with every record once per filter of ``filters``."""
    folder.mkdir(parents=True)
    for task in ("arc_easy", "piqa"):
        name = f"samples_{task}_{STAMP}.jsonl"
        records = [json.loads(line) for line in (LM_EVAL / "tiny-3" / name).read_text().splitlines() if line.strip()]
        lines = [json.dumps({**rec, "filter": f}) for f in filters for rec in records]
        (folder / name).write_text("\n".join(lines) + "\n")
    return folder


FILTER_CASES = [  # filters the logs record, the one asked for, the filter read (None: refused)
    (["none"], None, "none"),
    (["flexible-extract"], None, "flexible-extract"),
    (["flexible-extract"], "flexible-extract", "flexible-extract"),
    (["flexible-extract"], "strict-match", None),
    (["none"], "strict-match", None),
    (["strict-match", "flexible-extract"], "strict-match", "strict-match"),
    (["strict-match", "flexible-extract"], "flexible-extract", "flexible-extract"),
    (["strict-match", "flexible-extract"], "none", None),
]


def test_a_filter_the_log_does_not_record_is_refused_on_the_command_line(logged, tmp_path):
    """Reported: --filter strict-match on a log of flexible-extract alone scored it, exit 0."""
    logs = logs_with(tmp_path / "tiny-3", ["flexible-extract"])
    code, out, err = run("score", logged / "micro", logs, "--filter", "strict-match")
    assert code == 1 and out == ""
    one_line_error(err, "samples_", "'strict-match'", "'flexible-extract'", str(logs))


@pytest.mark.parametrize("recorded,wanted,read", FILTER_CASES)
def test_generated_filters_are_read_or_refused_and_named(logged, tmp_path, recorded, wanted, read):
    logs = logs_with(tmp_path / "tiny-3", recorded)
    if read is None:
        with pytest.raises(MbutilsError, match=f"no records for filter '{wanted}'.*'{recorded[0]}'"):
            score(logged / "micro", [logs], log_filter=wanted)
        return
    table = score(logged / "micro", [logs], log_filter=wanted)
    assert set(table["filter"]) == {read} and set(table["metric"]) == {"acc"}
    folder = read_micro(logged / "micro")
    text = format_scores(table, folder)
    assert "Metric: acc (" in text and f"filter: {read} ({'given' if wanted else 'the one the logs record'})" in text
    assert {row["filter"] for row in json.loads(format_scores(table, folder, "json")).values()} == {read}


def test_several_filters_and_none_asked_for_is_refused(logged, tmp_path):
    logs = logs_with(tmp_path / "tiny-3", ["strict-match", "flexible-extract"])
    with pytest.raises(MbutilsError, match="several filters"):
        score(logged / "micro", [logs])


def test_a_filter_asked_of_a_responses_csv_is_refused(logged, tmp_path):
    pd.read_csv(logged / "bundle" / "responses.csv").to_csv(tmp_path / "responses.csv", index=False)
    with pytest.raises(ScoreError, match="responses.csv records 0/1 answers and no lm-eval filter"):
        score(logged / "micro", [tmp_path / "responses.csv"], log_filter="strict-match")
    table = score(logged / "micro", [tmp_path / "responses.csv"])
    assert table["filter"].isna().all()
    assert "no lm-eval metric or filter read" in format_scores(table, read_micro(logged / "micro"))


NAMES = ("none", "strict-match", "flexible-extract")
RECORDED = [list(c) for n in (1, 2, 3) for c in product(NAMES, repeat=n) if len(set(c)) == n]


@pytest.mark.parametrize("recorded,wanted", list(product(RECORDED, (None, *NAMES))))
def test_generated_filter_watch(recorded, wanted):
    records = [(i + 1, {"doc_id": i, "filter": f} if f != "none" or i % 2 else {"doc_id": i})
               for i, f in enumerate(recorded * 2)]
    seen: dict = {}
    stream = watch_filters(iter(records), wanted, "samples_x.jsonl", seen)
    if wanted is not None and wanted not in recorded:
        with pytest.raises(MbutilsError, match=f"samples_x.jsonl: no records for filter '{wanted}'"):
            list(stream)
    else:
        assert list(stream) == records
    assert list(seen) == list(dict.fromkeys(recorded))


# -- 4. a pool model scored as if new ------------------------------------------------------------------


@pytest.fixture(scope="module")
def difference(tmp_path_factory):
    """The first 60 models of synthetic-gpqa, the first 5 held out; a difference folder of 20 items."""
    whole = load_benchmark("synthetic-gpqa")
    bench = Benchmark(name="synthetic-60", correct=whole.correct[:60], models=whole.models[:60], items=whole.items,
                      subtasks=whole.subtasks)
    root = tmp_path_factory.mktemp("difference")
    built = build_micro(bench, "random_difference", 20, exclude=list(bench.models[:5]), runs=2, seed=3,
                        out=root / "micro")
    return bench, built


def test_a_pool_model_scored_as_new_is_said_to_be_one_and_not_compared_with_itself(difference, tmp_path):
    """Reported: random_difference called model-000 "better than model-000"."""
    bench, built = difference
    names = [str(m) for m in bench.models[[0, 5, 6]]]  # one held out, two of the pool
    responses = tmp_path / "responses.csv"
    pd.DataFrame(bench.correct[[0, 5, 6]], columns=bench.items).assign(model=names).to_csv(responses, index=False)
    table = score(built.path, [responses])
    assert table["in_pool"].tolist() == [False, True, True]
    for row in table.itertuples():
        assert row.model not in row.above + row.below + row.indistinguishable
        assert len(row.above) + len(row.below) + len(row.indistinguishable) == len(built.pool) - int(row.in_pool)
    text = format_scores(table, read_micro(built.path))
    for name in names[1:]:
        assert f"Note: {name} is one of this micro-benchmark's pool models" in text
    assert text.count("Note: ") == 2
    scored = json.loads(format_scores(table, read_micro(built.path), "json"))
    assert [scored[n]["in_pool"] for n in names] == [False, True, True]


# -- 5. too few items, too few runs -------------------------------------------------------------------


@pytest.mark.parametrize("k", range(1, MIN_ITEMS))
def test_build_micro_refuses_the_difference_estimator_below_its_minimum(k):
    """Reported: k = 3 built, with "MDAD 3 (95% CI 3 to 3; random sampling: 43)"."""
    bench = load_benchmark("synthetic-gpqa")
    with pytest.raises(SelectorError, match=f"k = {k} is below the difference estimator's minimum of {MIN_ITEMS}"):
        build_micro(bench, "random_difference", k, runs=1)


def test_the_command_line_refuses_k_3_naming_the_minimum(tmp_path):
    code, out, err = run("build-micro", "--data", "synthetic-gpqa", "--selector", "random_difference", "--k", 3,
                         "--runs", 1, "--out", tmp_path / "micro", "--quiet")
    assert code == 1 and out == "" and not (tmp_path / "micro").exists()
    one_line_error(err, f"minimum of {MIN_ITEMS} items", f"--k {MIN_ITEMS}")


def test_mdad_on_a_two_run_experiment_warns_on_stderr(tmp_path):
    """Reported: MDAD 3 [3, 3] from 2 runs, no warning."""
    out = tmp_path / "r.parquet"
    code, _, err = run("experiment", "--data", "synthetic-gpqa", "--selectors", "random", "--sizes", "3,25",
                       "--runs", 2, "--sources", 60, "--targets", 12, "--backend", "sequential", "--quiet",
                       "--out", out)
    assert code == 0, err
    code, text, err = run("mdad", out, "--bootstrap", 50)
    assert code == 0 and "selector" in text and "warning" not in text
    lines = err.splitlines()
    assert len(lines) == 2 and all(line.startswith("warning: random at k = ") for line in lines), err
    assert all(f"not trustworthy with 2 runs (use at least {FEW_RUNS})" in line for line in lines), err


@pytest.mark.parametrize("n_runs,zero", list(product(range(1, 13), (True, False))))
def test_generated_few_runs_warnings(n_runs, zero):
    table = pd.DataFrame({"selector": ["s"], "size": [10], "mdad": [3.0], "ci_low": [3.0],
                          "ci_high": [3.0 if zero else 4.5], "n_pairs": [100], "reached": [True],
                          "n_runs": [n_runs]})
    lines = few_runs_warnings(table)
    assert len(lines) == int(n_runs < FEW_RUNS)
    if lines:
        assert f"from {n_runs} run" in lines[0] and "not trustworthy" in lines[0]
        assert ("zero width" in lines[0]) == zero


# -- 6. the difference estimator's Student-t interval ------------------------------------------------


def test_score_uses_the_t_interval_with_k_minus_2_degrees_of_freedom(difference, tmp_path):
    bench, built = difference
    state = json.loads((built.path / "micro.json").read_text())["estimator"]
    assert state["interval_law"] == "student_t" and state["df"] == built.k - 2
    responses = tmp_path / "held.csv"
    pd.DataFrame(bench.correct[:5], columns=bench.items).assign(model=list(bench.models[:5])).to_csv(
        responses, index=False)
    table = score(built.path, [responses], level=0.9)
    estimate, variance = built.micro.estimate_with_variance(bench.correct[:5].astype(float))
    k, n = built.k, bench.n_items
    half = student_t.ppf(0.95, k - 2) * np.sqrt(np.maximum(variance, (1 - k / n) * residual_floor(k) / k))
    np.testing.assert_allclose(table["low"], 100 * np.clip(estimate - half, 0, 1), atol=1e-9)
    np.testing.assert_allclose(table["high"], 100 * np.clip(estimate + half, 0, 1), atol=1e-9)
    normal = norm.ppf(0.95) * np.sqrt(variance)
    assert ((table["high"] - table["low"]) > 100 * 2 * normal - 1e-9).all()  # wider than the old normal one
    text = format_scores(table, read_micro(built.path))
    assert DESCRIPTION in text and "Student-t" in text
    assert {r["interval_method"] for r in json.loads(format_scores(table, read_micro(built.path), "json")).values()} \
        == {DESCRIPTION}


def test_a_folder_written_with_the_normal_interval_still_reads_and_scores_as_it_did(difference, tmp_path):
    bench, built = difference
    legacy = Path(shutil.copytree(built.path, tmp_path / "legacy"))
    meta = json.loads((legacy / "micro.json").read_text())
    for key in ("interval_law", "df"):
        meta["estimator"].pop(key)
    assert meta["interval"] == "normal"
    (legacy / "micro.json").write_text(json.dumps(meta))
    reseal(legacy)
    folder = read_micro(legacy)
    assert isinstance(folder.micro, DifferenceMicroBenchmark) and folder.micro.law == "normal"
    responses = tmp_path / "held.csv"
    pd.DataFrame(bench.correct[:5], columns=bench.items).assign(model=list(bench.models[:5])).to_csv(
        responses, index=False)
    table = score(folder, [responses], level=0.9)
    estimate, variance = built.micro.estimate_with_variance(bench.correct[:5].astype(float))
    low, high = difference_interval(estimate, variance, built.k, bench.n_items, 0.9, law="normal")
    np.testing.assert_allclose(table["low"], 100 * low, atol=1e-9)
    np.testing.assert_allclose(table["high"], 100 * high, atol=1e-9)
    assert LEGACY_DESCRIPTION in format_scores(table, folder)


@pytest.mark.parametrize("law,df", [("student_t", 5), ("cauchy", None), ("normal", 18)])
def test_an_unknown_interval_law_is_refused_naming_micro_json(difference, tmp_path, law, df):
    _, built = difference
    copy = Path(shutil.copytree(built.path, tmp_path / "micro"))
    meta = json.loads((copy / "micro.json").read_text())
    meta["estimator"].update(interval_law=law, df=df)
    (copy / "micro.json").write_text(json.dumps(meta))
    reseal(copy)
    with pytest.raises(MbutilsError, match="micro.json: .*interval_law"):
        read_micro(copy)
